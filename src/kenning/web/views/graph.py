"""The graph view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html


def graph(request: Request) -> Response:
    return html(request, "graph.html", active="graph", title="graph")


ROUTES = [Route("/graph/{path:path}", graph)]
