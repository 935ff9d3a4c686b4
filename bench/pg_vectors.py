#!/usr/bin/env python3
"""Where pgvector's HNSW index starts to beat an exact scan, and how well it agrees with it.

    .venv/bin/python bench/pg_vectors.py --sizes 2000 5000 10000 20000 50000

For each size: a fresh schema in a throwaway PostgreSQL (tests/pg_harness.py, fsync on), that
many unit vectors of 384 dimensions (one chunk each; ``--data structured``, the default, or
``uniform``, generated as bench/ann_crossover.py does), the HNSW index built after the
load, then top-10 for 50 random queries: the time to read the matrix into the process
(``chunk_vectors``) and p50 of an in-process numpy scan; p50 of an exact scan on the server
(``nearest_exact``); p50 and recall@10 (against exact) of the HNSW index
(``PostgresStore.nearest``) at each ef_search given (40, 100, 400).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import pg_harness  # noqa: E402
from ann_crossover import make_data  # noqa: E402

from kenning.index.store.postgres import PostgresStore  # noqa: E402

DIM = 384


def load(store: PostgresStore, vectors: np.ndarray) -> float:
    started = time.perf_counter()
    with store.transaction():
        fid = store.insert("INSERT INTO files(path, size, mtime_ns, hash, status)"
                           " VALUES ('v.md', 1, 1, 'h', 'ok')")
        store.run("INSERT INTO pages(id, path, title, folder, summary, frontmatter, lines)"
                  " VALUES (?, 'v.md', 'V', '', '', '{}', 1)", (fid,))
        store.many("INSERT INTO chunks(page_id, ord, heading, start_line, end_line, words,"
                   " text_hash) VALUES (?, ?, '', 1, 1, 1, ?)",
                   [(fid, i, f"h{i}") for i in range(len(vectors))])
        store.many("INSERT INTO embeddings(model, text_hash, dim, vector) VALUES (?, ?, ?, ?)",
                   [("m", f"h{i}", DIM, v) for i, v in enumerate(vectors)])
    with store.transaction():
        store.run("SET LOCAL maintenance_work_mem = '512MB'")
        store._ensure_hnsw(DIM)
    store.run("ANALYZE embeddings")
    return time.perf_counter() - started


def timed(fn, queries: np.ndarray) -> tuple[list[list[int]], list[float]]:
    out, times = [], []
    for q in queries:
        started = time.perf_counter()
        out.append([c for c, _ in fn(q)])
        times.append((time.perf_counter() - started) * 1000)
    return out, times


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p * (len(values) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--m", type=int, default=PostgresStore.HNSW_M)
    parser.add_argument("--ef-construction", type=int, default=PostgresStore.HNSW_BUILD)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 400])
    parser.add_argument("--data", choices=("uniform", "structured"), default="structured",
                        help="as bench/ann_crossover.py: a clustered 24-d subspace (like real"
                             " embeddings) or uniform random (HNSW's worst case)")
    args = parser.parse_args()
    PostgresStore.HNSW_M, PostgresStore.HNSW_BUILD = args.m, args.ef_construction
    print(f"{args.data} vectors; HNSW m={args.m} ef_construction={args.ef_construction}")
    print(f"{'vectors':>8} {'load s':>7} {'matrix ms':>8} {'numpy':>7} {'server':>9}  "
          "HNSW at each ef_search: p50 ms and recall@10 against exact")
    with pg_harness.temporary_server(durable=True) as server:
        for size in args.sizes:
            root = Path(tempfile.mkdtemp())
            store = PostgresStore(root, server.url(schema=f"bench_{size}"))
            try:
                vectors, queries = make_data(args.data, size, args.queries, 42 + size)
                seconds = load(store, vectors)
                started = time.perf_counter()
                ids, matrix = store.chunk_vectors("m", DIM)
                t_load = time.perf_counter() - started
                local, t_local = timed(
                    lambda q, ids=ids, matrix=matrix: [(int(ids[j]), 0.0)
                                                       for j in np.argsort(-(matrix @ q))[:10]],
                    queries)
                store.nearest_exact("m", DIM, queries[0], 10)  # warm
                exact, t_exact = timed(lambda q, s=store: s.nearest_exact("m", DIM, q, 10), queries)
                assert exact == local
                store.HNSW_MIN_VECTORS = 0
                row = [f"{size:>8} {seconds:>7.1f} {t_load * 1000:>8.0f} {pct(t_local, .5):>7.1f}"
                       f" {pct(t_exact, .5):>9.1f}"]
                for ef in args.ef_search:
                    store.HNSW_EF_SEARCH = ef
                    store.nearest("m", DIM, queries[0], 10)  # warm
                    approx, t_hnsw = timed(lambda q, s=store: s.nearest("m", DIM, q, 10), queries)
                    recall = statistics.mean(len(set(a) & set(e)) / 10
                                             for a, e in zip(approx, exact, strict=True))
                    row.append(f"{pct(t_hnsw, .5):>7.1f} {recall:>5.3f}")
                print(" ".join(row), flush=True)
            finally:
                store.close()


if __name__ == "__main__":
    main()
