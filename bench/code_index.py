"""Indexing a repository as code: the first index (time, peak RSS), then re-indexing after
editing one file, and with nothing changed.

    .venv/bin/python bench/code_index.py PATH [--edits 7] [--json]

PATH is a source tree (the benchmark in docs/benchmarks.md used pytest's repository, brought in
with the search tool's ``fetch`` and ``git archive HEAD | tar -x``). Lexical only: embedding is
measured by bench/embed_rate.py. The first index runs in a child process so its peak RSS is its
own. Each edit appends a function to a different Python file, then the file is put back; the
re-index times are medians over the edits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def count_lines(root: Path) -> tuple[int, int]:
    from kenning.index.code.select import code_files

    selection = code_files(root)
    lines = sum((root / f.path).read_bytes().count(b"\n") for f in selection.files)
    return len(selection.files), lines


def child(repo: Path, vault: Path) -> None:
    """The first index, alone in this process: print seconds, peak RSS and graph counts."""
    os.environ["KENNING_EMBEDDINGS"] = "none"
    from kenning.api import Vault
    from kenning.index.queries.code import code_counts

    v, _ = Vault.init(vault)
    started = time.perf_counter()
    _, report = v.mount_add("repo", repo, kind="code")
    seconds = time.perf_counter() - started
    counts = code_counts(v.store)
    v.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rss_mb": rss, "pages": report.added,
                      "skipped": len(report.skipped), **counts}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--edits", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    repo = args.repo.resolve()
    if args.child:
        child(repo, args.child)
        return
    if not repo.is_dir():
        sys.exit(f"{repo}: not a folder")
    files, lines = count_lines(repo)
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        out = subprocess.run([sys.executable, __file__, str(repo), "--child", str(vault)],
                             check=True, capture_output=True, text=True)
        first = json.loads(out.stdout.strip().splitlines()[-1])
        os.environ["KENNING_EMBEDDINGS"] = "none"
        from kenning.api import Vault

        v = Vault.open(vault)
        unchanged, one = [], []
        for _ in range(3):
            started = time.perf_counter()
            v.index(embed=False)
            unchanged.append(time.perf_counter() - started)
        targets = sorted(p for p in repo.rglob("*.py") if p.stat().st_size > 2000
                         and "test" not in p.name)[: args.edits]
        for path in targets:
            original = path.read_bytes()
            try:
                path.write_bytes(original + b"\n\ndef kenning_bench_added():\n    return 1\n")
                started = time.perf_counter()
                report = v.index(embed=False)
                one.append(time.perf_counter() - started)
                assert report.updated == 1, (path, report.updated)
            finally:
                path.write_bytes(original)
                v.index(embed=False)
        v.close()
    result = {"repo": str(repo), "files": files, "lines": lines, "first": first,
              "reindex_unchanged_median_s": statistics.median(unchanged),
              "reindex_one_file_median_s": statistics.median(one),
              "reindex_one_file_max_s": max(one), "edits": len(one)}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{repo}: {files} source files, {lines:,} lines")
    print(f"first index:      {first['seconds']:.1f} s, peak RSS {first['rss_mb']:.0f} MB "
          f"({first['pages']} pages, {first['symbols']:,} definitions, "
          f"{first['calls_resolved']:,} calls resolved / "
          f"{first['calls_unresolved']:,} unresolved)")
    print(f"re-index, no change: median {result['reindex_unchanged_median_s']:.2f} s")
    print(f"re-index, one file:  median {result['reindex_one_file_median_s']:.2f} s, "
          f"max {result['reindex_one_file_max_s']:.2f} s over {len(one)} edits")


if __name__ == "__main__":
    main()
