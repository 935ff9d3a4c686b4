"""The typed link graph: neighbours, bounded traversal, paths, backlinks, orphans.

Traversal runs in SQL as a recursive CTE. Rows are (page, depth) pairs combined with UNION, so a
page is expanded at most once per depth: cycles cannot loop and work stays bounded. Depth is
clamped to 10 whatever the caller asks. By default only current edges count (active, not expired);
``as_of`` asks what held on a date instead (superseded facts that were valid then count, facts
invalidated as wrong never do). ``believed_on`` asks what Kenning believed on a date: edges
recorded by then and not yet retired (``[recorded:: …]``/``[expired:: …]`` on facts; an edge
without them counts from the start, and one retired by hand without a date counts as retired).
Both together: what we believed on one day about another.

The SQL lives in :mod:`kenning.index.queries.graph`; this module holds the answers' shapes and
takes a :class:`~kenning.index.store.Store`, whichever backend it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kenning.index.queries import graph as q
from kenning.index.store import Store

MAX_DEPTH = 10
DIRECTIONS = ("out", "in", "both")


@dataclass(frozen=True)
class Node:
    """A page in a graph answer."""

    id: int
    path: str
    title: str
    type: str | None
    depth: int = 0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form; a title that is the file name, no type and depth 0 left out."""
        out: dict[str, object] = {"path": self.path}
        if self.title != self.path.rsplit("/", 1)[-1].removesuffix(".md"):
            out["title"] = self.title
        if self.type:
            out["type"] = self.type
        if self.depth:
            out["depth"] = self.depth
        return out


