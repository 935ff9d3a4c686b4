"""Changing several vault files as one: the vault write lock and journaled batches.

Every writer of pages (agent memory writes, the build) holds ``.kenning/write.lock`` (flock)
around its read-modify-write, so two writers never lose each other's edits; the kernel drops the
lock when its holder dies. A change to several files goes through :func:`write_files`: the new
contents are first saved to a journal (``.kenning/pending-writes.json``, written atomically),
then each file is written atomically, then the journal is removed. A crash in between leaves the
journal, and the next holder of the lock finishes the batch (:func:`recover`), so a batch is
all or nothing across files, not only within one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kenning.errors import KenningError
from kenning.vault import provenance
from kenning.vault.fsio import acquire_flock, atomic_write_text, resolve_inside
from kenning.vault.layout import STATE_DIR

WRITE_LOCK = "write.lock"
JOURNAL = "pending-writes.json"
LOCK_WAIT = 60.0  # seconds a writer waits for another writer


class WriteBusy(KenningError):
    """Another process held the vault write lock for too long."""


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
        resolve_inside(root, rel)  # raises on a path outside the vault
    if not writes and not removals:
        return
    journal = root / STATE_DIR / JOURNAL
    many = len(writes) + len(removals) > 1
    untrusted = provenance.planned(root, writes)  # a remote caller's lines, read before
    if many:
        atomic_write_text(journal, json.dumps({"writes": dict(writes),
                                               "removals": list(removals)}, ensure_ascii=False))
    _apply(root, dict(writes), list(removals), threads)
    if many:
        journal.unlink(missing_ok=True)
    provenance.append(root, untrusted)


def recover(root: Path) -> bool:
    """Finish a batch a crashed writer left in the journal; True if there was one."""
    journal = Path(root) / STATE_DIR / JOURNAL
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        # A journal that never finished being written: its batch never started.
        journal.unlink(missing_ok=True)
        return False
    writes = data.get("writes") if isinstance(data, dict) else None
    removals = data.get("removals") if isinstance(data, dict) else None
    if isinstance(writes, dict) and isinstance(removals, list):
        _apply(Path(root), {str(k): str(v) for k, v in writes.items()},
               [str(r) for r in removals], 8)
    journal.unlink(missing_ok=True)
    return True


def _apply(root: Path, writes: dict[str, str], removals: list[str], threads: int) -> None:
    def one(item: tuple[str, str]) -> None:
        atomic_write_text(resolve_inside(root, item[0]), item[1])

    if len(writes) > 1 and threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(one, writes.items()))
    else:
        for item in writes.items():
            one(item)
    for rel in removals:
        with contextlib.suppress(FileNotFoundError):
            resolve_inside(root, rel).unlink()
