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
