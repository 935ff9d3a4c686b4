"""The cost of one `record` call as it grows, and whether it stalls other clients.

    .venv/bin/python bench/record_cost.py [--sizes 50,100,200,400,999] [--concurrent]

For each size N it records N observations on one existing entity in one call (in process,
through ``Vault.record``, the path every front end takes) and prints the seconds. With
``--concurrent`` it then starts ``kenning serve --http`` on a fresh vault, sends one remote
``record`` of the largest size, and while it runs times ``search`` calls from a second client:
the read latency a long write imposes on everyone else.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).with_name("kenning")


def _env() -> dict[str, str]:
    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0"}
    env.pop("KENNING_VAULT", None)
    return env


def _vault(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([str(BIN), "init", str(root)], check=True, capture_output=True, env=_env())
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "Harbour.md").write_text("# Harbour\n\nThe lighthouse keeper logs "
                                               "storms every night.\n", encoding="utf-8")


def _observations(n: int) -> list[dict[str, str]]:
    return [{"entity": "Ada Park", "text": f"Observation {i}: the lighthouse budget line {i} "
             f"was reviewed with the harbour board and found in order"} for i in range(n)]


def cost(sizes: list[int], work: Path) -> list[tuple[int, float]]:
    """Seconds of one in-process record of N observations, for each N."""
    os.environ.update(_env())
    from kenning.api import Vault

    out = []
    for n in sizes:
        root = work / f"cost-{n}"
        _vault(root)
        with Vault.open(root) as vault:
            vault.record([{"name": "Ada Park", "type": "person"}])
            start = time.perf_counter()
            vault.record(None, None, _observations(n))
            out.append((n, time.perf_counter() - start))
        print(f"record {n:>5} observations: {out[-1][1]:7.2f} s", flush=True)
    return out


def concurrent(n: int, work: Path) -> dict[str, float]:
    """Latency of remote `search` calls while one remote record of ``n`` observations runs."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    root = work / "concurrent"
    _vault(root)
    subprocess.run([str(BIN), "-C", str(root), "record", "--entity", "Ada Park", "--type",
                    "person"], check=True, capture_output=True, env=_env())
    subprocess.run([str(BIN), "-C", str(root), "index"], check=True, capture_output=True,
                   env=_env())
    token = secrets.token_urlsafe(24)
    proc = subprocess.Popen([str(BIN), "-C", str(root), "serve", "--http", "--port", "0",
                             "--profile", "record"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True,
                            env={**_env(), "KENNING_MCP_TOKEN": token})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = line.rsplit(" at ", 1)[1].strip()

        async def one(tool: str, args: dict, timeout: float = 600) -> tuple[float, bool]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=timeout)
            start = time.perf_counter()
            async with Client(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool(tool, args)
            return time.perf_counter() - start, bool(result.is_error)

        async def main() -> dict[str, float]:
            idle, _ = await one("search", {"query": "lighthouse keeper"})
            done = threading.Event()
            out: dict[str, float] = {"idle_read_s": idle}

            async def writer() -> None:
                seconds, err = await one("record", {"observations": _observations(n)})
                out["record_s"], out["record_error"] = seconds, float(err)
                done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                await anyio.sleep(0.05)  # the write is under way
                reads = []
                while not done.is_set() and len(reads) < 20:
                    seconds, _ = await one("search", {"query": "lighthouse keeper"})
                    reads.append(seconds)
                out["reads_during_write"] = float(len(reads))
                out["max_read_s"] = max(reads, default=0.0)
            return out

        return anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,100,200,400,999")
    ap.add_argument("--concurrent", action="store_true")
    ap.add_argument("--skip-cost", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="kenning-record-cost-") as tmp:
        if not args.skip_cost:
            cost(sizes, Path(tmp))
        if args.concurrent:
            print(json.dumps(concurrent(max(sizes), Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
