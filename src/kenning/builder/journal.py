"""The build's undo journal: a killed ``kenning build`` is rolled back whole by the next one.

A build writes pages batch by batch (each batch all-or-nothing through
:func:`kenning.vault.writes.write_files`), then its state, mention log and page registry. Those
writes are one unit: before the build changes any file it records, in
``.kenning/build/journal.jsonl``, what the file held before the build first touched it and a hash
of what the build is about to write (fsynced before the write). A build that ends removes the
journal: that is its commit. A journal found by the next build (or by ``merge``/``split``) means
the last build was killed; it is rolled back first, so what follows is exactly the build a clean
run would have done, from the same pages and state (see docs/decisions.md).

Rolling back restores each file the build touched only if it still holds what the build wrote
(or what it held before): a file someone else changed after the build wrote it (an agent's
``record`` between two batches) is kept as it is, with a warning. The page registry
(``.kenning/created.json``, which agent writes also update) is rolled back entry by entry for the
pages restored. The rollback itself goes through ``write_files``, so a kill during it is finished
by the next writer and the journal, still there, is rolled back again (a no-op by then).

``.kenning/build/build.lock`` (flock, held for the whole build) keeps two builds apart and tells
``doctor`` a build that is running from one that was interrupted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.errors import KenningError, UnsafePath
from kenning.vault.fsio import (
    acquire_flock,
    atomic_write_bytes,
    atomic_write_text,
    fault_point,
    flock_held,
    fsync_dir,
    resolve_own,
)
from kenning.vault.layout import STATE_DIR

JOURNAL = "journal.jsonl"
BUILD_LOCK = "build.lock"
CREATED = f"{STATE_DIR}/created.json"
BUILD_WAIT = 5.0  # seconds a build, merge or split waits for a build that is running


class BuildBusy(KenningError):
    """Another build holds the build lock."""


def _dir(root: Path) -> Path:
    return root / STATE_DIR / "build"


def journal_path(root: Path) -> Path:
    """Where the journal of the build in progress (or of an interrupted one) is."""
    return _dir(root) / JOURNAL


def _digest(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _read(root: Path, rel: str) -> str | None:
    try:
        return resolve_own(root, rel).read_bytes().decode("utf-8", "surrogateescape")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


@dataclass
class Journal:
    """The open journal of the build in progress: call :meth:`record` before every write."""

    root: Path
    before: dict[str, str | None] = field(default_factory=dict)

    def record(self, changes: Mapping[str, str | None]) -> None:
        """Save the pre-image of each file not touched yet and the hash of what is about to be
        written (None: removed); durable before the caller writes."""
        lines = []
        for rel, after in changes.items():
            entry: dict[str, Any] = {"path": rel, "after": _digest(after)}
            if rel not in self.before:
                self.before[rel] = entry["before"] = _read(self.root, rel)
                entry["first"] = True
            lines.append(json.dumps(entry) + "\n")  # ensure_ascii: lone surrogates survive
        if not lines:
            return
        with open(journal_path(self.root), "a", encoding="utf-8") as fh:
            fh.write("".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        fault_point()

    def finish(self) -> None:
        """The build is complete: drop the journal (the commit point)."""
        journal_path(self.root).unlink(missing_ok=True)
        fsync_dir(_dir(self.root))


def lock_held(root: Path) -> bool:
    """True while some process holds the build lock (a build is running)."""
    return flock_held(_dir(root) / BUILD_LOCK)


def interrupted(root: Path) -> bool:
    """True when a build was killed before it finished (its journal is left, nobody runs)."""
    return journal_path(root).exists() and not lock_held(root)


@contextlib.contextmanager
def build_lock(root: Path, *, wait: float = BUILD_WAIT) -> Iterator[list[str]]:
    """Hold the build lock, an interrupted build rolled back first; yields its warnings."""
    path = _dir(root) / BUILD_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        acquire_flock(fd, wait, lambda: BuildBusy(
            f"another kenning build is running in this vault ({path}); nothing written"))
        yield rollback(root)
    finally:
        os.close(fd)


def begin(root: Path) -> Journal:
    """Start the journal of a new build (call it holding :func:`build_lock`)."""
    atomic_write_text(journal_path(root), json.dumps({"build": {"pid": os.getpid()}}) + "\n")
    return Journal(root)


def _entries(root: Path) -> list[dict[str, Any]] | None:
    try:
        text = journal_path(root).read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill: its write never started (fsync came first)
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        before = entry.get("before")
        if before is not None and not isinstance(before, str):
            continue
        try:
            resolve_own(root, entry["path"])
        except UnsafePath:
            continue  # not a journal Kenning wrote: never a path outside the vault
        out.append(entry)
    return out


def rollback(root: Path) -> list[str]:
    """Undo what an interrupted build wrote (see the module docstring); returns warnings."""
    from kenning.vault.writes import write_files, write_lock

    entries = _entries(root)
    if entries is None:
        return []
    before: dict[str, str | None] = {}
    afters: dict[str, set[str | None]] = {}
    for e in entries:
        rel = e["path"]
        if e.get("first") and rel not in before:
            before[rel] = e.get("before")
        afters.setdefault(rel, set()).add(e.get("after"))
    warnings: list[str] = []
    with write_lock(root):  # finishes a batch the kill cut, then nobody writes under us
        writes: dict[str, str] = {}
        removals: list[str] = []
        restored: set[str] = set()
        for rel, old in before.items():
            if rel == CREATED:
                continue
            now = _read(root, rel)
            if now == old:
                restored.add(rel)
                continue
            if _digest(now) not in afters[rel]:
                warnings.append(f"{rel}: changed after the interrupted build wrote it; kept as "
                                "it is (the build runs again over it)")
                continue
            restored.add(rel)
            if old is None:
                removals.append(rel)
            else:
                writes[rel] = old
        if CREATED in before:
            text = _created_rolled_back(root, before[CREATED], restored)
            if text is not None:
                writes[CREATED] = text
        # A file that was not UTF-8 goes back byte for byte (the build never writes one).
        raw = {k: v for k, v in writes.items() if _has_surrogates(v)}
        write_files(root, {k: v for k, v in writes.items() if k not in raw}, removals)
        for rel, text in raw.items():
            atomic_write_bytes(resolve_own(root, rel), text.encode("utf-8", "surrogateescape"))
        journal_path(root).unlink(missing_ok=True)
        fsync_dir(_dir(root))
    n = len(writes) + len(removals)
    warnings.insert(0, f"the last build was interrupted; rolled back its changes to {n} "
                    f"file(s) before building again")
    return warnings


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _created_rolled_back(root: Path, old: str | None, restored: set[str]) -> str | None:
    """The page registry with the entries of the restored pages as they were before the build
    (entries the build did not touch, like an agent's, stay)."""
    from kenning.vault.created import parse_created, read_created, render_created

    was = parse_created(old)
    now = read_created(root)
    new = dict(now)
    for rel in restored:
        if rel in was:
            new[rel] = was[rel]
        else:
            new.pop(rel, None)
    if new == now:
        return None
    return render_created(new)
