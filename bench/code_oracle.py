"""Call resolution against an independent oracle (jedi) on a Python tree.

Every call site is found with tree-sitter; jedi (``Script.goto(follow_imports=True)``, project
rooted at the tree) says where its callee is defined. A call is labelled when jedi names a
function or class inside the tree. Splits: "direct" (a bare name or a chain of module
attributes, ``f()``, ``mod.f()``, ``pkg.mod.f()``) and "method" (an attribute of an object:
``self.f()``, ``obj.f()``), each "cross" (callee in another file) or "same" (same file).
Kenning's answer is ``SymbolTable.resolve`` on the parser's reference at that site.

Precision: of the calls Kenning resolved (where jedi answered at all), the share whose target
is jedi's (a target jedi places outside the tree counts as wrong). Recall: of the labelled
calls, the share Kenning resolved to the right definition.

    .venv/bin/python bench/code_oracle.py src            # Kenning's own source
    .venv/bin/python bench/code_oracle.py /tmp/click --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from kenning.index.code import SymbolTable, code_files, module_name, parse_code
from kenning.index.code.parse import _chain, _is_super, _parser, _text

SPLITS = ("cross/direct", "cross/method", "same/direct", "same/method")


def _calls(tree: Any) -> list[Any]:
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "call":
            out.append(node)
        stack.extend(node.named_children)
    return out


def _package_roots(paths: list[str], modules: dict[str, str]) -> list[str]:
    roots = set()
    for path in paths:
        depth = modules[path].count(".") + (1 if path.endswith("__init__.py") else 0)
        parts = path.split("/")[:-1]
        keep = len(parts) - depth
        roots.add("/".join(parts[: max(keep, 0)]))
    return sorted(roots)


def run(root: Path, limit: int | None = None) -> dict[str, Any]:
    import jedi

    root = root.resolve()
    selection = code_files(root)
    files = [c for c in selection.files if c.language == "python"]
    paths = {c.path for c in files}
    modules = {c.path: module_name(c.path, "python", paths) for c in files}
    parsed = {}
    sources = {}
    for cand in files:
        data = (root / cand.path).read_bytes()
        sources[cand.path] = data
        parsed[cand.path] = parse_code(cand.path, data, "python", modules[cand.path])
    t0 = time.perf_counter()
    table = SymbolTable.build(parsed.values())
    resolve_seconds = time.perf_counter() - t0
    roots = _package_roots(sorted(paths), modules)
    project = jedi.Project(str(root), added_sys_path=[str(root / r) for r in roots if r],
                           smart_sys_path=True)
    parser = _parser("python")

    predicted: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    labelled: Counter[str] = Counter()
    found: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    started = time.perf_counter()
    for count, path in enumerate(sorted(parsed)):
        if limit is not None and count >= limit:
            break
        code = sources[path].decode("utf-8", "replace")
        script = jedi.Script(code, path=str(root / path), project=project)
        refs = {(r.line, r.text): r for r in parsed[path].references if r.kind == "call"}
        tree = parser.parse(sources[path])
        for call in _calls(tree):
            stats["call sites"] += 1
            func = call.child_by_field_name("function")
            if func is None:
                continue
            name_node = func.child_by_field_name("attribute") if func.type == "attribute" \
                else func
            if name_node is None or name_node.type != "identifier":
                stats["not a name"] += 1
                continue
            line = name_node.start_point.row + 1
            column = len(sources[path][: name_node.start_byte].rsplit(b"\n", 1)[-1]
                         .decode("utf-8", "replace"))
            try:
                answers = script.goto(line, column, follow_imports=True)
            except Exception:  # jedi's own failures are not Kenning's
                stats["jedi failed"] += 1
                continue
            text = _chain(func)
            if text is None and func.type == "attribute" and _is_super(
                    func.child_by_field_name("object")):
                text = f"super().{_text(func.child_by_field_name('attribute'))}"
            if not answers:
                stats["jedi no answer"] += 1
                ref = refs.get((call.start_point.row + 1, text)) if text is not None else None
                if ref is not None and table.resolve(ref) is not None:
                    stats["jedi no answer, Kenning resolved (not scored)"] += 1
                continue
            direct = func.type == "identifier"
            if not direct and text is not None:
                obj = func.child_by_field_name("object")
                obj_name = obj.child_by_field_name("attribute") if obj.type == "attribute" \
                    else obj
                if obj_name is not None and obj_name.type == "identifier":
                    o_line = obj_name.start_point.row + 1
                    o_col = len(sources[path][: obj_name.start_byte].rsplit(b"\n", 1)[-1]
                                .decode("utf-8", "replace"))
                    try:
                        heads = script.goto(o_line, o_col, follow_imports=True)
                    except Exception:
                        heads = []
                    direct = bool(heads) and all(h.type == "module" for h in heads)
            kind = "direct" if direct else "method"
            truths = []
            outside = False
            for ans in answers:
                mp = ans.module_path
                if mp is None or ans.line is None:
                    continue
                try:
                    rel = Path(mp).resolve().relative_to(root).as_posix()
                except ValueError:
                    outside = True
                    continue
                if ans.type in ("function", "class"):
                    truths.append((rel, ans.line))
            ref = refs.get((call.start_point.row + 1, text)) if text is not None else None
            target = table.resolve(ref) if ref is not None else None
            located = table.locate(target) if target else []
            pred = {(p, d.start_line, d.end_line, d.name) for p, d in located}
            hit = any(p == tp and s <= tl <= e for p, s, e, _n in pred for tp, tl in truths)
            if truths:
                locality = "same" if truths[0][0] == path else "cross"
            elif target and (outside or answers):
                locality = "same" if any(p == path for p, *_ in pred) else "cross"
                if not outside:
                    stats["jedi answered a non-def in tree"] += 1
                    continue
            else:
                continue
            split = f"{locality}/{kind}"
            if target:
                predicted[split] += 1
                correct[split] += hit
            if truths:
                labelled[split] += 1
                found[split] += hit
                if not hit and len(misses) < 400:
                    misses.append({"path": path, "line": line, "text": text, "split": split,
                                   "jedi": truths[0], "kenning": target,
                                   "candidates": list(ref.candidates) if ref else None})
            elif target and len(misses) < 400:
                misses.append({"path": path, "line": line, "text": text, "split": split,
                               "jedi": "outside the tree", "kenning": target})
    table_rows = {}
    for split in SPLITS:
        table_rows[split] = {
            "labelled": labelled[split],
            "resolved": predicted[split],
            "correct": correct[split],
            "precision": round(correct[split] / predicted[split], 3) if predicted[split] else None,
            "recall": round(found[split] / labelled[split], 3) if labelled[split] else None,
        }
    return {
        "root": str(root),
        "files": len(parsed),
        "definitions": len(table),
        "splits": table_rows,
        "stats": dict(stats),
        "resolve_seconds": round(resolve_seconds, 3),
        "oracle_seconds": round(time.perf_counter() - started, 1),
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--limit", type=int, default=None, help="only the first N files")
    ap.add_argument("--misses", type=int, default=0, help="print N misses")
    args = ap.parse_args(argv)
    result = run(args.root, args.limit)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "misses" or args.misses},
                         indent=2))
        return 0
    print(f"{result['root']}: {result['files']} Python files, {result['definitions']} "
          f"definitions; oracle {result['oracle_seconds']} s")
    print(f"{'split':<14} {'labelled':>8} {'resolved':>8} {'precision':>9} {'recall':>7}")
    for split, row in result["splits"].items():
        p = "-" if row["precision"] is None else f"{row['precision']:.3f}"
        r = "-" if row["recall"] is None else f"{row['recall']:.3f}"
        print(f"{split:<14} {row['labelled']:>8} {row['resolved']:>8} {p:>9} {r:>7}")
    print("stats:", ", ".join(f"{k} {v}" for k, v in result["stats"].items()))
    for miss in result["misses"][: args.misses]:
        print(miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
