"""`kenning items`: the commitments, asks and decisions written on pages (a thin layer over
``Vault.items``)."""

from __future__ import annotations

import click

from kenning.cli_common import JSON_OPTION, MOUNT_OPTION, emit, open_vault


def register(main: click.Group) -> None:
    """Add this module's command to the `kenning` group."""
    main.add_command(items)


@click.command()
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="commitment, ask or decision (repeat for several).")
@click.option("--who", metavar="PAGE|me", help="Who promised, asked or decided: a page "
              "(name, alias or path) or me.")
@click.option("--to", "to", metavar="PAGE|me", help="To whom: a page or me.")
@click.option("--status", metavar="open|done", help="open (not done) or done.")
@click.option("--due-before", metavar="DATE", help="Due before YYYY-MM-DD.")
@click.option("--overdue", is_flag=True, help="Open and due before today.")
@click.option("--since", metavar="DATE", help="Said or written on or after YYYY-MM-DD.")
@click.option("--page", metavar="PAGE", help="Only items written on this page.")
@click.option("-n", "--limit", type=click.IntRange(1, 100_000), help="At most this many.")
@click.option("--today", metavar="DATE", envvar="KENNING_TODAY",
              help="The day --overdue counts from (default: today; env KENNING_TODAY).")
@MOUNT_OPTION
@JSON_OPTION
@click.pass_context
def items(ctx: click.Context, kinds: tuple[str, ...], who: str | None, to: str | None,
          status: str | None, due_before: str | None, overdue: bool, since: str | None,
          page: str | None, limit: int | None, today: str | None, as_json: bool,
          mounts: tuple[str, ...] = ()) -> None:
    """Commitments, asks and decisions: overdue first, then due soonest, then newest; each
    cited to its source line (path#Lstart-Lend)."""
    from kenning.recall.items import line

    vault = open_vault(ctx)
    found = vault.items(kind=kinds, who=who, to=to, status=status, due_before=due_before,
                        overdue=overdue, since=since, page=page, limit=limit, today=today,
                        mounts=mounts or None)
    if as_json:
        emit(found)
        return
    if not found:
        click.echo("No items.")
        return
    for item in found:
        click.echo(line(item))
