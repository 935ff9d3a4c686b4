"""What every ``kenning`` command module shares: ``--json``, JSON output, the vault root, and a
progress bar on stderr. Imports stay light (click only) so ``kenning --help`` stays fast."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from kenning.api import Vault

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
MOUNT_OPTION = click.option(
    "--mount", "mounts", multiple=True, metavar="NAME",
    help="Only pages of this mount (repeat; 'vault' is this vault's own pages). Default: the "
    "vault and every federated mount.")

# A progress callback: (done, total or None when unknown, what it is on).
Update = Callable[[int, int | None, str], None]


def emit(data: Any) -> None:
    """Print ``data`` as indented JSON (non-ASCII kept, anything else as ``str``)."""
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A file name that is not UTF-8 (or a lone surrogate from a source): JSON that strict
        # parsers read, with the bad bytes spelled ``\xe9``.
        from kenning.vault.fsio import utf8_data

        text = json.dumps(utf8_data(json.loads(text)), ensure_ascii=False, indent=2)
    click.echo(text)


def vault_root(ctx: click.Context) -> Path:
    """The vault named by ``-C`` (or ``KENNING_VAULT``), else the one around the current folder."""
    from kenning.vault.layout import find_root

    obj = ctx.find_root().obj or {}
    start = obj.get("vault")
    return find_root(Path(start).expanduser() if start else Path.cwd())


def open_vault(ctx: click.Context) -> Vault:
    """The :class:`~kenning.api.Vault` named by ``-C`` (or ``KENNING_VAULT``), else the one
    around the current folder."""
    from kenning.api import Vault

    return Vault.open((ctx.find_root().obj or {}).get("vault"))


# Seconds between progress lines when stderr is not a terminal (a log, a pipe, CI).
PROGRESS_EVERY_ENV = "KENNING_PROGRESS_EVERY"
PROGRESS_EVERY = 5.0


def rich_progress() -> Any:
    """Progress on stderr: on a terminal a transient rich bar (label, bar, count, elapsed time,
    ETA, each task's ``item``); anywhere else plain lines (:class:`LineProgress`)."""
    import sys

    if not sys.stderr.isatty():
        return LineProgress()
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


def progress_every() -> float:
    """Seconds between progress lines off a terminal: ``KENNING_PROGRESS_EVERY``, else 5."""
    import os

    try:
        return float(os.environ.get(PROGRESS_EVERY_ENV, PROGRESS_EVERY))
    except ValueError:
        return PROGRESS_EVERY


class LineProgress:
    """Progress off a terminal: a line on stderr every few seconds and one at the end, e.g.
    ``index: embedding 1,200/5,300 chunks (9.4/s, ETA 7m18s)``. The same calls as rich's
    ``Progress`` (``add_task``, ``update``, a context manager); stdout is never written, so
    ``--json`` output stays clean. ``KENNING_PROGRESS_EVERY`` sets the seconds (0: silent)."""

    def __init__(self, every: float | None = None, command: str | None = None) -> None:
        self.every = progress_every() if every is None else every
        self.command = command if command is not None else _command_name()
        self.tasks: list[dict[str, Any]] = []

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        import time

        for task in self.tasks:
            # A closing line for work long enough to have been waited for; a quick command
            # stays quiet.
            long = task["printed"] is not None or time.monotonic() - task["created"] >= self.every
            if task["done"] != task["printed"] and long:
                self._print(task, final=True)

    def add_task(self, description: str, total: int | None = None, **fields: Any) -> int:
        """Start a task; returns its id for :meth:`update`."""
        import time

        self.tasks.append({"description": description, "total": total, "done": 0,
                           "printed": None, "item": str(fields.get("item") or ""),
                           "unit": str(fields.get("unit") or ""), "start": None,
                           "start_done": 0, "last": time.monotonic(),
                           "created": time.monotonic()})
        return len(self.tasks) - 1

    def update(self, task_id: int, *, completed: int | None = None, total: int | None = None,
               **fields: Any) -> None:
        """Record progress; prints a line when ``every`` seconds passed since the last one."""
        import time

        task = self.tasks[task_id]
        now = task["moved"] = time.monotonic()
        if completed is not None:
            if task["start"] is None:  # the rate counts from the first report (after set-up)
                task["start"], task["start_done"] = now, completed
            task["done"] = completed
        if total is not None:
            task["total"] = total
        if "item" in fields:
            task["item"] = str(fields["item"] or "")
        if self.every > 0 and now - task["last"] >= self.every:
            self._print(task)

    def _print(self, task: dict[str, Any], *, final: bool = False) -> None:
        import sys
        import time

        if self.every <= 0:
            return
        now = time.monotonic()
        task["last"], task["printed"] = now, task["done"]
        if final:
            now = task.get("moved", now)  # its own time, not the tasks that ran after it
        done, total = task["done"], task["total"]
        unit = task["unit"] or (task["item"] if task["item"] in ("chunks", "files") else "")
        count = f"{done:,}/{total:,}" if total else f"{done:,}"
        parts = []
        elapsed = now - task["start"] if task["start"] is not None else 0.0
        if elapsed > 0 and done > task["start_done"]:
            rate = (done - task["start_done"]) / elapsed
            parts.append(f"{rate:,.1f}/s")
            if total and done < total and not final:
                parts.append(f"ETA {duration((total - done) / rate)}")
        if final or (total and done >= total):
            parts.append(f"done in {duration(elapsed)}" if elapsed else "done")
        item = task["item"] if task["item"] and task["item"] != unit else ""
        line = f"{task['description'].lower()} {count}" + (f" {unit}" if unit else "") \
            + (f" ({', '.join(parts)})" if parts else "") + (f" {item[-60:]}" if item else "")
        prefix = f"{self.command}: " if self.command else ""
        sys.stderr.write(prefix + line + "\n")
        sys.stderr.flush()


def duration(seconds: float) -> str:
    """``7m18s``, ``1h02m``, ``36s``."""
    s = max(0, round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def _command_name() -> str:
    """The running command without the program name (``index``, ``sync email``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "kenning"
    parts = ctx.command_path.split(" ")
    return " ".join(parts[1:]) or parts[0]


@contextmanager
def progress_bar(label: str, unit: str = "") -> Iterator[Update]:
    """Progress on stderr (a bar on a terminal, lines elsewhere) with count, rate and ETA and
    the current item. Every mode shows it: ``--json`` changes only stdout."""
    with rich_progress() as bar:
        task = bar.add_task(label, total=None, item="", unit=unit)

        def update(done: int, total: int | None, item: str) -> None:
            bar.update(task, completed=done, total=total, item=item[-50:])

        yield update
