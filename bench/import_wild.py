"""The RAWThink importer on public MCP-memory ``memory.jsonl`` files: what it reads, writes and
skips (and why) on each.

Reads each file at the HEAD of its repository's mirror (``git -C MIRROR show HEAD:memory.jsonl``;
the mirrors are brought in with the search tool's ``fetch``), imports it into a fresh vault and
prints, per file: its lines; the entities, observations and relations it holds (counted here,
independently of the importer), read (by ``rawthink.read``) and written (the report); each
skipped entry's reason; and the vocabulary notes, counted.

    nice -n 10 .venv/bin/python bench/import_wild.py [--mirrors /work/.mirror] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPOS = ("maithanhduyan/memory-graph", "jasonpaulso/mcp-think-tank", "stevejones45/memory")


def held(path: Path) -> dict[str, int]:
    """Entities, observations, relations and other lines in the file, by their keys alone."""
    out: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        kind = item.get("type", item.get("_type"))
        if kind is None:
            kind = "entity" if "entityType" in item else \
                "relation" if "relationType" in item else "other"
        out["lines"] += 1
        out[{"entity": "entities", "relation": "relations"}.get(kind, "other lines")] += 1
        if kind == "entity":
            out["observations"] += len(item.get("observations") or [])
    return dict(out)


def measure(repo: str, mirrors: Path) -> dict[str, Any] | None:
    from kenning.api import Vault
    from kenning.errors import KenningError
    from kenning.transfer import rawthink

    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        return None
    raw = subprocess.run(["git", "-C", str(git_dir), "show", "HEAD:memory.jsonl"],
                         capture_output=True, check=True).stdout
    commit = subprocess.run(["git", "-C", str(git_dir), "rev-parse", "HEAD"],
                            capture_output=True, check=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.jsonl"
        path.write_bytes(raw)
        got = rawthink.read(path)
        vault, _ = Vault.init(Path(tmp) / "v")
        try:
            report = vault.import_from("rawthink", path)
        except KenningError as exc:       # the input has problems: nothing written
            report = {"written": {}, "dangling": [], "skipped": [], "notes": [],
                      "failed": str(exc).split("\n")[0]}
        vault.close()
        return {
            "repo": repo, "commit": commit[:12], "bytes": len(raw), "held": held(path),
            "problems": [str(p) for p in got.problems],
            "read": {"entities": len(got.entities),
                     "observations": sum(1 for e in got.entities for f in e.facts
                                         if not f.relation),
                     "relations": sum(1 for e in got.entities for f in e.facts if f.relation)},
            "written": {k: report["written"].get(k, 0)
                        for k in ("pages_created", "facts", "relations")},
            "failed": report.get("failed"),
            "dangling": len(report["dangling"]),
            "skipped": [f"{s['where'].split(':')[-1]}: {s['reason']}" for s in report["skipped"]],
            "skipped_read": Counter(s.reason.split(" (")[0] for s in got.skipped),
            "notes": len(report["notes"]),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [r for r in (measure(repo, args.mirrors) for repo in REPOS) if r]
    if not results:
        sys.exit(f"none of {', '.join(REPOS)} is mirrored under {args.mirrors}")
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
        return
    for r in results:
        print(f"{r['repo']} @ {r['commit']} ({r['bytes']:,} bytes): held {r['held']}")
        print(f"  read {r['read']}  written {r['written']}  dangling {r['dangling']}  "
              f"notes {r['notes']}  problems {len(r['problems'])}")
        if r["failed"]:
            print(f"  import failed: {r['failed']}; first problem: {r['problems'][0]}")
        for line in r["skipped"]:
            print(f"  skipped line {line}")
        if not r["skipped"] and r["skipped_read"]:
            for reason, n in r["skipped_read"].most_common(3):
                print(f"  read() skipped {n}: {reason}")


if __name__ == "__main__":
    main()
