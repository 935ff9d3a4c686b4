"""Benchmark: `kenning sync email` on the Enron mbox — first sync and unchanged re-sync.

Usage: .venv/bin/python bench/sync_email.py [path/to/enron_with_categories.mbox] [--runs 3]

Each run syncs into a fresh vault (in a temp folder), then syncs the same mbox again; prints the
median seconds of each over the runs (in-process, so interpreter start-up is not counted).
Targets (issue 4): first sync under 10 s, unchanged re-sync under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kenning.api import Vault
from kenning.sources import email

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "eval" / "enron" / \
    "enron_with_categories.mbox"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mbox", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not args.mbox.exists():
        print(f"{args.mbox}: not found", file=sys.stderr)
        return 2
    first, again = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            vault, _ = Vault.init(Path(tmp) / "v")
            root = vault.root
            vault.close()
            t0 = time.perf_counter()
            report = email.sync(root, str(args.mbox))
            first.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            second = email.sync(root, str(args.mbox))
            again.append(time.perf_counter() - t0)
            assert second.entries_added == 0, "re-sync added entries"
    print(f"messages read: {report.items_read}; thread files: {report.created}; "
          f"warnings: {len(report.warnings)}")
    print(f"first sync:      {statistics.median(first):6.2f} s (median of {args.runs}; "
          f"runs {', '.join(f'{t:.2f}' for t in first)})")
    print(f"unchanged again: {statistics.median(again):6.2f} s (median of {args.runs}; "
          f"runs {', '.join(f'{t:.2f}' for t in again)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
