#!/usr/bin/env python3
"""Lexical and hybrid search latency in one warm process, for before/after comparisons.

    PYTHONPATH=<a worktree of the base commit>/src .venv/bin/python bench/search_loop.py VAULT
    .venv/bin/python bench/search_loop.py VAULT

VAULT is a vault `bench/run.py` generated and indexed (e.g. /tmp/out/shared/vault-10000, with
its ``.queries.json`` beside it). Prints one JSON line: p50/p95 wall time and the p50 CPU time
of the process per mode over the latency queries, three passes. Run base and branch in turns.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    import kenning
    from kenning import Vault

    vault = Path(sys.argv[1])
    queries = json.loads(Path(f"{vault}.queries.json").read_text())
    qs = list(queries.get("latency") or queries.get("generic") or [])
    while len(qs) < 50:
        qs += qs[: 50 - len(qs)]
    qs = qs[:50]
    v = Vault(vault)
    out: dict[str, object] = {"src": str(Path(kenning.__file__).parents[2])}
    for mode in ("lexical", "hybrid"):
        for q in qs[:5]:
            v.search(q, mode=mode)
        wall, cpu = [], []
        for _ in range(3):
            for q in qs:
                started, used = time.perf_counter(), time.process_time()
                v.search(q, mode=mode)
                wall.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
        wall.sort()
        out[f"{mode}_p50"] = round(statistics.median(wall), 2)
        out[f"{mode}_p95"] = round(wall[int(0.95 * (len(wall) - 1))], 2)
        out[f"{mode}_cpu_p50"] = round(statistics.median(cpu), 2)
    v.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
