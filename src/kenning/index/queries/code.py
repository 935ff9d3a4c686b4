"""What the code commands read: definitions by name, and the references, calls and callers
between them (tables of :mod:`kenning.index.codegraph`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kenning.index.queries.recall import mount_sql
from kenning.index.store.base import Store

# (symbol id, qualname, name, kind, language, page path, start, end, signature, chunk id)
SYMBOL_COLUMNS = ("s.id, s.qualname, s.name, s.kind, s.language, p.path, s.start_line,"
                  " s.end_line, s.signature, s.chunk_id")


def symbols_named(store: Store, symbol: str, mounts: Sequence[str] | None = None,
                  limit: int = 50) -> list[tuple[Any, ...]]:
    """Definitions a user's ``symbol`` names, best first: the exact qualified name, then a
    qualified name ending in it (``links.resolve``, ``Vault.search``), then the bare name."""
    where, params = mount_sql(mounts)
    dotted = symbol.replace("::", ".")
    exact = store.rows(
        f"SELECT {SYMBOL_COLUMNS} FROM code_symbols s JOIN pages p ON p.id = s.page_id"
        f" WHERE s.qualname = ?{where} ORDER BY p.path, s.start_line", (symbol, *params))
    if exact:
        return exact
    last = dotted.rsplit(".", 1)[-1]
    rows = store.rows(
        f"SELECT {SYMBOL_COLUMNS} FROM code_symbols s JOIN pages p ON p.id = s.page_id"
        f" WHERE s.name = ?{where} ORDER BY p.path, s.start_line LIMIT ?",
        (last, *params, limit * 4))
    if "." in dotted:
        rows = [r for r in rows if r[1].replace("::", ".").endswith("." + dotted)]
    return rows[:limit]


def refs_to(store: Store, symbol_ids: Iterable[int], kinds: Sequence[str] = ()
            ) -> list[tuple[Any, ...]]:
    """(target symbol id, kind, page path, line, text, caller symbol id, caller qualname) of
    every reference that resolved to one of ``symbol_ids``."""
    return _refs(store, symbol_ids, kinds,
                 "SELECT r.dst_id, r.kind, p.path, r.line, r.text, r.src_id, s.qualname"
                 " FROM code_refs r JOIN pages p ON p.id = r.page_id"
                 " LEFT JOIN code_symbols s ON s.id = r.src_id WHERE r.dst_id")


def refs_from(store: Store, symbol_ids: Iterable[int], kinds: Sequence[str] = ("call",)
              ) -> list[tuple[Any, ...]]:
    """(caller symbol id, kind, page path, line, text, target symbol id or None, target
    qualname or None) of every reference made inside ``symbol_ids``, resolved or not."""
    return _refs(store, symbol_ids, kinds,
                 "SELECT r.src_id, r.kind, p.path, r.line, r.text, r.dst_id, r.target"
                 " FROM code_refs r JOIN pages p ON p.id = r.page_id WHERE r.src_id")


def _refs(store: Store, symbol_ids: Iterable[int], kinds: Sequence[str], select: str
          ) -> list[tuple[Any, ...]]:
    """The rows of ``select`` (ending in the symbol column to match) for ``symbol_ids``, of
    these ``kinds`` (any when empty), by path and line."""
    kind_sql = f" AND r.kind IN ({','.join('?' * len(kinds))})" if kinds else ""
    out: list[tuple[Any, ...]] = []
    for part, marks in store.in_batches(sorted(set(symbol_ids))):
        out += store.rows(f"{select} IN ({marks}){kind_sql} ORDER BY p.path, r.line",
                          (*part, *kinds))
    return out


def symbols_by_id(store: Store, ids: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    """Symbol rows (:data:`SYMBOL_COLUMNS`) by id."""
    out: dict[int, tuple[Any, ...]] = {}
    for part, marks in store.in_batches(sorted(set(ids))):
        for row in store.rows(
                f"SELECT {SYMBOL_COLUMNS} FROM code_symbols s JOIN pages p ON p.id = s.page_id"
                f" WHERE s.id IN ({marks})", part):
            out[row[0]] = row
    return out


def symbols_of_chunks(store: Store, chunk_ids: Iterable[int]) -> dict[int, int]:
    """Chunk id -> the symbol whose chunk it is."""
    out: dict[int, int] = {}
    for part, marks in store.in_batches(sorted(set(chunk_ids))):
        out.update({c: s for s, c in store.rows(
            f"SELECT id, chunk_id FROM code_symbols WHERE chunk_id IN ({marks})", part)})
    return out


def members(store: Store, qualnames: Iterable[str]) -> list[int]:
    """Symbol ids of the definitions directly inside these (a class's methods)."""
    out: list[int] = []
    for part, marks in store.in_batches(sorted(set(qualnames))):
        out += [r[0] for r in store.rows(
            f"SELECT id FROM code_symbols WHERE parent IN ({marks})", part)]
    return out


def code_counts(store: Store) -> dict[str, int]:
    """How many symbols and references the code graph holds, and how many resolved."""
    symbols = int(store.scalar("SELECT count(*) FROM code_symbols", default=0))
    rows = dict(store.rows(
        "SELECT CASE WHEN dst_id IS NULL THEN 'unresolved' ELSE 'resolved' END, count(*)"
        " FROM code_refs WHERE kind = 'call' GROUP BY 1"))
    return {"symbols": symbols, "calls_resolved": int(rows.get("resolved", 0)),
            "calls_unresolved": int(rows.get("unresolved", 0))}
