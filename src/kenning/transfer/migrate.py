"""`kenning migrate`: bring a vault an older Kenning wrote to this Kenning's format.

The vault format is ``format:`` in ``.kenning/config.yaml`` (:data:`kenning.vault.layout.FORMAT`;
a config without the key is format 1). Each step N → N+1 is a function in :data:`STEPS` that
plans its changes on a :class:`Draft` (a dry-run :class:`~kenning.builder.workspace.Workspace`
for pages, and Kenning's own files under ``.kenning/`` beside it) without touching the disk;
:func:`plan` runs every step the vault is behind and sets ``format:`` last.

- **dry run** (:func:`plan`): the changes as a unified diff (a moved page as ``rename from`` /
  ``rename to`` and its content diff); nothing is written.
- **apply** (:func:`apply`): under the vault write lock (and the index's writer lock when there
  is an index and a manual-link log, which ``kenning link`` writes under that lock), a backup
  of every file the migration changes or removes goes to
  ``.kenning/backups/<UTC time>/files/<path>``, then ``manifest.json`` (each file's sha256, what
  the migration writes there, the files it creates, from and to format) — a backup without its
  manifest was cut short and is never restored from. Then every change, the config's
  ``format:`` line included, is one journaled batch (:func:`kenning.vault.writes.write_files`): a
  kill part-way is finished by the next writer or ``Vault.open``, so the vault is all of one
  format or all of the other.
- **rollback** (:func:`rollback`): the backup's files written back (their bytes checked against
  the manifest), the files the migration created removed, as one batch; refused when a file
  changed since the migration (``force`` restores over it).

Step 1 → 2: pages an older Kenning created, named by a slug of their title
(``people/sarah-chen.md``), move to their title (``people/Sarah Chen.md``); every link to them is
rewritten, and the build state, the created-page registry (seeded, it came with format 2) and
the manual-link log follow (:mod:`kenning.builder.filenames`, which ``kenning build`` also runs).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenning.errors import KenningError
from kenning.index.store.diagnose import IndexState
from kenning.vault.layout import (
    CONFIG_NAME,
    FORMAT,
    STATE_DIR,
    config_with_format,
    load_config,
    require_known_format,
)

BACKUPS = "backups"
MANIFEST = "manifest.json"
CONFIG = f"{STATE_DIR}/{CONFIG_NAME}"
BACKUP_VERSION = 1


class Draft:
    """The changes a migration plans, applied to nothing: pages through a dry-run workspace,
    Kenning's own files (``.kenning/…``, which pages never are) in :attr:`own`."""

    def __init__(self, root: Path) -> None:
        from kenning.builder.workspace import Workspace

        self.root = root
        self.ws = Workspace(root, dry_run=True)
        self.own: dict[str, str] = {}
        self.own_before: dict[str, str | None] = {}
        self.renames: list[tuple[str, str]] = []
        self.notes: list[str] = []

    def read_own(self, rel: str) -> str | None:
        if rel in self.own:
            return self.own[rel]
        try:
            return (self.root / rel).read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None

    def write_own(self, rel: str, text: str) -> None:
        before = self.read_own(rel)
        if before == text:
            return
        self.own_before.setdefault(rel, before)
        self.own[rel] = text


@dataclass(frozen=True)
class Step:
    """Step ``source`` → ``source + 1``: ``run`` plans its changes on a draft."""

    source: int
    title: str
    run: Callable[[Draft], None]


def _title_names(draft: Draft) -> None:
    """Format 1 → 2: Kenning's slug-named pages move to their titles (module docstring)."""
    from kenning.builder.filenames import kenning_pages, manual_links_moved, migrate_names
    from kenning.builder.state import BUILD_DIR, STATE_NAME, BuildState
    from kenning.index.indexer import MANUAL_LINKS
    from kenning.vault.created import created_change

    root = draft.root
    state = BuildState.load(root)
    if state.warning:
        draft.notes.append(state.warning)
    pages = kenning_pages(root, state, draft.ws)
    moved = migrate_names(draft.ws, state, pages)
    draft.renames.extend(moved)
    to = dict(moved)
    state_rel = f"{STATE_DIR}/{BUILD_DIR}/{STATE_NAME}"
    if moved and not state.warning and (root / state_rel).exists():
        draft.write_own(state_rel, state.to_json())
    links = manual_links_moved(root / STATE_DIR / MANUAL_LINKS, to)
    if links is not None:
        draft.write_own(f"{STATE_DIR}/{MANUAL_LINKS}", links)
    change = created_change(root, add={to.get(p, p): by for p, by in pages.items()},
                            moved=moved)
    if change is not None:
        draft.write_own(*change)


#: format N → the step from N to N + 1
STEPS: dict[int, Step] = {
    1: Step(1, "pages Kenning created are named by their titles; links to them rewritten",
            _title_names),
}


