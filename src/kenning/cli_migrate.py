"""`kenning migrate`: bring a vault an older Kenning wrote to this Kenning's format (a thin
layer over ``Vault.migrate`` and ``Vault.rollback_migration``)."""

from __future__ import annotations

from typing import Any

import click

from kenning.cli_common import JSON_OPTION, emit, open_vault


def register(main: click.Group) -> None:
    """Add this module's commands to the `kenning` group."""
    main.add_command(migrate_command)


@click.command("migrate")
@click.option("--dry-run", is_flag=True, help="Print every change as a diff; write nothing "
              "(the default).")
@click.option("--apply", "apply_", is_flag=True, help="Back up every file it touches to "
              ".kenning/backups/<time>/, then apply the changes as one journaled batch.")
@click.option("--rollback", "rollback", is_flag=False, flag_value="", default=None,
              metavar="[BACKUP]", help="Undo a migration from its backup (default: the latest).")
@click.option("--force", is_flag=True, help="With --rollback: restore over files changed "
              "since the migration.")
@JSON_OPTION
@click.pass_context
def migrate_command(ctx: click.Context, dry_run: bool, apply_: bool, rollback: str | None,
                    force: bool, as_json: bool) -> None:
    """Upgrade the vault to this Kenning's format (`format:` in .kenning/config.yaml).

    Without --apply, a dry run: every change printed as a unified diff, nothing written. A
    vault of a newer format than this Kenning is refused."""

    if sum((dry_run, apply_, rollback is not None)) > 1:
        raise click.UsageError("choose one of --dry-run, --apply and --rollback")
    if force and rollback is None:
        raise click.UsageError("--force goes with --rollback")
    vault = open_vault(ctx)
    if rollback is not None:
        report = vault.rollback_migration(rollback or None, force=force)
        if as_json:
            emit(report)
            return
        click.echo(f"restored {len(report['restored'])} file(s) and removed "
                   f"{len(report['removed'])} from {report['backup']}: the vault is format "
                   f"{report['format']} again")
        _index_line(report["index"])
        return
    report = vault.migrate(apply=apply_)
    if as_json:
        emit(report)
        return
    if not apply_:
        click.echo(report["diff"], nl=False)
    for line in summary(report, applied=apply_):
        click.echo(line)
    if apply_:
        _index_line(report["index"])


def summary(report: dict[str, Any], *, applied: bool) -> list[str]:
    """The plan or what was applied, as a few lines a person reads."""
    lines = [f"note: {n}" for n in report["notes"]]
    lines += [f"note: incomplete backup .kenning/backups/{b} (a migration stopped before it "
              "changed anything) is ignored; delete it when you like"
              for b in report["incomplete_backups"]]
    if not report["pending"]:
        lines.append(f"vault format {report['format']}: up to date, nothing to migrate")
    else:
        verb = "migrated" if applied else "would migrate"
        lines.append(f"vault format {report['format']} → {report['target']}: {verb}; "
                     f"{len(report['renames'])} page(s) move to title names, "
                     f"{len(report['changed'])} file(s) change, {len(report['created'])} "
                     f"created, {len(report['removed'])} removed")
        lines += [f"  step {s}" for s in report["steps"]]
        if applied:
            lines.append(f"backup: {report['backup']} (undo: kenning migrate --rollback)")
        else:
            lines.append("nothing written (dry run); apply with: kenning migrate --apply")
    if not applied:
        lines.append(report["index"]["state"])
    return lines


def _index_line(index: dict[str, Any]) -> None:
    if index.get("indexed"):
        click.echo(f"index: {index['how']} ({index['files']} file(s), {index['removed']} "
                   f"removed); {index['state']}")
    else:
        click.echo(f"index: {index['state']}")
    if index.get("note"):
        click.echo(f"note: {index['note']}")
