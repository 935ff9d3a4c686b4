"""The ``kenning`` command: a thin layer over ``kenning.api.Vault``.

Heavy modules (rich, the index, markdown-it) are imported inside commands so ``kenning --help``
stays fast. Every command that prints results takes ``--json``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from kenning import __version__
from kenning.cli_common import JSON_OPTION, MOUNT_OPTION, rich_progress
from kenning.cli_common import emit as _emit
from kenning.errors import KenningError

if TYPE_CHECKING:
    from kenning.api import Vault
    from kenning.index.indexer import IndexReport


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _open(ctx: click.Context) -> Vault:
    from kenning.api import Vault

    return Vault.open(ctx.obj.get("vault"))


def _output_closed(landed: bool) -> NoReturn:
    """The reader of the output went away (``kenning … --json | head -1``): stop at once, with
    no traceback and no message (stderr may be the same pipe). The streams point at the null
    device so the interpreter's last flush is quiet too. Exit 0 when a memory write landed (the
    write is done: the same rule as a late failure after it), else 1, as click does."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    sys.exit(0 if landed else 1)


class KenningGroup(click.Group):
    """Turns Kenning errors into one clear line and a non-zero exit, and a closed output pipe
    into a quiet exit."""

    def invoke(self, ctx: click.Context) -> Any:
        from kenning.vault.writes import track_landed

        for stream in (sys.stdout, sys.stderr):
            # A file name that is not UTF-8 (or a lone surrogate in a source) is printed
            # escaped, never an encoding error after the work was done.
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        as_json = "--json" in sys.argv[1:]
        with track_landed() as landed:
            try:
                done = super().invoke(ctx)
                sys.stdout.flush()      # a closed pipe shows here, not at interpreter exit
                return done
            except BrokenPipeError:
                _output_closed(bool(landed) and landed.memory_write)
            except Exception as exc:
                if landed and landed.memory_write \
                        and not isinstance(exc, click.exceptions.Exit | click.ClickException):
                    # The write landed: a later step's failure is a warning, never a failure
                    # that makes a retrying agent write it twice.
                    from kenning.api import written_with_warning

                    result = landed.result or written_with_warning(landed.paths, exc)
                    try:
                        if as_json:
                            _emit(result)
                        click.secho(f"warning: {result['note']}", fg="yellow", err=True)
                    except BrokenPipeError:
                        _output_closed(True)
                    sys.exit(0)
                if isinstance(exc, KenningError):
                    click.secho(f"error: {exc}", fg="red", err=True)
                    # A value outside the vocabulary is a usage error, like a bad option.
                    sys.exit(2 if isinstance(exc, ValueError) else 1)
                if isinstance(exc, ValueError):
                    click.secho(f"error: {exc}", fg="red", err=True)
                    sys.exit(2)
                raise


@click.group(cls=KenningGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "--vault", type=click.Path(file_okay=False, path_type=Path),
              envvar="KENNING_VAULT", help="The vault (default: the one containing the current "
              "folder; env KENNING_VAULT).")
@click.version_option(__version__, prog_name="kenning")
@click.pass_context
def main(ctx: click.Context, vault: Path | None) -> None:
    """Kenning: local-first memory for AI agents, kept as plain Markdown pages."""
    ctx.ensure_object(dict)
    ctx.obj["vault"] = vault


# -- init / index --------------------------------------------------------------------------


