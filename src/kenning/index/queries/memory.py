"""What memory writes and session starts read from the index: portable SQL through a
:class:`Store`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.index.store.base import Store

Row = tuple[Any, ...]


def pages_named(store: Store, norm: str) -> list[tuple[int, str]]:
    """(priority, path) of every page holding the normalised name ``norm``, best first."""
    return [(r[0], r[1]) for r in store.rows(
        "SELECT n.priority, p.path FROM names n JOIN pages p ON p.id = n.page_id"
        " WHERE n.norm = ? ORDER BY n.priority, p.path", (norm,))]


def paths_with_stem(store: Store, norm: str) -> list[str]:
    """The paths of the pages whose file name (normalised, ``.md`` off) is ``norm``."""
    return [r[0] for r in store.rows(
        "SELECT p.path FROM names n JOIN pages p ON p.id = n.page_id"
        " WHERE n.norm = ? AND n.kind = 'stem' ORDER BY p.path", (norm,))]


def held_names(store: Store) -> list[tuple[str, str]]:
    """(name, path) of every title, alias, file name and heading a page holds."""
    return [(r[0], r[1]) for r in store.rows(
        "SELECT DISTINCT n.name, p.path FROM names n JOIN pages p ON p.id = n.page_id"
        " WHERE n.kind IN ('title', 'alias', 'stem', 'heading')")]


def recent_entities(store: Store, folders: Sequence[str], limit: int
                    ) -> list[tuple[int, str, str | None]]:
    """(id, title, type) of the pages in ``folders``, most recently dated first."""
    marks = ",".join("?" * len(folders))
    return [(r[0], r[1], r[2]) for r in store.rows(
        f"SELECT p.id, p.title, p.type FROM pages p WHERE p.folder IN ({marks})"
        " ORDER BY COALESCE(p.date, '') DESC, p.path LIMIT ?", (*folders, limit))]


def aliases_of(store: Store, page_ids: Sequence[int]) -> dict[int, list[str]]:
    """page id → its aliases (by priority, then name)."""
    out: dict[int, list[str]] = {}
    for part, marks in store.in_batches(page_ids):
        for page_id, name in store.rows(
                f"SELECT page_id, name FROM names WHERE kind = 'alias' AND page_id IN ({marks})"
                " ORDER BY page_id, priority, name", part):
            out.setdefault(page_id, []).append(name)
    return out


def changed_pages(store: Store, since_ns: int | None, limit: int
                  ) -> list[tuple[str, str, int]]:
    """(path, title, mtime_ns) of pages (sessions aside) whose files changed after
    ``since_ns``, newest first."""
    where, params = "p.folder != 'sessions'", []
    if since_ns is not None:
        where += " AND f.mtime_ns > ?"
        params.append(since_ns)
    return [(r[0], r[1], r[2]) for r in store.rows(
        f"SELECT p.path, p.title, f.mtime_ns FROM pages p JOIN files f ON f.id = p.id"
        f" WHERE {where} ORDER BY f.mtime_ns DESC, p.path LIMIT ?", (*params, limit))]
