"""The PostgreSQL schema of an index, as ordered migrations (one vault = one PostgreSQL schema).

The tables and columns are SQLite's (``store/sqlite_schema.py``, v1–v6), in the same order, with
PostgreSQL types: ``INTEGER`` → ``BIGINT`` (``mtime_ns`` is nanoseconds), ``REAL`` → ``DOUBLE
PRECISION``, an ``INTEGER PRIMARY KEY`` → an identity column, a vector ``BLOB`` → pgvector's
``vector``. ``chunks_fts`` is a real table whose ``rowid`` column is the chunk id; its generated
``tsv`` column holds title (weight A), heading (B) and body (C) stemmed by the schema's own text
search configuration (``kenning_fts``: Snowball, *no stop words*, Latin diacritics folded, like
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


def _bootstrap(schema: str) -> str:
    return f"""
    CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied TEXT
    );
    """


def _v1(s: str) -> str:
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
    CREATE FUNCTION {s}.kenning_fold(t TEXT) RETURNS TEXT
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN translate(lower(t), '{_ACCENTED}', '{_FOLDED}');

    -- BM25 of one chunk, as FTS5's bm25() computes it (k1 = 1.2, b = 0.75): for each query
    -- clause k, idf[k] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen)), summed; tf is
    -- the clause's hits weighted by column (wts: A title, B heading, C body, D cjk), a phrase
    -- counting as its least frequent word; len is the number of distinct lexemes. The clause
    -- words are (lex, cls, kinds): kind 0 a stemmed word of title/heading/body, 1 a CJK bigram,
    -- 2 a CJK prefix.
    CREATE FUNCTION {s}.kenning_bm25(v tsvector, lex TEXT[], cls INTEGER[], kinds INTEGER[],
                                     idf DOUBLE PRECISION[], wts DOUBLE PRECISION[],
                                     avglen DOUBLE PRECISION) RETURNS DOUBLE PRECISION
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN (
            SELECT COALESCE(sum(idf[t.cl] * t.tf * 2.2
                                / (t.tf + 1.2 * (0.25 + 0.75 * length(v) / avglen))), 0)
            FROM (
                SELECT x.cl, min(x.tf) AS tf FROM (
                    SELECT q.cl, q.ord,
                           sum(wts[CASE w WHEN 'A' THEN 1 WHEN 'B' THEN 2 WHEN 'C' THEN 3
                                    ELSE 4 END]) AS tf
                    FROM unnest(lex, cls, kinds) WITH ORDINALITY AS q(l, cl, kind, ord)
                    JOIN unnest(v) AS u
                      ON CASE WHEN q.kind = 2 THEN starts_with(u.lexeme, q.l)
                              ELSE u.lexeme = q.l END
                    CROSS JOIN LATERAL unnest(u.weights) AS w
                    WHERE (q.kind = 0) = (w <> 'D')
                    GROUP BY q.cl, q.ord
                ) AS x GROUP BY x.cl
            ) AS t
        );

    CREATE TABLE {s}.meta (key TEXT PRIMARY KEY, value TEXT);

    CREATE TABLE {s}.files (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        hash TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT
    );

    CREATE TABLE {s}.pages (
        id BIGINT PRIMARY KEY REFERENCES {s}.files(id) ON DELETE CASCADE,
        path TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        type TEXT,
        domain TEXT,
        folder TEXT NOT NULL,
        status TEXT,
        summary TEXT NOT NULL,
        title_line BIGINT,
        summary_end BIGINT,
        date TEXT,
        created TEXT,
        updated TEXT,
        frontmatter TEXT NOT NULL,
        lines BIGINT NOT NULL
    );
    CREATE INDEX pages_type ON {s}.pages(type);
    CREATE INDEX pages_folder ON {s}.pages(folder);
    CREATE INDEX pages_date ON {s}.pages(date);

    CREATE TABLE {s}.names (
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        norm TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        priority BIGINT NOT NULL
    );
    CREATE INDEX names_norm ON {s}.names(norm);
    CREATE INDEX names_page ON {s}.names(page_id);

    CREATE TABLE {s}.chunks (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        ord BIGINT NOT NULL,
        heading TEXT NOT NULL,
        start_line BIGINT NOT NULL,
        end_line BIGINT NOT NULL,
        words BIGINT NOT NULL
    );
    CREATE INDEX chunks_page ON {s}.chunks(page_id);

    -- rowid = chunks.id (as SQLite's FTS5 table is addressed). tsv: title A, heading B, body C
    -- (stemmed), CJK bigrams D (as written).
    CREATE TABLE {s}.chunks_fts (
        rowid BIGINT PRIMARY KEY,
        title TEXT,
        heading TEXT,
        body TEXT,
        cjk TEXT,
        tsv tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                  {s}.kenning_fold(COALESCE(title, ''))), 'A')
            || setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                     {s}.kenning_fold(COALESCE(heading, ''))), 'B')
            || setweight(to_tsvector('{s}.kenning_fts'::regconfig,
                                     {s}.kenning_fold(COALESCE(body, ''))), 'C')
            || setweight(to_tsvector('pg_catalog.simple'::regconfig, COALESCE(cjk, '')), 'D')
        ) STORED
    );
    CREATE INDEX chunks_fts_tsv ON {s}.chunks_fts USING gin (tsv);

    CREATE TABLE {s}.links (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        origin_id BIGINT REFERENCES {s}.pages(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        field TEXT,
        line BIGINT,
        rel TEXT NOT NULL,
        src_ref TEXT, src_norm TEXT, src_id BIGINT,
        dst_ref TEXT, dst_norm TEXT, dst_id BIGINT,
        heading TEXT,
        alias TEXT,
        embed BIGINT NOT NULL DEFAULT 0,
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
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line BIGINT NOT NULL,
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
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line BIGINT NOT NULL,
        date TEXT NOT NULL,
        text TEXT NOT NULL,
        source TEXT
    );
    CREATE INDEX timeline_page ON {s}.timeline(page_id);
    CREATE INDEX timeline_date ON {s}.timeline(date);

    CREATE TABLE {s}.retained (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        line BIGINT NOT NULL,
        kind TEXT NOT NULL,
        entities TEXT NOT NULL,
        confidence DOUBLE PRECISION,
        text TEXT NOT NULL,
        date TEXT
    );
    CREATE INDEX retained_page ON {s}.retained(page_id);

    CREATE TABLE {s}.problems (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        file_id BIGINT NOT NULL REFERENCES {s}.files(id) ON DELETE CASCADE,
        line BIGINT,
        code TEXT NOT NULL,
        field TEXT,
        message TEXT NOT NULL
    );
    CREATE INDEX problems_file ON {s}.problems(file_id);

    CREATE TABLE {s}.dirty_names (norm TEXT PRIMARY KEY);
    """


