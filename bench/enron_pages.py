#!/usr/bin/env python3
"""Measure "one person, one page" on a vault built from the Enron mailbox.

    .venv/bin/python bench/enron_pages.py VAULT [--mbox PATH] [--silver PATH] [--top 100]
                                          [--seed 7] [--sample 40] [--json] [--list]

**Most active correspondents.** Every message of the mbox counts once for each address in its
From, To and Cc headers. Addresses are grouped into identities independently of the build's
rules: an address's name is the most frequent person name the silver map
(``derived_address_displayname_silver.json``, display names seen in headers) gives it, else
``first.last`` / ``first.m.last`` of its local part; addresses of one registrable domain whose
names have the same surname and the same given name or a nickname of it with the same initial
(the ``nicknames`` package; "Sue" / "Susan", not its rarer "Bill" for Robert) are one identity;
an address with no name is an identity of its own. An identity's
activity is the number of messages naming any of its addresses; the top ``--top`` are listed
with the person pages that hold any of their addresses (frontmatter ``emails``). The vault
owner (``owner:`` in the config) has no page by design and is reported apart.

**Pages.** Person pages; those titled with a bare address.

**Samples.** ``--sample`` person pages and organization pages drawn with ``random.Random(seed)``
from the sorted page paths, printed with what a judge needs (title, addresses or domains,
summary); the verdicts are a person's (docs/build.md).
"""

from __future__ import annotations

import argparse
import json
import mailbox
import random
import sys
from collections import Counter, defaultdict
from email.utils import getaddresses
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EVAL = HERE.parents[1] / "shared" / "eval" / "enron"


def _names(silver: dict[str, dict[str, int]], address: str) -> tuple[str, str] | None:
    """(given, surname) folded for an address: its most frequent silver person name, else its
    first.last local part."""
    from kenning.builder import names as nm

    counts: Counter[tuple[str, str]] = Counter()
    for text, n in (silver.get(address) or {}).items():
        name = nm.clean_display_name(text, address)
        q = nm.parse_person(name) if name else None
        if q is not None and q.full:
            counts[(q.first, q.last)] += n
    if counts:
        return counts.most_common(1)[0][0]
    guess = nm.name_from_address(address)
    q = nm.parse_person(guess) if guess else None
    return (q.first, q.last) if q is not None and q.full else None


