"""The shape of a vault on disk: its folders, its config, and which files are its pages."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from kenning.errors import KenningError, NotAVault
from kenning.vault.fsio import ALWAYS_EXCLUDED as ALWAYS_EXCLUDED
from kenning.vault.fsio import STATE_DIR as STATE_DIR
from kenning.vault.fsio import (
    atomic_write_text,
    hidden_part,
    is_utf8_name,
    not_utf8_reason,
    readable_name,
)

CONFIG_NAME = "config.yaml"
ENTITY_FOLDERS = (
    "people", "organizations", "projects", "topics", "meetings",
    "decisions", "concepts", "findings", "rules", "questions",
)
FOLDERS = (*ENTITY_FOLDERS, "memory", "sources", "sessions")
MARKDOWN_SUFFIXES = (".md", ".markdown")
# Files Kenning writes for a person to review, never part of what recall answers from.
NEVER_INDEXED = {"memory.proposed.md"}
# The originals an import copied into the raw layer (``kenning import``): files a citation
# opens at its line, never pages of their own (a copied note would be a second page of the
# same name beside the one the import wrote).
IMPORT_ORIGINALS = "sources/imports/"

# The vault format this Kenning reads and writes (``format:`` in the config; a config without
# the key is format 1). Format 1: pages Kenning created are named by a lower-case slug of their
# title (``people/sarah-chen.md``). Format 2: they are named by their title
# (``people/Sarah Chen.md``) and listed in ``.kenning/created.json``. ``kenning migrate``
# upgrades a vault from one to the next (kenning.transfer.migrate).
FORMAT = 2

DEFAULT_CONFIG = f"""\
# Kenning vault configuration. Comments and order are kept when Kenning edits this file.
# The vault format (`kenning migrate` upgrades a vault written by an older Kenning).
format: {FORMAT}
# The vault owner, "I" in your mail and meetings: mail is marked sent, received or internal by
# it, and the owner never becomes a person page. Uncomment and fill in before the first sync.
# owner:
#   names: [Alex Morgan]
#   emails: [alex@example.com, alex.morgan@gmail.com]
#   domains: [example.com]
# Glob patterns (vault-relative) that are never indexed, in addition to dot-folders.
exclude:
  - "templates/**"
# Recall settings.
search:
  # Multiply the score of results from these folders (e.g. prefer decisions over raw sources).
  folder_weights:
    decisions: 1.2
    sources: 0.8
"""

CORE_MEMORY = """\
---
type: note
---
# Core memory

