"""The PostgreSQL backend against a real server (tests/pg_harness.py): SQL translation,
transactions, retries after a dropped connection or a lost commit acknowledgement, advisory
locks and migrations from two processes, the one-line errors, full-text search, vectors."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kenning.errors import IndexBusy, KenningError
from kenning.index.cjk import cjk_column
from kenning.index.store import postgres_schema
from kenning.index.store.base import LEXICAL_WEIGHTS, TextQuery
from kenning.index.store.postgres import (
    PostgresStore,
    TransientWriteError,
    parse_url,
    translate,
)

SRC = str(Path(__file__).resolve().parents[1] / "src")




@pytest.fixture
def store(tmp_path: Path, pg_url: str):
    s = PostgresStore(tmp_path, pg_url, retry_seconds=20)
    yield s
    s.close()


def _file(store: PostgresStore, path: str) -> int:
    return store.insert("INSERT INTO files(path, size, mtime_ns, hash, status)"
                        " VALUES (?, ?, ?, ?, ?)", (path, 1, 2**62, "h", "ok"))


def _page(store: PostgresStore, path: str, title: str, chunks: list[tuple[str, str]]) -> list[int]:
    """A file, a page and its chunks with their full-text rows; the chunk ids."""
    with store.transaction():
        fid = _file(store, path)
        store.run("INSERT INTO pages(id, path, title, folder, summary, frontmatter, lines)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?)", (fid, path, title, "", "", "{}", 9))
        ids = []
        for n, (heading, body) in enumerate(chunks):
            cid = store.insert("INSERT INTO chunks(page_id, ord, heading, start_line, end_line,"
                               " words, text_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               (fid, n, heading, n + 1, n + 1, 5, f"{path}#{n}"))
            cjk = "\n".join(filter(None, (cjk_column(title), cjk_column(body))))
            store.run("INSERT INTO chunks_fts(rowid, title, heading, body, cjk)"
                      " VALUES (?, ?, ?, ?, ?)", (cid, title, heading, body, cjk))
            ids.append(cid)
    return ids


def _backends(store: PostgresStore) -> list[int]:
    """Server pids of this store's sessions."""
    return [r[0] for r in store.rows("SELECT pid FROM pg_stat_activity WHERE application_name"
                                     " = ? AND pid <> pg_backend_pid()", (store._app,))]


def _terminate(pg_server, store: PostgresStore) -> int:
    rows = pg_server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                             " WHERE application_name = %s", (store._app,))
    return len(rows)


# -- translation -------------------------------------------------------------------------------

def test_translate_placeholders_percent_and_literals():
    assert translate("SELECT a FROM t WHERE b = ? AND c LIKE ?") == \
        "SELECT a FROM t WHERE b = %s AND c LIKE %s"
    assert translate("SELECT '?', 'a%b', x % 2 FROM t WHERE y = ?") == \
        "SELECT '?', 'a%%b', x %% 2 FROM t WHERE y = %s"
    assert translate("SELECT 'it''s ?' -- what?\n, \"col?\" FROM t WHERE z = ?") == \
        "SELECT 'it''s ?' -- what?\n, \"col?\" FROM t WHERE z = %s"
    assert translate("SELECT /* ? */ 1") == "SELECT /* ? */ 1"
    assert translate("SELECT ?") is translate("SELECT ?")  # cached


def test_url_schema_parameter_is_stripped_and_default_schema_is_stable(tmp_path: Path):
    target = parse_url(tmp_path, "postgresql://u:secret@db.example:6543/team?schema=notes"
                                 "&sslmode=disable")
    assert target.schema == "notes"
    assert "schema=" not in target.url and "sslmode=disable" in target.url
    assert "secret" not in target.describe() and "notes" in target.describe()
    first = parse_url(tmp_path, "postgresql://u@h/db").schema
    assert first.startswith("kenning_") and parse_url(tmp_path, "postgresql://u@h/db").schema \
        == first
    assert parse_url(tmp_path / "other", "postgresql://u@h/db").schema != first
    with pytest.raises(KenningError, match="schema"):
        parse_url(tmp_path, "postgresql://u@h/db?schema=Bad-Name")


