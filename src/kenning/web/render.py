"""Templates, URL helpers and the per-thread ``Vault`` the views share.

Every page is a Jinja template under ``templates/`` rendered with autoescaping on, so text
from the vault is always escaped; HTML that a view builds itself (the rendered Markdown) is
marked safe in exactly one place, :mod:`kenning.web.markdown`. URLs are built here, so each
view's address is stable and written once: ``/page/<path>?hl=START-END#LSTART`` for a cited
line range, ``/graph/<path>``, ``/search?q=…``.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from kenning.api import Vault

CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")
NAV = (("search", "/", "Search"), ("timeline", "/timeline", "Timeline"),
       ("decisions", "/decisions", "Decisions"), ("items", "/items", "Open items"),
       ("health", "/health", "Health"))


class Vaults:
    """One ``Vault`` per server thread: a store connection is never shared across threads.

    Nothing the views read is cached between requests beyond what ``Vault`` keeps (its config
    and open connections), so a page reloaded after ``kenning index`` or an agent's write shows
    the change without a restart.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._local = threading.local()
        self._all: list[Vault] = []
        self._lock = threading.Lock()

    def get(self) -> Vault:
        vault = getattr(self._local, "vault", None)
        if vault is None:
            vault = Vault(self.root)
            self._local.vault = vault
            with self._lock:
                self._all.append(vault)
        return vault

    def close(self) -> None:
        with self._lock:
            for vault in self._all:
                vault.close()
            self._all.clear()


def vault(request: Request) -> Vault:
    """The calling thread's ``Vault`` for this server."""
    vaults: Vaults = request.app.state.vaults
    return vaults.get()


def page_url(path: str, hl: tuple[int, int] | None = None) -> str:
    """The entity page of ``path``; with ``hl``, scrolled to those lines, highlighted."""
    url = "/page/" + quote(path)
    if hl:
        start, end = hl
        url += f"?hl={start}-{end}#L{start}"
    return url


def cite_url(citation: str | None) -> str:
    """The link a ``path#Lstart-Lend`` citation opens (a bare path opens the page)."""
    if not citation:
        return "#"
    m = CITATION.match(citation)
    if not m:
        return page_url(citation.split("#", 1)[0])
    start = int(m["start"])
    return page_url(m["path"], (start, int(m["end"] or start)))


def graph_url(path: str, **params: Any) -> str:
    """The graph view centred on ``path`` (params: depth, rel (list), as_of, …)."""
    return "/graph/" + quote(path) + query_string(params)


def query_string(params: dict[str, Any]) -> str:
    """``?a=1&rel=x&rel=y`` from params; None, "" and False are left out."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        values = value if isinstance(value, list | tuple) else [value]
        for v in values:
            if v is None or v == "" or v is False:
                continue
            pairs.append((key, "1" if v is True else str(v)))
    return "?" + urlencode(pairs) if pairs else ""


def url_with(request: Request, **changes: Any) -> str:
    """This request's URL with some query parameters changed (None removes one)."""
    params: dict[str, Any] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    for key, value in changes.items():
        params[key] = value
    return request.url.path + query_string(params)


def _env() -> Environment:
    env = Environment(loader=PackageLoader("kenning.web", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(page_url=page_url, cite_url=cite_url, graph_url=graph_url,
                       query_string=query_string, nav=NAV)
    env.filters["cite_url"] = cite_url
    return env


ENV = _env()


def html(request: Request, template: str, *, status: int = 200, active: str = "",
         **context: Any) -> HTMLResponse:
    """Render ``template`` with ``context`` (plus the request, the nav and the vault name)."""
    body = ENV.get_template(template).render(
        request=request, active=active, url_with=lambda **c: url_with(request, **c),
        vault_name=request.app.state.vaults.root.name, **context)
    return HTMLResponse(body, status_code=status)
