"""Code in the index: a source file's page, one chunk per definition, and the code graph.

The parse is :mod:`kenning.index.code` (tree-sitter, no database); this module stores what it
yields and resolves references. The code graph is kept apart from the typed entity links: its own
tables (``code_symbols``, ``code_aliases``, ``code_refs``), a different nature
(what calls and imports what, not who works where).

Resolution is per mount and exact: when any source file of a mount changed, every stored
reference of that mount is resolved again with the same
:class:`~kenning.index.code.resolve.SymbolTable` the call-graph evaluation measures, built from
the stored definitions and re-exports, and only the rows whose answer changed are written. A
change that reaches other files through an import chain, a re-export or a return type is never
missed that way; re-resolving ~30,000 references costs about a tenth of a second. A
repository's names never resolve into another mount.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kenning.index.cjk import cjk_column
from kenning.index.links import norm_name
from kenning.index.vectors import MAX_EMBED_CHARS, text_hash
from kenning.vault.mounts import split_mount

if TYPE_CHECKING:
    from kenning.index.code.model import CodeFile, Definition
    from kenning.index.store import Store

CODE_TYPE = "code"  # pages.type of a source file
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def identifier_words(name: str) -> str:
    """``resolveMention`` or ``resolve_mention`` as the words a person searches for."""
    return " ".join(w for w in re.split(r"[\W_]+", _CAMEL.sub(" ", name)) if w).lower()


def code_text(title: str, d: Definition, body: Sequence[str]) -> str:
    """What a definition's chunk is embedded as: where it is, its name as words, its lines (a
    note's evidence filters, for mail and data, do not apply to code)."""
    head = f"{title} — {d.qualname} ({identifier_words(d.name)})" if d.kind != "module" \
        else title
    return f"{head}\n" + "\n".join(body).strip()[:MAX_EMBED_CHARS]


def chunk_ranges(code: CodeFile, total: int) -> list[tuple[Definition, int, int]]:
    """(definition, first line, last line) of each definition's own chunk: a definition's lines
    up to its first nested definition (a class's header, docstring and attributes; a module's
    docstring and imports), so no line is indexed twice; a function holds its whole body."""
    defs = sorted(code.definitions, key=lambda d: (d.start_line, -d.end_line))
    out = []
    for d in defs:
        end = min(d.end_line, total)
        if d.kind in ("module", "class"):
            inner = [c.start_line for c in defs if c is not d and c.parent == d.qualname
                     and d.start_line <= c.start_line <= d.end_line]
            if inner:
                end = min(end, min(inner) - 1)
        if end >= d.start_line:
            out.append((d, d.start_line, end))
    return out


def write_code(db: Store, page_id: int, code: CodeFile, lines: Sequence[str]) -> None:
    """Store a parsed source file's chunks, symbols, re-exports and references for page
    ``page_id`` (its old rows are gone)."""
    title = code.module or code.path
    sections: list[tuple[int, int, Definition]] = []
    texts: list[tuple[int, str, str, str, str]] = []
    for ord_, (d, start, end) in enumerate(chunk_ranges(code, len(lines))):
        body = list(lines[start - 1:end])
        heading = d.qualname
        words = sum(len(line.split()) for line in body)
        chunk_id = db.insert(
            "INSERT INTO chunks(page_id, ord, heading, start_line, end_line, words, text_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (page_id, ord_, heading, start, end, words, text_hash(code_text(title, d, body))))
        sections.append((chunk_id, ord_, d))
        search_title = f"{title} {identifier_words(d.qualname)}"
        text = "\n".join(body)
        texts.append((chunk_id, search_title, heading, text,
                      "\n".join(filter(None, (cjk_column(search_title), cjk_column(text))))))
    if texts:
        db.many("INSERT INTO chunks_fts(rowid, title, heading, body, cjk) VALUES (?, ?, ?, ?, ?)",
                texts)
    chunk_of = {d.qualname: chunk_id for chunk_id, _, d in sections}
    symbol_ids: dict[str, int] = {}
    for d in code.definitions:
        symbol_ids.setdefault(d.qualname, db.insert(
            "INSERT INTO code_symbols(page_id, chunk_id, qualname, name, kind, language,"
            " start_line, end_line, signature, parent, bases, returns)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (page_id, chunk_of.get(d.qualname), d.qualname, d.name, d.kind, code.language,
             d.start_line, d.end_line, d.signature, d.parent,
             json.dumps([list(b) for b in d.bases]) if d.bases else None,
             json.dumps(list(d.returns)) if d.returns else None)))
    aliases = code.aliases()
    if aliases:
        lines_of = {imp.alias: imp.line for imp in code.imports}
        db.many("INSERT INTO code_aliases(page_id, qualname, target, line) VALUES (?,?,?,?)",
                [(page_id, q, t, lines_of.get(q.rsplit(".", 1)[-1], 0)) for q, t in aliases])
    db.many("INSERT INTO code_refs(page_id, src_id, kind, line, text, candidates)"
            " VALUES (?,?,?,?,?,?)",
            [(page_id, symbol_ids.get(ref.scope) or symbol_ids.get(code.module), ref.kind,
              ref.line, ref.text, json.dumps(list(ref.candidates))) for ref in code.references])


