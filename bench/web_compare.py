#!/usr/bin/env python3
"""Two versions of the web view, request by request, on a shared machine.

    .venv/bin/python bench/web_compare.py --before /work/main/src /tmp/web10k-v8 \\
        --after src /tmp/web10k-v9 --runs 10 /items /health

Starts ``kenning web --port 0`` twice, each with its own source tree first on ``PYTHONPATH``
and its own copy of the vault (``cp -a`` of a vault bench/web.py built: a newer Kenning migrates
the index it opens, which an older one then refuses), warms each view up twice, then asks the
*before* server and the *after* server the same URL in turn, ``--runs`` times, so both see the
same load from other jobs. Prints the median and the lowest server time (the ``Server-Timing:
app`` header) of each, and the load average over the runs.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path


def serve(src: Path, root: Path) -> tuple[subprocess.Popen[str], str]:
    """``kenning web`` of the source tree ``src`` on the vault ``root``: (process, base URL)."""
    env = {**os.environ, "PYTHONPATH": str(src.resolve()), "KENNING_EMBEDDINGS": "none"}
    env.pop("KENNING_DATABASE_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "kenning.cli", "-C", str(root), "web",
                             "--port", "0"], env=env, text=True, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        m = re.search(r"at (http://\S+?)/? \(", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            raise SystemExit(f"kenning web of {src} on {root} did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", nargs=2, type=Path, metavar=("SRC", "VAULT"), required=True)
    ap.add_argument("--after", nargs=2, type=Path, metavar=("SRC", "VAULT"), required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("urls", nargs="*", default=["/items", "/health"])
    args = ap.parse_args()
    import httpx2 as httpx

    servers = {"before": serve(*args.before), "after": serve(*args.after)}
    try:
        clients = {name: httpx.Client(base_url=base, timeout=600)
                   for name, (_, base) in servers.items()}
        for url in args.urls:
            ms: dict[str, list[float]] = {name: [] for name in clients}
            for client in clients.values():
                client.get(url)
                client.get(url)
            loads = []
            for _ in range(args.runs):
                for name, client in clients.items():
                    r = client.get(url)
                    if r.status_code != 200:
                        raise SystemExit(f"{name} {url}: HTTP {r.status_code}")
                    m = re.search(r"app;dur=([\d.]+)", r.headers.get("server-timing", ""))
                    ms[name].append(float(m.group(1)) if m else float("nan"))
                loads.append(os.getloadavg()[0])
            print(f"{url}: before median {statistics.median(ms['before']):.1f} ms (lowest "
                  f"{min(ms['before']):.1f}), after median {statistics.median(ms['after']):.1f}"
                  f" ms (lowest {min(ms['after']):.1f}); {args.runs} runs, load average "
                  f"{min(loads):.1f}-{max(loads):.1f}", flush=True)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
