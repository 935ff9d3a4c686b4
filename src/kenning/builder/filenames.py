"""Pages named by their titles: which pages are Kenning's, and moving the ones an older Kenning
named by a slug (``people/sarah-chen.md`` → ``people/Sarah Chen.md``).

An older Kenning named the pages it created by a lower-case slug of the title; a person names a
note by its title, and Obsidian shows the file name. :func:`migrate_names` runs at the start of
every ``kenning build`` (``--dry-run`` shows it): each page Kenning created whose file name is the
old slug form of its title moves to the title's name, every link to it in the vault is rewritten
(:func:`kenning.builder.rename.rewrite_links`; ``sources/`` is append-only and keeps its text), and
the build state, the created-page registry and the manual-link log follow. A second run finds
nothing to move.

Which pages Kenning created (:func:`kenning_pages`): the registry ``.kenning/created.json``
(:mod:`kenning.vault.created`), and for a vault built before the registry existed what the build
recorded itself — pages a mention created in the mention log whose summary the build wrote
(``state.json`` ``pages``), meeting pages still at the path the old build derived from their
source (``meetings/<source file>.md``, citing that source), and decisions and notes the write
journal says an agent created (read until the registry holds a page the build registered). A page
none of these name is a person's and never moves, whatever its name looks like.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kenning.builder.pages import first_h1
from kenning.builder.rename import Target, Targets, _key, rewrite_links, rewrite_text
from kenning.builder.state import BuildState, read_log
from kenning.builder.workspace import Workspace
from kenning.vault import frontmatter as fmod
from kenning.vault.created import read_created
from kenning.vault.layout import (
    STATE_DIR,
    entity_file_name,
    free_path,
    meeting_file_name,
    name_key,
    slug,
)

_CITED_SOURCE = re.compile(r"\[\[(sources/meetings/[^\]#|]+)[#|\]]")
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-(.+)$")


def kenning_pages(root: Path, state: BuildState, ws: Workspace) -> dict[str, str]:
    """Page path → what created it, for every existing page Kenning created (module docstring)."""
    out = {p: str(e.get("by") or "kenning") for p, e in read_created(root).items()}
    if any(by == "build" for by in out.values()):
        return {p: by for p, by in out.items() if ws.exists(p)}  # a build already seeded it
    for row in read_log(root):
        page = row.get("page")
        if row.get("created") and isinstance(page, str) and "summary" in state.pages.get(page, {}):
            out.setdefault(page, "build")
    for source in state.sources:
        if source.startswith("sources/meetings/"):
            page = "meetings/" + source.rsplit("/", 1)[-1]
            text = ws.read(page)
            if text is not None and f"[[{source[:-3]}#" in text and \
                    fmod.read(text).data.get("type") == "meeting":
                out.setdefault(page, "build")
    journal = root / STATE_DIR / "journal.jsonl"
    if journal.exists():
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("op") in ("decide", "note") \
                    and isinstance(entry.get("path"), str):
                out.setdefault(entry["path"], str(entry["op"]))
    return {p: by for p, by in out.items() if ws.exists(p)}


def title_line(text: str) -> str | None:
    """The page's first-line H1 (the title Kenning wrote), None without one."""
    block = fmod.locate(text)
    return first_h1(text, block.body_start if block is not None and block.close_line else 1)


def slug_named(path: str) -> bool:
    """The file name has a slug's shape (lower case, no spaces): only such a page may still
    carry an older Kenning's name. A name a person, or this Kenning, chose is left alone."""
    name = path.rpartition("/")[2]
    stem = name[:-3] if name.endswith(".md") else name
    return stem == slug(stem)


def title_name(path: str, text: str) -> str | None:
    """The file name the page at ``path`` gets now, when its name is the old slug form of its
    title (else None: nothing to move)."""
    title = title_line(text)
    if not title or not slug_named(path):
        return None
    folder, _, name = path.rpartition("/")
    stem = name[:-3] if name.endswith(".md") else name
    if folder == "meetings":
        cited = {m.group(1).rsplit("/", 1)[-1] for m in _CITED_SOURCE.finditer(text)}
        if stem not in cited:
            return None
        day = str(fmod.read(text).data.get("date") or "")[:10] or None
        new = meeting_file_name(day, title)
    elif folder == "notes" and (m := _DATED.match(stem)):
        if not _slug_of(m.group(2), title):
            return None
        new = entity_file_name(f"{m.group(1)} {title}")
    elif _slug_of(stem, title):
        new = entity_file_name(title)
    else:
        return None
    return None if new == name else new


