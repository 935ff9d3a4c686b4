"""The PostgreSQL the tests use is real: pgvector with HNSW, crash recovery after kill -9, and a
streaming replica from the same binaries (tests/pg_harness.py)."""

from __future__ import annotations

import random

import psycopg
import pytest
from pg_harness import PgServer


def _vector(rnd: random.Random, dims: int = 8) -> str:
    return "[" + ",".join(f"{rnd.gauss(0, 1):.5f}" for _ in range(dims)) + "]"


def test_session_server_has_pgvector_hnsw_and_utf8(pg_server: PgServer, pg_schema: str) -> None:
    with pg_server.connect() as conn:
        assert conn.execute("SHOW server_encoding").fetchone() == ("UTF8",)
        assert conn.execute("SELECT datcollate FROM pg_database "
                            "WHERE datname = current_database()").fetchone() == ("C",)
        assert conn.execute("SELECT extname FROM pg_extension WHERE extname = 'vector'"
                            ).fetchone() == ("vector",)
        conn.execute(f"CREATE SCHEMA {pg_schema}")
        conn.execute(f"SET search_path = {pg_schema}, public")
        conn.execute("CREATE TABLE v (id int PRIMARY KEY, e vector(8))")
        rnd = random.Random(7)
        rows = [(i, _vector(rnd)) for i in range(300)]
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO v VALUES (%s, %s::vector)", rows)
        conn.execute("CREATE INDEX ON v USING hnsw (e vector_cosine_ops)")
        conn.execute("SET enable_seqscan = off")
        plan = " ".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT id FROM v ORDER BY e <=> %s::vector LIMIT 5", (rows[3][1],)))
        assert "v_e_idx" in plan
        nearest = conn.execute("SELECT id FROM v ORDER BY e <=> %s::vector LIMIT 1",
                               (rows[3][1],)).fetchone()
        assert nearest == (3,)
        # Japanese text round-trips (UTF-8 end to end).
        assert conn.execute("SELECT %s::text", ("第3回定例会議",)).fetchone() == ("第3回定例会議",)


def test_pg_url_names_a_fresh_schema(pg_server: PgServer, pg_url: str, pg_schema: str) -> None:
    assert pg_url.endswith(f"?schema={pg_schema}")
    assert pg_url.startswith(f"postgresql://kenning@127.0.0.1:{pg_server.port}/kenning")
    assert not pg_server.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (pg_schema,))


def test_kill_9_loses_only_the_uncommitted_and_restart_recovers(pg_cluster: PgServer) -> None:
    pg_cluster.execute("DROP TABLE IF EXISTS crash; CREATE TABLE crash (id int PRIMARY KEY)")
    pg_cluster.execute("INSERT INTO crash SELECT generate_series(1, 100)")
    open_tx = pg_cluster.connect()
    open_tx.autocommit = False
    open_tx.execute("INSERT INTO crash VALUES (101)")
    pid = pg_cluster.pid
    pg_cluster.kill()
    assert not pg_cluster.running()
    with pytest.raises(psycopg.OperationalError):
        open_tx.execute("SELECT 1")
    open_tx.close()
    pg_cluster.start()
    assert pg_cluster.pid != pid
    assert pg_cluster.execute("SELECT count(*), max(id) FROM crash") == [(100, 100)]
    pg_cluster.restart()
    assert pg_cluster.execute("SELECT count(*) FROM crash") == [(100,)]


def test_streaming_replica_follows_the_primary_and_refuses_writes(pg_cluster: PgServer) -> None:
    pg_cluster.execute("DROP TABLE IF EXISTS follow; CREATE TABLE follow (id int)")
    replica = pg_cluster.start_replica()
    try:
        assert replica.execute("SELECT pg_is_in_recovery()") == [(True,)]
        assert replica.port != pg_cluster.port
        pg_cluster.execute("INSERT INTO follow SELECT generate_series(1, 50)")
        pg_cluster.wait_caught_up(replica)
        assert replica.execute("SELECT count(*) FROM follow") == [(50,)]
        assert pg_cluster.execute("SELECT state FROM pg_stat_replication") == [("streaming",)]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            replica.execute("INSERT INTO follow VALUES (0)")
    finally:
        replica.destroy()
