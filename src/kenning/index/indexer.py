"""The incremental index: from the files on disk to rows in the index (any :class:`Store`).

A file is re-parsed only when its size or mtime changed *and* its content hash differs, so a
touched but unchanged file costs one read. Each file's rows are replaced in one transaction
together with its ``files`` row, so a run killed at any moment leaves a consistent index that the
next run completes. Links are resolved at the end, only where a name they use changed. The SQL
is portable (``kenning.index.store.base``): the same statements index into SQLite or PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.index.chunking import MIN_WORDS, OVERLAP_WORDS, TARGET_WORDS, chunk_lines
from kenning.index.cjk import cjk_column
from kenning.index.codegraph import code_mentions, resolve_code, resolve_mentions, write_mentions
from kenning.index.edges import (
    FIELD_RELATIONS,
    Edge,
    date_ceiling,
    date_floor,
    frontmatter_edges,
    infer_relation,
    self_names,
)
from kenning.index.items import delete_items, owner_names, write_items
from kenning.index.links import (
    Resolved,
    VaultFile,
    file_key,
    norm_name,
    page_anchors,
    ref_key,
    resolve_mounted,
    vault_file,
)
from kenning.index.vectors import EmbedReport, bump_version, embed_text, text_hash
from kenning.vault import frontmatter
from kenning.vault.fsio import UnreadableFile, decode_markdown, too_large
from kenning.vault.layout import STATE_DIR, Config, FoundFile, daily_log_date, vault_files
from kenning.vault.mounts import Mount, join_mount, load_mounts, split_mount
from kenning.vault.page import Page, parse_page, text_lines

# Bump when chunking or the embedded text of a chunk changes: existing indexes re-derive.
DERIVATION = f"chunks:{TARGET_WORDS}/{MIN_WORDS}/{OVERLAP_WORDS};embed-text:4"
BATCH_FILES = 400
BATCH_SECONDS = 2.0
MANUAL_LINKS = "manual-links.jsonl"
DIRTY_SCAN = 2000  # changed names above which resolving scans the links instead of looking up

Progress = Callable[[int, int, str], None]

if TYPE_CHECKING:
    from kenning.index.store import Store

# A name whose owner may have changed: its links are re-resolved at the end of the run.
DIRTY = "INSERT INTO dirty_names(norm) VALUES (?) ON CONFLICT (norm) DO NOTHING"


@dataclass
class IndexReport:
    """What one ``kenning index`` run did."""

    scanned: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    touched: int = 0  # mtime changed, content did not: no re-parse
    deleted: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    problems: int = 0
    found: list[str] = field(default_factory=list)  # "path:line: problem" of files read this run
    links: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    embedding: EmbedReport | None = None
    embed_error: str | None = None


def page_names(page: Page) -> list[tuple[str, str, str, int]]:
    """(norm, name, kind, priority) for every name a link may use for ``page``."""
    path_no_ext = page.path.rsplit(".", 1)[0]
    stem = posixpath.basename(split_mount(path_no_ext)[1])
    names = [(path_no_ext, "path", 1), (stem, "stem", 2), (page.title, "title", 3)]
    names += [(alias, "alias", 4) for alias in page.aliases]
    if page.heading_alias:
        # A first-line H1 that is not the title: a name after every other, since in an adopted
        # vault it is as often a section label shared by many notes ("Todo") as a name.
        names.append((page.heading_alias, "heading", 5))
    out: dict[tuple[str, int], tuple[str, str, str, int]] = {}
    for name, kind, priority in names:
        if not name or not name.strip():
            continue
        key = (norm_name(name), priority)
        out.setdefault(key, (key[0], name, kind, priority))
    return list(out.values())


def page_date(page: Page) -> str | None:
    """The page's "when": its ``date``, a daily log's day, else ``updated`` or ``created``."""
    fm = page.frontmatter
    for value in (fm.get("date"), daily_log_date(page.path), fm.get("updated"),
                  fm.get("created")):
        if value:
            text = str(value)[:10]
            if len(text) >= 4 and text[:4].isdigit():
                return date_floor(text)
    return None


def is_raw_source(page: Page) -> bool:
    """True for a file of the raw layer (``sources/``, or ``type: source``): mail, meetings,
    chats and calendars as they arrived, written by people outside the vault."""
    return page.path.startswith("sources/") or page.type == "source"


def extract_edges(page: Page, fm_lines: dict[str, int]) -> list[Edge]:
    """Every edge the page produces: frontmatter fields, typed facts, links in its text.

    A raw source is data, not the vault's own writing: a ``[[link]]``, a ``rel::`` line or an
    ``@name`` in a mail body is what its sender typed, so it makes no edge (anyone could add
    backlinks and graph edges by mailing the owner). Only the connector's own fields
    (participants, attendees …, :data:`FIELD_RELATIONS`) link a source; the build reads the
    sources for mentions on its own terms.
    """
    edges = _item_lines(frontmatter_edges(page.frontmatter, fm_lines), page, fm_lines)
    if is_raw_source(page):
        return [e for e in edges if str(e.field or "").strip().lower() in FIELD_RELATIONS]
    names = self_names(page.title, page.aliases)
    fact_targets: dict[int, str] = {}
    for fact in page.facts:
        if fact.relation and fact.target:
            fact_targets[fact.line] = fact.target
            edges.append(Edge(rel=fact.relation, ref=fact.target, kind="fact", line=fact.line,
                              valid_from=date_floor(fact.valid_from),
                              valid_to=date_ceiling(fact.valid_to), status=fact.status,
                              recorded=date_floor(fact.recorded),
                              expired=date_floor(fact.expired)))
    for item in page.retain:
        # "- W @Peter: …" in a daily log mentions Peter's page.
        for entity in item.entities:
            edges.append(Edge(rel="mentions", ref=entity, kind="fact", line=item.line,
                              plain=True))
    for link in page.links:
        if not link.target:
            continue  # [[#Heading]] or [x](#Heading) points into the page itself
        if link.kind == "wikilink" and fact_targets.get(link.line) == link.target:
            continue  # the fact's own target is already a typed edge
        # A Markdown link keeps its target as written: it resolves as Obsidian resolves it
        # (relative only with ./ or ../, else from the root or by file name), not as a URL.
        rel = infer_relation(link.sentence, link.target, names)
        edges.append(Edge(rel=rel, ref=link.target, kind=link.kind, line=link.line,
                          heading=link.heading, alias=link.alias, embed=link.embed))
    return edges


def _item_lines(edges: list[Edge], page: Page, fm_lines: dict[str, int]) -> list[Edge]:
    """Cite a frontmatter list item's own line ("- [[Sarah]]"), not its key's line."""
    starts = sorted(set(fm_lines.values()))
    lines = page.text.split("\n")
    out = []
    # Items come in the order of their list: each search resumes after the previous item's line
    # of the same key (from the key's line again when it is not found), so a list of N links
    # costs N line checks, not N squared.
    resume: dict[int, int] = {}
    for edge in edges:
        if edge.line is None:
            out.append(edge)
            continue
        at = bisect_right(starts, edge.line)
        stop = starts[at] if at < len(starts) else page.body_start - 1
        last = max(edge.line, stop - 1)
        for begin in dict.fromkeys((resume.get(edge.line, edge.line), edge.line)):
            number = next((n for n in range(begin, last + 1) if edge.ref in lines[n - 1]), None)
            if number is not None:
                resume[edge.line] = number + 1 if number > edge.line else edge.line
                edge = replace(edge, line=number)
                break
        out.append(edge)
    return out


def frontmatter_key_lines(page: Page) -> dict[str, int]:
    """Line of each top-level frontmatter key, for edge provenance."""
    found = frontmatter.key_lines(frontmatter.locate(page.text))
    return {key: found[key] for key in page.frontmatter if key in found}


class Indexer:
    """Brings the index of one vault up to date with its files."""

    def __init__(self, root: Path, store: Store, config: Config) -> None:
        self.root = root
        self.store = store
        self.config = config
        self.owners = owner_names(config.raw)  # plain item parties with these names are "me"
        self.mounts = load_mounts(root)
        self.mount_names = frozenset(m.name for m in self.mounts)
        self.federated = frozenset(m.name for m in self.mounts if m.federated)
        self.folders = {m.name: m.path for m in self.mounts}
        self.unavailable: list[str] = []  # mounts whose folder cannot be read this run
        self.languages: dict[str, str] = {}  # vault path -> language, for source files
        self._sources: dict[str, set[str]] = {}  # mount -> its source files' paths
        self.code_mounts: set[str] = set()   # mounts whose code graph changed this run
        self.mentions = False                # notes' code mentions were written this run

    # -- the run ---------------------------------------------------------------------------

    def run(self, progress: Progress | None = None) -> IndexReport:
        """Index what changed on disk; the caller holds the writer lock."""
        started = time.perf_counter()
        report = IndexReport()
        store = self.store
        with store.transaction():
            store.set_meta("run_state", "running")
            store.set_meta("run_started", _now())
            if store.get_meta("derivation") != DERIVATION:
                # Chunking or the embedded text changed with this version: re-derive every page
                # (vectors of texts that stay the same are kept by their hash).
                store.run("UPDATE files SET mtime_ns = -1, hash = ''")
                store.set_meta("derivation", DERIVATION)
        on_disk, attachments = self.scan()
        report.scanned = len(on_disk)
        known = {
            row[1]: row
            for row in store.stream("SELECT id, path, size, mtime_ns, hash, status FROM files")
        }

        todo = [f for p, f in on_disk.items()
                if p not in known or (known[p][2], known[p][3]) != (f.size, f.mtime_ns)]
        report.unchanged = len(on_disk) - len(todo)
        # A mount whose folder cannot be read (a drive not plugged in) keeps its pages; a
        # removed mount's pages go.
        gone = [known[p] for p in known
                if p not in on_disk and split_mount(p)[0] not in self.unavailable]
        report.found += [f"mount {name}: folder {self.folders[name]} cannot be read; its pages "
                         "are kept as they were" for name in self.unavailable]

        total = len(todo) + len(gone)
        done = 0
        with store.transaction():
            for row in gone:
                self._delete_file(row[0], row[1])
                report.deleted += 1
                done += 1
                if progress:
                    progress(done, total, row[1])
        # Files in batches of a few hundred or a few seconds, each batch one transaction: a
        # run killed midway keeps what it committed, and readers are never blocked for long.
        left = iter(todo)
        while done < total:
            batch_started, in_batch = time.monotonic(), 0
            with store.transaction():
                for found in left:
                    self._index_file(found, known.get(found.path), report)
                    done += 1
                    in_batch += 1
                    if progress:
                        progress(done, total, found.path)
                    if (in_batch >= BATCH_FILES
                            or time.monotonic() - batch_started > BATCH_SECONDS):
                        break
        with store.transaction():
            self.sync_attachments(attachments)
            self.sync_manual_links()
            self.resolve_links()
            tables: dict[str, Any] = {}
            if self.code_mounts:
                resolve_code(store, self.code_mounts, tables)
            if self.code_mounts or self.mentions:
                resolve_mentions(store, tables)
            report.links = dict(store.rows(  # type: ignore[arg-type]
                "SELECT resolution, count(*) FROM links GROUP BY resolution"))
            report.problems = int(store.scalar("SELECT count(*) FROM problems", default=0))
            report.skipped = [tuple(r) for r in store.rows(  # type: ignore[misc]
                "SELECT path, reason FROM files WHERE status = 'skipped' ORDER BY path")]
            if report.added or report.updated or report.deleted:
                bump_version(store)
            store.set_meta("run_state", "complete")
            store.set_meta("run_finished", _now())
        report.seconds = time.perf_counter() - started
        return report

    def scan(self) -> tuple[dict[str, FoundFile], set[str]]:
        """The files of the vault and of every mount (``NAME:REL``), and the attachments."""
        on_disk, attachments = vault_files(self.root, self.config.exclude)
        for mount in self.mounts:
            if not mount.path.is_dir():
                self.unavailable.append(mount.name)
                continue
            files, others = self.scan_mount(mount)
            on_disk.update(files)
            attachments |= others
        return on_disk, attachments

    def scan_mount(self, mount: Mount) -> tuple[dict[str, FoundFile], set[str]]:
        """One mount's files, by their vault paths: its Markdown, and for a repository its
        source files (and the files and folders skipped, each with its reason)."""
        pages, others = vault_files(mount.path, Config().exclude)
        if mount.kind == "code":
            from kenning.index.code.select import code_files

            selection = code_files(mount.path)
            # Markdown in a folder the repository leaves out (vendored, ignored) is not its own.
            left_out = tuple(f"{p}/" for p, _ in selection.skipped
                             if (mount.path / p).is_dir())
            pages = {p: f for p, f in pages.items() if not p.startswith(left_out)}
            others = {p for p in others if not p.startswith(left_out)}
            for candidate in selection.files:
                try:
                    st = (mount.path / candidate.path).stat()
                except OSError:
                    continue
                path = join_mount(mount.name, candidate.path)
                self.languages[path] = candidate.language
                others.discard(candidate.path)
                pages[candidate.path] = FoundFile(path, st.st_size, st.st_mtime_ns)
            for rel, reason in selection.skipped:
                pages.setdefault(rel, FoundFile(join_mount(mount.name, rel), 0, 0, skip=reason))
                others.discard(rel)
        found = {join_mount(mount.name, p): replace(f, path=join_mount(mount.name, p))
                 for p, f in pages.items()}
        return found, {join_mount(mount.name, p) for p in others}

    def disk_path(self, path: str) -> Path:
        """Where the file of vault path ``path`` lies (in the vault or in its mount's folder)."""
        mount, rel = split_mount(path)
        if mount and mount in self.folders:
            return self.folders[mount] / rel
        return self.root / path

    # -- one file --------------------------------------------------------------------------

    def _index_file(self, found: FoundFile, known: tuple[Any, ...] | None,
                    report: IndexReport) -> None:
        reason = found.skip or too_large(found.size)
        if reason:
            # Decided from the directory entry alone: a huge file is never loaded to refuse it.
            self._skip(known, found, "", reason)
            return
        try:
            data = self.disk_path(found.path).read_bytes()
        except OSError as exc:
            self._skip(known, found, "", f"cannot read: {exc.strerror}")
            return
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if known is not None and known[4] == digest and known[5] == "ok":
            # Touched, not changed: remember the new mtime, skip the parse.
            self.store.run("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                           (found.size, found.mtime_ns, known[0]))
            report.touched += 1
            return
        if found.path in self.languages:
            self._index_code(found, known, data, digest, report)
            return
        try:
            text = decode_markdown(data)
        except UnreadableFile as exc:
            self._skip(known, found, digest, exc.reason)
            return
        page = parse_page(text, found.path)
        report.found += [f"{found.path}:{p.line}: {p.message}" if p.line else
                         f"{found.path}: {p.message}" for p in page.problems]
        file_id = self._upsert_file(known, found, digest, "ok", None)
        self._write_page(file_id, page)
        if known is None or known[5] != "ok":
            report.added += 1
        else:
            report.updated += 1

    def _index_code(self, found: FoundFile, known: tuple[Any, ...] | None, data: bytes,
                    digest: str, report: IndexReport) -> None:
        """A source file of a code mount: one page, a chunk per definition, its code graph."""
        from kenning.index.code.parse import module_name, parse_code

        mount, rel = split_mount(found.path)
        language = self.languages[found.path]
        code = parse_code(rel, data, language, module_name(rel, language,
                                                           self.source_paths(mount)))
        report.found += [f"{found.path}:{line}: {message}" for line, message in code.errors]
        file_id = self._upsert_file(known, found, digest, "ok", None)
        self._write_code_page(file_id, found.path, code, data)
        if known is None or known[5] != "ok":
            report.added += 1
        else:
            report.updated += 1

    def source_paths(self, mount: str) -> set[str]:
        """The paths inside ``mount`` of its source files (what module names are made from),
        gathered once per run."""
        if mount not in self._sources:
            self._sources[mount] = {rel for m, rel in map(split_mount, self.languages)
                                    if m == mount}
        return self._sources[mount]

    def _write_code_page(self, page_id: int, path: str, code: Any, data: bytes) -> None:
        from kenning.index.codegraph import CODE_TYPE, code_page_names, write_code

        db = self.store
        text = data.decode("utf-8", "replace")
        lines = text_lines(text)
        mount, rel = split_mount(path)
        module = next((d for d in code.definitions if d.kind == "module"), None)
        summary = (module.doc.strip().split("\n", 1)[0] if module and module.doc else "")
        row = (path, code.module or rel, CODE_TYPE, None, rel.split("/", 1)[0] if "/" in rel
               else "", None, summary, None, None, None, None, None,
               json.dumps({"language": code.language, "module": code.module}), len(lines), 1,
               None, mount)
        old = self._put_page(page_id, row)
        names = code_page_names(path, code.module)
        db.many("INSERT INTO names(page_id, norm, name, kind, priority) VALUES (?,?,?,?,?)",
                [(page_id, *n) for n in names])
        new = {n[0] for n in names}
        if new != old:
            db.many(DIRTY, [(n,) for n in new ^ old])
        _insert_many(
            db, "INSERT INTO problems(file_id, line, code, field, message) VALUES (?,?,?,?,?)",
            [(page_id, line, "code-syntax", None, message) for line, message in code.errors])
        write_code(db, page_id, code, lines)
        self.code_mounts.add(mount)

    def _put_page(self, page_id: int, row: tuple[Any, ...]) -> set[str]:
        """Write a page's row (its id is its file's): a page parsed before keeps its row, what
        its last parse wrote is cleared, and the names it had are returned (to mark changed
        ones dirty)."""
        db = self.store
        if not db.one("SELECT 1 FROM pages WHERE id = ?", (page_id,)):
            db.run(
                "INSERT INTO pages(path, title, type, domain, folder, status, summary, title_line,"
                " summary_end, date, created, updated, frontmatter, lines, body_start,"
                " summary_start, mount, id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*row, page_id))
            return set()
        old = {r[0] for r in db.rows("SELECT norm FROM names WHERE page_id = ?", (page_id,))}
        self._clear_page(page_id)
        db.run(
            "UPDATE pages SET path=?, title=?, type=?, domain=?, folder=?, status=?,"
            " summary=?, title_line=?, summary_end=?, date=?, created=?, updated=?,"
            " frontmatter=?, lines=?, body_start=?, summary_start=?, mount=? WHERE id=?",
            (*row, page_id))
        return old

    def _clear_page(self, page_id: int) -> None:
        """Delete what a page's last parse wrote (its row stays, so links to it survive)."""
        from kenning.index.codegraph import drop_code

        db = self.store
        db.run("DELETE FROM chunks_fts WHERE rowid IN"
               " (SELECT id FROM chunks WHERE page_id = ?)", (page_id,))
        for table in ("names", "chunks", "facts", "timeline", "retained", "anchors", "tags"):
            db.run(f"DELETE FROM {table} WHERE page_id = ?", (page_id,))
        db.run("DELETE FROM links WHERE origin_id = ? AND kind != 'manual'", (page_id,))
        db.run("DELETE FROM problems WHERE file_id = ?", (page_id,))
        delete_items(db, page_id)
        self._dropped_code(drop_code(db, page_id))

    def _dropped_code(self, mount: str | None) -> None:
        if mount is not None:
            self.code_mounts.add(mount)

    def _skip(self, known: tuple[Any, ...] | None, found: FoundFile, digest: str,
              reason: str) -> None:
        """Record a file that cannot be indexed, and drop any page it had before."""
        self._drop_page(self._upsert_file(known, found, digest, "skipped", reason))
        # Links may still name the file: Obsidian opens it, so it is a file they reach.
        self._dirty_file(found.path)

    def _upsert_file(self, known: tuple[Any, ...] | None, found: FoundFile, digest: str,
                     status: str, reason: str | None) -> int:
        if known is None:
            return self.store.insert(
                "INSERT INTO files(path, size, mtime_ns, hash, status, reason, mount)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (found.path, found.size, found.mtime_ns, digest, status, reason,
                 split_mount(found.path)[0]))
        self.store.run(
            "UPDATE files SET size = ?, mtime_ns = ?, hash = ?, status = ?, reason = ?"
            " WHERE id = ?", (found.size, found.mtime_ns, digest, status, reason, known[0]))
        return int(known[0])

    def _delete_file(self, file_id: int, path: str) -> None:
        self._drop_page(file_id)
        self.store.run("DELETE FROM files WHERE id = ?", (file_id,))
        self._dirty_file(path)

    def _dirty_file(self, path: str) -> None:
        self.store.run(DIRTY, (file_key(path),))

    def _drop_page(self, page_id: int | None) -> None:
        if page_id is None:
            return
        store = self.store
        from kenning.index.codegraph import drop_code

        store.run("INSERT INTO dirty_names(norm) SELECT norm FROM names WHERE page_id = ?"
                  " ON CONFLICT (norm) DO NOTHING", (page_id,))
        self._dropped_code(drop_code(store, page_id))
        store.run("DELETE FROM chunks_fts WHERE rowid IN"
                  " (SELECT id FROM chunks WHERE page_id = ?)", (page_id,))
        store.run("DELETE FROM problems WHERE file_id = ?", (page_id,))
        # Edges that pointed at this page are re-resolved through dirty_names.
        store.run("DELETE FROM pages WHERE id = ?", (page_id,))

    def _write_page(self, page_id: int, page: Page) -> None:
        db = self.store
        fm = page.frontmatter
        lines = text_lines(page.text)
        mount, rel = split_mount(page.path)
        folder = rel.split("/", 1)[0] if "/" in rel else ""
        row = (
            page.path, page.title, page.type, page.domain, folder,
            _str_or_none(fm.get("status")), page.about, page.title_line,
            page.about_lines[1] if page.about_lines else None, page_date(page),
            _date_or_none(fm.get("created")), _date_or_none(fm.get("updated")),
            json.dumps(fm, ensure_ascii=False, default=str), len(lines), page.body_start,
            page.about_lines[0] if page.about_lines else None, mount,
        )
        old = self._put_page(page_id, row)

        names = page_names(page)
        db.many("INSERT INTO names(page_id, norm, name, kind, priority) VALUES (?,?,?,?,?)",
                [(page_id, *n) for n in names])
        new = {n[0] for n in names}
        if new != old:
            db.many(DIRTY, [(n,) for n in new ^ old])

        # Searched like the title: its aliases and a heading alias (a meeting's "# Name").
        title_text = " ".join((page.title, *page.aliases, *filter(None, [page.heading_alias])))
        cjk_title = cjk_column(title_text)
        headings = [(h.line, h.level, h.text) for h in page.headings]
        # A chunk's id comes back from its insert; its full text and sections then go in one
        # batch each (on PostgreSQL a batch is one round trip, not one per chunk).
        sections: list[tuple[int, str]] = []
        texts: list[tuple[int, str, str, str, str]] = []
        for chunk in chunk_lines(lines, headings, page.code_ranges, body_start=page.body_start):
            body = lines[max(chunk.start_line, page.body_start) - 1 : chunk.end_line]
            digest = text_hash(embed_text(page.title, chunk.heading, body))
            chunk_id = db.insert(
                "INSERT INTO chunks(page_id, ord, heading, start_line, end_line, words, text_hash)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (page_id, chunk.ord, chunk.heading, chunk.start_line, chunk.end_line,
                 chunk.words, digest))
            if chunk.sections:
                sections.append((chunk_id, json.dumps(chunk.sections, ensure_ascii=False)))
            cjk = "\n".join(filter(None, (cjk_title, cjk_column(chunk.text))))
            texts.append((chunk_id, title_text, chunk.heading, chunk.text, cjk))
        if sections:
            db.many("INSERT INTO chunk_sections(chunk_id, sections) VALUES (?, ?)", sections)
        db.many("INSERT INTO chunks_fts(rowid, title, heading, body, cjk) VALUES (?, ?, ?, ?, ?)",
                texts)

        _insert_many(
            db, "INSERT INTO facts(page_id, line, relation, target, text, valid_from, valid_to,"
            " status, successor, epistemic, confidence, source, recorded, expired)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(page_id, f.line, f.relation, f.target, f.text, date_floor(f.valid_from),
              date_ceiling(f.valid_to), f.status, f.successor, f.epistemic, f.confidence,
              f.source, date_floor(f.recorded), date_floor(f.expired)) for f in page.facts])
        _insert_many(
            db, "INSERT INTO timeline(page_id, line, date, text, source) VALUES (?,?,?,?,?)",
            [(page_id, t.line, t.date, t.text, t.source) for t in page.timeline])
        day = page_date(page)
        _insert_many(
            db, "INSERT INTO retained(page_id, line, kind, entities, confidence, text, date)"
            " VALUES (?,?,?,?,?,?,?)",
            [(page_id, r.line, r.kind, json.dumps(list(r.entities), ensure_ascii=False),
              r.confidence, r.text, day) for r in page.retain])
        _insert_many(
            db, "INSERT INTO tags(page_id, tag, norm, line) VALUES (?,?,?,?)",
            [(page_id, t.name, t.name.casefold(), t.line) for t in page.tags])
        _insert_many(
            db, "INSERT INTO problems(file_id, line, code, field, message) VALUES (?,?,?,?,?)",
            [(page_id, p.line, p.code, p.field, p.message) for p in page.problems])
        _insert_many(db, "INSERT INTO anchors(page_id, anchor) VALUES (?, ?)",
                     [(page_id, a) for a in sorted(page_anchors(page))])

        write_items(db, page, page_id, self.owners)
        mentions = code_mentions(page.text, page.code_ranges)
        if mentions:
            write_mentions(db, page_id, mentions)
            self.mentions = True

        edges = extract_edges(page, frontmatter_key_lines(page))
        db.many(
            "INSERT INTO links(origin_id, kind, field, line, rel, src_ref, src_norm, src_key,"
            " src_id, dst_ref, dst_norm, dst_key, dst_id, heading, alias, embed, plain,"
            " valid_from, valid_to, status, recorded, expired)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [_edge_row(page_id, e) for e in edges])

    # -- links -----------------------------------------------------------------------------

    def sync_manual_links(self) -> None:
        """Make the manual edges in the index match ``.kenning/manual-links.jsonl``."""
        current = read_manual_links(self.root)
        db = self.store
        have = {r[0] for r in db.rows("SELECT manual_key FROM links WHERE kind = 'manual'")}
        for key in have - current.keys():
            db.run("DELETE FROM links WHERE manual_key = ?", (key,))
        for key in current.keys() - have:
            entry = current[key]
            src, dst = norm_name(entry["src"]), norm_name(entry["dst"])
            db.run(
                "INSERT INTO links(kind, rel, src_ref, src_norm, src_key, dst_ref, dst_norm,"
                " dst_key, plain, valid_from, valid_to, manual_key)"
                " VALUES ('manual', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                (entry["rel"], entry["src"], src, ref_key(src), entry["dst"], dst, ref_key(dst),
                 entry.get("valid_from"), entry.get("valid_to"), key))

    def sync_attachments(self, on_disk: set[str]) -> None:
        """Make the ``attachments`` table hold the vault's other files; names that appear or
        go away are re-resolved."""
        db = self.store
        known = {r[0] for r in db.rows("SELECT path FROM attachments")}
        gone, added = known - on_disk, on_disk - known
        _insert_many(db, "DELETE FROM attachments WHERE path = ?", [(p,) for p in gone])
        _insert_many(db, "INSERT INTO attachments(path, name) VALUES (?, ?)",
                     [(p, file_key(p)) for p in sorted(added)])
        _insert_many(db, DIRTY, [(file_key(p),) for p in gone | added])

    def resolve_links(self) -> None:
        """Resolve pending link ends and every end whose name changed owner."""
        db = self.store
        dirty = [r[0] for r in db.rows("SELECT norm FROM dirty_names")]
        self.resolve_parties(dirty)
        select = ("SELECT l.id, o.path, l.origin_id, l.src_norm, l.dst_norm, l.plain FROM links l"
                  " LEFT JOIN pages o ON o.id = l.origin_id")
        rows: dict[int, tuple[Any, ...]] = {
            row[0]: row for row in db.stream(f"{select} WHERE l.resolution IS NULL")}
        if len(dirty) > DIRTY_SCAN:
            # Many names changed (a first run, a big move): one pass over the links is cheaper
            # than looking each name up.
            wanted = set(dirty)
            for row in db.stream(f"{select} WHERE l.resolution IS NOT NULL"):
                if any(n is not None and (n in wanted or ref_key(n) in wanted)
                       for n in row[3:5]):
                    rows[row[0]] = row
            dirty = []
        for part, marks in _quarters(db, dirty):  # four IN lists per query
            for row in db.rows(
                    f"{select} WHERE l.src_norm IN ({marks}) OR l.dst_norm IN ({marks})"
                    f" OR l.src_key IN ({marks}) OR l.dst_key IN ({marks})", part * 4):
                rows[row[0]] = row
        if not rows:
            db.run("DELETE FROM dirty_names")
            return
        norms = {n for row in rows.values() for n in row[3:5] if n is not None}
        files = self._files({ref_key(n) for n in norms})
        names = self._titles({split_mount(n)[1] for n in norms})
        updates = []
        for link_id, origin, origin_id, src_norm, dst_norm, plain in rows.values():
            ends = []
            for norm in (src_norm, dst_norm):
                if norm is None:
                    ends.append(None)  # the origin page itself
                else:
                    ends.append(self._resolve(norm, origin, files.get(ref_key(norm), ()),
                                              names, plain=bool(plain)))
            by_ref = [e for e in ends if e is not None]
            states = {e.state for e in by_ref}
            state = next(s for s in ("ambiguous", "unresolved", "file", "resolved")
                         if s in states)
            src, dst = (origin_id if e is None else e.page_id for e in ends)
            updates.append((src, dst, state, by_ref[0].via if len(by_ref) == 1 else None,
                            next((e.file for e in by_ref if e.file), None), link_id))
        db.many("UPDATE links SET src_id = ?, dst_id = ?, resolution = ?, via = ?,"
                " file = ? WHERE id = ?", updates)
        db.run("DELETE FROM dirty_names")

    def resolve_parties(self, dirty: list[str]) -> None:
        """Resolve the parties of items (who, to) not resolved yet or whose name changed owner,
        by the links' rules; a plain one-word name no page has may be a person's first name."""
        from kenning.index.items import first_name_pages, pending_parties

        db = self.store
        rows = pending_parties(db, dirty, scan_all=len(dirty) > DIRTY_SCAN)
        if not rows:
            return
        norms = {r[2] for r in rows}
        files = self._files({r[3] for r in rows})
        names = self._titles({split_mount(n)[1] for n in norms})
        updates: list[tuple[Any, ...]] = []
        unresolved: list[tuple[int, str]] = []
        for party_id, origin, norm, key, plain in rows:
            end = self._resolve(norm, origin, files.get(key, ()), names, plain=bool(plain))
            if end.state == "resolved":
                updates.append((end.page_id, "resolved", party_id))
            elif end.state == "unresolved" and plain:
                unresolved.append((party_id, norm))
            else:
                updates.append((None, end.state, party_id))
        firsts = first_name_pages(db, {n for _, n in unresolved})
        for party_id, norm in unresolved:
            pages = firsts.get(norm, [])
            state = "first-name" if len(pages) == 1 else (
                "ambiguous" if pages else "unresolved")
            updates.append((pages[0] if len(pages) == 1 else None, state, party_id))
        # A party that finds the owner's own page ("- [ ] Maya: …" in the owner's meeting
        # notes) is the owner: "me", like `[[Maya Okafor]]` or `me` written out.
        mine = self._titles(self.owners)
        owner_pages = {page for found in mine.values() for _prio, page, _mount in found}
        db.many("UPDATE item_parties SET party_id = ?, resolution = ?, me = ? WHERE id = ?",
                [(page, state, int(page in owner_pages), pid) for page, state, pid in updates])

    def _files(self, keys: Iterable[str]) -> dict[str, list[VaultFile]]:
        """The vault's files by lookup key: pages, attachments, Markdown that is not a page."""
        found: dict[str, list[VaultFile]] = {}
        items = sorted(keys)
        for part, marks in self.store.in_batches(items):
            for key, page_id, path in self.store.rows(
                    "SELECT n.norm, p.id, p.path FROM names n JOIN pages p ON p.id = n.page_id"
                    f" WHERE n.kind = 'stem' AND n.norm IN ({marks})", part):
                found.setdefault(key, []).append(vault_file(path, page_id, True))
            for path, key in self.store.rows(
                    f"SELECT path, name FROM attachments WHERE name IN ({marks})", part):
                found.setdefault(key, []).append(vault_file(path, None, False))
        wanted = set(items)
        for (path,) in self.store.rows("SELECT path FROM files WHERE status = 'skipped'"):
            key = file_key(path)
            if key in wanted:
                found.setdefault(key, []).append(vault_file(path, None, True))
        return found

    def _titles(self, norms: Iterable[str]) -> dict[str, list[tuple[int, int, str]]]:
        """(priority, page id, mount) of the pages whose title, alias or heading alias is each
        name."""
        found: dict[str, list[tuple[int, int, str]]] = {}
        for part, marks in self.store.in_batches(sorted(norms)):
            for norm, page_id, priority, mount in self.store.rows(
                    "SELECT n.norm, n.page_id, n.priority, p.mount FROM names n"
                    " JOIN pages p ON p.id = n.page_id"
                    " WHERE n.kind IN ('title', 'alias', 'heading')"
                    f" AND n.norm IN ({marks})", part):
                found.setdefault(norm, []).append((priority, page_id, mount))
        return found

    def _resolve(self, norm: str, origin: str | None, files: Sequence[VaultFile],
                 names: dict[str, list[tuple[int, int, str]]], *, plain: bool) -> Resolved:
        """Where one reference leads, by the links' rules across this vault's mounts."""
        return resolve_mounted(norm, origin, files, names.get(split_mount(norm)[1], ()),
                               plain=plain, mounts=self.mount_names,
                               federated=self.federated)


