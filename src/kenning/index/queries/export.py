"""What ``kenning export`` reads of the index: every page, fact, link, item, timeline line and
vector, in batches (portable SQL through a :class:`Store`, so both backends serve it).

Each reader walks its table by id (``WHERE id > ? ORDER BY id LIMIT ?``): no cursor stays open
between batches, memory holds one batch, and a 10,000-note vault streams. What a batch needs
from other tables (a page's aliases, an item's parties, the chunks a vector belongs to) is read
for that batch only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kenning.index.queries.items import COPY_SELECT, PARTY_SELECT
from kenning.index.queries.recall import chunk_bodies
from kenning.index.store.base import Store

Row = tuple[Any, ...]

BATCH = 1000


def _by_id(store: Store, sql: str, size: int = BATCH) -> Iterator[list[Row]]:
    """Batches of ``sql`` (its first column the id it is ordered by; it ends in
    ``WHERE <id> > ? ORDER BY <id> LIMIT ?`` or the same after ``AND``)."""
    last = -1
    while True:
        rows = store.rows(sql, (last, size))
        if rows:
            yield rows
        if len(rows) < size:
            return
        last = rows[-1][0]


def _grouped(store: Store, sql: str, ids: Sequence[Any]) -> dict[Any, list[Row]]:
    """Rows of ``sql`` (ending in ``IN (`` + marks + ``)`` … given as ``{marks}``) grouped by
    their first column, in the order the query gives them."""
    out: dict[Any, list[Row]] = {}
    for part, marks in store.in_batches(ids):
        for row in store.rows(sql.format(marks=marks), part):
            out.setdefault(row[0], []).append(row[1:])
    return out


#: (id, path, title, type, domain, status, date, created, updated, summary, frontmatter JSON,
#: mount, lines) of a page.
PAGE_COLUMNS = ("id", "path", "title", "type", "domain", "status", "date", "created",
                "updated", "summary", "frontmatter", "mount", "lines")


def page_batches(store: Store) -> Iterator[list[tuple[Row, list[str], list[str]]]]:
    """Every page (:data:`PAGE_COLUMNS`) with its aliases (sorted) and tags, by id."""
    for rows in _by_id(store, f"SELECT {', '.join(PAGE_COLUMNS)} FROM pages WHERE id > ?"
                              " ORDER BY id LIMIT ?"):
        ids = [r[0] for r in rows]
        aliases = _grouped(store, "SELECT page_id, name FROM names WHERE kind = 'alias'"
                                  " AND page_id IN ({marks}) ORDER BY page_id, name", ids)
        tags = _grouped(store, "SELECT page_id, tag FROM tags WHERE page_id IN ({marks})"
                               " ORDER BY page_id, norm", ids)
        yield [(r, [a[0] for a in aliases.get(r[0], [])], [t[0] for t in tags.get(r[0], [])])
               for r in rows]


#: A fact: (id, page path, page title, line, relation, target, text, valid_from, valid_to,
#: recorded, expired, status, successor, epistemic, confidence, source).
def fact_batches(store: Store) -> Iterator[list[Row]]:
    """Every fact with its page's path and title, by id."""
    return _by_id(store, """
        SELECT f.id, p.path, p.title, f.line, f.relation, f.target, f.text, f.valid_from,
               f.valid_to, f.recorded, f.expired, f.status, f.successor, f.epistemic,
               f.confidence, f.source
        FROM facts f JOIN pages p ON p.id = f.page_id WHERE f.id > ? ORDER BY f.id LIMIT ?""")


def link_batches(store: Store) -> Iterator[list[Row]]:
    """Every link, by id: (id, origin path, line, kind, field, rel, source path, source as
    written, target path, target as written, file reached, heading, alias, embed, resolution,
    via, status, valid_from, valid_to, recorded, expired). A path is None where that end did
    not resolve to a page (or, for the source, is the origin page: no source written)."""
    return _by_id(store, """
        SELECT l.id, o.path, l.line, l.kind, l.field, l.rel, s.path, l.src_ref, d.path,
               l.dst_ref, l.file, l.heading, l.alias, l.embed, l.resolution, l.via, l.status,
               l.valid_from, l.valid_to, l.recorded, l.expired
        FROM links l LEFT JOIN pages o ON o.id = l.origin_id
        LEFT JOIN pages s ON s.id = l.src_id LEFT JOIN pages d ON d.id = l.dst_id
        WHERE l.id > ? ORDER BY l.id LIMIT ?""")


def item_batches(store: Store) -> Iterator[list[tuple[Row, list[Row]]]]:
    """Every item copy (``queries.items.COPY_COLUMNS``), by id, with its parties: (role, ord,
    raw, me, party page path or None, resolution)."""
    for rows in _by_id(store, f"{COPY_SELECT} WHERE i.id > ? ORDER BY i.id LIMIT ?"):
        parties = _grouped(store, f"{PARTY_SELECT} WHERE ip.item_id IN ({{marks}})"
                                  " ORDER BY ip.item_id, ip.role, ip.ord", [r[0] for r in rows])
        yield [(r, parties.get(r[0], [])) for r in rows]


def timeline_batches(store: Store) -> Iterator[list[Row]]:
    """Every timeline line, by id: (id, page path, page title, line, date, text, source)."""
    return _by_id(store, """
        SELECT t.id, p.path, p.title, t.line, t.date, t.text, t.source
        FROM timeline t JOIN pages p ON p.id = t.page_id WHERE t.id > ? ORDER BY t.id LIMIT ?""")


def chunks_of_texts(store: Store, text_hashes: Sequence[str]) -> dict[str, list[Row]]:
    """Text hash → the chunks with that embedded text, by chunk id: (chunk id, page path,
    page title, heading, start line, end line, page body start, chunks_fts body). Only the
    first chunk's body is read (the others embed the same text); theirs are ``""``."""
    found = _grouped(store, """
        SELECT c.text_hash, c.id, p.path, p.title, c.heading, c.start_line, c.end_line,
               p.body_start
        FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE c.text_hash IN ({marks})""", sorted(set(text_hashes)))
    # The bodies by rowid on their own: joined in, SQLite's planner read them ~25x slower.
    firsts = {digest: min(rows) for digest, rows in found.items()}
    bodies = chunk_bodies(store, sorted(r[0] for r in firsts.values()))
    return {digest: [(*r, bodies.get(r[0], "")) for r in sorted(rows)]
            for digest, rows in found.items()}


def export_counts(store: Store) -> dict[str, int]:
    """How many pages, facts, links, items (copies) and timeline lines the index holds."""
    return {table: int(store.scalar(f"SELECT count(*) FROM {table}", default=0))
            for table in ("pages", "facts", "links", "items", "timeline")}