# -- primitives and transactions ---------------------------------------------------------------

def test_primitives_round_trip(store: PostgresStore):
    assert store.schema_version() == postgres_schema.SCHEMA_VERSION
    with store.transaction():
        fid = _file(store, "a%b?.md")
    assert fid > 0
    assert store.one("SELECT path, size, mtime_ns FROM files WHERE id = ?", (fid,)) == \
        ("a%b?.md", 1, 2**62)
    assert store.scalar("SELECT count(*) FROM files WHERE path LIKE 'a%'") == 1
    store.many("INSERT INTO dirty_names(norm) VALUES (?) ON CONFLICT (norm) DO NOTHING",
               [("x",), ("y",), ("x",)])
    assert store.rows("SELECT norm FROM dirty_names ORDER BY norm") == [("x",), ("y",)]
    assert store.run("DELETE FROM dirty_names WHERE norm = ?", ("x",)) == 1
    assert list(store.stream("SELECT norm FROM dirty_names", size=1)) == [("y",)]
    store.set_meta("k", "v")
    store.set_meta("k", "w")
    assert store.get_meta("k") == "w"
    # A bool binds as an integer 0/1, as portable SQL stores booleans.
    store.run("UPDATE files SET size = ? WHERE id = ?", (True, fid))
    assert store.scalar("SELECT size FROM files WHERE id = ?", (fid,)) == 1
    assert store.insert("INSERT INTO dirty_names(norm) VALUES (?) ON CONFLICT (norm) DO NOTHING"
                        " RETURNING 0", ("y",)) == 0


def test_transaction_is_reentrant_thread_bound_and_rolls_back(store: PostgresStore):
    seen_elsewhere: list[int] = []
    with store.transaction():
        _file(store, "a.md")
        with store.transaction():
            _file(store, "b.md")
            assert store.in_transaction
        # Another thread reads on its own connection: the open transaction is invisible to it.
        worker = threading.Thread(target=lambda: seen_elsewhere.append(
            store.scalar("SELECT count(*) FROM files")))
        worker.start()
        worker.join()
        assert store.scalar("SELECT count(*) FROM files") == 2
    assert seen_elsewhere == [0]
    assert not store.in_transaction
    with pytest.raises(RuntimeError), store.transaction():
        _file(store, "c.md")
        with store.transaction():
            _file(store, "d.md")
            raise RuntimeError("boom")
    assert store.scalar("SELECT count(*) FROM files") == 2


def test_change_token_moves_when_another_process_commits(store: PostgresStore, tmp_path: Path,
                                                         pg_url: str):
    other = PostgresStore(tmp_path, pg_url)
    try:
        before = store.change_token()
        assert store.change_token() == before
        with other.transaction():
            _file(other, "x.md")
        assert store.change_token() != before
        before = store.change_token()
        other.rows("SELECT * FROM files")  # a read changes nothing
        assert store.change_token() == before
    finally:
        other.close()


# -- retries -----------------------------------------------------------------------------------

def test_read_retries_after_its_connections_are_terminated(store: PostgresStore, pg_server):
    with store.transaction():
        _file(store, "a.md")
    assert _terminate(pg_server, store) >= 1
    assert store.scalar("SELECT count(*) FROM files") == 1


def test_write_transaction_replays_after_its_connection_is_terminated(store: PostgresStore,
                                                                      pg_server):
    with store.transaction():
        first = _file(store, "a.md")
        assert store.scalar("SELECT count(*) FROM files") == 1
        assert _terminate(pg_server, store) >= 1
        second = _file(store, "b.md")  # the connection is gone: replayed, then run
        store.run("INSERT INTO pages(id, path, title, folder, summary, frontmatter, lines)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?)", (first, "a.md", "A", "", "", "{}", 1))
    rows = store.rows("SELECT id, path FROM files ORDER BY id")
    assert rows == [(first, "a.md"), (second, "b.md")]  # each once, with the ids seen
    assert store.scalar("SELECT count(*) FROM pages WHERE id = ?", (first,)) == 1


