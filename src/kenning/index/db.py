"""TRANSITIONAL: the SQLite schema moved to :mod:`kenning.index.store.sqlite_schema`.

Kept only so modules that still import ``kenning.index.db`` (outside the index layer, owned by
other parts of issue 14) work until they go through the store; delete once nothing imports it.
"""

from kenning.index.store.sqlite_schema import *  # noqa: F403
from kenning.index.store.sqlite_schema import (  # noqa: F401
    DB_NAME,
    LOCK_NAME,
    MIGRATIONS,
    SCHEMA_VERSION,
    _run_script,
    connect,
    db_path,
    get_meta,
    in_batches,
    lock_held,
    migrate,
    rollback,
    schema_version,
    set_meta,
    state_dir,
    transaction,
    writer_lock,
)
