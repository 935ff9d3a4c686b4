"""The graph view: an entity's typed, directed neighbourhood as server-drawn SVG.

``/graph/<path>?depth=1..3&rel=R&dir=out|in|both&as_of=&believed_on=&limit=`` asks
``Vault.neighbourhood`` for at most ``limit`` pages nearest the entity (the rest are counted and
listed as "and N more"), lays them out with :mod:`kenning.web.layout` (deterministic: the same
vault and address always give the same picture) and draws nodes coloured by type, edges labelled
by relation with arrowheads for direction, and each edge's provenance in its ``<title>``. The
as-of slider walks the days on which an edge around these pages begins or ends; every node
links to the graph centred on it, keeping the other settings.
"""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web import layout
from kenning.web.render import graph_url, html, page_url, vault

DIRECTIONS = ("both", "out", "in")
DEFAULT_LIMIT = 60
MAX_LIMIT = 500
LABELS_UP_TO = 90  # draw every node's label up to this many nodes; beyond, the nearest only
EDGE_LABELS_UP_TO = 140  # draw edge labels up to this many edges
RADIAL_LABELS = 14  # a ring with more pages than this turns its labels along the radius
TYPES = ("person", "organization", "project", "topic", "meeting", "decision")


def _day(raw: str | None, name: str, problems: list[str]) -> str | None:
    """A YYYY-MM-DD date from a query parameter, or None with a problem noted."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw).isoformat()
    except ValueError:
        problems.append(f"{name}: {raw!r} is not a date; give one as YYYY-MM-DD.")
        return None


def _int(raw: str | None, name: str, default: int, lo: int, hi: int,
         problems: list[str]) -> int:
    if raw is None or not raw.strip():
        return default
    try:
        return max(lo, min(hi, int(raw)))
    except ValueError:
        problems.append(f"{name}: {raw!r} is not a whole number.")
        return default


def _day_of(raw: str, *, after: bool = False) -> date | None:
    """The day a stored date names (2026-04 → 2026-04-01, 2026 → 2026-01-01); with ``after``,
    the day after a full date (a ``to::`` day still holds, so the picture changes the next)."""
    text = raw[:10]
    full = len(text) == 10
    text += "-01-01"[len(text) - 4:] if len(text) < 10 else ""
    try:
        day = date.fromisoformat(text)
        return day + timedelta(days=1) if after and full else day
    except (ValueError, OverflowError):
        return None


def stops(facets: list[tuple[str, str | None, str | None]], rels: list[str]) -> list[str]:
    """The days the slider can stand on: each day an edge begins (``from::``), the day after
    one ends (``to::``), and the day before the first of them — the days on which the picture
    changes, oldest first."""
    days: set[date] = set()
    for rel, valid_from, valid_to in facets:
        if rels and rel not in rels:
            continue
        for day in (_day_of(valid_from) if valid_from else None,
                    _day_of(valid_to, after=True) if valid_to else None):
            if day is not None:
                days.add(day)
    ordered = sorted(days)
    if ordered and ordered[0] > date.min:
        ordered.insert(0, ordered[0] - timedelta(days=1))
    return [d.isoformat() for d in ordered]


def _provenance(edge: Any) -> str:
    """One line of an edge's hover text: where it came from and when it held."""
    parts = [edge.citation or "added by hand (kenning link)"]
    if edge.valid_from or edge.valid_to:
        parts.append(f"valid {edge.valid_from or '…'} to {edge.valid_to or 'now'}")
    if edge.field:
        parts.append(f"field {edge.field}")
    parts.append(edge.status)
    return " · ".join(parts)


def _short(title: str, width: int = 28) -> str:
    """A label that fits beside a node (the full title is in its hover text)."""
    return title if len(title) <= width else title[:width - 1].rstrip() + "…"


