"""Shared pieces of the memory write path: the write lock, input checks, finding pages, the
journal of writes, and re-indexing after a write.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning import vocabulary
from kenning.errors import KenningError, UnsafePath, VocabularyError
from kenning.index.queries import memory as memory_queries
from kenning.vault import provenance
from kenning.vault.created import may_write
from kenning.vault.fsio import atomic_write_text, decode_markdown, resolve_inside
from kenning.vault.layout import (
    ENTITY_FOLDERS,
    STATE_DIR,
    entity_file_name,
    folder_keys,
    free_path,
    name_key,
    slug_file_name,
)
from kenning.vault.page import Page, parse_page

# The vault's write lock, shared with the build; re-exported for the memory modules.
from kenning.vault.writes import LOCK_WAIT as LOCK_WAIT
from kenning.vault.writes import WriteBusy as WriteBusy
from kenning.vault.writes import landed_paths, note_landed
from kenning.vault.writes import write_files as write_files
from kenning.vault.writes import write_lock as write_lock

if TYPE_CHECKING:
    from kenning.index.store import Store
    from kenning.vault.layout import Config

JOURNAL = "journal.jsonl"
MAX_NAME = 200            # characters in an entity name or alias
MAX_TEXT = 20_000         # characters in one observation, summary or decision part
MAX_ITEMS = 1_000         # entities + relations + observations in one record call


class MemoryInputError(KenningError, ValueError):
    """Input that cannot be written; ``problems`` lists every one of them. Nothing was written."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        head = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        super().__init__(f"{head}, nothing written: " + "; ".join(problems))


def today() -> str:
    """Today as YYYY-MM-DD (``KENNING_TODAY`` overrides it, for back-filling and tests)."""
    override = os.environ.get("KENNING_TODAY")
    if override:
        return _dt.date.fromisoformat(override).isoformat()
    return _dt.date.today().isoformat()


def now() -> _dt.datetime:
    """The current local time to the second, on the day ``today()`` says."""
    moment = _dt.datetime.now().replace(microsecond=0)
    day = _dt.date.fromisoformat(today())
    return moment.replace(year=day.year, month=day.month, day=day.day)


def cite(path: str, start: int, end: int | None = None) -> str:
    """A citation a person can open: ``people/Sarah Chen.md#L4-L4``."""
    return f"{path}#L{start}-L{end if end is not None else start}"


# -- input checks --------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A lone surrogate (JSON "\ud800") is not text: it cannot be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


