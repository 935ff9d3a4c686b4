#!/usr/bin/env python3
"""Do real vaults' own questions find their note first, in every mode, whatever the limit?

    .venv/bin/python bench/real_vault_questions.py QUESTIONS.json VAULT [--workdir DIR]
        [--mode lexical --mode dense --mode hybrid] [--subset] [--recent K] [--details] [--json]

``QUESTIONS.json`` (bench/questions/*.json) holds questions written by reading a real vault,
each with the path of the note that answers it. ``VAULT`` is that vault's folder; when it is
absent the bench says so and exits 0. Its Markdown files (only the folders listed under
``subset`` with ``--subset``) are copied once to ``DIR/<name>`` and indexed there, with
vectors for dense and hybrid; a second run re-uses the copy and its vectors (``--in-place``:
index ``VAULT`` itself, for a scratch copy of your own).

Per mode it reports, over the questions: the expected note first (top-1), within the first three
(top-3), and MRR@10; how many results of the first three are among the vault's ten most-linked
pages (hubs); and the stability of the first result: the same with ``limit=3`` as with
``limit=10``, and the same ranking when asked twice. For dense it also reports *plain cosine
order* (pages by their best chunk's cosine, every page signal off), where the shipped order put
plain cosine's first page, and how far the shipped dense top-1 is from plain cosine's.

``--recent K`` first records the K most-linked pages as recalled today (a person who opens the
hub pages every day), then removes that record again: the recency signal at its strongest on
the pages it would distort most.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from datetime import date
from pathlib import Path
from typing import Any

MODES = ("lexical", "dense", "hybrid")
LIMIT = 10


def _copy(source: Path, target: Path, folders: list[str] | None) -> None:
    """The Markdown files of ``source`` (only ``folders`` when given) under ``target``."""
    roots = [source / f for f in folders] if folders else [source]
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(source)
            if any(part.startswith(".") for part in rel.parts):
                continue
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)


def _vault(spec: dict[str, Any], source: Path, workdir: Path | None, subset: bool,
           embed: bool) -> Any:
    from kenning.api import Vault

    name = spec["vault"] + ("-subset" if subset else "")
    target = workdir / name if workdir else source
    if not (target / ".kenning").exists() and not workdir:
        Vault.init(target)[0].close()
    elif not (target / ".kenning").exists():
        target.mkdir(parents=True, exist_ok=True)
        _copy(source, target, spec.get("subset") if subset else None)
        Vault.init(target)[0].close()
    vault = Vault.open(target)
    vault.index(embed=embed)
    return vault


def _rank(results: list[Any], expect: set[str]) -> int | None:
    return next((n for n, r in enumerate(results, 1) if r.path in expect), None)


def _keys(results: list[Any]) -> list[tuple[str, float]]:
    return [(r.path, round(r.score, 9)) for r in results]


def _neutral(vault: Any) -> Any:
    """The vault's signals with every page signal switched off (plain cosine order)."""
    from kenning.recall.search import Signals

    names = {f.name for f in dataclasses.fields(Signals)}
    off = {"backlink_weight": 0.0, "recency_weight": 0.0, "type_weight": 0.0,
           "date_weight": 0.0, "superseded_factor": 1.0, "speaker_factor": 1.0,
           "folder_weights": {}}
    return dataclasses.replace(vault.signals, **{k: v for k, v in off.items() if k in names})


def _plain_cosine(vault: Any, question: str, limit: int) -> list[Any]:
    from kenning.recall.search import search

    dense, _, _ = vault._dense_arm(question, "dense")
    if dense is None:
        return []
    return list(search(vault.reader, question, mode="dense", dense=dense,
                       signals=_neutral(vault), limit=limit))


def _hubs(vault: Any, count: int = 10) -> list[str]:
    """The ``count`` pages with the most distinct pages linking to them."""
    rows = vault.reader.rows(
        """SELECT p.path, COUNT(DISTINCT l.src_id) AS n FROM links l JOIN pages p
           ON p.id = l.dst_id WHERE l.resolution = 'resolved' AND l.src_id != l.dst_id
           GROUP BY l.dst_id, p.path ORDER BY n DESC, p.path LIMIT ?""", (count,))
    return [r[0] for r in rows]


