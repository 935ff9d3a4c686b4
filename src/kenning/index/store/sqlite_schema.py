"""The SQLite backend's schema as ordered migrations, and its connection, lock and transactions.

The index lives in ``<vault>/.kenning/index.db`` (SQLite, WAL). It is derived from the vault: delete
it and ``kenning rebuild`` gives the same answers. Schema changes are small functions applied in
order on open (each in its own transaction), counted in ``PRAGMA user_version`` and recorded in
the ``schema_migrations`` table (version, name, applied). Only
:class:`kenning.index.store.sqlite.SQLiteStore` opens a database through this module.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from kenning.errors import IndexBusy, KenningError
from kenning.vault.fsio import acquire_flock, flock_held
from kenning.vault.layout import STATE_DIR

T = TypeVar("T")

DB_NAME = "index.db"


class SchemaTooNew(KenningError):
    """The database was migrated by a newer Kenning than this one."""


LOCK_NAME = "index.lock"


def _v1(db: sqlite3.Connection) -> None:
    """pages, names, chunks, full-text, links, facts, timeline"""
    _run_script(
        db,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);

        -- Every Markdown file seen on disk; status says whether it became a page.
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT NOT NULL,
            status TEXT NOT NULL,          -- ok | skipped
            reason TEXT
        );

        -- A page shares its id with its file, so links to it survive edits.
        CREATE TABLE pages (
            id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            type TEXT,
            domain TEXT,
            folder TEXT NOT NULL,
            status TEXT,
            summary TEXT NOT NULL,
            title_line INTEGER,
            summary_end INTEGER,
            date TEXT,                     -- the page's "when" (date, daily-log day, updated)
            created TEXT,
            updated TEXT,
            frontmatter TEXT NOT NULL,     -- JSON
            lines INTEGER NOT NULL
        );
        CREATE INDEX pages_type ON pages(type);
        CREATE INDEX pages_folder ON pages(folder);
        CREATE INDEX pages_date ON pages(date);

        -- Every name a link may use for a page: path, file stem, title, alias.
        CREATE TABLE names (
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            norm TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,            -- path | stem | title | alias
            priority INTEGER NOT NULL
        );
        CREATE INDEX names_norm ON names(norm);
        CREATE INDEX names_page ON names(page_id);

        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            heading TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            words INTEGER NOT NULL
        );
        CREATE INDEX chunks_page ON chunks(page_id);

        -- rowid = chunks.id. body keeps the chunk's lines verbatim so citations can be narrowed to
        -- the exact lines; cjk holds overlapping bigrams of CJK runs (see index/cjk.py).
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            title, heading, body, cjk, tokenize = 'porter unicode61 remove_diacritics 2'
        );

        -- Typed, directed edges with provenance. An endpoint given by reference (a link target
        -- written in the origin page) is resolved to a page id after indexing; a NULL reference
        -- means the origin page itself.
        CREATE TABLE links (
            id INTEGER PRIMARY KEY,
            origin_id INTEGER REFERENCES pages(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,            -- wikilink | markdown | frontmatter | fact | manual
            field TEXT,                    -- frontmatter key that produced it
            line INTEGER,
            rel TEXT NOT NULL,
            src_ref TEXT, src_norm TEXT, src_id INTEGER,
            dst_ref TEXT, dst_norm TEXT, dst_id INTEGER,
            heading TEXT,
            alias TEXT,
            embed INTEGER NOT NULL DEFAULT 0,
            valid_from TEXT,
            valid_to TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            resolution TEXT,               -- NULL (pending) | resolved | unresolved | ambiguous
            manual_key TEXT UNIQUE
        );
        CREATE INDEX links_origin ON links(origin_id);
        CREATE INDEX links_src ON links(src_id, rel);
        CREATE INDEX links_dst ON links(dst_id, rel);
        CREATE INDEX links_src_norm ON links(src_norm);
        CREATE INDEX links_dst_norm ON links(dst_norm);
        CREATE INDEX links_pending ON links(resolution) WHERE resolution IS NULL;

        CREATE TABLE facts (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            line INTEGER NOT NULL,
            relation TEXT,
            target TEXT,
            text TEXT NOT NULL,
            valid_from TEXT,
            valid_to TEXT,
            status TEXT NOT NULL,
            successor TEXT,
            epistemic TEXT NOT NULL,
            confidence REAL,
            source TEXT
        );
        CREATE INDEX facts_page ON facts(page_id);

        CREATE TABLE timeline (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            line INTEGER NOT NULL,
            date TEXT NOT NULL,
            text TEXT NOT NULL,
            source TEXT
        );
        CREATE INDEX timeline_page ON timeline(page_id);
        CREATE INDEX timeline_date ON timeline(date);

        CREATE TABLE retained (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            line INTEGER NOT NULL,
            kind TEXT NOT NULL,
            entities TEXT NOT NULL,        -- JSON list of @mentions
            confidence REAL,
            text TEXT NOT NULL,
            date TEXT
        );
        CREATE INDEX retained_page ON retained(page_id);

        -- Problems found while parsing (malformed frontmatter, vocabulary violations ...).
        CREATE TABLE problems (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            line INTEGER,
            code TEXT NOT NULL,
            field TEXT,
            message TEXT NOT NULL
        );
        CREATE INDEX problems_file ON problems(file_id);

        -- Names whose owner changed since links were last resolved (written with the change, in
        -- the same transaction, so an interrupted run still re-resolves them next time).
        CREATE TABLE dirty_names (norm TEXT PRIMARY KEY);
        """
    )


