"""The Python API: one ``Vault`` object over the vault format, the index, recall and the graph.

The CLI, and later the MCP server and the web view, are thin layers over this class.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import AmbiguousPage, IndexMissing, PageNotFound
from kenning.index import db as dbm
from kenning.index.indexer import (
    MANUAL_LINKS,
    Indexer,
    IndexReport,
    Progress,
    manual_key,
    norm_name,
)
from kenning.vault.fsio import atomic_write_text
from kenning.vault.layout import Config, find_root, init_vault, load_config


@dataclass(frozen=True)
class PageRef:
    """A page found by title, alias or path."""

    id: int
    path: str
    title: str
    type: str | None


class Vault:
    """A Kenning vault on disk and its index."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self._db: sqlite3.Connection | None = None
        self._config: Config | None = None
        self._indexed = False

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None) -> Vault:
        """Open the vault containing ``path`` (default: the current folder)."""
        return cls(find_root(Path(path or ".")))

    @classmethod
    def init(cls, path: str | Path) -> tuple[Vault, bool]:
        """Create a vault at ``path`` or adopt an existing one; returns (vault, adopted)."""
        root, adopted = init_vault(Path(path))
        return cls(root), adopted

    @property
    def config(self) -> Config:
        """The vault's configuration."""
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    @property
    def db(self) -> sqlite3.Connection:
        """The index database (opened and migrated on first use)."""
        if self._db is None:
            self._db = dbm.connect(dbm.db_path(self.root))
        return self._db

    @property
    def reader(self) -> sqlite3.Connection:
        """The index for queries; raises IndexMissing when the vault was never indexed."""
        db = self.db
        if not self._indexed:
            if dbm.get_meta(db, "run_started") is None:
                raise IndexMissing(f"{self.root} has no index yet; run `kenning index` first")
            self._indexed = True
        return db

    def close(self) -> None:
        """Close the index database."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing --------------------------------------------------------------------------

    def index(self, progress: Progress | None = None, *, wait: float = 0.0) -> IndexReport:
        """Bring the index up to date with the files (incremental)."""
        with dbm.writer_lock(self.root, wait=wait):
            return Indexer(self.root, self.db, self.config).run(progress)

    def rebuild(self, progress: Progress | None = None, *, wait: float = 0.0) -> IndexReport:
        """Drop the index and build it again from the vault."""
        with dbm.writer_lock(self.root, wait=wait):
            self.close()
            path = dbm.db_path(self.root)
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    Path(str(path) + suffix).unlink()
            return Indexer(self.root, self.db, self.config).run(progress)

    # -- finding pages ---------------------------------------------------------------------

    def find(self, ref: str) -> PageRef:
        """The page a title, alias, file name or vault path names; raises if none or several."""
        norm = norm_name(ref.strip().removeprefix("[[").removesuffix("]]").split("|")[0]
                         .split("#")[0])
        rows = self.reader.execute(
            """SELECT n.priority, p.id, p.path, p.title, p.type FROM names n
               JOIN pages p ON p.id = n.page_id WHERE n.norm = ? ORDER BY n.priority, p.path""",
            (norm,)).fetchall()
        if not rows:
            raise PageNotFound(f"no page named {ref!r} (tried path, file name, title, alias)")
        best = rows[0][0]
        pages = {r[1]: r for r in rows if r[0] == best}
        if len(pages) > 1:
            paths = sorted(r[2] for r in pages.values())
            raise AmbiguousPage(f"{ref!r} names {len(paths)} pages: {', '.join(paths)};"
                                " give the path instead", paths)
        _, pid, path, title, ptype = next(iter(pages.values()))
        return PageRef(pid, path, title, ptype)

    def show(self, ref: str) -> dict[str, Any]:
        """Everything the index knows about one page: fields, facts, timeline, links."""
        from kenning.graph import queries

        page = self.find(ref)
        db = self.db
        row = db.execute(
            "SELECT path, title, type, domain, status, summary, date, frontmatter, lines"
            " FROM pages WHERE id = ?", (page.id,)).fetchone()
        facts = [
            {"line": r[0], "relation": r[1], "target": r[2], "text": r[3], "valid_from": r[4],
             "valid_to": r[5], "status": r[6], "successor": r[7], "epistemic": r[8],
             "confidence": r[9], "source": r[10], "citation": f"{page.path}#L{r[0]}-L{r[0]}"}
            for r in db.execute(
                "SELECT line, relation, target, text, valid_from, valid_to, status, successor,"
                " epistemic, confidence, source FROM facts WHERE page_id = ? ORDER BY line",
                (page.id,))]
        timeline = [
            {"line": r[0], "date": r[1], "text": r[2], "source": r[3],
             "citation": f"{page.path}#L{r[0]}-L{r[0]}"}
            for r in db.execute("SELECT line, date, text, source FROM timeline WHERE page_id = ?"
                                " ORDER BY date, line", (page.id,))]
        aliases = [r[0] for r in db.execute(
            "SELECT name FROM names WHERE page_id = ? AND kind = 'alias' ORDER BY name",
            (page.id,))]
        edges = queries.neighbors(db, page.id, direction="both")
        return {
            "path": row[0], "title": row[1], "type": row[2], "domain": row[3],
            "status": row[4], "summary": row[5], "date": row[6], "aliases": aliases,
            "frontmatter": json.loads(row[7]), "lines": row[8], "facts": facts,
            "timeline": timeline,
            "links_out": [e.to_dict() for e in edges if e.direction == "out"],
            "links_in": [e.to_dict() for e in edges if e.direction == "in"],
        }

    def read(self, ref: str) -> str:
        """The Markdown text of a page."""
        from kenning.vault.fsio import resolve_inside

        page = self.find(ref)
        return resolve_inside(self.root, page.path).read_text(encoding="utf-8")

    # -- recall ----------------------------------------------------------------------------

    def search(self, query: str, *, types: Sequence[str] = (), domains: Sequence[str] = (),
               folders: Sequence[str] = (), since: str | None = None, until: str | None = None,
               limit: int = 10) -> list[Any]:
        """Lexical search with filters; results grouped by page with cited evidence."""
        from kenning.recall.search import Filters, search

        filters = Filters(
            types=tuple(vocabulary.entity_type(t) for t in types),
            domains=tuple(vocabulary.domain(d) for d in domains),
            folders=tuple(folders), since=since, until=until)
        return search(self.reader, query, filters=filters, limit=limit,
                      folder_weights=self.config.folder_weights)

    # -- graph -----------------------------------------------------------------------------

    def neighbors(self, ref: str, *, rels: Sequence[str] = (), direction: str = "both",
                  as_of: str | None = None) -> list[Any]:
        """Typed edges around a page."""
        from kenning.graph import queries

        return queries.neighbors(self.db, self.find(ref).id, rels=_rels(rels),
                                 direction=direction, as_of=as_of)

    def traverse(self, ref: str, *, depth: int = 2, rels: Sequence[str] = (),
                 direction: str = "out", as_of: str | None = None) -> Any:
        """Pages within ``depth`` steps (clamped to 10)."""
        from kenning.graph import queries

        return queries.traverse(self.db, self.find(ref).id, depth=depth, rels=_rels(rels),
                                direction=direction, as_of=as_of)

    def path(self, start: str, end: str, *, max_depth: int = 6, rels: Sequence[str] = (),
             direction: str = "both", as_of: str | None = None) -> list[Any]:
        """A shortest path between two pages."""
        from kenning.graph import queries

        return queries.path(self.db, self.find(start).id, self.find(end).id,
                            max_depth=max_depth, rels=_rels(rels), direction=direction,
                            as_of=as_of)

    def backlinks(self, ref: str, *, rels: Sequence[str] = (), as_of: str | None = None
                  ) -> list[Any]:
        """Edges pointing at a page."""
        from kenning.graph import queries

        return queries.backlinks(self.db, self.find(ref).id, rels=_rels(rels), as_of=as_of)

    def orphans(self, *, types: Sequence[str] = ()) -> list[Any]:
        """Pages with no links in or out."""
        from kenning.graph import queries

        return queries.orphans(self.reader, types=[vocabulary.entity_type(t) for t in types])

    def link(self, src: str, rel: str, dst: str, *, remove: bool = False,
             valid_from: str | None = None, valid_to: str | None = None) -> dict[str, Any]:
        """Add (or remove) a manual edge; kept in ``.kenning/manual-links.jsonl``.

        Manual edges are never removed by extraction; ``rebuild`` restores them from the file.
        """
        rel = vocabulary.relation(rel)
        a, b = self.find(src), self.find(dst)
        entry = {"op": "remove" if remove else "add", "src": a.path, "rel": rel, "dst": b.path,
                 "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if valid_from:
            entry["valid_from"] = valid_from
        if valid_to:
            entry["valid_to"] = valid_to
        with dbm.writer_lock(self.root, wait=10.0):
            path = dbm.state_dir(self.root) / MANUAL_LINKS
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if old and not old.endswith("\n"):
                old += "\n"
            atomic_write_text(path, old + json.dumps(entry, ensure_ascii=False) + "\n")
            indexer = Indexer(self.root, self.db, self.config)
            with dbm.transaction(self.db):
                indexer.sync_manual_links()
                indexer.resolve_links()
        return {"key": manual_key(a.path, rel, b.path), **entry}

    # -- health ----------------------------------------------------------------------------

    def doctor(self) -> Any:
        """Vault and index health: coverage, interrupted runs, links, aliases, vocabulary."""
        from kenning.health import check

        return check(self)


def _rels(rels: Sequence[str]) -> list[str]:
    return [vocabulary.relation(r) for r in rels]