def identities(mbox: Path, silver: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """Identities with their addresses and message counts, most active first."""
    from kenning.builder import names as nm

    per_address: dict[str, set[int]] = defaultdict(set)
    for i, msg in enumerate(mailbox.mbox(str(mbox))):
        values = [v for key in ("from", "to", "cc") for v in msg.get_all(key) or []]
        for _, addr in getaddresses([str(v) for v in values]):
            addr = addr.strip().lower()
            if "@" in addr:
                per_address[addr].add(i)
    parent: dict[str, str] = {a: a for a in per_address}

    def find(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    by_key: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    named: dict[str, tuple[str, str]] = {}
    for a in per_address:
        n = _names(silver, a)
        if n is None:
            continue
        named[a] = n
        by_key[(nm.org_domain(a.rsplit("@", 1)[1]), n[1])].append((a, n[0]))
    for group in by_key.values():
        for i, (a, fa) in enumerate(group):
            for b, fb in group[i + 1:]:
                how = nm.first_names_match(fa, fb)
                if how == "exact" or (how == "nickname" and fa[:1] == fb[:1]):
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = defaultdict(list)
    for a in per_address:
        groups[find(a)].append(a)
    out = []
    for members in groups.values():
        members.sort()
        messages: set[int] = set()
        for a in members:
            messages |= per_address[a]
        name = next((f"{named[a][0].title()} {named[a][1].title()}" for a in members
                     if a in named), None)
        out.append({"name": name or members[0], "addresses": members,
                    "messages": len(messages)})
    out.sort(key=lambda r: (-r["messages"], r["name"]))
    return out


def read_pages(vault: Path, folder: str) -> list[dict[str, Any]]:
    from kenning.vault.page import parse_page

    out = []
    for path in sorted((vault / folder).glob("*.md")):
        page = parse_page(path.read_text(encoding="utf-8"), f"{folder}/{path.name}")
        fm = page.frontmatter
        out.append({"path": f"{folder}/{path.name}", "title": page.title,
                    "emails": [str(e).lower() for e in fm.get("emails") or []],
                    "domains": [str(d) for d in fm.get("domains") or []],
                    "aliases": list(page.aliases), "summary": page.summary,
                    "organization": fm.get("organization")})
    return out


def measure(vault: Path, mbox: Path, silver_path: Path, *, top: int = 100, seed: int = 7,
            sample: int = 40) -> dict[str, Any]:
    """Every number of this script for one vault."""
    from kenning.sources.owner import Owner

    silver = json.loads(silver_path.read_text())
    owner = Owner.load(vault)
    people = read_pages(vault, "people")
    orgs = read_pages(vault, "organizations")
    pages_of: dict[str, set[str]] = defaultdict(set)
    for p in people:
        for e in p["emails"]:
            pages_of[e].add(p["path"])
    ranked = identities(mbox, silver)
    listed, owner_rows = [], []
    for ident in ranked:
        if len(listed) >= top:
            break
        is_owner = any(a in owner.emails for a in ident["addresses"]) or (
            ident["name"].lower() in owner.names)
        pages = sorted({p for a in ident["addresses"] for p in pages_of.get(a, ())})
        row = {**ident, "pages": pages}
        (owner_rows if is_owner else listed).append(row)
    bare = [p for p in people if "@" in p["title"]]
    rng = random.Random(seed)
    return {
        "vault": str(vault),
        "person_pages": len(people),
        "organization_pages": len(orgs),
        "bare_address_titles": len(bare),
        "bare_address_share": round(len(bare) / len(people), 4) if people else 0.0,
        "top": len(listed),
        "top_with_one_page": sum(1 for r in listed if len(r["pages"]) == 1),
        "top_not_one_page": [r for r in listed if len(r["pages"]) != 1],
        "owner_identities": owner_rows,
        "top_list": listed,
        "sample_people": rng.sample(people, min(sample, len(people))),
        "sample_organizations": rng.sample(orgs, min(sample, len(orgs))),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--mbox", type=Path, default=EVAL / "enron_with_categories.mbox")
    ap.add_argument("--silver", type=Path,
                    default=EVAL / "derived_address_displayname_silver.json")
    ap.add_argument("--top", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the top list and the samples")
    args = ap.parse_args(argv)
    if not args.mbox.exists():
        print(f"{args.mbox}: not found", file=sys.stderr)
        return 2
    result = measure(args.vault, args.mbox, args.silver, top=args.top, seed=args.seed,
                     sample=args.sample)
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    print(f"person pages {result['person_pages']}, organization pages "
          f"{result['organization_pages']}")
    print(f"titled with a bare address: {result['bare_address_titles']} "
          f"({result['bare_address_share']:.1%})")
    print(f"top {result['top']} correspondents with exactly one page: "
          f"{result['top_with_one_page']}")
    for r in result["top_not_one_page"]:
        print(f"  {r['name']} ({r['messages']} messages; {', '.join(r['addresses'])}): "
              f"{len(r['pages'])} pages {r['pages']}")
    for r in result["owner_identities"]:
        print(f"  owner {r['name']} ({', '.join(r['addresses'])}): pages {r['pages']}")
    if args.list:
        print("\n## top correspondents")
        for i, r in enumerate(result["top_list"], 1):
            print(f"{i:3d}. {r['name']} — {r['messages']} messages, {len(r['pages'])} page(s): "
                  f"{', '.join(r['pages'])}")
        for key in ("sample_people", "sample_organizations"):
            print(f"\n## {key} (seed {args.seed})")
            for p in result[key]:
                extra = ", ".join(p["emails"] or p["domains"])
                print(f"- {p['title']} [{p['path']}] {extra} | {p['summary'][:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
