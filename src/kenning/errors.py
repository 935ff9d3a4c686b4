"""Errors that carry what a person needs to fix them: the file, the line, the field."""

from __future__ import annotations


class KenningError(Exception):
    """Base class: a one-line, user-facing message."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self.where() + message)

    def where(self) -> str:
        """``path:line: `` prefix (empty when unknown)."""
        if self.path and self.line:
            return f"{self.path}:{self.line}: "
        if self.path:
            return f"{self.path}: "
        return ""


class VocabularyError(KenningError, ValueError):
    """A type, domain or relation outside the fixed vocabulary."""

    def __init__(self, message: str, *, field: str | None = None, value: str | None = None,
                 path: str | None = None, line: int | None = None) -> None:
        self.value = value
        super().__init__(message, path=path, line=line, field=field)


class PageNotFound(KenningError, LookupError):
    """No page matches a title, alias or path."""


class AmbiguousPage(KenningError, LookupError):
    """More than one page matches a title or alias."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        self.candidates = candidates
        super().__init__(message)


class IndexMissing(KenningError):
    """A query on a vault that was never indexed."""


class IndexBusy(KenningError):
    """Another process holds the index write lock."""


class NotAVault(KenningError):
    """A path that is not a Kenning (or Obsidian) vault."""


class UnsafePath(KenningError, ValueError):
    """A path that leads outside the vault."""