def picture(hood: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Everything the template draws: positioned nodes, bowed edges, legend, the viewBox."""
    nodes = [hood.start, *hood.nodes]
    by_id = {n.id: n for n in nodes}
    groups: dict[tuple[int, int, str], list[Any]] = {}
    for e in hood.edges:
        groups.setdefault((e.src, e.dst, e.rel), []).append(e)
    spots = layout.radial(hood.start.id, [(n.id, n.depth, n.type or "", n.title)
                                          for n in hood.nodes],
                          [(a, b) for a, b, _ in groups])
    pairs: dict[frozenset[int], list[tuple[int, int, str]]] = {}
    for key in groups:
        pairs.setdefault(frozenset(key[:2]), []).append(key)
    edges = []
    for members in pairs.values():
        members.sort(key=lambda k: (k[2], k[0]))
        count = len(members)
        for i, (a, b, rel) in enumerate(members):
            # Edges between the same two pages fan out; the sign follows a fixed direction
            # (low id → high id) so a→b and b→a bow apart, not on top of each other.
            bend = (i - (count - 1) / 2) * 26.0 * (1 if a < b else -1)
            # Labels sit nearer the outer end: around the centre they would pile up.
            at = 0.5 + 0.14 * ((by_id[b].depth > by_id[a].depth)
                               - (by_id[a].depth > by_id[b].depth))
            d, mx, my = layout.curve(spots[a], spots[b], bend, at=at)
            lines = groups[(a, b, rel)]
            status = "active" if any(e.status == "active" for e in lines) else lines[0].status
            kind = "typed" if any(e.kind != "wikilink" for e in lines) else "mention"
            # An edge between two pages of the same ring does not lead outwards: drawn faint.
            across = by_id[a].depth == by_id[b].depth and by_id[a].depth > 0
            edges.append({
                "rel": rel, "from": by_id[a].path, "to": by_id[b].path, "d": d, "x": mx, "y": my,
                "status": status, "kind": kind + (" across" if across else ""),
                "title": f"{by_id[a].title} —{rel}→ {by_id[b].title}\n"
                         + "\n".join(_provenance(e) for e in lines[:6])
                         + (f"\n… and {len(lines) - 6} more lines" if len(lines) > 6 else "")})
    degree: dict[int, int] = {}
    for a, b, _ in groups:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    labelled = len(nodes) <= LABELS_UP_TO
    rings: dict[int, int] = {}
    for n in hood.nodes:
        rings[n.depth] = rings.get(n.depth, 0) + 1
    drawn = []
    for n in nodes:
        s = spots[n.id]
        kind = n.type if n.type in TYPES else "other"
        r = 16 if n.depth == 0 else (8 + min(5, degree.get(n.id, 0))) if n.depth == 1 else 7
        lx, ly, anchor, turn = layout.label(s, r, centre=n.depth == 0,
                                            radial=rings.get(n.depth, 0) > RADIAL_LABELS)
        drawn.append({
            "path": n.path, "title": n.title, "short": _short(n.title),
            "type": n.type or "page", "colour": kind,
            "depth": n.depth, "x": s.x, "y": s.y, "r": r, "lx": lx, "ly": ly,
            "anchor": anchor, "turn": turn, "label": labelled or n.depth <= 1,
            "href": graph_url(n.path, **params), "page": page_url(n.path)})
    ends = [layout.label_end(d["lx"], d["ly"], d["anchor"], d["turn"], len(d["short"]))
            for d in drawn if d["label"]]
    legend = sorted({(d["colour"], d["type"]) for d in drawn}, key=lambda t: (t[0] == "other",
                                                                               t[1]))
    return {"nodes": drawn, "edges": edges, "legend": legend,
            "size": "big" if len(drawn) > 40 else "small",
            "viewbox": " ".join(str(v) for v in layout.bounds(spots, ends)),
            "edge_labels": len(edges) <= EDGE_LABELS_UP_TO}


def graph(request: Request) -> Response:
    """The graph of one page; a bad date or number is a message on the page, not a trace."""
    started = time.perf_counter()
    path = request.path_params["path"]
    qp = request.query_params
    problems: list[str] = []
    depth = _int(qp.get("depth"), "depth", 1, 1, 3, problems)
    limit = _int(qp.get("limit"), "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, problems)
    direction = qp.get("dir") or "both"
    if direction not in DIRECTIONS:
        problems.append(f"dir: {direction!r} must be one of {', '.join(DIRECTIONS)}.")
        direction = "both"
    as_of = _day(qp.get("as_of"), "as_of", problems)
    believed_on = _day(qp.get("believed_on"), "believed_on", problems)
    rels = [r for r in qp.getlist("rel") if r.strip()]
    v = vault(request)
    page = v.find(path)  # unknown → the app's 404 page
    params = {"depth": depth if depth != 1 else None, "rel": rels,
              "dir": direction if direction != "both" else None, "as_of": as_of,
              "believed_on": believed_on, "limit": limit if limit != DEFAULT_LIMIT else None}
    context: dict[str, Any] = {
        "page": page, "depth": depth, "limit": limit, "direction": direction, "as_of": as_of,
        "believed_on": believed_on, "rels": rels, "problems": problems,
        "raw_as_of": qp.get("as_of") or "", "raw_believed_on": qp.get("believed_on") or ""}
    if problems:
        return html(request, "graph.html", status=400, active="graph",
                    title=f"graph of {page.title}", **context, hood=None, all_rels=[],
                    stops=[], stop_at=0)
    hood = v.neighbourhood(page.path, depth=depth, rels=rels, direction=direction,
                           as_of=as_of, believed_on=believed_on, limit=limit)
    queried = time.perf_counter()
    days = stops(hood.facets, rels)
    at = len(days)  # "now": no as-of date
    if as_of:
        at = max(0, sum(1 for d in days if d <= as_of) - 1)
    facts = v.facts(page.path, as_of=as_of, believed_on=believed_on)["facts"]
    drawn = picture(hood, params)
    more = [{"path": n.path, "title": n.title, "type": n.type or "page", "depth": n.depth,
             "href": graph_url(n.path, **params), "page": page_url(n.path)} for n in hood.more]
    response = html(
        request, "graph.html", active="graph", title=f"graph of {page.title}", **context,
        hood=hood, all_rels=sorted({f[0] for f in hood.facets} | set(rels)), stops=days,
        stop_at=at, facts=[f for f in facts if f.get("relation") or f.get("text")],
        more=more, more_count=hood.more_count, drawn_count=len(drawn["nodes"]), **drawn)
    done = time.perf_counter()
    response.headers["server-timing"] = (f"neighbourhood;dur={(queried - started) * 1000:.1f}, "
                                         f"draw;dur={(done - queried) * 1000:.1f}")
    return response


ROUTES = [Route("/graph/{path:path}", graph)]