@main.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@JSON_OPTION
@click.pass_context
def init(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Create a vault at PATH, or adopt an existing Obsidian vault in place (files untouched)."""
    from kenning.api import Vault
    from kenning.vault.layout import iter_markdown_files

    vault, adopted = Vault.init(path or ctx.obj.get("vault") or Path("."))
    # Notes to index, or an empty vault (at most the memory.md init wrote) whose first step is
    # bringing sources in.
    has_notes = any(f.path != "memory.md" for f in iter_markdown_files(vault.root))
    if as_json:
        _emit({"root": str(vault.root), "adopted": adopted,
               "next": "index" if has_notes else "sync"})
        return
    if adopted:
        click.echo(f"Adopted the existing vault at {vault.root} (no file was changed; "
                   "Kenning keeps its state in .kenning/).")
    else:
        click.echo(f"Created a vault at {vault.root}.")
    if has_notes:
        click.echo(f"Next: kenning -C {vault.root} index")
    else:
        click.echo("Next: fill in owner: in .kenning/config.yaml, then bring sources in, e.g.\n"
                   f"  kenning -C {vault.root} sync email ~/Mail/archive.mbox\n"
                   "  (also sync meetings, chats, calendar; then kenning build and kenning index)")


class _Bars:
    """Progress bars for an index run: files first, then vectors (with an ETA)."""

    def __init__(self, bar: Any, label: str) -> None:
        self.bar, self.label = bar, label
        self.files_task: Any = None
        self.vector_task: Any = None

    def files(self, done: int, total: int, path: str) -> None:
        if self.files_task is None:
            self.files_task = self.bar.add_task(self.label, total=total, item="", unit="files")
        self.bar.update(self.files_task, completed=done, total=total, item=path[-50:])

    def vectors(self, done: int, total: int) -> None:
        if self.vector_task is None:
            self.vector_task = self.bar.add_task("Embedding", total=total, item="chunks",
                                                 unit="chunks")
        self.bar.update(self.vector_task, completed=done, total=total)


@contextmanager
def _progress(label: str) -> Iterator[_Bars]:
    """Progress on stderr in every mode (a bar on a terminal, lines elsewhere): ``--json``
    changes only stdout."""
    with rich_progress() as bar:
        yield _Bars(bar, label)


def _print_report(report: IndexReport, verb: str) -> None:
    from kenning.vault.fsio import readable_name

    links = report.links
    click.echo(
        f"{verb} {report.scanned} Markdown files in {report.seconds:.2f} s: "
        f"{report.added} added, {report.updated} updated, {report.deleted} deleted, "
        # Every file is counted once: a skipped one as skipped, whether new or seen before.
        f"{max(report.scanned - report.added - report.updated - len(report.skipped), 0)} "
        "unchanged"
        + (f" ({report.touched} touched, not re-parsed)" if report.touched else "")
        + (f", {len(report.skipped)} skipped" if report.skipped else "") + ".")
    click.echo(
        f"Links: {links.get('resolved', 0)} resolved, {links.get('file', 0)} to attachments, "
        f"{links.get('unresolved', 0)} dangling, {links.get('ambiguous', 0)} ambiguous. "
        f"Problems: {report.problems}"
        + (" (see `kenning doctor`)." if report.problems else "."))
    for line in report.found[:10]:  # what this run found, each naming its file and line
        click.echo(f"  {readable_name(line)}")
    if len(report.found) > 10:
        click.echo(f"  … {len(report.found) - 10} more in `kenning doctor`")
    if report.skipped:
        click.echo(f"Skipped {len(report.skipped)} file(s):")
        for path, reason in report.skipped[:20]:
            click.echo(f"  {readable_name(path)}: {reason}")
    if report.embedding is not None:
        e = report.embedding
        if e.embedded:
            click.echo(f"Embedded {e.embedded} chunk texts in {e.seconds:.1f} s "
                       f"({e.rate:.1f}/s) with {e.model}."
                       + (f" {e.cut} of them {'was' if e.cut == 1 else 'were'} longer than "
                          "the model's context and cut to it." if e.cut else ""))
        else:
            click.echo(f"Vectors up to date ({e.model}).")
    if report.embed_error:
        click.echo(f"No vectors: {report.embed_error}. Recall stays lexical + graph.")


def _report_dict(report: IndexReport) -> dict[str, Any]:
    from dataclasses import asdict

    data = asdict(report)
    data["skipped"] = [{"path": p, "reason": r} for p, r in report.skipped]
    return data


WAIT_OPTION = click.option("--wait", type=float, default=0.0, show_default=True,
                           help="Seconds to wait if another run holds the index.")


def _run_index(ctx: click.Context, wait: float, as_json: bool, embed: bool, *,
               rebuild: bool) -> None:
    vault = _open(ctx)
    label, verb = ("Rebuilding", "Rebuilt from") if rebuild else ("Indexing", "Indexed")
    with _progress(label) as bars:
        run = vault.rebuild if rebuild else vault.index
        report = run(bars.files, wait=wait, embed=embed, embed_progress=bars.vectors)
    if as_json:
        _emit(_report_dict(report))
    else:
        _print_report(report, verb)


NO_EMBED_OPTION = click.option("--no-embed", "no_embed", is_flag=True,
                               help="Skip the embedding pass (lexical index only).")


@main.command()
@WAIT_OPTION
@NO_EMBED_OPTION
@JSON_OPTION
@click.pass_context
def index(ctx: click.Context, wait: float, no_embed: bool, as_json: bool) -> None:
    """Index what changed (size, mtime, then content hash), then embed new chunk texts."""
    _run_index(ctx, wait, as_json, not no_embed, rebuild=False)


@main.command()
@WAIT_OPTION
@NO_EMBED_OPTION
@JSON_OPTION
@click.pass_context
def rebuild(ctx: click.Context, wait: float, no_embed: bool, as_json: bool) -> None:
    """Drop the index and build it again from the files (cached vectors are kept)."""
    _run_index(ctx, wait, as_json, not no_embed, rebuild=True)


# -- recall --------------------------------------------------------------------------------


TAG_OPTION = click.option("--tag", "tags", multiple=True,
                          help="Only pages with this tag (repeat: every tag; 'a' also matches "
                          "nested 'a/b').")


@main.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-m", "--mode", type=click.Choice(["hybrid", "lexical", "dense"]),
              default="hybrid", show_default=True, help="Which arms to use.")
@click.option("-t", "--type", "types", multiple=True, help="Only pages of this type (repeat).")
@click.option("-d", "--domain", "domains", multiple=True, help="Only this domain (repeat).")
@click.option("-f", "--folder", "folders", multiple=True, help="Only under this folder.")
@click.option("-e", "--entity", help="Only pages that link to or mention this page.")
@click.option("--since", help="Only pages dated on or after YYYY-MM-DD.")
@click.option("--until", help="Only pages dated on or before YYYY-MM-DD.")
@click.option("--as-of", help="As of YYYY-MM-DD: pages that existed then, facts valid then.")
@click.option("-n", "--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--budget", type=click.IntRange(1, 1_000_000),
              help="Fill about this many tokens with the best passages (each with its "
              "neighbouring lines when they fit), grouped under their page.")
@click.option("--explain", is_flag=True, help="Show each result's score breakdown.")
@click.option("-g", "--group", type=click.Choice(["page", "chunk"]), default="page",
              show_default=True, help="One result per page, or per passage (best evidence "
              "first: what to fill a context window with).")
@click.option("--near-symbol", metavar="SYMBOL",
              help="Raise code structurally close to SYMBOL (its callers, callees, members) "
              "and add what no arm found.")
@click.option("--walk-depth", type=click.IntRange(0, 5), default=1, show_default=True,
              help="How many call-graph steps --near-symbol walks.")
@TAG_OPTION
@MOUNT_OPTION
@JSON_OPTION
@click.pass_context
def search(ctx: click.Context, query: tuple[str, ...], mode: str, types: tuple[str, ...],
           domains: tuple[str, ...], folders: tuple[str, ...], entity: str | None,
           since: str | None, until: str | None, as_of: str | None, limit: int,
           budget: int | None, explain: bool, group: str, as_json: bool,
           tags: tuple[str, ...] = (), mounts: tuple[str, ...] = (),
           near_symbol: str | None = None, walk_depth: int = 1) -> None:
    """Search the vault; results grouped by page, each with a citation path#Lstart-Lend."""
    vault = _open(ctx)
    text = " ".join(query)
    if not text.strip():
        raise click.BadParameter("the query is empty", param_hint="QUERY")
    results = vault.search(text, mode=mode, types=types, domains=domains, folders=folders,
                           entity=entity, since=_date(since, "--since"),
                           until=_date(until, "--until"), as_of=_date(as_of, "--as-of"),
                           limit=limit, budget=budget, explain=explain, group=group, tags=tags,
                           mounts=mounts or None, near_symbol=near_symbol,
                           walk_depth=walk_depth)
    coverage = results.coverage
    from kenning.vault import provenance

    ledger = provenance.Ledger(vault.root)  # what remote MCP callers wrote is shown as theirs
    if as_json:
        from kenning import answers

        data = answers.lean({
            "query": text, "mode": results.mode, "notes": results.notes,
            "coverage": {"embedded": coverage[0], "chunks": coverage[1]} if coverage else None,
            "results": provenance.mark(vault.root, [r.to_dict() for r in results], ledger)})
        # The same ceiling as an agent's: --budget counts the whole answer.
        _emit(answers.fit(data, budget, answers.cut_evidence) if budget else data)
        return
    from rich.markup import escape

    from kenning.vault.fsio import readable_name

    console = _console()
    for note in results.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    if not results:
        click.echo(f"No results for {text!r}.")
        return
    for rank, result in enumerate(results, 1):
        kind = f" [dim]({result.type})[/dim]" if result.type else ""
        mark = " [green]exact[/green]" if result.exact else ""
        console.print(f"[bold]{rank}. {escape(readable_name(result.title))}[/bold]{kind}{mark}  "
                      f"[dim]score {result.score:.3g}[/dim]")
        for hit in result.hits:
            where = f"{result.path}#L{hit.start_line}-L{hit.end_line}"
            flag = provenance.MARK if ledger and ledger.cites(where) else ""
            how = f"  [dim](found by {hit.found})[/dim]" if hit.found else ""
            console.print(f"   [cyan]{escape(readable_name(where))}[/cyan]  "
                          f"{escape(flag + hit.snippet)}{how}")
        if result.explain:
            parts = ", ".join(f"{k}={v}" for k, v in result.explain.items())
            console.print(f"   [dim]explain: {escape(parts)}[/dim]")


@main.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--budget", type=click.IntRange(50, 100_000), default=1500, show_default=True,
              help="About how many tokens the answer may use.")
