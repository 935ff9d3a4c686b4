"""Mounts: other folders (a vault, a team vault, a code repository) indexed beside this vault.

A mount is a name, a folder, a kind (``notes`` or ``code``) and whether it is *federated* (joins
every search by default) or only searched when named. The list lives in
``.kenning/mounts.yaml``, which ``kenning mount add|remove`` write (a person may edit it too).
Kenning never writes into a mounted folder: it only reads it.

A mounted file's vault path is ``NAME:REL`` (``team:people/Ada.md``), the same form a qualified
link uses (``[[team:Ada]]``) and a citation shows (``team:people/Ada.md#L3-5``). Obsidian does not
allow ``:`` in a note's name, so no file of the vault itself is named like that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.errors import KenningError, UnsafePath

MOUNTS_NAME = "mounts.yaml"
KINDS = ("notes", "code")
#: The name ``--mount`` gives the vault's own pages (so no mount may take it).
VAULT_MOUNT = "vault"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_PREFIX = re.compile(r"([a-z][a-z0-9_-]{0,31}):(?!/)")


class MountError(KenningError, ValueError):
    """A mount that cannot be added, found or read."""


@dataclass(frozen=True)
class Mount:
    """One mounted folder."""

    name: str
    path: Path
    kind: str = "notes"
    federated: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "kind": self.kind,
                "federated": self.federated}


def split_mount(path: str) -> tuple[str, str]:
    """``("team", "people/Ada.md")`` for ``team:people/Ada.md``; ``("", path)`` for a vault path."""
    match = _PREFIX.match(path)
    if match is None or "/" in path[: match.end()]:
        return "", path
    return match.group(1), path[match.end():]


def mount_keys(names: Iterable[str]) -> set[str]:
    """The mounts as stored in the index for names a person gives: ``vault`` is '' (the
    vault's own pages)."""
    return {"" if n == VAULT_MOUNT else n for n in names}


def join_mount(mount: str, rel: str) -> str:
    """The vault path of ``rel`` in ``mount`` (``rel`` itself for the vault's own files)."""
    return f"{mount}:{rel}" if mount else rel


def check_name(name: str) -> str:
    """``name`` if it can name a mount, else a :class:`MountError` saying what can."""
    if not _NAME.fullmatch(name or ""):
        raise MountError(f"mount name {name!r} must be lowercase letters, digits, '-' or '_' "
                         "(starting with a letter, at most 32)")
    if name == VAULT_MOUNT:
        raise MountError(f"mount name {name!r} is taken: `--mount {VAULT_MOUNT}` means this "
                         "vault's own pages")
    return name


def _file(root: Path) -> Path:
    from kenning.vault.layout import STATE_DIR

    return root / STATE_DIR / MOUNTS_NAME


_cache: dict[Path, tuple[int, tuple[Mount, ...]]] = {}


def load_mounts(root: Path) -> tuple[Mount, ...]:
    """The vault's mounts, in the order they were added (none when the file is absent)."""
    path = _file(root)
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        return ()
    cached = _cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    from ruamel.yaml.error import YAMLError

    from kenning.vault.frontmatter import load_yaml, safe_yaml

    try:
        data = load_yaml(safe_yaml(), path.read_text(encoding="utf-8")) or {}
    except (YAMLError, UnicodeDecodeError) as exc:
        raise MountError(f"{path}: not valid YAML: {' '.join(str(exc).split())[:200]}") from None
    entries = data.get("mounts") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise MountError(f"{path}: expected a 'mounts:' list")
    mounts: list[Mount] = []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: mount {number}"
        if not isinstance(entry, dict):
            raise MountError(f"{where}: expected a mapping with name, path, kind")
        name, folder = str(entry.get("name") or ""), entry.get("path")
        try:
            check_name(name)
        except MountError as exc:
            raise MountError(f"{where}: {exc}") from None
        if not isinstance(folder, str) or not folder:
            raise MountError(f"{where}: field 'path' must be a folder")
        kind = str(entry.get("kind") or "notes")
        if kind not in KINDS:
            raise MountError(f"{where}: field 'kind' must be one of {', '.join(KINDS)}")
        if any(m.name == name for m in mounts):
            raise MountError(f"{where}: a second mount named {name!r}")
        mounts.append(Mount(name, Path(folder).expanduser(), kind,
                            bool(entry.get("federated", True))))
    _cache[path] = (stamp, tuple(mounts))
    return tuple(mounts)


def save_mounts(root: Path, mounts: tuple[Mount, ...] | list[Mount]) -> None:
    """Write the mount list atomically."""
    import io

    from ruamel.yaml import YAML

    from kenning.vault.fsio import atomic_write_text

    yaml = YAML()
    yaml.default_flow_style = False
    out = io.StringIO()
    out.write("# Folders indexed beside this vault (`kenning mount add|list|remove`).\n")
    yaml.dump({"mounts": [m.as_dict() for m in mounts]}, out)
    atomic_write_text(_file(root), out.getvalue())
    _cache.pop(_file(root), None)


def add_mount(root: Path, name: str, folder: Path, kind: str = "notes",
              federated: bool = True) -> Mount:
    """Add a mount (refusing a name in use, a missing folder, the vault itself or a folder
    inside it); returns it."""
    check_name(name)
    if kind not in KINDS:
        raise MountError(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    mounts = load_mounts(root)
    if any(m.name == name for m in mounts):
        raise MountError(f"a mount named {name!r} exists already "
                         f"({next(m.path for m in mounts if m.name == name)}); "
                         f"`kenning mount remove {name}` first")
    real = folder.expanduser().resolve()
    if not real.is_dir():
        raise MountError(f"{folder}: not a folder")
    home = root.resolve()
    if real == home or home in real.parents:
        raise MountError(f"{folder}: inside the vault already (its files are indexed as they are)")
    if real in home.parents:
        raise MountError(f"{folder}: holds the vault itself; mount a folder beside it")
    mount = Mount(name, real, kind, federated)
    save_mounts(root, (*mounts, mount))
    return mount


def remove_mount(root: Path, name: str) -> Mount:
    """Remove a mount from the list (its pages leave the index on the next index run)."""
    mounts = load_mounts(root)
    found = next((m for m in mounts if m.name == name), None)
    if found is None:
        raise MountError(unknown_mount(root, name))
    save_mounts(root, tuple(m for m in mounts if m.name != name))
    return found


def unknown_mount(root: Path, name: str) -> str:
    """The message for a mount name that is not mounted."""
    names = ", ".join(m.name for m in load_mounts(root)) or "none"
    return f"no mount named {name!r} (mounts: {names}; add one with `kenning mount add`)"


def get_mount(root: Path, name: str) -> Mount:
    found = next((m for m in load_mounts(root) if m.name == name), None)
    if found is None:
        raise MountError(unknown_mount(root, name))
    return found


def mounted_file(root: Path, path: str) -> Path:
    """Where a file of a mount (``NAME:REL``) lies on disk; refuses ``..``, absolute paths and
    symlinks that lead out of the mount's folder."""
    name, rel = split_mount(path)
    if not name:
        raise UnsafePath(f"{path!r} is not in a mount")
    base = get_mount(root, name).path
    if not rel or os.path.isabs(rel) or rel.startswith(("~", "\\")) or ".." in rel.split("/"):
        raise UnsafePath(f"path must be relative to mount {name!r}: {rel!r}")
    real_base = base.resolve()
    candidate = (base / rel).resolve()
    if real_base not in candidate.parents:
        raise UnsafePath(f"{path!r} leads outside mount {name!r}")
    return candidate


def readable_file(root: Path, path: str) -> Path:
    """The file on disk of any page path, of the vault or of a mount (for reading only)."""
    if split_mount(path)[0]:
        return mounted_file(root, path)
    from kenning.vault.fsio import resolve_inside

    return resolve_inside(root, path)
