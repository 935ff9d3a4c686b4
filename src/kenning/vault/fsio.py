"""File input/output for the vault: atomic writes and careful reads.

Every write goes to a temporary file in the same folder, is fsynced, then renamed over the target,
so a crash leaves either the old or the new file, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kenning.errors import UnsafePath

MAX_FILE_BYTES = 10 * 1024 * 1024
# Folders that are never pages (tool state, trash, version control), besides every dot-folder.
ALWAYS_EXCLUDED = frozenset({".kenning", ".obsidian", ".trash", ".git", ".hg", ".svn",
                             "node_modules"})


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename, fsync the folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` atomically; newlines are written exactly as given."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class UnreadableFile(Exception):
    """A file the index skips, with the reason shown in the summary."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def too_large(size: int) -> str | None:
    """Why a file of ``size`` bytes is not indexed, or None when it is small enough."""
    if size > MAX_FILE_BYTES:
        return f"too large ({size / 1_048_576:.1f} MB > 10 MB)"
    return None


def decode_markdown(data: bytes) -> str:
    """Decode file bytes as UTF-8 text, or raise UnreadableFile naming why (binary, bad UTF-8)."""
    reason = too_large(len(data))
    if reason:
        raise UnreadableFile(reason)
    if b"\x00" in data[:8192]:
        raise UnreadableFile("binary file (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnreadableFile(f"invalid UTF-8 at line {line} (byte {exc.start})") from None
    return text.removeprefix("\ufeff")


def hidden_part(rel: str) -> str | None:
    """The first part of vault path ``rel`` that is never a page (a dot-folder such as
    ``.kenning`` or ``.github``, a dot-file, ``.trash``, ``node_modules``), or None."""
    for part in rel.replace("\\", "/").split("/"):
        if part in ALWAYS_EXCLUDED or (part.startswith(".") and part not in (".", "..")):
            return part
    return None


def resolve_inside(root: Path, relative: str, *, hidden_ok: bool = False) -> Path:
    """Resolve a vault-relative path; refuse absolute paths, ``..`` and symlinks out of ``root``.

    Unless ``hidden_ok`` (Kenning's own state files), the path must also be a page's: neither
    the path as given nor the real path it resolves to (through any symlink) may lie in a
    dot-folder or tool folder (:func:`hidden_part`). Every reader and writer of pages goes
    through here, so ``notes.md -> .kenning/config.yaml`` is never read or written as a page.
    """
    if not relative or os.path.isabs(relative) or relative.startswith(("~", "\\")):
        raise UnsafePath(f"path must be relative to the vault: {relative!r}")
    root_real = root.resolve()
    candidate = (root / relative).resolve()
    if candidate != root_real and root_real not in candidate.parents:
        raise UnsafePath(f"path leads outside the vault: {relative!r}")
    if not hidden_ok and candidate != root_real:
        real_rel = candidate.relative_to(root_real).as_posix()
        part = hidden_part(relative) or hidden_part(real_rel)
        if part is not None:
            via = "" if real_rel == relative.replace("\\", "/").strip("/") \
                else f" (it leads to {real_rel})"
            raise UnsafePath(f"{relative!r} is hidden ({part}{via}): dot-folders, dot-files "
                             "and tool folders are never pages of the vault")
    return candidate


def acquire_flock(fd: int, wait: float, busy: Callable[[], Exception], *,
                  poll: float = 0.05) -> None:
    """Take an exclusive ``flock`` on ``fd``, retrying for ``wait`` seconds, then raise
    ``busy()``. The kernel releases the lock when its holder dies: no stale locks."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() >= deadline:
                raise busy() from None
            time.sleep(poll)