def test_a_replay_moves_the_sequence_past_the_ids_it_kept(store: PostgresStore, pg_server):
    """A server crash can lose a sequence's advance while the replay keeps the ids the caller
    saw: the next insert must not take one of them (a duplicate key after kill -9)."""
    with store.transaction():
        first = _file(store, "a.md")
        assert _terminate(pg_server, store) >= 1
        # What a crash does to the sequence: back to before the id the caller holds.
        pg_server.execute(f"SELECT setval(pg_get_serial_sequence('{store.schema}.files', 'id'),"
                          " %s, false)", (first,))
        second = _file(store, "b.md")  # replays a.md with its id, then runs
    assert second != first
    third = _file(store, "c.md")
    rows = store.rows("SELECT id, path FROM files ORDER BY id")
    assert rows == [(first, "a.md"), (second, "b.md"), (third, "c.md")]


def test_replay_refuses_when_the_data_changed_meanwhile(store: PostgresStore, pg_server,
                                                        tmp_path: Path, pg_url: str):
    other = PostgresStore(tmp_path, pg_url)
    try:
        with pytest.raises(TransientWriteError), store.transaction():
            assert store.scalar("SELECT count(*) FROM files") == 0
            _file(store, "mine.md")
            _terminate(pg_server, store)
            with other.transaction():
                _file(other, "theirs.md")  # commits while the first transaction is gone
            _file(store, "mine-too.md")
        assert store.rows("SELECT path FROM files") == [("theirs.md",)]  # nothing of ours
    finally:
        other.close()


class _Relay:
    """A TCP relay in front of the server that, once, cuts the connection that sends the
    store's COMMIT: before passing it on, or after (the server commits, the answer is lost)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cut: str | None = None
        self.cuts = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.port))
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False),
                             daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                if upstream and self.cut and b"INSERT INTO kenning_commits" in data:
                    mode, self.cut = self.cut, None
                    self.cuts += 1
                    if mode == "after":
                        sink.sendall(data)
                        time.sleep(0.5)  # the server commits; its answer goes nowhere
                    for sock in (source, sink):
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)
                        sock.close()
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.close()

    def close(self) -> None:
        self.listener.close()


@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_lost_commit_is_neither_lost_nor_applied_twice(tmp_path: Path, pg_server,
                                                         pg_schema: str, mode: str):
    relay = _Relay(pg_server.port)
    url = f"postgresql://kenning@127.0.0.1:{relay.address[1]}/kenning?schema={pg_schema}"
    store = PostgresStore(tmp_path, url, retry_seconds=20)
    try:
        relay.cut = mode
        with store.transaction():
            store.run("INSERT INTO dirty_names(norm) VALUES (?)", ("once",))  # not idempotent
            store.insert("INSERT INTO files(path, size, mtime_ns, hash, status)"
                         " VALUES (?, ?, ?, ?, ?)", ("f.md", 1, 1, "h", "ok"))
        assert relay.cuts == 1
        assert store.rows("SELECT norm FROM dirty_names") == [("once",)]
        assert store.scalar("SELECT count(*) FROM files") == 1
        assert store.scalar("SELECT count(*) FROM kenning_commits") >= 1
    finally:
        store.close()
        relay.close()


def test_reads_and_writes_wait_out_a_server_restart(tmp_path: Path, pg_cluster):
    pg_cluster.create_database("restart")
    url = pg_cluster.url("restart", schema="r")
    store = PostgresStore(tmp_path, url, retry_seconds=60)
    try:
        with store.transaction():
            _file(store, "a.md")
        pg_cluster.stop()
        starter = threading.Timer(1.5, pg_cluster.start)
        starter.start()
        assert store.scalar("SELECT count(*) FROM files") == 1  # retried until it is back
        starter.join()
        pg_cluster.kill()
        threading.Timer(1.0, pg_cluster.start).start()
        with store.transaction():
            _file(store, "b.md")
        assert [r[0] for r in store.rows("SELECT path FROM files ORDER BY id")] == \
            ["a.md", "b.md"]
    finally:
        store.close()
        if not pg_cluster.running():
            pg_cluster.start()


# -- locks and migrations from several processes -----------------------------------------------

_HOLDER = """
import sys, time
from pathlib import Path
from kenning.index.store.postgres import PostgresStore
store = PostgresStore(Path(sys.argv[1]), sys.argv[2])
with store.writer_lock():
    print("locked", flush=True)
    time.sleep(120)
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_writer_lock_excludes_another_process_and_dies_with_it(store: PostgresStore,
                                                               tmp_path: Path, pg_url: str):
    holder = _python(_HOLDER, str(tmp_path), pg_url)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert store.lock_held()
        with pytest.raises(IndexBusy, match="another kenning process"), store.writer_lock():
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        with store.writer_lock(wait=20):
            assert store.lock_held()
        assert not store.lock_held()
    finally:
        if holder.poll() is None:
            holder.kill()


