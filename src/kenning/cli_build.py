"""`kenning` commands of the build stage (filled in by the stage; registered by kenning.cli)."""

from __future__ import annotations

import click


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""