def _insert_many(store: Store, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """``many`` that costs nothing when there is nothing to insert (most pages have no
    facts, timeline, tags or problems)."""
    if rows:
        store.many(sql, rows)


def _quarters(store: Store, items: list[str]) -> Iterable[tuple[list[str], str]]:
    """``items`` in parts for a query with four ``IN`` lists of the same part."""
    size = max(1, store.max_params // 4 - 25)  # 200 on SQLite, as before
    for start in range(0, len(items), size):
        part = items[start : start + size]
        yield part, ",".join("?" * len(part))


def _edge_row(page_id: int, e: Edge) -> tuple[Any, ...]:
    ref_norm = norm_name(e.ref)
    by_ref = (e.ref, ref_norm, ref_key(ref_norm), None)
    origin = (None, None, None, page_id)
    src, dst = (by_ref, origin) if e.reverse else (origin, by_ref)
    return (page_id, e.kind, e.field, e.line, e.rel, *src, *dst, e.heading, e.alias,
            int(e.embed), int(e.plain), e.valid_from, e.valid_to, e.status, e.recorded,
            e.expired)


def append_manual_links(root: Path, entries: list[dict[str, Any]]) -> None:
    """Append add/remove records to ``.kenning/manual-links.jsonl`` (atomically; a last line a
    crash left without its newline is closed first). Callers hold the index writer lock."""
    from kenning.vault.fsio import atomic_write_text
    from kenning.vault.writes import note_landed

    path = root / STATE_DIR / MANUAL_LINKS
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    atomic_write_text(path, old + "".join(json.dumps(e, ensure_ascii=False) + "\n"
                                          for e in entries))
    note_landed(f"{STATE_DIR}/{MANUAL_LINKS}")


def read_manual_links(root: Path) -> dict[str, dict[str, Any]]:
    """Replay ``.kenning/manual-links.jsonl`` (add/remove records) into the current set."""
    path = root / STATE_DIR / MANUAL_LINKS
    current: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return current
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key = manual_key(entry["src"], entry["rel"], entry["dst"])
        except (ValueError, KeyError, TypeError):
            # A half-written last line after a crash: ignore it, keep the rest.
            continue
        if entry.get("op", "add") == "remove":
            current.pop(key, None)
        else:
            current[key] = entry
    return current


def manual_key(src: str, rel: str, dst: str) -> str:
    """The identity of a manual edge."""
    return f"{norm_name(src)}|{rel}|{norm_name(dst)}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _date_or_none(value: Any) -> str | None:
    return None if value in (None, "") else str(value)[:10]
