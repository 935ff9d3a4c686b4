"""`kenning build`, `kenning merge`, `kenning split`, `kenning why`: the build stage's commands.

```
kenning build [--dry-run] [--batch-size N] [--json]
kenning merge KEEP OTHER [--json]            # OTHER is merged into KEEP and removed
kenning split PAGE --name "New Name" [--alias A]... [--email E]... [--line N]...
              [--match TEXT]... [--json]     # chosen parts of PAGE move to a new page
kenning why PAGE [--json]                    # which sources built PAGE, why each alias joined
```
PAGE is a vault path (``people/Sarah Chen.md``), a file stem, a title or an alias.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kenning.cli_common import JSON_OPTION, emit, progress_bar, vault_root

if TYPE_CHECKING:
    pass

def find_page(root: Path, ref: str) -> str:
    """A page path from a path, stem, title or alias (entity folders first)."""
    from kenning.builder.pages import IndexLoader
    from kenning.builder.rename import BuildCommandError
    from kenning.builder.workspace import Workspace
    from kenning.vault.fsio import resolve_inside

    ref = ref.strip()
    ws = Workspace(root)
    for candidate in (ref, ref + ".md"):
        if candidate.endswith(".md") and "/" in candidate:
            resolve_inside(root, candidate)
            if ws.exists(candidate):
                return candidate
    index = IndexLoader(ws).load()
    key = " ".join(ref.casefold().removesuffix(".md").split())
    stems = [e.page for e in index.entities
             if e.page.rsplit("/", 1)[-1][:-3].casefold() == key]
    titles = [e.page for e in index.entities if e.name.casefold() == key]
    aliases = [e.page for e in index.entities if key in {a.casefold() for a in e.aliases}]
    for found in (stems, titles, aliases):
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise BuildCommandError(f"{ref!r} names several pages: {', '.join(sorted(found))}; "
                                    "give the path")
    for folder in ("meetings",):
        for rel in ws.listdir(folder):
            if rel.rsplit("/", 1)[-1][:-3].casefold() == key:
                return rel
    raise BuildCommandError(f"no page {ref!r} (give a path, file name, title or alias)")


def _warn(notes: list[str]) -> None:
    for note in notes:
        click.secho(f"warning: {note}", fg="yellow", err=True)


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""

    @main.command()
    @click.option("--dry-run", is_flag=True, help="Print the planned page changes as a diff; "
                  "write nothing.")
    @click.option("--batch-size", type=click.IntRange(min=1), default=50, show_default=True,
                  help="Sources per batch (the entity index is rebuilt between batches).")
    @JSON_OPTION
    @click.pass_context
    def build(ctx: click.Context, dry_run: bool, batch_size: int, as_json: bool) -> None:
        """Build people, organization, project, topic and meeting pages from new or changed
        sources."""
        from kenning.builder import run_build
        from kenning.builder.items.llm import ItemModel
        from kenning.builder.llm import make_resolver

        root = vault_root(ctx)
        # With an `llm:` config the model decides each batch and proposes each source's items
        # (validated, with the deterministic results as its suggestions and fallback); without
        # one nothing changes.
        resolver = make_resolver(root)
        with progress_bar("Building", "sources") as progress:
            report = run_build(root, batch_size=batch_size, dry_run=dry_run, progress=progress,
                               resolver=resolver, item_model=ItemModel.from_vault(root))
        if resolver is not None:
            report.warnings.extend(resolver.warnings)
        if as_json:
            emit(report.as_dict())
            return
        if dry_run and report.diff:
            click.echo(report.diff, nl=False)
        verb = "Would build" if dry_run else "Built"
        click.echo(f"{verb} {report.sources_built} of {report.sources_total} source(s) in "
                   f"{report.batches} batch(es), {report.seconds:.1f} s; strictness "
                   f"{report.strictness} ({report.strictness_why}).")
        click.echo(f"Mentions: {report.mentions} ({report.linked} on pages, "
                   f"{report.unresolved} unresolved). Pages: {len(report.pages_created)} new, "
                   f"{len(report.pages_updated)} updated, {len(report.renamed)} renamed.")
        if report.items_found or report.items_total:
            click.echo(f"Items: {report.items_found} found in this build's sources, "
                       f"{report.items_new} new, {report.items_closed} closed; "
                       f"{report.items_total} held in all.")
        for path in report.pages_created[:20]:
            click.echo(f"  + {path}")
        if len(report.pages_created) > 20:
            click.echo(f"  … and {len(report.pages_created) - 20} more")
        for old, new in report.renamed[:20]:
            click.echo(f"  {old} → {new}")
        for warning in report.warnings[:50]:
            click.secho(f"warning: {warning}", fg="yellow", err=True)
        for note in report.item_notes[:10]:
            click.echo(f"note: {note}", err=True)
        if len(report.item_notes) > 10:
            click.echo(f"note: … and {len(report.item_notes) - 10} more item note(s) "
                       "(kenning build --json)", err=True)

    @main.command()
    @click.argument("keep")
    @click.argument("other")
    @JSON_OPTION
    @click.pass_context
    def merge(ctx: click.Context, keep: str, other: str, as_json: bool) -> None:
        """Merge page OTHER into page KEEP (aliases, emails, facts, timeline, notes; links to
        OTHER are rewritten; OTHER is removed)."""
        from kenning.builder.filenames import follow_manual_links
        from kenning.builder.journal import build_lock
        from kenning.builder.rename import merge_pages
        from kenning.builder.state import BuildState
        from kenning.builder.workspace import Workspace
        from kenning.vault.created import update_created
        from kenning.vault.writes import write_lock

        root = vault_root(ctx)
        a, b = find_page(root, keep), find_page(root, other)
        # Never beside a running build; an interrupted one is rolled back first.
        with build_lock(root) as notes, write_lock(root):
            _warn(notes)
            state = BuildState.load(root)
            ws = Workspace(root)
            result = merge_pages(ws, state, a, b)
            ws.commit()
            update_created(root, removed=[b])
            _follow_log(root, state)
            state.save(root)
        follow_manual_links(root, {b: a})
        if as_json:
            emit(result)
        else:
            click.echo(f"Merged {b} into {a}: {result['facts']} fact(s), {result['timeline']} "
                       f"timeline line(s); links rewritten in "
                       f"{len(result['links_rewritten'])} page(s).")

    @main.command()
    @click.argument("page")
    @click.option("--name", required=True, help="Title of the new page.")
    @click.option("--alias", "aliases", multiple=True, help="An alias to move (repeatable).")
    @click.option("--email", "emails", multiple=True, help="An email to move (repeatable).")
    @click.option("--line", "lines", type=int, multiple=True,
                  help="A fact or timeline line (file line number) to move (repeatable).")
    @click.option("--match", "matches", multiple=True,
                  help="Move every fact and timeline line containing this text (repeatable).")
    @JSON_OPTION
    @click.pass_context
    def split(ctx: click.Context, page: str, name: str, aliases: tuple[str, ...],
              emails: tuple[str, ...], lines: tuple[int, ...], matches: tuple[str, ...],
              as_json: bool) -> None:
        """Move chosen aliases, emails and fact/timeline lines of PAGE to a new page."""
        from kenning.builder.journal import build_lock
        from kenning.builder.rename import split_page
        from kenning.builder.state import BuildState
        from kenning.builder.workspace import Workspace
        from kenning.vault.created import update_created
        from kenning.vault.writes import write_lock

        root = vault_root(ctx)
        path = find_page(root, page)
        with build_lock(root) as notes, write_lock(root):
            _warn(notes)
            state = BuildState.load(root)
            ws = Workspace(root)
            result = split_page(ws, state, path, name, aliases=aliases, emails=emails,
                                lines=lines, match=matches)
            ws.commit()
            update_created(root, add={result["new_page"]: "split"})
            state.save(root)
        if as_json:
            emit(result)
        else:
            click.echo(f"Split {path} → {result['new_page']}: {len(result['lines'])} line(s), "
                       f"{len(result['aliases'])} alias(es), {len(result['emails'])} "
                       "email(s) moved.")

    @main.command()
    @click.argument("page")
    @JSON_OPTION
    @click.pass_context
    def why(ctx: click.Context, page: str, as_json: bool) -> None:
        """Explain from the mention log which sources built PAGE and why each alias joined."""
        root = vault_root(ctx)
        path = find_page(root, page)
        from kenning.builder.explain import explain

        data = explain(root, path)
        if as_json:
            emit(data)
            return
        click.echo(f"{path}: {data['mentions']} mention(s) in {len(data['sources'])} source(s).")
        for s in data["sources"][:50]:
            rules = ", ".join(f"{r} ×{n}" for r, n in s["rules"].items())
            click.echo(f"  {s['source']}#L{s['first_line']}  {rules}")
        if len(data["sources"]) > 50:
            click.echo(f"  … and {len(data['sources']) - 50} more")
        for kind in ("aliases", "emails"):
            for item in data[kind]:
                how = item.get("first")
                why_text = (f"{how['source']}#L{how['line']} ({how['rule']}, "
                            f"{how['confidence']})") if how else "not from a mention (by hand?)"
                click.echo(f"{kind[:-1]} {item['value']!r}: {why_text}")
        for p in data["possibly"][:20]:
            click.echo(f"possibly: {p['source']}#L{p['line']} {p['text']!r} ({p['rule']})")


def _follow_log(root: Path, state: Any) -> None:
    from kenning.builder import state as st

    rows = st.read_log(root)
    if not rows:
        return
    for r in rows:
        if r.get("page"):
            r["page"] = state.follow(r["page"])
        if r.get("candidates"):
            r["candidates"] = sorted({state.follow(c) for c in r["candidates"]})
    st.write_log(root, rows)
