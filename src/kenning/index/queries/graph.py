"""The typed link graph's SQL: edges around a page, the recursive walk, one step out of a set.

Portable SQL (see :mod:`kenning.index.store.base`): the walk is one ``WITH RECURSIVE`` with a
single recursive term (PostgreSQL allows no more), rows are (page, depth) pairs combined with
``UNION`` so a page is expanded at most once per depth (cycles cannot loop), and the depth is
bounded by the caller's clamp. Edge filters are built by :func:`edge_filter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from kenning.index.store.base import Store

Row = tuple[Any, ...]


def edge_filter(rels: Sequence[str], as_of: str | None,
                believed_on: str | None = None) -> tuple[str, list[object]]:
    """The WHERE fragment (on ``links l``) for current, as-of or believed-on edges."""
    clauses = ["l.resolution = 'resolved'", "l.src_id != l.dst_id"]
    params: list[object] = []
    if rels:
        clauses.append(f"l.rel IN ({','.join('?' * len(rels))})")
        params += list(rels)
    if believed_on:
        # Its status then was active: recorded by that day, not yet retired.
        clauses.append("(l.recorded IS NULL OR l.recorded <= ?)")
        clauses.append("(l.expired > ? OR (l.expired IS NULL AND l.status = 'active'))")
        params += [believed_on, believed_on]
        if as_of:
            clauses.append("(l.valid_from IS NULL OR l.valid_from <= ?)")
            clauses.append("(l.valid_to IS NULL OR l.valid_to >= ?)")
            params += [as_of, as_of]
    elif as_of:
        clauses.append("l.status != 'invalidated'")
        clauses.append("(l.valid_from IS NULL OR l.valid_from <= ?)")
        clauses.append("(l.valid_to IS NULL OR l.valid_to >= ?)")
        params += [as_of, as_of]
    else:
        clauses.append("l.status = 'active'")
        clauses.append("(l.valid_to IS NULL OR l.valid_to >= ?)")
        params.append(date.today().isoformat())
    return " AND ".join(clauses), params


def page_row(store: Store, page_id: int) -> Row | None:
    """(id, path, title, type) of a page."""
    return store.one("SELECT id, path, title, type FROM pages WHERE id = ?", (page_id,))


def edges_around(store: Store, page_id: int, direction: str, cond: str,
                 params: Sequence[object]) -> list[Row]:
    """Edges touching a page: (dir, other id, rel, kind, origin id, line, field, valid_from,
    valid_to, status, other path, other title, other type, origin path)."""
    columns = "l.rel, l.kind, l.origin_id, l.line, l.field, l.valid_from, l.valid_to, l.status"
    parts, args = [], []
    if direction in ("out", "both"):
        parts.append(f"SELECT 'out' AS dir, l.dst_id AS other, {columns} FROM links l"
                     f" WHERE l.src_id = ? AND {cond}")
        args += [page_id, *params]
    if direction in ("in", "both"):
        parts.append(f"SELECT 'in' AS dir, l.src_id AS other, {columns} FROM links l"
                     f" WHERE l.dst_id = ? AND {cond}")
        args += [page_id, *params]
    return store.rows(
        f"""SELECT e.dir, e.other, e.rel, e.kind, e.origin_id, e.line, e.field, e.valid_from,
                   e.valid_to, e.status, p.path, p.title, p.type, o.path
            FROM ({' UNION ALL '.join(parts)}) e
            JOIN pages p ON p.id = e.other LEFT JOIN pages o ON o.id = e.origin_id""", args)


def _step(direction: str) -> tuple[str, str]:
    """(join condition on ``links l`` from ``w.id``, the page id it reaches) per direction."""
    if direction == "out":
        return "l.src_id = w.id", "l.dst_id"
    if direction == "in":
        return "l.dst_id = w.id", "l.src_id"
    # Both ways in one recursive term (PostgreSQL allows only one): either end may be w.
    return ("(l.src_id = w.id OR l.dst_id = w.id)",
            "CASE WHEN l.src_id = w.id THEN l.dst_id ELSE l.src_id END")


def walk(store: Store, page_id: int, depth: int, direction: str, cond: str,
         params: Sequence[object]) -> list[Row]:
    """Every page within ``depth`` steps: (id, least depth, path, title, type), nearest first."""
    on, to = _step(direction)
    return store.rows(
        f"""
        WITH RECURSIVE walk(id, depth) AS (
            SELECT CAST(? AS INTEGER), 0
            UNION
            SELECT {to}, w.depth + 1 FROM walk w JOIN links l ON {on}
            WHERE w.depth < ? AND {cond})
        SELECT w.id, w.depth, p.path, p.title, p.type
        FROM (SELECT id, MIN(depth) AS depth FROM walk GROUP BY id) w
        JOIN pages p ON p.id = w.id ORDER BY w.depth, p.title
        """,
        (page_id, depth, *params))


def _hops(direction: str) -> list[tuple[str, str]]:
    """(column to join on, column reached) per direction: out follows src→dst."""
    return {"out": [("src_id", "dst_id")], "in": [("dst_id", "src_id")],
            "both": [("src_id", "dst_id"), ("dst_id", "src_id")]}[direction]


def expand(store: Store, ids: Sequence[int], direction: str, cond: str,
           params: Sequence[object]) -> list[tuple[int, str, int]]:
    """Every (from, rel, to) step out of ``ids`` in ``direction``."""
    out: list[tuple[int, str, int]] = []
    for part, marks in store.in_batches(ids):
        for on, to in _hops(direction):
            out += [(r[0], r[1], r[2]) for r in store.rows(
                f"SELECT l.{on}, l.rel, l.{to} FROM links l WHERE l.{on} IN ({marks})"
                f" AND {cond} ORDER BY l.{on}, l.rel, l.{to}", (*part, *params))]
    return out


def orphan_rows(store: Store, types: Sequence[str] = ()) -> list[Row]:
    """Pages with no resolved edge in or out (core memory, daily logs, sources, sessions
    aside): (id, path, title, type) by path."""
    where = "p.folder NOT IN ('memory', 'sources', 'sessions') AND p.path != 'memory.md'"
    params: list[object] = []
    if types:
        where += f" AND p.type IN ({','.join('?' * len(types))})"
        params += list(types)
    return store.rows(
        f"""SELECT p.id, p.path, p.title, p.type FROM pages p WHERE {where}
            AND NOT EXISTS (SELECT 1 FROM links l WHERE l.src_id = p.id
                            AND l.resolution = 'resolved' AND l.dst_id != p.id)
            AND NOT EXISTS (SELECT 1 FROM links l WHERE l.dst_id = p.id
                            AND l.resolution = 'resolved' AND l.src_id != p.id)
            ORDER BY p.path""", params)


def edges_touching(store: Store, ids: Sequence[int], direction: str, cond: str,
                   params: Sequence[object]) -> list[Row]:
    """Edges with an end in ``ids`` (out: the source; in: the target), with provenance and the
    far page: (src id, dst id, rel, kind, line, field, valid_from, valid_to, status, origin
    path, far id, far path, far title, far type)."""
    columns = ("l.src_id, l.dst_id, l.rel, l.kind, l.line, l.field, l.valid_from, l.valid_to,"
               " l.status, o.path")
    out: list[Row] = []
    for part, marks in store.in_batches(ids):
        for on, to in _hops(direction):
            out += store.rows(
                f"SELECT {columns}, p.id, p.path, p.title, p.type FROM links l"
                f" JOIN pages p ON p.id = l.{to} LEFT JOIN pages o ON o.id = l.origin_id"
                f" WHERE l.{on} IN ({marks}) AND {cond}"
                f" ORDER BY l.{on}, l.rel, l.{to}, l.line", (*part, *params))
    return out


def edge_facets(store: Store, ids: Sequence[int]) -> list[Row]:
    """Distinct (rel, valid_from, valid_to) of resolved edges touching ``ids``, whatever their
    status: the relations a picture of them could show, and the days an as-of view of them
    can change."""
    out: set[Row] = set()
    for part, marks in store.in_batches(ids):
        for on in ("src_id", "dst_id"):
            out.update(tuple(r) for r in store.rows(
                f"SELECT DISTINCT l.rel, l.valid_from, l.valid_to FROM links l"
                f" WHERE l.{on} IN ({marks}) AND l.resolution = 'resolved'"
                f" AND l.src_id != l.dst_id", part))
    return sorted(out, key=lambda r: (r[0], r[1] or "", r[2] or ""))


def edges_between(store: Store, ids: Sequence[int], targets: Sequence[int], direction: str,
                  cond: str, params: Sequence[object]) -> list[Row]:
    """Edges from ``ids`` to ``targets`` (either way with direction both), in the row shape of
    :func:`edges_touching`: what a full picture still needs once no page can be added."""
    targets = list(targets)
    room = max(1, store.max_params - len(targets) - len(params) - 1)
    columns = ("l.src_id, l.dst_id, l.rel, l.kind, l.line, l.field, l.valid_from, l.valid_to,"
               " l.status, o.path")
    marks_to = ",".join("?" * len(targets))
    out: list[Row] = []
    ids = list(ids)
    for start in range(0, len(ids), room):
        part = ids[start:start + room]
        marks = ",".join("?" * len(part))
        for on, to in _hops(direction):
            out += store.rows(
                f"SELECT {columns}, p.id, p.path, p.title, p.type FROM links l"
                f" JOIN pages p ON p.id = l.{to} LEFT JOIN pages o ON o.id = l.origin_id"
                f" WHERE l.{on} IN ({marks}) AND l.{to} IN ({marks_to}) AND {cond}"
                f" ORDER BY l.{on}, l.rel, l.{to}, l.line", (*part, *targets, *params))
    return out


def reached(store: Store, ids: Sequence[int], direction: str, cond: str,
            params: Sequence[object]) -> set[int]:
    """The ids of every page one step from ``ids``."""
    out: set[int] = set()
    for part, marks in store.in_batches(ids):
        for on, to in _hops(direction):
            out.update(r[0] for r in store.rows(
                f"SELECT DISTINCT l.{to} FROM links l WHERE l.{on} IN ({marks}) AND {cond}",
                (*part, *params)))
    return out
