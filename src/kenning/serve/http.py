"""Streamable HTTP for the MCP server: loopback by default, a bearer token off it, rate limits.

The SDK's Starlette app does the protocol (and DNS-rebinding checks on loopback, and the 413 for
bodies over ``trust.MAX_BODY_BYTES``); ``Guard`` in front of it checks the bearer token (401)
and each client's token bucket (429) before a request reaches it. A bearer token is either the
server's one shared token (``KENNING_MCP_TOKEN``) or a person's token from ``kenning token add``
(``kenning.serve.tokens``); Guard puts who it is (an ``Identity``) in the request's state, where
the MCP server reads it to enforce the token's scope and to stamp that person's writes.
"""

from __future__ import annotations

import hmac
import json
import socket
import sys
from pathlib import Path
from typing import Any

from kenning.serve import trust
from kenning.serve.tokens import Identity, Tokens
from kenning.serve.trust import Caller, TokenBucket

MCP_PATH = "/mcp"
# The request-state key Guard stores the caller's Identity under.
IDENTITY = "kenning_identity"
SHARED = Identity("token", "admin", named=False)  # the one shared token: today's behaviour
ANONYMOUS = Identity("anonymous", "admin", named=False)  # loopback without any token


class Guard:
    """ASGI middleware: bearer token, then a per-client rate limit, for every HTTP request."""

    def __init__(self, app: Any, *, token: str | None, bucket: TokenBucket | None,
                 tokens: Tokens | None = None) -> None:
        self.app, self.bucket, self.tokens = app, bucket, tokens
        self.token = token.encode("utf-8") if token else None

    @property
    def required(self) -> bool:
        """True when every request must carry a valid bearer token: a shared token is set,
        or the vault has a token file (even one emptied by revokes: revoking the last token
        must not open the server)."""
        return self.token is not None or self.tokens is not None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        identity = self.identify(scope) if self.required else ANONYMOUS
        if identity is None:
            await _reply(send, 401, "missing or wrong bearer token",
                         [(b"www-authenticate", b'Bearer realm="kenning"')])
            return
        scope.setdefault("state", {})[IDENTITY] = identity
        if self.bucket is not None:
            client = (scope.get("client") or ("unknown", 0))[0]
            wait = self.bucket.take(str(client))
            if wait > 0:
                await _reply(send, 429, "too many requests; slow down",
                             [(b"retry-after", str(max(1, round(wait))).encode())])
                return
        await self.app(scope, receive, send)

    def identify(self, scope: dict[str, Any]) -> Identity | None:
        """Who the request's bearer token belongs to, or None (no token, or a wrong one)."""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                if scheme.lower() != b"bearer":
                    return None
                given = given.strip()
                # Both checks always run: the time taken does not say which kind matched.
                shared = self.token is not None and hmac.compare_digest(given, self.token)
                person = self.tokens.check(given) if self.tokens is not None else None
                return person or (SHARED if shared else None)
        return None


async def _reply(send: Any, status: int, message: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def build_app(root: Path, *, profile: str, host: str, trusted: bool, token: str | None,
              rate: float = trust.RATE_PER_SECOND, burst: int = trust.RATE_BURST) -> Any:
    """The ASGI app: Guard in front of the SDK's streamable HTTP app for this vault."""
    from kenning.serve.mcp_server import KenningMCP

    kmcp = KenningMCP(root, profile=profile, caller=Caller("http", trusted=trusted))
    inner = kmcp.server.streamable_http_app(
        streamable_http_path=MCP_PATH, json_response=True, host=trust.bare_host(host),
        max_request_body_size=trust.MAX_BODY_BYTES)
    bucket = TokenBucket(rate, burst) if rate > 0 else None
    people = Tokens(root)
    app = Guard(inner, token=token, bucket=bucket, tokens=people if people.exists() else None)
    app.kenning = kmcp  # type: ignore[attr-defined]
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port).

    Created with ``IPPROTO_TCP`` named: asyncio sets ``TCP_NODELAY`` on an accepted connection
    only when its socket's ``proto`` says TCP, and one created with proto 0 says nothing. Without
    it, every response after the first on a kept-alive connection waited ~40 ms (Nagle's
    algorithm holding the body until the client's delayed ACK of the headers)."""
    host = trust.bare_host(host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve_http(root: Path, *, profile: str, host: str, port: int, trusted: bool,
               token: str | None, rate: float = trust.RATE_PER_SECOND,
               burst: int = trust.RATE_BURST) -> None:
    """Serve until interrupted; prints the URL (with the real port) on stderr first."""
    import anyio
    import uvicorn

    host = trust.bare_host(host)  # the SDK's DNS-rebinding guard knows "::1", not "[::1]"
    app = build_app(root, profile=profile, host=host, trusted=trusted, token=token,
                    rate=rate, burst=burst)
    sock = bind(host, port)
    real_port = sock.getsockname()[1]
    shown = trust.url_host(host)
    who = "trusted" if trusted else "remote (no delete, no link)"
    people = app.tokens
    guard = ("; bearer token required" + (f" ({len(people)} person token(s))" if people else "")
             if app.required else "")
    print(f"kenning: serving {root} (profile {profile}; HTTP callers {who}"
          f"{guard}) at http://{shown}:{real_port}"
          f"{MCP_PATH}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    try:
        anyio.run(lambda: server.serve(sockets=[sock]))
    finally:
        app.kenning.close()
