"""The PostgreSQL schema of an index, as ordered migrations (one vault = one PostgreSQL schema).

The tables and columns are SQLite's (``store/sqlite_schema.py``, v1–v7), in the same order, with
PostgreSQL types: ``INTEGER`` → ``INTEGER`` (``mtime_ns`` is nanoseconds), ``REAL`` → ``DOUBLE
PRECISION``, an ``INTEGER PRIMARY KEY`` → an identity column, a vector ``BLOB`` → pgvector's
``vector``. ``chunks_fts`` is a real table whose ``rowid`` column is the chunk id; its generated
``tsv`` column holds title (weight A), heading (B) and body (C) stemmed by the schema's own text
search configuration (``kenning_fts``: Snowball, *no stop words*; Latin diacritics folded, like
SQLite's ``porter unicode61 remove_diacritics 2``) and the CJK bigram column (D, unstemmed, as
:mod:`kenning.index.cjk` writes it), with a GIN index.

Bookkeeping of the PostgreSQL backend itself, created before migration 1:

* ``schema_migrations(version, name, applied)``: one row per migration, written in the
  migration's own transaction (so a migration is applied whole or not at all).
* ``kenning_changes``: one counter row, bumped in every write transaction's commit (the change
  token); ``kenning_commits``: the token of every recent write transaction, so a commit whose
  acknowledgement was lost can be told from one that never happened (see ``postgres.py``).

Each migration is a function of the schema name returning its SQL; the store runs it, then
records it, in one transaction, under an advisory lock (``postgres.py``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

#: Latin letters with diacritics and what they fold to (SQLite's remove_diacritics 2 folds these
#: and more); the table is built once, immutable, so a generated column may use it.
_ACCENTED = (
    "àáâãäåāăąçćĉċčďđèéêëēĕėęěĝğġģĥħìíîïĩīĭįıĵķĺļľŀłñńņňòóôõöøōŏőŕŗřśŝşšţťŧùúûüũūŭůűųŵýÿŷźżž"
)
_SPECIAL = {"đ": "d", "ħ": "h", "ı": "i", "ŀ": "l", "ł": "l", "ø": "o", "ŧ": "t"}
_FOLDED = "".join(_SPECIAL.get(c) or unicodedata.normalize("NFD", c)[0] for c in _ACCENTED)
# The capitals too: in a database of the C locale lower() leaves non-ASCII letters as they are.
_UPPER = {c.upper(): f for c, f in zip(_ACCENTED, _FOLDED, strict=True)
          if len(c.upper()) == 1 and not c.upper().isascii()}
_FOLD_FROM = _ACCENTED + "".join(_UPPER)
_FOLD_TO = _FOLDED + "".join(_UPPER.values())
#: What separates words, as unicode61 sees it, spelled out (a class like [[:alnum:]] follows the
#: database's locale, and in the C locale it would drop every non-ASCII letter): ASCII other
#: than letters and digits, Latin-1 punctuation and symbols, general and CJK punctuation, and
#: full-width ASCII punctuation.
SEPARATORS = ("[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f\\u00a0-\\u00bf\\u00d7\\u00f7"
              "\\u2000-\\u206f\\u3000-\\u303f\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40"
              "\\uff5b-\\uff65]")


def _fold(column: str, collate: str = "") -> str:
    """A column's text as unicode61 tokenizes it: every run of other characters than letters
    and digits a separator (so PostgreSQL's parser finds no paths, URLs or e-mail addresses, and
    "meetings/2026-01-12" is three words, as in FTS5), Latin diacritics folded (lower-cased
    first: the map is lower case; plain ASCII, most text, skips the fold)."""
    folded = (f"CASE WHEN {column} ~ '[^\\x01-\\x7f]' THEN translate(lower({column}{collate}),"
              f" '{_FOLD_FROM}', '{_FOLD_TO}') ELSE COALESCE({column}, '') END")
    return f"regexp_replace({folded}, '{SEPARATORS}+', ' ', 'g')"


def _tokens(column: str) -> str:
    """How many tokens unicode61 makes of a column: runs of non-separators."""
    return f"regexp_count(COALESCE({column}, ''), '[^{SEPARATORS[1:-1]}]+')"


def _bootstrap(schema: str) -> str:
    return f"""
    CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied TEXT
    );
    """


def _v1(s: str, collate: str = "") -> str:
    """pages, names, chunks, full-text, links, facts, timeline"""
    return f"""
    -- What the PostgreSQL store keeps for itself: the change counter and the commit tokens.
    CREATE TABLE {s}.kenning_changes (id INTEGER PRIMARY KEY, n BIGINT NOT NULL);
    INSERT INTO {s}.kenning_changes VALUES (1, 0);
    CREATE TABLE {s}.kenning_commits (
        token TEXT PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL DEFAULT now()
    );

    -- Full-text: Snowball English without stop words (SQLite's FTS5 has none), diacritics folded.
    CREATE TEXT SEARCH DICTIONARY {s}.kenning_stem (TEMPLATE = pg_catalog.snowball,
                                                    Language = english);
    CREATE TEXT SEARCH CONFIGURATION {s}.kenning_fts (COPY = pg_catalog.english);
    ALTER TEXT SEARCH CONFIGURATION {s}.kenning_fts
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH {s}.kenning_stem;

    CREATE TABLE {s}.meta (key TEXT PRIMARY KEY, value TEXT);

    CREATE TABLE {s}.files (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        hash TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT
    );

    CREATE TABLE {s}.pages (
        id INTEGER PRIMARY KEY REFERENCES {s}.files(id) ON DELETE CASCADE,
        path TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        type TEXT,
        domain TEXT,
        folder TEXT NOT NULL,
        status TEXT,
        summary TEXT NOT NULL,
        title_line INTEGER,
        summary_end INTEGER,
        date TEXT,
        created TEXT,
        updated TEXT,
        frontmatter TEXT NOT NULL,
        lines INTEGER NOT NULL
    );
    CREATE INDEX pages_type ON {s}.pages(type);
    CREATE INDEX pages_folder ON {s}.pages(folder);
    CREATE INDEX pages_date ON {s}.pages(date);

    CREATE TABLE {s}.names (
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        norm TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        priority INTEGER NOT NULL
    );
    CREATE INDEX names_norm ON {s}.names(norm);
    CREATE INDEX names_page ON {s}.names(page_id);

    CREATE TABLE {s}.chunks (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        heading TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        words INTEGER NOT NULL
    );
    CREATE INDEX chunks_page ON {s}.chunks(page_id);

    -- rowid = chunks.id (as SQLite's FTS5 table is addressed). tsv: title A, heading B, body C
    -- (stemmed), CJK bigrams D (as written). ntok: its tokens as unicode61 counts them (runs
    -- of letters and digits), BM25's row length.
    CREATE TABLE {s}.chunks_fts (
        rowid INTEGER PRIMARY KEY,
        title TEXT,
        heading TEXT,
        body TEXT,
        cjk TEXT,
        tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                  {_fold("title", collate)}), 'A')
            || setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                     {_fold("heading", collate)}), 'B')
            || setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                     {_fold("body", collate)}), 'C')
            || setweight(to_tsvector('pg_catalog.simple'::regconfig, COALESCE(cjk, '')), 'D')
        ) STORED,
        ntok INTEGER GENERATED ALWAYS AS (
            {_tokens("title")} + {_tokens("heading")} + {_tokens("body")} + {_tokens("cjk")}
        ) STORED
    );
    CREATE INDEX chunks_fts_tsv ON {s}.chunks_fts USING gin (tsv);

    CREATE TABLE {s}.links (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        origin_id INTEGER REFERENCES {s}.pages(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        field TEXT,
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
        resolution TEXT,
        manual_key TEXT UNIQUE
    );
    CREATE INDEX links_origin ON {s}.links(origin_id);
    CREATE INDEX links_src ON {s}.links(src_id, rel);
    CREATE INDEX links_dst ON {s}.links(dst_id, rel);
    CREATE INDEX links_src_norm ON {s}.links(src_norm);
    CREATE INDEX links_dst_norm ON {s}.links(dst_norm);
    CREATE INDEX links_pending ON {s}.links(resolution) WHERE resolution IS NULL;

    CREATE TABLE {s}.facts (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        relation TEXT,
        target TEXT,
        text TEXT NOT NULL,
        valid_from TEXT,
        valid_to TEXT,
        status TEXT NOT NULL,
        successor TEXT,
        epistemic TEXT NOT NULL,
        confidence DOUBLE PRECISION,
        source TEXT
    );
    CREATE INDEX facts_page ON {s}.facts(page_id);

    CREATE TABLE {s}.timeline (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        date TEXT NOT NULL,
        text TEXT NOT NULL,
        source TEXT
    );
    CREATE INDEX timeline_page ON {s}.timeline(page_id);
    CREATE INDEX timeline_date ON {s}.timeline(date);

    CREATE TABLE {s}.retained (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        kind TEXT NOT NULL,
        entities TEXT NOT NULL,
        confidence DOUBLE PRECISION,
        text TEXT NOT NULL,
        date TEXT
    );
    CREATE INDEX retained_page ON {s}.retained(page_id);

    CREATE TABLE {s}.problems (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES {s}.files(id) ON DELETE CASCADE,
        line INTEGER,
        code TEXT NOT NULL,
        field TEXT,
        message TEXT NOT NULL
    );
    CREATE INDEX problems_file ON {s}.problems(file_id);

    CREATE TABLE {s}.dirty_names (norm TEXT PRIMARY KEY);
    """


def _v2(s: str, collate: str = "") -> str:
    """vectors by model and text hash"""
    return f"""
    -- pgvector: any dimension in the column; the HNSW index is built per dimension (a partial
    -- expression index, see PostgresStore.put_vectors), so a model change never mixes vectors.
    CREATE TABLE {s}.embeddings (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector vector NOT NULL,
        UNIQUE (model, text_hash)
    );
    ALTER TABLE {s}.chunks ADD COLUMN text_hash TEXT;
    CREATE INDEX chunks_text_hash ON {s}.chunks(text_hash);
    ALTER TABLE {s}.pages ADD COLUMN body_start INTEGER NOT NULL DEFAULT 1;
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v3(s: str, collate: str = "") -> str:
    """belief time on facts and links"""
    return f"""
    ALTER TABLE {s}.facts ADD COLUMN recorded TEXT;
    ALTER TABLE {s}.facts ADD COLUMN expired TEXT;
    ALTER TABLE {s}.links ADD COLUMN recorded TEXT;
    ALTER TABLE {s}.links ADD COLUMN expired TEXT;
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v4(s: str, collate: str = "") -> str:
    """attachments, anchors, link resolution routes"""
    return f"""
    CREATE TABLE {s}.attachments (path TEXT PRIMARY KEY, name TEXT NOT NULL);
    CREATE INDEX attachments_name ON {s}.attachments(name);
    CREATE TABLE {s}.anchors (
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        anchor TEXT NOT NULL
    );
    CREATE INDEX anchors_page ON {s}.anchors(page_id);
    ALTER TABLE {s}.links ADD COLUMN src_key TEXT;
    ALTER TABLE {s}.links ADD COLUMN dst_key TEXT;
    ALTER TABLE {s}.links ADD COLUMN plain INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE {s}.links ADD COLUMN via TEXT;
    ALTER TABLE {s}.links ADD COLUMN file TEXT;
    CREATE INDEX links_src_key ON {s}.links(src_key);
    CREATE INDEX links_dst_key ON {s}.links(dst_key);
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v5(s: str, collate: str = "") -> str:
    """tags, summary start, chunk sections"""
    return f"""
    CREATE TABLE {s}.tags (
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        norm TEXT NOT NULL,
        line INTEGER NOT NULL
    );
    CREATE INDEX tags_norm ON {s}.tags(norm);
    CREATE INDEX tags_page ON {s}.tags(page_id);
    ALTER TABLE {s}.pages ADD COLUMN summary_start INTEGER;
    CREATE TABLE {s}.chunk_sections (
        chunk_id INTEGER PRIMARY KEY REFERENCES {s}.chunks(id) ON DELETE CASCADE,
        sections TEXT NOT NULL
    );
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v6(s: str, collate: str = "") -> str:
    """migrations recorded in schema_migrations"""
    # SQLite gained the table in its v6; PostgreSQL has had it from the start. Kept so both
    # backends count their migrations alike.
    return ""


def _v7(s: str, collate: str = "") -> str:
    """items: commitments, asks and decisions, and their parties"""
    return f"""
    CREATE TABLE {s}.items (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        key TEXT NOT NULL,
        section TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        checked INTEGER,
        date TEXT,
        due TEXT,
        completion TEXT,
        closed TEXT,
        because TEXT,
        rejected TEXT NOT NULL,
        about TEXT NOT NULL,
        status TEXT NOT NULL,
        superseded_by TEXT,
        source TEXT,
        block_id TEXT
    );
    CREATE INDEX items_page ON {s}.items(page_id);
    CREATE INDEX items_key ON {s}.items(key);
    CREATE INDEX items_due ON {s}.items(due);
    CREATE TABLE {s}.item_parties (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        item_id INTEGER NOT NULL REFERENCES {s}.items(id) ON DELETE CASCADE,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        ord INTEGER NOT NULL,
        raw TEXT NOT NULL,
        norm TEXT,
        ref_key TEXT,
        plain INTEGER NOT NULL DEFAULT 0,
        me INTEGER NOT NULL DEFAULT 0,
        party_id INTEGER,
        resolution TEXT
    );
    CREATE INDEX item_parties_item ON {s}.item_parties(item_id);
    CREATE INDEX item_parties_page ON {s}.item_parties(page_id);
    CREATE INDEX item_parties_party ON {s}.item_parties(party_id);
    CREATE INDEX item_parties_norm ON {s}.item_parties(norm);
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v8(s: str, collate: str = "") -> str:
    """mounts, and the code graph: symbols, aliases, references"""
    return f"""
    -- Mounts: a mounted folder's files are NAME:REL (kenning.vault.mounts); '' is the vault.
    ALTER TABLE {s}.files ADD COLUMN mount TEXT NOT NULL DEFAULT '';
    ALTER TABLE {s}.pages ADD COLUMN mount TEXT NOT NULL DEFAULT '';
    CREATE INDEX pages_mount ON {s}.pages(mount);

    -- The code graph, apart from the typed entity links: one symbol per definition (each
    -- with its own chunk), and every call or reference it makes. A reference keeps the
    -- qualified names it may mean (candidates, most likely first), so a file indexed later
    -- can resolve it; dst_id is the definition it resolved to (NULL: unresolved).
    CREATE TABLE {s}.code_symbols (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        chunk_id INTEGER,
        qualname TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,        -- module | class | function | method
        language TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        signature TEXT NOT NULL,
        parent TEXT,
        bases TEXT,                    -- JSON: a class's base classes, as candidates
        returns TEXT                   -- JSON: what a function returns, as candidates
    );
    CREATE INDEX code_symbols_page ON {s}.code_symbols(page_id);
    CREATE INDEX code_symbols_qualname ON {s}.code_symbols(qualname);
    CREATE INDEX code_symbols_name ON {s}.code_symbols(name);
    CREATE INDEX code_symbols_chunk ON {s}.code_symbols(chunk_id);
    -- A name a module binds by importing it (a re-export: pkg.X -> pkg.sub.X).
    CREATE TABLE {s}.code_aliases (
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        qualname TEXT NOT NULL,
        target TEXT NOT NULL,
        line INTEGER NOT NULL
    );
    CREATE INDEX code_aliases_page ON {s}.code_aliases(page_id);
    CREATE INDEX code_aliases_qualname ON {s}.code_aliases(qualname);
    CREATE TABLE {s}.code_refs (
        id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id INTEGER NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        src_id INTEGER REFERENCES {s}.code_symbols(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,        -- call | ref | mention (a note naming a definition)
        line INTEGER NOT NULL,
        text TEXT NOT NULL,
        candidates TEXT NOT NULL,      -- JSON list of qualified names
        target TEXT,           -- the qualified name it resolved to
        dst_id INTEGER         -- code_symbols.id (no cascade: re-resolved instead)
    );
    CREATE INDEX code_refs_page ON {s}.code_refs(page_id);
    CREATE INDEX code_refs_src ON {s}.code_refs(src_id);
    CREATE INDEX code_refs_dst ON {s}.code_refs(dst_id);
        """


def _v9(s: str, collate: str = "") -> str:
    """the links kenning doctor reads: all but those resolved to a page by its path"""
    return f"""
    CREATE INDEX links_unusual ON {s}.links(resolution) WHERE resolution IS NULL
        OR resolution <> 'resolved' OR via IN ('title', 'alias', 'heading', 'shortest')
        OR heading IS NOT NULL;
        """


#: A migration: (schema identifier, the COLLATE clause that makes lower() Unicode-aware in any
#: database locale, e.g. ' COLLATE pg_c_utf8' on PostgreSQL 17+, or '') -> its SQL.
Migration = Callable[[str, str], str]

MIGRATIONS: list[Migration] = [_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9]
SCHEMA_VERSION = len(MIGRATIONS)


def bootstrap_sql(schema: str) -> str:
    """The bookkeeping table every schema has before its first migration."""
    return _bootstrap(schema)


def name(migration: Migration) -> str:
    """A migration's name: the first line of its docstring."""
    return (migration.__doc__ or migration.__name__).strip().splitlines()[0]
