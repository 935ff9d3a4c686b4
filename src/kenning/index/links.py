"""How a link finds what it names: Obsidian's rules over the vault's files, then titles and aliases.

Obsidian resolves a link by file name, case-insensitively: ``[[name]]`` means ``name.md`` unless
the name has an extension of its own (``![[diagram.svg]]``), and any file of the vault counts, not
only notes. A path in the link (``[[folder/name]]``) must end the file's path; ``./`` and ``../``
are relative to the linking note, a leading ``/`` is the vault root, and a full path always wins.
When several files fit, the one under the linking note's folder wins, then the shortest path
(then the path's alphabetical order, so the pick never depends on the order rows come back in).
Obsidian never calls a link ambiguous, and neither does this step.

Only when no file fits does Kenning try what Obsidian does not: a page's ``title:`` and then its
aliases. Several pages claiming that name leave the link *ambiguous*; ``kenning doctor`` reports
both, since Obsidian shows such links as unresolved.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from kenning.vault.mounts import split_mount
from kenning.vault.page import Page


@dataclass(frozen=True)
class VaultFile:
    """A file a link may name: a page, an attachment, or a Markdown file that is not a page."""

    path: str              # vault path as on disk (NAME:REL in a mount)
    norm: str              # the path inside its mount as links compare it (norm_name)
    page_id: int | None    # None: not a page
    markdown: bool

    @property
    def mount(self) -> str:
        return split_mount(self.path)[0]


def vault_file(path: str, page_id: int | None, markdown: bool) -> VaultFile:
    """The :class:`VaultFile` of vault path ``path`` (its norm is the path inside its mount)."""
    return VaultFile(path, norm_name(split_mount(path)[1]), page_id, markdown)


@dataclass(frozen=True)
class Resolved:
    """Where one link end leads."""

    state: str                 # resolved | file | unresolved | ambiguous
    page_id: int | None = None
    file: str | None = None    # the vault path of a file that is not a page (state "file")
    via: str | None = None     # path | folder | shortest | title | alias


UNRESOLVED = Resolved("unresolved")


@functools.lru_cache(maxsize=65536)  # a first index compares each name many times
def norm_name(name: str) -> str:
    """How names compare when resolving links: NFC, case-folded, spaces collapsed, no ``.md``."""
    text = unicodedata.normalize("NFC", name).strip().replace("\\", "/")
    lower = text.casefold()
    for suffix in (".md", ".markdown"):
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
            break
    return " ".join(lower.split())


def ref_key(norm: str) -> str:
    """The file name a normalised reference looks up: its last path segment (a qualified
    ``mount:name`` looks up the name)."""
    return split_mount(norm)[1].rsplit("/", 1)[-1]


def file_key(path: str) -> str:
    """The lookup key of a vault file: its file name as links compare it (``.md`` off)."""
    return norm_name(posixpath.basename(split_mount(path)[1]))


def find_file(norm: str, origin: str | None,
              candidates: Sequence[VaultFile]) -> tuple[VaultFile, str] | None:
    """The file Obsidian opens for the link ``norm`` written in page ``origin``, and how it was
    chosen (``path``: only one fits, ``folder``: the one in the linking page's folder,
    ``shortest``: the shortest of several paths). ``candidates`` share the link's file name."""
    name = ref_key(norm)
    if "/" in norm:
        # A Markdown file kept as an attachment (an import's original under sources/imports/)
        # opens by its full path, ``[[sources/imports/…/Peter.md#L10]]``, as in Obsidian.
        want = norm.removeprefix("/")
        kept = next((c for c in candidates if not c.markdown and c.norm == want
                     and c.path.lower().endswith((".md", ".markdown"))), None)
        if kept is not None and not any(c.markdown and c.norm == want for c in candidates):
            return kept, "path"
    pool: list[VaultFile] = []
    if "." in name:  # an extension of its own: that file first, else name.md
        pool = [c for c in candidates if not c.markdown]
    if not pool:
        pool = [c for c in candidates if c.markdown]
    if not pool:
        return None
    if "/" not in norm and len(pool) == 1:
        return pool[0], "path"
    folder = posixpath.dirname(norm_name(origin)) if origin else ""
    want = norm
    if want.startswith(("./", "../")):
        want = want.removeprefix("./")
        base = folder
        while want.startswith("../"):
            want, base = want[3:], posixpath.dirname(base)
        want = f"{base}/{want}" if base else want
        exact = next((c for c in pool if c.norm == want), None)
        if exact is not None:
            return exact, "path"
    rooted = want.startswith("/")
    want = want.removeprefix("/")
    exact = next((c for c in pool if c.norm == want), None)
    if exact is not None:
        return exact, "path"
    if rooted:
        return None
    # As in Obsidian, a plain suffix of the path ("b/page" fits "xb/page"): same pick as it makes.
    fits = [c for c in pool if c.norm.endswith(want)]
    if not fits:
        return None
    if len(fits) == 1:
        return fits[0], "path"
    near = [c for c in fits if folder and c.norm.startswith(folder + "/")]
    ranked = sorted(near or fits, key=lambda c: (len(c.path), c.path.casefold(), c.path))
    return ranked[0], ("folder" if near else "shortest")


