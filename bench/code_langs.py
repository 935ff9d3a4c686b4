"""Per language, how much of a real tree's call graph Kenning's code parser resolves.

No oracle here (jedi is Python only): for each language, the call sites found, the share with
candidates worked out from the file (imports, same file, same package) and the share that
resolves to a definition in the tree, split same-file / cross-file. Calls into the standard
library or dependencies cannot resolve (they are not in the tree) and count as unresolved.

    .venv/bin/python bench/code_langs.py /tmp/cobra /tmp/anyhow [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from kenning.index.code import SymbolTable, code_files, module_name, parse_code


def edit_one(root: Path, path: str) -> dict[str, Any]:
    """Re-parse one file (a function appended), swap it into the table, re-resolve every ref."""
    selection = code_files(root)
    paths = {c.path for c in selection.files}
    language = next(c.language for c in selection.files if c.path == path)
    files = {c.path: parse_code(c.path, (root / c.path).read_bytes(), c.language,
                                module_name(c.path, c.language, paths))
             for c in selection.files}
    table = SymbolTable.build(files.values())
    extras = {"python": b"\n\ndef added_by_bench():\n    return 1\n",
              "go": b"\nfunc addedByBench() int { return 1 }\n",
              "rust": b"\nfn added_by_bench() -> i32 { 1 }\n"}
    extra = extras.get(language, b"\nfunction addedByBench() {}\n")
    started = time.perf_counter()
    changed = parse_code(path, (root / path).read_bytes() + extra, language,
                         module_name(path, language, paths))
    table.add(changed)
    files[path] = changed
    refs = [r for f in files.values() for r in f.references]
    resolved = sum(table.resolve(r) is not None for r in refs)
    return {"path": path, "references": len(refs), "resolved": resolved,
            "seconds": round(time.perf_counter() - started, 3)}


def run(root: Path) -> dict[str, Any]:
    started = time.perf_counter()
    selection = code_files(root)
    paths = {c.path for c in selection.files}
    files = []
    lines = 0
    for cand in selection.files:
        data = (root / cand.path).read_bytes()
        lines += data.count(b"\n")
        files.append(parse_code(cand.path, data, cand.language,
                                module_name(cand.path, cand.language, paths)))
    parsed = time.perf_counter()
    table = SymbolTable.build(files)
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for code in files:
        lang = "typescript" if code.language == "tsx" else code.language
        row = per[lang]
        row["files"] += 1
        row["definitions"] += len(code.definitions)
        row["files with syntax errors"] += bool(code.errors)
        for ref in code.references:
            if ref.kind != "call":
                continue
            row["calls"] += 1
            row["with candidates"] += bool(ref.candidates)
            target = table.resolve(ref)
            if target is None:
                continue
            where = {p for p, _d in table.locate(target)}
            row["resolved same file" if code.path in where else "resolved cross-file"] += 1
    out = {}
    for lang, row in sorted(per.items()):
        calls = row["calls"] or 1
        keys = ("files", "definitions", "files with syntax errors", "calls", "with candidates",
                "resolved same file", "resolved cross-file")
        out[lang] = {**{k: row[k] for k in keys}, "share resolved": round((row["resolved same file"]
                                                      + row["resolved cross-file"]) / calls, 3)}
    return {"root": str(root), "lines": lines, "skipped": len(selection.skipped),
            "parse_seconds": round(parsed - started, 2),
            "resolve_seconds": round(time.perf_counter() - parsed, 3), "languages": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", type=Path, nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--edit", metavar="PATH", help="time re-parsing PATH (in the first root) "
                    "and re-resolving every reference")
    args = ap.parse_args(argv)
    if args.edit:
        print(json.dumps(edit_one(args.roots[0], args.edit)))
        return 0
    results = [run(root) for root in args.roots]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'tree':<28} {'lang':<11} {'files':>5} {'defs':>6} {'calls':>6} {'cands':>6} "
          f"{'same':>5} {'cross':>5} {'resolved':>8}")
    for result in results:
        for lang, row in result["languages"].items():
            print(f"{'/'.join(Path(result['root']).parts[-2:]):<28} {lang:<11} {row['files']:>5} "
                  f"{row['definitions']:>6} {row['calls']:>6} {row['with candidates']:>6} "
                  f"{row['resolved same file']:>5} {row['resolved cross-file']:>5} "
                  f"{row['share resolved']:>8.3f}")
        print(f"  {result['lines']} lines parsed in {result['parse_seconds']} s, resolved in "
              f"{result['resolve_seconds']} s; {result['skipped']} paths skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
