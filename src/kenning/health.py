"""``kenning doctor``: is the vault sound and is the index complete and current?

Each check yields findings with a level (error fails the run; warn does not, unless ``--strict``;
note is worth knowing and never fails) and the command or edit that fixes it. An interrupted index
run is always an error, never "healthy". A finding carries every item it found; the CLI prints the
first :data:`SHOW_AT_MOST` and says how many it left out, ``--json`` prints them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.index import db as dbm
from kenning.vault.layout import vault_files

if TYPE_CHECKING:
    from kenning.api import Vault

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


def check(vault: Vault) -> Health:
    """Run every check on ``vault``."""
    health = Health()
    add = health.findings.append
    _build_run(vault.root, health)
    from kenning.index.store.diagnose import database_findings  # the database's own checks

    found = database_findings(vault.root, vault.config)
    health.findings.extend(Finding(d.level, d.check, d.message, d.fix) for d in found)
    if any(d.fatal for d in found):  # the index cannot be opened: nothing more to check
        return health
    path = dbm.db_path(vault.root)
    if not path.exists():
        add(Finding("error", "index", "the vault has no index yet", "kenning index"))
        return health
    db = vault.db
    version = dbm.schema_version(db)
    if version != dbm.SCHEMA_VERSION:
        add(Finding("error", "schema", f"index schema v{version}, expected "
                    f"v{dbm.SCHEMA_VERSION}", "kenning rebuild"))
    else:
        add(Finding("ok", "schema", f"index schema v{version}"))

    state = dbm.get_meta(db, "run_state")
    if state == "running" and not dbm.lock_held(vault.root):
        add(Finding("error", "index-run",
                    "the last index run was interrupted before it finished",
                    "kenning index (it resumes where the last run stopped)"))
    elif state == "running":
        add(Finding("warn", "index-run", "an index run is in progress right now"))
    elif state is None:
        add(Finding("error", "index-run", "the index was never completed", "kenning index"))

    _coverage(vault, health)
    _problems(db, health)
    _links(db, health)
    _aliases(db, health)
    _vectors(vault, health)
    _reranker(vault, health)
    health.stats.update(dict(db.execute(
        "SELECT 'pages', count(*) FROM pages UNION ALL SELECT 'chunks', count(*) FROM chunks"
        " UNION ALL SELECT 'links', count(*) FROM links UNION ALL"
        " SELECT 'facts', count(*) FROM facts").fetchall()))
    return health


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


def _coverage(vault: Vault, health: Health) -> None:
    db = vault.db
    disk, others = vault_files(vault.root, vault.config.exclude)
    known = {r[0]: r for r in db.execute("SELECT path, size, mtime_ns, status, reason FROM files")}
    missing = sorted(set(disk) - set(known))
    gone = sorted(set(known) - set(disk))
    stale = sorted(p for p in set(disk) & set(known)
                   if (disk[p].size, disk[p].mtime_ns) != (known[p][1], known[p][2]))
    skipped = sorted(f"{p}: {r[4]}" for p, r in known.items() if r[3] == "skipped" and p in disk)
    attached = {r[0] for r in db.execute("SELECT path FROM attachments")}
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


def _problems(db: Any, health: Health) -> None:
    rows = db.execute(
        """SELECT f.path, p.line, p.code, p.field, p.message FROM problems p
           JOIN files f ON f.id = p.file_id ORDER BY p.code, f.path, p.line""").fetchall()
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


# Names in a source file's frontmatter (participants, attendees) link to pages when they exist;
# one without a page is not a broken link a person wrote: the build decides which get pages.
_SOURCE_NAMES = "l.kind = 'frontmatter' AND o.path LIKE 'sources/%'"


def _links(db: Any, health: Health) -> None:
    """What Obsidian would show as unresolved, and what Kenning resolved where Obsidian would not.

    ``dangling`` and ``ambiguous`` are links no file answers to (Obsidian shows them unresolved);
    the notes are links that work in Kenning and not in Obsidian (by title or alias), links that
    name a file several folders hold (resolved as Obsidian does), and bare names (frontmatter
    values, @mentions) that name no page or several.
    """
    add = health.findings.append
    waiting = db.execute(
        f"""SELECT count(*) FROM links l JOIN pages o ON o.id = l.origin_id
            WHERE l.resolution = 'unresolved' AND {_SOURCE_NAMES}""").fetchone()[0]
    if waiting:
        add(Finding(
            "ok", "source-names", f"{waiting} name(s) in source frontmatter have no page (yet)",
            "kenning build creates pages for the people and organizations its strictness allows"))
    rows = db.execute(
        f"""SELECT o.path, l.line, l.field, COALESCE(l.dst_ref, l.src_ref), l.kind, l.embed,
                   l.plain, l.resolution, l.via, COALESCE(l.file, d.path, s.path), l.heading,
                   l.dst_id, l.src_norm IS NULL
            FROM links l LEFT JOIN pages o ON o.id = l.origin_id
            LEFT JOIN pages d ON d.id = l.dst_id AND l.dst_norm IS NOT NULL
            LEFT JOIN pages s ON s.id = l.src_id AND l.src_norm IS NOT NULL
            WHERE l.resolution IS NOT NULL AND NOT ({_SOURCE_NAMES} AND l.resolution = 'unresolved')
            ORDER BY o.path, l.line, l.id""").fetchall()
    groups: dict[str, list[str]] = {}
    resolved = files = 0
    headed: list[tuple[str, int, str]] = []  # (item, page id, heading) to look up
    for (path, line, fld, ref, kind, embed, plain, state, via, reached, heading, dst_id,
         forward) in rows:
        item = _link_item(path, line, fld, ref, kind, bool(embed), bool(plain))
        if state == "resolved":
            resolved += 1
        elif state == "file":
            files += 1
        if plain and state in ("unresolved", "ambiguous"):
            groups.setdefault("names", []).append(
                item + (" (several pages have the name)" if state == "ambiguous" else ""))
        elif state in ("unresolved", "ambiguous"):
            groups.setdefault(state, []).append(item)
        elif not plain and via in ("title", "alias", "heading"):
            groups.setdefault("by-name", []).append(f"{item} → {reached} (by {via})")
        elif not plain and via == "shortest":
            groups.setdefault("shortest", []).append(f"{item} → {reached}")
        if heading and state == "resolved" and forward and not plain:
            headed.append((_link_item(path, line, fld, f"{ref}#{heading}", kind, bool(embed),
                                      False), dst_id, heading))
    embeds = sum(1 for i in groups.get("unresolved", ()) if " → ![[" in i)
    findings = [
        ("unresolved", "warn", "dangling-links",
         "{n} link(s) lead nowhere: Obsidian shows them as unresolved"
         + (f" ({embeds} of them embeds)" if embeds else ""),
         "create the missing note or file, or correct the link"),
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
    _anchors(db, health, headed)
    if not groups.get("unresolved") and not groups.get("ambiguous"):
        add(Finding("ok", "links", f"every link resolves: {resolved} to pages"
                    + (f", {files} to attachments and other files" if files else "")))
    pending = db.execute("SELECT count(*) FROM links WHERE resolution IS NULL").fetchone()[0]
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


def _anchors(db: Any, health: Health, headed: list[tuple[str, int, str]]) -> None:
    """Links to a heading or block (``[[Page#Heading]]``, ``[[Page#^id]]``) the page lacks."""
    from kenning.index.links import subpath_found

    if not headed:
        return
    pages = sorted({page_id for _, page_id, _ in headed})
    anchors: dict[int, set[str]] = {}
    for part, marks in dbm.in_batches(pages):
        for page_id, anchor in db.execute(
                f"SELECT page_id, anchor FROM anchors WHERE page_id IN ({marks})", part):
            anchors.setdefault(page_id, set()).add(anchor)
    broken = [item for item, page_id, heading in headed
              if not subpath_found(heading, anchors.get(page_id, set()))]
    if broken:
        health.findings.append(Finding(
            "warn", "broken-anchors",
            f"{len(broken)} link(s) point at a heading or block the page does not have "
            "(Obsidian opens the page at its top)",
            "correct the #heading or #^block, or add it to the page", tuple(broken)))


def _vectors(vault: Vault, health: Health) -> None:
    from kenning.index import vectors
    from kenning.index.embedders import EmbedderUnavailable

    add = health.findings.append
    db = vault.db
    try:
        embedder = vault.embedder()
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
    broken = vectors.damaged(vault.store, embedder.model_id, embedder.dim)
    if broken:
        add(Finding("error", "vectors", f"{broken} stored vector(s) are truncated or damaged "
                    "and are ignored by search", "kenning index (re-embeds them)"))
    stored = dbm.get_meta(db, "embed_model")
    done, total = vectors.coverage(vault.store, embedder.model_id, embedder.dim)
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


def _reranker(vault: Vault, health: Health) -> None:
    """Say whether the configured reranker loads and answers a small probe within its budget."""
    from kenning.recall.rerank import RerankUnavailable, probe

    add = health.findings.append
    try:
        reranker = vault.reranker()
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


def _aliases(db: Any, health: Health) -> None:
    """Names several pages claim as title or alias: normal in Obsidian, so at most a note.

    A source's title is its subject line ("Enron Corporation"), not a name it claims: sources
    are raw data (a link by that name reaches the page that holds it as alias), so they never
    count here."""
    rows = db.execute(
        """SELECT n.name, group_concat(DISTINCT p.path) FROM names n
           JOIN pages p ON p.id = n.page_id
           WHERE n.kind IN ('title', 'alias') AND p.path NOT LIKE 'sources/%'
           GROUP BY n.norm HAVING count(DISTINCT n.page_id) > 1
              AND sum(n.kind = 'alias') > 0
           ORDER BY n.norm""").fetchall()
    if rows:
        health.findings.append(Finding(
            "note", "aliases", f"{len(rows)} alias(es) are shared by several pages; a link by "
            "such a name alone resolves only where a file has that name",
            "nothing to do, unless the pages are one (kenning merge)",
            tuple(f"{name!r}: {paths.replace(',', ', ')}" for name, paths in rows)))
    else:
        health.findings.append(Finding("ok", "aliases", "every alias names one page"))
