#!/usr/bin/env python3
"""One benchmark command for Kenning's index and recall.

    .venv/bin/python bench/run.py                      # N = 1,000, 5,000 and 10,000
    .venv/bin/python bench/run.py --sizes 1000 --generator own

For each N it generates a vault (fixed seed), then measures in fresh processes: full index time
and peak RSS, re-index with nothing changed, re-index after editing 10 notes; in one warm process:
search latency (median, p95) over the latency queries, depth-3 traversal latency, planted-target
hits in the top 5; plus index size, `kenning --help` and one search as a new process. By default
it uses the generator in ../shared/bench (the vaults the peers were measured on) so the numbers
stand side by side with theirs; `--generator own` uses bench/gen_vault.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED_GEN = HERE.parent.parent / "shared" / "bench" / "gen_vault.py"
OWN_GEN = HERE / "gen_vault.py"

# Peer figures measured on the shared generator's vaults (seed 42) on this kind of machine
# (../shared/bench/README.md): basic-memory 0.24 and rawthink-mcp 2.0, keyword search only.
PEERS = {
    "basic-memory 0.24": {
        1000: {"index_s": 488, "rss_mib": 967, "noop_s": 4.9, "touch_s": 9.4,
               "search_p50_ms": 69, "search_p95_ms": 99, "cold_search_s": 8.3, "top5": "8/10"},
        5000: {"index_s": 3937, "rss_mib": 2321, "noop_s": 16.8, "touch_s": 25.3,
               "search_p50_ms": 100, "search_p95_ms": 186, "cold_search_s": 7.8, "top5": "9/10"},
    },
    "rawthink-mcp 2.0": {
        1000: {"index_s": 10.8, "rss_mib": 263, "touch_s": 12.3, "search_p50_ms": 136,
               "search_p95_ms": 157, "cold_search_s": 2.3, "top5": "10/10"},
        5000: {"index_s": 57.9, "rss_mib": 657, "touch_s": 67.6, "search_p50_ms": 706,
               "search_p95_ms": 838, "cold_search_s": 7.5, "top5": "10/10"},
    },
}


def kenning_cmd() -> list[str]:
    """The kenning CLI next to this interpreter (the project's .venv)."""
    script = Path(sys.executable).with_name("kenning")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kenning.cli"]


def child(mode: str, vault: str) -> None:
    """Run in a fresh process: index or rebuild, then print time and peak RSS as JSON."""
    from kenning import Vault

    v = Vault(Path(vault))
    started = time.perf_counter()
    report = v.rebuild(embed=False) if mode == "rebuild" else v.index(embed=False)
    seconds = time.perf_counter() - started
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "rss_mib": rss_kib / 1024, "added": report.added,
                      "updated": report.updated, "touched": report.touched}))