Short, durable facts and preferences that every session should load. Keep it brief.
"""


@dataclass(frozen=True)
class Config:
    """The parts of ``.kenning/config.yaml`` the core reads."""

    exclude: tuple[str, ...] = ("templates/**",)
    folder_weights: dict[str, float] | None = None
    raw: dict[str, Any] | None = None
    #: ``database:`` — the index database URL (None: the vault's own SQLite file), and
    #: ``database.read_url`` — a read replica that serves searches.
    database: str | None = None
    read_url: str | None = None
    #: ``format:`` — the vault format (1 when the key is missing; see :data:`FORMAT`).
    format: int = FORMAT


class FormatTooNew(KenningError):
    """The vault was written by a newer Kenning (its ``format:`` is above :data:`FORMAT`)."""


def require_known_format(root: Path, config: Config) -> None:
    """Raise :class:`FormatTooNew` (one line naming the config file) when the vault's format is
    newer than this Kenning: a writer must not touch what it does not understand."""
    if config.format > FORMAT:
        raise FormatTooNew(f"format {config.format} is newer than this Kenning (knows {FORMAT}); "
                           "upgrade Kenning", path=str(root / STATE_DIR / CONFIG_NAME))


def _format(path: Path, data: dict[str, Any]) -> int:
    """``format:`` of a config (1 when missing): a whole number of at least 1."""
    if "format" not in data:
        return 1
    value = data["format"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise NotAVault(f"{path}: field 'format' must be a whole number (the vault format; "
                        f"{FORMAT} for this Kenning), got {value!r}")
    return value


def config_with_format(text: str, number: int, where: str = CONFIG_NAME) -> str:
    """The config ``text`` with ``format: number``, every other line kept as it is: an existing
    top-level ``format:`` line is replaced, else the line goes after a top-level ``version:``
    line, else after the comments that open the file. Raises KenningError when the edit would
    change anything else (a config shaped so that a line edit cannot set the key)."""
    import re

    from kenning.vault.frontmatter import load_yaml, safe_yaml

    lines = text.splitlines(keepends=True)
    eol = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    new = f"format: {number}{eol}"
    at = next((i for i, ln in enumerate(lines) if re.match(r"format\s*:", ln)), None)
    if at is not None:
        lines[at] = new
    else:
        after = next((i + 1 for i, ln in enumerate(lines) if re.match(r"version\s*:", ln)), None)
        if after is None:
            after = 0
            while after < len(lines) and lines[after].lstrip().startswith("#"):
                after += 1
        if after and not lines[after - 1].endswith(("\n", "\r")):
            lines[after - 1] += eol
        lines.insert(after, new)
    out = "".join(lines)
    from ruamel.yaml.error import YAMLError

    try:
        before = load_yaml(safe_yaml(), text) or {}
        after_data = load_yaml(safe_yaml(), out) or {}
    except YAMLError:
        before = after_data = None
    if not isinstance(before, dict) or after_data != {**before, "format": number}:
        raise KenningError(f"cannot set format: {number} by editing one line; add the line "
                           f"`format: {number}` at the top level by hand", path=where)
    return out


def find_root(start: Path) -> Path:
    """The vault containing ``start``: the nearest folder with ``.kenning`` or ``.obsidian``."""
    start = start.expanduser().resolve()
    for folder in (start, *start.parents):
        if (folder / STATE_DIR).is_dir() or (folder / ".obsidian").is_dir():
            return folder
    raise NotAVault(f"{start} is not inside a vault; run `kenning init {start}` first")


def is_adoptable(path: Path) -> bool:
    """True for an existing folder of notes (an Obsidian vault or any Markdown)."""
    if (path / ".obsidian").is_dir():
        return True
    return any(True for _ in iter_markdown_files(path, limit=1))


def init_vault(path: Path) -> tuple[Path, bool]:
    """Create a vault at ``path``, or adopt an existing one; returns (root, adopted).

    Adopting writes only ``.kenning/``: no existing file is modified and no folder is added.
    """
    path = path.expanduser().resolve()
    adopted = path.exists() and is_adoptable(path)
    state = path / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    config = state / CONFIG_NAME
    if not config.exists():
        atomic_write_text(config, DEFAULT_CONFIG)
    if not adopted:
        for folder in FOLDERS:
            (path / folder).mkdir(exist_ok=True)
        if not (path / "memory.md").exists():
            atomic_write_text(path / "memory.md", CORE_MEMORY)
    return path, adopted


def load_config(root: Path) -> Config:
    """Read ``.kenning/config.yaml``; a missing file gives the defaults."""
    path = root / STATE_DIR / CONFIG_NAME
    if not path.exists():
        return Config()
    from ruamel.yaml.error import YAMLError

    from kenning.vault.frontmatter import load_yaml, safe_yaml

    try:
        # Bounded like frontmatter: an alias bomb in the config must not hang every command.
        data = load_yaml(safe_yaml(), path.read_text(encoding="utf-8")) or {}
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        # ruamel's own message spans several lines (with a pointer and a help link): keep the
        # problem itself, on one line.
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        raise NotAVault(f"{path}{line}: invalid YAML in the vault config: "
                        f"{' '.join(str(problem).split())}") from None
    if not isinstance(data, dict):
        raise NotAVault(f"{path}: the vault config must be a mapping")
    search = data.get("search") or {}
    weights = search.get("folder_weights") if isinstance(search, dict) else None
    exclude = data.get("exclude") or []
    if not isinstance(exclude, list):
        raise NotAVault(f"{path}: field 'exclude' must be a list of glob patterns")
    database, read_url = _database(path, data.get("database"))
    return Config(
        database=database,
        read_url=read_url,
        exclude=tuple(str(e) for e in exclude),
        folder_weights={str(k): float(v) for k, v in weights.items()} if isinstance(weights, dict)
        else None,
        raw=data,
        format=_format(path, data),
    )


def _database(path: Path, value: Any) -> tuple[str | None, str | None]:
    """``database: URL`` or ``database: {url: URL, read_url: URL}``."""
    if value is None or isinstance(value, str):
        return (value or None), None
    if isinstance(value, dict):
        url, read = value.get("url"), value.get("read_url")
        for key, item in (("url", url), ("read_url", read)):
            if item is not None and not isinstance(item, str):
                raise NotAVault(f"{path}: field 'database.{key}' must be a URL string")
        unknown = sorted(set(value) - {"url", "read_url"})
        if unknown:
            raise NotAVault(f"{path}: field 'database' has unknown key {unknown[0]!r} "
                            "(expected url, read_url)")
        return url or None, read or None
    raise NotAVault(f"{path}: field 'database' must be a URL or a mapping with url and read_url")


@dataclass(frozen=True)
class FoundFile:
    """A Markdown file on disk (``skip`` says why it cannot be indexed, if so), or with
    ``attachment`` any other file of the vault, of which only the path is read."""

    path: str
    size: int
    mtime_ns: int
    skip: str | None = None
    attachment: bool = False


def iter_markdown_files(root: Path, exclude: tuple[str, ...] = (),
                        limit: int | None = None) -> Iterator[FoundFile]:
    """Every Markdown file under ``root``: symlinks out of the vault and loops are not followed.

    Real folders are walked first and symlinked folders afterwards, so a note reachable both ways
    is always found at its real path (whatever the names sort like), and a symlinked folder is
    followed only when it leads somewhere inside the vault the walk did not reach. A symlinked
    file that points at another note of the vault is that note, found at its real path.
    """
    return _walk(root, exclude, limit, attachments=False)


def iter_vault_files(root: Path, exclude: tuple[str, ...] = ()) -> Iterator[FoundFile]:
    """Every Markdown file as :func:`iter_markdown_files` finds it, and every other file (images,
    PDFs, canvases …) as an ``attachment``: links may name any of them. Attachments cost no
    ``stat``; the same folders are left out."""
    return _walk(root, exclude, None, attachments=True)


def vault_files(root: Path, exclude: tuple[str, ...] = ()) -> tuple[dict[str, FoundFile],
                                                                    set[str]]:
    """The vault's Markdown files by path, and the paths of its other files (attachments)."""
    pages: dict[str, FoundFile] = {}
    attachments: set[str] = set()
    for found in iter_vault_files(root, exclude):
        if found.attachment:
            attachments.add(found.path)
        elif found.path not in pages or pages[found.path].skip:
            # A real file wins over a skipped name shown the same way (``caf\xe9.md`` spelled
            # with a backslash beside one whose name is not UTF-8).
            pages[found.path] = found
    return pages, attachments


