"""Changing several vault files as one: the vault write lock and journaled batches.

Every writer of pages (agent memory writes, the build) holds ``.kenning/write.lock`` (flock)
around its read-modify-write, so two writers never lose each other's edits; the kernel drops the
lock when its holder dies. A change to several files goes through :func:`write_files`: the new
contents are first saved to a journal (``.kenning/pending-writes.json``, written atomically),
then each file is written atomically, then the journal is removed. A crash in between leaves the
journal, and the next holder of the lock finishes the batch (:func:`recover`, also run by
``Vault.open``), so a batch is all or nothing across files, not only within one, and removes the
temp files the crash left beside its targets.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from kenning.errors import KenningError
from kenning.vault import provenance
from kenning.vault.fsio import acquire_flock, atomic_write_text, resolve_own
from kenning.vault.layout import STATE_DIR

WRITE_LOCK = "write.lock"
JOURNAL = "pending-writes.json"
LOCK_WAIT = 60.0  # seconds a writer waits for another writer


class WriteBusy(KenningError):
    """Another process held the vault write lock for too long."""


@dataclass
class Landed:
    """What the operation running in a context wrote so far (``paths``, vault-relative) and
    the warning it gave when a step after those writes failed."""

    paths: list[str] = field(default_factory=list)
    warning: str | None = None
    result: dict[str, Any] | None = None
    # Set by a memory write (record, retain …): only those report a late failure as a warning.
    # A build or sync that fails part-way stays a failure: running it again is the fix.
    memory_write: bool = False

    def __bool__(self) -> bool:
        return bool(self.paths)


# An operation that fails after one of its writes landed must report success with a warning,
# never failure: a retrying agent would write the same thing twice. None: nobody asked.
_LANDED: contextvars.ContextVar[Landed | None] = contextvars.ContextVar(
    "kenning_landed", default=None)


@contextlib.contextmanager
def track_landed() -> Iterator[Landed]:
    """Collect the vault paths written (landed on disk) inside the block; nests."""
    outer = _LANDED.get()
    landed = Landed()
    token = _LANDED.set(landed)
    try:
        yield landed
    finally:
        _LANDED.reset(token)
        if outer is not None:
            outer.paths.extend(p for p in landed.paths if p not in outer.paths)
            outer.warning = landed.warning or outer.warning
            outer.result = landed.result or outer.result
            outer.memory_write = outer.memory_write or landed.memory_write


def landed_paths() -> list[str]:
    """The vault paths written so far by the operation running in this context."""
    landed = _LANDED.get()
    return list(landed.paths) if landed is not None else []


def note_landed(*paths: str) -> None:
    """Record that ``paths`` were written (see :func:`track_landed`)."""
    landed = _LANDED.get()
    if landed is not None:
        landed.paths.extend(p for p in paths if p not in landed.paths)


@contextlib.contextmanager
def write_lock(root: Path, *, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold the vault write lock; a batch a crashed writer left half-done is finished first."""
    path = Path(root) / STATE_DIR / WRITE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        acquire_flock(fd, wait, lambda: WriteBusy(
            f"another kenning process held the vault write lock ({path}) for {wait:.0f} s; "
            "nothing written"), poll=0.01)
        recover(Path(root))
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def write_files(root: Path, writes: Mapping[str, str], removals: tuple[str, ...] | list[str] = (),
                *, threads: int = 8) -> None:
    """Write (and remove) vault files as one batch; call it holding :func:`write_lock`.

    Paths are vault-relative and must stay inside the vault. Several files are written at a time
    so the file system can group their fsyncs; removals come after every write, so a page that
    moves exists somewhere at every moment.
    """
    root = Path(root)
    for rel in (*writes, *removals):
        resolve_own(root, rel)  # raises on a path outside the vault or into a hidden folder
    if not writes and not removals:
        return
    journal = root / STATE_DIR / JOURNAL
    # Journaled even for one file: a writer killed mid-write leaves a hidden temp file beside
    # its target, and the journal is how the next writer knows where to clean it up.
    untrusted = provenance.planned(root, writes)  # a remote caller's lines, read before
    atomic_write_text(journal, json.dumps({"writes": dict(writes),
                                           "removals": list(removals)}, ensure_ascii=False))
    done: list[str] = []
    try:
        _apply(root, dict(writes), list(removals), threads, done)
    finally:
        # A batch that failed part-way may still have landed some files (the journal
        # finishes it on the next write).
        note_landed(*done)
    journal.unlink(missing_ok=True)
    provenance.append(root, untrusted)


def finish_interrupted(root: Path) -> bool:
    """Finish a batch a killed writer left, if there is one and no live writer holds the lock
    (a live one finishes its own); True if one was finished. Cheap when there is none."""
    journal = Path(root) / STATE_DIR / JOURNAL
    if not journal.exists() and not any(journal.parent.glob(f".{JOURNAL}.*.tmp")):
        return False
    try:
        with write_lock(root, wait=0.0):
            return True  # write_lock ran recover()
    except (WriteBusy, OSError):
        return False


def recover(root: Path) -> bool:
    """Finish a batch a crashed writer left in the journal; True if there was one."""
    journal = Path(root) / STATE_DIR / JOURNAL
    _remove_temp(journal)  # a journal killed while being written: its batch never started
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        journal.unlink(missing_ok=True)
        return False
    writes = data.get("writes") if isinstance(data, dict) else None
    removals = data.get("removals") if isinstance(data, dict) else None
    if isinstance(writes, dict) and isinstance(removals, list):
        for rel in writes:
            with contextlib.suppress(KenningError, OSError):
                _remove_temp(resolve_own(Path(root), str(rel)))
        _apply(Path(root), {str(k): str(v) for k, v in writes.items()},
               [str(r) for r in removals], 8)
    journal.unlink(missing_ok=True)
    return True


def _remove_temp(target: Path) -> None:
    """Remove the temp files a killed atomic write of ``target`` left beside it (the pattern
    of ``fsio.atomic_write_bytes``); only ever called holding the write lock."""
    for tmp in target.parent.glob(f".{glob_escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def _apply(root: Path, writes: dict[str, str], removals: list[str], threads: int,
           done: list[str] | None = None) -> None:
    done = [] if done is None else done

    def one(item: tuple[str, str]) -> None:
        atomic_write_text(resolve_own(root, item[0]), item[1])
        done.append(item[0])  # list.append is atomic under the GIL

    if len(writes) > 1 and threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(one, writes.items()))
    else:
        for item in writes.items():
            one(item)
    for rel in removals:
        with contextlib.suppress(FileNotFoundError):
            resolve_own(root, rel).unlink()
        done.append(rel)
