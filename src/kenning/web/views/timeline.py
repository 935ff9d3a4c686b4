"""The timeline view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html


def timeline(request: Request) -> Response:
    return html(request, "timeline.html", active="timeline", title="timeline")


ROUTES = [Route("/timeline", timeline)]
