"""File input/output for the vault: atomic writes and careful reads.

Every write goes to a temporary file in the same folder, is fsynced, then renamed over the target,
so a crash leaves either the old or the new file, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.errors import UnsafePath

MAX_FILE_BYTES = 10 * 1024 * 1024
TEMP_SUFFIX = ".tmp"
_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"
# ``.<name>.<host>_<pid>-<random>.tmp`` (this writer), ``.<name>.<random>.tmp`` (older Kenning).
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?:(?P<host>[A-Za-z0-9_]*)_(?P<pid>\d+)-)?"
                   r"[a-z0-9_]{8}\.tmp$")
OLD_TEMP_AGE_S = 600.0  # an unnamed writer's temp file this old is no longer being written
STATE_DIR = ".kenning"  # Kenning's own state in a vault (re-exported by vault.layout)
# Folders that are never pages (tool state, trash, version control), besides every dot-folder.
ALWAYS_EXCLUDED = frozenset({".kenning", ".obsidian", ".trash", ".git", ".hg", ".svn",
                             "node_modules"})


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename, fsync the folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # The writer's host and pid in the name let a later run tell a temp file a killed writer
    # left (removed by :func:`sweep_temp_files`) from one being written right now.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{temp_tag()}-", suffix=TEMP_SUFFIX,
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o777)
        fault_point()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
    fault_point()


_faults = [0]
_faults_lock = threading.Lock()


def fault_point() -> None:
    """The fault suite's kill switch: with ``KENNING_FAULT_KILL_AT=N`` the process SIGKILLs
    itself at its N-th write step (before and after each atomic rename, after each build
    journal entry); ``0`` only counts them. Unset, it does nothing."""
    at = os.environ.get("KENNING_FAULT_KILL_AT")
    if not at:
        return
    with _faults_lock:
        _faults[0] += 1
        if _faults[0] == int(at):
            os.kill(os.getpid(), signal.SIGKILL)


def fault_steps() -> int:
    """Write steps counted so far in this process (see :func:`fault_point`)."""
    return _faults[0]


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` atomically; newlines are written exactly as given."""
    atomic_write_bytes(path, text.encode("utf-8"))


def fsync_dir(folder: Path) -> None:
    """Make a rename or removal in ``folder`` durable (best effort)."""
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


def temp_tag() -> str:
    """``<host>_<pid>``: who writes a temp file (the pid now, so a forked child is itself)."""
    return f"{_HOST}_{os.getpid()}"


def _writer_alive(host: str | None, pid: str | None) -> bool | None:
    """Whether the writer named in a temp file's name still runs (None: cannot tell)."""
    if pid is None or host != _HOST:
        return None
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def is_temp_name(name: str) -> bool:
    """True when ``name`` is the temp file of an atomic write (this writer's or another's)."""
    return name.endswith(TEMP_SUFFIX) and _TEMP.match(name) is not None


def dead_writer_temp(path: Path) -> bool:
    """True when ``path`` is named as a temp file (or folder) of an atomic write whose writer,
    on this machine, is no longer running."""
    found = _TEMP.match(path.name)
    return found is not None and _writer_alive(found["host"], found["pid"]) is False


def leftover_temp_files(root: Path) -> list[str]:
    """Temp files of atomic writes whose writer died (vault-relative), anywhere in the vault."""
    out = []
    now = time.time()
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            found = _TEMP.match(name) if name.endswith(TEMP_SUFFIX) else None
            if found is None:
                continue
            full = os.path.join(dirpath, name)
            alive = _writer_alive(found["host"], found["pid"])
            if alive is None:
                if found["pid"] is not None:
                    continue  # another machine's writer: its own runs clean up after it
                try:
                    alive = now - os.stat(full).st_mtime < OLD_TEMP_AGE_S
                except OSError:
                    continue
            if not alive:
                out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return sorted(out)


def sweep_temp_files(root: Path) -> list[str]:
    """Remove the temp files killed writers left (the file they were replacing is intact:
    the rename never happened); returns what was removed."""
    removed = []
    for rel in leftover_temp_files(root):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / rel)
            removed.append(rel)
    return removed


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


def utf8_text(text: str) -> str:
    """``text`` that UTF-8 can hold: a lone surrogate is written out, ``\\xe9`` for a byte
    of a file name that is not UTF-8 (Python's surrogate escape), ``\\ud800`` for any other
    (a JSON ``"\\ud800"`` escape). The identity, and cheap, for ordinary text."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def utf8_data(value: Any) -> Any:
    """``value`` (str, list, tuple, dict, nested) with every string made :func:`utf8_text`."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, dict):
        return {utf8_data(k): utf8_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(utf8_data(v) for v in value)
    return value


def readable_name(text: str) -> str:
    """A file name or path safe to print, store or send: :func:`utf8_text`, and control
    characters (a newline in a name) as ``\\n`` / ``\\x07``. The identity for ordinary names."""
    text = utf8_text(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\r\t":
            out.append(repr(ch)[1:-1])
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "".join(out)


def is_utf8_name(name: str) -> bool:
    """False for a file name whose bytes are not UTF-8 (an old archive, an SMB mount): Python
    surfaces those bytes as surrogate escapes, which no UTF-8 text (a page, the index, JSON) holds.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def not_utf8_reason(name: str, *, folder: bool = False) -> str:
    """Why a file (or folder) with a non-UTF-8 name is skipped, with a guess at its intended
    name to rename it to (most such names are Latin-1 / Windows-1252)."""
    try:
        guess = os.fsencode(name).decode("cp1252", errors="replace")
    except UnicodeError:
        guess = readable_name(name)
    what = "folder" if folder else "file"
    tail = "; nothing in it is indexed" if folder else ""
    return (f"the {what} name is not valid UTF-8{tail}; rename it"
            f" (read as Windows-1252 it is {guess!r})")


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
    from kenning.vault.mounts import load_mounts, split_mount

    mount = split_mount(relative)[0]
    if mount and any(m.name == mount for m in load_mounts(root)):
        # Readers of a mounted page use kenning.vault.mounts.readable_file; through here go the
        # vault's own pages, and a mounted folder is never written.
        raise UnsafePath(f"{relative!r} is in mount {mount!r}: Kenning only reads a mounted "
                         "folder, it never writes there")
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


def resolve_own(root: Path, rel: str) -> Path:
    """Where Kenning itself reads or writes vault path ``rel``: a page (as :func:`resolve_inside`
    checks it) or Kenning's own state under ``.kenning/``, a path Kenning names, never a caller."""
    return resolve_inside(root, rel, hidden_ok=rel.startswith(f"{STATE_DIR}/"))


def flock_held(path: Path) -> bool:
    """True when some process holds the flock on lock file ``path`` (tried, not waited for)."""
    import fcntl

    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


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
