"""The storage seam: :func:`open_store` is the one place that opens the index database.

The backend is chosen by a URL: ``KENNING_DATABASE_URL`` in the environment, else ``database:`` in
``.kenning/config.yaml``, else the vault's own SQLite file. ``postgresql://…`` selects PostgreSQL.
"""

from __future__ import annotations

import os
from pathlib import Path

from kenning.errors import KenningError
from kenning.index.store.base import Store

__all__ = ["Store", "database_url", "open_store"]

ENV_URL = "KENNING_DATABASE_URL"


def database_url(root: Path, configured: str | None = None) -> str | None:
    """The database URL in force for the vault at ``root`` (None: the vault's SQLite file)."""
    return os.environ.get(ENV_URL) or configured or None


def open_store(root: Path, url: str | None = None) -> Store:
    """Open (and migrate) the index of the vault at ``root`` at ``url`` (None: SQLite)."""
    if not url or url.startswith("sqlite:"):
        from kenning.index.store.sqlite import SQLiteStore

        path = Path(url.split(":", 1)[1].removeprefix("//")) if url and ":" in url else None
        return SQLiteStore(root, path if path and str(path) else None)
    if url.startswith(("postgresql:", "postgres:")):
        from kenning.index.store.postgres import PostgresStore  # type: ignore[import-not-found]

        return PostgresStore(root, url)  # type: ignore[no-any-return]
    scheme = url.split(":", 1)[0]
    raise KenningError(f"database URL: unknown scheme {scheme!r}; "
                       "use postgresql://user@host/dbname or leave it unset for SQLite")
