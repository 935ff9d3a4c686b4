"""Benchmark `kenning build` on the Enron set and check it against the address ↔ name silver map.

    .venv/bin/python bench/build_enron.py [--runs 3] [--mbox PATH] [--silver PATH]

1. Syncs the mbox into a temporary vault once (``kenning sync email``).
2. Full build: a fresh copy of the synced vault, ``run_build``; median of ``--runs``.
3. Incremental: the 10 newest email sources held back, a full build, then the 10 put back and
   built again; the second build is timed; median of ``--runs``.
4. Silver check (``derived_address_displayname_silver.json``: address → display forms seen):
   every address with several display forms must end on one page, and no page may hold two
   addresses whose display names share no person name (two identities on one page).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EVAL = HERE.parents[1] / "shared" / "eval" / "enron"


def _sync(vault: Path, mbox: Path) -> None:
    from kenning.sources.email import sync
    from kenning.vault.layout import init_vault

    init_vault(vault)
    report = sync(vault, str(mbox))
    print(f"synced {report.items_read} messages → {report.created} thread files")


def _full(base: Path, work: Path) -> tuple[float, Any]:
    from kenning.builder import run_build

    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(base, work)
    started = time.perf_counter()
    report = run_build(work)
    return time.perf_counter() - started, report


def _incremental(base: Path, work: Path) -> tuple[float, Any]:
    from kenning.builder import run_build
    from kenning.vault import frontmatter

    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(base, work)
    emails = sorted((work / "sources" / "email").glob("*.md"))
    dated = sorted(emails, key=lambda p: (str(frontmatter.read(p.read_text()).data.get(
        "last_date") or ""), p.name))
    held = dated[-10:]
    park = work.parent / (work.name + "-held")
    park.mkdir(exist_ok=True)
    for p in held:
        shutil.move(p, park / p.name)
    run_build(work)
    for p in held:
        shutil.move(park / p.name, p)
    started = time.perf_counter()
    report = run_build(work)
    return time.perf_counter() - started, report


def _silver(vault: Path, silver_path: Path) -> dict[str, int]:
    from kenning.builder import names as nm
    from kenning.builder.state import read_log

    silver: dict[str, dict[str, int]] = json.loads(silver_path.read_text())
    pages: dict[str, set[str]] = defaultdict(set)
    for row in read_log(vault):
        if row.get("kind") == "person" and row.get("email") and row.get("page"):
            pages[row["email"]].add(row["page"])

    def names(address: str) -> set[str]:
        out = set()
        for form in silver.get(address, {}):
            clean = nm.clean_display_name(form, address)
            p = nm.parse_person(clean) if clean else None
            if p is not None and p.last:
                out.add(p.last)
        return out

    multi = [a for a, forms in silver.items() if len(forms) > 1]
    on_pages = [a for a in multi if a in pages]
    split = [a for a in on_pages if len(pages[a]) > 1]
    by_page: dict[str, list[str]] = defaultdict(list)
    for address, found in pages.items():
        for page in found:
            by_page[page].append(address)
    merged_wrong = []
    for page, addresses in by_page.items():
        known = [(a, names(a)) for a in addresses if a in silver and names(a)]
        for i, (a, na) in enumerate(known):
            for b, nb in known[i + 1:]:
                if not na & nb:
                    merged_wrong.append((page, a, b))
    for page, a, b in merged_wrong[:10]:
        print(f"  two identities on {page}: {a} {sorted(names(a))} / {b} {sorted(names(b))}")
    for a in split[:10]:
        print(f"  {a} on several pages: {sorted(pages[a])}")
    pages_multi = sum(1 for a in by_page.values() if len(a) > 1)
    return {"silver_addresses": len(silver), "silver_addresses_with_pages": sum(
        1 for a in silver if a in pages), "multi_form_addresses": len(multi),
        "multi_form_on_pages": len(on_pages), "multi_form_split_across_pages": len(split),
        "pages_with_several_addresses": pages_multi,
        "pages_merging_different_identities": len(merged_wrong)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mbox", type=Path, default=EVAL / "enron_with_categories.mbox")
    parser.add_argument("--silver", type=Path,
                        default=EVAL / "derived_address_displayname_silver.json")
    args = parser.parse_args()
    if not args.mbox.exists():
        print(f"no Enron mbox at {args.mbox}; nothing to measure")
        return 0
    with tempfile.TemporaryDirectory(prefix="kenning-build-bench-") as tmp:
        base = Path(tmp) / "synced"
        _sync(base, args.mbox)
        fulls: list[float] = []
        r: Any = None
        for _ in range(args.runs):
            seconds, r = _full(base, Path(tmp) / "full")
            fulls.append(seconds)
        print(f"full build: median {statistics.median(fulls):.2f} s of {args.runs} "
              f"({', '.join(f'{s:.2f}' for s in fulls)}); {r.sources_built} sources, "
              f"{r.mentions} mentions, {len(r.pages_created)} pages, "
              f"strictness {r.strictness}")
        incs: list[float] = []
        inc: Any = None
        for _ in range(args.runs):
            seconds, inc = _incremental(base, Path(tmp) / "inc")
            incs.append(seconds)
        print(f"incremental build (10 new sources): median {statistics.median(incs):.2f} s "
              f"({', '.join(f'{s:.2f}' for s in incs)}); built {inc.sources_built}")
        if args.silver.exists():
            result = _silver(Path(tmp) / "full", args.silver)
            print("silver: " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
