"""What recall reads from the index: chunk and page rows, stored chunk text, filters, facts,
backlinks, names. Full-text matching itself is :meth:`Store.match_chunks` / ``match_counts``.

Every function takes a :class:`Store`; ids in, plain tuples and dicts out. ``where`` fragments
(from :func:`filter_sql`) start with `` AND `` and address pages as ``p`` and chunks as ``c``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kenning.index.store.base import Store

ChunkRow = tuple[int, int, int, str]  # chunk id, page id, start line, heading


def filter_sql(f: Any) -> tuple[str, list[object]]:
    """`` AND …`` clauses over pages ``p`` for a :class:`kenning.recall.search.Filters` (types,
    domains, folders, since, until, entity, as_of, tags), and their parameters; ``("", [])``
    when nothing is restricted."""
    clauses: list[str] = []
    params: list[object] = []
    if f.types:
        clauses.append(f"p.type IN ({','.join('?' * len(f.types))})")
        params += list(f.types)
    if f.domains:
        clauses.append(f"p.domain IN ({','.join('?' * len(f.domains))})")
        params += list(f.domains)
    if f.folders:
        ors = []
        for folder in f.folders:
            folder = folder.strip("/")
            ors.append("(p.path = ? OR substr(p.path, 1, ?) = ?)")
            params += [folder, len(folder) + 1, folder + "/"]
        clauses.append("(" + " OR ".join(ors) + ")")
    if f.since:
        clauses.append("p.date >= ?")
        params.append(f.since)
    if f.until:
        clauses.append("p.date <= ?")
        params.append(f.until)
    if f.entity is not None:
        clauses.append("(p.id = ? OR p.id IN (SELECT origin_id FROM links WHERE"
                       " resolution = 'resolved' AND (dst_id = ? OR src_id = ?)))")
        params += [f.entity] * 3
    if f.as_of:
        clauses.append("(COALESCE(p.created, p.date) IS NULL OR COALESCE(p.created, p.date) <= ?)")
        params.append(f.as_of)
    where, tag_args = tag_sql(f.tags)
    mounts, mount_args = mount_sql(getattr(f, "mounts", None))
    return ("".join(f" AND {c}" for c in clauses) + where + mounts,
            params + tag_args + mount_args)


def mount_sql(mounts: Sequence[str] | None) -> tuple[str, list[object]]:
    """`` AND …`` keeping pages ``p`` of these mounts ('' is the vault's own pages); nothing
    when ``mounts`` is None (every mount)."""
    if mounts is None:
        return "", []
    return f" AND p.mount IN ({','.join('?' * len(mounts)) or 'NULL'})", list(mounts)


# A page with the tag or a tag nested in it ("a" matches "a/b"): every string that starts with
# "a/" sorts between "a/" and "a0" ('0' follows '/'), so the index on norm serves both.
TAG_CLAUSE = ("p.id IN (SELECT page_id FROM tags WHERE norm = ? OR (norm > ? AND norm < ?))")


def tag_sql(tags: Sequence[str]) -> tuple[str, list[object]]:
    """`` AND …`` clauses on pages ``p`` keeping those with every tag (already cleaned, any
    case), and their parameters."""
    params: list[object] = []
    for tag in tags:
        norm = tag.casefold()
        params += [norm, norm + "/", norm + "0"]
    return "".join(f" AND {TAG_CLAUSE}" for _ in tags), params


# -- chunks -------------------------------------------------------------------------------------

def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def chunk_count(store: Store) -> int:
    """How many chunks the index holds."""
    return int(store.scalar("SELECT count(*) FROM chunks", default=0))


def chunk_rows(store: Store, chunk_ids: Sequence[int]) -> dict[int, tuple[int, int, str]]:
    """Chunk id → (page id, start line, heading)."""
    if not chunk_ids:
        return {}
    out: dict[int, tuple[int, int, str]] = {}
    for part, marks in store.in_batches(chunk_ids):
        out.update({r[0]: tuple(r[1:]) for r in store.rows(  # type: ignore[misc]
            f"SELECT id, page_id, start_line, heading FROM chunks WHERE id IN ({marks})", part)})
    return out


def chunk_places(store: Store, chunk_ids: Sequence[int]) -> list[tuple[int, int, int, int, str]]:
    """(chunk id, page id, ord, start line, heading) of the chunks that exist among ids."""
    out: list[tuple[int, int, int, int, str]] = []
    for part, marks in store.in_batches(chunk_ids):
        out += store.rows(f"SELECT id, page_id, ord, start_line, heading FROM chunks "
                          f"WHERE id IN ({marks})", part)  # type: ignore[arg-type]
    return out


def allowed_chunk_ids(store: Store, where: str, params: Sequence[object]) -> list[int]:
    """Ids of every chunk whose page passes ``where``."""
    return [r[0] for r in store.rows(
        f"SELECT c.id FROM chunks c JOIN pages p ON p.id = c.page_id WHERE 1 = 1 {where}",
        params)]


def chunks_matching(store: Store, chunk_ids: Sequence[int], where: str,
                    params: Sequence[object]) -> list[int]:
    """The chunks among ids whose page passes ``where``."""
    out: list[int] = []
    for part, marks in store.in_batches(chunk_ids):
        out += [r[0] for r in store.rows(
            "SELECT c.id FROM chunks c JOIN pages p ON p.id = c.page_id"
            f" WHERE c.id IN ({marks}) {where}", [*part, *params])]
    return out


def embeddable(store: Store, chunk_ids: Sequence[int]) -> list[int]:
    """The chunks among ids that have text worth embedding (a text hash)."""
    out: list[int] = []
    for part, marks in store.in_batches(chunk_ids):
        out += [r[0] for r in store.rows(
            f"SELECT id FROM chunks WHERE id IN ({marks}) AND text_hash IS NOT NULL", part)]
    return out


def source_chunks(store: Store, chunk_ids: Iterable[int]) -> list[int]:
    """The chunks among ids that belong to source pages (transcripts)."""
    out: list[int] = []
    for part, marks in store.in_batches(chunk_ids):
        out += [r[0] for r in store.rows(
            f"SELECT c.id FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.id IN ({marks})"
            " AND p.type = 'source'", part)]
    return out


def chunk_bodies(store: Store, chunk_ids: Sequence[int]) -> dict[int, str]:
    """Chunk id → its stored text (the ``chunks_fts`` body)."""
    out: dict[int, str] = {}
    for part, marks in store.in_batches(chunk_ids):
        out.update(dict(store.rows(  # type: ignore[arg-type]
            f"SELECT rowid, body FROM chunks_fts WHERE rowid IN ({marks})", part)))
    return out


def chunk_texts(store: Store, chunk_ids: Sequence[int]) -> list[tuple[int, str, str, str]]:
    """(chunk id, title, heading, body) as indexed for full text."""
    out: list[tuple[int, str, str, str]] = []
    for part, marks in store.in_batches(chunk_ids):
        out += store.rows("SELECT rowid, title, heading, body FROM chunks_fts"
                          f" WHERE rowid IN ({marks})", part)  # type: ignore[arg-type]
    return out


def passage_texts(store: Store, chunk_ids: Sequence[int]) -> list[tuple[int, str, str]]:
    """(chunk id, page title, chunk body) for the reranker."""
    out: list[tuple[int, str, str]] = []
    for part, marks in store.in_batches(chunk_ids):
        out += store.rows(  # type: ignore[arg-type]
            f"SELECT c.id, p.title, f.body FROM chunks c JOIN pages p ON p.id = c.page_id"
            f" JOIN chunks_fts f ON f.rowid = c.id WHERE c.id IN ({marks})", part)
    return out


def chunk_at_line(store: Store, page_id: int, line: int) -> tuple[int, str] | None:
    """(start line, body) of a chunk of the page that holds ``line``."""
    return store.one(  # type: ignore[return-value]
        """SELECT c.start_line, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.id
           WHERE c.page_id = ? AND c.start_line <= ? AND c.end_line >= ? LIMIT 1""",
        (page_id, line, line))


def chunks_over(store: Store, page_id: int, start: int, end: int) -> list[tuple[int, str]]:
    """(start line, body) of every chunk of the page overlapping lines ``start..end``."""
    return store.rows(  # type: ignore[return-value]
        "SELECT c.start_line, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.id"
        " WHERE c.page_id = ? AND c.end_line >= ? AND c.start_line <= ?",
        (page_id, start, end))


def chunk_sections(store: Store, chunk_ids: Sequence[int]) -> dict[int, tuple[str, list[Any]]]:
    """Chunk id → (heading at its first line, the headings that start inside it)."""
    out: dict[int, tuple[str, list[Any]]] = {}
    for part, marks in store.in_batches(chunk_ids):
        out.update({r[0]: (r[1], json.loads(r[2])) for r in store.rows(
            "SELECT c.id, c.heading, s.sections FROM chunk_sections s JOIN chunks c"
            f" ON c.id = s.chunk_id WHERE s.chunk_id IN ({marks})", part)})
    return out


# -- pages --------------------------------------------------------------------------------------

def page_meta(store: Store, page_ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Page id → (path, title, type, body_start, status, last change, date)."""
    out: dict[int, tuple[Any, ...]] = {}
    for part, marks in store.in_batches(page_ids):
        out.update({r[0]: tuple(r[1:]) for r in store.rows(
            f"SELECT id, path, title, type, body_start, status, COALESCE(updated, date), date"
            f" FROM pages WHERE id IN ({marks})", part)})
    return out


def page_ids(store: Store, paths: Iterable[str]) -> dict[str, int]:
    """Vault path → page id, for the paths that are indexed."""
    out: dict[str, int] = {}
    for part, marks in store.in_batches(sorted(paths)):
        out.update({r[0]: r[1] for r in store.rows(
            f"SELECT path, id FROM pages WHERE path IN ({marks})", part)})
    return out


def exact_names(store: Store, norm: str, where: str, params: Sequence[object]
                ) -> list[tuple[int, str, str, str | None]]:
    """(page id, path, title, type) of pages whose title, alias or path normalises to ``norm``."""
    return store.rows(  # type: ignore[return-value]
        f"""SELECT DISTINCT p.id, p.path, p.title, p.type FROM names n JOIN pages p
            ON p.id = n.page_id WHERE n.norm = ? AND n.kind IN ('title', 'alias', 'path')
            {where}""",
        (norm, *params))


def title_lines(store: Store, page_id: int) -> tuple[Any, ...] | None:
    """(summary_start, summary_end, summary, title_line, body_start) of a page."""
    return store.one("SELECT summary_start, summary_end, summary, title_line, body_start"
                     " FROM pages WHERE id = ?", (page_id,))


def chunk_before(store: Store, page_id: int, line: int) -> tuple[Any, ...] | None:
    """(chunk id, heading, sections JSON, start line, body) of the page's last chunk starting at
    or before ``line``."""
    return store.one("SELECT c.id, c.heading, s.sections, c.start_line, f.body FROM chunks c"
                     " JOIN chunks_fts f ON f.rowid = c.id"
                     " LEFT JOIN chunk_sections s ON s.chunk_id = c.id WHERE c.page_id = ?"
                     " AND c.start_line <= ? ORDER BY c.start_line DESC LIMIT 1",
                     (page_id, line))


def stale_fact_lines(store: Store, page_ids: Sequence[int], as_of: str, today: str
                     ) -> dict[int, set[int]]:
    """Page id → lines of facts that do not hold on ``as_of``: on a past date the invalidated
    ones and those outside their validity dates; today also the superseded ones."""
    dates = ("(valid_from IS NOT NULL AND valid_from > ?) OR (valid_to IS NOT NULL AND"
             " valid_to < ?)")
    if as_of < today:
        cond = f"status = 'invalidated' OR {dates}"
    else:
        cond = f"status != 'active' OR {dates}"
    out: dict[int, set[int]] = {}
    for part, marks in store.in_batches(page_ids):
        for page_id, line in store.rows(
                f"SELECT page_id, line FROM facts WHERE page_id IN ({marks}) AND ({cond})",
                (*part, as_of, as_of)):
            out.setdefault(page_id, set()).add(line)
    return out


def backlink_counts(store: Store) -> dict[int, int]:
    """Page id → how many other pages link to it (resolved links, self-links left out)."""
    return dict(store.rows(  # type: ignore[arg-type]
        """SELECT dst_id, COUNT(DISTINCT src_id) FROM links
           WHERE resolution = 'resolved' AND src_id != dst_id AND dst_id IS NOT NULL
           GROUP BY dst_id"""))


# -- entity recall ------------------------------------------------------------------------------

def entity_page(store: Store, page_id: int) -> tuple[Any, ...] | None:
    """(path, title, type, summary, title_line, summary_start, summary_end) of a page."""
    return store.one(
        "SELECT path, title, type, summary, title_line, summary_start, summary_end FROM pages"
        " WHERE id = ?", (page_id,))


def active_facts(store: Store, page_id: int, today: str) -> list[tuple[Any, ...]]:
    """(line, relation, target, text, valid_from, valid_to, epistemic, confidence, source) of
    the page's active facts valid on ``today``, in line order."""
    return store.rows(
        """SELECT line, relation, target, text, valid_from, valid_to, epistemic, confidence,
                  source FROM facts WHERE page_id = ? AND status = 'active'
                  AND (valid_from IS NULL OR valid_from <= ?)
                  AND (valid_to IS NULL OR valid_to >= ?) ORDER BY line""",
        (page_id, today, today))


def latest_timeline(store: Store, page_id: int, limit: int) -> list[tuple[Any, ...]]:
    """(line, date, text, source) of the page's latest ``limit`` timeline entries."""
    return store.rows("""SELECT line, date, text, source FROM timeline WHERE page_id = ?
                         ORDER BY date DESC, line DESC LIMIT ?""", (page_id, limit))


def entity_links(store: Store, page_id: int) -> list[tuple[Any, ...]]:
    """(other page, rel, kind, line, origin page) of every active resolved link to or from the
    page (self-links left out)."""
    return store.rows(
        """SELECT other, rel, kind, line, origin FROM (
               SELECT l.dst_id AS other, l.rel, l.kind, l.line, l.origin_id AS origin
               FROM links l WHERE l.src_id = ? AND l.dst_id != ?
                 AND l.resolution = 'resolved' AND l.status = 'active'
               UNION ALL
               SELECT l.src_id, l.rel, l.kind, l.line, l.origin_id
               FROM links l WHERE l.dst_id = ? AND l.src_id != ?
                 AND l.resolution = 'resolved' AND l.status = 'active') AS tied""",
        (page_id,) * 4)


def page_summaries(store: Store, page_ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Page id → (path, title, type, summary)."""
    out: dict[int, tuple[Any, ...]] = {}
    for part, marks in store.in_batches(page_ids):
        out.update({r[0]: tuple(r[1:]) for r in store.rows(
            f"SELECT id, path, title, type, summary FROM pages WHERE id IN ({marks})", part)})
    return out


def page_paths(store: Store, page_ids: Iterable[int]) -> dict[int, str]:
    """Page id → vault path."""
    out: dict[int, str] = {}
    for part, marks in store.in_batches(sorted(set(page_ids))):
        out.update({r[0]: r[1] for r in store.rows(
            f"SELECT id, path FROM pages WHERE id IN ({marks})", part)})
    return out


# -- finding pages by name ----------------------------------------------------------------------

def pages_named(store: Store, norm: str, where: str = "", params: Sequence[object] = ()
                ) -> list[tuple[int, int, str, str, str | None]]:
    """(priority, page id, path, title, type) of pages with a name normalising to ``norm``
    (any kind), best priority first, then by path."""
    return store.rows(  # type: ignore[return-value]
        "SELECT n.priority, p.id, p.path, p.title, p.type FROM names n"
        f" JOIN pages p ON p.id = n.page_id WHERE n.norm = ?{where}"
        " ORDER BY n.priority, p.path", (norm, *params))


def entity_names(store: Store, where: str = "", params: Sequence[object] = ()
                 ) -> list[tuple[str, int, str, str, str | None]]:
    """(norm, page id, path, title, type) of every title, alias and file-name stem."""
    return store.rows(  # type: ignore[return-value]
        "SELECT DISTINCT n.norm, p.id, p.path, p.title, p.type FROM names n"
        " JOIN pages p ON p.id = n.page_id WHERE n.kind IN ('title', 'alias', 'stem')"
        f"{where}", params)


def is_indexed(store: Store) -> bool:
    """True once an index run has started on this database."""
    return store.get_meta("run_started") is not None


# -- the recall activity file -------------------------------------------------------------------
# When pages were last recalled lives in its own small SQLite file beside the index (not
# derived from the vault, kept across rebuilds; see kenning.recall.activity), whatever backend
# holds the index.

def _activity_db(path: Path) -> Any:
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=0.5, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE IF NOT EXISTS recalled (path TEXT PRIMARY KEY, last TEXT NOT NULL,"
               " count INTEGER NOT NULL DEFAULT 0)")
    return db


def read_activity(path: Path) -> dict[str, str] | None:
    """Vault path → date last recalled, from the activity file at ``path``; None when the file
    cannot be read (busy, broken)."""
    import sqlite3

    try:
        db = _activity_db(path)
        try:
            return dict(db.execute("SELECT path, last FROM recalled").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return None


def write_activity(path: Path, rows: Sequence[tuple[str, str]]) -> bool:
    """Record (vault path, date) recalls in the activity file, counting each; False when the
    file could not be written (busy, broken): activity is best effort."""
    import sqlite3

    try:
        db = _activity_db(path)
        try:
            db.executemany(
                "INSERT INTO recalled(path, last, count) VALUES (?, ?, 1) ON CONFLICT(path)"
                " DO UPDATE SET last = excluded.last, count = count + 1", rows)
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return True
