"""`kenning` commands of team mode: ``token`` (per-person bearer tokens), ``audit`` (who wrote
what over HTTP) and ``db copy`` (move the index to another database without re-embedding)."""

from __future__ import annotations

from typing import Any

import click

from kenning.cli_common import JSON_OPTION, emit, vault_root


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""
    main.add_command(token)
    main.add_command(audit)
    main.add_command(db)


@click.group()
def token() -> None:
    """Per-person bearer tokens for `kenning serve --http` (scopes read, record, admin)."""


@token.command("add")
@click.argument("name")
@click.option("--scope", "scopes", multiple=True, required=True,
              type=click.Choice(["read", "record", "admin"]),
              help="read: search, recall, page, graph; record: + the write tools; admin: "
              "everything the server's profile offers, with the owner's rights.")
@click.option("--mount", "mounts", multiple=True, metavar="NAME",
              help="Read only these mounts (repeat; 'vault' is this vault's own pages). "
              "Default: everything.")
@JSON_OPTION
@click.pass_context
def token_add(ctx: click.Context, name: str, scopes: tuple[str, ...], as_json: bool,
              mounts: tuple[str, ...] = ()) -> None:
    """Create a token for NAME and print its secret (once: only its hash is kept).

    Writes by NAME are audited and cite their source as mcp:NAME. A running server accepts
    the token from its next request.
    """
    from kenning.serve import tokens

    root = vault_root(ctx)
    try:
        secret, entry = tokens.add(root, name, list(scopes), list(mounts) or None)
    except tokens.TokenError as exc:
        raise click.ClickException(exc.message) from None
    if as_json:
        emit({**entry, "token": secret})
        return
    click.echo(secret)
    click.echo(f"token {name!r} ({entry['scope']}) added; the secret above is shown once. "
               f"Clients send it as `Authorization: Bearer <token>`.", err=True)


@token.command("list")
@JSON_OPTION
@click.pass_context
def token_list(ctx: click.Context, as_json: bool) -> None:
    """List the tokens (names, scopes, when added; never the secrets)."""
    from kenning.serve import tokens

    try:
        entries = tokens.listed(vault_root(ctx))
    except tokens.TokenError as exc:
        raise click.ClickException(exc.message) from None
    if as_json:
        emit(entries)
        return
    if not entries:
        click.echo("no tokens (kenning token add NAME --scope read|record|admin)")
    for e in entries:
        click.echo(f"{e['name']:<24} {e['scope']:<7} {e.get('created') or ''}")


@token.command("revoke")
@click.argument("name")
@click.pass_context
def token_revoke(ctx: click.Context, name: str) -> None:
    """Revoke NAME's token; running servers refuse it from their next request."""
    from kenning.serve import tokens

    try:
        tokens.revoke(vault_root(ctx), name)
    except tokens.TokenError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(f"token {name!r} revoked", err=True)


@click.command()
@click.option("--who", default=None, help="Only this token's writes.")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@JSON_OPTION
@click.pass_context
def audit(ctx: click.Context, who: str | None, limit: int, as_json: bool) -> None:
    """Who wrote what over HTTP: the latest audited writes, newest first."""
    from kenning.api import Vault

    with Vault.open(vault_root(ctx)) as vault:
        rows = vault.store.audit_log(who=who, limit=limit)
    if as_json:
        emit(rows)
        return
    if not rows:
        click.echo("no audited writes")
    for r in rows:
        pages = ", ".join(r["pages"]) or "-"
        click.echo(f"{r['at']}  {r['who']:<16} {r['tool']:<13} {r['result']:<6} {pages}")


@click.group()
def db() -> None:
    """The index database: copy it to another backend."""


@db.command("copy")
@click.option("--to", "url", required=True, metavar="URL",
              help="The target database: postgresql://… or sqlite:///path/index.db.")
@click.option("--wait", type=click.FloatRange(0), default=0.0,
              help="Seconds to wait for another indexer.")
@JSON_OPTION
@click.pass_context
def db_copy(ctx: click.Context, url: str, wait: float, as_json: bool) -> None:
    """Build this vault's index in the database at URL, carrying the vectors (by text hash)
    and the audit trail from the current one, so nothing is embedded again.

    The current index is not changed. Point `database:` in .kenning/config.yaml (or
    KENNING_DATABASE_URL) at URL afterwards to use it.
    """
    from kenning.errors import KenningError

    try:
        report = copy_index(vault_root(ctx), url, wait=wait)
    except KenningError as exc:
        raise click.ClickException(exc.message) from None
    if as_json:
        emit(report)
        return
    _say(report)


def _say(report: dict[str, Any]) -> None:
    click.echo(f"copied the index from {report['from']} to {report['to']}: "
               f"{report['vectors_copied']} vectors carried, {report['embedded']} embedded, "
               f"{report['pages']} pages, {report['audit_rows']} audit rows "
               f"({report['seconds']:.1f} s)")
    if report.get("embed_error"):
        click.echo(f"embedding: {report['embed_error']}", err=True)


def _where(root: Any, url: str | None) -> str:
    """A URL named the same way whatever its spelling (a SQLite file by its resolved path)."""
    from kenning.index.store import sqlite_path

    path = sqlite_path(root, url)
    if path is not None:
        return "sqlite:" + str(path.expanduser().resolve())
    return url.rstrip("/")


def copy_index(root: Any, url: str, *, wait: float = 0.0) -> dict[str, Any]:
    """Fill the database at ``url`` with this vault's index: the vectors (by model and text
    hash) and the audit trail copied from the database in use, then the files indexed into it,
    embedding only text no vector was carried for. The database in use is only read."""
    import time

    from kenning.api import Vault
    from kenning.errors import KenningError
    from kenning.index.store import database_url, open_store
    from kenning.index.store.diagnose import page_count

    started = time.monotonic()
    with Vault.open(root) as source:
        here = database_url(source.root, source.config.database)
        if _where(source.root, here) == _where(source.root, url):
            raise KenningError(f"--to {url} is the database this vault uses now; give another")
        src = source.store
        target = open_store(source.root, url)
        moved = Vault(source.root)
        moved._store = target  # the same vault, indexed into the target
        try:
            vectors = target.copy_vectors_from(src, source.embedding_config.storage)
            for key in ("embed_model", "embed_dim"):
                value = src.get_meta(key)
                if value is not None and target.get_meta(key) is None:
                    with target.transaction():
                        target.set_meta(key, value)
            audit_rows = target.copy_team_state_from(src)
            report = moved.index(wait=wait)
            pages = page_count(target)
            described = (src.describe(), target.describe())
        finally:
            moved.close()
    embedding = report.embedding
    return {"from": described[0], "to": described[1], "vectors_copied": vectors,
            "embedded": int(getattr(embedding, "embedded", 0) or 0) if embedding else 0,
            "pages": pages, "audit_rows": audit_rows, "embed_error": report.embed_error,
            "seconds": round(time.monotonic() - started, 3)}
