"""The storage seam: :func:`open_store` is the one place that opens the index database.

The backend is chosen by a URL: ``KENNING_DATABASE_URL`` in the environment, else ``database:`` in
``.kenning/config.yaml``, else the vault's own SQLite file. ``postgresql://…`` selects PostgreSQL.
"""

from __future__ import annotations

import os
from pathlib import Path

from kenning.errors import KenningError
from kenning.index.store.base import Store

__all__ = ["Store", "database_url", "index_present", "open_store", "sqlite_path"]

ENV_URL = "KENNING_DATABASE_URL"


def database_url(root: Path, configured: str | None = None) -> str | None:
    """The database URL in force for the vault at ``root`` (None: the vault's SQLite file)."""
    return os.environ.get(ENV_URL) or configured or None


def sqlite_path(root: Path, url: str | None) -> Path | None:
    """The SQLite file ``url`` names (None or ``sqlite:`` alone: the vault's own), or None when
    ``url`` is not a SQLite URL."""
    if url and not url.startswith("sqlite:"):
        return None
    named = url.split(":", 1)[1].removeprefix("//") if url else ""
    if named:
        return Path(named)
    from kenning.index.store.sqlite_schema import db_path

    return db_path(root)


def index_present(root: Path, url: str | None) -> bool:
    """False when the SQLite index file does not exist yet (checked without creating it); a
    database server is assumed to hold one (opening it tells)."""
    path = sqlite_path(root, url)
    return path is None or path.exists()


def open_store(root: Path, url: str | None = None) -> Store:
    """Open (and migrate) the index of the vault at ``root`` at ``url`` (None: SQLite)."""
    path = sqlite_path(root, url)
    if path is not None:
        from kenning.index.store.sqlite import SQLiteStore

        return SQLiteStore(root, path)
    if url.startswith(("postgresql:", "postgres:")):
        from kenning.index.store.postgres import PostgresStore

        return PostgresStore(root, url)
    scheme = url.split(":", 1)[0]
    raise KenningError(f"database URL: unknown scheme {scheme!r}; "
                       "use postgresql://user@host/dbname or leave it unset for SQLite")
