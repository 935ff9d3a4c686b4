#!/usr/bin/env python3
"""The web view at 10,000 notes: server time and wall time of each view over real HTTP.

    .venv/bin/python bench/web.py                      # 10,000 notes, 20 requests per view
    .venv/bin/python bench/web.py --notes 2000 --runs 10 --keep /tmp/web2k

Generates a vault with a fixed seed (bench/gen_vault.py: people, organizations, projects,
meetings, topics with typed facts and timelines; plus bench/items_query.py's people and meeting
pages carrying commitments, asks and decisions under ``work/``), indexes it lexically (no
embeddings: ``KENNING_EMBEDDINGS=none``; the web view's search is then lexical + graph), starts
the real server (``kenning web --port 0`` in its own process) and requests, over HTTP:

* entity page  ``/page/<path>`` of 20 different pages (people, organizations, projects, ...)
* search       ``/search?q=…`` over the generator's 50 latency queries
* timeline     ``/timeline`` and ``/timeline?entity=<hub>``
* decisions    ``/decisions``;  items ``/items``;  health ``/health``
* graph        ``/graph/<hub>?depth=2`` from the most linked-to page (the hub)

Each view is requested once to warm up, then ``--runs`` times; it reports the median and p90 of
the server time (the ``Server-Timing: app;dur=MS`` header every response carries) and of the
wall time (request sent to body read, on the same machine), and the ratio of the median server
time to the target: page, search and timeline < 200 ms; graph depth 2 from a hub < 500 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

TARGETS = {"entity page": 200.0, "search": 200.0, "timeline": 200.0, "timeline (entity)": 200.0,
           "graph depth 2 (hub)": 500.0}
LINK = re.compile(r"\[\[([^\]|#\n]+)")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def machine() -> str:
    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}"


def build(root: Path, notes: int, items: int, seed: int) -> dict[str, float]:
    """Generate and index the vault; seconds each step took."""
    import gen_vault
    import items_query

    from kenning.api import Vault

    times: dict[str, float] = {}
    start = time.perf_counter()
    summary = gen_vault.generate(notes, root, seed)
    written = items_query.generate(root / "work", items, seed)
    times["generate_s"] = time.perf_counter() - start
    print(f"generated {summary['notes']} notes ({summary['japanese']} Japanese) and "
          f"{written} item lines under work/ in {times['generate_s']:.0f} s", flush=True)
    start = time.perf_counter()
    v, _ = Vault.init(root)
    report = v.index(embed=False)
    v.close()
    times["index_s"] = time.perf_counter() - start
    print(f"indexed {report.added} files lexically (no embeddings) in {times['index_s']:.0f} s",
          flush=True)
    return times


def hub(root: Path) -> str:
    """The vault path of the page the most wikilinks point at."""
    stems: dict[str, str] = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith("."):
            stems.setdefault(path.stem, rel)
    counts: Counter[str] = Counter()
    for path in root.rglob("*.md"):
        if ".kenning" in path.parts:
            continue
        for target in LINK.findall(path.read_text(encoding="utf-8", errors="replace")):
            name = target.strip().rsplit("/", 1)[-1]
            if name in stems:
                counts[stems[name]] += 1
    return counts.most_common(1)[0][0]


def serve(root: Path) -> tuple[subprocess.Popen[str], str]:
    """``kenning web --port 0`` in its own process; (process, base URL)."""
    exe = Path(sys.executable).with_name("kenning")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kenning.cli"]
    proc = subprocess.Popen([*cmd, "-C", str(root), "web", "--port", "0"], text=True,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env={**os.environ, "KENNING_EMBEDDINGS": "none"})
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"at (http://\S+?)/? \(", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the web view did not start")


def measure(client: object, urls: list[str], runs: int) -> dict[str, float]:
    """Median/p90 server and wall ms over ``runs`` requests cycling through ``urls``."""
    server, wall, sizes = [], [], []
    for url in urls[:3]:  # warm up: first query plans, template compile, page cache
        client.get(url)  # type: ignore[attr-defined]
    for n in range(runs):
        url = urls[n % len(urls)]
        start = time.perf_counter()
        r = client.get(url)  # type: ignore[attr-defined]
        body = r.content
        wall.append((time.perf_counter() - start) * 1000)
        if r.status_code != 200:
            raise SystemExit(f"{url}: HTTP {r.status_code}: {body[:300]!r}")
        m = re.search(r"app;dur=([\d.]+)", r.headers.get("server-timing", ""))
        server.append(float(m.group(1)) if m else float("nan"))
        sizes.append(len(body))
    return {"server_median": statistics.median(server), "server_p90": percentile(server, 0.9),
            "wall_median": statistics.median(wall), "wall_p90": percentile(wall, 0.9),
            "kb": statistics.median(sizes) / 1024, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--items", type=int, default=2_000, help="item lines under work/")
    ap.add_argument("--runs", type=int, default=20, help="requests per view")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--keep", type=Path, help="build the vault here and keep it (reused if "
                    "it is already indexed)")
    ap.add_argument("--json", type=Path, help="also write the numbers here")
    args = ap.parse_args()
    os.environ["KENNING_EMBEDDINGS"] = "none"
    os.environ.pop("KENNING_DATABASE_URL", None)
    import httpx2 as httpx

    tmp = None
    if args.keep:
        root = args.keep
    else:
        tmp = Path(tempfile.mkdtemp(prefix="kenning-web-bench-"))
        root = tmp / "vault"
    try:
        times = {}
        if not (root / ".kenning" / "index.db").exists():
            times = build(root, args.notes, args.items, args.seed)
        centre = hub(root)
        queries = json.loads(Path(f"{root}.queries.json").read_text(encoding="utf-8"))["latency"]
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                       if ".kenning" not in p.parts)
        step = max(1, len(pages) // 20)
        sample = pages[::step][:20]
        proc, base = serve(root)
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                views = {
                    "entity page": [f"/page/{quote(p)}" for p in sample],
                    "entity page (hub)": [f"/page/{quote(centre)}"],
                    "search": [f"/search?q={quote(q)}" for q in queries],
                    "timeline": ["/timeline"],
                    "timeline (entity)": [f"/timeline?entity={quote(centre)}"],
                    "decisions": ["/decisions"],
                    "items": ["/items"],
                    "health": ["/health"],
                    "graph depth 2 (hub)": [f"/graph/{quote(centre)}?depth=2"],
                }
                results = {name: measure(client, urls, args.runs) for name, urls in views.items()}
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{machine()}; hub: {centre}; {len(pages)} Markdown files; lexical (no embeddings)")
    print(f"{'view':22} {'server ms':>10} {'p90':>7} {'wall ms':>9} {'p90':>7} {'KB':>6} "
          f"{'target':>7} {'ratio':>6}")
    for name, r in results.items():
        target = TARGETS.get(name) or (200.0 if name.startswith("entity page") else None)
        ratio = f"{r['server_median'] / target:.2f}" if target else "—"
        print(f"{name:22} {r['server_median']:10.1f} {r['server_p90']:7.1f} "
              f"{r['wall_median']:9.1f} {r['wall_p90']:7.1f} {r['kb']:6.0f} "
              f"{f'<{target:.0f}' if target else '—':>7} {ratio:>6}")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "hub": centre, "files": len(pages),
                                         "build": times, "views": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
