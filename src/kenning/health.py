"""``kenning doctor``: is the vault sound and is the index complete and current?

Each check yields findings with a level (error fails the run; warn does not, unless ``--strict``;
note is worth knowing and never fails) and the command or edit that fixes it. An interrupted index
run is always an error, never "healthy". A finding carries every item it found; the CLI prints the
first :data:`SHOW_AT_MOST` and says how many it left out, ``--json`` prints them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.index.queries import health as queries
from kenning.index.store import index_present
from kenning.vault.layout import vault_files

if TYPE_CHECKING:
    from kenning.index.store import Store
    from kenning.vault.layout import Config, FoundFile

SHOW_AT_MOST = 20


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found."""

    level: str  # error | warn | note | ok
    check: str
    message: str
    fix: str | None = None
    items: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"level": self.level, "check": self.check, "message": self.message,
                "fix": self.fix, "count": len(self.items), "items": list(self.items)}


@dataclass
class Health:
    """All findings; healthy when none is an error."""

    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(f.level == "error" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"ok": self.ok, "stats": self.stats,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class Subject:
    """What the doctor examines, handed down by the facade (``Vault.doctor``): the vault root,
    its config, the index store (opened only once it is known to exist), the database URL in
    force, and the configured embedder and reranker (each may raise its own unavailability)."""

    root: Path
    config: Config
    open_store: Callable[[], Store]
    url: str | None = None
    embedder: Callable[[], Any] = lambda: None
    reranker: Callable[[], Any] = lambda: None


def check(subject: Subject) -> Health:
    """Run every check on a vault."""
    health = Health()
    add = health.findings.append
    _format(subject, health)
    _build_run(subject.root, health)
    from kenning.index.store.diagnose import database_findings  # the database's own checks

    disk = vault_files(subject.root, subject.config.exclude)  # walked once, for both checks
    found = database_findings(subject.root, subject.config, files=len(disk[0]))
    health.findings.extend(Finding(d.level, d.check, d.message, d.fix) for d in found)
    if any(d.fatal for d in found):  # the index cannot be opened: nothing more to check
        return health
    if not index_present(subject.root, subject.url):
        add(Finding("error", "index", "the vault has no index yet", "kenning index"))
        return health
    store = subject.open_store()
    version, expected = store.schema_version(), store.expected_schema_version()
    if version != expected:
        add(Finding("error", "schema", f"index schema v{version}, expected "
                    f"v{expected}", "kenning rebuild"))
    else:
        add(Finding("ok", "schema", f"index schema v{version}"))

    state = store.get_meta("run_state")
    if state == "running" and not store.lock_held():
        add(Finding("error", "index-run",
                    "the last index run was interrupted before it finished",
                    "kenning index (it resumes where the last run stopped)"))
    elif state == "running":
        add(Finding("warn", "index-run", "an index run is in progress right now"))
    elif state is None:
        add(Finding("error", "index-run", "the index was never completed", "kenning index"))

    _coverage(disk, store, health)
    _problems(store, health)
    _links(store, health, subject.root)
    _aliases(store, health)
    _vectors(subject, store, health)
    _reranker(subject, health)
    health.stats.update(queries.counts(store))
    return health


def _format(subject: Subject, health: Health) -> None:
    """The vault format: an older one is a migration waiting, a newer one a Kenning to upgrade
    (writing commands refuse it)."""
    from kenning.vault.layout import FORMAT

    found = subject.config.format
    if found < FORMAT:
        health.findings.append(Finding(
            "warn", "format", f"vault format {found}, migration pending: run `kenning migrate` "
            "to see it, `kenning migrate --apply` to apply", "kenning migrate --apply"))
    elif found > FORMAT:
        health.findings.append(Finding(
            "error", "format", f"vault format {found} is newer than this Kenning (knows "
            f"{FORMAT}): writing commands refuse it", "upgrade Kenning"))
    else:
        health.findings.append(Finding("ok", "format", f"vault format {found}"))


def _build_run(root: Any, health: Health) -> None:
    """A build killed before it finished (its journal is left), and temp files of writes a
    crash cut short: neither is visible in the pages, both are fixed by the next build."""
    from kenning.builder import journal
    from kenning.vault.fsio import leftover_temp_files

    add = health.findings.append
    if journal.interrupted(root):
        add(Finding("error", "build-run", "the last kenning build was interrupted before it "
                    "finished: its pages and build state are half-written",
                    "kenning build (rolls the interrupted build back, then builds again)"))
    elif journal.journal_path(root).exists():
        add(Finding("warn", "build-run", "a kenning build is running right now"))
    elif (journal.journal_path(root).parent / "state.json").exists():
        add(Finding("ok", "build-run", "the last kenning build finished"))
    temps = leftover_temp_files(root)
    if temps:
        add(Finding("warn", "temp-files", f"{len(temps)} temp file(s) left by writes a crash "
                    "cut short (the files they were replacing are intact)",
                    "kenning build (removes them)", tuple(temps)))


def _coverage(walked: tuple[dict[str, FoundFile], set[str]], store: Store,
              health: Health) -> None:
    """The vault's files (``vault_files``: Markdown by path, the other files) against what the
    index holds."""
    disk, others = walked
    known = {r[0]: r for r in queries.indexed_files(store)}
    missing = sorted(set(disk) - set(known))
    gone = sorted(set(known) - set(disk))
    stale = sorted(p for p in set(disk) & set(known)
                   if (disk[p].size, disk[p].mtime_ns) != (known[p][1], known[p][2]))
    skipped = sorted(f"{p}: {r[4]}" for p, r in known.items() if r[3] == "skipped" and p in disk)
    attached = queries.attachment_paths(store)
    moved = sorted(others ^ attached)
    health.stats["files"] = len(disk)
    health.stats["indexed"] = len(known) - len(gone)
    health.stats["attachments"] = len(others)
    if missing or gone or stale or moved:
        parts = []
        if missing:
            parts.append(f"{len(missing)} not indexed")
        if stale:
            parts.append(f"{len(stale)} changed since indexed")
        if gone:
            parts.append(f"{len(gone)} deleted but still indexed")
        if moved:
            parts.append(f"{len(moved)} attachment(s) added or removed since indexed")
        health.findings.append(Finding(
            "error", "coverage", f"index is not current: {', '.join(parts)}", "kenning index",
            tuple(missing + stale + gone + moved)))
    else:
        health.findings.append(Finding(
            "ok", "coverage", f"all {len(disk)} Markdown files indexed and current"))
    if skipped:
        health.findings.append(Finding(
            "warn", "skipped", f"{len(skipped)} files cannot be indexed",
            "fix or remove these files (or exclude them in .kenning/config.yaml)",
            tuple(skipped)))


def _problems(store: Store, health: Health) -> None:
    rows = queries.problems(store)
    by_code: dict[str, list[str]] = {}
    for path, line, code, fld, message in rows:
        where = f"{path}:{line}" if line else path
        by_code.setdefault(code, []).append(
            f"{where}: {message}" + (f" (field {fld})" if fld and fld not in message else ""))
    fixes = {
        "frontmatter": "fix the YAML at the line shown (the body is still indexed)",
        "vocabulary": "use one of the allowed values listed in the message",
        "tag": "write tags with letters, digits, _, - and / (Obsidian does not read the rest "
               "as tags either)",
    }
    for code, items in by_code.items():
        # A value Obsidian also ignores as a tag loses nothing: a warning, not a broken page.
        level = "warn" if code == "tag" else "error"
        health.findings.append(Finding(
            level, code, f"{len(items)} {code} problem(s)",
            fixes.get(code, "edit the line shown"), tuple(items)))
    if not rows:
        health.findings.append(Finding("ok", "pages", "no frontmatter or vocabulary problems"))


def _links(store: Store, health: Health, root: Path | None = None) -> None:
    """What Obsidian would show as unresolved, and what Kenning resolved where Obsidian would not.

    ``dangling`` and ``ambiguous`` are links no file answers to (Obsidian shows them unresolved);
    the notes are links that work in Kenning and not in Obsidian (by title or alias), links that
    name a file several folders hold (resolved as Obsidian does), and bare names (frontmatter
    values, @mentions) that name no page or several.
    """
    add = health.findings.append
    # Names in a source file's frontmatter (participants, attendees) link to pages when they
    # exist; one without a page is not a broken link a person wrote: the build decides which
    # get pages.
    waiting = queries.waiting_source_names(store)
    if waiting:
        add(Finding(
            "ok", "source-names", f"{waiting} name(s) in source frontmatter have no page (yet)",
            "kenning build creates pages for the people and organizations its strictness allows"))
    from kenning.vault.mounts import load_mounts, split_mount

    mounts = {m.name for m in load_mounts(root)} if root is not None else set()
    rows = queries.link_rows(store)
    groups: dict[str, list[str]] = {}
    # (where the link is, page id, heading) to look up; the item is written only if broken
    headed: list[tuple[tuple[Any, ...], int, str]] = []
    for (path, line, fld, ref, kind, embed, plain, state, via, reached, heading, dst_id,
         forward) in rows:
        wanted = split_mount(ref or "")[0]
        key: str | None = None
        if state == "unresolved" and wanted and wanted not in mounts:
            key, extra = "no-mount", f" (no mount named {wanted!r})"
        elif plain and state in ("unresolved", "ambiguous"):
            key, extra = "names", " (several pages have the name)" if state == "ambiguous" else ""
        elif state in ("unresolved", "ambiguous"):
            key, extra = state, ""
        elif not plain and via in ("title", "alias", "heading"):
            key, extra = "by-name", f" → {reached} (by {via})"
        elif not plain and via == "shortest":
            key, extra = "shortest", f" → {reached}"
        if key is not None:
            groups.setdefault(key, []).append(
                _link_item(path, line, fld, ref, kind, bool(embed), bool(plain)) + extra)
        if heading and state == "resolved" and forward and not plain:
            headed.append(((path, line, fld, f"{ref}#{heading}", kind, bool(embed)), dst_id,
                           heading))
    embeds = sum(1 for i in groups.get("unresolved", ()) if " → ![[" in i)
    findings = [
        ("unresolved", "warn", "dangling-links",
         "{n} link(s) lead nowhere: Obsidian shows them as unresolved"
         + (f" ({embeds} of them embeds)" if embeds else ""),
         "create the missing note or file, or correct the link"),
        ("no-mount", "warn", "unknown-mounts",
         "{n} qualified link(s) name a mount that does not exist"
         + (f" (mounts: {', '.join(sorted(mounts))})" if mounts else " (no mounts)"),
         "kenning mount add NAME PATH, or correct the link's NAME: prefix"),
        ("ambiguous", "warn", "ambiguous-links",
         "{n} link(s) name no file, and several pages have the name as title or alias",
         "link the file name ([[File name|Shown text]]) or keep the name on one page"),
        ("by-name", "note", "links-by-title",
         "{n} link(s) reach their page by its title or alias only; Obsidian links by file name "
         "and shows them as unresolved",
         "link the file name, keeping the text: [[File name|Shown text]]"),
        ("shortest", "note", "shared-names",
         "{n} link(s) name a file that several folders hold; each resolves as Obsidian "
         "resolves it (the shortest path, shown after the arrow)",
         "link by path ([[folder/name]]) where another file was meant"),
        ("names", "note", "names-without-page",
         "{n} name(s) in frontmatter or @mentions name no page, or several (they are not links "
         "in Obsidian)",
         "create the page, or write the name of an existing one"),
    ]
    for key, level, check_name, message, fix in findings:
        items = groups.get(key)
        if items:
            add(Finding(level, check_name, message.format(n=len(items)), fix, tuple(items)))
    _anchors(store, health, headed)
    if not any(groups.get(k) for k in ("unresolved", "ambiguous", "no-mount")):
        resolved, files = queries.resolved_counts(store)
        add(Finding("ok", "links", f"every link resolves: {resolved} to pages"
                    + (f", {files} to attachments and other files" if files else "")))
    pending = queries.unresolved_count(store)
    if pending:
        add(Finding("error", "links", f"{pending} links never resolved", "kenning index"))


def _link_item(path: str | None, line: int | None, fld: str | None, ref: str, kind: str,
               embed: bool, plain: bool) -> str:
    """``page.md:12 → ![[ref]]`` as a person would find it in the page."""
    where = (path or "(manual link)") + (f":{line}" if line else "") + (f" [{fld}]" if fld else "")
    if plain:
        shown = repr(ref)
    elif kind == "markdown":
        shown = f"({ref})"
    else:
        shown = f"{'!' if embed else ''}[[{ref}]]"
    return f"{where} → {shown}"


def _anchors(store: Store, health: Health,
             headed: list[tuple[tuple[Any, ...], int, str]]) -> None:
    """Links to a heading or block (``[[Page#Heading]]``, ``[[Page#^id]]``) the page lacks."""
    from kenning.index.links import subpath_found

    if not headed:
        return
    anchors = queries.anchors_of(store, sorted({page_id for _, page_id, _ in headed}))
    broken = [_link_item(*where, False) for where, page_id, heading in headed
              if not subpath_found(heading, anchors.get(page_id, set()))]
    if broken:
        health.findings.append(Finding(
            "warn", "broken-anchors",
            f"{len(broken)} link(s) point at a heading or block the page does not have "
            "(Obsidian opens the page at its top)",
            "correct the #heading or #^block, or add it to the page", tuple(broken)))


def _vectors(subject: Subject, store: Store, health: Health) -> None:
    from kenning.index.embedders import EmbedderUnavailable

    add = health.findings.append
    try:
        embedder = subject.embedder()
        if embedder is not None:
            embedder.dim  # noqa: B018 — a remote embedder is reached here
    except EmbedderUnavailable as exc:
        add(Finding("warn", "vectors", f"{exc.message}; recall falls back to lexical + graph",
                    exc.fix))
        return
    except KenningError as exc:
        add(Finding("error", "config", exc.message, "fix .kenning/config.yaml"))
        return
    if embedder is None:
        add(Finding("ok", "vectors", "embeddings are switched off: recall is lexical + graph"))
        return
    broken, done, total = queries.vector_health(store, embedder.model_id, embedder.dim)
    if broken:
        add(Finding("error", "vectors", f"{broken} stored vector(s) are truncated or damaged "
                    "and are ignored by search", "kenning index (re-embeds them)"))
    stored = store.get_meta("embed_model")
    health.stats["vectors"] = done
    if stored and stored != embedder.model_id:
        add(Finding("warn", "vectors", f"the index holds vectors of {stored} but the config "
                    f"asks for {embedder.model_id}; dense recall is off until re-embedded",
                    "kenning index"))
    elif done < total:
        add(Finding("warn", "vectors", f"{done} of {total} chunks have vectors "
                    f"({embedder.model_id}); search uses what is there",
                    "kenning index (resumes embedding)"))
    else:
        add(Finding("ok", "vectors", f"all {total} chunks have vectors ({embedder.model_id})"))


def _reranker(subject: Subject, health: Health) -> None:
    """Say whether the configured reranker loads and answers a small probe within its budget."""
    from kenning.recall.rerank import RerankUnavailable, probe

    add = health.findings.append
    try:
        reranker = subject.reranker()
        if reranker is None:
            return  # the default: no reranker, nothing to report
        probe(reranker)
    except RerankUnavailable as exc:
        add(Finding("warn", "rerank", f"{exc.message}; searches keep the fused order",
                    exc.fix))
        return
    except KenningError as exc:
        add(Finding("error", "config", exc.message, "fix .kenning/config.yaml"))
        return
    add(Finding("ok", "rerank", f"the reranker {reranker.model_id} answers; the top "
                f"{reranker.top_n} passages of each search are reranked"))


def _aliases(store: Store, health: Health) -> None:
    """Names several pages claim as title or alias: normal in Obsidian, so at most a note.

    A source's title is its subject line ("Enron Corporation"), not a name it claims: sources
    are raw data (a link by that name reaches the page that holds it as alias), so they never
    count here."""
    rows = queries.shared_aliases(store)
    if rows:
        health.findings.append(Finding(
            "note", "aliases", f"{len(rows)} alias(es) are shared by several pages; a link by "
            "such a name alone resolves only where a file has that name",
            "nothing to do, unless the pages are one (kenning merge)",
            tuple(f"{name!r}: {', '.join(paths)}" for name, paths in rows)))
    else:
        health.findings.append(Finding("ok", "aliases", "every alias names one page"))