def drop_code(db: Store, page_id: int) -> str | None:
    """Forget a page's code graph (before it is re-written or deleted): its definitions, its
    references and its notes' code mentions. References elsewhere that resolved into it are
    unset, to be resolved again; returns the page's mount when it had definitions."""
    row = db.one("SELECT p.mount FROM pages p WHERE p.id = ? AND EXISTS"
                 " (SELECT 1 FROM code_symbols s WHERE s.page_id = p.id)", (page_id,))
    if row is not None:
        db.run("UPDATE code_refs SET dst_id = NULL, target = NULL WHERE dst_id IN"
               " (SELECT id FROM code_symbols WHERE page_id = ?) AND page_id != ?",
               (page_id, page_id))
    db.run("DELETE FROM code_refs WHERE page_id = ?", (page_id,))
    if row is not None:
        db.run("DELETE FROM code_aliases WHERE page_id = ?", (page_id,))
        db.run("DELETE FROM code_symbols WHERE page_id = ?", (page_id,))
    return None if row is None else str(row[0])


Tables = dict[str, tuple[Any, dict[tuple[str, str], int]]]  # mount -> (SymbolTable, symbol ids)


def resolve_code(db: Store, mounts: Iterable[str], tables: Tables | None = None) -> None:
    """Resolve every reference of these mounts again (see the module's doc). ``tables`` keeps
    the symbol tables built, for :func:`resolve_mentions` after it."""
    from kenning.index.code.model import Reference

    for mount in sorted(set(mounts)):
        table, ids = _table(db, mount, tables)
        updates: list[tuple[Any, ...]] = []
        # Many references share their candidates (every `self.run()` of a class): the qualified
        # name they resolve to is computed once; only a name defined twice needs the file.
        names: dict[tuple[str, str], str | None] = {}
        for ref_id, line, kind, text, candidates, path, scope, old in db.rows(
                "SELECT r.id, r.line, r.kind, r.text, r.candidates, p.path, s.qualname, r.dst_id"
                " FROM code_refs r JOIN pages p ON p.id = r.page_id"
                " LEFT JOIN code_symbols s ON s.id = r.src_id"
                " WHERE p.mount = ? AND r.kind != 'mention'", (mount,)):
            dst = target = None
            if candidates != "[]":
                key = (kind, candidates)
                if key not in names:
                    names[key] = table.resolve(
                        Reference(line, kind, "", text, tuple(json.loads(candidates))))
                target = names[key]
            if target is not None:
                places = table.locate(target)
                if len(places) > 1:
                    hit = table.resolve_definition(Reference(
                        line, kind, scope or "", text, tuple(json.loads(candidates))), path)
                    places = [hit] if hit else places
                dst = ids.get((places[0][0], target))
            if dst != old:
                updates.append((target if dst else None, dst, ref_id))
        if updates:
            db.many("UPDATE code_refs SET target = ?, dst_id = ? WHERE id = ?", updates)


def _table(db: Store, mount: str, tables: Tables | None) -> tuple[Any, dict[tuple[str, str], int]]:
    """The mount's symbol table, built once per run when ``tables`` keeps them."""
    if tables is None or mount not in tables:
        built = symbol_table(db, mount)
        if tables is None:
            return built
        tables[mount] = built
    return tables[mount]