def test_vault_write_lock_is_separate_from_the_index_lock(store: PostgresStore):
    with store.writer_lock(), store.vault_write_lock():
        assert store.lock_held() and store.vault_lock_held()
    assert not store.vault_lock_held()


_OPENER = """
import sys, time
from pathlib import Path
from kenning.index.store.postgres import PostgresStore
while time.time() < float(sys.argv[3]):
    time.sleep(0.001)
store = PostgresStore(Path(sys.argv[1]), sys.argv[2])
print(store.schema_version(), flush=True)
store.close()
"""


def test_two_processes_migrating_at_once_apply_each_migration_once(tmp_path: Path, pg_url: str):
    start = str(time.time() + 1.5)
    procs = [_python(_OPENER, str(tmp_path), pg_url, start) for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == str(postgres_schema.SCHEMA_VERSION)
    store = PostgresStore(tmp_path, pg_url)
    try:
        assert store.rows("SELECT version, count(*) FROM schema_migrations GROUP BY version"
                          " ORDER BY version") == \
            [(n, 1) for n in range(1, postgres_schema.SCHEMA_VERSION + 1)]
    finally:
        store.close()


# -- one-line errors ---------------------------------------------------------------------------

def test_a_schema_from_a_newer_kenning_is_refused(store: PostgresStore, tmp_path: Path,
                                                  pg_url: str):
    store.run("INSERT INTO schema_migrations(version, name) VALUES (?, ?)", (99, "future"))
    with pytest.raises(KenningError, match=r"v99 .* newer than this Kenning") as info:
        PostgresStore(tmp_path, pg_url)
    assert "\n" not in str(info.value)


def test_a_database_without_pgvector_says_how_to_enable_it(tmp_path: Path, pg_server):
    pg_server.create_database("novector", vector=False)
    url = pg_server.create_role("plain", database="novector")
    with pytest.raises(KenningError, match="CREATE EXTENSION vector") as info:
        PostgresStore(tmp_path, url + "?schema=s")
    assert "\n" not in str(info.value)


def test_a_read_only_role_reads_but_may_not_write_or_create(store: PostgresStore, pg_server,
                                                            tmp_path: Path):
    with store.transaction():
        _file(store, "a.md")
    pg_server.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname ="
                      " 'reader') THEN CREATE ROLE reader LOGIN; END IF; END $$")
    pg_server.execute(f'GRANT USAGE ON SCHEMA "{store.schema}" TO reader')
    pg_server.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{store.schema}" TO reader')
    url = pg_server.url(user="reader", schema=store.schema)
    reader = PostgresStore(tmp_path, url, retry_seconds=2)
    try:
        assert reader.scalar("SELECT count(*) FROM files") == 1
        with pytest.raises(KenningError, match="may not") as info, reader.transaction():
            _file(reader, "b.md")
        assert "\n" not in str(info.value)
    finally:
        reader.close()
    with pytest.raises(KenningError, match="may not create the index"):
        PostgresStore(tmp_path, pg_server.url(user="reader", schema="fresh_ro"))


def test_a_wrong_url_is_one_line(tmp_path: Path):
    with pytest.raises(KenningError, match="cannot connect") as info:
        PostgresStore(tmp_path, f"postgresql://nobody@127.0.0.1:{_closed_port()}/x")
    assert "\n" not in str(info.value)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- full-text search --------------------------------------------------------------------------