@dataclass
class Plan:
    """Every change of a migration, decided and not applied."""

    root: Path
    found: int
    target: int
    steps: list[str]
    writes: dict[str, str]
    removals: list[str]
    before: dict[str, str | None]
    renames: list[tuple[str, str]]
    index: IndexState
    notes: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        return bool(self.writes or self.removals)

    def diff(self) -> str:
        """Every change as a unified diff; a moved page as a rename with its content diff."""
        from kenning.builder.workspace import unified_diff

        moved_to = {new: old for old, new in self.renames}
        moved_from = set(moved_to.values())
        out = []
        for rel in sorted({*self.writes, *self.removals}):
            if rel in moved_from:
                continue
            if rel in moved_to:
                old = moved_to[rel]
                out.append(f"diff --git a/{old} b/{rel}\nrename from {old}\nrename to {rel}\n")
                out.append(unified_diff(self.before.get(old), self.writes[rel], old, rel))
                continue
            before = self.before.get(rel)
            out.append(unified_diff(before, self.writes.get(rel),
                                    rel if before is not None else None,
                                    rel if rel in self.writes else None))
        return "".join(out)

    def to_dict(self, *, diff: bool = True) -> dict[str, Any]:
        """JSON-ready form."""
        moved_to = {new for _, new in self.renames}
        created = sorted(r for r in self.writes
                         if self.before.get(r) is None and r not in moved_to)
        changed = sorted(r for r in self.writes if self.before.get(r) is not None)
        out: dict[str, Any] = {
            "vault": str(self.root), "format": self.found, "target": self.target,
            "pending": self.pending, "steps": self.steps,
            "renames": [{"from": a, "to": b} for a, b in self.renames],
            "created": created, "changed": changed,
            "removed": sorted(set(self.removals) - {old for old, _ in self.renames}),
            "index": {"present": self.index.present, "schema": self.index.schema,
                      "expected": self.index.expected, "stale": self.index.stale,
                      "state": self.index.describe()},
            "notes": self.notes, "incomplete_backups": self.incomplete,
        }
        if diff:
            out["diff"] = self.diff()
        return out


def plan(root: Path) -> Plan:
    """What migrating the vault at ``root`` to :data:`FORMAT` changes; writes nothing. A vault of
    a newer format is refused (:class:`kenning.vault.layout.FormatTooNew`)."""
    from kenning.index.store import database_url
    from kenning.index.store.diagnose import index_state

    root = Path(root)
    config = load_config(root)
    require_known_format(root, config)
    draft = Draft(root)
    steps = []
    for number in range(config.format, FORMAT):
        step = STEPS[number]
        step.run(draft)
        steps.append(f"{number} → {number + 1}: {step.title}")
    if config.format < FORMAT:
        text = draft.read_own(CONFIG) or ""
        draft.write_own(CONFIG, config_with_format(text, FORMAT, str(root / CONFIG)))
    overlay = draft.ws.overlay
    writes = {rel: text for rel, text in overlay.items() if text is not None}
    writes.update(draft.own)
    before = {rel: draft.ws.original.get(rel) for rel in overlay}
    before.update(draft.own_before)
    return Plan(root=root, found=config.format, target=FORMAT, steps=steps, writes=writes,
                removals=sorted(rel for rel, text in overlay.items() if text is None),
                before=before, renames=list(draft.renames),
                index=index_state(root, database_url(root, config.database)),
                notes=draft.notes,
                incomplete=[b.name for b in list_backups(root) if not b.complete])


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """The vault write lock, and the index's writer lock when there is a manual-link log (its
    other writer, ``kenning link``, holds only that one)."""
    from kenning.index.indexer import MANUAL_LINKS
    from kenning.index.store import database_url, index_present, open_store
    from kenning.vault.writes import write_lock

    with contextlib.ExitStack() as stack:
        stack.enter_context(write_lock(root))
        url = database_url(root, load_config(root).database)
        # No index yet: nothing to lock, and opening one would create it.
        if (root / STATE_DIR / MANUAL_LINKS).exists() and index_present(root, url):
            store = stack.enter_context(open_store(root, url))
            stack.enter_context(store.writer_lock(wait=30.0))
        yield


