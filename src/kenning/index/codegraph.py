"""Code in the index: a source file's page, one chunk per definition, and the code graph.

The parse is :mod:`kenning.index.code` (tree-sitter, no database); this module stores what it
yields and resolves references. The code graph is kept apart from the typed entity links: its own
tables (``code_symbols``, ``code_aliases``, ``code_refs``, ``code_wanted``), a different nature
(what calls and imports what, not who works where).

Resolution is incremental. A changed file's references are resolved afresh; references elsewhere
that pointed at its old definitions, or that were unresolved and name one of its new definitions
or re-exports (``code_wanted``), are re-resolved; nothing else is touched. Resolution uses the
same :class:`~kenning.index.code.resolve.SymbolTable` the call-graph evaluation measures, built
from the stored definitions and re-exports of the mount (a repository's names never resolve into
another mount).
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


def write_code(db: Store, page_id: int, code: CodeFile, lines: Sequence[str]) -> set[str]:
    """Store a parsed source file's chunks, symbols, re-exports and references for page
    ``page_id`` (its old rows are gone). Returns the qualified names it defines or re-exports."""
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
            " start_line, end_line, signature, parent, bases) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (page_id, chunk_of.get(d.qualname), d.qualname, d.name, d.kind, code.language,
             d.start_line, d.end_line, d.signature, d.parent,
             json.dumps([list(b) for b in d.bases]) if d.bases else None)))
    aliases = code.aliases()
    if aliases:
        lines_of = {f"{imp.alias}": imp.line for imp in code.imports}
        db.many("INSERT INTO code_aliases(page_id, qualname, target, line) VALUES (?,?,?,?)",
                [(page_id, q, t, lines_of.get(q.rsplit(".", 1)[-1], 0)) for q, t in aliases])
    for ref in code.references:
        src = symbol_ids.get(ref.scope) or symbol_ids.get(code.module)
        ref_id = db.insert(
            "INSERT INTO code_refs(page_id, src_id, kind, line, text, candidates)"
            " VALUES (?,?,?,?,?,?)",
            (page_id, src, ref.kind, ref.line, ref.text, json.dumps(list(ref.candidates))))
        if ref.candidates:
            db.many("INSERT INTO code_wanted(ref_id, qualname) VALUES (?, ?)",
                    [(ref_id, c) for c in dict.fromkeys(ref.candidates)])
    return set(symbol_ids) | {q for q, _ in aliases}


def drop_code(db: Store, page_id: int) -> set[str]:
    """Forget a source file's code graph (before it is re-written or deleted). References
    elsewhere that resolved into it become unresolved, to be resolved again; returns the
    qualified names it had, which references may want."""
    names = {r[0] for r in db.rows("SELECT qualname FROM code_symbols WHERE page_id = ?",
                                   (page_id,))}
    names |= {r[0] for r in db.rows("SELECT qualname FROM code_aliases WHERE page_id = ?",
                                    (page_id,))}
    db.run("UPDATE code_refs SET dst_id = NULL, target = NULL WHERE dst_id IN"
           " (SELECT id FROM code_symbols WHERE page_id = ?) AND page_id != ?",
           (page_id, page_id))
    db.run("DELETE FROM code_wanted WHERE ref_id IN (SELECT id FROM code_refs WHERE page_id = ?)",
           (page_id,))
    db.run("DELETE FROM code_refs WHERE page_id = ?", (page_id,))
    db.run("DELETE FROM code_aliases WHERE page_id = ?", (page_id,))
    db.run("DELETE FROM code_symbols WHERE page_id = ?", (page_id,))
    return names


def resolve_code(db: Store, changed: Iterable[int], names: Iterable[str]) -> dict[str, int]:
    """Resolve the references that may have changed: those of the ``changed`` pages, those left
    unresolved, pointing at nothing, that want one of ``names`` (defined, re-exported or dropped
    this run), and those that lost their target. Returns counts resolved/unresolved."""
    changed = sorted(set(changed))
    wanted = sorted(_reexported_as(db, set(names)))
    todo: set[int] = set()
    for part, marks in db.in_batches(changed):
        todo |= {r[0] for r in db.rows("SELECT id FROM code_refs WHERE kind != 'mention'"
                                       f" AND page_id IN ({marks})",
                                       part)}
    for part, marks in db.in_batches(wanted):
        todo |= {r[0] for r in db.rows(
            "SELECT w.ref_id FROM code_wanted w JOIN code_refs r ON r.id = w.ref_id"
            " WHERE r.dst_id IS NULL AND r.kind != 'mention'"
            f" AND w.qualname IN ({marks})", part)}
    if not todo:
        return {"resolved": 0, "unresolved": 0}
    rows = []
    for part, marks in db.in_batches(sorted(todo)):
        rows += db.rows(
            "SELECT r.id, r.line, r.kind, r.text, r.candidates, p.mount, s.qualname"
            " FROM code_refs r JOIN pages p ON p.id = r.page_id"
            f" LEFT JOIN code_symbols s ON s.id = r.src_id WHERE r.id IN ({marks})", part)
    tables: dict[str, Any] = {}
    updates: list[tuple[Any, ...]] = []
    counts = {"resolved": 0, "unresolved": 0}
    for ref_id, line, kind, text, candidates, mount, scope in rows:
        table = tables.get(mount)
        if table is None:
            table = tables[mount] = symbol_table(db, mount)
        target, dst = table_lookup(table, line, kind, text, json.loads(candidates), scope or "")
        counts["resolved" if dst else "unresolved"] += 1
        updates.append((target, dst, ref_id))
    db.many("UPDATE code_refs SET target = ?, dst_id = ? WHERE id = ?", updates)
    return counts


ALIAS_HOPS = 4  # as far as resolution follows re-exports


def _reexported_as(db: Store, names: set[str]) -> set[str]:
    """``names`` and every name they are re-exported as (``pkg.f`` for ``pkg.core.f`` when
    ``pkg/__init__`` imports it; ``x.f`` when a module binds ``x`` to ``pkg.core``), so a
    reference that reaches a changed definition through an import is resolved again too."""
    seen, frontier = set(names), set(names)
    for _ in range(ALIAS_HOPS):
        prefixes = {n[:i] for n in frontier for i, ch in enumerate(n) if ch in ".:"}
        found: set[str] = set()
        for part, marks in db.in_batches(sorted(frontier | prefixes)):
            for key, target in db.rows(
                    f"SELECT qualname, target FROM code_aliases WHERE target IN ({marks})",
                    part):
                for name in frontier:
                    if name == target:
                        found.add(key)
                    elif name.startswith(target) and name[len(target)] in ".:":
                        found.add(key + name[len(target):])
        frontier = found - seen
        seen |= frontier
        if not frontier:
            break
    return seen


class _Table:
    """A mount's symbol table (:class:`SymbolTable`) and the symbol id of each qualified name."""

    def __init__(self, table: Any, ids: dict[str, int]) -> None:
        self.table, self.ids = table, ids


