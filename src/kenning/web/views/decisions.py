"""The decisions view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html


def decisions(request: Request) -> Response:
    return html(request, "decisions.html", active="decisions", title="decisions")


ROUTES = [Route("/decisions", decisions)]
