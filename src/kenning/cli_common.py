"""What every ``kenning`` command module shares: ``--json``, JSON output, the vault root, and a
progress bar on stderr. Imports stay light (click only) so ``kenning --help`` stays fast."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON.")

# A progress callback: (done, total or None when unknown, what it is on).
Update = Callable[[int, int | None, str], None]


def emit(data: Any) -> None:
    """Print ``data`` as indented JSON (non-ASCII kept, anything else as ``str``)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def vault_root(ctx: click.Context) -> Path:
    """The vault named by ``-C`` (or ``KENNING_VAULT``), else the one around the current folder."""
    from kenning.vault.layout import find_root

    obj = ctx.find_root().obj or {}
    start = obj.get("vault")
    return find_root(Path(start).expanduser() if start else Path.cwd())


def rich_progress() -> Any:
    """A transient rich Progress on stderr: label, bar, count, elapsed time, ETA and each task's
    ``item`` field (what it is on)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(),
                    TextColumn("{task.fields[item]}", style="dim"),
                    transient=True, console=Console(stderr=True))


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Update | None]:
    """A transient bar with count, elapsed time, ETA and the current item; None when disabled."""
    if not enabled:
        yield None
        return
    with rich_progress() as bar:
        task = bar.add_task(label, total=None, item="")

        def update(done: int, total: int | None, item: str) -> None:
            bar.update(task, completed=done, total=total, item=item[-50:])

        yield update
