"""The SQLite backend: one file, ``.kenning/index.db`` (WAL), for one person's vault."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kenning.index import db as schema
from kenning.index.cjk import run_to_fts
from kenning.index.store.base import LEXICAL_WEIGHTS, Params, Store, TextQuery

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
    # (index adds its methods here)




    # == graph, memory, health ===========================================================
    # (layers adds its methods here)




    # == team: locks, tokens, audit, doctor ==============================================
    # (team adds its methods here)
