"""Time the RAWThink importer on a generated 5,000-entity memory.jsonl.

Generates (seed 18) 5,000 entities in RAWThink's on-disk shape (entityType, domain, epistemic,
visibility, ~3 temporal observations each, some invalidated) and ~8,000 relations, then times
``read()`` alone, the whole ``kenning import rawthink`` (subprocess, fresh vault each run) and
the ``kenning index --no-embed`` after it; median of 3 each.

    nice -n 10 .venv/bin/python bench/import_rawthink.py [--entities 5000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPES = ["decision", "concept", "finding", "rule", "open-question", "artifact", "insight",
         "task", "event", "thing"]
DOMAINS = ["software", "music", "history", "philosophy", "health", "writing", "neuro",
           "finance", "personal", "galaxy"]
EPISTEMIC = ["assertion", "hypothesis", "speculation", "unknown"]
RELATIONS = ["supports", "contradicts", "evolved_into", "depends_on", "exemplifies", "part_of",
             "caused_by", "enables", "supersedes", "related_to", "investigates", "informs",
             "uses"]
WORDS = ("index vault sqlite memory graph decision cache vector query page link note "
         "çay demleme öğrenme ağ bilgi").split()


def generate(path: Path, entities: int, relations: int, seed: int = 18) -> None:
    rnd = random.Random(seed)
    names = [f"Entity {i:05d} {rnd.choice(WORDS)}" for i in range(entities)]
    with path.open("w", encoding="utf-8") as out:
        for i, name in enumerate(names):
            obs = []
            for k in range(rnd.choice((2, 3, 3, 4))):
                day = f"2025-{1 + (i + k) % 12:02d}-{1 + (i * 7 + k) % 28:02d}"
                text = " ".join(rnd.choice(WORDS) for _ in range(12)) + f" ({i}.{k})"
                o = {"text": text, "kind": "note", "created": day, "status": "active"}
                if rnd.random() < 0.1:
                    o.update(status="invalidated", invalidated_at=day)
                obs.append(o)
            out.write(json.dumps({
                "type": "entity", "name": name, "entityType": TYPES[i % len(TYPES)],
                "domain": DOMAINS[i % len(DOMAINS)], "epistemic": rnd.choice(EPISTEMIC),
                "visibility": "private", "observations": obs, "activation": 1.0,
                "last_accessed": obs[0]["created"]}, ensure_ascii=False) + "\n")
        seen: set[tuple[str, str, str]] = set()
        while len(seen) < relations:
            a, b = rnd.sample(names, 2)
            key = (a, b, rnd.choice(RELATIONS))
            if key in seen:
                continue
            seen.add(key)
            out.write(json.dumps({"type": "relation", "from": a, "to": b,
                                  "relationType": key[2]}, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=5000)
    ap.add_argument("--relations", type=int, default=8000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from kenning.transfer import rawthink

    kenning = str(Path(sys.executable).with_name("kenning"))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "rt"
        src.mkdir()
        generate(src / "memory.jsonl", args.entities, args.relations)
        size = (src / "memory.jsonl").stat().st_size
        reads, imports, indexes = [], [], []
        for run in range(args.runs):
            t = time.perf_counter()
            got = rawthink.read(src)
            reads.append(time.perf_counter() - t)
            vault = Path(tmp) / f"v{run}"
            subprocess.run([kenning, "init", str(vault)], check=True, capture_output=True)
            t = time.perf_counter()
            subprocess.run([kenning, "import", "rawthink", str(src)], check=True,
                           capture_output=True, cwd=vault)
            imports.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([kenning, "index", "--no-embed"], check=True, capture_output=True,
                           cwd=vault)
            indexes.append(time.perf_counter() - t)
        pages = sum(1 for _ in vault.rglob("*.md"))
        facts = sum(len(e.facts) for e in got.entities)
        print(json.dumps({
            "entities": len(got.entities), "facts_and_relations": facts,
            "input_bytes": size, "pages_after_import": pages,
            "read_s": round(statistics.median(reads), 2),
            "import_s": round(statistics.median(imports), 2),
            "index_s": round(statistics.median(indexes), 2),
            "runs": args.runs}, indent=1))


if __name__ == "__main__":
    main()
