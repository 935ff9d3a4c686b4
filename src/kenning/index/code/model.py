"""The data a parsed source file yields: definitions, imports, references (no database here)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Definition:
    """A module, class, function or method; lines are 1-based and inclusive (decorators included).

    ``bases`` holds, for a class, the candidate qualnames of each base class (most likely first),
    so that a method looked up on a subclass can be found on its bases across files;
    ``returns``, for a function, the candidates of the class its return annotation names.
    """

    qualname: str
    name: str
    kind: str  # 'module' | 'class' | 'function' | 'method'
    start_line: int
    end_line: int
    signature: str
    doc: str
    parent: str | None
    bases: tuple[tuple[str, ...], ...] = ()
    returns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Import:
    """One local binding made by an import: ``alias`` is bound to ``target``.

    ``module`` is the absolute module imported from and ``name`` the imported name (None for
    ``import m``). ``target`` is the absolute qualname the alias stands for. ``scope`` is the
    qualname of the definition holding the import (the module's for a top-level import).
    ``alias == '*'`` is a star import / re-export of everything in ``target``.
    """

    line: int
    module: str
    name: str | None
    alias: str
    target: str = ""
    scope: str = ""


@dataclass(frozen=True)
class Reference:
    """A call or a use of a name; ``candidates`` are absolute qualnames, most likely first.

    A candidate segment ending in ``()`` stands for what calling it gives: an instance for a
    class, the annotated return type for a function (``pkg.make().run``).
    """

    line: int
    kind: str  # 'call' | 'ref'
    scope: str
    text: str
    candidates: tuple[str, ...]


@dataclass
class CodeFile:
    path: str
    language: str
    module: str
    definitions: list[Definition] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def aliases(self) -> list[tuple[str, str]]:
        """``(module.alias, target)`` for every top-level import: what this module re-exports."""
        out = []
        for imp in self.imports:
            if imp.scope == self.module and imp.target:
                out.append((join(self.module, imp.alias, self.language), imp.target))
        return out


def separator(language: str) -> str:
    return "::" if language == "rust" else "."


def join(prefix: str, name: str, language: str = "python") -> str:
    if prefix == "." and language == "go":  # the root package: ".Execute", not "..Execute"
        return f".{name}"
    return f"{prefix}{separator(language)}{name}" if prefix else name
