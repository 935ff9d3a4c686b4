"""The entity page: the page rendered, its facts with status, timeline, items, backlinks by
type and the sources that built it."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html, vault


def page(request: Request) -> Response:
    v = vault(request)
    shown = v.show(request.path_params["path"], record=False)
    return html(request, "page.html", title=shown["title"], page=shown)


ROUTES = [Route("/page/{path:path}", page)]
