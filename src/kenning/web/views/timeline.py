"""The timeline view: what happened and what changed in a date range, newest first.

``/timeline?since=&until=&entity=&group=day|month`` shows ``Vault.timeline``: timeline lines
(events) and facts that began or ended in the range, across the vault or on one entity's page,
grouped by day or month, each line cited. Quick ranges: the last 7 and 30 days, and, for an
entity, "since the last meeting" (its most recent meeting, from the meetings it links with).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.errors import KenningError
from kenning.web.render import html, query_string, vault
from kenning.web.views.decisions import plain

DATED = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})[^/]*$")
LIMIT = 300


def last_meeting(v: Any, entity: str, before: str) -> tuple[str, str, str] | None:
    """(day, path, title) of the latest meeting linked with ``entity`` on or before ``before``:
    one indexed lookup of its edges; a meeting's day is the one its file name starts with."""
    best: tuple[str, str, str] | None = None
    for edge in v.neighbors(entity, direction="both"):
        other = edge.other
        if other.type != "meeting":
            continue
        m = DATED.search(other.path)
        if m and m[1] <= before and (best is None or m[1] > best[0]):
            best = (m[1], other.path, other.title)
    return best


def _groups(rows: list[dict[str, Any]], by: str) -> list[tuple[str, list[dict[str, Any]]]]:
    width = 7 if by == "month" else 10
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for row in rows:
        key = (row.get("date") or "")[:width] or "undated"
        if not out or out[-1][0] != key:
            out.append((key, []))
        out[-1][1].append(row)
    return out


def timeline(request: Request) -> Response:
    """The timeline; a bad date is a message above the filters, not a trace."""
    qp = request.query_params
    since, until = (qp.get("since") or "").strip(), (qp.get("until") or "").strip()
    entity = (qp.get("entity") or "").strip()
    group = qp.get("group") or ""
    today = date.today()
    v = vault(request)
    problem = None
    rows: list[dict[str, Any]] = []
    page = v.find(entity) if entity else None  # unknown entity → the 404 page
    try:
        rows = v.timeline(since=since or None, until=until or None,
                          entity=page.path if page else None, limit=LIMIT)
    except KenningError as exc:
        problem = exc.message
    if group not in ("day", "month"):
        span = None
        if since:
            try:
                span = ((date.fromisoformat(until) if until else today)
                        - date.fromisoformat(since)).days
            except ValueError:
                span = None
        group = "day" if span is not None and span <= 62 else "month"
    keep = {"entity": page.path if page else None}
    ranges = [("Last 7 days", {"since": (today - timedelta(days=7)).isoformat()}),
              ("Last 30 days", {"since": (today - timedelta(days=30)).isoformat()}),
              ("Last 90 days", {"since": (today - timedelta(days=90)).isoformat()}),
              ("Everything", {})]
    meeting = last_meeting(v, page.path, today.isoformat()) if page else None
    if meeting:
        ranges.insert(0, (f"Since the last meeting ({meeting[0]})", {"since": meeting[0]}))
    quick = [{"label": label, "href": "/timeline" + query_string({**keep, **r}),
              "current": r.get("since", "") == since and not until} for label, r in ranges]
    return html(request, "timeline.html", status=400 if problem else 200, active="timeline",
                title=f"timeline of {page.title}" if page else "timeline", since=since,
                until=until, entity=entity, page=page, problem=problem, group=group,
                groups=_groups(rows, group), count=len(rows), limit=LIMIT, quick=quick,
                meeting=meeting, plain=plain)


ROUTES = [Route("/timeline", timeline)]