def symbol_table(db: Store, mount: str) -> _Table:
    """The resolver over every definition and re-export stored for ``mount``."""
    from kenning.index.code.model import Definition
    from kenning.index.code.resolve import SymbolTable

    definitions: list[tuple[str, Definition]] = []
    ids: dict[str, int] = {}
    for (page_id, sid, qualname, name, kind, start, end, signature, parent, bases) in db.rows(
            "SELECT s.page_id, s.id, s.qualname, s.name, s.kind, s.start_line, s.end_line,"
            " s.signature, s.parent, s.bases FROM code_symbols s"
            " JOIN pages p ON p.id = s.page_id WHERE p.mount = ? ORDER BY s.id", (mount,)):
        definitions.append((str(page_id), Definition(
            qualname, name, kind, start, end, signature, "", parent,
            tuple(tuple(b) for b in json.loads(bases)) if bases else ())))
        ids.setdefault(qualname, sid)
    aliases = [(str(page_id), key, target) for page_id, key, target in db.rows(
        "SELECT a.page_id, a.qualname, a.target FROM code_aliases a"
        " JOIN pages p ON p.id = a.page_id WHERE p.mount = ?", (mount,))]
    return _Table(SymbolTable.from_parts(definitions, aliases), ids)


def table_lookup(table: _Table, line: int, kind: str, text: str, candidates: list[str],
                 scope: str) -> tuple[str | None, int | None]:
    """(qualified name, symbol id) a stored reference resolves to, or (None, None)."""
    from kenning.index.code.model import Reference

    target = table.table.resolve(Reference(line, kind, scope, text, tuple(candidates)))
    if target is None:
        return None, None
    return target, table.ids.get(target)


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
    """Store a note's code mentions as references (``kind`` mention, no enclosing definition),
    resolved like calls but by name: a definition whose qualified name is, or ends with, it."""
    for line, name in mentions:
        ref_id = db.insert(
            "INSERT INTO code_refs(page_id, src_id, kind, line, text, candidates)"
            " VALUES (?, NULL, 'mention', ?, ?, ?)", (page_id, line, name, json.dumps([name])))
        db.run("INSERT INTO code_wanted(ref_id, qualname) VALUES (?, ?)",
               (ref_id, name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]))


def resolve_mentions(db: Store, names: Iterable[str] = (), *, pages: Iterable[int] = ()) -> int:
    """Resolve notes' code mentions of these definition names (or all on ``pages``): to the one
    definition named so (its last part, then the whole dotted name deciding among several);
    a name several definitions share, and none of them matches in full, stays unresolved."""
    short = sorted({n.rsplit(".", 1)[-1].rsplit("::", 1)[-1] for n in names})
    todo: dict[int, str] = {}
    for part, marks in db.in_batches(short):
        todo.update({r[0]: r[1] for r in db.rows(
            "SELECT r.id, r.text FROM code_refs r JOIN code_wanted w ON w.ref_id = r.id"
            f" WHERE r.kind = 'mention' AND w.qualname IN ({marks})", part)})
    for part, marks in db.in_batches(sorted(set(pages))):
        todo.update({r[0]: r[1] for r in db.rows(
            f"SELECT id, text FROM code_refs WHERE kind = 'mention' AND page_id IN ({marks})",
            part)})
    if not todo:
        return 0
    wanted = sorted({t.rsplit(".", 1)[-1].rsplit("::", 1)[-1] for t in todo.values()})
    found: dict[str, list[tuple[int, str]]] = {}
    for part, marks in db.in_batches(wanted):
        for sid, name, qualname in db.rows(
                f"SELECT id, name, qualname FROM code_symbols WHERE name IN ({marks})"
                " AND kind != 'module'", part):
            found.setdefault(name, []).append((sid, qualname))
    updates, resolved = [], 0
    for ref_id, text in todo.items():
        dotted = text.replace("::", ".")
        pool = found.get(dotted.rsplit(".", 1)[-1], [])
        if len(pool) > 1:
            pool = [(s, q) for s, q in pool if q.replace("::", ".").endswith(dotted)]
        hit = pool[0] if len(pool) == 1 else None
        resolved += hit is not None
        updates.append((hit[1] if hit else None, hit[0] if hit else None, ref_id))
    db.many("UPDATE code_refs SET target = ?, dst_id = ? WHERE id = ?", updates)
    return resolved


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
