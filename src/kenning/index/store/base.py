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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    import numpy as np

from kenning.errors import KenningError

T = TypeVar("T")

Params = Sequence[Any]

#: How much a match in each ``chunks_fts`` column counts in :meth:`Store.match_chunks`'s score
#: (SQLite: the bm25() column weights; PostgreSQL: the same ratios in the ts_rank weights).
LEXICAL_WEIGHTS: dict[str, float] = {"title": 5.0, "heading": 2.0, "body": 1.0, "cjk": 1.0}


@dataclass(frozen=True)
class TextQuery:
    """A full-text query as structure, never an engine's syntax: each backend builds its own
    expression from it (SQLite an FTS5 MATCH string, PostgreSQL a tsquery).

    The query is a list of *clauses*: every term, every phrase and every CJK word is one.

    * ``terms``: single words, already casefolded, no quotes or operators. A term matches a
      chunk whose ``title``, ``heading`` or ``body`` holds a word with the same stem (SQLite:
      Porter over unicode61 tokens, diacritics folded). Not the ``cjk`` column.
    * ``phrases``: several words separated by single spaces; matches where those words occur
      consecutively (each stemmed as a term) in ``title``, ``heading`` or ``body``.
    * ``cjk``: CJK words (runs of Han/Kana/Hangul, see :mod:`kenning.index.cjk`). A word of two
      or more characters matches where its overlapping bigrams (:func:`kenning.index.cjk.bigrams`)
      occur consecutively, as a phrase, in the ``title`` or ``cjk`` column; a one-character word
      is a *prefix* term: it matches any bigram (token) of those columns that starts with it.
    * ``all_terms``: True, a chunk must match every clause (AND); False, any one (OR).

    A query with no clause matches nothing.
    """

    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    cjk: tuple[str, ...] = ()
    all_terms: bool = False

    @property
    def empty(self) -> bool:
        """True when the query has no clause."""
        return not (self.terms or self.phrases or self.cjk)


@dataclass(frozen=True)
class Diagnosis:
    """One database check for ``kenning doctor``: level error | warn | note | ok, and the fix."""

    level: str
    check: str
    message: str
    fix: str | None = None
    fatal: bool = False  # the database cannot be opened: no other check can run


