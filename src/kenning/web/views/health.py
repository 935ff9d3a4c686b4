"""The health view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html


def health(request: Request) -> Response:
    return html(request, "health.html", active="health", title="health")


ROUTES = [Route("/health", health)]