def run_child(mode: str, vault: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(vault)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def generate(generator: Path, n: int, out: Path, seed: int) -> Path:
    vault = out / f"vault-{n}"
    marker = out / f"vault-{n}.generated"
    if marker.exists() and marker.read_text() == f"{generator}:{seed}":
        return vault
    if vault.exists():
        shutil.rmtree(vault)
    subprocess.run([sys.executable, str(generator), "--n", str(n), "--out", str(vault),
                    "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
    marker.write_text(f"{generator}:{seed}")
    return vault


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def fill_random_vectors(v: object, seed: int) -> str:
    """Give every chunk a random unit vector under the real model's id (for latency only)."""
    import numpy as np

    from kenning.index.vectors import bump_version

    model = v.embedder()  # type: ignore[attr-defined]
    store = v.store  # type: ignore[attr-defined]
    hashes = [r[0] for r in store.rows(
        "SELECT DISTINCT text_hash FROM chunks WHERE text_hash IS NOT NULL")]
    rng = np.random.default_rng(seed)
    with store.transaction():
        for begin in range(0, len(hashes), 5000):
            part = hashes[begin : begin + 5000]
            vecs = rng.standard_normal((len(part), model.dim)).astype("<f4")
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            store.put_vectors(model.model_id, model.dim, list(zip(part, vecs, strict=True)))
        store.set_meta("embed_model", model.model_id)
        store.set_meta("embed_dim", str(model.dim))
        bump_version(store)
    return model.model_id


def timed(fn: object, queries: list[str]) -> list[float]:
    """Milliseconds per call of ``fn(query)`` after a warm-up of five."""
    for q in queries[:5]:
        fn(q)  # type: ignore[operator]
    out = []
    for q in queries:
        started = time.perf_counter()
        fn(q)  # type: ignore[operator]
        out.append((time.perf_counter() - started) * 1000)
    return out


def bench_size(n: int, generator: Path, out: Path, seed: int, vectors: str = "random"
               ) -> dict[str, object]:
    vault = generate(generator, n, out, seed)
    queries = json.loads(Path(f"{vault}.queries.json").read_text())
    touch = json.loads(Path(f"{vault}.touch.json").read_text())
    # Start from a vault with no state: the generated copy may hold a previous run's index.
    shutil.rmtree(vault / ".kenning", ignore_errors=True)
    subprocess.run([*kenning_cmd(), "init", str(vault)], check=True, stdout=subprocess.DEVNULL)

    full = run_child("index", vault)
    noop = run_child("index", vault)
    for rel in touch[:10]:
        path = vault / rel
        path.write_text(path.read_text(encoding="utf-8") + "\nEdited for the benchmark.\n",
                        encoding="utf-8")
    touched = run_child("index", vault)
    assert touched["updated"] == min(10, len(touch)), touched

    from kenning import Vault

    v = Vault(vault)
    latency_queries = list(queries.get("latency") or queries.get("generic") or [])
    while len(latency_queries) < 50:
        latency_queries += latency_queries[: 50 - len(latency_queries)]
    timings = timed(lambda q: v.search(q, mode="lexical"), latency_queries[:50])

    def top5(items: list[dict[str, str]], mode: str = "lexical") -> str:
        hits = 0
        for item in items:
            target = item.get("target_path") or item.get("target")
            results = v.search(item["query"], limit=5, mode=mode)
            hits += any(r.path == target for r in results)
        return f"{hits}/{len(items)}"

    quality = top5(queries.get("quality", []))
    paraphrases = queries.get("hard") or queries.get("paraphrase") or []
    hard = top5(paraphrases) if paraphrases else "—"

    rng = random.Random(seed)
    ids = [r[0] for r in v.store.rows("SELECT id FROM pages ORDER BY id")]
    from kenning.graph.queries import traverse

    walks, reached = [], []
    for page_id in rng.sample(ids, min(50, len(ids))):
        started = time.perf_counter()
        result = traverse(v.store, page_id, depth=3, direction="out")
        walks.append((time.perf_counter() - started) * 1000)
        reached.append(len(result.nodes))

    hybrid: dict[str, object] = {}
    if vectors != "none":
        if vectors == "model":
            started = time.perf_counter()
            report = v.index()
            embedding = report.embedding
            hybrid["embed_chunks"] = embedding.embedded if embedding else 0
            hybrid["embed_per_s"] = round(embedding.rate, 1) if embedding else 0.0
            hybrid["embed_s"] = round(time.perf_counter() - started, 1)
        else:
            fill_random_vectors(v, seed)
        hybrid["vectors"] = v.store.scalar("SELECT count(*) FROM embeddings")
        for mode in ("hybrid", "dense"):
            ms = timed(lambda q, m=mode: v.search(q, mode=m),
                       latency_queries[:50])
            hybrid[f"{mode}_p50_ms"] = round(statistics.median(ms), 2)
            hybrid[f"{mode}_p95_ms"] = round(percentile(ms, 0.95), 2)
        if vectors == "model":
            hybrid["hybrid_top5"] = top5(queries.get("quality", []), "hybrid")
            hybrid["hybrid_hard_top5"] = top5(paraphrases, "hybrid") if paraphrases else "—"

    size = sum(p.stat().st_size for p in (vault / ".kenning").glob("index.db*"))
    cold = []
    for q in latency_queries[:3]:
        started = time.perf_counter()
        subprocess.run([*kenning_cmd(), "-C", str(vault), "search", q, "--json"], check=True,
                       stdout=subprocess.DEVNULL)
        cold.append(time.perf_counter() - started)
    v.close()
    return {
        "n": n,
        "index_s": round(full["seconds"], 2),
        "rss_mib": round(full["rss_mib"]),
        "noop_s": round(noop["seconds"], 3),
        "touch_s": round(touched["seconds"], 3),
        "search_p50_ms": round(statistics.median(timings), 2),
        "search_p95_ms": round(percentile(timings, 0.95), 2),
        "traverse3_p50_ms": round(statistics.median(walks), 2),
        "traverse3_p95_ms": round(percentile(walks, 0.95), 2),
        "traverse3_nodes_p50": statistics.median(reached),
        "cold_search_s": round(statistics.median(cold), 2),
        "top5": quality,
        "hard_top5": hard,
        "index_mib": round(size / 1_048_576, 1),
        "chunks": v.store.scalar("SELECT count(*) FROM chunks"),
        **hybrid,
    }


def help_time() -> float:
    times = []
    for _ in range(7):
        started = time.perf_counter()
        subprocess.run([*kenning_cmd(), "--help"], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import sqlite3

    return (f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python "
            f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}, {platform.system()}")


def print_table(rows: list[dict[str, object]], help_s: float) -> None:
    keys = list(dict.fromkeys(k for row in rows for k in row if k != "n"))
    print(f"\nmachine: {machine()}")
    print(f"kenning --help: {help_s * 1000:.0f} ms (median of 7)\n")
    print("| metric | " + " | ".join(f"kenning @{r['n']:,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for key in keys:
        print(f"| {key} | " + " | ".join(str(r.get(key, "—")) for r in rows) + " |")
    print("\nSide by side with the peers (same generator, same seed; ratio = peer / kenning):")
    for peer, figures in PEERS.items():
        for row in rows:
            n = int(row["n"])  # type: ignore[call-overload]
            if n not in figures:
                continue
            cells = []
            for key, value in figures[n].items():
                ours = row.get(key)
                if isinstance(value, (int, float)) and isinstance(ours, (int, float)) and ours:
                    cells.append(f"{key} {value} vs {ours} (×{value / ours:,.0f})")
                else:
                    cells.append(f"{key} {value} vs {ours}")
            print(f"- {peer} @{n:,}: " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--generator", choices=["shared", "own"],
                        default="shared" if SHARED_GEN.exists() else "own")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--json", type=Path, help="Also write the results to this file.")
    parser.add_argument("--vectors", choices=["random", "model", "none"], default="random",
                        help="random: random unit vectors for every chunk (hybrid latency at "
                        "full size without hours of embedding); model: embed with the "
                        "configured model (throughput and quality); none: lexical only.")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "VAULT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    generator = SHARED_GEN if args.generator == "shared" else OWN_GEN
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"N = {n:,} ({args.generator} generator) …", file=sys.stderr, flush=True)
        rows.append(bench_size(n, generator, args.out / args.generator, args.seed,
                               args.vectors))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    help_s = help_time()
    print_table(rows, help_s)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "help_s": help_s,
                                         "generator": args.generator, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
