#!/usr/bin/env python3
"""The hostile-input corpus, run with its bounds: cases tried and failures per area.

    .venv/bin/python bench/faults.py                 # every area
    .venv/bin/python bench/faults.py --area files    # one area (a module of bench/hostile/)
    .venv/bin/python bench/faults.py --json

Every case runs its commands in fresh processes against a fresh vault; the table shows per area
how many cases held, the slowest command and the largest peak RSS, against the targets (each
under 30 s and 1 GB). The same cases run in the test suite (tests/test_hostile.py).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile import MEMORY_TARGET_MIB, TIME_TARGET_S, Outcome, all_cases, run_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--area", action="append", default=[], help="only this area (repeatable)")
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    opts = parser.parse_args()
    outcomes: list[Outcome] = []
    for case in all_cases(opts.area):
        with tempfile.TemporaryDirectory(prefix="kenning-hostile-") as tmp:
            outcome = run_case(case, Path(tmp))
        outcomes.append(outcome)
        over = [f"{outcome.seconds:.1f} s"] if outcome.seconds > TIME_TARGET_S else []
        if outcome.max_rss_mib > MEMORY_TARGET_MIB:
            over.append(f"{outcome.max_rss_mib:.0f} MiB")
        if opts.json:
            print(json.dumps({"case": case.id, "held": not outcome.problems and not over,
                              "problems": outcome.problems, "over_target": over,
                              "seconds": round(outcome.seconds, 2),
                              "max_rss_mib": round(outcome.max_rss_mib, 1)}))
        else:
            mark = "ok  " if not outcome.problems and not over else "FAIL"
            print(f"{mark} {case.id:<55} {outcome.seconds:6.1f} s {outcome.max_rss_mib:6.0f} MiB",
                  flush=True)
            for p in outcome.problems + over:
                print(f"       {p}")
    if opts.json:
        return
    by_area: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_area[o.case.area].append(o)
    print(f"\n{platform.platform()}, Python {platform.python_version()}, "
          f"targets {TIME_TARGET_S:.0f} s and {MEMORY_TARGET_MIB:.0f} MiB per case")
    print(f"{'area':<10} {'cases':>5} {'held':>5} {'failed':>6} {'median s':>9} {'max s':>6} "
          f"{'max MiB':>8}")
    for area, group in sorted(by_area.items()):
        failed = sum(1 for o in group if o.problems or o.seconds > TIME_TARGET_S
                     or o.max_rss_mib > MEMORY_TARGET_MIB)
        print(f"{area:<10} {len(group):>5} {len(group) - failed:>5} {failed:>6} "
              f"{statistics.median(o.seconds for o in group):>9.1f} "
              f"{max(o.seconds for o in group):>6.1f} {max(o.max_rss_mib for o in group):>8.0f}")
    if any(o.problems for o in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    main()
