"""Which pages Kenning created: ``.kenning/created.json``.

Kenning writes only pages it created and the sections it owns on typed pages; a person's own
note is read, never written (see docs/decisions.md). The build and the agent writes record each
page they create here, and follow it through renames, merges and deletions. The file is a hint
that can only ever widen what Kenning leaves alone: when it is lost or damaged, every page reads
as a person's (Kenning's own pages are typed, so agent writes still reach their owned sections,
but nothing is moved or deleted as Kenning's).

Callers hold the vault write lock (:func:`kenning.vault.writes.write_lock`) around a read and
the update that follows it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Container, Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

from kenning.vault.fsio import atomic_write_text
from kenning.vault.layout import STATE_DIR

CREATED = "created.json"
VERSION = 1
# Types of Kenning's own kinds of page (logs, sources, sessions, quick notes): a person's note
# may carry them too (``type: note`` is common), so they do not make a page one Kenning keeps.
KENNING_KINDS = frozenset({"daily", "source", "session", "note"})


def may_write(path: str, entity_type: str | None, created: Container[str] | None) -> bool:
    """Whether Kenning may write the page at ``path``: it created it (``created``, the registry;
    None counts every page), or the page is a typed entity page in Kenning's format
    (``entity_type``, the folded frontmatter ``type:``, not one of :data:`KENNING_KINDS`), whose
    owned sections Kenning edits. Any other note is a person's: read, never written."""
    if created is None or path in created:
        return True
    return entity_type is not None and entity_type not in KENNING_KINDS


def read_created(root: Path) -> dict[str, dict[str, Any]]:
    """Page path → ``{"by": what created it, "on": day}``; empty when missing or unreadable."""
    try:
        return parse_created((root / STATE_DIR / CREATED).read_text(encoding="utf-8"))
    except OSError:
        return {}


def parse_created(text: str | None) -> dict[str, dict[str, Any]]:
    """The registry held by ``text`` (the file's content); empty when it is not one."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(pages, dict):
        return {}
    return {str(k): dict(v) if isinstance(v, dict) else {} for k, v in pages.items()}


def render_created(pages: dict[str, dict[str, Any]]) -> str:
    """The registry file's text for ``pages``."""
    return json.dumps({"version": VERSION, "pages": dict(sorted(pages.items()))},
                      ensure_ascii=False, indent=1) + "\n"


def update_created(root: Path, *, add: dict[str, str] | None = None,
                   moved: Iterable[tuple[str, str]] = (), removed: Iterable[str] = (),
                   day: str = "",
                   intend: Callable[[Mapping[str, str | None]], None] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """Record pages created (``add``: path → what created it), moved (old → new; a page that
    was Kenning's stays Kenning's) and removed; returns the new registry. Writes only on a
    change. ``day`` (default today) is when a page was created."""
    change = created_change(root, add=add, moved=moved, removed=removed, day=day)
    if change is not None:
        if intend is not None:  # the build's journal (kenning.builder.journal)
            intend({change[0]: change[1]})
        atomic_write_text(root / change[0], change[1])
        return json.loads(change[1])["pages"]
    return read_created(root)


def created_change(root: Path, *, add: dict[str, str] | None = None,
                   moved: Iterable[tuple[str, str]] = (), removed: Iterable[str] = (),
                   day: str = "") -> tuple[str, str] | None:
    """(vault path, new text) of the registry after :func:`update_created`'s change, or None
    when nothing changes: for a writer that saves it in the same batch as the pages."""
    day = day or os.environ.get("KENNING_TODAY") or date.today().isoformat()
    before = read_created(root)
    pages = {k: dict(v) for k, v in before.items()}
    for old, new in moved:
        entry = pages.pop(old, None)
        if entry is not None and old != new:
            pages.setdefault(new, entry)
        elif entry is not None:
            pages[old] = entry
    for path in removed:
        pages.pop(path, None)
    for path, by in (add or {}).items():
        pages.setdefault(path, {"by": by, "on": day})
    if pages == before:
        return None
    return f"{STATE_DIR}/{CREATED}", render_created(pages)
