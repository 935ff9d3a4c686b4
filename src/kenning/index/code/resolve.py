"""Cross-file resolution: which definition a reference's candidates name (in memory, no SQL).

A :class:`SymbolTable` holds every definition by qualname and every module-level import as an
alias (``pkg.X`` → ``pkg.sub.X``: a module re-exports what it imports). ``resolve`` takes a
reference's candidates in order and returns the first that names a definition, directly or by
following aliases, star re-exports and class bases a few hops. It never matches bare names
across files: a candidate is an absolute qualname worked out from the referencing file's imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kenning.index.code.model import CodeFile, Definition, Reference

MAX_HOPS = 6
_SEP = re.compile(r"::|\.")


def _prefixes(name: str) -> list[tuple[str, str, str]]:
    """``(prefix, separator, rest)`` at every separator, longest prefix first."""
    out = []
    for match in _SEP.finditer(name):
        out.append((name[: match.start()], match.group(), name[match.end():]))
    return out[::-1]


@dataclass
class _Provided:
    definitions: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)


class SymbolTable:
    """Definitions and import aliases of a set of files; add and remove files one at a time."""

    def __init__(self) -> None:
        self._defs: dict[str, list[tuple[str, Definition]]] = {}
        self._aliases: dict[str, list[tuple[str, str]]] = {}
        self._by_path: dict[str, _Provided] = {}
        self._names: dict[str, list[str]] | None = None  # last name → qualnames (for find)

    # -- building

    @classmethod
    def build(cls, files: Iterable[CodeFile]) -> SymbolTable:
        table = cls()
        for code_file in files:
            table.add(code_file)
        return table

    @classmethod
    def from_parts(cls, definitions: Iterable[tuple[str, Definition]],
                   aliases: Iterable[tuple[str, str, str]]) -> SymbolTable:
        """From stored rows: ``(path, Definition)`` and ``(path, alias key, target)``."""
        table = cls()
        for path, definition in definitions:
            table._add_definition(path, definition)
        for path, key, target in aliases:
            table._add_alias(path, key, target)
        return table

    def add(self, code_file: CodeFile) -> None:
        """Add (or replace) one file's definitions and aliases."""
        self.remove(code_file.path)
        self._by_path[code_file.path] = _Provided()
        for definition in code_file.definitions:
            self._add_definition(code_file.path, definition)
        for key, target in code_file.aliases():
            self._add_alias(code_file.path, key, target)

    def remove(self, path: str) -> set[str]:
        """Forget one file; returns the qualnames and alias keys it provided."""
        provided = self._by_path.pop(path, None)
        if provided is None:
            return set()
        for qual in provided.definitions:
            rows = [row for row in self._defs.get(qual, []) if row[0] != path]
            if rows:
                self._defs[qual] = rows
            else:
                self._defs.pop(qual, None)
        for key in provided.aliases:
            rows2 = [row for row in self._aliases.get(key, []) if row[0] != path]
            if rows2:
                self._aliases[key] = rows2
            else:
                self._aliases.pop(key, None)
        return set(provided.definitions) | set(provided.aliases)

    def _add_definition(self, path: str, definition: Definition) -> None:
        self._names = None
        self._defs.setdefault(definition.qualname, []).append((path, definition))
        self._by_path.setdefault(path, _Provided()).definitions.append(definition.qualname)

    def _add_alias(self, path: str, key: str, target: str) -> None:
        if key == target:
            return
        self._aliases.setdefault(key, []).append((path, target))
        self._by_path.setdefault(path, _Provided()).aliases.append(key)

    # -- queries

    def provides(self, path: str) -> set[str]:
        provided = self._by_path.get(path)
        if provided is None:
            return set()
        return set(provided.definitions) | set(provided.aliases)

    def aliases(self) -> list[tuple[str, str, str]]:
        """Every alias as ``(path, key, target)`` (what :meth:`from_parts` takes back)."""
        return [(path, key, target) for key, rows in self._aliases.items()
                for path, target in rows]

    def locate(self, qualname: str) -> list[tuple[str, Definition]]:
        """Where a qualname is defined: ``(path, Definition)`` rows (several if redefined)."""
        return list(self._defs.get(qualname, []))

    def find(self, symbol: str) -> list[str]:
        """Qualnames a person's symbol names: itself if defined (or an alias of a definition),
        else every definition whose qualname ends with it at a name boundary
        (``links.resolve`` → ``kenning.index.links.resolve``), sorted. For notes and commands;
        reference resolution never uses it."""
        symbol = symbol.strip().removesuffix("()")
        if not symbol:
            return []
        exact = self.resolve_name(symbol)
        if exact is not None:
            return [exact]
        last = _SEP.split(symbol)[-1]
        if self._names is None:
            self._names = {}
            for qual in self._defs:
                self._names.setdefault(_SEP.split(qual)[-1], []).append(qual)
        out = []
        for qual in self._names.get(last, []):
            if qual not in self._defs:
                continue
            head = qual[: len(qual) - len(symbol)]
            if qual.endswith(symbol) and (not head or head.endswith((".", "::", "/"))):
                out.append(qual)
        return sorted(out)

    def __contains__(self, qualname: str) -> bool:
        return qualname in self._defs

    def __len__(self) -> int:
        return len(self._defs)

    def resolve(self, ref: Reference) -> str | None:
        """The qualname of the definition a reference names, or None (never a guess).

        A call never resolves to a module (a CommonJS ``module.exports = fn`` is not followed:
        calling what ``require`` gave stays unresolved rather than naming the file)."""
        for candidate in ref.candidates:
            found = self.resolve_name(candidate)
            if found is not None:
                if ref.kind == "call" and self._defs[found][0][1].kind == "module":
                    continue
                return found
        return None

    def resolve_definition(self, ref: Reference, path: str) -> tuple[str, Definition] | None:
        """The ``(path, Definition)`` a reference made in file ``path`` names, or None.

        When the qualname is defined more than once (two top-level folders without
        ``__init__.py`` both holding ``conftest.py``; a redefinition in one file), the row in the
        same file wins, then the one sharing the longest folder prefix with ``path``, then the
        first by path: deterministic."""
        qual = self.resolve(ref)
        if qual is None:
            return None
        rows = self._defs[qual]
        if len(rows) == 1:
            return rows[0]
        parts = path.split("/")

        def closeness(row: tuple[str, Definition]) -> tuple[int, int, str, int]:
            other = row[0].split("/")
            shared = 0
            for a, b in zip(parts[:-1], other[:-1], strict=False):
                if a != b:
                    break
                shared += 1
            return (row[0] != path, -shared, row[0], row[1].start_line)

        return min(rows, key=closeness)

    def resolve_name(self, name: str, hops: int = 0) -> str | None:
        if name in self._defs:
            return name
        if hops >= MAX_HOPS:
            return None
        for _path, target in self._aliases.get(name, [])[:1]:
            found = self.resolve_name(target, hops + 1)
            if found is not None:
                return found
        for prefix, sep, rest in _prefixes(name):
            if prefix.endswith("()"):  # what a call gives: an instance, or the return type
                made = self.resolve_name(prefix[:-2], hops + 1)
                rows = self._defs.get(made, []) if made else []
                if rows and rows[0][1].kind == "class":
                    return self.resolve_name(f"{made}{sep}{rest}", hops + 1)
                for cand in rows[0][1].returns if rows else ():
                    found = self.resolve_name(f"{cand}{sep}{rest}", hops + 1)
                    if found is not None:
                        return found
                return None
            for _path, target in self._aliases.get(prefix, [])[:1]:
                found = self.resolve_name(f"{target}{sep}{rest}", hops + 1)
                if found is not None:
                    return found
            if sep in rest or ("." in rest and sep == "::"):
                continue
            for _path, star in self._aliases.get(f"{prefix}{sep}*", []):
                found = self.resolve_name(f"{star}{sep}{rest}", hops + 1)
                if found is not None:
                    return found
            rows = self._defs.get(prefix)
            if rows:
                definition = rows[0][1]
                if definition.kind == "class":
                    for base in definition.bases:
                        for cand in base:
                            found = self.resolve_name(f"{cand}{sep}{rest}", hops + 1)
                            if found is not None:
                                return found
                            if self.resolve_name(cand, hops + 1) is not None:
                                break
            elif f"{prefix}/index" in self._defs:  # JS/TS: ./lib is lib/index
                found = self.resolve_name(f"{prefix}/index{sep}{rest}", hops + 1)
                if found is not None:
                    return found
        return None
