"""`kenning export`: the vault and its index as one portable archive (a thin layer over
``Vault.export``; the format is docs/export.md)."""

from __future__ import annotations

from typing import Any

import click

from kenning.cli_common import JSON_OPTION, emit, open_vault, progress_bar


def register(main: click.Group) -> None:
    """Add this module's commands to the `kenning` group."""
    main.add_command(export_command)


@click.command("export")
@click.argument("dest", required=False, type=click.Path(dir_okay=False, path_type=str))
@click.option("--no-vectors", is_flag=True, help="Leave the vectors out (a smaller archive; "
              "whoever imports it embeds again).")
@click.option("--force", is_flag=True, help="Replace DEST when it exists.")
@JSON_OPTION
@click.pass_context
def export_command(ctx: click.Context, dest: str | None, no_vectors: bool, force: bool,
                   as_json: bool) -> None:
    """Write the vault and its index to DEST, a .tar.gz (or .zip) another tool can read
    without Kenning: every vault file as it is, and JSON Lines of the pages, facts, links,
    items and timeline, the vectors keyed by the SHA-256 of their text, and a manifest with
    the SHA-256 of every file. Default DEST: kenning-export-<vault>-<UTC date>.tar.gz here
    (beside the vault when here is inside it).

    The index is brought up to date first; writers wait while its snapshot is taken; a
    failure leaves no DEST."""
    vault = open_vault(ctx)
    with progress_bar("Exporting", "files") as progress:
        report = vault.export(dest, vectors=not no_vectors, force=force, progress=progress)
    if as_json:
        emit(report)
        return
    for line in summary(report):
        click.echo(line)


def summary(report: dict[str, Any]) -> list[str]:
    """The report as a few lines a person reads."""
    counts = report["counts"]
    size = report["bytes"]
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"
    lines = [f"exported to {report['archive']} ({shown}, {report['seconds']} s)",
             f"{counts['files']} files; {counts['pages']} pages, {counts['facts']} facts, "
             f"{counts['links']} links, {counts['items']} items, {counts['timeline']} timeline "
             f"lines, {counts['vectors']} vectors"]
    embedding = report["embedding"]
    if embedding:
        lines.append(f"vectors: {embedding['model']} ({embedding['dim']} dims)"
                     + ("" if embedding["exported"] else ", left out (--no-vectors)"))
    for entry in report["skipped"][:20]:
        lines.append(f"skipped {entry['path']}: {entry['reason']}")
    if len(report["skipped"]) > 20:
        lines.append(f"… and {len(report['skipped']) - 20} more skipped (--json lists all)")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    return lines