def test_english_stemming_phrases_and_diacritics(store: PostgresStore):
    running, = _page(store, "run.md", "Running notes", [("Intro", "The cats were running fast")])
    cafe, = _page(store, "cafe.md", "Café life", [("Europe", "a naïve résumé of the cafés")])
    other, = _page(store, "other.md", "Other", [("Misc", "nothing to see here")])

    def ids(query) -> list[int]:
        return [r[0] for r in store.match_chunks(query)]

    assert ids(TextQuery(terms=("run",))) == [running]
    assert ids(TextQuery(terms=("cat",))) == [running]
    assert ids(TextQuery(terms=("the",))) == [running, cafe] or \
        sorted(ids(TextQuery(terms=("the",)))) == sorted([running, cafe])  # no stop words
    assert ids(TextQuery(phrases=("cats were",))) == [running]
    assert ids(TextQuery(phrases=("were cats",))) == []
    assert ids(TextQuery(terms=("cafe",))) == [cafe]
    assert ids(TextQuery(terms=("resume", "naive"), all_terms=True)) == [cafe]
    assert ids(TextQuery(terms=("resume", "cats"), all_terms=True)) == []
    assert set(ids(TextQuery(terms=("resume", "cats")))) == {cafe, running}
    assert ids(TextQuery(terms=("see",))) == [other]
    assert ids(TextQuery(terms=("see",)), ) == [r[0] for r in store.match_chunks(
        TextQuery(terms=("see",)), where=" AND p.title = ?", params=("Other",))]
    assert store.match_chunks(TextQuery(terms=("see",)), where=" AND p.title = ?",
                              params=("Nope",)) == []
    assert store.match_chunks(TextQuery()) == []
    counts = store.match_counts(["run", "cats were", "zzz"])
    assert counts == {"run": 1, "cats were": 1, "zzz": 0}


def test_japanese_matches_by_bigrams_as_on_sqlite(store: PostgresStore):
    minutes, = _page(store, "m.md", "議事録", [("定例", "定例会議の議事録を共有する")])
    _page(store, "e.md", "English", [("Intro", "no japanese here")])

    def ids(*words: str) -> list[int]:
        return [r[0] for r in store.match_chunks(TextQuery(cjk=words))]

    assert ids("会議") == [minutes]
    assert ids("議事録") == [minutes]
    assert ids("会") == [minutes]  # one character: a prefix of a bigram
    assert ids("録会") == []
    assert store.match_counts([], ["会議", "東京"]) == {"会議": 1, "東京": 0}


def test_ranking_follows_sqlite_bm25(store: PostgresStore, tmp_path: Path):
    """The same rows in FTS5 and here: the same matches and the same best one for each query,
    and mostly the same order (words without stemming differences, so both engines see the
    same tokens; the row length here counts distinct words, FTS5's counts all)."""
    docs = [
        ("Alpha", "intro", "alpha beta gamma"),
        ("Beta notes", "beta", "beta beta delta and more words around it"),
        ("Gamma", "alpha", "delta epsilon"),
        ("Delta", "misc", "alpha alpha alpha alpha with a much longer body than the others here"),
        ("Epsilon", "beta gamma", "zeta"),
        ("Zeta", "intro", "nothing relevant at all in this one"),
    ]
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE VIRTUAL TABLE f USING fts5(title, heading, body, cjk,"
                 " tokenize = 'porter unicode61 remove_diacritics 2')")
    for n, (title, heading, body) in enumerate(docs):
        cid, = _page(store, f"{n}.md", title, [(heading, body)])
        lite.execute("INSERT INTO f(rowid, title, heading, body, cjk) VALUES (?, ?, ?, ?, '')",
                     (cid, title, heading, body))
    w = tuple(LEXICAL_WEIGHTS[c] for c in ("title", "heading", "body", "cjk"))
    for terms in (("alpha",), ("beta",), ("delta",), ("alpha", "beta"), ("gamma", "delta")):
        expression = " OR ".join(f'{{title heading body}} : "{t}"' for t in terms)
        expected = [r[0] for r in lite.execute(
            "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f, ?, ?, ?, ?), rowid",
            (expression, *w))]
        got = store.match_chunks(TextQuery(terms=terms))
        order = [r[0] for r in got]
        assert sorted(order) == sorted(expected) and order[0] == expected[0], terms
        pairs = [(a, b) for i, a in enumerate(expected) for b in expected[i + 1:]]
        kept = sum(order.index(a) < order.index(b) for a, b in pairs)
        assert kept >= 0.8 * len(pairs), (terms, order, expected)
        scores = [r[4] for r in got]
        assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


