"""Code recall: questions about Kenning's own source, answered from a code mount.

Mounts a repository (default: this checkout) with ``--kind code`` into a fresh vault, then asks
each question of ``bench/questions/kenning_code.json`` and checks whether a definition that
answers it is among the first five passages (``search -g chunk -n 5``), by the qualified name the
chunk is indexed under. With ``--near-symbol`` the question also names a symbol the asker is
looking at: one of the answer's callers (the first by path, from the code graph), or its module
when nothing calls it — the situation of an agent reading the calling code.

    .venv/bin/python bench/code_recall.py [--repo PATH] [--modes lexical,hybrid] [--json]

Hybrid embeds every chunk with the bundled model first (minutes on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions" / "kenning_code.json"


def near_symbol(v: Any, answer: str) -> str:
    """A symbol the asker is looking at: a caller of the answer, else its module."""
    try:
        callers = v.code("callers", answer)["callers"]
    except Exception:
        callers = []
    named = sorted((c["path"], c["line"], c["caller"]) for c in callers if c.get("caller"))
    if named:
        return named[0][2]
    return answer.rsplit(".", 1)[0]


def rank_of(results: Any, answers: set[str], depth: int = 5) -> int | None:
    """1-based rank of the first passage indexed under one of ``answers``, within ``depth``."""
    rank = 0
    for result in results:
        for hit in result.hits:
            rank += 1
            if rank > depth:
                return None
            if hit.heading in answers:
                return rank
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=HERE.parent)
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--code-only", action="store_true",
                        help="search with --type code (the repository's Markdown left out)")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if "hybrid" not in modes:
        os.environ["KENNING_EMBEDDINGS"] = "none"
    from kenning.api import Vault

    questions = json.loads(QUESTIONS.read_text())["questions"]
    with tempfile.TemporaryDirectory() as tmp:
        v, _ = Vault.init(Path(tmp) / "vault")
        started = time.perf_counter()
        v.mount_add("repo", args.repo, kind="code")
        indexed = time.perf_counter() - started
        rows = []
        for item in questions:
            answers = set(item["answers"])
            near = near_symbol(v, item["answers"][0])
            row: dict[str, Any] = {"q": item["q"], "near": near}
            for mode in modes:
                for with_near in (False, True):
                    key = mode + ("+near" if with_near else "")
                    results = v.search(item["q"], mode=mode, group="chunk", limit=5,
                                       near_symbol=near if with_near else None,
                                       types=("code",) if args.code_only else ())
                    row[key] = rank_of(results, answers)
            rows.append(row)
        chunks = v.store.scalar("SELECT count(*) FROM chunks c JOIN pages p ON p.id ="
                                " c.page_id WHERE p.type = 'code'")
        v.close()
    keys = [m + s for m in modes for s in ("", "+near")]
    summary = {k: {"top5": sum(r[k] is not None for r in rows) / len(rows),
                   "mrr": sum(1 / r[k] for r in rows if r[k]) / len(rows)} for k in keys}
    if args.json:
        json.dump({"questions": len(rows), "code_chunks": chunks, "index_seconds": indexed,
                   "summary": summary, "rows": rows}, sys.stdout, indent=2)
        print()
        return
    print(f"{len(rows)} questions; {chunks} code chunks indexed in {indexed:.1f} s")
    print(f"{'question':<62} " + " ".join(f"{k:>12}" for k in keys))
    for r in rows:
        print(f"{r['q'][:62]:<62} " + " ".join(f"{(r[k] or '-')!s:>12}" for k in keys))
    print(f"{'top-5 share':<62} " + " ".join(f"{summary[k]['top5']:>12.2f}" for k in keys))
    print(f"{'MRR@5':<62} " + " ".join(f"{summary[k]['mrr']:>12.2f}" for k in keys))


if __name__ == "__main__":
    main()