@dataclass(frozen=True)
class EdgeView:
    """An edge seen from a page: its type, direction, the page at the other end, provenance."""

    rel: str
    direction: str  # out | in
    other: Node
    kind: str
    origin: str | None  # the page that produced the edge (None for manual edges)
    line: int | None
    field: str | None
    valid_from: str | None
    valid_to: str | None
    status: str

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form, flat: the type, direction, the page at the other end, then where the
        edge came from as a citation (``origin#Lline-Lline``; the origin page when no line).
        Fields that say nothing are left out: no field, no validity, status active."""
        out: dict[str, object] = {"rel": self.rel, "direction": self.direction,
                                  **self.other.to_dict(), "kind": self.kind}
        if self.origin:
            out["citation"] = (f"{self.origin}#L{self.line}-L{self.line}" if self.line
                               else self.origin)
        for key in ("field", "valid_from", "valid_to"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.status != "active":
            out["status"] = self.status
        return out


@dataclass
class Traversal:
    """Pages reachable from a start page, with the edges that reached them."""

    start: Node
    depth: int
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[int, str, int]] = field(default_factory=list)  # (src, rel, dst)


def clamp_depth(depth: int) -> int:
    """Depth limited to 1..10."""
    return max(1, min(MAX_DEPTH, int(depth)))


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")


def node(store: Store, page_id: int, depth: int = 0) -> Node:
    """The Node for a page id."""
    row = q.page_row(store, page_id)
    assert row is not None, f"no page with id {page_id}"
    return Node(row[0], row[1], row[2], row[3], depth)


def neighbors(store: Store, page_id: int, *, rels: Sequence[str] = (),
              direction: str = "both", as_of: str | None = None,
              believed_on: str | None = None) -> list[EdgeView]:
    """Edges touching a page, each with the page at the other end and where it came from."""
    _check_direction(direction)
    cond, params = q.edge_filter(rels, as_of, believed_on)
    out: list[EdgeView] = []
    seen: set[tuple[object, ...]] = set()
    for (direction_, other, rel, kind, _origin_id, line, field_, valid_from, valid_to, status,
         path_, title, ptype, origin) in q.edges_around(store, page_id, direction, cond, params):
        key = (direction_, rel, other, kind, line, field_)
        if key in seen:
            continue
        seen.add(key)
        out.append(EdgeView(
            rel=rel, direction=direction_, other=Node(other, path_, title, ptype), kind=kind,
            origin=origin, line=line, field=field_, valid_from=valid_from, valid_to=valid_to,
            status=status))
    out.sort(key=lambda e: (e.direction, e.rel, e.other.title.casefold(), e.line or 0))
    return out


def traverse(store: Store, page_id: int, *, depth: int = 2, rels: Sequence[str] = (),
             direction: str = "out", as_of: str | None = None,
             believed_on: str | None = None) -> Traversal:
    """Every page within ``depth`` steps (clamped to 10) of a page, nearest depth first."""
    _check_direction(direction)
    depth = clamp_depth(depth)
    cond, params = q.edge_filter(rels, as_of, believed_on)
    nodes = [Node(r[0], r[2], r[3], r[4], r[1])
             for r in q.walk(store, page_id, depth, direction, cond, params)]
    start = next((n for n in nodes if n.id == page_id), None) or node(store, page_id)
    result = Traversal(start=start, depth=depth, nodes=[n for n in nodes if n.id != page_id])
    level = {n.id: n.depth for n in nodes}
    for a, rel, b in q.expand(store, [n.id for n in nodes if n.depth < depth], direction, cond,
                              params):
        if b in level and level[b] == level[a] + 1:
            result.edges.append((a, rel, b))
    result.edges = sorted(set(result.edges))
    return result


def path(store: Store, start_id: int, end_id: int, *, max_depth: int = 6,
         rels: Sequence[str] = (), direction: str = "both", as_of: str | None = None,
         believed_on: str | None = None) -> list[tuple[Node, str | None]]:
    """A shortest path from one page to another as [(node, rel used to reach it)], or []."""
    _check_direction(direction)
    max_depth = clamp_depth(max_depth)
    if start_id == end_id:
        return [(node(store, start_id), None)]
    cond, params = q.edge_filter(rels, as_of, believed_on)
    parent: dict[int, tuple[int, str]] = {}
    frontier = [start_id]
    seen = {start_id}
    for _ in range(max_depth):
        if not frontier:
            break
        nxt = []
        for a, rel, b in sorted(q.expand(store, frontier, direction, cond, params)):
            if b in seen:
                continue
            seen.add(b)
            parent[b] = (a, rel)
            nxt.append(b)
            if b == end_id:
                chain: list[tuple[Node, str | None]] = []
                cur = end_id
                while cur != start_id:
                    prev, via = parent[cur]
                    chain.append((node(store, cur), via))
                    cur = prev
                chain.append((node(store, start_id), None))
                return list(reversed(chain))
        frontier = nxt
    return []


def backlinks(store: Store, page_id: int, *, rels: Sequence[str] = (),
              as_of: str | None = None, believed_on: str | None = None) -> list[EdgeView]:
    """Edges pointing at a page (incoming), with their provenance."""
    return neighbors(store, page_id, rels=rels, direction="in", as_of=as_of,
                     believed_on=believed_on)


def orphans(store: Store, *, types: Sequence[str] = ()) -> list[Node]:
    """Pages with no resolved edge in or out (core memory, daily logs, sources, sessions aside)."""
    return [Node(*r) for r in q.orphan_rows(store, types)]


@dataclass(frozen=True)
class GraphEdge:
    """One typed edge between two pages of a neighbourhood, with where it came from."""

    src: int
    dst: int
    rel: str
    kind: str
    origin: str | None
    line: int | None
    field: str | None
    valid_from: str | None
    valid_to: str | None
    status: str

    @property
    def citation(self) -> str | None:
        """``origin#Lline-Lline`` (the origin page when no line; None for manual edges)."""
        if not self.origin:
            return None
        return f"{self.origin}#L{self.line}-L{self.line}" if self.line else self.origin


@dataclass
class Neighbourhood:
    """What a graph picture of one page draws: at most ``limit`` pages nearest it (the start
    included), the edges among them, and the pages reached but left out."""

    start: Node
    depth: int
    nodes: list[Node] = field(default_factory=list)  # drawn, nearest first; start excluded
    edges: list[GraphEdge] = field(default_factory=list)
    more: list[Node] = field(default_factory=list)  # reached, not drawn (first few)
    more_count: int = 0
    # (rel, valid_from, valid_to) of every edge touching the drawn pages, whatever the filters:
    # the relations a picture could toggle and the days on which an as-of view changes.
    facets: list[tuple[str, str | None, str | None]] = field(default_factory=list)


def neighbourhood(store: Store, page_id: int, *, depth: int = 2, rels: Sequence[str] = (),
                  direction: str = "both", as_of: str | None = None,
                  believed_on: str | None = None, limit: int = 60,
                  more_shown: int = 100) -> Neighbourhood:
    """The pages within ``depth`` steps of a page, capped at ``limit`` drawn pages.

    Breadth first, one query per level over the pages kept so far, so a hub with thousands of
    neighbours costs one indexed scan of its edges, not one query per neighbour. At each level
    the candidates are ranked by how many edges tie them to the pages already kept (typed edges
    count double a plain mention), then by title; only the kept ones are expanded further. The
    rest are counted (and the first ``more_shown`` listed) so a picture can say "and N more".
    """
    _check_direction(direction)
    depth = clamp_depth(depth)
    limit = max(1, int(limit))
    cond, params = q.edge_filter(rels, as_of, believed_on)
    start = node(store, page_id)
    kept: dict[int, Node] = {page_id: start}
    edges: dict[tuple[object, ...], GraphEdge] = {}
    left: dict[int, tuple[float, Node]] = {}
    frontier = [page_id]
    beyond = 0  # pages reached once the picture was full: counted, not listed
    for level in range(1, depth + 1):
        if not frontier:
            break
        if len(kept) >= limit and len(left) >= more_shown:
            # No page can be added and enough left-out ones are listed: fetch only the edges
            # among the kept pages, and count (without fetching) the pages these reach, so a
            # hub's far side stays cheap.
            rows = q.edges_between(store, frontier, list(kept), direction, cond, params)
            beyond += len(q.reached(store, frontier, direction, cond, params)
                          - kept.keys() - left.keys())
        else:
            rows = q.edges_touching(store, frontier, direction, cond, params)
        score: dict[int, float] = {}
        found: dict[int, Node] = {}
        for (src, dst, rel, kind, line, field_, vf, vt, status, origin, far, fpath, ftitle,
             ftype) in rows:
            edge = GraphEdge(src, dst, rel, kind, origin, line, field_, vf, vt, status)
            edges.setdefault((src, dst, rel, kind, line, field_), edge)
            if far in kept:
                continue
            found.setdefault(far, Node(far, fpath, ftitle, ftype, level))
            score[far] = score.get(far, 0.0) + (1.0 if kind == "wikilink" else 2.0)
        ranked = sorted(found, key=lambda i: (-score[i], found[i].title.casefold(), i))
        room = max(0, limit - len(kept))
        frontier = ranked[:room]
        for i in frontier:
            kept[i] = found[i]
            left.pop(i, None)
        for i in ranked[room:]:
            if i not in left or left[i][0] < score[i]:
                left[i] = (score[i], found[i])
    drawn = [e for e in edges.values() if e.src in kept and e.dst in kept]
    rest = sorted(left.values(), key=lambda sn: (sn[1].depth, -sn[0], sn[1].title.casefold()))
    return Neighbourhood(
        start=start, depth=depth,
        nodes=sorted((n for i, n in kept.items() if i != page_id),
                     key=lambda n: (n.depth, n.title.casefold())),
        edges=sorted(drawn, key=lambda e: (e.src, e.dst, e.rel, e.line or 0)),
        more=[n for _, n in rest[:more_shown]], more_count=len(rest) + beyond,
        facets=[(r[0], r[1], r[2]) for r in q.edge_facets(store, list(kept))])