@click.option("--overview", is_flag=True, help="One line per page: the entity and its "
              "strongest neighbours.")
@click.option("--tag", "tags", multiple=True,
              help="The entity is a page with this tag (repeat: every tag).")
@MOUNT_OPTION
@JSON_OPTION
@click.pass_context
def recall(ctx: click.Context, question: tuple[str, ...], budget: int, overview: bool,
           as_json: bool, tags: tuple[str, ...] = (), mounts: tuple[str, ...] = ()) -> None:
    """What the vault knows about one entity ("Sarah", "tell me about Horizon"), cited."""
    vault = _open(ctx)
    answer = vault.recall(" ".join(question), budget=budget, overview=overview, tags=tags,
                          mounts=mounts or None)
    from kenning.vault.provenance import mark

    if as_json:
        _emit(mark(vault.root, answer.to_dict()))  # what remote MCP callers wrote, as theirs
        return
    for key, value in mark(vault.root, dict(vars(answer))).items():
        setattr(answer, key, value)  # what remote MCP callers wrote is shown as theirs
    from rich.markup import escape

    console = _console()
    if overview:
        for line in answer.overview:
            console.print(f"[bold]{escape(line['title'])}[/bold] [dim]({line['type'] or 'page'})"
                          f"[/dim] {escape(line['summary'])} [cyan]{escape(line['citation'])}"
                          "[/cyan]")
        return
    console.print(f"[bold]{escape(answer.title)}[/bold] [dim]({answer.type or 'page'}) "
                  f"{escape(answer.path)}[/dim]")
    if answer.summary:
        console.print(f"{escape(answer.summary)} [cyan]{answer.summary_citation}[/cyan]")
    sections = (("Facts", answer.facts, lambda f: " ".join(
                    x for x in (f["relation"] and f"{f['relation']} → {f['target']}",
                                f["text"]) if x)),
                ("Latest", answer.timeline, lambda t: f"{t['date']}  {t['text']}"),
                ("Connected", answer.neighbours, lambda n: f"{', '.join(n['relations'])} "
                                                            f"{n['title']}"))
    if answer.items:
        from kenning.recall.items import line as item_line

        label = "Items" if answer.items_first else "Open items"
        shown = [{"status": "open", "overdue": False, **i} for i in answer.items]
        block = (label, shown, lambda i: item_line(i, cited=False))
        sections = (block, *sections) if answer.items_first else (
            sections[0], block, *sections[1:])
    for label, items, render in sections:
        if items:
            console.print(f"\n[bold]{label}[/bold]")
            for item in items:
                console.print(f"  • {escape(render(item))} [cyan]{escape(item['citation'])}"
                              "[/cyan]")
    if answer.truncated:
        console.print(f"[dim](cut at the {budget}-token budget)[/dim]")


