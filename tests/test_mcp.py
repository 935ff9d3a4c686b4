"""The MCP server, for real: an SDK client against `kenning serve` as a subprocess, over stdio
and over streamable HTTP on a free loopback port. Profiles, annotations, every read tool,
resources, prompts, the trust boundary, tokens, size and rate limits, bad input."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from kenning import vocabulary
from kenning.api import Vault
from kenning.cli import main
from kenning.serve import trust
from kenning.serve.tools import offered
from kenning.serve.trust import Caller, TokenBucket

KENNING = str(Path(sys.executable).parent / "kenning")
ENV = {"KENNING_EMBEDDINGS": "none"}


@pytest.fixture
def sample(sample_vault: Vault) -> Path:
    sample_vault.index(embed=False)
    sample_vault.close()
    return sample_vault.root


def stdio(root: Path, profile: str = "record") -> Any:
    from mcp import Client, StdioServerParameters

    return Client(StdioServerParameters(
        command=KENNING, args=["-C", str(root), "serve", "--profile", profile], env=ENV))


@contextmanager
def http_server(root: Path, *args: str, env: dict[str, str] | None = None
                ) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`kenning serve --http --port 0 …` in a subprocess; yields its URL (read from stderr)."""
    proc = subprocess.Popen(
        [KENNING, "-C", str(root), "serve", "--http", "--port", "0", *args],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, **ENV, **(env or {})})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert " at http://" in line, line + proc.stderr.read()
        url = line.rsplit(" at ", 1)[1].strip().replace("//0.0.0.0:", "//127.0.0.1:")
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def http_client(url: str, token: str | None = None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if token is None:
        return Client(url)
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=client))


