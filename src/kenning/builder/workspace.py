"""The files a build reads and writes: the vault on disk, or an overlay for ``--dry-run``.

Writes are staged in memory and reach the disk at :meth:`Workspace.commit` (once per batch) as
one journaled batch (:func:`kenning.vault.writes.write_files`): every file atomically, several at
a time so the file system commits their fsyncs together, removals only after every write (a page
that moved exists somewhere at every moment), and a crash part-way finished by the next writer.
In a dry run nothing is committed: later batches read the staged text back, and :meth:`diff`
gives the planned changes as a unified diff.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from kenning.vault.fsio import hidden_part, is_utf8_name, resolve_inside
from kenning.vault.writes import write_files


class Workspace:
    def __init__(self, root: Path, *, dry_run: bool = False,
                 intend: Callable[[Mapping[str, str | None]], None] | None = None) -> None:
        self.root = root
        self.dry_run = dry_run
        # Told every change before it is written (the build's journal, .journal).
        self.intend = intend
        self.overlay: dict[str, str | None] = {}   # staged: path → text (None = deleted)
        self.original: dict[str, str | None] = {}  # text before the first change
        self.written: list[str] = []                # paths changed, in order
        self._folders: dict[str, Path] = {}         # folder → its real path, found safe

    def _abs(self, rel: str) -> Path:
        """Where ``rel`` is, refused when out of the vault or hidden (:func:`resolve_inside`).
        A folder found safe once is not resolved again for each of its files (a migration
        stages thousands); a file that is a symlink always is. ``commit`` checks every path
        again as it writes (``write_files``)."""
        folder, _, name = rel.rpartition("/")
        real = self._folders.get(folder)
        if real is not None and name and hidden_part(name) is None \
                and not os.path.islink(real / name):
            return real / name
        path = resolve_inside(self.root, rel)
        if path.name == name:
            self._folders[folder] = path.parent
        return path

    def read(self, rel: str) -> str | None:
        if rel in self.overlay:
            return self.overlay[rel]
        path = self.root / rel
        try:
            return path.read_bytes().decode("utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except UnicodeDecodeError:
            return None

    def exists(self, rel: str) -> bool:
        if rel in self.overlay:
            return self.overlay[rel] is not None
        return (self.root / rel).is_file()

    def stamp(self, rel: str) -> object:
        """Changes whenever the file's content may have changed."""
        if rel in self.overlay:
            text = self.overlay[rel]
            return ("overlay", hash(text))
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _remember(self, rel: str, current: str | None) -> None:
        if rel not in self.original:  # (a dict: a list would be searched on every write)
            self.original[rel] = current
            self.written.append(rel)

    def write(self, rel: str, text: str) -> bool:
        """Write ``text`` (atomically on disk); False when the file already holds it."""
        current = self.read(rel)
        if current == text:
            return False
        self._abs(rel)  # refuse a path out of the vault before anything is staged
        self._remember(rel, current)
        self.overlay[rel] = text
        return True

    def delete(self, rel: str) -> None:
        current = self.read(rel)
        if current is None and not self.exists(rel):
            return
        self._remember(rel, current)
        self.overlay[rel] = None

    def commit(self) -> list[str]:
        """Write the staged files to disk (nothing in a dry run); returns the paths written."""
        if self.dry_run or not self.overlay:
            return []
        writes = {rel: text for rel, text in self.overlay.items() if text is not None}
        removals = [rel for rel, text in self.overlay.items() if text is None]
        if self.intend is not None:
            self.intend(self.overlay)
        # One journaled batch: a crash part-way is finished by the next holder of the lock.
        write_files(self.root, writes, removals)
        self.overlay.clear()
        return list(writes)

    def listdir(self, folder: str) -> list[str]:
        """Markdown files directly in ``folder`` (vault-relative), as this workspace sees them."""
        out: set[str] = set()
        base = self.root / folder
        if base.is_dir():
            for entry in os.scandir(base):
                if entry.name.endswith(".md") and not entry.name.startswith(".") \
                        and is_utf8_name(entry.name) and entry.is_file():
                    out.add(f"{folder}/{entry.name}")
        for rel, text in self.overlay.items():
            if rel.rsplit("/", 1)[0] == folder:
                if text is None:
                    out.discard(rel)
                else:
                    out.add(rel)
        return sorted(out)

    def all_pages(self) -> list[str]:
        """Every Markdown page of the vault outside dot-folders and ``sources/``."""
        from kenning.vault.layout import iter_markdown_files, load_config

        try:
            exclude = load_config(self.root).exclude
        except Exception:  # a broken config is reported by the commands that read it
            exclude = ()
        found = {f.path for f in iter_markdown_files(self.root, exclude) if f.skip is None
                 and not f.path.startswith("sources/")}
        for rel, text in self.overlay.items():
            if text is None:
                found.discard(rel)
            elif not rel.startswith("sources/"):
                found.add(rel)
        return sorted(found)

    def diff(self) -> str:
        chunks = []
        for rel in self.written:
            before = self.original.get(rel)
            after = self.read(rel)
            if (before or "") == (after or ""):
                continue
            chunks.append(unified_diff(before, after, rel if before is not None else None,
                                       rel if self.exists(rel) else None))
        return "".join(chunks)


