"""What an agent receives, for real: an SDK client against `kenning serve` over stdio and over
streamable HTTP on the sample vault. Every answer carries each item once and no nulls; a budget
is a ceiling on the whole answer as sent; session_close lists the decisions of the session and
session_start lists each changed page once."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp import http_client, http_server, stdio

from kenning.answers import result_path
from kenning.api import Vault
from kenning.recall.search import estimate_tokens

QUERIES = ("caching decision", "what did Sarah Chen ask the board for", "pricing per seat",
           "会議の議事録")


@pytest.fixture
def sample(sample_vault: Vault) -> Path:
    sample_vault.index(embed=False)
    sample_vault.close()
    return sample_vault.root


def answer(result: Any) -> tuple[str, Any]:
    """The text the model reads and its JSON; the answer is sent once (no structured copy)."""
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1 and result.structured_content is None
    text = result.content[0].text
    return text, json.loads(text)


def nulls(value: Any, where: str = "") -> list[str]:
    """Where ``value`` holds a null, or an empty list/object/text that says nothing."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None or (item in ("", {}, []) and key not in (
                    "results", "edges", "nodes", "path")):
                found.append(f"{where}.{key}")
            found += nulls(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += nulls(item, f"{where}[{i}]")
    return found


def test_no_answer_carries_a_null_or_an_empty_field(sample: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("session_start", {"project": "lean"}),
        *[("search", {"query": q}) for q in QUERIES],
        ("search", {"query": "caching", "group": "chunk", "budget": 300}),
        ("search", {"query": "Sarah Chen", "mode": "lexical", "types": ["person"]}),
        ("recall", {"entity": "Sarah Chen"}),
        ("recall", {"entity": "Kestrel Labs", "overview": True}),
        ("page", {"ref": "Sarah Chen"}),
        ("page", {"ref": "Sarah Chen", "as_of": "2025-07-01"}),
        ("page", {"ref": "people/Sarah Chen.md", "format": "markdown"}),
        *[("graph", {"op": op, "ref": "Sarah Chen"}) for op in ("neighbors", "backlinks")],
        ("graph", {"op": "traverse", "ref": "Sarah Chen", "depth": 3, "limit": 6}),
        ("graph", {"op": "path", "ref": "Sarah Chen", "to": "Kestrel Labs"}),
        ("graph", {"op": "orphans"}),
        ("record", {"entities": [{"name": "Dana Ruiz", "type": "person",
                                  "observations": ["Leads the Replay SDK team"]}],
                    "relations": [{"from": "Dana Ruiz", "rel": "works_at",
                                   "to": "Kestrel Labs"}]}),
        ("decide", {"name": "Replay cache TTL", "domain": "engineering",
                    "decided": "Keep replay cache entries ten minutes",
                    "because": "older replays are never reread"}),
        ("revise", {"entity": "Dana Ruiz", "observation": "Leads the Replay SDK team",
                    "new_text": "Leads the Replay platform team"}),
        ("retain", {"kind": "W", "text": "The replay cache TTL is ten minutes"}),
        ("session_close", {"transcript": "we set the cache TTL", "project": "lean"}),
        ("session_start", {"project": "lean"}),
    ]

    async def run() -> list[tuple[str, Any]]:
        async with stdio(sample, "record") as client:
            return [(name, answer(await client.call_tool(name, args))[1])
                    for name, args in calls]

    got = anyio.run(run)
    for (name, args), (_, data) in zip(calls, got, strict=True):
        assert nulls(data) == [], (name, args, nulls(data))
    searches = [data for name, data in got if name == "search"]
    assert all(s["results"] for s in searches)
    # Each result once: its evidence in its hits, not again beside them; cited on every hit.
    for s in searches:
        for r in s["results"]:
            assert not {"snippet", "citation", "score", "exact"} & set(r) or r.get("exact")
            assert r["hits"] and all("#L" in h["citation"] and h["snippet"] for h in r["hits"])
    edges = next(d for n, d in got if n == "graph")["edges"]  # neighbors: flat, cited

    assert edges and all({"rel", "direction", "path", "kind"} <= set(e) for e in edges)
    assert all("#L" in e["citation"] for e in edges if e["kind"] != "manual")
    walk = next(d for n, d in got if n == "graph" and "start" in d)
    shown = {n.get("title") or Path(n["path"]).stem for n in [walk["start"], *walk["nodes"]]}
    assert walk["edges"] and all({e["src"], e["dst"]} <= shown for e in walk["edges"])


def test_evidence_appears_once_in_a_search_answer(sample: Path) -> None:
    async def run() -> list[tuple[str, Any]]:
        async with stdio(sample, "recall") as client:
            return [answer(await client.call_tool("search", {"query": q})) for q in QUERIES]

    for text, data in anyio.run(run):
        hits = [h for r in data["results"] for h in r["hits"]]
        assert len(hits) >= 5
        for hit in hits:
            assert text.count(json.dumps(hit["citation"], ensure_ascii=False)) == 1, hit
            assert text.count(json.dumps(hit["snippet"], ensure_ascii=False)) == 1, hit
        # A page is one result, named by its citations (the path is in each, not beside it).
        pages = [result_path(r) for r in data["results"]]
        assert len(pages) == len(set(pages))
        assert all(h["citation"].startswith(result_path(r) + "#L")
                   for r in data["results"] for h in r["hits"])


def _lines(citations: list[str]) -> set[tuple[str, int]]:
    out = set()
    for c in citations:
        path, lines = c.split("#L")
        start, end = lines.split("-L")
        out |= {(path, n) for n in range(int(start), int(end) + 1)}
    return out


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_budget_is_a_ceiling_on_the_whole_answer(sample: Path, transport: str) -> None:
    budgets = (50, 120, 300, 600, 1200)

    async def calls(client: Any) -> dict[tuple[str, str, int], tuple[str, Any]]:
        out = {}
        for budget in budgets:
            for query in QUERIES[:3]:
                out["search", query, budget] = answer(await client.call_tool(
                    "search", {"query": query, "budget": budget}))
            out["chunks", "caching", budget] = answer(await client.call_tool(
                "search", {"query": "caching", "group": "chunk", "budget": budget}))
            out["recall", "Sarah Chen", budget] = answer(await client.call_tool(
                "recall", {"entity": "Sarah Chen", "budget": budget}))
            if budget >= 100:  # session_start's lower bound
                out["start", "p", budget] = answer(await client.call_tool(
                    "session_start", {"project": "p", "budget": budget}))
        return out

    async def over_stdio() -> dict[tuple[str, str, int], tuple[str, Any]]:
        async with stdio(sample, "recall") as client:
            return await calls(client)

    async def over_http(url: str) -> dict[tuple[str, str, int], tuple[str, Any]]:
        async with http_client(url) as client:
            return await calls(client)

    if transport == "stdio":
        got = anyio.run(over_stdio)
    else:
        with http_server(sample, "--profile", "recall") as (url, _):
            got = anyio.run(over_http, url)
    for (tool, what, budget), (text, data) in got.items():
        assert estimate_tokens(text) <= budget, (tool, what, budget, estimate_tokens(text))
        if tool in ("search", "chunks") and budget >= 300:
            assert data["results"], (tool, what, budget)
    for query in QUERIES[:3]:
        # The best evidence first: what a smaller budget keeps is where a larger one starts.
        cited = [[h["citation"] for r in got["search", query, b][1]["results"]
                  for h in r["hits"]] for b in budgets]
        for small, large in itertools.pairwise(cited):
            # The best evidence first: a larger budget keeps what a smaller one starts with (it
            # may widen it by neighbouring lines, and the context it takes with its first
            # passages may leave out a weak passage a smaller budget had room for).
            assert _lines(small[:1]) <= _lines(large), query
        assert len(cited[-1]) > len(cited[1]) > 0
    # recall keeps its summary first and fills the rest in order.
    small, large = got["recall", "Sarah Chen", 300][1], got["recall", "Sarah Chen", 1200][1]
    assert small["summary"] == large["summary"] and small.get("truncated") is True
    assert large["facts"][: len(small.get("facts", []))] == small.get("facts", [])
    assert "Core memory" in got["start", "p", 600][1]["text"]


def test_session_close_lists_the_decisions_made_in_the_session(sample: Path) -> None:
    async def run() -> dict[str, Any]:
        async with stdio(sample, "record") as client:
            call = client.call_tool
            got: dict[str, Any] = {}
            answer(await call("session_start", {"project": "cache"}))
            got["decide"] = answer(await call("decide", {
                "name": "Replay cache TTL", "domain": "engineering",
                "decided": "Keep replay cache entries ten minutes",
                "because": "older replays are never reread",
                "rejected": [{"option": "one hour", "why": "stale replays"}]}))[1]
            got["close"] = answer(await call("session_close", {
                "transcript": [{"role": "user", "content": "Set the TTL, please."},
                               {"role": "assistant", "content": "Done.\nDECISION: Page the "
                                "on-call engineer for cache misses because nobody else "
                                "watches them"}],
                "project": "cache"}))[1]
            got["next"] = answer(await call("session_start", {"project": "cache"}))[1]
            return got

    got = anyio.run(run)
    decided = {d["path"]: d for d in got["close"]["decisions"]}
    # The `decide` call of the session and the transcript's DECISION marker, each once.
    assert set(decided) == {got["decide"]["path"],
                            "decisions/Page the on-call engineer for cache misses.md"}
    mine = decided[got["decide"]["path"]]
    assert mine["decided"] == "Keep replay cache entries ten minutes"
    assert mine["citation"] == got["decide"]["citations"]["decided"]
    handoff = (sample / got["close"]["handoff"]).read_text(encoding="utf-8")
    assert "2 decision(s)" in handoff
    section = handoff.split("## Decisions", 1)[1].split("\n## ", 1)[0]
    assert "Keep replay cache entries ten minutes" in section
    assert section.count("decisions/Replay cache TTL.md#L") == 1
    assert "Keep replay cache entries ten minutes" in got["next"]["text"]
    assert got["next"]["handoff"] == got["close"]["handoff"]


def test_session_start_lists_each_changed_page_once(sample: Path) -> None:
    async def run() -> tuple[str, Any]:
        async with stdio(sample, "record") as client:
            answer(await client.call_tool("session_close", {"transcript": "first",
                                                            "project": "once"}))
            answer(await client.call_tool("record", {"entities": [
                {"name": "Globex", "type": "organization", "summary": "A new customer."}]}))
            return answer(await client.call_tool("session_start", {"project": "once"}))

    text, data = anyio.run(run)
    assert set(data) == {"project", "since", "handoff", "text"}
    changed = data["text"].split("## Changed since the last session", 1)[1]
    assert "organizations/Globex.md" in changed
    assert text.count("organizations/Globex.md") == 1  # in the text, and nowhere else
    assert text.count("Maya wants the decision she needs") == 1  # core memory, once
    assert text.count("# Handoff") == 1


def test_the_cli_json_and_the_mcp_answer_are_one_shape(sample: Path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    def cli(*args: str) -> Any:
        done = CliRunner().invoke(main, ["-C", str(sample), *args, "--json"])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    async def run() -> tuple[Any, Any, Any]:
        async with stdio(sample, "recall") as client:
            search = answer(await client.call_tool("search", {
                "query": "pricing per seat", "mode": "lexical", "budget": 400}))[1]
            page = answer(await client.call_tool("page", {"ref": "Sarah Chen"}))[1]
            edges = answer(await client.call_tool("graph", {
                "op": "neighbors", "ref": "Sarah Chen", "limit": 50}))[1]
            return search, page, edges

    search, page, edges = anyio.run(run)
    shown = cli("search", "pricing", "per", "seat", "--mode", "lexical", "--budget", "400")
    assert shown["results"] == search["results"]
    assert estimate_tokens(json.dumps(shown, ensure_ascii=False, separators=(",", ":"))) <= 400
    assert cli("show", "Sarah Chen") == page
    assert "truncated" not in edges
    assert cli("graph", "neighbors", "Sarah Chen") == edges["edges"]