def _date(value: str | None, option: str) -> str | None:
    if value is None:
        return None
    from datetime import date

    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise click.BadParameter(f"expected YYYY-MM-DD, got {value!r}", param_hint=option) \
            from None


@main.command()
@click.argument("page")
@click.option("--raw", is_flag=True, help="Print the page's Markdown as it is on disk.")
@MOUNT_OPTION
@JSON_OPTION
@click.pass_context
def show(ctx: click.Context, page: str, raw: bool, as_json: bool,
         mounts: tuple[str, ...] = ()) -> None:
    """Show a page (by title, alias, file name or path): summary, facts, timeline, links."""
    vault = _open(ctx)
    if raw:
        click.echo(vault.read(vault.find(page, mounts=mounts or None).path), nl=False)
        return
    from kenning.vault.provenance import mark

    # What remote MCP callers wrote, shown as theirs.
    data = mark(vault.root, vault.show(page, mounts=mounts or None))
    if as_json:
        from kenning import answers

        _emit(answers.page(data))
        return
    from rich.markup import escape

    console = _console()
    console.print(f"[bold]{escape(data['title'])}[/bold]  [dim]{data['type'] or 'page'} · "
                  f"{escape(data['path'])}[/dim]")
    if data["aliases"]:
        console.print(f"[dim]aliases:[/dim] {escape(', '.join(data['aliases']))}")
    if data["tags"]:
        console.print(f"[dim]tags:[/dim] {escape(' '.join('#' + t for t in data['tags']))}")
    if data["summary"]:
        console.print(escape(data["summary"]) + (f" [cyan]{escape(data['summary_citation'])}"
                                                 "[/cyan]" if data["summary_citation"] else ""))
    if data["facts"]:
        console.print("\n[bold]Facts[/bold]")
        for f in data["facts"]:
            head = f"{f['relation']} → {f['target']}" if f["relation"] else ""
            when = " ".join(x for x in (f["valid_from"] and f"from {f['valid_from']}",
                                        f["valid_to"] and f"to {f['valid_to']}") if x)
            status = "" if f["status"] == "active" else f" [yellow]{f['status']}[/yellow]"
            console.print(f"  • {escape(head)} {escape(f['text'])} [dim]{when} "
                          f"{f['epistemic']} L{f['line']}[/dim]{status}")
    if data["timeline"]:
        console.print("\n[bold]Timeline[/bold]")
        for t in data["timeline"]:
            console.print(f"  {t['date']}  {escape(t['text'])} [dim]L{t['line']}[/dim]")
    for key, label in (("links_out", "Links out"), ("links_in", "Links in")):
        if not data[key]:
            continue
        console.print(f"\n[bold]{label}[/bold]")
        grouped: dict[tuple[str, str], list[str]] = {}
        for e in data[key]:
            where = _provenance(e, data["path"])
            title = e.get("title") or e["path"].rsplit("/", 1)[-1].removesuffix(".md")
            grouped.setdefault((e["rel"], title), []).append(where)
        for (rel, title), wheres in grouped.items():
            console.print(f"  {rel:<12} {escape(title)} [dim]({escape(', '.join(wheres))})[/dim]")


def _provenance(edge: dict[str, Any], page_path: str) -> str:
    """``wikilink L13`` for an edge this page states, ``frontmatter other.md:6`` otherwise."""
    origin, _, lines = str(edge.get("citation") or "").partition("#L")
    line = lines.split("-", 1)[0]
    if origin and origin != page_path:
        return f"{edge['kind']} {origin}" + (f":{line}" if line else "")
    return edge["kind"] + (f" L{line}" if line else "")


# -- graph ---------------------------------------------------------------------------------


@main.group()
def graph() -> None:
    """Explore the typed link graph."""


def _graph_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("-r", "--rel", "rels", multiple=True,
                     help="Only these link types (repeat).")(f)
    f = click.option("--as-of", help="What held on this date (YYYY-MM-DD).")(f)
    f = click.option("--believed-on", help="What Kenning believed on this date: edges recorded "
                     "by then and not yet retired (YYYY-MM-DD).")(f)
    return JSON_OPTION(MOUNT_OPTION(f))