def _run_script(db: sqlite3.Connection, script: str) -> None:
    """Run SQL statements one by one (``executescript`` would commit the open transaction)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        db.execute(statement)


def _v2(db: sqlite3.Connection) -> None:
    """vectors by model and text hash"""
    _run_script(
        db,
        """
        -- Vectors, cached by (model, hash of the embedded text): an edit that keeps a chunk's
        -- text costs no embedding, and a change of model never mixes vectors of two models.
        -- A rowid table: WITHOUT ROWID stores 1.5 kB rows three times over (measured).
        CREATE TABLE embeddings (
            id INTEGER PRIMARY KEY,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,          -- float32 little-endian, L2-normalised
            UNIQUE (model, text_hash)
        );
        ALTER TABLE chunks ADD COLUMN text_hash TEXT;   -- NULL: nothing worth embedding
        CREATE INDEX chunks_text_hash ON chunks(text_hash);
        ALTER TABLE pages ADD COLUMN body_start INTEGER NOT NULL DEFAULT 1;
        -- Chunks written before v2 have no text hash: re-parse every file on the next run.
        UPDATE files SET mtime_ns = -1, hash = '';
        """,
    )


def _v3(db: sqlite3.Connection) -> None:
    """belief time on facts and links"""
    _run_script(
        db,
        """
        -- Belief time next to valid time: when Kenning learned a fact or edge ([recorded:: …])
        -- and when it retired it ([expired:: …]), for "what did we believe on D".
        ALTER TABLE facts ADD COLUMN recorded TEXT;
        ALTER TABLE facts ADD COLUMN expired TEXT;
        ALTER TABLE links ADD COLUMN recorded TEXT;
        ALTER TABLE links ADD COLUMN expired TEXT;
        -- Facts indexed before v3 lack both: re-parse every file on the next run.
        UPDATE files SET mtime_ns = -1, hash = '';
        """,
    )


def _v4(db: sqlite3.Connection) -> None:
    """attachments, anchors, link resolution routes"""
    _run_script(
        db,
        """
        -- The vault's files that are not pages (images, PDFs, canvases …): links may name them.
        -- name is the file name as links compare it (case-folded); only paths are kept.
        CREATE TABLE attachments (path TEXT PRIMARY KEY, name TEXT NOT NULL);
        CREATE INDEX attachments_name ON attachments(name);
        -- The headings and block ids (^id) of each page, as [[Page#Heading]] compares them.
        CREATE TABLE anchors (
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            anchor TEXT NOT NULL
        );
        CREATE INDEX anchors_page ON anchors(page_id);
        -- How a link end was resolved: the file name it looks up (key), a name Obsidian does not
        -- read as a link (plain: a frontmatter value, an @mention), the route it took (via:
        -- path, folder, shortest, title, alias) and the non-page file it reached (file, with
        -- resolution 'file': an attachment, or a Markdown file that cannot be indexed).
        ALTER TABLE links ADD COLUMN src_key TEXT;
        ALTER TABLE links ADD COLUMN dst_key TEXT;
        ALTER TABLE links ADD COLUMN plain INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE links ADD COLUMN via TEXT;
        ALTER TABLE links ADD COLUMN file TEXT;
        CREATE INDEX links_src_key ON links(src_key);
        CREATE INDEX links_dst_key ON links(dst_key);
        -- Links indexed before v4 lack all of it: re-parse every file on the next run.
        UPDATE files SET mtime_ns = -1, hash = '';
        """,
    )


def _v5(db: sqlite3.Connection) -> None:
    """tags, summary start, chunk sections"""
    _run_script(
        db,
        """
        -- Tags: frontmatter tags and inline #tags, one row per page and tag (case-folded in
        -- norm; nested tags keep their '/', so "a/b" also matches a filter on "a").
        CREATE TABLE tags (
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,             -- as first written, without '#'
            norm TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        CREATE INDEX tags_norm ON tags(norm);
        CREATE INDEX tags_page ON tags(page_id);
        -- The summary may come from frontmatter or a first paragraph: its own first line.
        ALTER TABLE pages ADD COLUMN summary_start INTEGER;
        -- Headings that start inside a chunk, JSON [[line, heading path], ...], so a hit is named
        -- by the section of the line it cites. A table of its own (only chunks that have some):
        -- in chunks it would widen every row the lexical arm reads.
        CREATE TABLE chunk_sections (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            sections TEXT NOT NULL
        );
        -- Titles, summaries and tags follow new rules: re-parse every file on the next run.
        UPDATE files SET mtime_ns = -1, hash = '';
        """,
    )


def _v6(db: sqlite3.Connection) -> None:
    """migrations recorded in schema_migrations"""
    _run_script(
        db,
        """
        -- Every migration applied, with its name and when (UTC, ISO): PRAGMA user_version says
        -- how far, this table says what and when. Earlier versions are backfilled (applied NULL:
        -- before the table existed).
        CREATE TABLE schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied TEXT
        );
        """,
    )
    db.executemany("INSERT INTO schema_migrations(version, name, applied) VALUES (?, ?, NULL)",
                   [(n + 1, _name(m)) for n, m in enumerate(MIGRATIONS[:5])])


def _v7(db: sqlite3.Connection) -> None:
    """items: commitments, asks and decisions, and their parties"""
    _run_script(
        db,
        """
        -- One row per item line of a page (docs/vault-format.md §6b). ``key`` is the item's
        -- identity: its block id (``i-…``, the build's) when it has one, else the page path and
        -- a hash of the line's kind and words; the same key on several pages is one item.
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            line INTEGER NOT NULL,
            key TEXT NOT NULL,
            section TEXT NOT NULL,
            kind TEXT NOT NULL,            -- commitment | ask | decision
            text TEXT NOT NULL,
            checked INTEGER,               -- 1 [x], 0 [ ], NULL no box
            date TEXT,
            due TEXT,
            completion TEXT,
            closed TEXT,
            because TEXT,
            rejected TEXT NOT NULL,        -- JSON list
            about TEXT NOT NULL,           -- JSON list
            status TEXT NOT NULL,          -- open | done | decided | superseded
            superseded_by TEXT,
            source TEXT,
            block_id TEXT
        );
        CREATE INDEX items_page ON items(page_id);
        CREATE INDEX items_key ON items(key);
        CREATE INDEX items_due ON items(due);
        -- Who promised/asked/decided (role 'who'), to whom ('to') and what it is about ('about'),
        -- one row per party: the
        -- raw value, the name it looks up (norm, key as links have them), and what it resolved
        -- to: the owner (me = 1), a page (page_id), or neither (kept as the name).
        CREATE TABLE item_parties (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            role TEXT NOT NULL,            -- who | to | about
            ord INTEGER NOT NULL,
            raw TEXT NOT NULL,
            norm TEXT,                     -- NULL: the owner, or the page the item is on
            ref_key TEXT,
            plain INTEGER NOT NULL DEFAULT 0,
            me INTEGER NOT NULL DEFAULT 0,
            party_id INTEGER,              -- the page the party resolved to
            resolution TEXT                -- NULL: not resolved yet
        );
        CREATE INDEX item_parties_item ON item_parties(item_id);
        CREATE INDEX item_parties_page ON item_parties(page_id);
        CREATE INDEX item_parties_party ON item_parties(party_id);
        CREATE INDEX item_parties_norm ON item_parties(norm);
        -- Pages indexed before v7 have no items: re-parse every file on the next run.
        UPDATE files SET mtime_ns = -1, hash = '';
        """,
    )


def _v8(db: sqlite3.Connection) -> None:
    """mounts, and the code graph: symbols, aliases, references"""
    _run_script(
        db,
        """
        -- Mounts: a mounted folder's files are NAME:REL (kenning.vault.mounts); '' is the vault.
        ALTER TABLE files ADD COLUMN mount TEXT NOT NULL DEFAULT '';
        ALTER TABLE pages ADD COLUMN mount TEXT NOT NULL DEFAULT '';
        CREATE INDEX pages_mount ON pages(mount);

        -- The code graph, apart from the typed entity links: one symbol per definition (each
        -- with its own chunk), and every call or reference it makes. A reference keeps the
        -- qualified names it may mean (candidates, most likely first), so a file indexed later
        -- can resolve it; dst_id is the definition it resolved to (NULL: unresolved).
        CREATE TABLE code_symbols (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            chunk_id INTEGER,
            qualname TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,            -- module | class | function | method
            language TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            signature TEXT NOT NULL,
            parent TEXT,
            bases TEXT,                    -- JSON: a class's base classes, as candidates
            returns TEXT                   -- JSON: what a function returns, as candidates
        );
        CREATE INDEX code_symbols_page ON code_symbols(page_id);
        CREATE INDEX code_symbols_qualname ON code_symbols(qualname);
        CREATE INDEX code_symbols_name ON code_symbols(name);
        CREATE INDEX code_symbols_chunk ON code_symbols(chunk_id);
        -- A name a module binds by importing it (a re-export: pkg.X -> pkg.sub.X).
        CREATE TABLE code_aliases (
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            qualname TEXT NOT NULL,
            target TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        CREATE INDEX code_aliases_page ON code_aliases(page_id);
        CREATE INDEX code_aliases_qualname ON code_aliases(qualname);
        CREATE TABLE code_refs (
            id INTEGER PRIMARY KEY,
            page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
            src_id INTEGER REFERENCES code_symbols(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,            -- call | ref | mention (a note naming a definition)
            line INTEGER NOT NULL,
            text TEXT NOT NULL,
            candidates TEXT NOT NULL,      -- JSON list of qualified names
            target TEXT,                   -- the qualified name it resolved to
            dst_id INTEGER                 -- code_symbols.id (no cascade: re-resolved instead)
        );
        CREATE INDEX code_refs_page ON code_refs(page_id);
        CREATE INDEX code_refs_src ON code_refs(src_id);
        CREATE INDEX code_refs_dst ON code_refs(dst_id);
                """,
    )


def _v9(db: sqlite3.Connection) -> None:
    """the links kenning doctor reads: all but those resolved to a page by its path"""
    # The doctor's link findings (kenning.index.queries.health) come only from these rows (a
    # few thousand of 400,000 at 10,000 notes); the query repeats this WHERE to use the index.
    _run_script(
        db,
        """
        CREATE INDEX links_unusual ON links(resolution) WHERE resolution IS NULL
            OR resolution <> 'resolved' OR via IN ('title', 'alias', 'heading', 'shortest')
            OR heading IS NOT NULL;
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8,
                                                          _v9]
SCHEMA_VERSION = len(MIGRATIONS)
RECORDED_FROM = 6  # the first migration recorded as it is applied (the table came with it)


def state_dir(root: Path) -> Path:
    """The vault's ``.kenning`` folder."""
    return root / STATE_DIR


def db_path(root: Path) -> Path:
    """Where the index database of the vault at ``root`` lives."""
    return state_dir(root) / DB_NAME


def connect(path: Path) -> sqlite3.Connection:
    """Open (and migrate) the index at ``path``; WAL mode, foreign keys on, rows as tuples."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA foreign_keys = ON")
    mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    if mode != "wal":
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA temp_store = MEMORY")
    db.execute("PRAGMA cache_size = -32000")
    migrate(db)
    if get_meta(db, "index_id") is None:
        # Names this database: caches keyed by it never outlive a rebuild.
        db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('index_id', ?)",
                   (os.urandom(8).hex(),))
    return db


def migrate(db: sqlite3.Connection) -> None:
    """Apply the migrations the database has not seen yet, each in its own transaction."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"index schema v{version} is newer than this Kenning (v{SCHEMA_VERSION}); "
            "upgrade Kenning or run `kenning rebuild`"
        )
    for number in range(version, SCHEMA_VERSION):
        with transaction(db):
            # Another process may have migrated while we waited for the write lock.
            if db.execute("PRAGMA user_version").fetchone()[0] > number:
                continue
            MIGRATIONS[number](db)
            if number + 1 >= RECORDED_FROM:
                db.execute("INSERT INTO schema_migrations(version, name, applied) VALUES (?, ?, ?)"
                           " ON CONFLICT (version) DO NOTHING",
                           (number + 1, _name(MIGRATIONS[number]), _utc_now()))
            db.execute(f"PRAGMA user_version = {number + 1}")


def _name(migration: Callable[[sqlite3.Connection], None]) -> str:
    """A migration's name: the first line of its docstring."""
    return (migration.__doc__ or migration.__name__).strip().splitlines()[0]


def _utc_now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def schema_version(db: sqlite3.Connection) -> int:
    """The schema version recorded in the database."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error (including KeyboardInterrupt)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        rollback(db)
        raise
    db.execute("COMMIT")


def rollback(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if any: SQLite has already rolled back after some errors
    (a full disk), and a failing ROLLBACK must not hide the error that caused it."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def get_meta(db: sqlite3.Connection, key: str) -> str | None:
    """Read one value from the meta table."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    """Write one value to the meta table (caller owns the transaction)."""
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


@contextlib.contextmanager
def writer_lock(root: Path, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the vault's index write lock; wait up to ``wait`` seconds, else raise IndexBusy.

    An advisory ``flock`` is released by the kernel when its holder dies, so a killed run never
    leaves a stale lock behind.
    """
    path = state_dir(root) / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    # Even with wait=0, retry briefly: `kenning doctor` probes the lock by taking it for an
    # instant, and that must not make a concurrent `kenning index` fail.
    def busy() -> IndexBusy:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
        return IndexBusy("another kenning process is writing the index"
                         + (f" (pid {holder})" if holder else "")
                         + "; wait for it to finish or pass --wait SECONDS")

    try:
        acquire_flock(fd, max(wait, 0.5), busy, poll=0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def lock_held(root: Path) -> bool:
    """True when some process currently holds the index write lock."""
    return flock_held(state_dir(root) / LOCK_NAME)


def in_batches(items: Iterable[T], size: int = 900) -> Iterator[tuple[list[T], str]]:
    """``items`` in parts small enough for one ``IN (…)`` (SQLite allows 999 parameters), each
    with its ``?,?,…`` placeholders."""
    items = list(items)
    for start in range(0, len(items), size):
        part = items[start : start + size]
        yield part, ",".join("?" * len(part))
