#!/usr/bin/env python3
"""What each MCP tool profile costs an agent's context, and how fast a call is over stdio.

    python bench/mcp_tokens.py              # the table (Markdown) for docs/mcp.md
    python bench/mcp_tokens.py --latency    # also: round trips against the sample vault

Token cost is the ``tools/list`` result as the server sends it (compact JSON, camelCase, no
nulls) divided by 4 — the usual bytes-per-token rule for English and JSON (no tokenizer ships
offline). Remote callers see ``full`` without ``delete`` and ``link``. ``--latency`` starts
``kenning serve`` over stdio on a copy of the sample vault (lexical: no embedding model) and
reports the median of 30 calls of each read tool, client to server and back.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp_types import ListToolsResult

from kenning.serve.mcp_server import mcp_tools
from kenning.serve.tools import PROFILES, offered
from kenning.serve.trust import Caller


def wire_bytes(tools: list) -> int:
    result = ListToolsResult(tools=tools).model_dump(by_alias=True, exclude_none=True,
                                                    mode="json")
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


def token_table() -> str:
    rows = ["| profile | caller | tools | bytes | ≈ tokens |", "|---|---|---:|---:|---:|"]
    for profile in PROFILES:
        for caller in (Caller("stdio", True), Caller("http", False)):
            if profile != "full" and caller.remote:
                continue  # the same list as local
            specs = offered(profile, caller)
            size = wire_bytes(mcp_tools(specs))
            who = "local / trusted" if caller.trusted else "remote (HTTP)"
            rows.append(f"| {profile} | {who} | {len(specs)} | {size:,} | {size // 4:,} |")
    rows += ["", "| tool | profile | bytes | ≈ tokens |", "|---|---|---:|---:|"]
    for spec in offered("full", Caller("stdio", True)):
        size = wire_bytes(mcp_tools([spec]))
        rows.append(f"| {spec.name} | {spec.profile} | {size:,} | {size // 4:,} |")
    return "\n".join(rows)


def latency() -> str:
    import anyio
    from mcp import Client, StdioServerParameters

    from kenning.api import Vault
    from kenning.sample import copy_sample

    os.environ["KENNING_EMBEDDINGS"] = "none"
    calls = {
        "search": {"query": "caching decision", "limit": 5},
        "recall": {"entity": "Sarah Chen"},
        "page": {"ref": "Sarah Chen"},
        "graph": {"op": "traverse", "ref": "Sarah Chen", "depth": 2},
    }
    with tempfile.TemporaryDirectory() as tmp:
        vault, _ = Vault.init(copy_sample(Path(tmp) / "v"))
        vault.index(embed=False)
        vault.close()
        exe = str(Path(sys.executable).parent / "kenning")
        params = StdioServerParameters(command=exe, args=["-C", str(vault.root), "serve"],
                                       env={"KENNING_EMBEDDINGS": "none"})

        async def run() -> dict[str, list[float]]:
            out: dict[str, list[float]] = {}
            async with Client(params) as client:
                for name, args in calls.items():
                    await client.call_tool(name, args)  # warm up
                    out[name] = []
                    for _ in range(30):
                        t = time.perf_counter()
                        result = await client.call_tool(name, args)
                        out[name].append((time.perf_counter() - t) * 1000)
                        assert not result.is_error, result.content[0].text
            return out

        start = time.perf_counter()
        times = anyio.run(run)
        total = time.perf_counter() - start
    rows = ["| tool (stdio, sample vault, lexical) | median ms | max ms |", "|---|---:|---:|"]
    rows += [f"| {name} | {statistics.median(ms):.1f} | {max(ms):.1f} |"
             for name, ms in times.items()]
    rows.append(f"\nServer start + handshake + {30 * len(calls) + len(calls)} calls: "
                f"{total:.1f} s")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", action="store_true", help="also time calls over stdio")
    args = parser.parse_args()
    print(token_table())
    if args.latency:
        print()
        print(latency())


if __name__ == "__main__":
    main()