DIRECTION = click.option("--direction", type=click.Choice(["out", "in", "both"]),
                         default="both", show_default=True)


def _print_edges(edges: list[Any]) -> None:
    """One line per (direction, type, page); the provenance of every edge behind it, dimmed."""
    from rich.markup import escape

    console = _console()
    if not edges:
        console.print("No links.")
    grouped: dict[tuple[str, str, int], list[Any]] = {}
    for e in edges:
        grouped.setdefault((e.direction, e.rel, e.other.id), []).append(e)
    for (direction, rel, _), group in grouped.items():
        other = group[0].other
        arrow = "→" if direction == "out" else "←"
        origins = []
        for e in group:
            where = f"{e.origin}:{e.line}" if e.origin and e.line else (e.origin or "manual")
            valid = f" {e.valid_from or '…'}–{e.valid_to or '…'}" if (
                e.valid_from or e.valid_to) else ""
            origins.append(f"{e.kind} {where}{valid}")
        console.print(f"{arrow} {rel:<12} {escape(other.title)} [dim]({escape(other.path)})"
                      f"\n{'':15}{escape('; '.join(origins))}[/dim]")


@graph.command("neighbors")
@click.argument("page")
@DIRECTION
@_graph_options
@click.pass_context
def graph_neighbors(ctx: click.Context, page: str, direction: str, rels: tuple[str, ...],
                    as_of: str | None, believed_on: str | None, as_json: bool,
                    mounts: tuple[str, ...] = ()) -> None:
    """Links in and out of PAGE, typed, with where each came from."""
    edges = _open(ctx).neighbors(page, rels=rels, direction=direction, mounts=mounts or None,
                                 as_of=_date(as_of, "--as-of"),
                                 believed_on=_date(believed_on, "--believed-on"))
    if as_json:
        _emit([e.to_dict() for e in edges])
    else:
        _print_edges(edges)


@graph.command("backlinks")
@click.argument("page")
@_graph_options
@click.pass_context
def graph_backlinks(ctx: click.Context, page: str, rels: tuple[str, ...], as_of: str | None,
                    believed_on: str | None, as_json: bool,
                    mounts: tuple[str, ...] = ()) -> None:
    """Links pointing at PAGE."""
    edges = _open(ctx).backlinks(page, rels=rels, as_of=_date(as_of, "--as-of"),
                                 mounts=mounts or None,
                                 believed_on=_date(believed_on, "--believed-on"))
    if as_json:
        _emit([e.to_dict() for e in edges])
    else:
        _print_edges(edges)


@graph.command("traverse")
@click.argument("page")
@click.option("--depth", type=int, default=2, show_default=True,
              help="Steps to follow (clamped to 1..10).")
@click.option("--direction", type=click.Choice(["out", "in", "both"]), default="out",
              show_default=True)
@_graph_options
@click.pass_context
def graph_traverse(ctx: click.Context, page: str, depth: int, direction: str,
                   rels: tuple[str, ...], as_of: str | None, believed_on: str | None,
                   as_json: bool, mounts: tuple[str, ...] = ()) -> None:
    """Pages reachable from PAGE within --depth steps (cycle-safe)."""
    result = _open(ctx).traverse(page, depth=depth, rels=rels, direction=direction,
                                 mounts=mounts or None,
                                 as_of=_date(as_of, "--as-of"),
                                 believed_on=_date(believed_on, "--believed-on"))
    titles = {n.id: n.title for n in [result.start, *result.nodes]}
    if as_json:
        _emit({"start": result.start.to_dict(), "depth": result.depth,
               "nodes": [n.to_dict() for n in result.nodes],
               "edges": [{"src": titles[a], "rel": r, "dst": titles[b]}
                         for a, r, b in result.edges]})
        return
    from rich.markup import escape

    console = _console()
    console.print(f"[bold]{escape(result.start.title)}[/bold] — {len(result.nodes)} pages "
                  f"within {result.depth} step(s)")
    via = {b: (a, r) for a, r, b in result.edges}
    for n in result.nodes:
        a, r = via.get(n.id, (None, ""))
        src = f" [dim]via {r} from {escape(titles.get(a, ''))}[/dim]" if a else ""
        console.print(f"{'  ' * n.depth}{escape(n.title)} [dim]({n.path})[/dim]{src}")


@graph.command("path")
@click.argument("start")
@click.argument("end")
@click.option("--max-depth", type=int, default=6, show_default=True)
@DIRECTION
@_graph_options
@click.pass_context
def graph_path(ctx: click.Context, start: str, end: str, max_depth: int, direction: str,
               rels: tuple[str, ...], as_of: str | None, believed_on: str | None,
               as_json: bool, mounts: tuple[str, ...] = ()) -> None:
    """A shortest chain of links from START to END."""
    chain = _open(ctx).path(start, end, max_depth=max_depth, rels=rels, direction=direction,
                            mounts=mounts or None,
                            as_of=_date(as_of, "--as-of"),
                            believed_on=_date(believed_on, "--believed-on"))
    if as_json:
        _emit([{**n.to_dict(), "via": rel} for n, rel in chain])
        return
    if not chain:
        click.echo(f"No path from {start!r} to {end!r} within {max_depth} steps.")
        sys.exit(1)
    parts = [chain[0][0].title] + [f"-[{rel}]- {n.title}" for n, rel in chain[1:]]
    click.echo(" ".join(parts))


