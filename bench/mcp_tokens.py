#!/usr/bin/env python3
"""What each MCP tool profile costs an agent's context, what each answer costs, and how fast a
call is over stdio.

    python bench/mcp_tokens.py              # the table (Markdown) for docs/mcp.md
    python bench/mcp_tokens.py --latency    # also: round trips against the sample vault
    python bench/mcp_tokens.py --answers OUT.json [--vault DIR] [--gen N]
    python bench/mcp_tokens.py --compare BEFORE.json AFTER.json

``--answers`` runs one scripted agent session (session_start, searches by default and with
``budget=500``, recall, page, graph, record, decide, session_close, session_start again) over
stdio against a copy of the sample vault (or of ``--vault DIR`` with its index, e.g. one embedded
beforehand, so hybrid search runs; or a ``--gen N``-note vault from ``bench/gen_vault.py``) and
writes, per call, the answer's tokens (its text as the model reads it, estimated like every
budget: ``recall.search.estimate_tokens``), its size as sent (text and any structured copy) and
the citations of its evidence. Run it once on the base commit (``PYTHONPATH=<worktree of the
base>/src``: the server subprocess gets the same path) and once after; ``--compare`` prints the
table and checks the evidence is the same.

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


SAMPLE_QUERIES = ("caching decision", "what did Sarah Chen ask the board for",
                  "pricing per seat", "Horizon Ventures seed round", "会議の議事録")
TRANSCRIPT = [
    {"role": "user", "content": "Replays older than ten minutes are never reread."},
    {"role": "assistant", "content": "Recorded the TTL decision.\nTODO: tell Dana the new TTL"},
]


def session_calls(queries: tuple[str, ...] | list[str], entity: str) -> list[tuple[str, str, dict]]:
    """(label, tool, arguments) of the scripted session, in order."""
    calls: list[tuple[str, str, dict]] = [("session_start (first)", "session_start",
                                           {"project": "bench"})]
    calls += [(f"search {q!r}", "search", {"query": q}) for q in queries]
    calls += [(f"search {q!r} budget=500", "search", {"query": q, "budget": 500})
              for q in queries]
    calls += [
        ("recall", "recall", {"entity": entity}),
        ("page", "page", {"ref": entity}),
        ("graph neighbors", "graph", {"op": "neighbors", "ref": entity}),
        ("graph traverse depth 2", "graph", {"op": "traverse", "ref": entity, "depth": 2}),
        ("record", "record", {"entities": [{"name": "Dana Ruiz", "type": "person",
                                            "observations": ["Leads the Replay SDK team"]}],
                              "relations": [{"from": "Dana Ruiz", "rel": "works_at",
                                             "to": entity}]}),
        ("decide", "decide", {"name": "Replay cache TTL", "domain": "engineering",
                              "decided": "Keep replay cache entries ten minutes",
                              "because": "replays older than that are never reread",
                              "rejected": [{"option": "one hour", "why": "stale replays"}]}),
        ("session_close", "session_close", {"transcript": TRANSCRIPT, "project": "bench"}),
        ("session_start (next)", "session_start", {"project": "bench"}),
    ]
    return calls


def citations(answer: object) -> list[str]:
    """Every ``citation`` in an answer, in order (the evidence it carries)."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("citation"), str):
                found.append(value["citation"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(answer)
    return found


def answers(out: Path, vault_dir: Path | None, gen: int | None) -> None:
    """Run the scripted session over stdio; write each call's tokens and evidence to ``out``."""
    import shutil

    import anyio
    from mcp import Client, StdioServerParameters

    from kenning.api import Vault
    from kenning.recall.search import estimate_tokens
    from kenning.sample import copy_sample

    tmp = Path(tempfile.mkdtemp(prefix="mcp-answers-"))
    root = tmp / "v"
    env = {k: os.environ[k] for k in ("PYTHONPATH", "HOME", "KENNING_EMBEDDINGS")
           if k in os.environ}
    queries: list[str] | tuple[str, ...] = SAMPLE_QUERIES
    entity = "Sarah Chen"
    if vault_dir is not None:
        shutil.copytree(vault_dir, root, symlinks=True)
    elif gen is not None:
        import subprocess

        subprocess.run([sys.executable, str(Path(__file__).with_name("gen_vault.py")), "--n",
                        str(gen), "--out", str(root)], check=True, stdout=subprocess.DEVNULL)
        spec = json.loads(Path(f"{root}.queries.json").read_text(encoding="utf-8"))
        queries = spec["latency"][:5]
        env.setdefault("KENNING_EMBEDDINGS", "none")
    else:
        copy_sample(root)
        env.setdefault("KENNING_EMBEDDINGS", "none")
    os.environ.update({"KENNING_EMBEDDINGS": env["KENNING_EMBEDDINGS"]}
                      if "KENNING_EMBEDDINGS" in env else {})
    if not (root / ".kenning").is_dir():
        Vault.init(root)[0].close()
    vault = Vault.open(root)
    vault.index(embed=env.get("KENNING_EMBEDDINGS") != "none")
    if gen is not None:
        entity = vault.store.scalar("SELECT title FROM pages WHERE type = 'person'"
                                    " ORDER BY path LIMIT 1")
    vault.close()
    exe = str(Path(sys.executable).parent / "kenning")
    params = StdioServerParameters(command=exe, args=["-C", str(root), "serve", "--profile",
                                                      "record"], env=env)
    rows: list[dict] = []

    async def run() -> None:
        async with Client(params) as client:
            for label, tool, arguments in session_calls(queries, entity):
                result = await client.call_tool(tool, arguments)
                text = result.content[0].text
                assert not result.is_error, f"{label}: {text}"
                sent = result.model_dump(by_alias=True, exclude_none=True, mode="json")
                data = json.loads(text)
                rows.append({
                    "label": label, "tool": tool, "arguments": arguments,
                    "tokens": estimate_tokens(text),
                    "sent_tokens": estimate_tokens(json.dumps(sent, separators=(",", ":"),
                                                              ensure_ascii=False)),
                    "citations": citations(data),
                    "nulls": json.dumps(data).count(": null"),
                    "decisions": len(data.get("decisions", [])) if tool == "session_close"
                    else None,
                    "text": text,
                })

    try:
        anyio.run(run)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.write_text(json.dumps({"vault": str(vault_dir or (f"gen {gen}" if gen else "sample")),
                               "rows": rows}, indent=1, ensure_ascii=False), encoding="utf-8")


def compare(before_file: Path, after_file: Path) -> str:
    """The before/after table of two ``--answers`` runs, with the evidence check."""
    before = json.loads(before_file.read_text(encoding="utf-8"))["rows"]
    after = {r["label"]: r for r in json.loads(after_file.read_text(encoding="utf-8"))["rows"]}
    lines = ["| call | tokens before | after | after / before | sent before | sent after "
             "| nulls before → after | evidence |", "|---|---:|---:|---:|---:|---:|---|---|"]
    groups: dict[str, list[tuple[int, int]]] = {}
    for b in before:
        a = after[b["label"]]
        if b["tool"] == "search":
            cb, ca = list(dict.fromkeys(b["citations"])), list(dict.fromkeys(a["citations"]))
            same_top = cb[:3] == ca[:3]
            kept = len(set(ca) & set(cb))
            evidence = (f"top 3 {'same' if same_top else 'DIFFERENT'}; {kept} of {len(cb)} "
                        f"cited kept" + (f", {len(ca) - kept} more" if len(ca) > kept else ""))
            if "budget" in b["arguments"]:
                evidence += f"; ≤ {b['arguments']['budget']}: " + (
                    "yes" if a["tokens"] <= b["arguments"]["budget"] else "NO")
            group = "search budget=500" if "budget" in b["arguments"] else "search (default)"
        elif b["tool"] == "session_close":
            evidence = f"decisions listed {b['decisions']} → {a['decisions']}"
            group = b["label"]
        else:
            lost = sorted(set(b["citations"]) - set(a["citations"]))
            evidence = "same citations" if not lost else f"{len(lost)} citations fewer"
            group = b["label"]
        groups.setdefault(group, []).append((b["tokens"], a["tokens"]))
        lines.append(f"| {b['label']} | {b['tokens']:,} | {a['tokens']:,} | "
                     f"{a['tokens'] / b['tokens']:.2f} | {b['sent_tokens']:,} | "
                     f"{a['sent_tokens']:,} | {b['nulls']} → {a['nulls']} | {evidence} |")
    lines += ["", "| calls | median tokens before | after | after / before |",
              "|---|---:|---:|---:|"]
    for group, pairs in groups.items():
        mb = statistics.median(p[0] for p in pairs)
        ma = statistics.median(p[1] for p in pairs)
        lines.append(f"| {group} ({len(pairs)}) | {mb:,.0f} | {ma:,.0f} | {ma / mb:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", action="store_true", help="also time calls over stdio")
    parser.add_argument("--answers", type=Path, metavar="OUT",
                        help="run the scripted session; write tokens per answer to OUT")
    parser.add_argument("--vault", type=Path, help="with --answers: copy this vault (and its "
                        "index) instead of the sample")
    parser.add_argument("--gen", type=int, help="with --answers: a generated vault of N notes")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.answers:
        answers(args.answers, args.vault, args.gen)
        return
    if args.compare:
        print(compare(*args.compare))
        return
    print(token_table())
    if args.latency:
        print()
        print(latency())


if __name__ == "__main__":
    main()
