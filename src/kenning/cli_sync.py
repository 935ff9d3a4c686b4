"""``kenning sync …`` and ``kenning sources …``: the raw layer's commands.

Each ``sync`` subcommand calls its connector's ``sync(root, target, …)`` and prints the
:class:`~kenning.sources.store.SyncReport`: counts, then one line per warning.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kenning.cli_common import JSON_OPTION, emit, progress_bar, vault_root

if TYPE_CHECKING:
    from kenning.sources.store import Progress, SyncReport


def _run(ctx: click.Context, label: str, as_json: bool,
         call: Callable[[Path, Progress | None], SyncReport]) -> None:
    root = vault_root(ctx)
    with progress_bar(label, "messages" if label == "Email" else "") as progress:
        report = call(root, progress)
    if as_json:
        emit(report.as_dict())
    else:
        _print(report)
    if report.warnings and not (report.created or report.appended or report.unchanged
                                or report.rerendered or report.kept):
        sys.exit(1)


def _print(report: SyncReport) -> None:
    click.echo(f"{report.connector}: read {report.items_read}; {report.created} new source "
               f"file(s), {report.appended} updated, {report.unchanged} unchanged; "
               f"{report.entries_added} entries added.")
    if report.copies:
        click.echo(f"{report.copies} cop{'y' if report.copies == 1 else 'ies'} of items "
                   "already written (the same message in two folders …) kept once.")
    for repair in report.repairs[:50]:
        click.echo(f"repair: {repair}")  # a newer renderer re-rendered (or kept) the file
    for warning in report.warnings[:50]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if len(report.warnings) > 50:
        click.secho(f"… and {len(report.warnings) - 50} more warnings (use --json for all)",
                    fg="yellow", err=True)


@click.group()
def sync() -> None:
    """Turn mailboxes, transcripts, chats and calendars into sources/ files (idempotent)."""


@sync.command("email")
@click.argument("target")
@click.option("--folder", "folders", multiple=True,
              help="IMAP folder to sync (repeat; default INBOX).")
@click.option("--password-env", default="KENNING_IMAP_PASSWORD", show_default=True,
              help="Environment variable holding the IMAP password (else the OS keyring).")
@JSON_OPTION
@click.pass_context
def sync_email(ctx: click.Context, target: str, folders: tuple[str, ...], password_env: str,
               as_json: bool) -> None:
    """Sync email from an mbox file, a Maildir, a folder of .eml files or imap(s)://user@host."""
    from kenning.sources import email

    _run(ctx, "Email", as_json, lambda root, progress: email.sync(
        root, target, progress=progress, folders=list(folders) or None,
        password_env=password_env))


@sync.command("meetings")
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@JSON_OPTION
@click.pass_context
def sync_meetings(ctx: click.Context, target: Path, as_json: bool) -> None:
    """Sync meeting transcripts: WebVTT, SRT, plain text, Granola, Fireflies, QMSum (file or
    folder)."""
    from kenning.sources import meetings

    _run(ctx, "Meetings", as_json,
         lambda root, progress: meetings.sync(root, target, progress=progress))


@sync.command("chats")
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@JSON_OPTION
@click.pass_context
def sync_chats(ctx: click.Context, target: Path, as_json: bool) -> None:
    """Sync chat and agent sessions: Claude Code JSONL, ChatGPT export, LoCoMo, generic JSON."""
    from kenning.sources import chats

    _run(ctx, "Chats", as_json, lambda root, progress: chats.sync(root, target, progress=progress))


@sync.command("calendar")
@click.argument("target", type=click.Path(exists=True, path_type=Path))
@click.option("--since", help="Expand recurring events from this date (default: 1 year ago).")
@click.option("--until", help="… up to this date (default: 90 days ahead).")
@JSON_OPTION
@click.pass_context
def sync_calendar(ctx: click.Context, target: Path, since: str | None, until: str | None,
                  as_json: bool) -> None:
    """Sync calendar events from an .ics file or a folder of them."""
    from kenning.sources import calendar

    _run(ctx, "Calendar", as_json, lambda root, progress: calendar.sync(
        root, target, progress=progress, since=since, until=until))


@click.group()
def sources() -> None:
    """What the raw layer holds: counts per kind and each connector's last sync."""


@sources.command("list")
@JSON_OPTION
@click.pass_context
def sources_list(ctx: click.Context, as_json: bool) -> None:
    """Source files per kind and the last sync of each connector."""
    from kenning.sources.inventory import inventory

    data = inventory(vault_root(ctx))
    if as_json:
        emit(data)
        return
    for kind, count in data["kinds"].items():
        click.echo(f"{kind:10} {count:6} file(s)")
    for c in data["connectors"]:
        click.echo(f"{c['connector']:10} last sync {c['last_sync'] or 'never'}, "
                   f"{c['sources']} source(s)")


@sources.command("show")
@click.argument("source")
@JSON_OPTION
@click.pass_context
def sources_show(ctx: click.Context, source: str, as_json: bool) -> None:
    """One source file's metadata (by path, file name or source id)."""
    from kenning.sources.inventory import describe

    data = describe(vault_root(ctx), source)
    if as_json:
        emit(data)
        return
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value[:20]) + (" …" if len(value) > 20 else "")
        click.echo(f"{key}: {value}")


def register(main: click.Group) -> None:
    main.add_command(sync)
    main.add_command(sources)
