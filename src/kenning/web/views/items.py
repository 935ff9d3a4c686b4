"""The items view."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html


def items(request: Request) -> Response:
    return html(request, "items.html", active="items", title="items")


ROUTES = [Route("/items", items)]