def _slug_of(stem: str, title: str) -> bool:
    """``stem`` is the old slug of ``title``, or it with the old ``-2`` suffix."""
    old = slug(title)
    return stem == old or bool(re.fullmatch(re.escape(old) + r"-\d+", stem))


def migrate_names(ws: Workspace, state: BuildState, pages: dict[str, str]) -> \
        list[tuple[str, str]]:
    """Move each of ``pages`` (Kenning's) that still has its old slug name to its title's name,
    rewriting links; returns (old, new) pairs. Idempotent."""
    moves: list[tuple[str, str]] = []
    targets: list[Target] = []
    taken: dict[str, set[str]] = {}  # folder → name keys of its files, kept as pages move
    for old in sorted(pages):
        if not slug_named(old):
            continue  # named by its title already: nothing to read (most pages, every build)
        text = ws.read(old)
        if text is None:
            continue
        name = title_name(old, text)
        if name is None:
            continue
        folder = old.rsplit("/", 1)[0]
        if folder not in taken:  # read once: a folder of thousands of pages is not listed again
            taken[folder] = {name_key(p) for p in ws.listdir(folder)}
        keys = taken[folder]
        own = name_key(old)
        had = own in keys
        keys.discard(own)  # the page's own name is free for it
        new = free_path(f"{folder}/{name}", keys.__contains__)
        if new == old:
            if had:
                keys.add(own)
            continue
        ws.write(new, text)
        ws.delete(old)
        keys.add(name_key(new))
        moves.append((old, new))
        base = old[:-3]
        new_stem = new.rsplit("/", 1)[-1][:-3]
        # Links by path or file name only: a link by title already means the page.
        targets.append(Target(old, new, new_stem, {_key(old), _key(base),
                                                     _key(base.rsplit("/", 1)[-1])}, "",
                              bare=True))
    if not targets:
        return []
    rewrite_links(ws, targets)
    for old, new in moves:
        if old in state.pages:
            state.pages[new] = state.pages.pop(old)
        state.renamed[old] = new
    prepared = Targets(targets)
    for path, rec in state.pages.items():
        value = rec.get("organization")
        if isinstance(value, str) and "[[" in value:
            rec["organization"] = rewrite_text(value, path, prepared)
    return moves


def follow_manual_links(root: Path, moves: dict[str, str], *, intend: Any = None,
                        store: Any = None) -> None:
    """Point the manual-link log's ends at the pages' new paths (it is the person's data: every
    line is kept, only moved paths change), under the index's writer lock (``store``'s, else
    that of the vault's own index, opened for the moment)."""
    import contextlib

    from kenning.index.indexer import MANUAL_LINKS
    from kenning.index.store import database_url, open_store
    from kenning.vault.layout import load_config

    path = root / STATE_DIR / MANUAL_LINKS
    if not moves or not path.exists():
        return
    with contextlib.ExitStack() as stack:
        if store is None:
            store = stack.enter_context(
                open_store(root, database_url(root, load_config(root).database)))
        stack.enter_context(store.writer_lock(wait=30.0))
        _rewrite_manual_links(root, path, moves, intend)


def _rewrite_manual_links(root: Path, path: Path, moves: dict[str, str], intend: Any) -> None:
    """The manual-link log at ``path`` with moved ends rewritten (the caller holds the lock)."""
    from kenning.vault.fsio import atomic_write_text

    text = manual_links_moved(path, moves)
    if text is not None:
        if intend is not None:  # the build's journal (kenning.builder.journal)
            intend({path.relative_to(root).as_posix(): text})
        atomic_write_text(path, text)


def manual_links_moved(path: Path, moves: dict[str, str]) -> str | None:
    """The text of the manual-link log at ``path`` with the ends in ``moves`` pointed at their
    new paths (every other line as it is), or None when nothing changes or there is no log."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return None
    out, changed = [], False
    for line in lines:
        try:
            entry: Any = json.loads(line) if line.strip() else None
        except ValueError:
            entry = None
        if isinstance(entry, dict) and (entry.get("src") in moves
                                        or entry.get("dst") in moves):
            for key in ("src", "dst"):
                if entry.get(key) in moves:
                    entry[key] = moves[entry[key]]
            line = json.dumps(entry, ensure_ascii=False)
            changed = True
        out.append(line)
    return "\n".join(out) if changed else None