def unified_diff(before: str | None, after: str | None, old: str | None, new: str | None
                 ) -> str:
    """A unified diff of one file, ``a/old`` → ``b/new`` (None: ``/dev/null``, a file created
    or removed), every line ending in a newline.

    Texts of the same number of lines (a link rewritten in place, the common edit of a build or
    a migration) are compared line by line, without difflib's search for moved blocks: the
    same hunks, at a fraction of the cost on thousands of pages."""
    if (before or "") == (after or ""):
        return ""
    a = (before or "").splitlines(keepends=True)
    b = (after or "").splitlines(keepends=True)
    fromfile = f"a/{old}" if old is not None else "/dev/null"
    tofile = f"b/{new}" if new is not None else "/dev/null"
    if len(a) != len(b) and a and b and len(a) + len(b) > LARGE_DIFF_LINES:
        fast = _system_diff(before or "", after or "", fromfile, tofile)
        if fast is not None:
            return fast
    # Same length: the opcodes are set below, so the matcher never indexes the lines.
    matcher = difflib.SequenceMatcher(None, *(((), ()) if len(a) == len(b) else (a, b)))
    if len(a) == len(b):
        ops, i = [], 0
        while i < len(a):
            same, j = a[i] == b[i], i
            while j < len(a) and (a[j] == b[j]) == same:
                j += 1
            ops.append(("equal" if same else "replace", i, j, i, j))
            i = j
        matcher.opcodes = ops or [("equal", 0, 0, 0, 0)]
    groups = list(matcher.get_grouped_opcodes(3))
    if not groups:
        return ""
    out = [f"--- {fromfile}\n", f"+++ {tofile}\n"]
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a[x1:x2])
                continue
            out.extend("-" + line for line in a[x1:x2])
            out.extend("+" + line for line in b[y1:y2])
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


# Past this many lines (both sides), two texts of different lengths (a state file whose entries
# moved) are compared by the system's diff: difflib's block search grows with the square of the
# lines there (a 30,000-line state file takes a minute).
LARGE_DIFF_LINES = 4000


def _system_diff(before: str, after: str, fromfile: str, tofile: str) -> str | None:
    """``diff -u`` of the two texts (through temp files outside the vault), or None when there
    is no ``diff`` program or it fails."""
    import shutil
    import subprocess
    import tempfile

    program = shutil.which("diff")
    if program is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kenning-diff-") as tmp:
        paths = [os.path.join(tmp, "a"), os.path.join(tmp, "b")]
        for path, text in zip(paths, (before, after), strict=True):
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        try:
            proc = subprocess.run([program, "-u", "--label", fromfile, "--label", tofile, *paths],
                                  capture_output=True, check=False, timeout=600)
        except (OSError, subprocess.SubprocessError):
            return None
    if proc.returncode not in (0, 1):
        return None
    return proc.stdout.decode("utf-8", "surrogateescape")


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it (``3,4``; ``3`` for one line; an empty
    range names the line before it)."""
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"
