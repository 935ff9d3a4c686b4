"""When pages were last recalled: the activation half of the recency signal.

Kept in ``.kenning/activity.db``, apart from the index: it is not derived from the vault, a
rebuild neither needs nor erases it, and losing it only makes recency fall back to page dates.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from kenning.index.queries.recall import read_activity, write_activity
from kenning.vault.layout import STATE_DIR

NAME = "activity.db"


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
    found = read_activity(path)
    if found is None:
        return {}
    _SEEN[path] = (stamp, found)
    return found


def record(root: Path, paths: Iterable[str], when: str | None = None) -> None:
    """Note that ``paths`` were recalled now. Best effort: a busy or broken file is skipped."""
    day = when or time.strftime("%Y-%m-%d")
    rows = [(p, day) for p in dict.fromkeys(paths)]
    if not rows:
        return
    write_activity(root / STATE_DIR / NAME, rows)
