"""Time ``kenning export`` on a generated 10,000-note vault, and the archive's size.

Generates the vault with ``bench/gen_vault.py`` (seed 42), indexes it (lexical), then gives
every chunk text a vector: by default a random unit vector of 384 float32 under the model name
``bench-synthetic`` stored through the index's own ``put_vectors`` (embedding 10,000 notes on a
shared 2-core machine takes far longer than the export being measured, and the export does not
read a vector's values, only copies them); ``--embed`` runs the real bundled model instead.
Each variant runs the CLI in a subprocess (``kenning export DEST --json``), ``--runs`` times;
the report gives the median seconds, the archive's bytes and the subprocess's peak RSS.
``--restore`` instead exports the tar.gz once and times ``kenning import kenning`` of it into
a new vault (files checked and written, index, vectors reused), once.

    nice -n 10 .venv/bin/python bench/export.py [--n 10000] [--runs 3] [--embed] [--keep DIR]
                                                [--restore]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SRC = HERE.parent / "src"


def prepare(root: Path, n: int, embed: bool) -> dict[str, float]:
    """Generate, index and vector the vault at ``root``; seconds of each step."""
    import gen_vault
    import numpy as np

    from kenning.api import Vault
    from kenning.index.vectors import pending_texts

    took: dict[str, float] = {}
    started = time.perf_counter()
    gen_vault.generate(n, root)
    took["generate"] = time.perf_counter() - started
    os.environ["KENNING_EMBEDDINGS"] = "bundled" if embed else "none"
    vault, _ = Vault.init(root)
    started = time.perf_counter()
    vault.index(embed=embed)
    took["index"] = time.perf_counter() - started
    if not embed:
        store, model, dim = vault.store, "bench-synthetic", 384
        rng = np.random.default_rng(42)
        todo = pending_texts(store, model, dim)
        started = time.perf_counter()
        for start in range(0, len(todo), 2000):
            part = todo[start:start + 2000]
            vectors = rng.standard_normal((len(part), dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            with store.transaction():
                store.put_vectors(model, dim, [(d, v) for (d, _), v in zip(part, vectors,
                                                                           strict=True)])
        with store.transaction():
            store.set_meta("embed_model", model)
            store.set_meta("embed_dim", str(dim))
        took["vectors"] = time.perf_counter() - started
    vault.close()
    return took


def export_once(root: Path, dest: Path, extra: list[str]) -> tuple[dict, float, int]:
    """One ``kenning export`` in a subprocess: (its report, wall seconds, peak RSS in MB)."""
    if dest.exists():
        dest.unlink()
    env = {**os.environ, "PYTHONPATH": str(SRC), "KENNING_PROGRESS_EVERY": "0",
           "KENNING_EMBEDDINGS": "none"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "from kenning.cli import main; main()",
                           "-C", str(root), "export", str(dest), "--json", *extra],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"export failed: {done.stderr or done.stdout}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return json.loads(done.stdout), wall, rss


def restore_once(archive: Path, into: Path) -> tuple[dict, float, int]:
    """``kenning init`` + ``kenning import kenning ARCHIVE`` in subprocesses: (the report,
    wall seconds of the import, peak RSS in MB)."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "KENNING_PROGRESS_EVERY": "0",
           "KENNING_EMBEDDINGS": "none"}
    cli = [sys.executable, "-c", "from kenning.cli import main; main()"]
    subprocess.run([*cli, "init", str(into)], env=env, capture_output=True, check=True)
    started = time.perf_counter()
    done = subprocess.run([*cli, "-C", str(into), "import", "kenning", str(archive), "--json"],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"restore failed: {done.stderr or done.stdout}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return json.loads(done.stdout), wall, rss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--embed", action="store_true", help="real bundled vectors (slow)")
    ap.add_argument("--keep", type=Path, help="build the vault here and keep it")
    ap.add_argument("--restore", action="store_true",
                    help="time restoring the tar.gz into a new vault instead")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(SRC))
    base = Path(tempfile.mkdtemp(prefix="kenning-bench-export-"))
    root = (args.keep or base / "vault").resolve()
    try:
        if not (root / ".kenning" / "index.db").exists():
            print(json.dumps({"prepare": prepare(root, args.n, args.embed)}), flush=True)
        files = sum(len(names) for _, _, names in os.walk(root))
        disk = sum(p.stat().st_size for p in root.rglob("*.md"))
        print(json.dumps({"notes": args.n, "files": files, "markdown_bytes": disk}), flush=True)
        if args.restore:
            export_once(root, base / "v.tar.gz", [])
            report, wall, rss = restore_once(base / "v.tar.gz", base / "restored")
            print(json.dumps({"variant": "restore (import kenning)", "s": round(wall, 2),
                              "peak_rss_mb": rss, "files": report["files"],
                              "vectors_reused": report["vectors"],
                              "index": report["index"], "notes": report["notes"]}), flush=True)
            return 0
        for label, name, extra in (("tar.gz", "v.tar.gz", []),
                                   ("tar.gz --no-vectors", "lean.tar.gz", ["--no-vectors"]),
                                   ("zip", "v.zip", [])):
            walls, report, rss = [], {}, 0
            for _ in range(args.runs):
                report, wall, rss = export_once(root, base / name, extra)
                walls.append(wall)
            print(json.dumps({
                "variant": label, "median_s": round(statistics.median(walls), 2),
                "runs_s": [round(w, 2) for w in walls], "reported_s": report["seconds"],
                "bytes": report["bytes"], "mb": round(report["bytes"] / 1e6, 1),
                "peak_rss_mb": rss, "counts": report["counts"]}), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
