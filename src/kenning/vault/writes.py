"""Changing several vault files as one: the vault write lock and journaled batches.

Every writer of pages (agent memory writes, the build) holds the vault write lock around its
read-modify-write, so two writers never lose each other's edits; it is released when its holder
dies. The lock belongs to the index store (``Store.vault_write_lock``): on SQLite it is
``.kenning/write.lock`` (flock, :func:`file_write_lock`); on PostgreSQL an advisory lock, so
several ``kenning serve --http`` processes (on one machine or several) over one database and
one vault folder serialise their writes. :func:`write_lock` takes the store it is given, else
the one the running call acts through (:func:`acting_as`), else, for a vault configured with
a non-SQLite database, a store of its own; otherwise the file lock.

A write made on behalf of a remote person (:func:`acting_as`, set by the MCP server) is audited:
when the outermost hold of the lock ends, one row (who, when, tool, pages written, result) goes
into the store's ``audit`` table while the lock is still held, so the audit trail has the same
order as the writes; and the sources the write cites name the person (:func:`stamp_source`).

A change to several files goes through :func:`write_files`: the new
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
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.vault import provenance
from kenning.vault.fsio import acquire_flock, atomic_write_text, resolve_own
from kenning.vault.layout import STATE_DIR

if TYPE_CHECKING:
    from kenning.index.store import Store
    from kenning.vault.layout import Config

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


@dataclass
class Actor:
    """Who the running call writes for (a remote person or the shared token), the tool, and
    the store its audit row goes to."""

    who: str
    tool: str
    store: Store
    named: bool = True
    depth: int = 0  # holds of the write lock inside this call (the outermost audits)


_ACTOR: contextvars.ContextVar[Actor | None] = contextvars.ContextVar(
    "kenning_actor", default=None)


@contextlib.contextmanager
def acting_as(who: str, tool: str, store: Store, *, named: bool = True) -> Iterator[Actor]:
    """Inside the block, vault writes are ``who``'s (made by ``tool``): audited in ``store``
    and, when ``named`` (a person's token), cited as ``mcp:who``."""
    actor = Actor(who, tool, store, named)
    token = _ACTOR.set(actor)
    try:
        yield actor
    finally:
        _ACTOR.reset(token)


def actor() -> Actor | None:
    """Who the running call writes for, or None (a local, trusted writer)."""
    return _ACTOR.get()


def stamp_source(source: str | None) -> str | None:
    """``source`` naming the remote person the running call writes for (``mcp:alice``, or
    ``[[Meeting]] (mcp:alice)``); unchanged for a local writer or the shared token."""
    who = _ACTOR.get()
    if who is None or not who.named:
        return source
    stamp = f"mcp:{who.who}"
    if not source:
        return stamp
    return source if stamp in source else f"{source} ({stamp})"


# The replication position (Store.replication_position) after this process's last write to
# each vault's index: reads go to the primary until a read replica has replayed it.
_POSITIONS: dict[Path, tuple[float, Any]] = {}
_LOCK_STORES: dict[tuple[Path, str], Store] = {}


def last_write(root: Path) -> tuple[float, Any] | None:
    """(monotonic time, replication position) of this process's last write to the vault."""
    return _POSITIONS.get(Path(root))


def note_write(root: Path, store: Store | None) -> None:
    """Remember that this process just wrote to the vault's index through ``store``."""
    import time

    position = None
    if store is not None:
        with contextlib.suppress(Exception):
            position = store.replication_position()
    _POSITIONS[Path(root)] = (time.monotonic(), position)


def _lock_store(root: Path) -> Store | None:
    """A store of the vault's configured database to lock through, when that is not the
    vault's own SQLite file (whose lock is the file lock); kept open for the process."""
    from kenning.index.store import ENV_URL, open_store

    url = os.environ.get(ENV_URL) or _configured_url(Path(root))
    if not url or url.startswith("sqlite:"):
        return None
    key = (Path(root), url)
    if key not in _LOCK_STORES:
        _LOCK_STORES[key] = open_store(Path(root), url)
    return _LOCK_STORES[key]


_CONFIGS: dict[Path, tuple[Any, Config | None]] = {}


def _configured_url(root: Path) -> str | None:
    """``database:`` of the vault's config (:func:`_cached_config`)."""
    config = _cached_config(root)
    return config.database if config is not None else None


def _cached_config(root: Path) -> Config | None:
    """The vault's config, re-read only when the file changes (a write takes the lock many
    times a second under load); None when it cannot be read (the commands that read it say
    why)."""
    from kenning.vault.layout import load_config

    try:
        st = (root / STATE_DIR / "config.yaml").stat()
        stamp: Any = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        stamp = None
    cached = _CONFIGS.get(root)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        config: Config | None = load_config(root)
    except KenningError:
        config = None
    _CONFIGS[root] = (stamp, config)
    return config


def check_format(root: Path) -> None:
    """Refuse to write a vault whose format is newer than this Kenning (one line naming its
    config, :class:`kenning.vault.layout.FormatTooNew`); cheap: the config is cached by its
    stat. Every writer goes through here (:func:`write_lock`, the index, the build)."""
    from kenning.vault.layout import require_known_format

    config = _cached_config(Path(root))
    if config is not None:
        require_known_format(Path(root), config)


@contextlib.contextmanager
def file_write_lock(root: Path, *, wait: float = LOCK_WAIT) -> Iterator[None]:
    """The vault write lock of a vault on SQLite: ``.kenning/write.lock`` (flock)."""
    path = Path(root) / STATE_DIR / WRITE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        acquire_flock(fd, wait, lambda: WriteBusy(
            f"another kenning process held the vault write lock ({path}) for {wait:.0f} s; "
            "nothing written"), poll=0.01)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def write_lock(root: Path, *, wait: float = LOCK_WAIT, store: Store | None = None
               ) -> Iterator[None]:
    """Hold the vault write lock; a batch a crashed writer left half-done is finished first.

    A vault whose format is newer than this Kenning is refused before anything is written
    (:func:`check_format`).

    Through ``store`` (or the running call's, or the configured database's) when there is
    one; the file lock otherwise. A remote person's write is audited before the lock is let go.
    """
    check_format(Path(root))
    who = _ACTOR.get()
    store = store or (who.store if who is not None else None) or _lock_store(Path(root))
    held = (store.vault_write_lock(wait=wait) if store is not None
            else file_write_lock(Path(root), wait=wait))
    with held:
        recover(Path(root))
        if who is None:
            with track_landed() as landed:
                yield
            if landed.paths:
                note_write(Path(root), store)
            return
        who.depth += 1
        result = "ok"
        try:
            with track_landed() as landed:
                yield
        except BaseException as exc:
            result = f"error: {type(exc).__name__}: {exc}"[:500]
            raise
        finally:
            who.depth -= 1
            if who.depth == 0 and landed.paths:
                _audit(who, landed.paths, result)
                note_write(Path(root), who.store)


def _audit(who: Actor, paths: list[str], result: str) -> None:
    """One audit row for what ``who`` wrote; a failure to write it is said, never raised (the
    pages landed: failing the call now would make the caller write them again)."""
    pages = [p for p in paths if not p.startswith(".")]
    try:
        with who.store.transaction():
            who.store.record_audit(who.who, who.tool, pages, result)
    except Exception as exc:
        import sys

        print(f"kenning: could not audit {who.who}'s {who.tool} ({', '.join(pages)}): "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)


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
    from kenning.vault.layout import FormatTooNew

    try:
        with write_lock(root, wait=0.0):
            return True  # write_lock ran recover()
    except (WriteBusy, OSError, FormatTooNew):
        return False  # FormatTooNew: a newer Kenning's batch is that Kenning's to finish


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