@graph.command("orphans")
@click.option("-t", "--type", "types", multiple=True)
@MOUNT_OPTION
@JSON_OPTION
@click.pass_context
def graph_orphans(ctx: click.Context, types: tuple[str, ...], as_json: bool,
                  mounts: tuple[str, ...] = ()) -> None:
    """Pages with no links in or out (daily logs and sources left out)."""
    nodes = _open(ctx).orphans(types=types, mounts=mounts or None)
    if as_json:
        _emit([n.to_dict() for n in nodes])
        return
    for n in nodes:
        click.echo(f"{n.path}  ({n.type or 'page'})")
    if not nodes:
        click.echo("No orphans.")


@main.group()
def link() -> None:
    """Add or remove manual links (kept when pages are re-indexed)."""


@link.command("add")
@click.argument("src")
@click.argument("rel")
@click.argument("dst")
@click.option("--from", "valid_from", help="Valid from YYYY-MM-DD.")
@click.option("--to", "valid_to", help="Valid to YYYY-MM-DD.")
@JSON_OPTION
@click.pass_context
def link_add(ctx: click.Context, src: str, rel: str, dst: str, valid_from: str | None,
             valid_to: str | None, as_json: bool) -> None:
    """Link SRC to DST with relation REL (e.g. advises, works_at)."""
    entry = _open(ctx).link(src, rel, dst, valid_from=_date(valid_from, "--from"),
                            valid_to=_date(valid_to, "--to"))
    if as_json:
        _emit(entry)
    else:
        click.echo(f"Linked {entry['src']} -[{entry['rel']}]-> {entry['dst']} (manual).")


@link.command("remove")
@click.argument("src")
@click.argument("rel")
@click.argument("dst")
@JSON_OPTION
@click.pass_context
def link_remove(ctx: click.Context, src: str, rel: str, dst: str, as_json: bool) -> None:
    """Remove a manual link."""
    entry = _open(ctx).link(src, rel, dst, remove=True)
    if as_json:
        _emit(entry)
    else:
        click.echo(f"Removed {entry['src']} -[{entry['rel']}]-> {entry['dst']}.")


# -- evaluation ----------------------------------------------------------------------------


@main.group(name="eval")
def eval_group() -> None:
    """Measure recall on public benchmarks."""


@eval_group.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-m", "--mode", "modes", multiple=True,
              type=click.Choice(["lexical", "dense", "hybrid"]),
              help="Search modes to measure (repeat; default all three).")
@click.option("-b", "--budget", "budgets", multiple=True, type=click.IntRange(1, 100_000),
              help="Word budgets (repeat; default 250 500 1000 2000).")
@click.option("-c", "--conversation", "conversations", multiple=True,
              help="Only these sample ids, e.g. conv-26 (repeat).")
@click.option("--audit", is_flag=True, help="Also score with audit/errors.json corrections.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the vaults here and re-use them (vectors are not re-computed).")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True,
              help="Results asked for per question.")
@JSON_OPTION
def eval_locomo(path: Path, modes: tuple[str, ...], budgets: tuple[int, ...],
                conversations: tuple[str, ...], audit: bool, workdir: Path | None, limit: int,
                as_json: bool) -> None:
    """Evidence recall at word budgets on a LoCoMo file (e.g. ../shared/eval/locomo/locomo10.json).

    Each conversation becomes a vault of chat sources, is indexed (and embedded for dense and
    hybrid), and every question is asked; the report gives recall per category and budget,
    session recall, MRR, index time and query latency.
    """
    from kenning.evaluate import locomo

    audit_path = None
    if audit:
        audit_path = locomo.default_audit_path(path)
        if audit_path is None:
            raise click.BadParameter(f"no audit/errors.json next to {path}", param_hint="--audit")
    with _progress("Questions") as bars:
        result = locomo.run_locomo(
            path, modes=modes or locomo.DEFAULT_MODES, budgets=budgets or locomo.DEFAULT_BUDGETS,
            conversations=list(conversations) or None, audit=audit_path, workdir=workdir,
            limit=limit, progress=lambda d, t, m: bars.files(d, t, m))
    click.echo(locomo.to_json(result) if as_json else locomo.format_report(result))


@eval_group.command("qmsum")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-m", "--mode", "modes", multiple=True,
              type=click.Choice(["lexical", "dense", "hybrid"]),
              help="Search modes to measure (repeat; default all three).")
@click.option("-g", "--group", "groups", multiple=True,
              type=click.Choice(["page", "chunk", "mcp"]),
              help="Result grouping (repeat; default all three: page is `kenning search`'s "
              "default, mcp the MCP search tool's: 10 results within 2,000 tokens).")
@click.option("-b", "--budget", "budgets", multiple=True, type=click.IntRange(1, 100_000),
              help="Word budgets (repeat; default 250 500 1000 2000).")
@click.option("--limit-meetings", type=click.IntRange(1, None),
              help="Only the first N meetings (by file name).")
@click.option("--limit-queries", type=click.IntRange(1, None),
              help="Only the first N queries of each meeting.")
