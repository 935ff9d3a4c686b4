"""``kenning doctor``: is the vault sound and is the index complete and current?

Each check yields findings with a level (error fails the run, warn does not) and the command or
edit that fixes it. An interrupted index run is always an error, never "healthy".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.index import db as dbm
from kenning.vault.layout import iter_markdown_files

if TYPE_CHECKING:
    from kenning.api import Vault

SHOW_AT_MOST = 20


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found."""

    level: str  # error | warn | ok
    check: str
    message: str
    fix: str | None = None
    items: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"level": self.level, "check": self.check, "message": self.message,
                "fix": self.fix, "items": list(self.items)}


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
    health.stats.update(dict(db.execute(
        "SELECT 'pages', count(*) FROM pages UNION ALL SELECT 'chunks', count(*) FROM chunks"
        " UNION ALL SELECT 'links', count(*) FROM links UNION ALL"
        " SELECT 'facts', count(*) FROM facts").fetchall()))
    return health


def _coverage(vault: Vault, health: Health) -> None:
    db = vault.db
    disk = {f.path: f for f in iter_markdown_files(vault.root, vault.config.exclude)}
    known = {r[0]: r for r in db.execute("SELECT path, size, mtime_ns, status, reason FROM files")}
    missing = sorted(set(disk) - set(known))
    gone = sorted(set(known) - set(disk))
    stale = sorted(p for p in set(disk) & set(known)
                   if (disk[p].size, disk[p].mtime_ns) != (known[p][1], known[p][2]))
    skipped = sorted(f"{p}: {r[4]}" for p, r in known.items() if r[3] == "skipped" and p in disk)
    health.stats["files"] = len(disk)
    health.stats["indexed"] = len(known) - len(gone)
    if missing or gone or stale:
        parts = []
        if missing:
            parts.append(f"{len(missing)} not indexed")
        if stale:
            parts.append(f"{len(stale)} changed since indexed")
        if gone:
            parts.append(f"{len(gone)} deleted but still indexed")
        health.findings.append(Finding(
            "error", "coverage", f"index is not current: {', '.join(parts)}", "kenning index",
            tuple((missing + stale + gone)[:SHOW_AT_MOST])))
    else:
        health.findings.append(Finding(
            "ok", "coverage", f"all {len(disk)} Markdown files indexed and current"))
    if skipped:
        health.findings.append(Finding(
            "warn", "skipped", f"{len(skipped)} files cannot be indexed",
            "fix or remove these files (or exclude them in .kenning/config.yaml)",
            tuple(skipped[:SHOW_AT_MOST])))


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
    }
    for code, items in by_code.items():
        health.findings.append(Finding(
            "error", code, f"{len(items)} {code} problem(s)",
            fixes.get(code, "edit the line shown"), tuple(items[:SHOW_AT_MOST])))
    if not rows:
        health.findings.append(Finding("ok", "pages", "no frontmatter or vocabulary problems"))


# Names in a source file's frontmatter (participants, attendees) link to pages when they exist;
# one without a page is not a broken link a person wrote: the build decides which get pages.
_SOURCE_NAMES = "l.kind = 'frontmatter' AND o.path LIKE 'sources/%'"


def _links(db: Any, health: Health) -> None:
    waiting = db.execute(
        f"""SELECT count(*) FROM links l JOIN pages o ON o.id = l.origin_id
            WHERE l.resolution = 'unresolved' AND {_SOURCE_NAMES}""").fetchone()[0]
    if waiting:
        health.findings.append(Finding(
            "ok", "source-names", f"{waiting} name(s) in source frontmatter have no page (yet)",
            "kenning build creates pages for the people and organizations its strictness allows"))
    for state, level in (("unresolved", "warn"), ("ambiguous", "warn")):
        rows = db.execute(
            f"""SELECT o.path, l.line, l.field, COALESCE(l.dst_ref, l.src_ref) FROM links l
                LEFT JOIN pages o ON o.id = l.origin_id
                WHERE l.resolution = '{state}'
                  AND NOT ({_SOURCE_NAMES} AND l.resolution = 'unresolved')
                ORDER BY o.path, l.line""").fetchall()
        if not rows:
            continue
        items = tuple(
            f"{path or '(manual link)'}" + (f":{line}" if line else "")
            + (f" [{fld}]" if fld else "") + f" → [[{ref}]]"
            for path, line, fld, ref in rows[:SHOW_AT_MOST])
        fix = ("create the missing page or correct the link" if state == "unresolved"
               else "link by path ([[folder/page]]) or give one page the name alone")
        word = "dangling" if state == "unresolved" else "ambiguous"
        health.findings.append(Finding(level, f"{word}-links", f"{len(rows)} {word} link(s)",
                                       fix, items))
    pending = db.execute("SELECT count(*) FROM links WHERE resolution IS NULL").fetchone()[0]
    if pending:
        health.findings.append(Finding("error", "links", f"{pending} links never resolved",
                                       "kenning index"))


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
    broken = vectors.damaged(db, embedder.model_id, embedder.dim)
    if broken:
        add(Finding("error", "vectors", f"{broken} stored vector(s) are truncated or damaged "
                    "and are ignored by search", "kenning index (re-embeds them)"))
    stored = dbm.get_meta(db, "embed_model")
    done, total = vectors.coverage(db, embedder.model_id, embedder.dim)
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


def _aliases(db: Any, health: Health) -> None:
    rows = db.execute(
        """SELECT n.name, group_concat(DISTINCT p.path) FROM names n
           JOIN pages p ON p.id = n.page_id
           WHERE n.kind IN ('title', 'alias')
           GROUP BY n.norm HAVING count(DISTINCT n.page_id) > 1
              AND sum(n.kind = 'alias') > 0
           ORDER BY n.norm""").fetchall()
    if rows:
        health.findings.append(Finding(
            "error", "aliases", f"{len(rows)} alias(es) claimed by more than one page",
            "keep the alias on one page only (or merge the pages)",
            tuple(f"{name!r}: {paths.replace(',', ', ')}" for name, paths in rows[:SHOW_AT_MOST])))
    else:
        health.findings.append(Finding("ok", "aliases", "every alias names one page"))