class Problems:
    """Collects every problem of a batch; ``raise_if_any`` raises them all at once."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}" if where else message)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise MemoryInputError(self.items)

    def name(self, where: str, value: Any) -> str | None:
        """A page name: text, not blank, one line, no NUL, no path parts, not too long."""
        if not isinstance(value, str):
            self.add(where, f"must be a name (text), not {type(value).__name__}")
            return None
        name = value.strip()
        if not name:
            self.add(where, "is empty or only whitespace")
            return None
        if len(name) > MAX_NAME:
            self.add(where, f"is {len(name)} characters long (at most {MAX_NAME})")
            return None
        if "\x00" in name or _CONTROL.search(name) or "\n" in name or "\r" in name \
                or _SURROGATE.search(name):
            self.add(where, f"{_short(name)!r} contains NUL, control characters, a newline or a "
                     "lone surrogate")
            return None
        if "/" in name or "\\" in name or name.startswith(".") or ".." in name:
            self.add(where, f"{_short(name)!r} may not contain '/', '\\', '..' or start "
                     "with '.' (names are not paths)")
            return None
        if any(ch in name for ch in "[]|#^"):
            self.add(where, f"{_short(name)!r} may not contain [ ] | # ^ (they break links)")
            return None
        return name

    def text(self, where: str, value: Any, *, limit: int = MAX_TEXT, required: bool = True,
             one_line: bool = False) -> str | None:
        """Free text: a string, not blank when required, no NUL, at most ``limit`` characters."""
        if value is None and not required:
            return None
        if not isinstance(value, str):
            self.add(where, f"must be text, not {type(value).__name__}")
            return None
        if len(value) > limit:
            self.add(where, f"is {len(value):,} characters long (at most {limit:,})")
            return None
        if "\x00" in value:
            self.add(where, "contains a NUL byte")
            return None
        if _SURROGATE.search(value):
            self.add(where, "contains a lone surrogate (not valid Unicode text)")
            return None
        text = value.strip()
        if one_line:
            text = " ".join(text.split())
        if required and not text:
            self.add(where, "is empty or only whitespace")
            return None
        return text

    def date(self, where: str, value: Any) -> str | None:
        """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` that names a real date, or None."""
        if value is None or value == "":
            return None
        if isinstance(value, _dt.date):
            return value.isoformat()[:10]
        if not isinstance(value, str) or not _DATE.fullmatch(value.strip()):
            self.add(where, f"{value!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")
            return None
        text = value.strip()
        parts = [int(p) for p in text.split("-")] + [1, 1]
        try:
            _dt.date(parts[0], parts[1], parts[2])
        except ValueError:
            self.add(where, f"{value!r} is not a real date")
            return None
        return text

    def vocab(self, where: str, fold: Callable[[str], str], value: Any) -> str | None:
        """A vocabulary term with synonyms folded; the error lists the allowed values."""
        if not isinstance(value, str):
            self.add(where, f"must be text, not {type(value).__name__}")
            return None
        try:
            return fold(value)
        except VocabularyError as exc:
            self.add(where, exc.message)
            return None

    def confidence(self, where: str, value: Any) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0.0 <= float(value) <= 1.0:
            self.add(where, f"confidence {value!r} must be a number from 0 to 1")
            return None
        return float(value)


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def epistemic(problems: Problems, where: str, value: Any) -> str:
    if value is None:
        return vocabulary.EPISTEMIC_DEFAULT
    return problems.vocab(where, vocabulary.epistemic, value) or vocabulary.EPISTEMIC_DEFAULT


# -- pages ---------------------------------------------------------------------------------------


def read_page(root: Path, rel: str) -> tuple[str, Page]:
    """The text and parsed page at vault path ``rel``."""
    text = decode_markdown(resolve_inside(root, rel).read_bytes())
    return text, parse_page(text, rel)


def write_page(root: Path, rel: str, text: str) -> None:
    """Write one page atomically (noting a remote caller's lines, see vault.provenance)."""
    target = resolve_inside(root, rel)
    untrusted = provenance.planned(root, {rel: text})
    atomic_write_text(target, text)
    note_landed(rel)
    provenance.append(root, untrusted)


def link_to(path: str, title: str, anchor: str = "", *, qualified: bool = False) -> str:
    """``[[Sarah Chen]]``, or ``[[file stem|Title]]`` when they differ, so Obsidian resolves
    it; ``qualified``: by its path (``[[concepts/memory|memory]]``), for a file name that
    another page has too."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    target = (path.rsplit(".", 1)[0] if qualified else stem) + anchor
    plain = stem == title and not anchor and not qualified
    return f"[[{target}]]" if plain else f"[[{target}|{title}]]"


def wiki_target(path: str, anchor: str = "") -> str:
    """``[[Sarah Chen#^f3]]``: a link target without alias (fact fields, citations)."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"[[{stem}{anchor}]]"


def not_kennings(path: str, page: Page, created: Any) -> str | None:
    """Why Kenning may not write the page at ``path`` (None when it may).

    Kenning writes a page it created (``created``: the registry, :mod:`kenning.vault.created`)
    and the owned sections of a typed entity page (frontmatter ``type:`` from the vocabulary,
    the format of docs/vault-format.md). Any other note is a person's: read, never written.
    """
    if may_write(path, page.type, created):
        return None
    broken = next((p for p in page.problems if p.code == "frontmatter"), None)
    if broken is not None:  # unreadable frontmatter: say so, not that the page has no type
        return (f"{path}:{broken.line}: its frontmatter cannot be read ({broken.message}); "
                "nothing written to it")
    why = "no frontmatter `type:`" if page.type is None else f"type {page.type}"
    return (f"{path} is a note of yours ({why}); Kenning reads it but never writes it")


def new_page_path(root: Path, base: str, taken: set[str] = frozenset()) -> str:
    """``base`` or ``base`` with Obsidian's `` 2`` … suffix: free on disk, compared
    case-insensitively as macOS and Windows do, and not in ``taken`` (name keys)."""
    folder = base.rsplit("/", 1)[0] if "/" in base else ""
    keys = folder_keys(root, folder) | set(taken)
    return free_path(base, keys.__contains__)


_FACT_ID = re.compile(r"f(\d+)")
_ANY_FACT_ID = re.compile(r"\^f(\d+)(?![\w-])")


def next_fact_id(page: Page, taken: set[str] | None = None) -> str:
    """The next ``fN`` block id free on the whole page (not only under ``## Facts``: an id in
    a code block or another section is still taken, so a link to it never changes meaning)."""
    numbers = [int(m.group(1)) for m in _ANY_FACT_ID.finditer(page.text)]
    numbers += [int(m.group(1)) for b in taken or () if (m := _FACT_ID.fullmatch(b))]
    return f"f{max(numbers, default=0) + 1}"


@dataclass(frozen=True)
class Context:
    """What memory needs from a vault, handed down by the facade (``Vault.memory``) instead of
    the facade itself: the vault root, the index store and config (opened on first use, so a
    write whose index is broken still lands), and two follow-ups of a write.

    ``index`` brings the index up to date without embedding (waiting for the writer lock as a
    write may) and returns its report; ``embed_written`` embeds the pages a write just indexed
    and returns a note when some are left to ``kenning index`` (see ``Vault.embed_written``).
    """

    root: Path
    open_store: Callable[[], Store]
    load_config: Callable[[], Config]
    index: Callable[[], Any]
    embed_written: Callable[[Sequence[str]], str | None] = lambda paths: None

    @property
    def store(self) -> Store:
        """The index database (opened on first use)."""
        return self.open_store()

    @property
    def config(self) -> Config:
        """The vault's configuration."""
        return self.load_config()


class Resolver:
    """Finds the page a name means: a vault path, then the index's names (title, alias, file
    name), then the file an entity of that name would have on disk. Files are checked on disk so
    a page written by another process and not yet indexed is still found."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.root = ctx.root
        self._listed: dict[str, dict[str, str]] = {}
        self._stem_paths: dict[str, list[str]] | None = None

    def _files(self, folder: str) -> dict[str, str]:
        """name key → vault path of the files in ``folder``, listed once per resolver (one
        call), so a call naming many new entities lists each folder once."""
        if folder not in self._listed:
            try:
                names = [e.name for e in os.scandir(self.root / folder)]
            except OSError:
                names = []
            self._listed[folder] = {name_key(f"{folder}/{n}"): f"{folder}/{n}" for n in names}
        return self._listed[folder]

    def find(self, ref: str) -> tuple[str | None, list[str]]:
        """(path, []) when found, (None, candidates) when ambiguous, (None, []) when missing."""
        from kenning.index.indexer import norm_name

        name = ref.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
        name = name.strip()
        if not name or "\x00" in name:
            return None, []
        if "/" in name or name.lower().endswith((".md", ".markdown")):
            rel = name if name.lower().endswith((".md", ".markdown")) else name + ".md"
            try:
                if resolve_inside(self.root, rel).is_file():
                    return rel, []
            except UnsafePath:
                return None, []
        norm = norm_name(name)
        with contextlib.suppress(Exception):  # a broken index must not stop a write
            rows = memory_queries.pages_named(self.ctx.store, norm)
            rows = [r for r in rows if (self.root / r[1]).is_file()]
            if rows:
                best = rows[0][0]
                paths = sorted({r[1] for r in rows if r[0] == best})
                return (paths[0], []) if len(paths) == 1 else (None, paths)
        found = []
        for folder in sorted(set(ENTITY_FOLDERS) | set(vocabulary.TYPE_FOLDERS.values())):
            if folder in ("sources", "memory", "sessions"):
                continue
            on_disk = self._files(folder)
            for file_name in dict.fromkeys((entity_file_name(name), f"{name}.md",
                                            slug_file_name(name))):
                # Case-insensitively, as new pages are named: 'ADA PARK' is people/Ada Park.md
                # (not yet indexed), never a second page beside it.
                rel = on_disk.get(name_key(f"{folder}/{file_name}"))
                if rel is not None and rel not in found and (self.root / rel).is_file():
                    found.append(rel)
        if len(found) == 1:
            return found[0], []
        return (None, found) if found else (None, [])

    def link(self, path: str, title: str, anchor: str = "", *,
             pending: Iterable[str] = ()) -> str:
        """:func:`link_to` the page at ``path``, by its path when another page — indexed, or
        one of ``pending`` (pages about to be written) — has the same file name, so the link
        cannot open that other page (Obsidian's "shortest path when possible")."""
        from kenning.index.indexer import norm_name

        stem = norm_name(path.rsplit("/", 1)[-1])
        others = {p for p in pending if norm_name(p.rsplit("/", 1)[-1]) == stem}
        others.update(self._stems().get(stem, ()))  # on disk, where pages are made: not indexed
        with contextlib.suppress(Exception):  # a broken index must not stop a write
            others.update(p for p in memory_queries.paths_with_stem(self.ctx.store, stem)
                          if (self.root / p).is_file())
        return link_to(path, title, anchor, qualified=bool(others - {path}))

    def _stems(self) -> dict[str, list[str]]:
        """Normalised file name → the Markdown files of that name at the vault's top and in
        the folders pages are made in (listed once per resolver)."""
        from kenning.index.indexer import norm_name

        if self._stem_paths is None:
            self._stem_paths = {}
            folders = sorted(set(ENTITY_FOLDERS) | set(vocabulary.TYPE_FOLDERS.values()))
            for folder in ("", *folders):
                try:
                    entries = list(os.scandir(self.root / folder))
                except OSError:
                    continue
                for entry in entries:
                    if entry.name.lower().endswith((".md", ".markdown")) and entry.is_file():
                        rel = f"{folder}/{entry.name}" if folder else entry.name
                        self._stem_paths.setdefault(norm_name(entry.name), []).append(rel)
        return self._stem_paths


def lookalike_key(name: str) -> str:
    """How two names compare when one must not pass for the other: compatibility-normalised
    (NFKC: full-width and ligature forms fold), invisible format characters dropped, case
    folded, spaces collapsed."""
    import unicodedata

    visible = "".join(ch for ch in name if unicodedata.category(ch) != "Cf")
    return " ".join(unicodedata.normalize("NFKC", visible).casefold().split())


def name_holders(ctx: Context, names: list[str]) -> dict[str, list[str]]:
    """For each of ``names``: the paths of pages whose title, alias or file name is the same
    name under :func:`lookalike_key` (from the index; a name no page holds is left out)."""
    wanted = {lookalike_key(n): n for n in names}
    out: dict[str, list[str]] = {}
    with contextlib.suppress(Exception):  # a broken index must not stop a write
        rows = memory_queries.held_names(ctx.store)
        for held, path in rows:
            name = wanted.get(lookalike_key(str(held)))
            if name is not None and path not in out.get(name, []):
                out.setdefault(name, []).append(path)
    return out


# -- after a write -------------------------------------------------------------------------------


def journal(root: Path, entries: list[dict[str, Any]]) -> None:
    """Append what was written to ``.kenning/journal.jsonl`` (sessions build handoffs from it)."""
    if not entries:
        return
    path = root / STATE_DIR / JOURNAL
    stamp = now().isoformat()
    # Who wrote it travels with the entry: a handoff built from it marks a remote caller's text.
    extra = {"remote": True} if provenance.is_remote() else {}
    data = "".join(json.dumps({"at": stamp, **e, **extra}, ensure_ascii=False) + "\n"
                   for e in entries)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)


def read_journal(root: Path, since: str | None = None) -> list[dict[str, Any]]:
    """Journal entries at or after ``since`` (an ISO timestamp), oldest first."""
    path = root / STATE_DIR / JOURNAL
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line after a crash
        if isinstance(entry, dict) and (since is None or str(entry.get("at", "")) >= since):
            out.append(entry)
    return out


def reindex(ctx: Context) -> dict[str, Any]:
    """Bring the index up to date after a write, so recall sees it at once: by its words, and
    by its meaning when the written pages' few new chunks embed within a second (a bigger
    write, or an embedder that is down, leaves the rest to ``kenning index``, with a note)."""
    try:
        report = ctx.index()
    except Exception as exc:  # the write landed: whatever the index says, it is not a failure
        why = exc.message if isinstance(exc, KenningError) else f"{type(exc).__name__}: {exc}"
        return {"indexed": False, "note": f"written, not yet indexed: {why}; "
                "`kenning index` catches up"}
    out: dict[str, Any] = {"indexed": True, "index_seconds": round(report.seconds, 3)}
    note = ctx.embed_written(landed_paths())
    if note:
        out["note"] = note
    return out


def load_state(root: Path, name: str) -> dict[str, Any]:
    path = root / STATE_DIR / name
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(root: Path, name: str, data: dict[str, Any]) -> None:
    atomic_write_text(root / STATE_DIR / name,
                      json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
