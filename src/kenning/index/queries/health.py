"""What ``kenning doctor`` reads from the index: portable SQL through a :class:`Store`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.index.store.base import Store

Row = tuple[Any, ...]

# Names in a source file's frontmatter (participants, attendees) link to pages when they exist;
# one without a page is not a broken link a person wrote: the build decides which get pages.
_SOURCE_NAMES = "l.kind = 'frontmatter' AND o.path LIKE 'sources/%'"


def indexed_files(store: Store) -> list[tuple[str, int, int, str, str | None]]:
    """(path, size, mtime_ns, status, reason) of every file the index knows."""
    return [(r[0], r[1], r[2], r[3], r[4]) for r in
            store.rows("SELECT path, size, mtime_ns, status, reason FROM files")]


def attachment_paths(store: Store) -> set[str]:
    """Paths of the attachments the index knows."""
    return {r[0] for r in store.rows("SELECT path FROM attachments")}


def problems(store: Store) -> list[tuple[str, int | None, str, str | None, str]]:
    """(path, line, code, field, message) of every page problem, by code, path, line."""
    return [(r[0], r[1], r[2], r[3], r[4]) for r in store.rows(
        """SELECT f.path, p.line, p.code, p.field, p.message FROM problems p
           JOIN files f ON f.id = p.file_id ORDER BY p.code, f.path, p.line""")]


def waiting_source_names(store: Store) -> int:
    """Names in source frontmatter that have no page (yet)."""
    return int(store.scalar(
        f"""SELECT count(*) FROM links l JOIN pages o ON o.id = l.origin_id
            WHERE {_UNUSUAL} AND l.resolution = 'unresolved' AND {_SOURCE_NAMES}""",
        default=0))


#: Every link but those resolved to a page by its path: the rows of the partial index
#: ``links_unusual`` (schema v9), whose WHERE this repeats word for word so that both backends
#: use it. A few thousand of 400,000 links at 10,000 notes.
_UNUSUAL = """(l.resolution IS NULL OR l.resolution <> 'resolved'
    OR l.via IN ('title', 'alias', 'heading', 'shortest') OR l.heading IS NOT NULL)"""
#: The links :func:`kenning.health._links` can make a finding of (all among :data:`_UNUSUAL`):
#: unresolved or ambiguous ones, links (not bare names) reached by title, alias, heading alias
#: or the shortest of several paths, and forward links to a heading or block of a page. Every
#: other link is only counted.
_MAY_BE_FINDING = """(l.resolution IN ('unresolved', 'ambiguous')
    OR (l.plain = 0 AND l.via IN ('title', 'alias', 'heading', 'shortest'))
    OR (l.heading IS NOT NULL AND l.resolution = 'resolved' AND l.plain = 0
        AND l.src_norm IS NULL))"""


def link_rows(store: Store) -> list[Row]:
    """The links but the waiting source names that may be a doctor's finding (see
    :data:`_MAY_BE_FINDING`; the others are only counted, :func:`resolved_counts`): (origin
    path, line, field, ref, kind, embed, plain, resolution, via, reached path, heading, dst id,
    forward), by origin path and line."""
    return [(*r[:12], bool(r[12])) for r in store.rows(
        f"""SELECT o.path, l.line, l.field, COALESCE(l.dst_ref, l.src_ref), l.kind, l.embed,
                   l.plain, l.resolution, l.via, COALESCE(l.file, d.path, s.path), l.heading,
                   l.dst_id, CASE WHEN l.src_norm IS NULL THEN 1 ELSE 0 END
            FROM links l LEFT JOIN pages o ON o.id = l.origin_id
            LEFT JOIN pages d ON d.id = l.dst_id AND l.dst_norm IS NOT NULL
            LEFT JOIN pages s ON s.id = l.src_id AND l.src_norm IS NOT NULL
            WHERE {_UNUSUAL} AND {_MAY_BE_FINDING}
              AND NOT ({_SOURCE_NAMES} AND l.resolution = 'unresolved')
            ORDER BY o.path, l.line, l.id""")]


def resolved_counts(store: Store) -> tuple[int, int]:
    """(links resolved to pages, links resolved to attachments and other files)."""
    total = int(store.scalar("SELECT count(*) FROM links", default=0))
    unusual = store.rows(f"SELECT l.resolution, count(*) FROM links l WHERE {_UNUSUAL}"
                         " GROUP BY l.resolution")
    others = sum(int(n) for state, n in unusual if state != "resolved")
    files = sum(int(n) for state, n in unusual if state == "file")
    return total - others, files


def unresolved_count(store: Store) -> int:
    """Links never resolved (an index run cut short)."""
    return int(store.scalar("SELECT count(*) FROM links WHERE resolution IS NULL", default=0))


def anchors_of(store: Store, page_ids: Sequence[int]) -> dict[int, set[str]]:
    """page id → the headings and block ids it has."""
    out: dict[int, set[str]] = {}
    for part, marks in store.in_batches(page_ids):
        for page_id, anchor in store.rows(
                f"SELECT page_id, anchor FROM anchors WHERE page_id IN ({marks})", part):
            out.setdefault(page_id, set()).add(anchor)
    return out


def shared_aliases(store: Store) -> list[tuple[str, list[str]]]:
    """Names several pages (sources aside) claim as title or alias, at least once as an alias:
    (name, [paths]) by normalised name. Aggregated here, not with ``group_concat``, so both
    backends answer alike."""
    groups: dict[str, tuple[str, dict[str, None], set[int], list[bool]]] = {}
    # Only the names a page claims as alias and another page as title or alias are read (the
    # sources are left out here, where their paths are at hand): at 10,000 notes 8,600 rows of
    # the 21,700 titles and aliases.
    for norm, name, path, kind, page_id in store.rows(
            """SELECT n.norm, n.name, p.path, n.kind, n.page_id FROM names n
               JOIN pages p ON p.id = n.page_id
               WHERE n.kind IN ('title', 'alias') AND p.path NOT LIKE 'sources/%'
                 AND n.norm IN (SELECT a.norm FROM names a WHERE a.kind = 'alias' AND EXISTS (
                     SELECT 1 FROM names b WHERE b.norm = a.norm AND b.page_id <> a.page_id
                     AND b.kind IN ('title', 'alias')))
               ORDER BY n.norm, n.page_id, n.kind, n.name"""):
        _shown, paths, pages, alias = groups.setdefault(norm, (name, {}, set(), [False]))
        paths[path] = None
        pages.add(page_id)
        alias[0] = alias[0] or kind == "alias"
    return [(shown, sorted(paths)) for norm, (shown, paths, pages, alias) in sorted(groups.items())
            if len(pages) > 1 and alias[0]]


def counts(store: Store) -> dict[str, int]:
    """How many pages, chunks, links and facts the index holds."""
    return {name: int(store.scalar(f"SELECT count(*) FROM {name}", default=0))
            for name in ("pages", "chunks", "links", "facts")}


def vector_health(store: Store, model: str, dim: int) -> tuple[int, int, int]:
    """(damaged vectors, chunks with a vector, chunks) for ``model``."""
    from kenning.index import vectors

    done, total = vectors.coverage(store, model, dim)
    return vectors.damaged(store, model, dim), done, total
