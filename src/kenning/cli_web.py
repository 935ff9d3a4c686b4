"""`kenning web`: the local, read-only web view of the vault (kenning.web)."""

from __future__ import annotations

import os

import click

from kenning.cli_common import vault_root
from kenning.cli_serve import DEFAULT_TOKEN_ENV


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""
    main.add_command(web)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; off loopback a token is required (as for serve --http).")
@click.option("--port", type=click.IntRange(0, 65535), default=8766, show_default=True,
              help="Port (0: any free port, printed on start).")
@click.option("--open", "open_browser", is_flag=True, help="Open the view in a browser.")
@click.option("--token-env", metavar="NAME", default=None,
              help=f"Environment variable holding a shared token [default: {DEFAULT_TOKEN_ENV}];"
              " per-person tokens (kenning token add) work too.")
@click.pass_context
def web(ctx: click.Context, host: str, port: int, open_browser: bool,
        token_env: str | None) -> None:
    """Serve a read-only web view of the vault: search with citations, entity pages, the
    typed graph through time, timeline, decisions, open items and health.

    Binds 127.0.0.1 by default. Off loopback every request needs a token (per-person tokens
    from `kenning token add`, any scope, or the shared one in the environment); open the view
    once as http://HOST:PORT/?token=SECRET and the browser keeps it in a cookie.
    """
    from kenning.serve import trust
    from kenning.serve.tokens import tokens_path
    from kenning.web.app import serve_web

    root = vault_root(ctx)
    name = token_env or DEFAULT_TOKEN_ENV
    token = os.environ.get(name) or None
    if token_env and token is None:
        raise click.UsageError(f"--token-env {token_env}: the variable is not set or empty")
    if token is not None and (weak := trust.token_problem(token, name)):
        raise click.UsageError(weak)
    host = trust.bare_host(host)
    if not trust.is_loopback(host) and token is None and not tokens_path(root).exists():
        raise click.UsageError(
            f"refusing to serve the web view on {host} without a token: add per-person tokens "
            f"(kenning token add NAME --scope read), or set {name} to a long random secret, "
            "or bind 127.0.0.1")
    try:
        serve_web(root, host=host, port=port, token=token, open_browser=open_browser)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {trust.url_host(host)}:{port}: "
                                   f"{exc.strerror or exc}") from None
