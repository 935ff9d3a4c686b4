#!/usr/bin/env python3
"""Print a fixed-seed sample of the items the extractor takes from a vault, for reading by hand.

    python bench/items_sample.py VAULT [--n 50] [--seed 7] [--json]

Runs the same path as ``kenning eval items`` (``extract_items`` per file under
VAULT/sources, then ``settle``) and prints N items drawn with ``random.Random(seed)``, each with
its kind, who → to, due, status, citation and the cited source lines. Used for "Items on Enron
(50 read)" in docs/build.md:

    kenning init /tmp/enron_items
    (cd /tmp/enron_items && kenning sync email ../shared/eval/enron/enron_with_categories.mbox)
    python bench/items_sample.py /tmp/enron_items --n 50 --seed 7
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from kenning.evaluate.items import extract_vault

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    items, files, _ = extract_vault(args.vault)
    items.sort(key=lambda i: (i.source, i.line, i.kind))
    sample = random.Random(args.seed).sample(items, min(args.n, len(items)))
    kinds = Counter(i.kind for i in items)
    if args.json:
        print(json.dumps([i.as_dict() for i in sample], indent=1, ensure_ascii=False))
        return 0
    print(f"{len(items)} items from {files} source files ("
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + f"); {len(sample)} drawn "
          f"with seed {args.seed}\n")
    for n, item in enumerate(sample, 1):
        lines = (args.vault / item.source).read_text(encoding="utf-8").splitlines()
        quote = " / ".join(lines[i - 1].strip() for i in range(item.line, item.end + 1))
        who = (item.who.name or item.who.email) if item.who else "?"
        to = ", ".join((p.name or p.email or "?") for p in item.to)
        print(f"{n:>2}. [{item.kind}] {item.text}")
        print(f"    {who} → {to or '–'} · due {item.due or '–'} · {item.status}"
              + (f" · rejected {list(item.rejected)}" if item.rejected else ""))
        print(f"    {item.citation}: {quote[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