def measure(vault: Any, spec: dict[str, Any], modes: list[str]) -> dict[str, Any]:
    hubs = set(_hubs(vault))
    questions = spec["questions"]
    out: dict[str, Any] = {"questions": len(questions), "hubs": sorted(hubs), "modes": {}}
    for mode in modes:
        rows = []
        for item in questions:
            expect = set(item["expect"])
            ten = list(vault.search(item["q"], mode=mode, limit=LIMIT))
            three = list(vault.search(item["q"], mode=mode, limit=3))
            again = list(vault.search(item["q"], mode=mode, limit=LIMIT))
            row: dict[str, Any] = {
                "q": item["q"], "rank": _rank(ten, expect),
                "first": ten[0].path if ten else None,
                "limit_stable": bool(ten) == bool(three) and (
                    not ten or ten[0].path == three[0].path),
                "twice_stable": _keys(ten) == _keys(again),
                "hubs_top3": sum(r.path in hubs for r in ten[:3])}
            if mode == "dense":
                plain = _plain_cosine(vault, item["q"], 200)
                row["plain_rank"] = _rank(plain[:LIMIT], expect)
                if plain:
                    shown = {r.path: n for n, r in enumerate(
                        vault.search(item["q"], mode=mode, limit=200), 1)}
                    row["plain_first_shown_at"] = shown.get(plain[0].path)
            rows.append(row)
        n = len(rows)
        summary: dict[str, Any] = {
            "top1": sum(r["rank"] == 1 for r in rows) / n,
            "top3": sum(bool(r["rank"]) and r["rank"] <= 3 for r in rows) / n,
            "mrr10": sum(1 / r["rank"] for r in rows if r["rank"]) / n,
            "limit_stable": sum(r["limit_stable"] for r in rows),
            "twice_stable": sum(r["twice_stable"] for r in rows),
            "hubs_top3": sum(r["hubs_top3"] for r in rows)}
        if mode == "dense":
            summary["plain_top1"] = sum(r["plain_rank"] == 1 for r in rows) / n
            summary["plain_top3"] = sum(bool(r["plain_rank"]) and r["plain_rank"] <= 3
                                        for r in rows) / n
            summary["plain_first_shown_at"] = [r.get("plain_first_shown_at") for r in rows]
        out["modes"][mode] = {"summary": summary, "rows": rows}
    return out


def report(name: str, result: dict[str, Any], details: bool) -> str:
    n = result["questions"]
    lines = [f"## {name}: {n} questions", "",
             "| mode | top-1 | top-3 | MRR@10 | first same at limit 3 and 10 | same when asked "
             "twice | hub pages in the top 3 |", "|---|---|---|---|---|---|---|"]
    for mode, data in result["modes"].items():
        s = data["summary"]
        lines.append(f"| {mode} | {s['top1']:.3f} | {s['top3']:.3f} | {s['mrr10']:.3f} | "
                     f"{s['limit_stable']}/{n} | {s['twice_stable']}/{n} | {s['hubs_top3']} |")
        if mode == "dense":
            lines.append(f"| plain cosine order | {s['plain_top1']:.3f} | {s['plain_top3']:.3f}"
                         " | | | | |")
    dense = result["modes"].get("dense")
    if dense:
        shown = dense["summary"]["plain_first_shown_at"]
        lines += ["", "Plain cosine's first page, shown by dense at: "
                  + ", ".join(str(x) for x in shown)]
    if details:
        for mode, data in result["modes"].items():
            lines += ["", f"### {mode}", ""]
            for r in data["rows"]:
                extra = f" (plain cosine: {r.get('plain_rank')})" if mode == "dense" else ""
                lines.append(f"- {r['rank']}{extra}: {r['q']} → first {r['first']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kenning-real-vaults"))
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--in-place", action="store_true",
                        help="index VAULT where it is (a scratch copy of your own), not a copy")
    parser.add_argument("--subset", action="store_true",
                        help="only the folders the questions file lists under 'subset'")
    parser.add_argument("--recent", type=int, default=0, metavar="K")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        spec = json.loads(args.questions.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: {args.questions}: {exc}", file=sys.stderr)
        return 2
    if not args.vault.is_dir():
        print(f"skipped: the vault {args.vault} is absent")
        return 0
    modes = args.mode or list(MODES)
    vault = _vault(spec, args.vault, None if args.in_place else args.workdir, args.subset,
                   embed=any(m != "lexical" for m in modes))
    from kenning.recall import activity

    record = vault.root / ".kenning" / activity.NAME
    if args.recent:
        activity.record(vault.root, _hubs(vault, args.recent), date.today().isoformat())
    try:
        result = measure(vault, spec, modes)
    finally:
        if args.recent:
            for path in (record, record.with_name(record.name + "-wal"),
                         record.with_name(record.name + "-shm")):
                path.unlink(missing_ok=True)
        vault.close()
    name = spec["vault"] + (" (subset)" if args.subset else "") + (
        f", the {args.recent} most-linked pages recalled today" if args.recent else "")
    print(json.dumps(result, indent=1) if args.json else report(name, result, args.details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
