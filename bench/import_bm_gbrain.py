"""Time `kenning import basic-memory` and `kenning import gbrain` on generated inputs.

    nice -n 10 .venv/bin/python bench/import_bm_gbrain.py [--notes 5000]

Writes a basic-memory project (N notes: 5 observations and 3 relations each, prose with an
inline link) and a gbrain export (N pages: a takes fence of 3 rows, a facts fence of 3 rows,
4 timeline entries, a frontmatter edge) in a temporary folder, times `read()` alone and the
whole import into a fresh vault, then a second import (which must add nothing)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kenning.api import Vault
from kenning.transfer import basic_memory, gbrain


def make_bm(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"notes{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        obs = "\n".join(f"- [fact] Note {i} observation {k} #tag{k} (context {k})"
                        for k in range(5))
        rels = "\n".join(f"- relates_to [[Note {(i + k) % n}]]" for k in (1, 2, 3))
        (folder / f"Note {i}.md").write_text(
            f"---\ntitle: Note {i}\ntype: note\npermalink: p/note-{i}\n---\n\n# Note {i}\n\n"
            f"Prose about note {i}, see [[Note {(i + 7) % n}]].\n\n## Observations\n{obs}\n\n"
            f"## Relations\n{rels}\n", encoding="utf-8")


def make_gbrain(root: Path, n: int) -> None:
    (root / "people").mkdir(parents=True)
    (root / "companies").mkdir()
    for i in range(n):
        takes = "\n".join(f"| {k} | Take {k} on person {i} | take | brain | 0.{k + 5} | "
                          f"2026-01-0{k} | src |" for k in (1, 2, 3))
        facts = "\n".join(f"| {k} | Fact {k} on person {i} | fact | 0.9 | world | low | "
                          f"2025-0{k}-01 |  | src |  |" for k in (1, 2, 3))
        timeline = "\n".join(f"- **2026-0{k}-01** | Src — Event {k} of person {i}."
                             for k in (1, 2, 3, 4))
        (root / "people" / f"person-{i}.md").write_text(
            f"---\ntype: person\ntitle: Person {i}\ncompany: Company {i % 50}\n---\n\n"
            f"Person {i} works at [Company {i % 50}](companies/company-{i % 50}).\n\n"
            "## Takes\n\n<!--- gbrain:takes:begin -->\n"
            "| # | claim | kind | who | weight | since | source |\n"
            f"|---|-------|------|-----|--------|-------|--------|\n{takes}\n"
            "<!--- gbrain:takes:end -->\n\n## Facts\n\n<!--- gbrain:facts:begin -->\n"
            "| # | claim | kind | confidence | visibility | notability | valid_from | "
            "valid_until | source | context |\n|---|---|---|---|---|---|---|---|---|---|\n"
            f"{facts}\n<!--- gbrain:facts:end -->\n\n<!-- timeline -->\n\n{timeline}\n",
            encoding="utf-8")
    for c in range(50):
        (root / "companies" / f"company-{c}.md").write_text(
            f"---\ntype: company\ntitle: Company {c}\n---\n\nA company.\n", encoding="utf-8")


def bench(kind: str, reader, src: Path, work: Path) -> None:
    t0 = time.perf_counter()
    got = reader.read(src)
    t1 = time.perf_counter()
    vault, _ = Vault.init(work / f"vault-{kind}")
    t2 = time.perf_counter()
    report = vault.import_from(kind, src)
    t3 = time.perf_counter()
    again = vault.import_from(kind, src)
    t4 = time.perf_counter()
    vault.close()
    w = report["written"]
    print(f"{kind}: {len(got.entities)} entities, {w['facts']} facts, {w['relations']} "
          f"relations, {w['events']} events; read {t1 - t0:.2f} s, import {t3 - t2:.2f} s "
          f"(read + plan + write + index), again {t4 - t3:.2f} s "
          f"(adds {again['written']['facts'] + again['written']['relations']})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        make_bm(work / "bm", args.notes)
        make_gbrain(work / "gb", args.notes)
        bench("basic-memory", basic_memory, work / "bm", work)
        bench("gbrain", gbrain, work / "gb", work)


if __name__ == "__main__":
    main()