def apply(root: Path) -> dict[str, Any]:
    """Back up, then apply the migration as one journaled batch (module docstring); the
    report is the plan's (without the diff) with ``applied`` and ``backup``."""
    from kenning.vault.writes import write_files

    root = Path(root)
    with _locked(root):
        p = plan(root)
        report = p.to_dict(diff=False)
        if not p.pending:
            return {**report, "applied": False, "backup": None}
        folder = _backup(root, p)
        write_files(root, p.writes, p.removals)
    return {**report, "applied": True, "backup": folder.relative_to(root).as_posix()}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _backup(root: Path, p: Plan) -> Path:
    """Copy every file the plan changes or removes into a new backup folder; the manifest is
    written last (with it, the backup is complete)."""
    from kenning.vault.fsio import atomic_write_text, fault_point, fsync_dir

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = root / STATE_DIR / BACKUPS
    folder, n = base / stamp, 2
    while folder.exists():
        folder, n = base / f"{stamp}-{n}", n + 1
    files_dir = folder / "files"
    touched = sorted(rel for rel, text in p.before.items() if text is not None)

    def one(rel: str) -> dict[str, Any]:
        data = (root / rel).read_bytes()
        target = files_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        fault_point()
        after = p.writes.get(rel)
        return {"path": rel, "sha256": _sha(data),
                "after": _sha(after.encode("utf-8")) if after is not None else None}

    with ThreadPoolExecutor(max_workers=8) as pool:
        files = list(pool.map(one, touched))
    for parent in sorted({(files_dir / rel).parent for rel in touched}, reverse=True):
        fsync_dir(parent)
    manifest = {
        "kenning_backup": BACKUP_VERSION, "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "from_format": p.found, "to_format": p.target, "files": files,
        "created": [{"path": rel, "sha256": _sha(text.encode("utf-8"))}
                    for rel, text in sorted(p.writes.items()) if p.before.get(rel) is None],
        "renames": [{"from": a, "to": b} for a, b in p.renames],
    }
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1)
                      + "\n")
    return folder


@dataclass(frozen=True)
class Backup:
    """A backup folder under ``.kenning/backups/``; ``complete`` when its manifest is there."""

    name: str
    path: Path
    complete: bool


def list_backups(root: Path) -> list[Backup]:
    """The vault's migration backups, oldest first."""
    base = Path(root) / STATE_DIR / BACKUPS
    if not base.is_dir():
        return []
    return [Backup(d.name, d, (d / MANIFEST).is_file())
            for d in sorted(base.iterdir(), key=lambda d: d.name) if d.is_dir()]


def _find_backup(root: Path, name: str | None) -> Backup:
    backups = list_backups(root)
    if name:
        wanted = Path(name).name if "/" in name else name
        found = next((b for b in backups if b.name == wanted), None)
        if found is None:
            raise KenningError(f"no backup {name!r} in {root / STATE_DIR / BACKUPS}"
                               + (f" (there are: {', '.join(b.name for b in backups)})"
                                  if backups else ""))
        if not found.complete:
            raise KenningError(f"{found.path}: incomplete backup (no {MANIFEST}: the migration "
                               "that wrote it was stopped before it changed anything); nothing "
                               "restored")
        return found
    complete = [b for b in backups if b.complete]
    if not complete:
        raise KenningError(f"no complete migration backup in {root / STATE_DIR / BACKUPS}; "
                           "nothing restored")
    return complete[-1]


def rollback(root: Path, name: str | None = None, *, force: bool = False) -> dict[str, Any]:
    """Undo a migration from its backup (``name``; default the latest complete one): its files
    written back, the files the migration created removed, as one journaled batch. Refused,
    with nothing written, when a backup file is damaged, or a file changed since the migration
    (unless ``force``)."""
    from kenning.vault.writes import write_files

    root = Path(root)
    with _locked(root):
        backup = _find_backup(root, name)
        where = backup.path / MANIFEST
        try:
            manifest = json.loads(where.read_text(encoding="utf-8"))
            files, created = manifest["files"], manifest["created"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KenningError(f"{where}: not a migration manifest ({exc}); nothing restored"
                               ) from None
        writes: dict[str, str] = {}
        changed: list[str] = []
        for entry in files:
            rel = str(entry["path"])
            saved = backup.path / "files" / rel
            data = saved.read_bytes() if saved.is_file() else None
            if data is None or _sha(data) != entry["sha256"]:
                raise KenningError(f"{saved}: missing or damaged (its sha256 is not the "
                                   "manifest's); nothing restored")
            now = _current(root, rel)
            if now == data:
                continue  # already as the backup holds it
            if (now is None and entry.get("after") is not None) or \
                    (now is not None and _sha(now) != entry.get("after")):
                changed.append(rel)
            writes[rel] = data.decode("utf-8")
        removals = []
        for entry in created:
            rel = str(entry["path"])
            now = _current(root, rel)
            if now is None:
                continue
            if _sha(now) != entry["sha256"]:
                changed.append(rel)
            removals.append(rel)
        if changed and not force:
            shown = ", ".join(sorted(changed)[:5]) + (" …" if len(changed) > 5 else "")
            raise KenningError(f"{len(changed)} file(s) changed since the migration ({shown}); "
                               "nothing restored (--force restores the backup over them)")
        write_files(root, writes, removals)
    return {"vault": str(root), "backup": backup.path.relative_to(root).as_posix(),
            "format": manifest.get("from_format"), "restored": sorted(writes),
            "removed": sorted(removals), "overwritten": sorted(changed)}


def _current(root: Path, rel: str) -> bytes | None:
    try:
        return (root / rel).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