def resolve(norm: str, origin: str | None, files: Sequence[VaultFile],
            names: Sequence[tuple[int, int]], *, plain: bool = False) -> Resolved:
    """Where a reference leads from page ``origin``: a file by Obsidian's rules, else a page by
    title (priority 3), alias (4) or heading alias (5) from ``names`` (priority, page id).
    A ``plain`` name (a frontmatter value, an @mention) only ever means a page."""
    pool = [f for f in files if f.page_id is not None] if plain else files
    hit = find_file(norm, origin, pool)
    if hit is not None:
        found, via = hit
        if found.page_id is not None:
            return Resolved("resolved", found.page_id, None, via)
        return Resolved("file", None, found.path, via)
    for priority, via in ((3, "title"), (4, "alias"), (5, "heading")):
        pages = {page_id for p, page_id in names if p == priority}
        if len(pages) == 1:
            return Resolved("resolved", pages.pop(), None, via)
        if pages:
            return Resolved("ambiguous", via=via)
    return UNRESOLVED


def resolve_mounted(norm: str, origin: str | None, files: Sequence[VaultFile],
                    names: Sequence[tuple[int, int, str]], *, plain: bool = False,
                    mounts: frozenset[str] = frozenset(),
                    federated: frozenset[str] = frozenset()) -> Resolved:
    """:func:`resolve` across mounts: ``names`` are (priority, page id, mount).

    A qualified reference ``mount:name`` looks only in that mount (unresolved when no such mount
    exists). A plain one looks in its own mount first (the vault's own pages for a vault page),
    then in the vault and the ``federated`` mounts; a mount searched only when named is never
    reached by a plain link from elsewhere."""
    home, origin_rel = split_mount(origin) if origin else ("", None)
    wanted, rest = split_mount(norm)
    if wanted:
        if wanted not in mounts:
            return UNRESOLVED
        return _resolve_in(rest, origin_rel if wanted == home else None, files, names,
                           {wanted}, plain)
    found = _resolve_in(norm, origin_rel, files, names, {home}, plain)
    if found.state != "unresolved" or not mounts:
        return found
    return _resolve_in(norm, None, files, names, ({""} | federated) - {home}, plain)


def _resolve_in(norm: str, origin: str | None, files: Sequence[VaultFile],
                names: Sequence[tuple[int, int, str]], where: set[str],
                plain: bool) -> Resolved:
    return resolve(norm, origin, [f for f in files if f.mount in where],
                   [(p, i) for p, i, m in names if m in where], plain=plain)


# ---------------------------------------------------------------------------------------------
# Anchors: the headings and block ids a [[Page#Heading]] or [[Page#^id]] may point at

# "text ^id" ends a block with an id; Obsidian's own help also writes one right after an embed
# ("![[image.png]]^id") and links to it, so a closing bracket may stand before the caret too.
_BLOCK_ID = re.compile(r"(?:^|[\s\])])\^([A-Za-z0-9-]+)\s*$")
_NOT_WORD = re.compile(r"[\W_]+")


def anchor_norm(text: str) -> str:
    """How a heading compares with a link's ``#Heading``: case-folded, punctuation as spaces.

    Obsidian drops characters a link cannot hold (``# | ^ : [ ]``) from the heading it links,
    so ``[[Page#Step 1 do X]]`` means the heading "Step 1: do X"; "^id" is kept for blocks."""
    text = unicodedata.normalize("NFC", text).strip()
    if text.startswith("^"):
        return "^" + text[1:].strip().casefold()
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


def page_anchors(page: Page) -> set[str]:
    """Every heading and block id of ``page``, normalised by :func:`anchor_norm`."""
    anchors = {anchor_norm(h.text) for h in page.headings}
    if "^" in page.text:
        code = sorted(page.code_ranges)
        code_starts = [start for start, _ in code]
        for number, line in enumerate(page.text.split("\n"), 1):
            if "^" not in line or number < page.body_start:
                continue
            match = _BLOCK_ID.search(line)
            if match is None:
                continue
            # Code blocks do not overlap: the one starting last at or before the line is the only
            # one that can hold it (a scan of every block per line was quadratic).
            at = bisect_right(code_starts, number) - 1
            if at < 0 or number > code[at][1]:
                anchors.add("^" + match.group(1).casefold())
    anchors.discard("")
    return anchors


# A citation's line range, `[[sources/email/abc#L4-L9]]`, as Kenning writes them (vault format).
_LINE_RANGE = re.compile(r"L\d+(?:-L?\d+)?")


def subpath_found(heading: str, anchors: set[str]) -> bool:
    """True when a link's ``#…`` part names an anchor in ``anchors`` (``A#B``: the heading B), or
    is a citation's line range (``#L4-L9``), which names lines, not a heading."""
    if _LINE_RANGE.fullmatch(heading.strip()):
        return True
    last = heading.rsplit("#", 1)[-1] if not heading.startswith("^") else heading
    wanted = anchor_norm(last)
    return not wanted or wanted == "^" or wanted in anchors