def _walk(root: Path, exclude: tuple[str, ...], limit: int | None,
          attachments: bool) -> Iterator[FoundFile]:
    root_real = os.path.realpath(root)
    seen_dirs = {root_real}
    stack = [("", str(root))]
    linked: list[tuple[str, str]] = []  # symlinked folders, followed after every real one
    count = 0
    while stack or linked:
        if not stack:
            rel_dir, abs_dir = linked.pop(0)
            real = os.path.realpath(abs_dir)
            if real in seen_dirs or not _inside(real, root_real) \
                    or _hidden(_relative(real, root_real), exclude):
                continue  # a loop, a second way to a folder, or a way out of the vault
            seen_dirs.add(real)
            stack.append((rel_dir, abs_dir))
        rel_dir, abs_dir = stack.pop()
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name.startswith(".") or name in ALWAYS_EXCLUDED or rel in NEVER_INDEXED \
                    or _excluded(rel, exclude):
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                continue
            if not is_utf8_name(name):
                # No page, link or index row can hold the name: skipped, and shown by a
                # readable form (bad bytes as \xe9) so it can be renamed. Not descended into.
                if is_dir or attachments or name.lower().endswith(MARKDOWN_SUFFIXES):
                    shown = readable_name(rel) + ("/" if is_dir else "")
                    yield FoundFile(shown, 0, 0, skip=not_utf8_reason(name, folder=is_dir))
                continue
            if is_dir:
                if is_link:
                    linked.append((rel, entry.path))
                    continue
                real = os.path.realpath(entry.path)
                if real in seen_dirs:
                    continue  # a second way to the same folder
                seen_dirs.add(real)
                stack.append((rel, entry.path))
                continue
            if not name.lower().endswith(MARKDOWN_SUFFIXES) or rel.startswith(IMPORT_ORIGINALS):
                if attachments and (not is_link or _linked_page(entry.path, root_real)):
                    yield FoundFile(rel, 0, 0, attachment=True)
                continue
            if is_link:
                real = os.path.realpath(entry.path)
                if not _inside(real, root_real):
                    yield FoundFile(rel, 0, 0, skip="symlink to a file outside the vault")
                    continue
                target = _relative(real, root_real)
                part = hidden_part(target)
                if part is not None:
                    # README.md -> .github/README.md, notes.md -> .kenning/config.yaml: what a
                    # hidden folder holds is never a page, whatever the way to it.
                    yield FoundFile(rel, 0, 0, skip=f"symlink into {part} ({target}): hidden "
                                    "folders are never pages")
                    continue
                if target.lower().endswith(MARKDOWN_SUFFIXES) and not _hidden(target, exclude) \
                        and os.path.isfile(real):
                    continue  # another note of the vault: indexed at its own path
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError as exc:
                yield FoundFile(rel, 0, 0, skip=f"cannot stat: {exc.strerror}")
                continue
            if not stat.S_ISREG(st.st_mode):
                # Reading a FIFO would block forever; a device may never end.
                yield FoundFile(rel, 0, 0, skip="not a regular file (a pipe, socket or device)")
                continue
            yield FoundFile(rel, st.st_size, st.st_mtime_ns)
            count += 1
            if limit is not None and count >= limit:
                return