@click.option("--no-baseline", is_flag=True, help="Leave out the BM25-over-lines baseline.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the vault here and re-use it (vectors are not re-computed).")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True,
              help="Results asked for per query.")
@JSON_OPTION
def eval_qmsum(folder: Path, modes: tuple[str, ...], groups: tuple[str, ...],
               budgets: tuple[int, ...], limit_meetings: int | None, limit_queries: int | None,
               no_baseline: bool, workdir: Path | None, limit: int, as_json: bool) -> None:
    """Evidence hit and recall at word budgets on a QMSum split folder (e.g.
    ../shared/eval/meetings/qmsum/val).

    The meetings are synced into one vault with the meetings connector and indexed; every
    specific query is asked in each mode and grouping and beside a BM25-over-lines baseline;
    general queries are reported apart (topic coverage). Prints index time and query latency.
    """
    from kenning.evaluate import qmsum

    with _progress("Queries") as bars:
        result = qmsum.run_qmsum(
            folder, modes=modes or qmsum.DEFAULT_MODES, groups=groups or qmsum.DEFAULT_GROUPS,
            budgets=budgets or qmsum.DEFAULT_BUDGETS, limit=limit,
            limit_meetings=limit_meetings, limit_queries=limit_queries,
            baseline=not no_baseline, workdir=workdir,
            progress=lambda d, t, m: bars.files(d, t, m))
    click.echo(qmsum.to_json(result) if as_json else qmsum.format_report(result))


@eval_group.command("resolution")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--enron", is_flag=True, help="PATH is the Enron folder: check the address ↔ "
              "display-name silver map instead of a gold file (found by itself when there).")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Build the vault here (empty or new folder) and keep it.")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=50, show_default=True)
@JSON_OPTION
def eval_resolution(path: Path, enron: bool, workdir: Path | None, batch_size: int,
                    as_json: bool) -> None:
    """Entity resolution on a labelled corpus (PATH/gold.jsonl + PATH/sources/) or on the Enron
    silver map (e.g. ../shared/eval/enron): sync into a fresh vault, build, score.

    Prints B-cubed and pairwise precision/recall and the worst merges and splits; nothing is
    written in PATH. The corpus format is documented in kenning.evaluate.resolution.
    """
    from kenning.cli_common import progress_every
    from kenning.evaluate import resolution

    quiet = not sys.stderr.isatty() and progress_every() <= 0

    def say(what: str) -> None:
        if not quiet:
            click.echo(f"eval resolution: {what}", err=True)

    if enron or (resolution.is_silver(path) and not resolution.is_corpus(path)):
        if not resolution.is_silver(path):
            raise click.BadParameter(f"no {resolution.SILVER_NAME} in {path}", param_hint="PATH")
        silver = resolution.run_silver(path, workdir=workdir, batch_size=batch_size,
                                       progress=say)
        click.echo(resolution.to_json(silver) if as_json else resolution.format_silver(silver))
        return
    if not resolution.is_corpus(path):
        raise click.BadParameter(f"no {resolution.GOLD_NAME} (a labelled corpus) or "
                                 f"{resolution.SILVER_NAME} (Enron) in {path}", param_hint="PATH")
    result = resolution.run_resolution(path, workdir=workdir, batch_size=batch_size,
                                       progress=say)
    click.echo(resolution.to_json(result) if as_json else resolution.format_report(result))


@eval_group.command("items")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--examples", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Also list this many missed, spurious and wrong items.")
@JSON_OPTION
def eval_items(path: Path, examples: int, as_json: bool) -> None:
    """Item extraction (commitments, asks, decisions) on a labelled corpus made by
    bench/items_corpus.py: a vault with PATH/labels.json and PATH/sources/.

    Runs the extractor over every source file, settles deliveries and replies, and prints per
    kind precision/recall/F1, the accuracy of who, due, status, to, rejected and closed_by on
    the matched items, and how many distractors produced an item. Nothing is written. The
    label format is documented in kenning.evaluate.items.
    """
    from kenning.evaluate import items

    result = items.run_items(path, examples=examples)
    click.echo(items.to_json(result) if as_json else items.format_report(result))


# -- health / demo -------------------------------------------------------------------------


@main.command()
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@JSON_OPTION
@click.pass_context
def doctor(ctx: click.Context, strict: bool, as_json: bool) -> None:
    """Check vault and index health; every failure prints its fix. Exits 1 on failure."""
    health = _open(ctx).doctor()
    failed = not health.ok or (strict and any(f.level == "warn" for f in health.findings))
    if as_json:
        _emit(health.to_dict())
    else:
        from rich.markup import escape

        from kenning.health import SHOW_AT_MOST
        from kenning.vault.fsio import readable_name

        console = _console()
        marks = {"ok": "[green]✓[/green]", "note": "[blue]·[/blue]", "warn": "[yellow]![/yellow]",
                 "error": "[red]✗[/red]"}
        for f in health.findings:
            console.print(f"{marks[f.level]} {escape(f.check)}: {escape(f.message)}")
            for item in f.items[:SHOW_AT_MOST]:
                # An item names a file: one line each, whatever its name holds.
                console.print(f"    [dim]{escape(readable_name(item))}[/dim]")
            if len(f.items) > SHOW_AT_MOST:
                console.print(f"    [dim]… and {len(f.items) - SHOW_AT_MOST} more "
                              "(`kenning doctor --json` lists them all)[/dim]")
            if f.fix and f.level != "ok":
                console.print(f"    fix: {escape(f.fix)}")
        stats = ", ".join(f"{v} {k}" for k, v in health.stats.items())
        console.print(("[red]unhealthy[/red]" if failed else "[green]healthy[/green]")
                      + (f" ({stats})" if stats else ""))
    if failed:
        sys.exit(1)


