"""`kenning web`: the local, read-only web view of the vault (kenning.web)."""

from __future__ import annotations

import click

from kenning.cli_common import vault_root
from kenning.cli_serve import DEFAULT_TOKEN_ENV, shared_token


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
    from kenning.web.app import serve_web

    root = vault_root(ctx)
    host, token = shared_token(root, host, token_env, "serve the web view",
                               "kenning token add NAME --scope read")
    try:
        serve_web(root, host=host, port=port, token=token, open_browser=open_browser)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {trust.url_host(host)}:{port}: "
                                   f"{exc.strerror or exc}") from None
