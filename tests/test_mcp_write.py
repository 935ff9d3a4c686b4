"""The MCP write path, for real: an SDK client against `kenning serve` (stdio and HTTP) calls
every write tool and the test reads the vault files they changed; bad input leaves the vault as
it was; two clients writing at once lose nothing; a client that leaves mid-call cuts nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp import ENV, KENNING, data, error, http_client, http_server, stdio

from kenning.api import Vault


@pytest.fixture
def sample(sample_vault: Vault) -> Path:
    sample_vault.index(embed=False)
    sample_vault.close()
    return sample_vault.root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file a person owns (the derived index under .kenning/ left out)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".kenning" not in p.relative_to(root).parts}


def test_every_write_tool_changes_the_files_it_should(sample: Path) -> None:
    today = date.today().isoformat()

    async def run() -> dict[str, Any]:
        async with stdio(sample, "full") as client:
            call = client.call_tool
            got: dict[str, Any] = {}
            got["start"] = data(await call("session_start", {"project": "Replay"}))
            got["record"] = data(await call("record", {
                "entities": [{"name": "Dana Ruiz", "type": "contact", "domain": "work",
                              "observations": ["Leads the Replay SDK team"]}],
                "relations": [{"from": "Dana Ruiz", "rel": "employed_by",
                               "to": "Kestrel Labs"}]}))
            got["decide"] = data(await call("decide", {
                "name": "Replay cache in Redis", "domain": "eng",
                "decided": "Use Redis for the replay cache",
                "because": "it is shared by every instance",
                "rejected": [{"option": "in-process LRU", "why": "not shared"}]}))
            got["revise"] = data(await call("revise", {
                "entity": "Dana Ruiz", "observation": "Leads the Replay SDK team",
                "new_text": "Leads the Replay platform team"}))
            got["retain"] = data(await call("retain", {
                "kind": "O", "text": "Redis is enough at our scale",
                "entities": ["Dana Ruiz"], "confidence": 0.7}))
            got["note"] = data(await call("retain", {
                "kind": "note", "text": "Check the cache TTLs", "title": "cache ttl"}))
            got["believed"] = data(await call("page", {"ref": "Dana Ruiz",
                                                       "believed_on": "2000-01-01"}))
            got["close"] = data(await call("session_close", {
                "transcript": [{"role": "user", "content": "REMEMBER: Dana prefers async"},
                               {"role": "assistant", "content": "Noted."}],
                "project": "Replay", "summary": "Chose Redis for the replay cache"}))
            got["again"] = data(await call("session_start", {"project": "Replay"}))
            got["delete"] = data(await call("delete", {"ref": "cache ttl"}))
            got["index"] = data(await call("index", {}))
            return got

    got = anyio.run(run)
    dana = (sample / "people" / "Dana Ruiz.md").read_text(encoding="utf-8")
    assert got["record"]["created"] == ["people/Dana Ruiz.md"]
    assert "type: person" in dana  # "contact" folded to person
    assert "Leads the Replay SDK team" in dana and "[status:: superseded]" in dana
    assert "Leads the Replay platform team" in dana
    assert "[[Kestrel Labs]]" in dana  # employed_by folded to works_at
    assert got["revise"]["old"]["id"] != got["revise"]["new"]["id"]
    decision = (sample / got["decide"]["path"]).read_text(encoding="utf-8")
    assert "domain: engineering" in decision
    assert "in-process LRU" in decision and "not shared" in decision
    log = (sample / "memory" / f"{today}.md").read_text(encoding="utf-8")
    assert "Redis is enough at our scale" in log and "@" in log
    assert "facts" not in got["believed"]  # nothing of Dana was believed in 2000
    assert not (sample / got["note"]["path"]).exists()  # deleted …
    assert (sample / got["delete"]["trash"]).exists()  # … into the trash, not lost
    assert (sample / got["close"]["transcript"]).exists()
    handoff = (sample / got["close"]["handoff"]).read_text(encoding="utf-8")
    assert "Chose Redis" in handoff
    assert got["again"]["handoff"] == got["close"]["handoff"]
    assert "Chose Redis" in got["again"]["text"]
    assert "Dana prefers async" in (sample / "memory" / f"{today}.md").read_text("utf-8")
    assert got["index"]["scanned"] > 0


@pytest.mark.skipif(importlib.util.find_spec("kenning.memory.reflect") is None,
                    reason="kenning.memory.reflect has not landed yet")
def test_reflect_tool(sample: Path) -> None:
    async def run() -> Any:
        async with stdio(sample, "full") as client:
            data(await client.call_tool("retain", {"kind": "W", "text": "Sarah moved to Lisbon",
                                                   "entities": ["Sarah Chen"]}))
            return data(await client.call_tool("reflect", {"since": "1d", "apply": True}))

    out = anyio.run(run)
    assert any("people/Sarah Chen.md" in f["to"] for f in out["folded"]), out
    assert "Lisbon" in (sample / "people" / "Sarah Chen.md").read_text(encoding="utf-8")


def test_bad_writes_leave_the_vault_exactly_as_it_was(sample: Path, tmp_path: Path) -> None:
    before = snapshot(sample)

    async def run() -> dict[str, str]:
        async with stdio(sample, "record") as client:
            call = client.call_tool
            got = {}
            got["types"] = error(await call("record", {
                "entities": [{"name": "Zed", "type": "spaceship"},
                             {"name": "Ok Person", "type": "person"}],
                "relations": [{"from": "Zed", "rel": "likes", "to": "Ok Person"}]}))
            got["missing"] = error(await call("record", {
                "relations": [{"from": "Sarah Chen", "rel": "advises", "to": "Nobody Here"}]}))
            got["huge"] = error(await call("record", {"observations": [
                {"entity": "Sarah Chen", "text": "x" * 5_000_000}]}))
            got["dotdot"] = error(await call("record", {
                "entities": [{"name": "../../escape", "type": "person"}]}))
            got["nul"] = error(await call("record", {
                "entities": [{"name": "Nul\x00Byte", "type": "person"}]}))
            got["blank"] = error(await call("record", {
                "entities": [{"name": "   ", "type": "person"}]}))
            got["revise"] = error(await call("revise", {
                "entity": "Sarah Chen", "observation": "never said this", "new_text": "x"}))
            got["empty"] = error(await call("record", {}))
            got["invalidate"] = error(await call("revise", {"entity": "Sarah Chen",
                                                            "observation": "f1"}))
            return got

    got = anyio.run(run)
    assert "'spaceship' is not one of" in got["types"] and "'likes' is not one of" in \
        got["types"]
    assert "Nobody Here" in got["missing"]
    assert "error" in got["huge"] and len(got["huge"]) < 2000
    assert "NUL byte" in got["nul"]
    assert "error" in got["blank"] and "error" in got["revise"]
    assert "nothing to record" in got["empty"]
    assert "reason to invalidate" in got["invalidate"]
    assert not (tmp_path / "escape.md").exists()
    after = snapshot(sample)
    created = set(after) - set(before)
    # "../../escape" may only ever become a page inside the vault; everything else unchanged
    assert all(not p.startswith("..") for p in created)
    assert {k: v for k, v in after.items() if k in before} == before
    assert not created or got["dotdot"].startswith("error")


def test_two_clients_writing_at_once_lose_nothing(sample: Path) -> None:
    """Two server processes (two agents) record on the same page at the same time."""
    async def writer(tag: str, n: int) -> None:
        async with stdio(sample, "record") as client:
            for i in range(n):
                data(await client.call_tool("record", {"observations": [
                    {"entity": "Sarah Chen", "text": f"note {tag}-{i} from a parallel agent"}]}))

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, "a", 8)
            tg.start_soon(writer, "b", 8)

    anyio.run(run)
    page = (sample / "people" / "Sarah Chen.md").read_text(encoding="utf-8")
    for tag in "ab":
        for i in range(8):
            assert f"note {tag}-{i} from a parallel agent" in page
    assert not list(sample.rglob(".*.tmp"))


def test_two_http_clients_on_one_server_lose_nothing(sample: Path) -> None:
    async def writer(url: str, tag: str) -> None:
        async with http_client(url) as client:
            for i in range(6):
                data(await client.call_tool("retain", {
                    "kind": "W", "text": f"http fact {tag}-{i}"}))  # remote: no @mentions

    async def run(url: str) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, url, "a")
            tg.start_soon(writer, url, "b")

    with http_server(sample, "--profile", "record") as (url, _):
        anyio.run(run, url)
    log = (sample / "memory" / f"{date.today().isoformat()}.md").read_text(encoding="utf-8")
    assert sorted(line.split("http fact ")[1] for line in log.splitlines()
                  if "http fact " in line) == sorted(f"{t}-{i}" for t in "ab" for i in range(6))


def test_remote_callers_may_record_but_not_write_links_in_text(sample: Path) -> None:
    async def run(url: str) -> tuple[Any, str]:
        async with http_client(url) as client:
            ok = data(await client.call_tool("record", {"observations": [
                {"entity": "Sarah Chen", "text": "Prefers email over calls"}]}))
            bad = error(await client.call_tool("record", {"observations": [
                {"entity": "Sarah Chen", "text": "Close to [[Perch]]"}]}))
            return ok, bad

    with http_server(sample, "--profile", "record") as (url, _):
        ok, bad = anyio.run(run, url)
    page = (sample / "people" / "Sarah Chen.md").read_text(encoding="utf-8")
    assert ok["facts"] and "Prefers email over calls" in page
    assert "Close to [[Perch]]" not in page
    assert "error" in bad


def test_a_client_that_leaves_mid_call_cuts_nothing(sample: Path) -> None:
    """stdio: the request is sent and stdin closed at once; HTTP: the socket is closed before
    the answer. The call completes whole or not at all, and the server keeps serving."""
    texts = [f"left-mid-call observation {i}" for i in range(40)]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "record", "arguments": {"observations": [
            {"entity": "Sarah Chen", "text": t} for t in texts]}}}
    hello = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    proc = subprocess.Popen([KENNING, "-C", str(sample), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, **ENV})
    assert proc.stdin is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in [*hello, call]))
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    page = (sample / "people" / "Sarah Chen.md").read_text(encoding="utf-8")
    present = [t in page for t in texts]
    assert all(present) or not any(present)

    body = json.dumps({**call, "params": {**call["params"], "arguments": {"observations": [
        {"entity": "Kestrel Labs", "text": t} for t in texts]}}}).encode()

    async def check(url: str) -> Any:
        async with http_client(url) as client:
            return data(await client.call_tool("recall", {"entity": "Kestrel Labs"}))

    with http_server(sample, "--profile", "record") as (url, _):
        host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: " + f"{host}:{port}".encode()
                         + b"\r\nContent-Type: application/json\r\nAccept: application/json, "
                         b"text/event-stream\r\nContent-Length: " + str(len(body)).encode()
                         + b"\r\n\r\n" + body)
        answer = anyio.run(check, url)
    assert answer["title"] == "Kestrel Labs"
    org = (sample / "organizations" / "Kestrel Labs.md").read_text(encoding="utf-8")
    present = [t in org for t in texts]
    assert all(present) or not any(present)
    assert not list(sample.rglob(".*.tmp"))


def test_a_persons_own_note_is_never_edited_through_mcp(sample: Path) -> None:
    zettel = sample / "Hannah Berg.md"
    zettel.write_text("Hannah Berg works on category theory.\n", encoding="utf-8")
    typed = sample / "organizations" / "Kestrel Labs.md"
    before = {p: p.read_bytes() for p in (zettel, typed)}

    async def run() -> dict[str, Any]:
        async with stdio(sample, "full") as client:
            call = client.call_tool
            tools = {t.name: t.description for t in (await client.list_tools()).tools}
            got: dict[str, Any] = {"tools": tools}
            data(await call("index", {}))  # the note was written after the last index
            got["to"] = data(await call("record", {
                "entities": [{"name": "Dana Ruiz", "type": "person"}],
                "relations": [{"from": "Dana Ruiz", "rel": "advises", "to": "Hannah Berg"},
                              {"from": "Dana Ruiz", "rel": "works_at", "to": "Kestrel Labs"}]}))
            got["from"] = data(await call("record", {"relations": [
                {"from": "Hannah Berg", "rel": "advises", "to": "Dana Ruiz"}]}))
            got["obs"] = error(await call("record", {"observations": [
                {"entity": "Hannah Berg", "text": "Moved to Bergen"}]}))
            got["delete"] = error(await call("delete", {"ref": "Hannah Berg"}))
            return got

    got = anyio.run(run)
    assert {p: p.read_bytes() for p in (zettel, typed)} == before  # no `updated:`, nothing
    assert "never edited" in got["tools"]["record"]
    assert "Kenning created" in got["tools"]["delete"]
    dana = got["to"]["created"][0]
    assert "[[Hannah Berg]]" in (sample / dana).read_text(encoding="utf-8")
    assert got["from"]["links"][0]["stored"] == ".kenning/manual-links.jsonl"
    assert "Hannah Berg.md is a note of yours" in got["obs"]
    assert "never deletes a person's note" in got["delete"]