def symbol_table(db: Store, mount: str) -> tuple[Any, dict[tuple[str, str], int]]:
    """The resolver over every definition and re-export stored for ``mount``, and the symbol id
    of each (page path, qualified name)."""
    from kenning.index.code.model import Definition
    from kenning.index.code.resolve import SymbolTable

    definitions: list[tuple[str, Definition]] = []
    ids: dict[tuple[str, str], int] = {}
    for (path, sid, qualname, name, kind, start, end, signature, parent, bases,
         returns) in db.rows(
            "SELECT p.path, s.id, s.qualname, s.name, s.kind, s.start_line, s.end_line,"
            " s.signature, s.parent, s.bases, s.returns FROM code_symbols s"
            " JOIN pages p ON p.id = s.page_id WHERE p.mount = ? ORDER BY s.id", (mount,)):
        definitions.append((path, Definition(
            qualname, name, kind, start, end, signature, "", parent,
            tuple(tuple(b) for b in json.loads(bases)) if bases else (),
            tuple(json.loads(returns)) if returns else ())))
        ids.setdefault((path, qualname), sid)
    aliases = db.rows(
        "SELECT p.path, a.qualname, a.target FROM code_aliases a"
        " JOIN pages p ON p.id = a.page_id WHERE p.mount = ?", (mount,))
    return SymbolTable.from_parts(definitions, [tuple(a) for a in aliases]), ids


# -- notes that name code -----------------------------------------------------------------------

# `resolve_mention`, `Vault.search()`, `kenning.index.links.resolve`: an inline code span that
# is an identifier, a dotted name, perhaps called.
_SPAN = re.compile(r"(?<!`)`([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?`")


def code_mentions(text: str, skip: Iterable[tuple[int, int]] = ()) -> list[tuple[int, str]]:
    """(line, name) of every inline code span of a note that may name a definition: snake case,
    camel case or dotted (a plain word in backticks, `json`, is too often not a symbol)."""
    ranges = list(skip)
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if "`" not in line or any(a <= number <= b for a, b in ranges):
            continue
        for match in _SPAN.finditer(line):
            name = match.group(1)
            if "_" in name.strip("_") or "." in name or "::" in name or _CAMEL.search(name):
                out.append((number, name))
    return out


def write_mentions(db: Store, page_id: int, mentions: list[tuple[int, str]]) -> None:
    """Store a note's code mentions as references (``kind`` mention, no enclosing
    definition), resolved by :func:`resolve_mentions`."""
    db.many("INSERT INTO code_refs(page_id, src_id, kind, line, text, candidates)"
            " VALUES (?, NULL, 'mention', ?, ?, '[]')", [(page_id, line, name)
                                                       for line, name in mentions])


def resolve_mentions(db: Store, tables: Tables | None = None) -> None:
    """Resolve every note's code mention: to the one definition the name names (as a person
    writes it: ``resolve_mention``, ``links.resolve``, ``Vault.search``) across the code
    mounts; a name several definitions answer stays unresolved."""
    mounts = [r[0] for r in db.rows(
        "SELECT DISTINCT p.mount FROM code_symbols s JOIN pages p ON p.id = s.page_id")]
    rows = db.rows("SELECT id, text, dst_id FROM code_refs WHERE kind = 'mention'")
    if not rows:
        return
    built = [_table(db, m, tables) for m in mounts]
    updates = []
    for ref_id, text, old in rows:
        found = [(table, ids, q) for table, ids in built for q in table.find(text)]
        dst = target = None
        if len(found) == 1:
            table, ids, target = found[0]
            place = table.locate(target)
            dst = ids.get((place[0][0], target)) if place else None
        if dst != old:
            updates.append((target if dst else None, dst, ref_id))
    if updates:
        db.many("UPDATE code_refs SET target = ?, dst_id = ? WHERE id = ?", updates)


def code_page_names(path: str, module: str) -> list[tuple[str, str, str, int]]:
    """(norm, name, kind, priority) a link may use for a source file: its path and file name
    (as for any file) and its module's qualified name (``[[repo:kenning.index.links]]``)."""
    rel = split_mount(path)[1]
    stem = rel.rsplit("/", 1)[-1]
    # The path with its extension (``repo:pkg/core.py``, as citations show it) and without.
    out = [(norm_name(path), path, "path", 1),
           (norm_name(path.rsplit(".", 1)[0]), path.rsplit(".", 1)[0], "path", 1),
           (norm_name(stem.rsplit(".", 1)[0]), stem.rsplit(".", 1)[0], "stem", 2)]
    if module:
        out.append((norm_name(module), module, "title", 3))
    return out