def _linked_page(path: str, root_real: str) -> bool:
    """True when the symlink at ``path`` leads to a file of the vault outside hidden folders."""
    real = os.path.realpath(path)
    return _inside(real, root_real) and hidden_part(_relative(real, root_real)) is None


def _relative(real: str, root_real: str) -> str:
    """The vault-relative, ``/``-separated form of a real path inside the vault."""
    return os.path.relpath(real, root_real).replace(os.sep, "/")


def _hidden(rel: str, exclude: tuple[str, ...]) -> bool:
    """True when the walk never enters ``rel``: a dot or tool folder on its way, or excluded."""
    return any(part.startswith(".") or part in ALWAYS_EXCLUDED for part in rel.split("/")) \
        or rel in NEVER_INDEXED or _excluded(rel, exclude)


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real + os.sep)


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """True when ``rel`` matches a pattern (``fnmatch``), or lies in a ``folder/**`` one's
    folder."""
    if not patterns:
        return False
    match, folders, prefixes = _exclusion(patterns)
    return match(os.path.normcase(rel)) is not None or rel in folders or rel.startswith(prefixes)


@functools.lru_cache(maxsize=16)
def _exclusion(patterns: tuple[str, ...]) -> tuple[Callable[[str], Any], frozenset[str],
                                                   tuple[str, ...]]:
    """The patterns as one compiled regex (what ``fnmatch.fnmatch`` matches them with), the
    folders of the ``folder/**`` ones and those folders' prefixes (``folder/``): a walk of
    10,000 files asks once per file."""
    regex = re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})"
                                for p in patterns))
    folders = tuple(p[:-3] for p in patterns if p.endswith("/**"))
    return regex.match, frozenset(folders), tuple(f"{f}/" for f in folders)


def daily_log_date(path: str) -> str | None:
    """The day of a daily log ``memory/YYYY-MM-DD.md``, else None."""
    if not path.startswith("memory/"):
        return None
    stem = path[len("memory/"):].rsplit(".", 1)[0]
    try:
        return date.fromisoformat(stem).isoformat()
    except ValueError:
        return None


# Characters no file name may hold on Windows or macOS (``/ \\ : * ? " < > |``) or that break
# an Obsidian link to the note (``# ^ [ ] |``).
_PATH_SEPARATORS = "/\\"
_NEVER_IN_NAMES = ':*?"<>|#^[]'
# Names Windows reserves for devices, with any extension.
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                       *(f"LPT{i}" for i in range(1, 10))})
# A file name's stem in UTF-8 bytes: room for " 99.md" under the 255 bytes most file systems
# allow, and under the 143 of encrypted home folders (eCryptfs).
MAX_STEM_BYTES = 120