@main.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.pass_context
def demo(ctx: click.Context, path: Path | None) -> None:
    """Run the whole pipeline on the bundled samples: copy the sample vault to PATH, sync the
    sample email, meeting and chat into sources/, build entity pages, index, and show the pages
    created and cited answers."""
    from kenning.api import Vault
    from kenning.sample import copy_sample
    from kenning.sample import sources as sample_sources

    target = path or Path(os.environ.get("KENNING_DEMO_DIR", "kenning-demo"))
    if target.exists() and any(target.iterdir()):
        click.echo(f"Using the existing demo vault at {target}.")
    else:
        copy_sample(target)
        click.echo(f"Copied the sample vault (a fictional team, Kestrel Labs) to {target}.")
    ctx.obj["vault"] = target
    vault, _ = Vault.init(target)
    if sample_sources.apply_owner(target):
        click.echo("Set the vault owner to Maya Okafor (.kenning/config.yaml).")
    base = sample_sources.sample_sources_path()
    click.echo(f"\n$ kenning sync email|meetings|chats {base}/…")
    for report in sample_sources.sync_sample(target):
        click.echo(f"{report.connector}: read {report.items_read}; {report.created} new source "
                   f"file(s), {report.appended} updated, {report.unchanged} unchanged.")
        for warning in report.warnings:
            click.secho(f"warning: {warning}", fg="yellow", err=True)
    click.echo("\n$ kenning build")
    from kenning.builder import run_build

    before = sample_sources.vault_pages(target)
    built = run_build(target)
    after = sample_sources.vault_pages(target)
    created = [p for p in after.values() if p.path not in before]
    updated = [p for p in after.values()
               if p.path in before and before[p.path].digest != p.digest]
    click.echo(f"Created {len(created)} page(s), updated {len(updated)}.")
    for label, pages in (("created", created), ("updated", updated)):
        for page in pages[:12]:
            click.echo(f"  {label:8} {page.path}  ({page.title})")
        if len(pages) > 12:
            click.echo(f"  … and {len(pages) - 12} more {label}")
    if built.items_total:
        click.echo(f"Items: {built.items_total} commitments, asks and decisions, each on the "
                   "pages it concerns.")
    report = vault.index()
    click.echo("\n$ kenning index")
    _print_report(report, "Indexed")
    click.echo("\n$ kenning recall 'who is Sarah?'")
    ctx.invoke(recall, question=("who is Sarah?",), budget=400, overview=False, as_json=False)
    from kenning.cli_items import items

    click.echo("\n$ kenning items --to me --status open   # what others owe me")
    ctx.invoke(items, kinds=(), who=None, to="me", status="open", due_before=None,
               overdue=False, since=None, page=None, limit=5, today=None, as_json=False)
    for query in ("what did we decide about caching?", "定例会議"):
        click.echo(f"\n$ kenning search {query!r}")
        ctx.invoke(search, query=(query,), mode="hybrid", limit=3, types=(), domains=(),
                   folders=(), entity=None, since=None, until=None, as_of=None, budget=None,
                   explain=False, group="page", as_json=False)
    click.echo("\n$ kenning graph neighbors 'Kestrel Labs' --direction in --rel invested_in"
               " --rel founded")
    ctx.invoke(graph_neighbors, page="Kestrel Labs", direction="in",
               rels=("invested_in", "founded"), as_of=None, believed_on=None, as_json=False)
    # Show the command as the user can type it: bare when on PATH, else the path they used.
    on_path = shutil.which("kenning")
    here = os.path.abspath(sys.argv[0])
    exe = "kenning" if on_path and os.path.abspath(on_path) == here else os.path.relpath(here)
    click.echo(f"\nTry more:\n  {exe} -C {target} show 'Maya Okafor'\n"
               f"  {exe} -C {target} sources list\n"
               f"  {exe} -C {target} search 'pricing' --type decision\n"
               f"  {exe} -C {target} recall 'what did I promise Owen?'\n"
               f"  {exe} -C {target} items --who me --status open\n"
               f"  {exe} -C {target} graph traverse 'Kestrel Labs' --depth 2\n"
               f"  {exe} -C {target} doctor\n"
               f"  {exe} -C {target} web --open     # the web view, on 127.0.0.1")


def _register_stages() -> None:
    """Each stage keeps its commands in its own module (kenning/cli_<stage>.py)."""
    from kenning import (
        cli_build,
        cli_code,
        cli_export,
        cli_import,
        cli_items,
        cli_memory,
        cli_migrate,
        cli_serve,
        cli_sync,
        cli_team,
        cli_web,
    )

    for module in (cli_sync, cli_build, cli_memory, cli_items, cli_code, cli_import, cli_export,
                   cli_migrate, cli_serve, cli_team, cli_web):
        module.register(main)


_register_stages()

if __name__ == "__main__":
    main()