def post(url: str, body: bytes, headers: dict[str, str] | None = None
         ) -> tuple[int, bytes]:
    """One raw HTTP POST (no MCP client), for the transport's own answers."""
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", "/mcp", body=body, headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream", **(headers or {})})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def data(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def error(result: Any) -> str:
    assert result.is_error, result.content[0].text[:300]
    return result.content[0].text


# -- profiles, annotations, schemas ----------------------------------------------------------


READ_TOOLS = {"search", "recall", "page", "graph"}
WRITE_TOOLS = {"record", "decide", "revise", "retain", "session_close"}


def test_profiles_list_their_tools_with_annotations(sample: Path) -> None:
    async def run() -> dict[str, list[Any]]:
        out = {}
        for profile in ("recall", "record", "full"):
            async with stdio(sample, profile) as client:
                out[profile] = (await client.list_tools()).tools
        return out

    listed = anyio.run(run)
    names = {p: {t.name for t in tools} for p, tools in listed.items()}
    local = Caller("stdio", True)
    for profile in names:
        assert names[profile] == {t.name for t in offered(profile, local)}
    assert names["recall"] == READ_TOOLS | {"session_start"}
    assert names["record"] - names["recall"] == WRITE_TOOLS
    assert names["full"] - names["record"] == {"link", "delete", "reflect", "index"}
    for tools in listed.values():
        for tool in tools:
            a = tool.annotations
            assert a is not None and a.open_world_hint is False, tool.name
            assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
            assert a.read_only_hint == (tool.name in READ_TOOLS | {"session_start"}), tool.name
            assert len(tool.description or "") <= 160, tool.name
            assert tool.input_schema["type"] == "object"
    full = {t.name: t for t in listed["full"]}
    assert full["search"].input_schema["properties"]["types"]["items"]["enum"] == list(
        vocabulary.ENTITY_TYPES)
    assert full["search"].input_schema["properties"]["domains"]["items"]["enum"] == list(
        vocabulary.DOMAINS)
    assert full["graph"].input_schema["properties"]["rels"]["items"]["enum"] == list(
        vocabulary.RELATION_TYPES)
    assert full["link"].annotations.destructive_hint is True


def test_every_read_tool_resource_and_prompt_over_stdio(sample: Path) -> None:
    async def run() -> dict[str, Any]:
        async with stdio(sample, "recall") as client:
            got: dict[str, Any] = {}
            got["search"] = data(await client.call_tool(
                "search", {"query": "caching", "types": ["adr"], "limit": 3}))
            got["recall"] = data(await client.call_tool("recall", {"entity": "Sarah"}))
            got["fields"] = data(await client.call_tool("page", {"ref": "Sarah Chen"}))
            got["markdown"] = data(await client.call_tool(
                "page", {"ref": "people/Sarah Chen.md", "format": "markdown"}))
            got["neighbors"] = data(await client.call_tool(
                "graph", {"op": "neighbors", "ref": "Sarah Chen", "limit": 2}))
            got["backlinks"] = data(await client.call_tool(
                "graph", {"op": "backlinks", "ref": "Kestrel Labs"}))
            got["traverse"] = data(await client.call_tool(
                "graph", {"op": "traverse", "ref": "Sarah Chen", "depth": 9}))
            got["path"] = data(await client.call_tool(
                "graph", {"op": "path", "ref": "Sarah Chen", "to": "Kestrel Labs"}))
            got["orphans"] = data(await client.call_tool("graph", {"op": "orphans"}))
            got["resources"] = (await client.list_resources()).resources
            got["templates"] = (await client.list_resource_templates()).resource_templates
            got["memory"] = (await client.read_resource("kenning://page/memory.md")).contents
            got["page_res"] = (await client.read_resource(
                "kenning://page/people/Sarah%20Chen.md")).contents
            got["prompts"] = (await client.list_prompts()).prompts
            got["start"] = await client.get_prompt("session-start", {"project": "Replay"})
            got["close"] = await client.get_prompt("session-close", {})
            return got

    got = anyio.run(run)
    # search: the vocabulary synonym "adr" was folded to decision, results are cited
    assert got["search"]["results"], got["search"]
    assert all(r["type"] == "decision" for r in got["search"]["results"])
    assert all("#L" in h["citation"] for r in got["search"]["results"] for h in r["hits"])
    assert got["recall"]["path"] == "people/Sarah Chen.md" and got["recall"]["facts"]
    from kenning.recall import activity

    assert "people/Sarah Chen.md" in activity.last_recalled(sample)  # a local caller counts
    assert got["fields"]["title"] == "Sarah Chen" and got["fields"]["links_out"]
    on_disk = (sample / "people" / "Sarah Chen.md").read_text(encoding="utf-8")
    assert got["markdown"]["text"] == on_disk
    assert len(got["neighbors"]["edges"]) == 2 and "truncated" in got["neighbors"]
    assert got["backlinks"]["edges"]
    assert got["traverse"]["depth"] == trust.MAX_DEPTH
    assert any("depth 9 clamped to 4" in n for n in got["traverse"]["notes"])
    assert got["path"]["path"][0]["path"] == "people/Sarah Chen.md"
    assert got["path"]["path"][-1]["path"] == "organizations/Kestrel Labs.md"
    assert isinstance(got["orphans"]["nodes"], list)
    assert [r.uri for r in got["resources"]] == ["kenning://page/memory.md"]
    assert got["templates"][0].uri_template == "kenning://page/{path}"
    assert got["memory"][0].text == (sample / "memory.md").read_text(encoding="utf-8")
    assert got["page_res"][0].text == on_disk
    assert {p.name for p in got["prompts"]} == {"session-start", "session-close"}
    assert "Core memory" in got["start"].messages[0].content.text
    assert "read-only" in got["close"].messages[0].content.text


def test_bad_input_gets_clear_errors_and_the_server_keeps_serving(sample: Path,
                                                                  tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nnot for agents\n", encoding="utf-8")
    (sample / "people" / "leak.md").symlink_to(outside)
    before = {p: p.read_bytes() for p in sample.rglob("*.md") if not p.is_symlink()}

    async def run() -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        async with stdio(sample, "full") as client:
            got: dict[str, Any] = {}
            call = client.call_tool
            got["enum"] = error(await call("search", {"query": "x", "types": ["spaceship"]}))
            got["extra"] = error(await call("search", {"query": "x", "bogus": 1}))
            got["missing"] = error(await call("graph", {"op": "traverse"}))
            got["nul"] = error(await call("recall", {"entity": "Sarah\x00Chen"}))
            got["dotdot"] = error(await call("page", {"ref": "../secret.md"}))
            got["absolute"] = error(await call("page", {"ref": str(outside)}))
            got["symlink"] = error(await call("page", {"ref": "people/leak.md"}))
            got["folder"] = error(await call("search", {"query": "x", "folders": ["../"]}))
            got["date"] = error(await call("search", {"query": "x", "since": "last week"}))
            got["huge"] = error(await call("search", {"query": "x" * 10_100_000}))
            got["unknown"] = error(await call("teleport", {}))
            for uri in ("kenning://page/../secret.md", "kenning://page/%2e%2e/secret.md",
                        "kenning://page/people/leak.md", "kenning://page/.kenning/config.yaml",
                        "file:///etc/passwd"):
                try:
                    await client.read_resource(uri)
                    got[uri] = "read"
                except MCPError as exc:
                    got[uri] = exc.message
            got["after"] = data(await call("recall", {"entity": "Sarah Chen"}))
            return got

    got = anyio.run(run)
    assert "'spaceship' is not one of" in got["enum"] and "organization" in got["enum"]
    assert "'bogus' was unexpected" in got["extra"]
    assert "ref: required for op=traverse" in got["missing"]
    assert "NUL byte" in got["nul"]
    assert "'..'" in got["dotdot"]
    assert "relative to the vault" in got["absolute"]
    assert "outside the vault" in got["symlink"]
    assert "folder inside the vault" in got["folder"]
    assert "YYYY-MM-DD" in got["date"]
    assert "10,000,000-byte limit" in got["huge"]
    assert "unknown tool 'teleport'" in got["unknown"]
    for uri in ("kenning://page/../secret.md", "kenning://page/%2e%2e/secret.md"):
        assert "'..'" in got[uri]
    assert "outside the vault" in got["kenning://page/people/leak.md"]
    assert "never pages of the vault" in got["kenning://page/.kenning/config.yaml"]
    assert "unknown resource" in got["file:///etc/passwd"]
    assert got["after"]["title"] == "Sarah Chen"
    assert {p: p.read_bytes() for p in before} == before


def test_malformed_json_rpc_over_stdio_gets_an_error_and_serving_goes_on(sample: Path) -> None:
    lines = [
        "this is not json",
        '{"jsonrpc": "2.0", "weird": true}',
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
    proc = subprocess.Popen([KENNING, "-C", str(sample), "serve", "--profile", "recall"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, **ENV})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(4)]
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert replies[0]["error"]["code"] == -32700 and replies[0]["id"] is None
    assert replies[1]["error"]["code"] == -32600
    assert replies[2]["id"] == 1 and "capabilities" in replies[2]["result"]
    assert replies[3]["id"] == 2
    assert {t["name"] for t in replies[3]["result"]["tools"]} >= READ_TOOLS


# -- HTTP: trust boundary, token, limits -----------------------------------------------------


def test_http_callers_are_remote_no_delete_no_link(sample: Path) -> None:
    links = sample / ".kenning" / "manual-links.jsonl"

    async def run(url: str) -> dict[str, Any]:
        async with http_client(url) as client:
            got: dict[str, Any] = {"tools": {t.name for t in (await client.list_tools()).tools}}
            got["link"] = error(await client.call_tool(
                "link", {"from": "Sarah Chen", "rel": "advises", "to": "Kestrel Labs"}))
            got["delete"] = error(await client.call_tool("delete", {"ref": "Sarah Chen"}))
            got["dotdot"] = error(await client.call_tool("page", {"ref": "../../etc/passwd"}))
            got["recall"] = data(await client.call_tool("recall", {"entity": "Sarah Chen"}))
            return got

    with http_server(sample, "--profile", "full") as (url, _):
        got = anyio.run(run, url)
    assert "link" not in got["tools"] and "delete" not in got["tools"]
    assert READ_TOOLS | {"index"} <= got["tools"]
    assert "not available to remote callers" in got["link"]
    assert "not available to remote callers" in got["delete"]
    assert "'..'" in got["dotdot"]
    assert got["recall"]["title"] == "Sarah Chen"
    assert not links.exists()
    from kenning.recall import activity

    assert "people/Sarah Chen.md" not in activity.last_recalled(sample)  # ranking untouched
    assert (sample / "people" / "Sarah Chen.md").exists()


def test_trusted_http_may_link(sample: Path) -> None:
    async def run(url: str) -> tuple[set[str], Any]:
        async with http_client(url) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, data(await client.call_tool(
                "link", {"from": "Sarah Chen", "rel": "advisor_to", "to": "Kestrel Labs"}))

    with http_server(sample, "--profile", "full", "--trust-http") as (url, _):
        tools, linked = anyio.run(run, url)
    assert "link" in tools
    assert linked["rel"] == "advises"  # folded from the synonym advisor_to
    entries = (sample / ".kenning" / "manual-links.jsonl").read_text().splitlines()
    assert json.loads(entries[-1])["dst"] == "organizations/Kestrel Labs.md"


def test_non_loopback_bind_needs_a_token(sample: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KENNING_MCP_TOKEN"}
    done = subprocess.run([KENNING, "-C", str(sample), "serve", "--http", "--host", "0.0.0.0",
                           "--port", "0"], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in done.stderr
    assert "KENNING_MCP_TOKEN" in done.stderr
    unset = subprocess.run([KENNING, "-C", str(sample), "serve", "--http", "--token-env",
                            "NO_SUCH_VARIABLE_X"], capture_output=True, text=True, env=env,
                           timeout=30)
    assert unset.returncode == 2 and "NO_SUCH_VARIABLE_X" in unset.stderr


def test_bearer_token_is_checked_on_every_request(sample: Path) -> None:
    token = "s3cret-" + "x" * 32

    async def run(url: str) -> Any:
        async with http_client(url, token) as client:
            return data(await client.call_tool("search", {"query": "Horizon"}))

    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    # Off loopback (all interfaces) with the token; the test connects through 127.0.0.1.
    with http_server(sample, "--host", "0.0.0.0", "--token-env", "MY_TOKEN",
                     env={"MY_TOKEN": token}) as (url, _):
        none = post(url, init)
        wrong = post(url, init, {"Authorization": "Bearer nope"})
        basic = post(url, init, {"Authorization": f"Basic {token}"})
        found = anyio.run(run, url)
    assert none[0] == wrong[0] == basic[0] == 401
    assert b"bearer token" in none[1]
    assert found["results"]


def test_http_size_and_rate_limits_and_malformed_json(sample: Path) -> None:
    async def run(url: str) -> Any:
        async with http_client(url) as client:
            return data(await client.call_tool("recall", {"entity": "Sarah Chen"}))

    import time

    # 4 requests a second, bursts of 8: 40 requests sent in well under 5 s get 429s.
    with http_server(sample, "--profile", "recall", "--rate", "4", "--burst", "8") as (url, _):
        big = post(url, b'{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"'
                   + b"a" * (trust.MAX_BODY_BYTES + 10) + b'"}')
        broken = post(url, b'{"jsonrpc": "2.0", "id": 1, "method": ')
        statuses = [post(url, b"{}")[0] for _ in range(40)]
        time.sleep(2.5)  # the bucket refills
        after = anyio.run(run, url)
    assert big[0] == 413
    assert broken[0] == 400 and json.loads(broken[1])["error"]["code"] == -32700
    assert 429 not in statuses[:6]
    assert statuses.count(429) >= 10
    assert after["title"] == "Sarah Chen"


def test_token_bucket_refills() -> None:
    bucket = TokenBucket(rate=2.0, burst=3)
    assert [bucket.take("a", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("a", now=0.0) == pytest.approx(0.5)
    assert bucket.take("b", now=0.0) == 0.0  # per client
    assert bucket.take("a", now=0.6) == 0.0
    assert trust.is_loopback("127.0.0.1") and trust.is_loopback("::1")
    assert trust.is_loopback("localhost") and not trust.is_loopback("0.0.0.0")
    assert not trust.is_loopback("192.168.1.5")


# -- mcp-config ------------------------------------------------------------------------------


def test_mcp_config_prints_exact_registrations(sample: Path) -> None:
    runner = CliRunner()
    exe = str(Path(KENNING).resolve())
    claude = runner.invoke(main, ["-C", str(sample), "mcp-config", "claude"])
    assert claude.exit_code == 0, claude.output
    line = claude.stdout.strip()
    assert line.startswith("claude mcp add --scope user kenning -- ")
    assert f" -C {sample.resolve()} serve --profile record" in line
    assert line.split(" -- ", 1)[1].split(" ")[0] == exe

    cursor = runner.invoke(main, ["-C", str(sample), "mcp-config", "cursor", "--profile",
                                  "recall"])
    entry = json.loads(cursor.stdout)["mcpServers"]["kenning"]
    assert entry == {"command": exe, "args": ["-C", str(sample.resolve()), "serve",
                                              "--profile", "recall"]}
    assert "mcp.json" in cursor.stderr

    vscode = runner.invoke(main, ["-C", str(sample), "mcp-config", "vscode"])
    assert json.loads(vscode.stdout)["servers"]["kenning"]["type"] == "stdio"
    codex = runner.invoke(main, ["-C", str(sample), "mcp-config", "codex", "--name", "mem"])
    assert codex.stdout.startswith("codex mcp add mem -- ")
    bad = runner.invoke(main, ["-C", str(sample), "mcp-config", "emacs"])
    assert bad.exit_code == 2
