"""The web view's ASGI app and server: routes, the token guard, security headers, errors.

Loopback with no tokens: open to this machine only, and the Host header must name loopback
(a page on another site cannot reach it through DNS rebinding). Off loopback, or when the vault
has per-person tokens (``kenning token add``) or ``KENNING_MCP_TOKEN`` is set, every request
needs a token — the same tokens and scopes as MCP over HTTP; any scope may read, and the web
view only reads. A browser cannot send a bearer header from an address bar, so
``/?token=SECRET`` once sets an HttpOnly, SameSite=Strict cookie and redirects to the same
address without the secret.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from kenning.errors import AmbiguousPage, IndexMissing, KenningError, PageNotFound
from kenning.serve import trust
from kenning.serve.http import Guard
from kenning.serve.tokens import Tokens
from kenning.web.render import Vaults, html

COOKIE = "kenning_token"
STATIC = Path(__file__).parent / "static"
# No script but Kenning's own file runs, nothing loads from elsewhere, and the view is never
# framed: a vault page's raw HTML or javascript: link is inert even if it reached the page.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]


class WebGuard(Guard):
    """The MCP guard, taking the token from the cookie (or once from ``?token=``) as well."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.required:
            await super().__call__(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        pairs = parse_qsl(query, keep_blank_values=True)
        given = next((v for k, v in pairs if k == "token"), None)
        if given is not None:
            rest = urlencode([(k, v) for k, v in pairs if k != "token"])
            probe = {**scope, "headers": [(b"authorization", b"Bearer " + given.encode())]}
            if self.identify(probe) is not None:
                location = scope.get("path", "/") + (f"?{rest}" if rest else "")
                await _send(send, 303, b"", [
                    (b"location", location.encode("latin-1", "replace")),
                    (b"set-cookie", f"{COOKIE}={given}; HttpOnly; SameSite=Strict; "
                                    "Path=/".encode())])
                return
        cookie = _cookie(scope, COOKIE)
        if cookie and not any(k.lower() == b"authorization" for k, _ in scope.get("headers", ())):
            scope = {**scope, "headers": [*scope.get("headers", ()),
                                          (b"authorization", b"Bearer " + cookie.encode())]}
        if self.identify(scope) is None:
            body = _page("Kenning needs a token",
                         "This Kenning web view needs a token. Open this address with "
                         "<code>?token=YOUR_TOKEN</code> once (a token from "
                         "<code>kenning token add NAME --scope read</code>); the browser "
                         "keeps it in a cookie for this site.")
            await _send(send, 401, body, [(b"content-type", b"text/html; charset=utf-8")])
            return
        await super().__call__(scope, receive, send)


def _cookie(scope: dict[str, Any], name: str) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name and v:
                    return v
    return None


def _page(title: str, message: str) -> bytes:
    return (f"<!doctype html><meta charset=utf-8><title>{title}</title>"
            f"<link rel=stylesheet href=/static/kenning.css><main class=error>"
            f"<h1>{title}</h1><p>{message}</p></main>").encode()


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*HEADERS, (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class Secure:
    """ASGI middleware: security headers on every response, and the server time it took."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - started) * 1000
                names = {k.lower() for k, _ in message.get("headers", ())}
                message["headers"] = [
                    *message.get("headers", ()), *(h for h in HEADERS if h[0] not in names),
                    (b"server-timing", f"app;dur={ms:.1f}".encode())]
            await send(message)

        await self.app(scope, receive, wrapped)


def _error_status(exc: BaseException) -> int:
    if isinstance(exc, PageNotFound | AmbiguousPage):
        return 404
    if isinstance(exc, IndexMissing):
        return 503
    return 400


async def kenning_error(request: Request, exc: Exception) -> Response:
    """A one-line message in the page, never a traceback."""
    message = exc.message if isinstance(exc, KenningError) else str(exc)
    choices = getattr(exc, "candidates", None) or []
    return html(request, "error.html", status=_error_status(exc), message=message,
                choices=choices, title="Not found" if isinstance(exc, PageNotFound) else
                "Cannot show this")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return html(request, "error.html", status=exc.status_code, message=exc.detail,
                choices=[], title=f"{exc.status_code}")


async def server_error(request: Request, exc: Exception) -> Response:
    print(f"kenning web: {request.url.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
    traceback.print_exc(file=sys.stderr)
    return html(request, "error.html", status=500, choices=[], title="Something went wrong",
                message=f"{type(exc).__name__}: {exc} (the server's log has the details)")


def routes() -> list[Any]:
    from kenning.web.views import decisions, graph, health, items, page, search, timeline

    return [*search.ROUTES, *page.ROUTES, *graph.ROUTES, *timeline.ROUTES,
            *decisions.ROUTES, *items.ROUTES, *health.ROUTES,
            Mount("/static", app=StaticFiles(directory=STATIC), name="static")]


def _lifespan(vaults: Vaults) -> Any:
    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        vaults.close()
    return lifespan


def allowed_hosts(host: str) -> list[str]:
    """Host headers the app answers: loopback names on a loopback bind, anything otherwise
    (off loopback every request needs a token instead)."""
    if trust.is_loopback(host):
        return ["127.0.0.1", "localhost", "[::1]", "::1"]
    return ["*"]


def build_app(root: Path, *, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The web view's ASGI app for the vault at ``root``."""
    vaults = Vaults(Path(root))
    people = Tokens(Path(root))
    app = Starlette(
        routes=routes(),
        middleware=[Middleware(TrustedHostMiddleware,
                               allowed_hosts=allowed_hosts(trust.bare_host(host)))],
        exception_handlers={KenningError: kenning_error, HTTPException: http_error,
                            ValueError: kenning_error, Exception: server_error},
        lifespan=_lifespan(vaults))
    app.state.vaults = vaults
    guarded = WebGuard(app, token=token, bucket=None,
                       tokens=people if people.exists() else None)
    outer = Secure(guarded)
    outer.starlette = app  # type: ignore[attr-defined]
    outer.guard = guarded  # type: ignore[attr-defined]
    return outer


def serve_web(root: Path, *, host: str, port: int, token: str | None,
              open_browser: bool = False) -> None:
    """Serve until interrupted; prints the URL (with the real port) on stderr first."""
    import anyio
    import uvicorn

    from kenning.serve.http import bind

    host = trust.bare_host(host)
    app = build_app(root, host=host, token=token)
    sock = bind(host, port)
    url = f"http://{trust.url_host(host)}:{sock.getsockname()[1]}/"
    guard = "; a token is required" if app.guard.required else ""
    print(f"kenning: web view of {root} at {url} (read-only{guard})", file=sys.stderr,
          flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=3))
    anyio.run(lambda: server.serve(sockets=[sock]))
