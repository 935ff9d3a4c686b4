"""`kenning` commands of the serve stage: ``serve`` (the MCP server) and ``mcp-config``."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import click

from kenning.cli_common import vault_root

PROFILE_OPTION = click.option(
    "--profile", type=click.Choice(["recall", "record", "full"]), default="record",
    show_default=True, help="Which tools to offer: recall (read-only), record (+ the write "
    "path), full (+ link, delete, reflect, index).")
DEFAULT_TOKEN_ENV = "KENNING_MCP_TOKEN"
CLIENTS = ("claude", "claude-desktop", "cursor", "vscode", "codex", "generic")


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""
    main.add_command(serve)
    main.add_command(mcp_config)


@click.command()
@click.option("--http", "use_http", is_flag=True,
              help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind with --http; off loopback a bearer token is required.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port for --http (0: any free port, printed on start).")
@PROFILE_OPTION
@click.option("--token-env", metavar="NAME", default=None,
              help=f"Environment variable holding the bearer token for --http "
              f"[default: {DEFAULT_TOKEN_ENV}]. When it is set every request must carry "
              "`Authorization: Bearer <token>`.")
@click.option("--trust-http", is_flag=True,
              help="Treat HTTP callers as trusted (local) callers: they may delete and link.")
@click.option("--rate", type=click.FloatRange(0), default=20.0, show_default=True,
              help="HTTP requests a second per client address (0: no limit).")
@click.option("--burst", type=click.IntRange(1), default=40, show_default=True,
              help="HTTP requests a client may send at once before --rate applies.")
@click.pass_context
def serve(ctx: click.Context, use_http: bool, host: str, port: int, profile: str,
          token_env: str | None, trust_http: bool, rate: float, burst: int) -> None:
    """Serve the vault to agents over MCP (stdio by default; --http for streamable HTTP).

    Stdio callers are trusted. HTTP callers are remote unless --trust-http: they cannot
    delete or add manual links, and are limited to 1 MB requests and 20 requests a second.
    With per-person tokens (kenning token add) every HTTP request needs one; each token's
    scope (read, record, admin) decides the tools it may call, and its writes are audited.
    """
    root = vault_root(ctx)
    if not use_http:
        if trust_http or token_env:
            raise click.UsageError("--trust-http and --token-env apply to --http only")
        import anyio

        from kenning.serve.mcp_server import serve_stdio

        anyio.run(lambda: serve_stdio(root, profile=profile))
        return
    from kenning.serve import trust
    from kenning.serve.http import serve_http

    host, token = shared_token(root, host, token_env, "listen",
                               "kenning token add NAME --scope read|record|admin")
    try:
        serve_http(root, profile=profile, host=host, port=port, trusted=trust_http,
                   token=token, rate=rate, burst=burst)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {trust.url_host(host)}:{port}: "
                                   f"{exc.strerror or exc}") from None


def shared_token(root: Path, host: str, token_env: str | None, what: str,
                 add_hint: str) -> tuple[str, str | None]:
    """(the bare host, the shared token from the environment or None) for an HTTP server, or a
    usage error: an unset --token-env, a weak token, or a non-loopback ``host`` with neither a
    shared token nor per-person tokens (``what`` and ``add_hint`` word the refusal)."""
    from kenning.serve import trust
    from kenning.serve.tokens import tokens_path

    name = token_env or DEFAULT_TOKEN_ENV
    token = os.environ.get(name) or None
    if token_env and token is None:
        raise click.UsageError(f"--token-env {token_env}: the variable is not set or empty")
    if token is not None and (weak := trust.token_problem(token, name)):
        raise click.UsageError(weak)
    host = trust.bare_host(host)
    if not trust.is_loopback(host) and token is None and not tokens_path(root).exists():
        raise click.UsageError(
            f"refusing to {what} on {host} without a token: add per-person tokens "
            f"({add_hint}), or set {name} to a long random secret (e.g. "
            f"`export {name}=$(openssl rand -hex 32)`), or bind 127.0.0.1")
    return host, token


def _kenning_executable() -> str:
    """The absolute path of the `kenning` command that is running now."""
    candidates = [Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "kenning"
                  else None, Path(sys.executable).parent / "kenning"]
    for c in candidates:
        if c is not None and c.is_file() and os.access(c, os.X_OK):
            return str(c.resolve() if not c.is_absolute() else c)
    found = shutil.which("kenning")
    if found:
        return str(Path(found).resolve())
    raise click.ClickException("cannot find the `kenning` executable; install Kenning "
                               "(pip install kenning) so clients can start it")


@click.command("mcp-config")
@click.argument("client", type=click.Choice(CLIENTS))
@PROFILE_OPTION
@click.option("--name", default="kenning", show_default=True,
              help="The server's name in the client.")
@click.pass_context
def mcp_config(ctx: click.Context, client: str, profile: str, name: str) -> None:
    """Print the exact registration of this vault's MCP server for CLIENT.

    claude and codex print a command to run; claude-desktop, cursor, vscode and generic print
    JSON to merge into the client's config file (the file is named on stderr).
    """
    root = vault_root(ctx)
    exe = _kenning_executable()
    args = ["-C", str(root), "serve", "--profile", profile]
    command = [exe, *args]
    server = {"command": exe, "args": args}
    if client == "claude":
        click.echo(shlex.join(["claude", "mcp", "add", "--scope", "user", name, "--",
                               *command]))
        return
    if client == "codex":
        click.echo(shlex.join(["codex", "mcp", "add", name, "--", *command]))
        return
    where = {
        "claude-desktop": "claude_desktop_config.json (macOS: ~/Library/Application Support/"
                          "Claude/, Windows: %APPDATA%\\Claude\\, Linux: ~/.config/Claude/)",
        "cursor": "~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project)",
        "vscode": ".vscode/mcp.json in the workspace (or `code --add-mcp` with the "
                  "entry plus \"name\")",
        "generic": "your client's MCP server list",
    }[client]
    if client == "vscode":
        data: dict[str, object] = {"servers": {name: {"type": "stdio", **server}}}
    else:
        data = {"mcpServers": {name: server}}
    click.echo(f"# merge into {where}", err=True)
    click.echo(json.dumps(data, indent=2))
