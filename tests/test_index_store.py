"""The index layer on the storage seam: vectors carried between stores by text hash, the rebuild
dance (fresh → replace_with), migrations recorded in the database, and an unreadable index.

Real SQLite files on disk. The generic vector copy (what moves an index between backends) runs
here between two SQLite stores through ``kenning.index.store.copy``, the path PostgreSQL uses.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import write

from kenning.api import Vault
from kenning.errors import KenningError
from kenning.index import vectors
from kenning.index.store import open_store
from kenning.index.store import sqlite_schema as schema
from kenning.index.store.base import IndexDamaged
from kenning.index.store.copy import copy_vectors
from kenning.index.store.sqlite import SQLiteStore

DIM = 8


def unit(seed: int) -> np.ndarray:
    vec = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return vec / np.linalg.norm(vec)


def stored(store: SQLiteStore) -> dict[tuple[str, str], np.ndarray]:
    return {(model, digest): vec for batch in store.read_vectors()
            for model, digest, _, vec in batch}


@pytest.mark.parametrize("storage", ["float32", "int8"])
def test_the_generic_copy_carries_vectors_by_text_hash_and_keeps_what_is_there(
        tmp_path: Path, storage: str) -> None:
    src = SQLiteStore(tmp_path, tmp_path / "a.db")
    dst = SQLiteStore(tmp_path, tmp_path / "b.db")
    with src.transaction():
        src.put_vectors("m1", DIM, [(f"h{i}", unit(i)) for i in range(5)], storage)
        src.put_vectors("m2", DIM, [("h0", unit(99))], storage)
        # A truncated BLOB is not a vector: it is not carried.
        src.run("INSERT INTO embeddings(model, text_hash, dim, vector) VALUES (?, ?, ?, ?)",
                ("m1", "broken", DIM, b"\x00" * 5))
    with dst.transaction():
        dst.put_vectors("m1", DIM, [("h1", unit(1000))])  # already there: kept as it is
    version = dst.get_meta("vectors_version")

    assert copy_vectors(src, dst, storage) == 5  # h0, h2, h3, h4 of m1 and h0 of m2
    got = stored(dst)
    assert set(got) == {("m1", f"h{i}") for i in range(5)} | {("m2", "h0")}
    tolerance = 1e-6 if storage == "float32" else 0.02
    for i in (0, 2, 3, 4):
        assert np.abs(got[("m1", f"h{i}")] - unit(i)).max() < tolerance
    assert np.allclose(got[("m1", "h1")], unit(1000))
    assert np.abs(got[("m2", "h0")] - unit(99)).max() < tolerance
    assert dst.get_meta("vectors_version") != version  # cached matrices are rebuilt
    assert copy_vectors(src, dst, storage) == 0  # nothing new the second time
    src.close()
    dst.close()


def test_sqlite_to_sqlite_copy_takes_the_fast_path_with_the_same_result(tmp_path: Path) -> None:
    src = SQLiteStore(tmp_path, tmp_path / "a.db")
    with src.transaction():
        src.put_vectors("m", DIM, [(f"h{i}", unit(i)) for i in range(3)], "int8")
    fast, slow = (SQLiteStore(tmp_path, tmp_path / f"{n}.db") for n in ("fast", "slow"))
    assert fast.copy_vectors_from(src) == 3
    assert copy_vectors(src, slow, "int8") == 3
    blobs = {n: s.rows("SELECT text_hash, vector FROM embeddings ORDER BY text_hash")
             for n, s in (("fast", fast), ("slow", slow), ("src", src))}
    assert blobs["fast"] == blobs["src"]  # the BLOBs as they were
    assert [h for h, _ in blobs["slow"]] == [h for h, _ in blobs["src"]]
    for s in (src, fast, slow):
        s.close()


def test_chunk_vectors_reads_what_put_vectors_stored_row_for_row(vault: Vault) -> None:
    write(vault, "notes/a.md", "# A\n\nAlpha words about the harbour.\n")
    write(vault, "notes/b.md", "# B\n\nBeta words about the budget.\n")
    vault.index(embed=False)
    store = vault.store
    hashes = [h for (h,) in store.rows("SELECT DISTINCT text_hash FROM chunks"
                                       " WHERE text_hash IS NOT NULL ORDER BY text_hash")]
    assert len(hashes) >= 2
    with store.transaction():
        store.put_vectors("m", DIM, [(h, unit(i)) for i, h in enumerate(hashes)])
        store.set_meta("embed_dim", str(DIM))
    ids, matrix = store.chunk_vectors("m", DIM)
    by_chunk = dict(store.rows("SELECT id, text_hash FROM chunks WHERE text_hash IS NOT NULL"))
    assert ids.tolist() == sorted(by_chunk)
    for row, chunk_id in enumerate(ids.tolist()):
        assert np.allclose(matrix[row], unit(hashes.index(by_chunk[chunk_id])))
    assert vectors.coverage(store, "m", DIM) == (len(by_chunk), len(by_chunk))
    assert store.chunk_vectors("other", DIM)[0].size == 0


def test_replace_with_swaps_in_the_fresh_index_and_the_store_stays_usable(vault: Vault) -> None:
    write(vault, "notes/old.md", "# Old\n\nThe old harbour note.\n")
    vault.index(embed=False)
    store = vault.store
    other = open_store(vault.root)  # another reader, as a `kenning serve` holds one
    fresh = store.fresh()
    assert fresh.scalar("SELECT count(*) FROM pages") == 0
    with fresh.transaction():
        fresh.run("INSERT INTO meta(key, value) VALUES ('marker', 'new')")
    assert store.get_meta("marker") is None  # not yet
    with store.writer_lock():
        store.replace_with(fresh)
    assert store.get_meta("marker") == "new" and other.get_meta("marker") == "new"
    assert store.scalar("SELECT count(*) FROM pages") == 0
    assert not list(vault.root.glob(".kenning/*.rebuild*"))
    other.close()


def test_index_drops_what_a_killed_rebuild_left(vault: Vault) -> None:
    write(vault, "notes/a.md", "# A\n\nAlpha.\n")
    leftover = vault.store.fresh()
    leftover.close()
    assert list(vault.root.glob(".kenning/index.db.rebuild*"))
    assert vault.index(embed=False).added >= 1
    assert not list(vault.root.glob(".kenning/index.db.rebuild*"))


def test_rebuild_replaces_an_index_that_is_not_a_database(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    write(vault, "notes/a.md", "# Alpha\n\nThe harbour budget.\n")
    vault.index(embed=False)
    vault.close()
    path = schema.db_path(vault.root)
    path.write_bytes(b"this is not a database" * 300)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)

    broken = Vault(vault.root)
    with pytest.raises(IndexDamaged) as raised:
        broken.index(embed=False)
    message = str(raised.value)
    assert "\n" not in message and "kenning rebuild" in message and str(path) in message
    report = broken.rebuild(embed=False)
    assert report.added >= 1
    assert broken.store.scalar("SELECT count(*) FROM pages") == report.added
    assert [r.path for r in broken.search("harbour", mode="lexical")] == ["notes/a.md"]
    broken.close()


def test_migrations_are_recorded_in_the_database(vault: Vault) -> None:
    rows = vault.store.rows("SELECT version, name, applied FROM schema_migrations"
                            " ORDER BY version")
    assert [r[0] for r in rows] == list(range(1, schema.SCHEMA_VERSION + 1))
    assert vault.store.schema_version() == schema.SCHEMA_VERSION
    assert all(name for _, name, _ in rows)
    # Applied before the table existed: backfilled without a time; from then on, when.
    assert all(applied is None for v, _, applied in rows if v < schema.RECORDED_FROM)
    assert all(applied for v, _, applied in rows if v >= schema.RECORDED_FROM)


def test_an_older_index_is_migrated_and_its_earlier_versions_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    for number, migration in enumerate(schema.MIGRATIONS[:5]):  # as Kenning v5 left it
        with schema.transaction(db):
            migration(db)
            db.execute(f"PRAGMA user_version = {number + 1}")
    db.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
    db.close()
    store = SQLiteStore(tmp_path, path)
    assert store.schema_version() == schema.SCHEMA_VERSION
    assert store.get_meta("kept") == "yes"
    versions = [v for (v,) in store.rows("SELECT version FROM schema_migrations ORDER BY 1")]
    assert versions == list(range(1, schema.SCHEMA_VERSION + 1))
    store.close()


def test_an_index_from_a_newer_kenning_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(tmp_path, path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(KenningError) as raised:
        SQLiteStore(tmp_path, path)
    message = str(raised.value)
    assert "\n" not in message and "newer than this Kenning" in message and "v99" in message
