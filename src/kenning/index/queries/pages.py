"""Page detail for ``show`` and the tag list: portable SQL through a :class:`Store`."""

from __future__ import annotations

from typing import Any

from kenning.index.store.base import Store

Row = tuple[Any, ...]


def page_detail(store: Store, page_id: int) -> Row | None:
    """(path, title, type, domain, status, summary, date, frontmatter, lines, summary_start,
    summary_end) of a page."""
    return store.one(
        "SELECT path, title, type, domain, status, summary, date, frontmatter, lines,"
        " summary_start, summary_end FROM pages WHERE id = ?", (page_id,))


def page_facts(store: Store, page_id: int) -> list[Row]:
    """(line, relation, target, text, valid_from, valid_to, status, successor, epistemic,
    confidence, source) of a page's facts, by line."""
    return store.rows(
        "SELECT line, relation, target, text, valid_from, valid_to, status, successor,"
        " epistemic, confidence, source FROM facts WHERE page_id = ? ORDER BY line", (page_id,))


def page_timeline(store: Store, page_id: int) -> list[Row]:
    """(line, date, text, source) of a page's timeline, by date then line."""
    return store.rows("SELECT line, date, text, source FROM timeline WHERE page_id = ?"
                      " ORDER BY date, line", (page_id,))


def page_aliases(store: Store, page_id: int) -> list[str]:
    """A page's aliases, sorted."""
    return [r[0] for r in store.rows(
        "SELECT name FROM names WHERE page_id = ? AND kind = 'alias' ORDER BY name",
        (page_id,))]


def page_tags(store: Store, page_id: int) -> list[str]:
    """A page's tags, in their normalised order."""
    return [r[0] for r in store.rows(
        "SELECT tag FROM tags WHERE page_id = ? ORDER BY norm", (page_id,))]


def tag_counts(store: Store) -> list[tuple[str, int]]:
    """Every tag (one spelling of it) and how many pages carry it, most used first."""
    return [(r[0], r[1]) for r in store.rows(
        "SELECT min(tag), count(DISTINCT page_id) FROM tags GROUP BY norm"
        " ORDER BY count(DISTINCT page_id) DESC, norm")]


def _range(column: str, since: str | None, until: str | None, params: list[Any]) -> str:
    """SQL conditions keeping ``column`` (a date, maybe just YYYY-MM) within since..until."""
    conds = []
    if since:
        conds.append(f"substr({column}, 1, 10) >= ?")
        params.append(since)
    if until:
        conds.append(f"substr({column}, 1, 10) <= ?")
        params.append(until)
    return " AND ".join(conds)


def timeline_rows(store: Store, *, since: str | None, until: str | None,
                  page_id: int | None, limit: int) -> list[Row]:
    """(path, title, type, line, date, text, source) of timeline lines dated within
    since..until (either may be open), on one page or all, newest first."""
    params: list[Any] = []
    conds = [c for c in (_range("t.date", since, until, params),) if c]
    if page_id is not None:
        conds.append("t.page_id = ?")
        params.append(page_id)
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    return store.rows(
        "SELECT p.path, p.title, p.type, t.line, t.date, t.text, t.source FROM timeline t"
        f" JOIN pages p ON p.id = t.page_id{where}"
        " ORDER BY t.date DESC, p.path, t.line LIMIT ?", (*params, limit))


def fact_change_rows(store: Store, *, since: str | None, until: str | None,
                     page_id: int | None, limit: int) -> list[Row]:
    """(path, title, type, line, relation, target, text, valid_from, valid_to, status,
    successor, source) of facts that began or ended within since..until, newest change first."""
    params: list[Any] = []
    began = _range("f.valid_from", since, until, params) or "f.valid_from IS NOT NULL"
    ended = _range("f.valid_to", since, until, params) or "f.valid_to IS NOT NULL"
    conds = [f"(({began}) OR ({ended}))"]
    if page_id is not None:
        conds.append("f.page_id = ?")
        params.append(page_id)
    return store.rows(
        "SELECT p.path, p.title, p.type, f.line, f.relation, f.target, f.text, f.valid_from,"
        " f.valid_to, f.status, f.successor, f.source FROM facts f"
        f" JOIN pages p ON p.id = f.page_id WHERE {' AND '.join(conds)}"
        " ORDER BY coalesce(f.valid_to, f.valid_from) DESC, p.path, f.line LIMIT ?",
        (*params, limit))


def pages_of_type(store: Store, page_type: str, limit: int) -> list[Row]:
    """(id, path, title, status, domain, date, frontmatter, summary, title_line) of the pages
    of one type, newest first."""
    return store.rows(
        "SELECT id, path, title, status, domain, date, frontmatter, summary, title_line"
        " FROM pages WHERE type = ? ORDER BY date DESC, path LIMIT ?", (page_type, limit))


def mount_counts(store: Store) -> dict[str, int]:
    """How many pages each mount has in the index ('' is the vault's own)."""
    return {str(m): int(n) for m, n in store.rows(
        "SELECT mount, count(*) FROM pages GROUP BY mount")}
