"""The search view: hybrid results with snippets, citations, filters and ``explain``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html, vault


def search(request: Request) -> Response:
    q = request.query_params.get("q", "").strip()
    results = vault(request).search(q, limit=10) if q else None
    return html(request, "search.html", active="search", title=q or "Search", q=q,
                results=results)


ROUTES = [Route("/", search), Route("/search", search)]
