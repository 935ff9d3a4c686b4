"""The SQLite backend: one file, ``.kenning/index.db`` (WAL), for one person's vault."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.index.cjk import run_to_fts
from kenning.index.store import sqlite_schema as schema
from kenning.index.store.base import LEXICAL_WEIGHTS, IndexDamaged, Params, Store, TextQuery

if TYPE_CHECKING:
    import numpy as np

REBUILD_SUFFIX = ".rebuild"

# bm25() takes the weights in the table's column order.
_BM25_WEIGHTS = tuple(LEXICAL_WEIGHTS[c] for c in ("title", "heading", "body", "cjk"))


def _quoted(text: str) -> str:
    """An FTS5 string (a term or a phrase of terms), quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def fts_expression(query: TextQuery) -> str:
    """The FTS5 MATCH expression of a structured query (see :class:`TextQuery`)."""
    join = " AND " if query.all_terms else " OR "
    clauses = [f"{{title heading body}} : {_quoted(t)}" for t in (*query.terms, *query.phrases)]
    clauses += [f"{{title cjk}} : {run_to_fts(r)}" for r in query.cjk]
    return join.join(clauses)


class SQLiteStore(Store):
    """An index in a SQLite file. ``conn`` is for the index layer's SQLite-only code."""

    backend = "sqlite"
    max_params = 900

    def __init__(self, root: Path, path: Path | None = None) -> None:
        super().__init__(root)
        self.path = path or schema.db_path(root)
        try:
            self.conn: sqlite3.Connection = schema.connect(self.path)
        except schema.SchemaTooNew as exc:
            raise IndexDamaged(exc.message, clear=lambda: _remove_db_files(self.path)) from exc
        except sqlite3.DatabaseError as exc:
            if not self.path.exists() or isinstance(exc, sqlite3.OperationalError):
                raise  # locked, read-only, no such folder: not damage
            raise IndexDamaged(f"the index {self.path} cannot be read ({exc}); "
                               "fix: `kenning rebuild`",
                               clear=lambda: _remove_db_files(self.path)) from exc
        self._depth = 0

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        return self.conn.execute(sql, params).fetchone()

    def run(self, sql: str, params: Params = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def insert(self, sql: str, params: Params = ()) -> int:
        return int(self.conn.execute(sql, params).lastrowid or 0)

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        self.conn.executemany(sql, rows)

    def stream(self, sql: str, params: Params = (), size: int = 2000
               ) -> Iterator[tuple[Any, ...]]:
        cursor = self.conn.execute(sql, params)
        while batch := cursor.fetchmany(size):
            yield from batch

    def script(self, sql: str) -> None:
        schema._run_script(self.conn, sql)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Store]:
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        with schema.transaction(self.conn):
            self._depth = 1
            try:
                yield self
            finally:
                self._depth = 0

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def schema_version(self) -> int:
        return schema.schema_version(self.conn)

    def change_token(self) -> Any:
        # data_version moves when another connection commits; total_changes when this one does.
        return (self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)

    @contextlib.contextmanager
    def writer_lock(self, *, wait: float = 0.0) -> Iterator[None]:
        with schema.writer_lock(self.root, wait=wait):
            yield

    def lock_held(self) -> bool:
        return schema.lock_held(self.root)

    def describe(self) -> str:
        return f"sqlite {self.path}"

    def close(self) -> None:
        self.conn.close()

    # == lexical search ==================================================================

    def match_chunks(self, query: TextQuery, *, where: str = "", params: Params = (),
                     limit: int = 200) -> list[tuple[int, int, int, str, float]]:
        if query.empty:
            return []
        return self.conn.execute(
            f"""
            SELECT c.id, c.page_id, c.start_line, c.heading, -bm25(chunks_fts, ?, ?, ?, ?)
            FROM chunks_fts
            JOIN chunks c ON c.id = chunks_fts.rowid
            JOIN pages p ON p.id = c.page_id
            WHERE chunks_fts MATCH ? {where}
            ORDER BY bm25(chunks_fts, ?, ?, ?, ?)
            LIMIT {int(limit)}
            """,
            (*_BM25_WEIGHTS, fts_expression(query), *params, *_BM25_WEIGHTS),
        ).fetchall()

    def match_counts(self, terms: Sequence[str], cjk: Sequence[str] = ()) -> dict[str, int]:
        wanted = {t: _quoted(t) for t in terms}
        wanted.update({r: run_to_fts(r) for r in cjk})  # a CJK word matches as bigrams
        return {text: self.conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (expr,)).fetchone()[0]
            for text, expr in wanted.items()}

    # == indexing and vectors ============================================================
    # Vectors are BLOBs in ``embeddings`` (vectors.py's module doc); the matrix search runs in
    # the process (vectors.load_matrix), so ``nearest`` stays the base's None.

    def sound_vector(self, alias: str = "e") -> str:
        return (f"{alias}.dim = ? AND length({alias}.vector)"
                f" IN (4 * {alias}.dim, 4 + {alias}.dim)")

    def put_vectors(self, model: str, dim: int, rows: Sequence[tuple[str, np.ndarray]],
                    storage: str = "float32") -> None:
        from kenning.index.vectors import encode_vector

        self.conn.executemany(
            "INSERT OR REPLACE INTO embeddings(model, text_hash, dim, vector) VALUES (?, ?, ?, ?)",
            [(model, digest, dim, encode_vector(vec, storage)) for digest, vec in rows])

    def chunk_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        from kenning.index.vectors import decode_vectors

        # A truncated or foreign BLOB is skipped, not trusted; doctor reports the count.
        rows = self.conn.execute(
            f"""SELECT c.id, e.vector FROM chunks c JOIN embeddings e
               ON e.text_hash = c.text_hash AND e.model = ? AND {self.sound_vector()}
               ORDER BY c.id""", (model, dim)).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if all(len(r[1]) == 4 * dim for r in rows):  # all float32: one copy, no loop
            vectors = (np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4")
                       .reshape(len(rows), dim)
                       if rows else np.zeros((0, dim), dtype=np.float32))
        else:
            vectors = decode_vectors([r[1] for r in rows], dim)
        finite = np.isfinite(vectors).all(axis=1)
        if not finite.all():
            ids, vectors = ids[finite], vectors[finite]
        return ids, vectors

    def read_vectors(self, size: int = 2000) -> Iterator[list[tuple[str, str, int, np.ndarray]]]:
        from kenning.index.vectors import decode_vectors

        cursor = self.conn.execute(
            "SELECT model, text_hash, dim, vector FROM embeddings e"
            " WHERE length(e.vector) IN (4 * e.dim, 4 + e.dim) ORDER BY id")
        while batch := cursor.fetchmany(size):
            yield [(model, digest, dim, decode_vectors([blob], dim)[0])
                   for model, digest, dim, blob in batch]

    def copy_vectors_from(self, other: Store, storage: str = "float32") -> int:
        if not isinstance(other, SQLiteStore):
            return super().copy_vectors_from(other, storage)
        # SQLite to SQLite: the BLOBs as they are, in one statement (a rebuild's salvage).
        before = self.conn.total_changes
        try:
            self.conn.execute("ATTACH DATABASE ? AS other", (str(other.path),))
            try:
                with self.transaction():
                    self.conn.execute(
                        "INSERT OR IGNORE INTO embeddings(model, text_hash, dim, vector)"
                        " SELECT model, text_hash, dim, vector FROM other.embeddings")
            finally:
                self.conn.execute("DETACH DATABASE other")
        except sqlite3.DatabaseError:
            return 0  # an old or damaged index: nothing to keep
        return self.conn.total_changes - before

    def _fresh_path(self) -> Path:
        return self.path.with_name(self.path.name + REBUILD_SUFFIX)

    def fresh(self) -> Store:
        self.discard_fresh()
        return SQLiteStore(self.root, self._fresh_path())

    def replace_with(self, fresh: Store) -> None:
        """SQLite's backup API writes the copy in one transaction on the live database, through
        its own WAL and lock: other processes holding it open (a ``kenning serve``) see the old
        index or the new one. Renaming the file instead would leave the old database's ``-wal``
        beside the new one, to be replayed into it."""
        assert isinstance(fresh, SQLiteStore)
        try:
            live = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            try:
                live.execute("PRAGMA busy_timeout = 30000")
                fresh.conn.backup(live)
            finally:
                live.close()
        except sqlite3.DatabaseError:
            # Not a database at all (the reason to rebuild): take the new file's place.
            self.conn.close()
            fresh.conn.close()  # the last connection: its WAL is checkpointed into the file
            _remove_db_files(self.path)
            os.replace(fresh.path, self.path)
            self.conn = schema.connect(self.path)
        fresh.close()
        _remove_db_files(fresh.path)

    def discard_fresh(self) -> None:
        _remove_db_files(self._fresh_path())

    # == graph, memory, health ===========================================================

    def expected_schema_version(self) -> int:
        return schema.SCHEMA_VERSION

    # == team: locks, tokens, audit, doctor ==============================================
    @contextlib.contextmanager
    def vault_write_lock(self, *, wait: float = 60.0) -> Iterator[None]:
        from kenning.vault.writes import file_write_lock

        with file_write_lock(self.root, wait=wait):
            yield

    def team_ddl(self) -> str:
        return ("CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY, at TEXT NOT NULL, "
                "who TEXT NOT NULL, tool TEXT NOT NULL, pages TEXT NOT NULL, "
                "result TEXT NOT NULL);\n"
                "CREATE INDEX IF NOT EXISTS audit_who ON audit(who, at)")

    def quick_check(self) -> str:
        """SQLite's ``PRAGMA quick_check`` ("ok" or the first problems), run again only when
        the file or its WAL changed (size or mtime) since this process last checked it: a
        long-running process (``kenning web``'s health view) does not re-read an unchanged
        140 MB index on every request; ``kenning doctor``, a process of its own, always
        checks."""
        stamp = (str(self.path.resolve()), *_stamp(self.path),
                 *_stamp(Path(f"{self.path}-wal")))
        ok = _QUICK_CHECKED.get(stamp)
        if ok is None:
            ok = str(self.conn.execute("PRAGMA quick_check").fetchone()[0])
            _QUICK_CHECKED.clear()  # one entry per process is enough: the last file checked
            _QUICK_CHECKED[stamp] = ok
        return ok

    def backend_checks(self, read: Store | None = None) -> list[Any]:
        from kenning.index.store.base import Diagnosis

        out = []
        ok = self.quick_check()
        if ok != "ok":
            out.append(Diagnosis("error", "database", f"{self.path} fails SQLite's quick "
                                 f"check: {ok}", "kenning rebuild"))
        if read is not None and read is not self:
            out.append(Diagnosis("note", "replica", f"database.read_url is set ({read.describe()}"
                                 "); SQLite has no replication: searches read that file as it is",
                                 "point read_url at a PostgreSQL streaming replica, or remove it"))
        return out


#: The last ``PRAGMA quick_check`` answer of this process, by (file, its and its WAL's size and
#: mtime): see :meth:`SQLiteStore.quick_check`.
_QUICK_CHECKED: dict[tuple[Any, ...], str] = {}


def _stamp(path: Path) -> tuple[int, int]:
    """(size, mtime in ns) of a file, (-1, -1) when it is absent."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return -1, -1
    return st.st_size, st.st_mtime_ns


def _remove_db_files(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(path) + suffix).unlink()