def entity_file_name(title: str) -> str:
    """The file name of a page Kenning creates: its title as a person would name the note in
    Obsidian (``Sarah Chen.md``), made safe on every file system Obsidian runs on.

    NFC; characters a file system or an Obsidian link cannot hold are replaced (``/`` and ``\\``
    between words by ``-``, ``"`` by ``'``, the others by a space); control characters dropped,
    spaces collapsed; no leading dot, no trailing dot or space; a Windows device name gets a
    ``_``; at most :data:`MAX_STEM_BYTES` bytes of UTF-8, cut at a word where one is near.
    """
    import unicodedata

    text = unicodedata.normalize("NFC", title)
    out = []
    for i, ch in enumerate(text):
        if ch in _PATH_SEPARATORS:
            before = text[i - 1] if i else " "
            after = text[i + 1] if i + 1 < len(text) else " "
            out.append(" " if before.isspace() or after.isspace() else "-")
        elif ch == '"':
            out.append("'")
        elif ch in _NEVER_IN_NAMES or ch.isspace():
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    stem = " ".join("".join(out).split()).lstrip(". ").rstrip(". ")
    raw = stem.encode("utf-8")
    if len(raw) > MAX_STEM_BYTES:
        cut = raw[:MAX_STEM_BYTES].decode("utf-8", errors="ignore")
        while cut and unicodedata.combining(cut[-1]):
            cut = cut[:-1]  # never split a letter from its accent
        space = cut.rfind(" ")
        stem = (cut[:space] if space >= len(cut) * 2 // 3 else cut).rstrip(". -")
    stem = stem or "Untitled"
    base, dot, rest = stem.partition(".")
    if base.rstrip().upper() in _RESERVED:
        stem = f"{base.rstrip()}_{dot}{rest}"  # "CON.md" and "con.txt.md" are devices
    return f"{stem}.md"


def slug(text: str, limit: int = 80) -> str:
    """A lower-case slug: accents dropped, letters and digits (CJK too) kept, runs of anything
    else one '-', at most ``limit`` characters; ``untitled`` when nothing is left."""
    import unicodedata

    kept = []
    for ch in unicodedata.normalize("NFKD", text):
        if not unicodedata.combining(ch):
            kept.append(ch.lower() if ch.isalnum() else "-")
    return "-".join(filter(None, "".join(kept).split("-")))[:limit].rstrip("-") or "untitled"


def slug_file_name(title: str) -> str:
    """The file name an older Kenning gave a page it created (``sarah-chen.md``): kept to find
    those pages and move them."""
    return f"{slug(title)}.md"


def entity_path(entity_type: str, title: str) -> str:
    """Vault path for a new page of ``entity_type`` (already folded) titled ``title``:
    ``people/Sarah Chen.md``. Callers pick a free one with :func:`free_path`."""
    from kenning.vocabulary import TYPE_FOLDERS

    folder = TYPE_FOLDERS.get(entity_type, "notes")
    return f"{folder}/{entity_file_name(title)}"


def meeting_file_name(day: str | None, title: str) -> str:
    """A meeting page's file name: ``2026-10-07 Replay cache review.md`` (the title alone
    without a date)."""
    return entity_file_name(f"{day[:10]} {title}" if day else title)


def name_key(path: str) -> str:
    """A path as a case-insensitive file system compares it (macOS, Windows): NFC, case
    folded."""
    import unicodedata

    return unicodedata.normalize("NFC", path).casefold()


def free_path(base: str, taken: Callable[[str], bool]) -> str:
    """``base``, else the first of ``stem 2.md``, ``stem 3.md`` … (Obsidian's own suffixes) for
    which ``taken`` (given the :func:`name_key` of a path) is false."""
    stem, dot, suffix = base.rpartition(".")
    path, n = base, 1
    while taken(name_key(path)):
        n += 1
        path = f"{stem} {n}.{suffix}" if dot else f"{base} {n}"
    return path


def folder_keys(root: Path, folder: str) -> set[str]:
    """The :func:`name_key` of every entry of vault folder ``folder`` (empty when missing)."""
    prefix = f"{folder}/" if folder else ""
    try:
        return {name_key(prefix + e.name) for e in os.scandir(root / folder if folder else root)}
    except OSError:
        return set()
