"""The SQLite backend: one file, ``.kenning/index.db`` (WAL), for one person's vault."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kenning.index import db as schema
from kenning.index.store.base import Params, Store


class SQLiteStore(Store):
    """An index in a SQLite file. ``conn`` is for the index layer's SQLite-only code."""

    backend = "sqlite"
    max_params = 900

    def __init__(self, root: Path, path: Path | None = None) -> None:
        super().__init__(root)
        self.path = path or schema.db_path(root)
        self.conn: sqlite3.Connection = schema.connect(self.path)
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
    # (recall adds its methods here)




    # == indexing and vectors ============================================================
    # (index adds its methods here)




    # == graph, memory, health ===========================================================
    # (layers adds its methods here)




    # == team: locks, tokens, audit, doctor ==============================================

    @contextlib.contextmanager
    def vault_write_lock(self, *, wait: float = 60.0) -> Iterator[None]:
        from kenning.vault.writes import file_write_lock

        with file_write_lock(self.root, wait=wait):
            yield

    def team_ddl(self) -> str:
        return ("CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY, at TEXT NOT NULL, "
                "who TEXT NOT NULL, tool TEXT NOT NULL, pages TEXT NOT NULL, "
                "result TEXT NOT NULL);"
                "CREATE INDEX IF NOT EXISTS audit_who ON audit(who, at)")

    def expected_schema_version(self) -> int | None:
        return int(schema.SCHEMA_VERSION)

    def backend_checks(self, read: Store | None = None) -> list[Any]:
        from kenning.index.store.base import Diagnosis

        out = []
        ok = self.conn.execute("PRAGMA quick_check").fetchone()[0]
        if ok != "ok":
            out.append(Diagnosis("error", "database", f"{self.path} fails SQLite's quick "
                                 f"check: {ok}", "kenning rebuild"))
        if read is not None and read is not self:
            out.append(Diagnosis("note", "replica", f"database.read_url is set ({read.describe()}"
                                 "); SQLite has no replication: searches read that file as it is",
                                 "point read_url at a PostgreSQL streaming replica, or remove it"))
        return out
