"""The PostgreSQL backend: a team's index on a server, one PostgreSQL schema per vault.

Selected by a URL, ``postgresql://user[:password]@host[:port]/dbname[?schema=NAME]``
(``database:`` in ``.kenning/config.yaml`` or ``KENNING_DATABASE_URL``). ``schema`` is Kenning's
own parameter and is removed before connecting; every other parameter goes to libpq. Without it
the schema is ``kenning_<vault id>``, the id kept in ``.kenning/vault-id``, so several vaults
share one database with nothing but the URL; processes serving one vault folder share its
schema. The role needs ``CREATE`` on the database (or an existing schema it owns); the one step
that needs more is ``CREATE EXTENSION vector``, once per database, by its owner or a superuser.

Connections: a psycopg 3 pool. A read outside a transaction borrows a pooled connection for one
statement (autocommit). :meth:`PostgresStore.transaction` binds one connection to the calling
thread until it ends; every statement of that thread inside it runs there. Every write
transaction takes a transaction-scoped advisory lock on the schema first, so writers are one at
a time as with SQLite's ``BEGIN IMMEDIATE``, and readers never wait.

Transient failures (a dropped connection, a restarting server, a deadlock or serialization
failure) are retried for up to :attr:`PostgresStore.retry_seconds`:

* a read is simply run again on another connection;
* a write transaction that had not committed is rolled back by the server; the store opens a
  new one and *replays* the statements the thread ran so far, comparing every result with what
  the caller saw the first time (rows, counts, ids; an ``INSERT … RETURNING id`` is replayed
  with the id it returned). Equal results mean the caller's code would have done the same, so
  the transaction goes on where it stopped; any difference raises :class:`TransientWriteError`,
  and nothing of that transaction was written;
* a failure during ``COMMIT`` leaves one question: did it commit? Every write transaction
  inserts a random token into ``kenning_commits`` with its commit; after a failed commit the
  store waits until the old server session is gone (ending it if it still runs), then looks the
  token up: found, the transaction is done; missing, it is replayed and committed again. A
  write is never lost and never applied twice.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import psycopg_pool
from psycopg import errors, sql
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from kenning.errors import IndexBusy, KenningError
from kenning.index.store import base as _base
from kenning.index.store import postgres_schema as schema_mod
from kenning.index.store.base import Params, Store

if TYPE_CHECKING:
    import numpy as np

    from kenning.index.store.base import TextQuery

#: Column weights of the lexical score (title, heading, body, cjk), as SQLite's bm25() uses them.
_LEXICAL = getattr(_base, "LEXICAL_WEIGHTS", {"title": 5.0, "heading": 2.0, "body": 1.0,
                                              "cjk": 1.0})
WEIGHTS = [float(_LEXICAL[c]) for c in ("title", "heading", "body", "cjk")]

log = logging.getLogger(__name__)

#: Kenning's own URL parameters, removed before the URL reaches libpq.
KENNING_PARAMS = ("schema",)
VAULT_ID_FILE = "vault-id"
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,54}\Z")  # 55: room for "_rebuild"

# Advisory lock classes (the first key of pg_advisory_lock(int, int)); the second is the schema.
LOCK_INDEX = 0x4B4E0001  # the index writer (one indexer at a time)
LOCK_MIGRATE = 0x4B4E0002  # applying migrations
LOCK_WRITE = 0x4B4E0003  # every write transaction (transaction-scoped)
LOCK_VAULT = 0x4B4E0004  # the vault's Markdown writes (team mode)


class TransientWriteError(KenningError):
    """A write transaction lost its connection and could not be safely replayed; nothing of it
    was written, so running the operation again is safe."""


# -- SQL translation ---------------------------------------------------------------------------

_TOKENS = re.compile(
    r"'(?:[^']|'')*'"          # a string literal
    r'|"(?:[^"]|"")*"'         # a quoted identifier
    r"|--[^\n]*"               # a line comment
    r"|/\*.*?\*/"              # a block comment
    r"|\$\$.*?\$\$"            # a dollar-quoted body
    r"|\?|%",
    re.S,
)


def _token(match: re.Match[str]) -> str:
    text = match.group(0)
    if text == "?":
        return "%s"
    return text.replace("%", "%%")


@functools.lru_cache(maxsize=4096)
def translate(query: str) -> str:
    """A portable (``?``-placeholder) statement as psycopg takes it: ``?`` → ``%s`` and every
    ``%`` doubled; a ``?`` inside a string literal, quoted name or comment stays as it is."""
    return _TOKENS.sub(_token, query)


_READ = re.compile(r"\s*(?:select|values|show|explain|table)\b", re.I)
_WITH = re.compile(r"\s*with\b", re.I)
_WRITE_WORD = re.compile(r"\b(?:insert|update|delete|merge)\b", re.I)
_INSERT_TABLE = re.compile(r"\s*insert\s+into\s+([\w.\"]+)", re.I)
_INSERT_COLUMNS = re.compile(r"(\s*insert\s+into\s+[\w.\"]+\s*\()(.*?\)\s*values\s*\()",
                             re.I | re.S)


@functools.lru_cache(maxsize=4096)
def is_read(query: str) -> bool:
    """True when a statement only reads."""
    if _READ.match(query):
        return True
    return bool(_WITH.match(query)) and not _WRITE_WORD.search(query)


@functools.lru_cache(maxsize=1024)
def _with_returning(query: str) -> str:
    return query if re.search(r"\breturning\b", query, re.I) else query.rstrip().rstrip(";") + \
        " RETURNING id"


@functools.lru_cache(maxsize=1024)
def _pinned_insert(query: str) -> str | None:
    """``INSERT INTO t(cols) VALUES (…)`` with the id as its first column and parameter (a
    replay must give a row the id the caller already saw); None for other shapes."""
    match = _INSERT_COLUMNS.match(query)
    if not match:
        return None
    return match.group(1) + "id, " + match.group(2) + "%s, " + query[match.end():]


# -- URL ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """Where a store lives: the libpq URL (Kenning's parameters removed) and the schema."""

    url: str
    schema: str
    user: str
    host: str
    port: str
    dbname: str

    def describe(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        where = f"{user}{self.host}{port}"
        return f"postgresql {where}/{self.dbname} schema {self.schema}"


def vault_id(root: Path) -> str:
    """The vault's stable id, kept in ``.kenning/vault-id`` (made on first use)."""
    from kenning.vault.layout import STATE_DIR

    path = root / STATE_DIR / VAULT_ID_FILE
    with contextlib.suppress(FileNotFoundError):
        text = path.read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[0-9a-f]{12,64}", text):
            return text
    path.parent.mkdir(parents=True, exist_ok=True)
    new = os.urandom(8).hex()
    tmp = path.with_name(f".{VAULT_ID_FILE}.{os.getpid()}")
    tmp.write_text(new + "\n", encoding="utf-8")
    try:
        os.link(tmp, path)  # first writer wins; a concurrent opener reads the same id
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()


def parse_url(root: Path, url: str) -> Target:
    """Split a Kenning database URL into the libpq URL and the schema; one-line errors."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in KENNING_PARAMS}
    rest = [(k, v) for k, v in query if k not in KENNING_PARAMS]
    schema = (ours.get("schema") or "").strip()
    if not schema:
        schema = f"kenning_{vault_id(root)[:16]}"
    if not _SCHEMA_NAME.match(schema):
        raise KenningError(f"database URL: schema {schema!r} is not a plain lower-case name "
                           "(letters, digits, _; at most 55)")
    clean = urlunsplit((parts.scheme if parts.scheme != "postgres" else "postgresql",
                        parts.netloc, parts.path, urlencode(rest), parts.fragment))
    try:
        info = psycopg.conninfo.conninfo_to_dict(clean)
    except psycopg.ProgrammingError as exc:
        raise KenningError(f"database URL: {_first_line(exc)}") from None
    return Target(url=clean, schema=schema, user=str(info.get("user") or ""),
                  host=str(info.get("host") or "localhost"), port=str(info.get("port") or ""),
                  dbname=str(info.get("dbname") or info.get("user") or ""))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # libpq's "connection failed: connection to server at … failed: reason" carries the reason
    # last; keep the whole first line.
    return lines[0] if lines else text


# -- adaptation --------------------------------------------------------------------------------

class _BoolAsInt(Dumper):
    """Booleans are stored as integers 0/1 (portable SQL): a Python bool binds as an int8."""

    oid = psycopg.adapters.types["int8"].oid
    format = Format.TEXT

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


# -- transient failures ------------------------------------------------------------------------

_TRANSIENT_STATES = {
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
    "57P01",  # admin_shutdown (server restart, pg_terminate_backend)
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now (starting up, shutting down)
    "53300",  # too_many_connections
    "55P03",  # lock_not_available
    "25P03",  # idle_in_transaction_session_timeout
}


def is_transient(exc: BaseException) -> bool:
    """True for a failure worth retrying on another connection."""
    if isinstance(exc, psycopg_pool.PoolTimeout):
        return True
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate
    if state is None:
        # No SQLSTATE: the client lost the connection (closed, reset, server gone).
        return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
    return state in _TRANSIENT_STATES or state.startswith("08")


class _Diverged(Exception):
    """A replayed statement gave another result than the first time."""


@dataclass
class _Entry:
    query: str
    params: Any
    mode: str  # all | one | count | id | many | script
    digest: Any
    pinned_id: int | None = None


@dataclass
class _Tx:
    """The calling thread's open transaction."""

    conn: psycopg.Connection[Any] | None = None
    pool: Any = None
    depth: int = 0
    log: list[_Entry] = field(default_factory=list)
    replayable: bool = True
    wrote: bool = False
    token: str = ""


_BORROW_SECONDS = 2.0  # how long one attempt waits for a pooled connection
_LOG_LIMIT = 200_000  # statements kept for replay; a larger transaction is not replayed


_LEXEMES = re.compile(r"'((?:[^']|'')*)'(?::(\*?)([A-D]*))?")
_FOLD = str.maketrans(schema_mod._FOLD_FROM, schema_mod._FOLD_TO)


def _fold(text: str) -> str:
    """Lower case with Latin diacritics folded, as the chunks_fts.tsv expression does."""
    return text.lower().translate(_FOLD)


def _ts_quote(text: str) -> str:
    """A tsquery operand in quotes (the words inside are parsed by the configuration)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _idf(total: int, found: int) -> float:
    """FTS5's inverse document frequency (never below 1e-6)."""
    import math

    value = math.log((total - found + 0.5) / (found + 0.5)) if total else 0.0
    return value if value > 0 else 1e-6


class _RawVector(Loader):
    """pgvector's binary form as bytes: decoded for many rows at once by _decode_vectors."""

    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return bytes(data)


def _decode_vectors(blobs: list[bytes], dim: int) -> np.ndarray:
    """float32 rows from pgvector binary values (int16 dim, int16 unused, big-endian float4s)."""
    import numpy as np

    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    width = 4 + 4 * dim
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return raw[:, 4:].copy().view(">f4").astype(np.float32).reshape(len(blobs), dim)


#: A chunk's length for BM25: its tokens, counted as unicode61 does (chunks_fts.ntok).
_LENGTH = "f.ntok"


def _ranked(mask: str) -> str:
    """ts_rank of one word with only the weights in ``mask`` (D, C, B, A) counted, as 1."""
    return f"ts_rank('{mask}'::real[], f.tsv, CAST(? AS tsquery), 0)"


def _count_of(rank: str) -> str:
    """The number of positions behind a one-word ts_rank whose positions all weigh 1: the
    rank is H2(n) / H2(inf) (H2(n) the sum of 1/j^2), and H2(inf) - H2(n) is about
    1 / (n + 1/2)."""
    return (f"(CASE WHEN {rank} <= 0 THEN 0 ELSE round(1.0 / GREATEST(1.6449340668"
            f" * (1 - {rank}), 1e-6) - 0.5) END)")


def _saturate(tf: str, avglen: float) -> str:
    """BM25's term-frequency part, tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))."""
    norm = f"1.2 * (0.25 + 0.75 * m.len / {max(avglen, 1.0)!r})"
    return f"(({tf}) * 2.2 / (({tf}) + {norm}))"


def _digest(rows: Any) -> Any:
    try:
        return hash(rows) if not isinstance(rows, list) else hash(tuple(rows))
    except TypeError:
        return repr(rows)


# -- the store ---------------------------------------------------------------------------------

class PostgresStore(Store):
    """An index in one schema of a PostgreSQL database."""

    backend = "postgresql"
    max_params = 30000
    #: How long transient failures are retried (seconds) before the error is raised.
    retry_seconds: float = 30.0

    def __init__(self, root: Path, url: str, *, retry_seconds: float | None = None,
                 pool_size: int = 10, migrate: bool = True) -> None:
        super().__init__(root)
        if retry_seconds is not None:
            self.retry_seconds = retry_seconds
        self.target = parse_url(root, url)
        self.schema = self.target.schema
        self.key = zlib.crc32(self.schema.encode()) & 0x7FFFFFFF
        self._local = threading.local()
        self._closed = False
        self._commits = 0
        self._lexical_cache: dict[Any, Any] = {}
        self._pool_lock = threading.Lock()
        self._vector_info: Any = None
        self._hnsw: set[int] = set()
        self._ext_schema = "public"
        self._app = f"kenning {os.getpid()}@{socket.gethostname()}"[:63]
        first = self._connect_first()
        try:
            if migrate:
                self._migrate(first)
            self._ext_schema = self._extension_schema(first) or "public"
            from psycopg.types import TypeInfo

            self._vector_info = TypeInfo.fetch(first, f"{self._ext_schema}.vector")
        finally:
            first.close()
        self._conninfo = psycopg.conninfo.make_conninfo(
            self.target.url, application_name=self._app,
            options=f"-c search_path={self.schema},{self._ext_schema}")
        self._pool_size = pool_size
        self._pool = self._make_pool()

    # -- connections ----------------------------------------------------------------------------

    def _connect_first(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.target.url, autocommit=True, application_name=self._app,
                                   connect_timeout=10)
        except psycopg.Error as exc:
            raise KenningError(f"cannot connect to {self.describe()}: {_first_line(exc)}; "
                               "check the database URL and that the server is running"
                               ) from None

    def _make_pool(self) -> psycopg_pool.ConnectionPool[Any]:
        pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
            self._conninfo, min_size=1, max_size=self._pool_size, open=False,
            kwargs={"autocommit": True}, configure=self._configure,
            name=f"kenning-{self.schema}", timeout=_BORROW_SECONDS,
            reconnect_timeout=max(self.retry_seconds, 1.0))
        pool.open(wait=False)
        return pool

    def _renew_pool(self) -> None:
        """After the pool could not lend a connection: if the server accepts one now, the pool
        is only waiting out its reconnection backoff, so a new pool takes its place."""
        try:
            psycopg.connect(self._conninfo, connect_timeout=2).close()
        except psycopg.Error:
            return  # still down: keep waiting
        with self._pool_lock:
            old, self._pool = self._pool, self._make_pool()
        threading.Thread(target=old.close, kwargs={"timeout": 5.0}, daemon=True).start()

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.adapters.register_dumper(bool, _BoolAsInt)
        if self._vector_info is not None:
            from pgvector.psycopg.vector import register_vector_info

            register_vector_info(conn, self._vector_info)

    def _deadline(self) -> float:
        return time.monotonic() + self.retry_seconds

    def _pause(self, attempt: int, deadline: float, exc: BaseException) -> None:
        """Wait before the next attempt, or re-raise when time is up."""
        if time.monotonic() >= deadline or self._closed:
            raise exc
        log.info("postgres: %s; retrying", _first_line(exc))
        time.sleep(min(0.05 * 2 ** attempt, 1.0, max(0.0, deadline - time.monotonic())))
        if isinstance(exc, psycopg_pool.PoolTimeout):
            self._renew_pool()
        else:
            with contextlib.suppress(Exception):
                self._pool.check()

    def _tx(self) -> _Tx:
        tx = getattr(self._local, "tx", None)
        if tx is None:
            tx = self._local.tx = _Tx()
        return tx

    # -- running statements ---------------------------------------------------------------------

    @staticmethod
    def _fetch(cur: psycopg.Cursor[Any], mode: str) -> Any:
        if mode == "all":
            return cur.fetchall() if cur.description else []
        if mode == "one":
            return cur.fetchone() if cur.description else None
        if mode == "id":
            row = cur.fetchone() if cur.description else None
            return int(row[0]) if row and row[0] is not None else 0
        return cur.rowcount if cur.rowcount is not None else -1

    def _execute(self, conn: psycopg.Connection[Any], query: str, params: Any, mode: str) -> Any:
        with conn.cursor() as cur:
            if mode == "many":
                cur.executemany(query, params)
                return None
            if mode == "script":
                cur.execute(query)
                return None
            cur.execute(query, params)
            return self._fetch(cur, mode)

    def _statement(self, query: str, params: Any, mode: str) -> Any:
        tx = self._tx()
        if tx.depth:
            return self._in_tx(tx, query, params, mode)
        if mode in ("all", "one") and is_read(query):
            return self._read(query, params, mode)
        with self.transaction():
            return self._in_tx(tx, query, params, mode)

    def _read(self, query: str, params: Any, mode: str) -> Any:
        deadline = self._deadline()
        attempt = 0
        while True:
            try:
                with self._pool.connection() as conn:
                    return self._execute(conn, query, params, mode)
            except psycopg.Error as exc:
                if not is_transient(exc):
                    raise self._explain(exc) from exc
                self._pause(attempt, deadline, exc)
            except psycopg_pool.PoolTimeout as exc:
                self._pause(attempt, deadline, exc)
            attempt += 1

    def _in_tx(self, tx: _Tx, query: str, params: Any, mode: str) -> Any:
        pinned: int | None = None
        deadline = self._deadline()
        attempt = 0
        while True:
            try:
                assert tx.conn is not None
                result = self._execute(tx.conn, query, params, mode)
                break
            except psycopg.Error as exc:
                if not is_transient(exc):
                    raise self._explain(exc) from exc
                self._reopen(tx, exc, deadline, attempt)
            attempt += 1
        if mode == "id":
            pinned = result or None
        if not is_read(query):
            tx.wrote = True
        if tx.replayable:
            tx.log.append(_Entry(query, params, mode, _digest(result), pinned))
            if len(tx.log) > _LOG_LIMIT:
                tx.replayable, tx.log = False, []
        return result

    # -- transactions ---------------------------------------------------------------------------

    def _begin(self, tx: _Tx) -> None:
        """A connection for the thread's transaction, BEGIN, the write lock, then the
        statements run so far (each must give the result it gave before)."""
        pool = self._pool
        conn = pool.getconn()
        tx.conn, tx.pool = conn, pool
        conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({LOCK_WRITE}, {self.key})")
        highest: dict[str, int] = {}  # table → the largest id a replay gave a row
        for entry in tx.log:
            query, params = entry.query, entry.params
            if entry.pinned_id is not None:
                pinned = _pinned_insert(query)
                if pinned is None:
                    raise _Diverged(query)
                query, params = pinned, (entry.pinned_id, *params)
                table = _INSERT_TABLE.match(query)
                if table:
                    name = table.group(1)
                    highest[name] = max(highest.get(name, 0), entry.pinned_id)
            result = self._execute(conn, query, params, entry.mode)
            if entry.mode in ("many", "script"):
                continue
            if _digest(result) != entry.digest:
                raise _Diverged(query)
        # A replayed row keeps the id it was given, bypassing the table's sequence; after a
        # server crash the sequence can be behind those ids (its advance was never flushed),
        # and the next insert would take one of them. Move each sequence past them.
        for name, top in sorted(highest.items()):
            conn.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), GREATEST(%s,"
                         " nextval(pg_get_serial_sequence(%s, 'id')) - 1))", (name, top, name))

    def _drop(self, tx: _Tx) -> None:
        conn, tx.conn = tx.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
            with contextlib.suppress(Exception):
                (tx.pool or self._pool).putconn(conn)

    def _reopen(self, tx: _Tx, exc: BaseException, deadline: float, attempt: int) -> None:
        """After a transient failure inside a transaction: a new one, replayed to where the old
        one was; TransientWriteError when that cannot be done."""
        self._drop(tx)
        if not tx.replayable:
            raise TransientWriteError(
                f"the database connection failed mid-transaction ({_first_line(exc)}) and the "
                "transaction was too large to replay; nothing of it was written, run it again"
            ) from exc
        while True:
            self._pause(attempt, deadline, exc)
            attempt += 1
            try:
                self._begin(tx)
                return
            except _Diverged:
                self._drop(tx)
                raise TransientWriteError(
                    f"the database connection failed mid-transaction ({_first_line(exc)}) and "
                    "the data changed before it could be replayed; nothing of it was written, "
                    "run it again") from exc
            except psycopg.Error as again:
                self._drop(tx)
                if not is_transient(again):
                    raise self._explain(again) from again
                exc = again
            except psycopg_pool.PoolTimeout as again:
                self._drop(tx)
                exc = again

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Store]:
        tx = self._tx()
        if tx.depth:
            tx.depth += 1
            try:
                yield self
            finally:
                tx.depth -= 1
            return
        tx.log, tx.replayable, tx.wrote = [], True, False
        tx.token = uuid.uuid4().hex
        deadline = self._deadline()
        attempt = 0
        while True:
            try:
                self._begin(tx)
                break
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                self._drop(tx)
                if isinstance(exc, psycopg.Error) and not is_transient(exc):
                    raise self._explain(exc) from exc
                self._pause(attempt, deadline, exc)
            attempt += 1
        tx.depth = 1
        try:
            yield self
        except BaseException:
            tx.depth = 0
            self._rollback(tx)
            raise
        tx.depth = 0
        try:
            self._commit(tx)
        finally:
            tx.log = []

    def _rollback(self, tx: _Tx) -> None:
        conn = tx.conn
        if conn is None:
            return
        try:
            conn.execute("ROLLBACK")
        except Exception:
            self._drop(tx)
            return
        tx.conn = None
        (tx.pool or self._pool).putconn(conn)

    def _commit_sql(self, tx: _Tx) -> str:
        if not tx.wrote:
            return "COMMIT"
        self._commits += 1
        prune = ("DELETE FROM kenning_commits WHERE at < now() - interval '1 day'; "
                 if self._commits % 500 == 1 else "")
        return (f"{prune}INSERT INTO kenning_commits(token) VALUES ('{tx.token}'); "
                "UPDATE kenning_changes SET n = n + 1 WHERE id = 1; COMMIT")

    def _commit(self, tx: _Tx) -> None:
        deadline = self._deadline()
        attempt = 0
        while True:
            conn = tx.conn
            assert conn is not None
            pid = conn.info.backend_pid
            try:
                conn.execute(self._commit_sql(tx))
            except psycopg.Error as exc:
                if not is_transient(exc):
                    self._rollback(tx)
                    raise self._explain(exc) from exc
                self._drop(tx)
                if not tx.wrote:
                    return  # a read-only transaction: nothing to keep
                if self._committed(tx.token, pid, deadline):
                    return
                self._reopen(tx, exc, deadline, attempt)
                attempt += 1
                continue
            tx.conn = None
            (tx.pool or self._pool).putconn(conn)
            return

    def _committed(self, token: str, pid: int, deadline: float) -> bool:
        """Whether the transaction with ``token`` committed, once its session (``pid``) is gone
        for certain: a session still finishing its COMMIT is ended first."""
        attempt = 0
        while True:
            try:
                with self._pool.connection() as conn:
                    for _ in range(200):
                        alive = conn.execute(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                            " WHERE pid = %s AND application_name = %s",
                            (pid, self._app)).fetchone()
                        if alive is None:
                            break
                        time.sleep(0.05)
                    row = conn.execute("SELECT 1 FROM kenning_commits WHERE token = %s",
                                       (token,)).fetchone()
                    return row is not None
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                if isinstance(exc, psycopg.Error) and not is_transient(exc):
                    raise self._explain(exc) from exc
                self._pause(attempt, deadline, exc)
            attempt += 1

    @property
    def in_transaction(self) -> bool:
        return self._tx().depth > 0

    # -- errors ---------------------------------------------------------------------------------

    def _explain(self, exc: psycopg.Error) -> Exception:
        """A one-line KenningError for the failures a person must fix; others as they are."""
        if isinstance(exc, errors.InsufficientPrivilege):
            return KenningError(
                f"database role {self.target.user or '(default)'} may not do this in "
                f"{self.describe()} ({_first_line(exc)}); use a role that may write the schema")
        if isinstance(exc, errors.ReadOnlySqlTransaction):
            return KenningError(f"{self.describe()} is read-only (a standby or a read-only "
                                f"role): {_first_line(exc)}; write through the primary")
        return exc

    # -- portable SQL ---------------------------------------------------------------------------

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self._statement(translate(sql), tuple(params), "all")  # type: ignore[no-any-return]

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        return self._statement(translate(sql), tuple(params), "one")  # type: ignore[no-any-return]

    def run(self, sql: str, params: Params = ()) -> int:
        return int(self._statement(translate(sql), tuple(params), "count"))

    def insert(self, sql: str, params: Params = ()) -> int:
        return int(self._statement(_with_returning(translate(sql)), tuple(params), "id"))

    def many(self, sql: str, rows: Iterable[Params]) -> None:
        batch = [tuple(r) for r in rows]
        if batch:
            self._statement(translate(sql), batch, "many")

    def stream(self, sql: str, params: Params = (), size: int = 2000
               ) -> Iterator[tuple[Any, ...]]:
        query, args = translate(sql), tuple(params)
        if self._tx().depth:
            yield from self._statement(query, args, "all")
            return
        deadline = self._deadline()
        attempt = 0
        while True:
            given = 0
            try:
                with self._pool.connection() as conn, conn.transaction(), \
                        conn.cursor(name=f"kenning_stream_{uuid.uuid4().hex[:8]}") as cur:
                    cur.itersize = size
                    cur.execute(query, args)
                    while batch := cur.fetchmany(size):
                        given += len(batch)
                        yield from batch
                return
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                if given or (isinstance(exc, psycopg.Error) and not is_transient(exc)):
                    raise (self._explain(exc) if isinstance(exc, psycopg.Error) else exc
                           ) from exc
                self._pause(attempt, deadline, exc)
            attempt += 1

    def script(self, sql: str) -> None:
        self._statement(sql, None, "script")

    # -- meta -------------------------------------------------------------------------------------

    # (base.py's get_meta/set_meta/delete_meta are portable)

    # -- backend-specific -----------------------------------------------------------------------

    def _extension_schema(self, conn: psycopg.Connection[Any]) -> str | None:
        row = conn.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n"
                           " ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()
        return str(row[0]) if row else None

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        """Apply the migrations this schema has not seen, each in its own transaction, under
        an advisory lock: a second process migrating at once waits, then finds them done."""
        current = self._applied(conn)
        if current > schema_mod.SCHEMA_VERSION:
            raise self._newer(current)
        if current == schema_mod.SCHEMA_VERSION:
            return
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_MIGRATE, self.key))
        try:
            current = self._applied(conn)
            if current > schema_mod.SCHEMA_VERSION:
                raise self._newer(current)
            if current == schema_mod.SCHEMA_VERSION:
                return
            self._prepare(conn)
            ident = sql.Identifier(self.schema).as_string(conn)
            # lower() follows the database's locale, which leaves non-ASCII capitals alone in
            # the C locale; PostgreSQL 17's built-in pg_c_utf8 collation lowers them anywhere.
            collate = (" COLLATE pg_c_utf8" if conn.execute(
                "SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8'").fetchone() else "")
            for number in range(current, schema_mod.SCHEMA_VERSION):
                migration = schema_mod.MIGRATIONS[number]
                with conn.transaction():
                    done = conn.execute(
                        sql.SQL("SELECT 1 FROM {}.schema_migrations WHERE version = %s").format(
                            sql.Identifier(self.schema)), (number + 1,)).fetchone()
                    if done:
                        continue
                    script = migration(ident, collate)
                    if script.strip():
                        conn.execute(script)
                    conn.execute(
                        sql.SQL("INSERT INTO {}.schema_migrations(version, name, applied)"
                                " VALUES (%s, %s, to_char(now() AT TIME ZONE 'UTC',"
                                " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))").format(
                            sql.Identifier(self.schema)),
                        (number + 1, schema_mod.name(migration)))
            with conn.transaction():
                # Names this database: caches keyed by it never outlive a rebuild.
                conn.execute(sql.SQL("INSERT INTO {}.meta(key, value) VALUES ('index_id', %s)"
                                     " ON CONFLICT (key) DO NOTHING").format(
                    sql.Identifier(self.schema)), (os.urandom(8).hex(),))
        except errors.InsufficientPrivilege as exc:
            raise KenningError(
                f"database role {self.target.user or '(default)'} may not create the index in "
                f"{self.describe()} ({_first_line(exc)}); grant it CREATE on the database, or "
                "let a role that may run Kenning once") from None
        except errors.ReadOnlySqlTransaction as exc:
            raise KenningError(f"{self.describe()} is read-only ({_first_line(exc)}); the "
                               "index must be created through the primary") from None
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_MIGRATE, self.key))

    def _applied(self, conn: psycopg.Connection[Any]) -> int:
        exists = conn.execute("SELECT to_regclass(%s)",
                              (f"{self.schema}.schema_migrations",)).fetchone()
        if not exists or exists[0] is None:
            return 0
        row = conn.execute(sql.SQL("SELECT COALESCE(max(version), 0) FROM {}.schema_migrations"
                                   ).format(sql.Identifier(self.schema))).fetchone()
        return int(row[0]) if row else 0

    def _newer(self, version: int) -> KenningError:
        return KenningError(f"index schema v{version} in {self.describe()} is newer than this "
                            f"Kenning (v{schema_mod.SCHEMA_VERSION}); upgrade Kenning or point "
                            "it at another schema (?schema=NAME)")

    def _prepare(self, conn: psycopg.Connection[Any]) -> None:
        """The schema, the pgvector extension and the bookkeeping table."""
        if self._extension_schema(conn) is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except errors.InsufficientPrivilege:
                raise KenningError(
                    f"pgvector is not enabled in database {self.target.dbname}: a superuser "
                    "(or the database owner) must run `CREATE EXTENSION vector;` in it once"
                ) from None
            except (errors.FeatureNotSupported, errors.UndefinedFile,
                    errors.UndefinedObject) as exc:
                raise KenningError(
                    f"pgvector is not installed on the server of {self.describe()} "
                    f"({_first_line(exc)}); install it (e.g. the postgresql-NN-pgvector "
                    "package), then run `CREATE EXTENSION vector;` in the database") from None
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                              (self.schema,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                sql.Identifier(self.schema)))
        conn.execute(schema_mod.bootstrap_sql(sql.Identifier(self.schema).as_string(conn)))

    def schema_version(self) -> int:
        return int(self.scalar("SELECT COALESCE(max(version), 0) FROM schema_migrations",
                               default=0))

    def change_token(self) -> Any:
        return self.scalar("SELECT n FROM kenning_changes WHERE id = 1", default=0)

    @contextlib.contextmanager
    def _session_lock(self, cls: int, wait: float, busy: Callable[[str], Exception]
                      ) -> Iterator[None]:
        """Hold a session-level advisory lock on a pooled connection kept for the purpose (the
        server releases it when that session dies); poll for up to ``wait`` seconds (at least
        half a second)."""
        deadline = self._deadline()
        attempt = 0
        while True:
            pool = self._pool
            conn: psycopg.Connection[Any] | None = None
            try:
                conn = pool.getconn()
                conn.execute("SELECT 1")
                break
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                if conn is not None:
                    conn.close()
                    pool.putconn(conn)
                if isinstance(exc, psycopg.Error) and not is_transient(exc):
                    raise self._explain(exc) from exc
                self._pause(attempt, deadline, exc)
            attempt += 1
        try:
            deadline = time.monotonic() + max(wait, 0.5)
            while True:
                got = conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                   (cls, self.key)).fetchone()
                if got and got[0]:
                    break
                if time.monotonic() >= deadline:
                    raise busy(self._holder(conn, cls))
                time.sleep(0.1)
            try:
                yield
            finally:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (cls, self.key))
                except psycopg.Error:
                    conn.close()  # the session, and the lock with it, is gone either way
        finally:
            pool.putconn(conn)

    def _holder(self, conn: psycopg.Connection[Any], cls: int) -> str:
        row = conn.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.classid = %s AND l.objid = %s"
            " AND l.objsubid = 2 AND l.granted", (cls, self.key)).fetchone()
        return f" ({row[0]})" if row and row[0] else ""

    def _lock_held(self, cls: int) -> bool:
        return bool(self.scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ?"
            " AND objid = ? AND objsubid = 2 AND granted", (cls, self.key), default=0))

    @contextlib.contextmanager
    def writer_lock(self, *, wait: float = 0.0) -> Iterator[None]:
        with self._session_lock(
                LOCK_INDEX, wait,
                lambda who: IndexBusy(f"another kenning process is writing the index{who}; wait "
                                      "for it to finish or pass --wait SECONDS")):
            yield

    def lock_held(self) -> bool:
        return self._lock_held(LOCK_INDEX)

    def describe(self) -> str:
        return self.target.describe()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        tx = getattr(self._local, "tx", None)
        if tx is not None and tx.conn is not None:
            self._drop(tx)
        self._pool.close()

    # == lexical search ==================================================================
    # A TextQuery becomes one tsquery per clause: a term or phrase is stemmed by the schema's
    # configuration and restricted to title/heading/body (weights A-C), a CJK word is a phrase
    # of its bigrams (a prefix for one character) restricted to the cjk column (D). The score is
    # FTS5's BM25 computed in SQL (kenning_bm25), with the same column weights and IDF over the
    # whole table, so rankings follow SQLite's.

    def _clause_text(self, text: str, kind: str) -> str:
        if kind == "cjk":
            from kenning.index.cjk import bigrams

            if len(text) == 1:
                return f"{_ts_quote(text)}:*D"
            return " <-> ".join(f"{_ts_quote(b)}:D" for b in bigrams(text))
        folded = _fold(text)
        return f"{_ts_quote(folded)}:ABC" if kind == "match" else _ts_quote(folded)

    def _lexical(self) -> dict[Any, Any]:
        """Normalised clauses, their chunk counts and the table's size, valid until the index
        changes (keyed by the change token)."""
        token = self.change_token()
        cache = self._lexical_cache
        if cache.get("token") != token:
            cache = self._lexical_cache = {"token": token}
        return cache

    def _normalised(self, cache: dict[Any, Any], clauses: list[tuple[str, str]]
                    ) -> list[tuple[str, int]]:
        """(normalised tsquery text, chunks matching it) for each (text, kind) clause."""
        missing = [c for c in dict.fromkeys(clauses) if c not in cache]
        if missing:
            values = ", ".join("(?, to_tsquery(CAST(? AS regconfig), ?))" for _ in missing)
            args: list[Any] = []
            for n, (text, kind) in enumerate(missing):
                config = "pg_catalog.simple" if kind == "cjk" else f"{self.schema}.kenning_fts"
                args += [n, config, self._clause_text(text, kind)]
            found = self.rows(
                f"SELECT q.n, q.tq::text, CASE WHEN numnode(q.tq) = 0 THEN 0 ELSE"
                f" (SELECT count(*) FROM chunks_fts f WHERE f.tsv @@ q.tq) END"
                f" FROM (VALUES {values}) AS q(n, tq)", args)
            for n, text, count in found:
                cache[missing[n]] = (text, int(count))
        return [cache[c] for c in clauses]

    def _table_stats(self, cache: dict[Any, Any]) -> tuple[int, float]:
        if "stats" not in cache:
            row = self.one(f"SELECT count(*), COALESCE(avg({_LENGTH}), 0) FROM chunks_fts f")
            cache["stats"] = (int(row[0]), float(row[1])) if row else (0, 0.0)
        return cache["stats"]  # type: ignore[no-any-return]

    #: A clause matching more chunks than this is "common": the chunks ranked are those
    #: matching a rarer clause (a common word adds to their score but does not make a chunk a
    #: candidate), and when every clause is common, this many of their chunks.
    LEXICAL_CANDIDATES = 2000
    #: At most this many clauses (the rarest) are scored.
    LEXICAL_SCORED = 64

    def match_chunks(self, query: TextQuery, *, where: str = "", params: Params = (),
                     limit: int = 200) -> list[tuple[int, int, int, str, float]]:
        if query.empty:
            return []
        clauses = ([(t, "match") for t in (*query.terms, *query.phrases)]
                   + [(r, "cjk") for r in query.cjk])
        cache = self._lexical()
        parts = [(text, count) for text, count in self._normalised(cache, clauses) if text]
        if not parts or (query.all_terms and len(parts) < len(clauses)):
            return []
        total, avglen = self._table_stats(cache)
        # The rarest clauses are scored (a long query's common words add next to nothing).
        scored = sorted(parts, key=lambda part: part[1])[:self.LEXICAL_SCORED]
        join = " & " if query.all_terms else " | "
        everything = join.join(f"( {t} )" for t, _ in parts)
        cap = self.LEXICAL_CANDIDATES
        rare = [t for t, n in parts if n <= cap]
        if query.all_terms or not rare:
            candidates, capped = everything, not query.all_terms or min(
                n for _, n in parts) > cap
        else:
            candidates, capped = " | ".join(f"( {t} )" for t in rare), False
        # Each clause: idf * BM25's saturated term frequency (k1 = 1.2, b = 0.75), as FTS5
        # computes it. The frequency is counted per column (title 5, heading 2, body 1, cjk 1)
        # from ts_rank: for one word with all its positions weighted 1 it is H2(n)/H2(inf), H2
        # the sum of 1/j^2, so n comes back exactly; title positions come first, then heading,
        # then body, so weights {A}, {A,B}, {A,B,C} give the counts cumulatively. A phrase counts
        # as its least frequent word. The row length is the chunk's tokens (chunks_fts.ntok).
        args: list[Any] = []
        columns: list[str] = []
        tfs: list[str] = []
        for n, (text, _count) in enumerate(scored):
            words = _LEXEMES.findall(text)
            per_word = []
            for w, (word, prefix, weights) in enumerate(words[:8]):
                quoted = _ts_quote(word.replace("''", "'"))
                operand = f"{quoted}:*{weights}" if prefix else f"{quoted}:{weights or 'ABC'}"
                name = f"c{n}_{w}"
                if weights == "D" or prefix:
                    columns.append(f"{_ranked('{1,1,1,1}')} AS {name}_d")
                    args.append(operand)
                    per_word.append(f"{WEIGHTS[3]!r} * {_count_of(f'm.{name}_d')}")
                    continue
                for cut, mask in (("a", "{0,0,0,1}"), ("ab", "{0,0,1,1}"), ("abc", "{0,1,1,1}")):
                    columns.append(f"{_ranked(mask)} AS {name}_{cut}")
                    args.append(operand)
                na, nab, nabc = (_count_of(f"m.{name}_{cut}") for cut in ("a", "ab", "abc"))
                per_word.append(f"({WEIGHTS[0]!r} * {na} + {WEIGHTS[1]!r} * ({nab} - {na})"
                                f" + {WEIGHTS[2]!r} * ({nabc} - {nab}))")
            tf = per_word[0] if len(per_word) == 1 else f"LEAST({', '.join(per_word)})"
            tfs.append(f"{_idf(total, _count)!r} * {_saturate(tf, avglen)}")
        score = " + ".join(tfs)
        source = ("(SELECT * FROM chunks_fts WHERE tsv @@ CAST(? AS tsquery) LIMIT "
                  f"{int(cap)})" if capped else "chunks_fts")
        rows = self.rows(
            f"""
            WITH m AS (
                SELECT c.id, c.page_id, c.start_line, c.heading, {_LENGTH} AS len,
                       {", ".join(columns)}
                FROM {source} f
                JOIN chunks c ON c.id = f.rowid
                JOIN pages p ON p.id = c.page_id
                WHERE f.tsv @@ CAST(? AS tsquery) {where}
            )
            SELECT m.id, m.page_id, m.start_line, m.heading, {score} AS score
            FROM m ORDER BY score DESC, m.id
            LIMIT {int(limit)}
            """,
            (*args, *([everything] if capped else []), candidates, *params))
        return [(int(a), int(b), int(c), d, float(e)) for a, b, c, d, e in rows]

    def match_counts(self, terms: Sequence[str], cjk: Sequence[str] = ()) -> dict[str, int]:
        clauses = [(t, "any") for t in terms] + [(r, "cjk") for r in cjk]
        out: dict[str, int] = {}
        found = self._normalised(self._lexical(), clauses)
        for (text, _kind), (_norm, count) in zip(clauses, found, strict=True):
            out[text] = count
        return out


    # == indexing and vectors ============================================================

    # Vectors live in pgvector columns (float32). Each dimension has its own HNSW index (cosine),
    # a partial expression index made by the first nearest() above HNSW_MIN_VECTORS; below
    # HNSW_MIN_VECTORS vectors, nearest() scans exactly, which is faster there and exact.

    def _with_conn(self, work: Callable[[psycopg.Connection[Any]], Any]) -> Any:
        """Run a read-only ``work(conn)`` on the thread's transaction, or on a pooled connection
        inside a read-only transaction, retried as a whole on a transient failure."""
        tx = self._tx()
        if tx.depth and tx.conn is not None:
            return work(tx.conn)
        deadline = self._deadline()
        attempt = 0
        while True:
            try:
                with self._pool.connection() as conn, conn.transaction():
                    conn.execute("SET TRANSACTION READ ONLY")
                    return work(conn)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                if isinstance(exc, psycopg.Error) and not is_transient(exc):
                    raise self._explain(exc) from exc
                self._pause(attempt, deadline, exc)
            attempt += 1

    def _raw_vectors(self, cur: psycopg.Cursor[Any]) -> None:
        """Vectors of this cursor's rows as pgvector's binary bytes (decoded in bulk)."""
        if self._vector_info is not None:
            cur.adapters.register_loader(self._vector_info.oid, _RawVector)

    def sound_vector(self, alias: str = "e") -> str:
        return f"{alias}.dim = ? AND vector_dims({alias}.vector) = {alias}.dim"

    def _ensure_hnsw(self, dim: int) -> None:
        if dim in self._hnsw:
            return
        name = f"embeddings_hnsw_{int(dim)}"
        self.run(f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw"
                 f" ((vector::vector({int(dim)})) vector_cosine_ops)"
                 f" WITH (m = {int(self.HNSW_M)}, ef_construction = {int(self.HNSW_BUILD)})"
                 f" WHERE dim = {int(dim)}")
        self._hnsw.add(dim)

    def put_vectors(self, model: str, dim: int, rows: Sequence[tuple[str, np.ndarray]],
                    storage: str = "float32") -> None:
        import numpy as np

        if not rows:
            return
        with self.transaction():
            self.many("INSERT INTO embeddings(model, text_hash, dim, vector) VALUES (?, ?, ?, ?)"
                      " ON CONFLICT (model, text_hash) DO UPDATE"
                      " SET dim = excluded.dim, vector = excluded.vector",
                      [(model, digest, int(dim), np.asarray(vec, dtype=np.float32))
                       for digest, vec in rows])

    def chunk_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        def work(conn: psycopg.Connection[Any]) -> tuple[np.ndarray, np.ndarray]:
            with conn.cursor(binary=True) as cur:
                self._raw_vectors(cur)
                cur.execute("SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
                            " ON e.text_hash = c.text_hash AND e.model = %s AND e.dim = %s"
                            " AND vector_dims(e.vector) = e.dim ORDER BY c.id", (model, dim))
                rows = cur.fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = _decode_vectors([r[1] for r in rows], dim)
            finite = np.isfinite(vectors).all(axis=1)
            if not finite.all():
                ids, vectors = ids[finite], vectors[finite]
            return ids, vectors

        return self._with_conn(work)  # type: ignore[no-any-return]

    def read_vectors(self, size: int = 2000) -> Iterator[list[tuple[str, str, int, np.ndarray]]]:
        last = 0
        while True:
            def work(conn: psycopg.Connection[Any], after: int = last) -> list[Any]:
                with conn.cursor(binary=True) as cur:
                    self._raw_vectors(cur)
                    cur.execute("SELECT id, model, text_hash, dim, vector FROM embeddings"
                                " WHERE id > %s AND vector_dims(vector) = dim ORDER BY id"
                                " LIMIT %s", (after, size))
                    return cur.fetchall()

            batch = self._with_conn(work)
            if not batch:
                return
            last = int(batch[-1][0])
            yield [(model, digest, int(dim), _decode_vectors([blob], int(dim))[0])
                   for _id, model, digest, dim, blob in batch]

    #: Below this many vectors of a model, nearest() scans them all on the server (exact, and
    #: as fast as the index there); above, the HNSW index serves (measured: docs/benchmarks.md,
    #: bench/pg_vectors.py). Either way no process holds the matrix, so a write by another
    #: process costs no reload.
    HNSW_MIN_VECTORS = 5_000
    #: hnsw.ef_search: the candidate list of an index scan (recall against latency).
    HNSW_EF_SEARCH = 400
    #: The index's build parameters (m: links per node; ef_construction: candidates per insert).
    HNSW_M = 24
    HNSW_BUILD = 200

    def nearest(self, model: str, dim: int, query: np.ndarray, k: int,
                allowed: Sequence[int] | None = None) -> list[tuple[int, float]] | None:
        import numpy as np

        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        if vec.shape[0] != dim or k <= 0:
            return []
        d = int(dim)
        if allowed is not None:
            # A few chunks: scan exactly those.
            ids = [int(i) for i in allowed]
            if not ids:
                return []
            return self._nearest(
                "SELECT c.id, 1 - (e.vector <=> %s) AS score FROM chunks c"
                " JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = %s"
                f" AND e.dim = {d} WHERE c.id = ANY(%s) ORDER BY score DESC, c.id LIMIT %s",
                (vec, model, ids, int(k)), None)
        approximate = self._vector_count(model, d) >= self.HNSW_MIN_VECTORS
        if approximate and d not in self._hnsw:
            # Built on the first approximate search, not with the vectors: maintaining an HNSW
            # index row by row made storing vectors ~50x slower (55-200 a second), and the
            # dense arm of search reads the in-process matrix on both backends anyway.
            with self.transaction():
                self._ensure_hnsw(d)
        return self._nearest_chunks(model, d, vec, int(k), approximate)

    def _nearest_chunks(self, model: str, dim: int, vec: np.ndarray, k: int,
                        approximate: bool) -> list[tuple[int, float]]:
        """Top ``k`` chunks: the nearest stored vectors (by the HNSW index when
        ``approximate``, else a full scan), joined to the chunks that use them; vectors no
        chunk uses any more (old texts) are skipped by asking for more until ``k`` are found."""
        column = f"e.vector::vector({dim})" if approximate else "e.vector"
        want = 2 * k + 10
        total = self._vector_count(model, dim)
        while True:
            rows = self._nearest(
                "WITH near AS ("
                f" SELECT e.text_hash, {column} <=> %s::vector({dim}) AS distance"
                f" FROM embeddings e WHERE e.dim = {dim} AND e.model = %s"
                f" ORDER BY {column} <=> %s::vector({dim}) LIMIT %s)"
                " SELECT c.id, 1 - near.distance FROM near"
                " JOIN chunks c ON c.text_hash = near.text_hash"
                " ORDER BY near.distance, c.id LIMIT %s",
                (vec, model, vec, want, k),
                # pgvector allows at most 1000; its iterative scan goes on past that.
                min(1000, max(self.HNSW_EF_SEARCH, want)) if approximate
                else None)
            if len(rows) >= k or want >= total:
                return rows
            want *= 4

    def nearest_exact(self, model: str, dim: int, query: np.ndarray, k: int
                      ) -> list[tuple[int, float]]:
        """Top ``k`` by a full scan on the server (what the index is measured against)."""
        import numpy as np

        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        return self._nearest_chunks(model, int(dim), vec, int(k), False)

    def _nearest(self, query_sql: str, args: tuple[Any, ...], ef_search: int | None
                 ) -> list[tuple[int, float]]:
        def work(conn: psycopg.Connection[Any]) -> list[tuple[int, float]]:
            if ef_search:
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true),"
                             " set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                             (str(ef_search),))
            rows = conn.execute(query_sql, args).fetchall()
            return [(int(i), float(score)) for i, score in rows]

        return self._with_conn(work)  # type: ignore[no-any-return]

    def _vector_count(self, model: str, dim: int) -> int:
        cache = self._lexical()
        key = ("vectors", model, dim)
        if key not in cache:
            cache[key] = int(self.scalar("SELECT count(*) FROM embeddings WHERE model = ?"
                                         " AND dim = ?", (model, dim), default=0))
        return cache[key]  # type: ignore[no-any-return]

    def _side_schema(self) -> str:
        return f"{self.schema}_rebuild"

    def fresh(self) -> Store:
        self.discard_fresh()
        side = self._side_schema()
        parts = urlsplit(self.target.url)
        query = [*parse_qsl(parts.query, keep_blank_values=True), ("schema", side)]
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query),
                          parts.fragment))
        return PostgresStore(self.root, url, retry_seconds=self.retry_seconds)

    def replace_with(self, fresh: Store) -> None:
        """One transaction renames the schemas: every reader sees the old index or the new."""
        assert isinstance(fresh, PostgresStore)
        side, live = fresh.schema, self.schema
        old = f"{live}_old"
        fresh.close()
        with self.transaction():
            # The change token must move for every process's caches: carry the count on.
            self.run(f"UPDATE {side}.kenning_changes SET n = n + 1 +"
                     f" (SELECT n FROM {live}.kenning_changes WHERE id = 1) WHERE id = 1")
            self.run(f"DROP SCHEMA IF EXISTS {old} CASCADE")
            self.run(f"ALTER SCHEMA {live} RENAME TO {old}")
            self.run(f"ALTER SCHEMA {side} RENAME TO {live}")
            self.run(f"DROP SCHEMA {old} CASCADE")
        self._hnsw.clear()
        self._lexical_cache = {}

    def discard_fresh(self) -> None:
        self.run(f"DROP SCHEMA IF EXISTS {self._side_schema()} CASCADE")

    # == graph, memory, health ===========================================================

    def expected_schema_version(self) -> int:
        return schema_mod.SCHEMA_VERSION

    # == team: locks, tokens, audit, doctor ==============================================

    @contextlib.contextmanager
    def vault_write_lock(self, *, wait: float = 60.0) -> Iterator[None]:
        """Hold the vault write lock (one writer of pages at a time across every process and
        host serving this vault): a session advisory lock keyed by the schema."""
        from kenning.vault.writes import WriteBusy

        with self._session_lock(
                LOCK_VAULT, wait,
                lambda who: WriteBusy(f"another kenning process held the vault write lock for "
                                      f"{wait:g} s{who}; try again")):
            yield

    def vault_lock_held(self) -> bool:
        """True when some process holds the vault's write lock."""
        return self._lock_held(LOCK_VAULT)

    # == team: locks, tokens, audit, doctor ==============================================
    # The PostgreSQL specifics live in pg_checks (audit DDL, WAL positions, server checks).

    def team_ddl(self) -> str:
        from kenning.index.store import pg_checks

        return pg_checks.AUDIT_DDL

    def replication_position(self) -> Any:
        from kenning.index.store import pg_checks

        return pg_checks.wal_position(self)

    def replayed(self, position: Any) -> bool:
        if position is None:
            return True
        from kenning.index.store import pg_checks

        return bool(pg_checks.replayed(self, position))

    def backend_checks(self, read: Store | None = None) -> list[Any]:
        from kenning.index.store import pg_checks

        return list(pg_checks.checks(self, read))
