"""`kenning import`: bring in the memory another tool keeps (a thin layer over
``Vault.import_from``)."""

from __future__ import annotations

from typing import Any

import click

from kenning.cli_common import JSON_OPTION, emit, open_vault
from kenning.transfer import IMPORT_KINDS, RESTORE_KIND


def register(main: click.Group) -> None:
    """Add this module's commands to the `kenning` group."""
    main.add_command(import_command)


@click.command("import")
@click.argument("kind", type=click.Choice(IMPORT_KINDS), metavar="KIND")
@click.argument("path", type=click.Path(path_type=str))
@click.option("--dry-run", is_flag=True, help="Read the input and say what would be written; "
              "write nothing.")
@JSON_OPTION
@click.pass_context
def import_command(ctx: click.Context, kind: str, path: str, dry_run: bool,
                   as_json: bool) -> None:
    """Import KIND's memory from PATH: rawthink (a vault folder or memory.jsonl),
    basic-memory (a project folder), gbrain (its Markdown export), openclaw (a workspace),
    mem0 (a JSON export); kenning (a `kenning export` archive, restored into this new vault
    with its vectors).

    Every entity becomes a page (or merges into the page of that name; a note of yours is
    never written: the import writes beside it), every observation and relation a fact, each
    citing the line it came from. Nothing is written when the input has a problem; importing
    again adds only what is new."""
    vault = open_vault(ctx)
    report = vault.import_from(kind, path, dry_run=dry_run)
    if as_json:
        emit(report)
        return
    for line in summary(report):
        click.echo(line)


def summary(report: dict[str, Any]) -> list[str]:
    """The report as a few lines a person reads."""
    if report["kind"] == RESTORE_KIND:
        return restore_summary(report)
    read, written = report["read"], report["written"]
    verb = "would write" if report["dry_run"] else "wrote"
    lines = [
        f"{report['kind']} at {report['path']}: read {read['entities']} entities, "
        f"{read['facts']} observations, {read['relations']} relations, {read['decisions']} "
        f"decisions, {read['events']} timeline lines, {read['documents']} documents",
        f"{verb}: {written['pages_created']} new pages, {written['pages_merged']} merged, "
        f"{written['pages_beside']} beside a note of yours; {written['facts']} facts, "
        f"{written['relations']} relations, {written['decisions']} decisions, "
        f"{written['events']} timeline lines, {written['documents']} documents",
    ]
    merged_into = report.get("pages", {}).get("documents_merged") or []
    if merged_into:
        lines.append(f"merged into existing files: {', '.join(merged_into)}")
    if written["already"]:
        lines.append(f"already imported before: {written['already']} items")
    if report["originals"] and (written["originals"] or not report["dry_run"]):
        lines.append(f"originals: {report['originals']}/ (citations open their lines)")
    for entry in report["mapped"]:
        lines.append(f"mapped {entry['field']} {entry['from']!r} → {entry['to']!r}")
    if report["dangling"]:
        names = ", ".join(d["name"] for d in report["dangling"][:10])
        more = len(report["dangling"]) - 10
        lines.append(f"{len(report['dangling'])} relation target(s) not in the input or the "
                     f"vault, kept as links: {names}" + (f" … and {more} more" if more > 0
                                                          else ""))
    for entry in report["skipped"][:20]:
        lines.append(f"skipped {entry['where']}: {entry['reason']}")
    if len(report["skipped"]) > 20:
        lines.append(f"… and {len(report['skipped']) - 20} more skipped (--json lists all)")
    for note in report["notes"][:20]:
        lines.append(f"note: {note}")
    if len(report["notes"]) > 20:
        lines.append(f"… and {len(report['notes']) - 20} more notes (--json lists all)")
    if report.get("note"):
        lines.append(report["note"])
    return lines


def restore_summary(report: dict[str, Any]) -> list[str]:
    """A restore's report (``kenning import kenning ARCHIVE``) as lines."""
    files = report["files"]
    verb = "would write" if report["dry_run"] else "wrote"
    lines = [f"kenning export of {report['exported_at']} at {report['path']}: {verb} "
             f"{files['write'] + files['replace']} files ({files['already']} already there)"]
    if report["replaced"]:
        lines.append(f"replaced what kenning init wrote: {', '.join(report['replaced'])}")
    if not report["dry_run"]:
        lines.append(f"indexed {report['index']['added']} new pages; reused "
                     f"{report['vectors']} vectors (not embedded again)")
    lines += [f"note: {note}" for note in report["notes"]]
    return lines
