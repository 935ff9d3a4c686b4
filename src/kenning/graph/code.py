"""The code graph's answers: where a symbol is defined, what refers to it, its callers and
callees to a depth, and the definitions structurally near it (for ``search --near-symbol``).

Every answer cites ``path#Lstart-Lend`` (a definition) or ``path#Lline`` (a call site), like
every citation in Kenning. The SQL lives in :mod:`kenning.index.queries.code`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.errors import PageNotFound
from kenning.index.queries import code as q
from kenning.index.store import Store

MAX_DEPTH = 5


def _symbol(row: tuple[Any, ...]) -> dict[str, Any]:
    sid, qualname, name, kind, language, path, start, end, signature, _chunk = row
    return {"id": sid, "qualname": qualname, "name": name, "kind": kind, "language": language,
            "path": path, "lines": [start, end], "citation": f"{path}#L{start}-L{end}",
            "signature": signature}


def find_symbols(store: Store, symbol: str, mounts: Sequence[str] | None = None
                 ) -> list[dict[str, Any]]:
    """The definitions ``symbol`` names (qualified, dotted suffix or bare name); raises
    PageNotFound when none does."""
    rows = q.symbols_named(store, symbol.strip(), mounts)
    if not rows:
        raise PageNotFound(f"no definition named {symbol!r} in the code graph (mount a "
                           "repository with `kenning mount add NAME PATH --kind code`)")
    return [_symbol(r) for r in rows]


def definitions(store: Store, symbol: str, mounts: Sequence[str] | None = None
                ) -> dict[str, Any]:
    return {"symbol": symbol, "definitions": find_symbols(store, symbol, mounts)}


def references(store: Store, symbol: str, mounts: Sequence[str] | None = None
               ) -> dict[str, Any]:
    """Every resolved call, reference and note mention of the definitions ``symbol`` names."""
    found = find_symbols(store, symbol, mounts)
    by_id = {s["id"]: s for s in found}
    refs = []
    for dst, kind, path, line, text, _src, caller in q.refs_to(store, by_id):
        refs.append({"symbol": by_id[dst]["qualname"], "kind": kind, "path": path,
                     "line": line, "citation": f"{path}#L{line}", "text": text,
                     "in": caller})
    return {"symbol": symbol, "definitions": found, "references": refs}


def callers(store: Store, symbol: str, depth: int = 1, mounts: Sequence[str] | None = None
            ) -> dict[str, Any]:
    """Who calls the definitions ``symbol`` names, and who calls them, to ``depth``."""
    return _walk(store, symbol, depth, mounts, up=True)


def callees(store: Store, symbol: str, depth: int = 1, mounts: Sequence[str] | None = None
            ) -> dict[str, Any]:
    """What the definitions ``symbol`` names call (resolved, or the name as written), to
    ``depth``."""
    return _walk(store, symbol, depth, mounts, up=False)


def _walk(store: Store, symbol: str, depth: int, mounts: Sequence[str] | None, *,
          up: bool) -> dict[str, Any]:
    depth = max(1, min(depth, MAX_DEPTH))
    found = find_symbols(store, symbol, mounts)
    seen = {s["id"] for s in found}
    frontier = set(seen)
    edges: list[dict[str, Any]] = []
    for level in range(1, depth + 1):
        rows = q.refs_to(store, frontier, ("call",)) if up else q.refs_from(store, frontier)
        nxt: set[int] = set()
        ends = [r[5] for r in rows if r[5] is not None]
        symbols = q.symbols_by_id(store, [*ends, *frontier])
        for row in rows:
            here, _kind, path, line, text, other, other_name = row
            edge: dict[str, Any] = {"depth": level, "path": path, "line": line,
                                    "citation": f"{path}#L{line}", "text": text}
            this = symbols.get(here)
            that = symbols.get(other) if other is not None else None
            if up:  # row: callee here, caller other (src)
                edge["callee"] = this[1] if this else None
                edge["caller"] = that[1] if that else other_name
            else:   # row: caller here, callee other (dst)
                edge["caller"] = this[1] if this else None
                edge["callee"] = that[1] if that else (other_name or text)
                edge["resolved"] = that is not None
            edge["definition"] = _symbol(that)["citation"] if that else None
            edges.append(edge)
            if other is not None and other not in seen:
                seen.add(other)
                nxt.add(other)
        frontier = nxt
        if not frontier:
            break
    key = "callers" if up else "callees"
    return {"symbol": symbol, "definitions": found, key: edges}


def near_chunks(store: Store, symbol: str, depth: int = 1,
                mounts: Sequence[str] | None = None) -> dict[int, int]:
    """Chunk id -> graph distance of the definitions structurally near ``symbol``: itself (0),
    its callers and callees, a class's methods, walked ``depth`` steps either way."""
    depth = max(0, min(depth, MAX_DEPTH))
    found = find_symbols(store, symbol, mounts)
    distance = {s["id"]: 0 for s in found}
    frontier = set(distance)
    members = q.members(store, [s["qualname"] for s in found if s["kind"] == "class"])
    for sid in members:
        distance.setdefault(sid, 1)
    for level in range(1, depth + 1):
        rows = [*q.refs_to(store, frontier, ("call", "ref")),
                *q.refs_from(store, frontier, ("call", "ref"))]
        frontier = {r[5] for r in rows if r[5] is not None and r[5] not in distance}
        distance.update(dict.fromkeys(frontier, level))
    rows = q.symbols_by_id(store, distance)
    return {row[9]: distance[sid] for sid, row in rows.items() if row[9] is not None}
