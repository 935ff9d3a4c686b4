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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import psycopg_pool
from psycopg import errors, sql
from psycopg.adapt import Dumper
from psycopg.pq import Format

from kenning.errors import IndexBusy, KenningError
from kenning.index.store import postgres_schema as schema_mod
from kenning.index.store.base import Params, Store

log = logging.getLogger(__name__)

#: Kenning's own URL parameters, removed before the URL reaches libpq.
KENNING_PARAMS = ("schema",)
VAULT_ID_FILE = "vault-id"
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}\Z")

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
        where = f"{self.user + '@' if self.user else ''}{self.host}{':' + self.port if self.port else ''}"
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
                           "(letters, digits, _; at most 63)")
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
    depth: int = 0
    log: list[_Entry] = field(default_factory=list)
    replayable: bool = True
    wrote: bool = False
    token: str = ""


_LOG_LIMIT = 200_000  # statements kept for replay; a larger transaction is not replayed


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
        self._ext_schema = "public"
        self._app = f"kenning {os.getpid()}@{socket.gethostname()}"[:63]
        first = self._connect_first()
        try:
            if migrate:
                self._migrate(first)
            self._ext_schema = self._extension_schema(first) or "public"
        finally:
            first.close()
        self._conninfo = psycopg.conninfo.make_conninfo(
            self.target.url, application_name=self._app,
            options=f"-c search_path={self.schema},{self._ext_schema}")
        self._pool = psycopg_pool.ConnectionPool(
            self._conninfo, min_size=1, max_size=pool_size, open=False,
            kwargs={"autocommit": True}, configure=self._configure,
            name=f"kenning-{self.schema}", timeout=max(self.retry_seconds, 1.0),
            reconnect_timeout=0)
        self._pool.open(wait=False)

    # -- connections ----------------------------------------------------------------------------

    def _connect_first(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.target.url, autocommit=True, application_name=self._app,
                                   connect_timeout=10)
        except psycopg.Error as exc:
            raise KenningError(f"cannot connect to {self.describe()}: {_first_line(exc)}; "
                               "check the database URL and that the server is running"
                               ) from None

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.adapters.register_dumper(bool, _BoolAsInt)
        from pgvector.psycopg import register_vector

        with contextlib.suppress(psycopg.ProgrammingError):
            register_vector(conn)

    def _deadline(self) -> float:
        return time.monotonic() + self.retry_seconds

    def _pause(self, attempt: int, deadline: float, exc: BaseException) -> None:
        """Wait before the next attempt, or re-raise when time is up."""
        if time.monotonic() >= deadline or self._closed:
            raise exc
        log.info("postgres: %s; retrying", _first_line(exc))
        with contextlib.suppress(Exception):
            self._pool.check()
        time.sleep(min(0.05 * 2 ** attempt, 1.0, max(0.0, deadline - time.monotonic())))

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
        conn = self._pool.getconn()
        tx.conn = conn
        conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({LOCK_WRITE}, {self.key})")
        for entry in tx.log:
            query, params = entry.query, entry.params
            if entry.pinned_id is not None:
                pinned = _pinned_insert(query)
                if pinned is None:
                    raise _Diverged(query)
                query, params = pinned, (entry.pinned_id, *params)
            result = self._execute(conn, query, params, entry.mode)
            if entry.mode in ("many", "script"):
                continue
            if _digest(result) != entry.digest:
                raise _Diverged(query)

    def _drop(self, tx: _Tx) -> None:
        conn, tx.conn = tx.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
            with contextlib.suppress(Exception):
                self._pool.putconn(conn)

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
        self._pool.putconn(conn)

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
            self._pool.putconn(conn)
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
            for number in range(current, schema_mod.SCHEMA_VERSION):
                migration = schema_mod.MIGRATIONS[number]
                with conn.transaction():
                    done = conn.execute(
                        sql.SQL("SELECT 1 FROM {}.schema_migrations WHERE version = %s").format(
                            sql.Identifier(self.schema)), (number + 1,)).fetchone()
                    if done:
                        continue
                    script = migration(ident)
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
    def _session_lock(self, cls: int, wait: float, busy: Callable[[str], str]
                      ) -> Iterator[None]:
        """Hold a session-level advisory lock on a connection of its own (the server releases
        it when that session dies); poll for up to ``wait`` seconds (at least half a second)."""
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise KenningError(f"cannot connect to {self.describe()}: {_first_line(exc)}"
                               ) from None
        try:
            deadline = time.monotonic() + max(wait, 0.5)
            while True:
                got = conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                   (cls, self.key)).fetchone()
                if got and got[0]:
                    break
                if time.monotonic() >= deadline:
                    raise IndexBusy(busy(self._holder(conn, cls)))
                time.sleep(0.1)
            try:
                yield
            finally:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (cls, self.key))
        finally:
            conn.close()

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
                lambda who: f"another kenning process is writing the index{who}; wait for it to "
                            "finish or pass --wait SECONDS"):
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

    # == indexing and vectors ============================================================

    # == graph, memory, health ===========================================================

    # == team: locks, tokens, audit, doctor ==============================================

    @contextlib.contextmanager
    def vault_write_lock(self, *, wait: float = 30.0) -> Iterator[None]:
        """Hold the vault's Markdown write lock (team mode: one writer across processes)."""
        with self._session_lock(
                LOCK_VAULT, wait,
                lambda who: f"another kenning process is writing the vault{who}; try again"):
            yield

    def vault_lock_held(self) -> bool:
        """True when some process holds the vault's write lock."""
        return self._lock_held(LOCK_VAULT)