# -- vectors -----------------------------------------------------------------------------------

def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_vectors_round_trip_and_hnsw_agrees_with_exact(store: PostgresStore):
    n, dim = 3000, 384
    vectors = _unit(n, dim, 7)
    with store.transaction():
        fid = _file(store, "v.md")
        store.run("INSERT INTO pages(id, path, title, folder, summary, frontmatter, lines)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?)", (fid, "v.md", "V", "", "", "{}", 1))
        store.many("INSERT INTO chunks(page_id, ord, heading, start_line, end_line, words,"
                   " text_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [(fid, i, "", 1, 1, 1, f"h{i}") for i in range(n)])
        store.put_vectors("m", dim, [(f"h{i}", vectors[i]) for i in range(n)])
    ids, got = store.chunk_vectors("m", dim)
    assert got.shape == (n, dim) and got.dtype == np.float32
    assert np.array_equal(got, vectors)  # float32 in, the same float32 out
    assert sum(len(b) for b in store.read_vectors(size=700)) == n
    assert store.scalar(f"SELECT count(*) FROM embeddings e WHERE {store.sound_vector()}",
                        (dim,)) == n
    by_hash = {int(i): int(i) - int(ids[0]) for i in ids}
    queries = _unit(20, dim, 8)
    agree = []
    for q in queries:
        exact = [int(ids[j]) for j in np.argsort(-(vectors @ q))[:10]]
        assert [c for c, _ in store.nearest_exact("m", dim, q, 10)] == exact
        assert [c for c, _ in store.nearest("m", dim, q, 10)] == exact  # small: a full scan
        store.HNSW_MIN_VECTORS = 0  # the index from here on
        approx = [c for c, _ in store.nearest("m", dim, q, 10)]
        store.HNSW_MIN_VECTORS = PostgresStore.HNSW_MIN_VECTORS
        agree.append(len(set(approx) & set(exact)) / 10)
    assert np.mean(agree) >= 0.9, agree
    allowed = [int(i) for i in ids[:50]]
    near = store.nearest("m", dim, vectors[by_hash[allowed[3]]], 5, allowed=allowed)
    assert near[0][0] == allowed[3] and abs(near[0][1] - 1.0) < 1e-5
    assert {c for c, _ in near} <= set(allowed)


def test_fresh_replaces_the_index_for_every_reader(store: PostgresStore, tmp_path: Path,
                                                   pg_url: str):
    with store.transaction():
        _file(store, "old.md")
    reader = PostgresStore(tmp_path, pg_url)
    try:
        token = reader.change_token()
        fresh = store.fresh()
        with fresh.transaction():
            _file(fresh, "new.md")
        assert reader.rows("SELECT path FROM files") == [("old.md",)]
        store.replace_with(fresh)
        assert store.rows("SELECT path FROM files") == [("new.md",)]
        assert reader.rows("SELECT path FROM files") == [("new.md",)]
        assert reader.change_token() != token
        store.discard_fresh()  # nothing left to drop
    finally:
        reader.close()


def test_non_ascii_words_are_kept_and_folded_in_a_c_locale_database(store: PostgresStore):
    """The test server's database has the C locale, where [[:alnum:]] and lower() know only
    ASCII: words in other scripts, ß and accented capitals must still be indexed, folded."""
    assert store.scalar("SELECT datctype FROM pg_database WHERE datname = current_database()") \
        in {"C", "POSIX"}
    chunk, = _page(store, "w.md", "ÉCOLE Straße", [("Москва", "meetings/2026-01-12 — “quoted”")])
    for word in ("ecole", "straße", "москва", "meetings", "2026", "quoted"):
        assert [r[0] for r in store.match_chunks(TextQuery(terms=(word,)))] == [chunk], word
    # FTS5 counts 8 tokens here (unicode61: runs of letters and digits); so does ntok.
    assert store.scalar("SELECT ntok FROM chunks_fts WHERE rowid = ?", (chunk,)) == 8
