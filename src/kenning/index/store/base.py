"""The storage seam: the one interface every module above the index layer talks to.

A :class:`Store` is an open index database. Two backends implement it: SQLite (one person, the
default, ``.kenning/index.db``) and PostgreSQL (a team, selected by a ``database:`` URL).
Index-layer modules write *portable* SQL through the primitives below; the few things that differ
between the engines (full-text matching and ranking, vectors, locks, the change token, the schema
itself) are methods each backend implements. Nothing above ``kenning.index`` writes SQL or knows
which backend it runs on.

Portable SQL, as both backends run it:

* ``?`` placeholders (PostgreSQL's are translated); never ``%`` outside a string literal.
* ``INSERT … ON CONFLICT (cols) DO NOTHING | DO UPDATE SET …`` rather than ``INSERT OR …``;
  :meth:`Store.insert` (``… RETURNING id``) rather than ``lastrowid``.
* ``COALESCE`` not ``IFNULL``; no ``GLOB``, ``json_extract``, ``group_concat``, ``strftime``,
  ``typeof``, scalar ``MAX(a, b)`` or ``LIMIT -1``; ``lower(x) LIKE lower(?)`` when case must not
  matter (SQLite's ``LIKE`` ignores ASCII case, PostgreSQL's does not).
* booleans stored as integers 0/1; dates and times as ISO text.
* ``chunks_fts`` is addressed by ``rowid`` (the chunk id) on both backends.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")

Params = Sequence[Any]


class Store(ABC):
    """An open index database: portable SQL primitives plus the backend-specific operations."""

    #: "sqlite" or "postgresql"; for messages, doctor and tests only, never for branching above
    #: the index layer.
    backend: ClassVar[str]
    #: Most parameters one statement may take (SQLite: 999; PostgreSQL: 65535).
    max_params: ClassVar[int] = 900

    def __init__(self, root: Path) -> None:
        self.root = root

    # -- portable SQL ---------------------------------------------------------------------------

    @abstractmethod
    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """All rows of a query."""

    @abstractmethod
    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or None."""

    def scalar(self, sql: str, params: Params = (), default: Any = None) -> Any:
        """The first column of the first row, or ``default``."""
        row = self.one(sql, params)
        return default if row is None or row[0] is None else row[0]

    @abstractmethod
    def run(self, sql: str, params: Params = ()) -> int:
        """Execute one statement; the number of rows it changed."""

    @abstractmethod
    def insert(self, sql: str, params: Params = ()) -> int:
        """Execute one ``INSERT`` of a single row into a table with an ``id`` key; its id."""

    @abstractmethod
    def many(self, sql: str, rows: Iterable[Params]) -> None:
        """Execute one statement for each parameter row."""

    @abstractmethod
    def stream(self, sql: str, params: Params = (), size: int = 2000
               ) -> Iterator[tuple[Any, ...]]:
        """Rows of a large query, fetched ``size`` at a time."""

    @abstractmethod
    def script(self, sql: str) -> None:
        """Run several ``;``-separated statements inside the caller's transaction."""

    @contextlib.contextmanager
    @abstractmethod
    def transaction(self) -> Iterator[Store]:
        """One write transaction (SQLite: ``BEGIN IMMEDIATE``), rolled back on any error.

        Re-entrant: a ``transaction()`` inside another joins it.
        """

    @property
    @abstractmethod
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction`."""

    def in_batches(self, items: Iterable[T]) -> Iterator[tuple[list[T], str]]:
        """``items`` in parts small enough for one ``IN (…)``, each with its ``?,?,…``."""
        items = list(items)
        size = self.max_params
        for start in range(0, len(items), size):
            part = items[start : start + size]
            yield part, ",".join("?" * len(part))

    # -- meta -----------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Read one value from the meta table."""
        row = self.one("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Write one value to the meta table (caller owns the transaction)."""
        self.run("INSERT INTO meta(key, value) VALUES (?, ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def delete_meta(self, key: str) -> None:
        """Remove one value from the meta table (caller owns the transaction)."""
        self.run("DELETE FROM meta WHERE key = ?", (key,))

    # -- backend-specific -----------------------------------------------------------------------

    @abstractmethod
    def schema_version(self) -> int:
        """The number of migrations applied to this database."""

    @abstractmethod
    def change_token(self) -> Any:
        """A value that differs after any connection (this process or another) commits a
        change; caches keyed by it never serve stale rows."""

    @contextlib.contextmanager
    @abstractmethod
    def writer_lock(self, *, wait: float = 0.0) -> Iterator[None]:
        """Hold the index write lock (one indexer at a time); wait up to ``wait`` seconds, else
        raise :class:`kenning.errors.IndexBusy`. Released when the holder dies."""

    @abstractmethod
    def lock_held(self) -> bool:
        """True when some process holds the index write lock."""

    @abstractmethod
    def describe(self) -> str:
        """Where this index lives, for messages (never includes a password)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection(s); the store may not be used afterwards."""

    # == lexical search ==================================================================
    # (recall adds its methods here)




    # == indexing and vectors ============================================================
    # (index adds its methods here)




    # == graph, memory, health ===========================================================
    # (layers adds its methods here)

    @abstractmethod
    def expected_schema_version(self) -> int:
        """The schema version this Kenning migrates this backend to (``kenning doctor``
        compares it with :meth:`schema_version`)."""




    # == team: locks, tokens, audit, doctor ==============================================
    # (team adds its methods here)




    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