class IndexDamaged(KenningError):
    """The index database exists but cannot be read (not a database, malformed). Opening it
    raises this; ``kenning rebuild`` calls :meth:`clear` and builds a new one."""

    def __init__(self, message: str, clear: Any = None) -> None:
        super().__init__(message)
        self._clear = clear

    def clear(self) -> None:
        """Remove the unreadable index so a new one can be opened in its place."""
        if self._clear is not None:
            self._clear()


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
    # Full-text matching and ranking over ``chunks_fts`` (title, heading, body, cjk; ``rowid``
    # = chunk id). Everything else recall reads (chunk and page rows, the stored ``body`` text
    # by rowid) is portable SQL in :mod:`kenning.index.queries.recall`. Highlighting is done in
    # Python by recall (it emulates the SQLite tokenizer), so no backend method is needed.

    @abstractmethod
    def match_chunks(self, query: TextQuery, *, where: str = "", params: Params = (),
                     limit: int = 200) -> list[tuple[int, int, int, str, float]]:
        """The chunks matching ``query``, best first, at most ``limit``.

        Each row is ``(chunk id, page id, chunk start_line, chunk heading, score)``; ``score`` is
        a float, *higher is better*, comparable only within one call (SQLite: ``-bm25()`` with
        :data:`LEXICAL_WEIGHTS` as column weights, always > 0). Recall uses the score's order
        and its relative size (a neighbour adds a share of it), never its absolute value. Ties
        keep the engine's order.

        ``where`` is a portable SQL fragment that starts with `` AND `` (or is empty), over the
        aliases ``c`` (``chunks``) and ``p`` (``pages``, joined on ``p.id = c.page_id``), with
        ``?`` placeholders bound to ``params``; only rows it keeps are ranked. Example:
        ``" AND p.type IN (?)"``, ``("decision",)``. An empty query returns ``[]``.
        """

    @abstractmethod
    def match_counts(self, terms: Sequence[str], cjk: Sequence[str] = ()) -> dict[str, int]:
        """How many chunks match each of ``terms`` and ``cjk``: ``{text: number of chunks}``,
        one key for every distinct item given (0 when none match).

        Unlike :meth:`match_chunks`, any column counts. An item of ``terms`` is a word or a
        phrase (words separated by spaces, matched consecutively, stemmed as in
        :class:`TextQuery`); an item of ``cjk`` matches as a CJK word of :class:`TextQuery`
        (bigram phrase; one character: prefix). Used for the rarity (inverse document frequency)
        of each query term.
        """

    # == indexing and vectors ============================================================
    # Vectors are keyed by (model, text_hash): one vector per distinct embedded text, shared by
    # every chunk with that text (``chunks.text_hash``). They are float32 rows the embedder
    # L2-normalised; a backend may store them in any form (SQLite: a float32 or int8 BLOB,
    # vectors.py; PostgreSQL: pgvector) as long as reading gives float32 back. Bookkeeping that
    # is plain SQL stays in vectors.py on the primitives: ``meta`` keys ``embed_model``,
    # ``embed_dim``, ``embed_state``, and ``vectors_version`` (bumped by every change to vectors
    # or chunks; with ``index_id`` it names the matrix the process caches).

    @abstractmethod
    def sound_vector(self, alias: str = "e") -> str:
        """A SQL condition, true when the ``embeddings`` row ``alias`` holds a usable vector of
        the dimension given by its one ``?`` parameter (SQLite: the BLOB has the bytes for that
        dimension; a truncated or foreign one is skipped, doctor counts it)."""

    @abstractmethod
    def put_vectors(self, model: str, dim: int, rows: Sequence[tuple[str, np.ndarray]],
                    storage: str = "float32") -> None:
        """Store (text hash, float32 vector of ``dim``) rows for ``model``, replacing any vector
        already stored under the same (model, text hash). ``storage`` is the config's
        ``embeddings.storage`` ("float32" | "int8"); a backend may ignore it. Caller owns the
        transaction (and bumps ``vectors_version``)."""

    @abstractmethod
    def chunk_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids int64, vectors float32 of shape (n, ``dim``)), row for row, ordered by
        chunk id: every chunk whose text has a sound, finite vector of ``model``. What the
        in-process matrix (``vectors.load_matrix``) is built from; SQLite's path is the hot one
        (one join, one ``frombuffer``)."""

    @abstractmethod
    def read_vectors(self, size: int = 2000) -> Iterator[list[tuple[str, str, int, np.ndarray]]]:
        """Every stored vector as batches of (model, text hash, dim, float32 vector) rows; a
        damaged one is left out. What :meth:`copy_vectors_from` reads on the other store."""

    def copy_vectors_from(self, other: Store, storage: str = "float32") -> int:
        """Copy every vector of ``other`` (any backend) into this store by (model, text hash),
        keeping vectors this store already has; the number copied. Embedding is the slow part
        of an index: a rebuild, or a move between backends, carries the vectors across so only
        new text is embedded. Runs its own transactions, one per batch."""
        from kenning.index.store.copy import copy_vectors

        return copy_vectors(other, self, storage)

    def nearest(self, model: str, dim: int, query: np.ndarray, k: int,
                allowed: Sequence[int] | None = None) -> list[tuple[int, float]] | None:
        """Top ``k`` (chunk id, cosine) for a normalised float32 ``query`` by the database's own
        vector index, within ``allowed`` chunk ids if given; or None when this backend has no
        server-side search worth using and the caller searches the in-process matrix
        (``vectors.load_matrix`` + ``dense_search``). SQLite: always None. Scores are against
        the raw stored vectors (no page-context blend)."""
        return None

    @abstractmethod
    def fresh(self) -> Store:
        """An empty, migrated store beside this one, for a rebuild: filled while this one
        still serves searches, then made this one by :meth:`replace_with` or dropped by
        :meth:`discard_fresh`. What a killed rebuild left behind is dropped first.
        SQLite: ``index.db.rebuild`` next to ``index.db``; PostgreSQL: a side schema."""

    @abstractmethod
    def replace_with(self, fresh: Store) -> None:
        """Make this store's contents those of ``fresh`` (from :meth:`fresh`), atomically for
        every reader in every process: they see the old index or the new one, never half.
        ``fresh`` is closed and its leftovers removed; this store stays open and usable, and
        sees the new contents. Caller holds :meth:`writer_lock`."""

    @abstractmethod
    def discard_fresh(self) -> None:
        """Drop what :meth:`fresh` made (a failed or killed rebuild); nothing if there is
        none. Any store from :meth:`fresh` must be closed first. Caller holds the lock."""

    # == graph, memory, health ===========================================================

    @abstractmethod
    def expected_schema_version(self) -> int:
        """The schema version this Kenning migrates this backend to (``kenning doctor``
        compares it with :meth:`schema_version`)."""

    # == team: locks, tokens, audit, doctor ==============================================
    # The vault write lock (serialises page writes across processes, and hosts), the audit
    # trail of remote writes, what a rebuild or a move carries besides vectors, read-replica
    # positions, and the database checks of ``kenning doctor``. Tokens are not here: they live
    # in ``.kenning/tokens.json`` (kenning.serve.tokens), not derivable from the vault.

    @contextlib.contextmanager
    @abstractmethod
    def vault_write_lock(self, *, wait: float = 60.0) -> Iterator[None]:
        """Hold the vault write lock (one writer of pages at a time, across every process
        serving this vault); wait up to ``wait`` seconds, else raise
        :class:`kenning.vault.writes.WriteBusy`. Released when the holder dies. SQLite: the
        ``.kenning/write.lock`` flock; PostgreSQL: a session advisory lock on its own
        connection, keyed by the vault."""

    @abstractmethod
    def team_ddl(self) -> str:
        """``CREATE TABLE IF NOT EXISTS audit …`` in this backend's dialect (id key, then
        ``at`` ISO time, ``who``, ``tool``, ``pages`` JSON list, ``result``)."""

    def _team_tables(self) -> None:
        """Create the team tables if missing (idempotent; joins the caller's transaction)."""
        with self.transaction():
            self.script(self.team_ddl())

    def _has_audit(self) -> bool:
        try:
            self.scalar("SELECT COUNT(*) FROM audit WHERE 1 = 0")
        except Exception:  # no such table (an index from before team mode)
            return False
        return True

    def record_audit(self, who: str, tool: str, pages: Sequence[str], result: str,
                     at: str | None = None) -> None:
        """Add one audit row (caller holds the vault write lock; joins its transaction)."""
        import datetime as _dt
        import json

        self._team_tables()
        at = at or _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
        self.run("INSERT INTO audit(at, who, tool, pages, result) VALUES (?, ?, ?, ?, ?)",
                 (at, who, tool, json.dumps(list(pages), ensure_ascii=False), result))

    def audit_log(self, *, who: str | None = None, limit: int = 100
                  ) -> list[dict[str, Any]]:
        """The latest audit rows, newest first (an index without the table has none)."""
        import json

        if not self._has_audit():
            return []
        where, params = ("WHERE who = ?", [who]) if who else ("", [])
        rows = self.rows(f"SELECT at, who, tool, pages, result FROM audit {where} "
                         "ORDER BY at DESC, id DESC LIMIT ?", (*params, int(limit)))
        return [{"at": r[0], "who": r[1], "tool": r[2], "pages": json.loads(r[3] or "[]"),
                 "result": r[4]} for r in rows]

    def copy_team_state_from(self, other: Store) -> int:
        """Copy what the index holds that the vault cannot give back (the audit trail) from
        ``other`` (any backend) into this store, keeping rows this store already has; the
        number copied. ``kenning rebuild`` calls it on the fresh store before it replaces the
        old one; ``kenning db copy`` on the target. Its own transaction."""
        if not other._has_audit():
            return 0
        self._team_tables()
        have = {tuple(r) for r in self.rows("SELECT at, who, tool FROM audit")}
        rows = [r for r in other.rows("SELECT at, who, tool, pages, result FROM audit "
                                      "ORDER BY at, id") if tuple(r[:3]) not in have]
        with self.transaction():
            self.many("INSERT INTO audit(at, who, tool, pages, result) VALUES (?, ?, ?, ?, ?)",
                      rows)
        return len(rows)

    def replication_position(self) -> Any:
        """Where this (primary) database's write history is now, for read-your-own-writes
        against a replica; None when the backend has no replication (SQLite)."""
        return None

    def replayed(self, position: Any) -> bool:
        """True when this (replica) database has replayed the primary up to ``position``
        (from :meth:`replication_position`); always for a position of None."""
        return True

    def diagnose(self, files: int | None = None, read: Store | None = None
                 ) -> list[Diagnosis]:
        """The database checks of ``kenning doctor`` (reachable is the caller's: this store is
        open): schema version against this Kenning, what the backend needs (PostgreSQL:
        pgvector and its version), index coverage (pages against the vault's ``files``
        Markdown files, chunks with vectors), and with ``read`` (a replica) its lag."""
        from kenning.index.store.diagnose import portable_checks

        out = portable_checks(self, files)
        out.extend(self.backend_checks(read))
        return out

    def backend_checks(self, read: Store | None = None) -> list[Diagnosis]:
        """Checks only this backend has (PostgreSQL: extensions, server, replica lag)."""
        return []

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
