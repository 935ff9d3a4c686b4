"""The database checks of ``kenning doctor``, behind the store: reachable, schema version,
the backend's own needs (pgvector on PostgreSQL, in ``pg_checks``), index coverage and replica
lag. Every finding that fails says its fix."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kenning.index.store.base import Diagnosis, Store

if TYPE_CHECKING:
    from kenning.vault.layout import Config


def page_count(store: Store) -> int:
    """How many pages the index holds."""
    return int(store.scalar("SELECT COUNT(*) FROM pages", default=0))


def portable_checks(store: Store, files: int | None) -> list[Diagnosis]:
    """Schema version and coverage, in portable SQL on any backend."""
    out: list[Diagnosis] = []
    # (a schema that does not match is the doctor's own "schema" finding)
    out.append(Diagnosis("ok", "database", f"{store.describe()}: reachable, schema "
                         f"v{store.schema_version()}"))
    pages = page_count(store)
    indexed = int(store.scalar("SELECT COUNT(*) FROM files", default=0))
    if files is not None and indexed < files:
        out.append(Diagnosis("warn", "database-coverage", f"{indexed} of {files} Markdown "
                             f"files are in the index ({pages} pages)",
                             "kenning index (adds what is missing)"))
    else:
        out.append(Diagnosis("ok", "database-coverage", f"{pages} pages from "
                             f"{indexed} files in the index"))
    model = store.get_meta("embed_model")
    if model:
        chunks = int(store.scalar("SELECT COUNT(*) FROM chunks", default=0))
        embedded = int(store.scalar(
            "SELECT COUNT(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e WHERE "
            "e.model = ? AND e.text_hash = c.text_hash)", (model,), default=0))
        level = "ok" if embedded >= chunks else "warn"
        out.append(Diagnosis(level, "database-vectors", f"{embedded} of {chunks} chunks have "
                             f"vectors ({model})",
                             None if level == "ok" else "kenning index (resumes embedding)"))
    return out


def database_findings(root: Path, config: Config, files: int | None = None,
                      store: Store | None = None) -> list[Diagnosis]:
    """Every database check of the vault at ``root``: opening the configured database (and the
    read replica) is the first; a failure says why and how to fix it, and stops there."""
    from kenning.index.store import database_url, index_present, open_store
    from kenning.vault.layout import vault_files

    url = database_url(root, config.database)
    if store is None and not index_present(root, url):
        return []  # no index yet: the doctor's own first finding says so
    if files is None:
        files = len(vault_files(root, config.exclude)[0])
    own = store is None
    try:
        if store is None:
            store = open_store(root, url)
    except Exception as exc:
        why = _why(exc)
        return [Diagnosis("error", "database", f"cannot open the index database: {why}",
                          _open_fix(url, why), fatal=True)]
    try:
        read = None
        out: list[Diagnosis] = []
        if config.read_url:
            try:
                read = open_store(root, config.read_url)
            except Exception as exc:
                out.append(Diagnosis("error", "replica", f"cannot open database.read_url: "
                                     f"{_why(exc)}", "start the replica or fix read_url in "
                                     ".kenning/config.yaml (searches need it)"))
        try:
            out[:0] = store.diagnose(files, read)
        finally:
            if read is not None:
                read.close()
        return out
    finally:
        if own:
            store.close()


def _why(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    return " ".join(str(message).split())[:400]


def _open_fix(url: str | None, why: str = "") -> str:
    if "pgvector" in why or "extension" in why:
        return ("as a superuser (or the database's owner), once: CREATE EXTENSION vector; "
                "(install pgvector on the server first if it is missing), then kenning index")
    if "newer" in why:
        return "upgrade Kenning (pip install -U kenning) on every machine that uses this index"
    if "unknown scheme" in why:
        return "database: must be postgresql://user@host/dbname (or unset for SQLite)"
    if not url or url.startswith("sqlite:"):
        return "kenning rebuild (makes a new index from the vault)"
    return ("check the URL in database: (.kenning/config.yaml) or KENNING_DATABASE_URL, that "
            "the server is up (pg_isready -d URL) and that the role may log in")


@dataclass(frozen=True)
class IndexState:
    """What ``kenning migrate`` says of the index, read without changing it: whether there is
    one, its schema version (None: on a database server, known only once opened, which
    migrates it) against the version this Kenning migrates it to, and whether its pages were
    derived (chunked, embedded text) the way this Kenning derives them."""

    present: bool
    schema: int | None
    expected: int
    derivation_current: bool | None

    @property
    def stale(self) -> bool:
        """The next writer migrates the schema or re-derives every page."""
        return self.present and ((self.schema is not None and self.schema != self.expected)
                                 or self.derivation_current is False)

    def describe(self) -> str:
        """One line a person reads."""
        if not self.present:
            return "no index yet (`kenning index` builds it)"
        if self.schema is None:
            return "index on a database server: its schema is migrated when Kenning opens it"
        parts = [f"index schema v{self.schema}"]
        if self.schema < self.expected:
            parts.append(f"older than this Kenning's v{self.expected} (migrated when opened)")
        elif self.schema > self.expected:
            parts.append(f"newer than this Kenning's v{self.expected} (`kenning rebuild` "
                         "builds it again)")
        if self.derivation_current is False:
            parts.append("pages derived by an older Kenning (re-derived by the next index)")
        if not self.stale:
            parts.append("up to date")
        return ", ".join(parts)


def index_state(root: Path, url: str | None) -> IndexState:
    """The index's :class:`IndexState`; a SQLite file is opened read-only (no file of the index
    is created or written), a database server is not opened at all."""
    import contextlib
    import sqlite3

    from kenning.index.indexer import DERIVATION
    from kenning.index.store import sqlite_path
    from kenning.index.store.sqlite_schema import SCHEMA_VERSION

    path = sqlite_path(root, url)
    if path is None:
        from kenning.index.store.postgres_schema import SCHEMA_VERSION as PG_VERSION

        return IndexState(True, None, PG_VERSION, None)
    if not path.exists():
        return IndexState(False, None, SCHEMA_VERSION, None)
    # Without a WAL file beside it (the index closed cleanly) the file is all there is: read
    # as immutable, so not even a WAL or shared-memory file is created; with one, read-only.
    wal = path.with_name(path.name + "-wal").exists()
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?{'mode=ro' if wal else 'immutable=1'}",
                             uri=True)
    except sqlite3.Error:
        return IndexState(True, None, SCHEMA_VERSION, None)
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        derived: bool | None = None
        with contextlib.suppress(sqlite3.Error):  # a schema too old for the meta table
            row = db.execute("SELECT value FROM meta WHERE key = 'derivation'").fetchone()
            derived = None if row is None else row[0] == DERIVATION
    except sqlite3.Error:
        return IndexState(True, None, SCHEMA_VERSION, None)
    finally:
        db.close()
    return IndexState(True, version, SCHEMA_VERSION, derived)