def _v2(s: str) -> str:
    """vectors by model and text hash"""
    return f"""
    -- pgvector: any dimension in the column; the HNSW index is built per dimension (a partial
    -- expression index, see PostgresStore.put_vectors), so a model change never mixes vectors.
    CREATE TABLE {s}.embeddings (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim BIGINT NOT NULL,
        vector vector NOT NULL,
        UNIQUE (model, text_hash)
    );
    ALTER TABLE {s}.chunks ADD COLUMN text_hash TEXT;
    CREATE INDEX chunks_text_hash ON {s}.chunks(text_hash);
    ALTER TABLE {s}.pages ADD COLUMN body_start BIGINT NOT NULL DEFAULT 1;
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v3(s: str) -> str:
    """belief time on facts and links"""
    return f"""
    ALTER TABLE {s}.facts ADD COLUMN recorded TEXT;
    ALTER TABLE {s}.facts ADD COLUMN expired TEXT;
    ALTER TABLE {s}.links ADD COLUMN recorded TEXT;
    ALTER TABLE {s}.links ADD COLUMN expired TEXT;
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v4(s: str) -> str:
    """attachments, anchors, link resolution routes"""
    return f"""
    CREATE TABLE {s}.attachments (path TEXT PRIMARY KEY, name TEXT NOT NULL);
    CREATE INDEX attachments_name ON {s}.attachments(name);
    CREATE TABLE {s}.anchors (
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        anchor TEXT NOT NULL
    );
    CREATE INDEX anchors_page ON {s}.anchors(page_id);
    ALTER TABLE {s}.links ADD COLUMN src_key TEXT;
    ALTER TABLE {s}.links ADD COLUMN dst_key TEXT;
    ALTER TABLE {s}.links ADD COLUMN plain BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE {s}.links ADD COLUMN via TEXT;
    ALTER TABLE {s}.links ADD COLUMN file TEXT;
    CREATE INDEX links_src_key ON {s}.links(src_key);
    CREATE INDEX links_dst_key ON {s}.links(dst_key);
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v5(s: str) -> str:
    """tags, summary start, chunk sections"""
    return f"""
    CREATE TABLE {s}.tags (
        page_id BIGINT NOT NULL REFERENCES {s}.pages(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        norm TEXT NOT NULL,
        line BIGINT NOT NULL
    );
    CREATE INDEX tags_norm ON {s}.tags(norm);
    CREATE INDEX tags_page ON {s}.tags(page_id);
    ALTER TABLE {s}.pages ADD COLUMN summary_start BIGINT;
    CREATE TABLE {s}.chunk_sections (
        chunk_id BIGINT PRIMARY KEY REFERENCES {s}.chunks(id) ON DELETE CASCADE,
        sections TEXT NOT NULL
    );
    UPDATE {s}.files SET mtime_ns = -1, hash = '';
    """


def _v6(s: str) -> str:
    """migrations recorded in schema_migrations"""
    # SQLite gained the table in its v6; PostgreSQL has had it from the start. Kept so both
    # backends count their migrations alike.
    return ""


Migration = Callable[[str], str]

MIGRATIONS: list[Migration] = [_v1, _v2, _v3, _v4, _v5, _v6]
SCHEMA_VERSION = len(MIGRATIONS)


def bootstrap_sql(schema: str) -> str:
    """The bookkeeping table every schema has before its first migration."""
    return _bootstrap(schema)


def name(migration: Migration) -> str:
    """A migration's name: the first line of its docstring."""
    return (migration.__doc__ or migration.__name__).strip().splitlines()[0]
