"""`kenning mount` (other folders in this vault's index) and `kenning code` (the code graph)."""

from __future__ import annotations

from pathlib import Path

import click

from kenning.cli_common import JSON_OPTION, MOUNT_OPTION, emit, vault_root


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""
    main.add_command(mount)
    main.add_command(code)


def _vault(ctx: click.Context):  # type: ignore[no-untyped-def]
    from kenning.api import Vault

    return Vault.open(vault_root(ctx))


@click.group()
def mount() -> None:
    """Other folders in this vault's index: an Obsidian vault, a team vault, a repository.

    A mounted folder is read, never written. Its pages are NAME:PATH (`team:people/Ada.md`);
    a link inside it resolves in it first, `[[NAME:Page]]` reaches it from anywhere.
    """


@mount.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(["notes", "code"]), default="notes", show_default=True,
              help="notes: Markdown pages; code: a repository (definitions, calls, imports; its "
              "Markdown is ordinary pages).")
@click.option("--federated/--not-federated", default=True, show_default=True,
              help="Join every search by default, or only when named with --mount.")
@JSON_OPTION
@click.pass_context
def mount_add(ctx: click.Context, name: str, path: Path, kind: str, federated: bool,
              as_json: bool) -> None:
    """Mount folder PATH under NAME and index it."""
    vault = _vault(ctx)
    found, report = vault.mount_add(name, path, kind=kind, federated=federated)
    pages = next((m["pages"] for m in vault.mount_list() if m["name"] == name), 0)
    skipped = [(p, r) for p, r in report.skipped if p.startswith(f"{name}:")]
    if as_json:
        emit({**found.as_dict(), "pages": pages,
              "skipped": [{"path": p, "reason": r} for p, r in skipped]})
        return
    where = "joins every search" if federated else f"searched only with --mount {name}"
    click.echo(f"Mounted {found.path} as {name!r} ({kind}; {where}): {pages} pages indexed, "
               f"{len(skipped)} files skipped.")
    for path_, reason in skipped[:10]:
        click.echo(f"  skipped {path_}: {reason}")
    if len(skipped) > 10:
        click.echo(f"  … and {len(skipped) - 10} more (kenning doctor lists them)")


@mount.command("list")
@JSON_OPTION
@click.pass_context
def mount_list(ctx: click.Context, as_json: bool) -> None:
    """The mounts, their folders and how many pages each has in the index."""
    rows = _vault(ctx).mount_list()
    if as_json:
        emit(rows)
        return
    if not rows:
        click.echo("No mounts. Add one with `kenning mount add NAME PATH [--kind code]`.")
        return
    for row in rows:
        state = "" if row["available"] else "  (folder missing: pages kept)"
        fed = "federated" if row["federated"] else "only when named"
        click.echo(f"{row['name']:<16} {row['kind']:<6} {fed:<16} {row['pages']:>6} pages  "
                   f"{row['path']}{state}")


@mount.command("remove")
@click.argument("name")
@JSON_OPTION
@click.pass_context
def mount_remove(ctx: click.Context, name: str, as_json: bool) -> None:
    """Unmount NAME: its pages leave the index (the folder itself is not touched)."""
    found, report = _vault(ctx).mount_remove(name)
    if as_json:
        emit({**found.as_dict(), "pages_removed": report.deleted})
        return
    click.echo(f"Unmounted {name!r} ({found.path}): {report.deleted} files left the index.")


# -- the code graph ------------------------------------------------------------------------------

@click.group()
def code() -> None:
    """The code graph of mounted repositories: definitions, references, callers, callees.

    SYMBOL is a qualified name (kenning.index.links.resolve), its dotted tail (links.resolve,
    Vault.search) or a bare name; every answer cites path#Lstart-Lend.
    """


def _code_command(action: str, doc: str, walks: bool) -> click.Command:
    @click.argument("symbol")
    @MOUNT_OPTION
    @JSON_OPTION
    @click.pass_context
    def command(ctx: click.Context, symbol: str, mounts: tuple[str, ...], as_json: bool,
                depth: int = 1) -> None:
        answer = _vault(ctx).code(action, symbol, depth=depth, mounts=mounts or None)
        if as_json:
            emit(answer)
            return
        _print_code(action, answer)

    command.__doc__ = doc
    if walks:
        command = click.option("--depth", type=click.IntRange(1, 5), default=1,
                               show_default=True, help="Follow calls this many steps.")(command)
    return code.command(action)(command)


def _print_code(action: str, answer: dict) -> None:  # type: ignore[type-arg]
    from kenning.vault.fsio import readable_name

    for d in answer["definitions"]:
        click.echo(f"{d['kind']:<8} {d['qualname']}  {readable_name(d['citation'])}")
        if action == "def" and d["signature"]:
            click.echo(f"         {d['signature']}")
    if action == "refs":
        refs = answer["references"]
        click.echo(f"\n{len(refs)} references" if refs else "\nNo references found.")
        for r in refs:
            where = f"  in {r['in']}" if r["in"] else ""
            click.echo(f"  {r['kind']:<8} {readable_name(r['citation'])}  {r['text']}{where}")
    elif action in ("callers", "callees"):
        edges = answer[action]
        click.echo(f"\n{len(edges)} {action}" if edges else f"\nNo {action} found.")
        for e in edges:
            indent = "  " * e["depth"]
            if action == "callers":
                click.echo(f"{indent}{e['caller'] or '?'}  calls {e['callee']} at "
                           f"{readable_name(e['citation'])}")
            else:
                mark = "" if e.get("resolved") else "  (unresolved)"
                click.echo(f"{indent}{e['callee']}  at {readable_name(e['citation'])}{mark}"
                           + (f"  -> {readable_name(e['definition'])}" if e["definition"]
                              else ""))


_code_command("def", "Where SYMBOL is defined.", False)
_code_command("refs", "Every resolved call and reference to SYMBOL, and notes that name it.",
              False)
_code_command("callers", "What calls SYMBOL (to --depth).", True)
_code_command("callees", "What SYMBOL calls (to --depth); unresolved calls are shown as "
              "written.", True)
