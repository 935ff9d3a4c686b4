#!/usr/bin/env python3
"""Does an email win a search for its own subject over the person pages?

    .venv/bin/python bench/search_rank.py VAULT [VAULT …] [--sample 50] [--seed 7] [--limit 20]

For each vault: indexes it lexically (``kenning index --no-embed``: a copy is not needed, the
index lives in ``.kenning/``), draws ``--sample`` email sources with ``random.Random(seed)``
from the sorted paths of sources whose subject has at least two words, searches each subject
(or, ``--content``, the first twelve words of its first body line of eight words or more)
(``--mode lexical``, ``--limit``), and reports where the email itself ranks (1 = first; a
miss counts as ``limit + 1``), how often it is first, and how many person pages rank above
it. The same sample is drawn in every vault (the same mailbox synced gives the same paths).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from typing import Any


def _subjects(root: Path, *, content: bool = False) -> list[tuple[str, str]]:
    """(source path, query) per email source: its subject, or (``content``) the first body line
    of eight words or more, cut to its first twelve words."""
    from kenning.vault import frontmatter

    out = []
    for path in sorted((root / "sources" / "email").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        fm = frontmatter.read(text)
        title = str(fm.data.get("title") or "")
        if not content:
            if len(title.split()) >= 2 and "(no subject)" not in title:
                out.append((f"sources/email/{path.name}", title))
            continue
        for line in text.split("\n")[fm.body_start:]:
            words = line.split()
            if len(words) >= 8 and not line.startswith(("#", ">", "-", "Signature:")):
                out.append((f"sources/email/{path.name}", " ".join(words[:12])))
                break
    return out


def measure(root: Path, *, sample: int, seed: int, limit: int,
            content: bool = False) -> dict[str, Any]:
    """Rank of each sampled email in a lexical search for its subject (or a body line)."""
    from kenning.api import Vault

    vault = Vault(root)
    vault.index(embed=False)
    subjects = _subjects(root, content=content)
    picked = random.Random(seed).sample(subjects, min(sample, len(subjects)))
    ranks, above = [], []
    for path, title in picked:
        result = vault.search(title, mode="lexical", limit=limit)
        hits = [getattr(h, "path", None) or h.get("path") for h in _hits(result)]
        rank = hits.index(path) + 1 if path in hits else limit + 1
        ranks.append(rank)
        above.append(sum(1 for h in hits[:rank - 1] if str(h).startswith("people/")))
    return {"vault": str(root), "queries": len(ranks),
            "email_first": sum(1 for r in ranks if r == 1),
            "mean_rank": round(statistics.mean(ranks), 2) if ranks else None,
            "median_rank": statistics.median(ranks) if ranks else None,
            "person_pages_above_email": sum(above),
            "queries_with_a_person_page_above": sum(1 for a in above if a)}


def _hits(result: Any) -> list[Any]:
    for name in ("results", "hits"):
        value = getattr(result, name, None)
        if value is not None:
            return list(value)
    return list(result)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vaults", type=Path, nargs="+")
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--content", action="store_true",
                    help="query a body line of each email instead of its subject")
    args = ap.parse_args(argv)
    for root in args.vaults:
        r = measure(root, sample=args.sample, seed=args.seed, limit=args.limit,
                    content=args.content)
        what = "body lines" if args.content else "subjects"
        print(f"{r['vault']}: {r['queries']} {what}; email first {r['email_first']}, "
              f"mean rank {r['mean_rank']}, median {r['median_rank']}; person pages above the "
              f"email {r['person_pages_above_email']} (in {r['queries_with_a_person_page_above']}"
              " queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
