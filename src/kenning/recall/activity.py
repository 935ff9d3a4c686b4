"""When pages were last recalled: the activation half of the recency signal.

Kept in ``.kenning/activity.db``, apart from the index: it is not derived from the vault, a
rebuild neither needs nor erases it, and losing it only makes recency fall back to page dates.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from kenning.vault.layout import STATE_DIR

NAME = "activity.db"


def _connect(root: Path) -> sqlite3.Connection:
    path = root / STATE_DIR / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=0.5, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE IF NOT EXISTS recalled (path TEXT PRIMARY KEY, last TEXT NOT NULL,"
               " count INTEGER NOT NULL DEFAULT 0)")
    return db


_SEEN: dict[Path, tuple[tuple[int, int], dict[str, str]]] = {}


def last_recalled(root: Path) -> dict[str, str]:
    """Path → date (YYYY-MM-DD) it was last recalled; empty when nothing was recorded.

    Read again only when the file (or its WAL) changed: a search should not open a database.
    """
    path = root / STATE_DIR / NAME
    try:
        stamps = [os.stat(p) for p in (path, path.with_name(NAME + "-wal")) if p.exists()]
    except OSError:
        return {}
    if not stamps:
        return {}
    stamp = (sum(st.st_mtime_ns for st in stamps), sum(st.st_size for st in stamps))
    cached = _SEEN.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        db = _connect(root)
        try:
            found = dict(db.execute("SELECT path, last FROM recalled").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    _SEEN[path] = (stamp, found)
    return found


def record(root: Path, paths: Iterable[str], when: str | None = None) -> None:
    """Note that ``paths`` were recalled now. Best effort: a busy or broken file is skipped."""
    day = when or time.strftime("%Y-%m-%d")
    rows = [(p, day) for p in dict.fromkeys(paths)]
    if not rows:
        return
    try:
        db = _connect(root)
        try:
            db.executemany(
                "INSERT INTO recalled(path, last, count) VALUES (?, ?, 1) ON CONFLICT(path)"
                " DO UPDATE SET last = excluded.last, count = count + 1", rows)
        finally:
            db.close()
    except sqlite3.Error:
        pass
