"""Markdown block structure and link extraction for vault pages.

Block structure (headings, code blocks, list items, paragraphs with their line ranges) comes from
markdown-it-py with the inline phase switched off: the index only needs line ranges, and skipping
inline parsing makes a 600-word note take well under a millisecond. Links are then found with
regular expressions inside the text-bearing blocks only, so links in code are never extracted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from markdown_it import MarkdownIt

# One parser for the process; block parsing keeps no state between calls.
_MD = MarkdownIt("commonmark")
_MD.core.ruler.disable("inline")


@dataclass(frozen=True)
class Heading:
    """A top-level heading (ATX or setext) with its 1-based file line."""

    line: int
    level: int
    text: str


@dataclass(frozen=True)
class Link:
    """A link from a page to another vault file (or to a heading/block of this page)."""

    target: str          # page or path, without "#…" and "|…"; "" means this page
    heading: str | None  # "Heading" or "^block" after '#'
    alias: str | None    # display text after '|' (wikilinks only)
    embed: bool          # ![[…]] or ![…](…)
    kind: str            # "wikilink" | "markdown"
    line: int
    sentence: str        # the sentence of the line that holds the link


@dataclass(frozen=True)
class Structure:
    """The block structure of a page body; all lines are 1-based file lines."""

    headings: tuple[Heading, ...]
    lead: Heading | None                         # an ATX H1 that is the body's first block
    code_ranges: tuple[tuple[int, int], ...]     # fenced/indented code, inclusive
    text_ranges: tuple[tuple[int, int], ...]     # paragraphs and headings, inclusive
    items: tuple[tuple[int, int], ...]           # top-level bullet list items, inclusive
    paragraphs: tuple[tuple[int, int], ...] = ()  # top-level paragraphs, inclusive


def scan(body: str, first_line: int) -> Structure:
    """Block structure of ``body`` (``\\n`` endings); its first line is file line ``first_line``."""
    tokens = _MD.parse(body)
    last = first_line + body.count("\n")
    headings: list[Heading] = []
    lead: Heading | None = None
    code: list[tuple[int, int]] = []
    texts: list[tuple[int, int]] = []
    items: list[tuple[int, int]] = []
    paragraphs: list[tuple[int, int]] = []
    top_bullet = False
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "inline":
            if tok.map:
                texts.append((tok.map[0] + first_line, tok.map[1] + first_line - 1))
        elif kind == "heading_open":
            if tok.level == 0 and tok.map:
                heading = Heading(tok.map[0] + first_line, int(tok.tag[1]),
                                  tokens[i + 1].content.strip())
                headings.append(heading)
                if i == 0 and heading.level == 1 and tok.markup == "#":
                    lead = heading  # on the body's first non-blank line: nothing precedes it
        elif kind == "paragraph_open":
            if tok.level == 0 and tok.map:
                paragraphs.append((tok.map[0] + first_line, tok.map[1] + first_line - 1))
        elif kind in ("fence", "code_block"):
            if tok.map:
                code.append((tok.map[0] + first_line,
                             min(tok.map[1] + first_line - 1, last)))
        elif kind == "bullet_list_open":
            if tok.level == 0:
                top_bullet = True
        elif kind == "ordered_list_open":
            if tok.level == 0:
                top_bullet = False
        elif kind == "list_item_open" and tok.level == 1 and top_bullet and tok.map:
            items.append((tok.map[0] + first_line, tok.map[1] + first_line - 1))
    return Structure(tuple(headings), lead, tuple(code), tuple(texts), tuple(items),
                     tuple(paragraphs))


# ---------------------------------------------------------------------------------------------
# Links

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|[^\s()<>]+(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# Math, as Obsidian reads it: $$…$$, or $…$ opened before and closed after a non-space, the closing
# $ not followed by a digit ("$5 and $10" is not math). Brackets inside are not links.
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$\w])\$(?=[^\s$])(?:[^$\n\\]|\\.)*?[^\s\\]\$(?![\d$])",
                   re.DOTALL)
_NOT_NL = re.compile(r"[^\n]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:|//")
_BOUNDARY = re.compile(r"[.!?](?=\s|$)|[。！？]")
_LINE_PREFIX = re.compile(
    r"[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+][ \t]+|\d{1,9}[.)][ \t]+|#{1,6}[ \t]+)?")


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """Split the inside of ``[[…]]`` into (target, heading, alias); ``\\|`` counts as ``|``."""
    target, bar, alias = inner.replace("\\|", "|").partition("|")
    target, hash_, heading = target.partition("#")
    return (target.strip(), (heading.strip() or None) if hash_ else None,
            (alias.strip() or None) if bar else None)


def plain_name(text: str) -> str:
    """A heading or ``title:`` as a name: links shown as Obsidian shows them, one line.

    ``[[Ethics]] Doctrine`` → ``Ethics Doctrine``; ``[[a|b]]`` → ``b``; ``[[a#h]]`` → ``a > h``;
    ``[text](url)`` → ``text``.
    """
    if "[" in text:
        text = WIKILINK.sub(_link_display, text)
        text = _MDLINK.sub(lambda m: m.group(2), text)
    return " ".join(text.split())


def _link_display(match: re.Match[str]) -> str:
    target, heading, alias = split_wikilink(match.group(2))
    if alias:
        return alias
    return " > ".join(p for p in (target, heading) if p)


def _blank(match: re.Match[str]) -> str:
    return _NOT_NL.sub(" ", match.group(0))


def _blank_code(chunk: str) -> str:
    """``chunk`` with code spans, HTML comments and $math$ blanked out (lines and columns kept):
    Obsidian reads no link and no tag inside them."""
    if "`" in chunk:
        chunk = _CODE_SPAN.sub(_blank, chunk)
    if "<!--" in chunk:
        chunk = _COMMENT.sub(_blank, chunk)
    if "$" in chunk:
        chunk = _MATH.sub(_blank, chunk)
    return chunk


def extract_links(lines: list[str], text_ranges: tuple[tuple[int, int], ...],
                  first_line: int) -> tuple[Link, ...]:
    """Wikilinks and vault Markdown links in ``text_ranges``; ``lines[0]`` is ``first_line``."""
    found: list[tuple[int, int, int, Link]] = []  # (line, start col, end col, link)
    for start, end in text_ranges:
        chunk_lines = lines[start - first_line : end - first_line + 1]
        chunk = "\n".join(chunk_lines)
        if "[" not in chunk:
            continue
        chunk = _blank_code(chunk)
        starts = [0]
        for piece in chunk_lines[:-1]:
            starts.append(starts[-1] + len(piece) + 1)

        def where(offset: int, starts: list[int] = starts, start: int = start) -> tuple[int, int]:
            idx = 0
            while idx + 1 < len(starts) and starts[idx + 1] <= offset:
                idx += 1
            return start + idx, offset - starts[idx]

        if "[[" in chunk:
            for m in WIKILINK.finditer(chunk):
                target, heading, alias = split_wikilink(m.group(2))
                if not target and heading is None:
                    continue
                line, col = where(m.start())
                found.append((line, col, col + len(m.group(0)),
                              Link(target, heading, alias, bool(m.group(1)), "wikilink", line, "")))
            chunk = WIKILINK.sub(_blank, chunk)
        if "](" in chunk:
            for m in _MDLINK.finditer(chunk):
                dest = m.group(3)
                if dest.startswith("<"):
                    dest = dest[1:-1]
                dest = dest.strip()
                if not dest or _SCHEME.match(dest):
                    continue
                path, hash_, anchor = dest.partition("#")
                target = unquote(path).strip()
                heading = (unquote(anchor).strip() or None) if hash_ else None
                if not target and heading is None:
                    continue
                line, col = where(m.start())
                found.append((line, col, col + len(m.group(0)),
                              Link(target, heading, None, bool(m.group(1)), "markdown", line, "")))
    if not found:
        return ()
    found.sort(key=lambda f: (f[0], f[1]))
    spans_by_line: dict[int, list[tuple[int, int]]] = {}
    for line, s, e, _ in found:
        spans_by_line.setdefault(line, []).append((s, e))
    out: list[Link] = []
    for line, s, e, link in found:
        raw = lines[line - first_line]
        sentence = sentence_at(raw, s, e, spans_by_line[line])
        out.append(Link(link.target, link.heading, link.alias, link.embed, link.kind, line,
                        sentence))
    return tuple(out)


# An inline tag: '#' at the start of a line or after white space, then letters, digits, '_', '-'
# and '/' (nested tags); Obsidian's rule. Tags that are only digits (#123) are not tags.
INLINE_TAG = re.compile(r"(?<!\S)#([\w/-]+)")
_TAG_TEXT = re.compile(r"[\w/-]+")


def clean_tag(raw: str) -> str | None:
    """A tag as Obsidian reads it (``#`` and outer ``/`` dropped), or None when it is not one."""
    tag = raw.strip().removeprefix("#").strip("/")
    if not _TAG_TEXT.fullmatch(tag) or all(c.isdigit() or c == "/" for c in tag):
        return None
    return tag


def extract_tags(lines: list[str], text_ranges: tuple[tuple[int, int], ...],
                 first_line: int) -> tuple[tuple[str, int], ...]:
    """Inline ``#tags`` in ``text_ranges`` as (tag, line), in order; never in code, comments,
    links or URLs. ``lines[0]`` is ``first_line``."""
    out: list[tuple[str, int]] = []
    for start, end in text_ranges:
        chunk_lines = lines[start - first_line : end - first_line + 1]
        if not any("#" in line for line in chunk_lines):
            continue
        chunk = _blank_code("\n".join(chunk_lines))
        if "[[" in chunk:
            chunk = WIKILINK.sub(_blank, chunk)
        if "](" in chunk:
            chunk = _MDLINK.sub(_blank, chunk)
        if "#" not in chunk:
            continue
        for offset, piece in enumerate(chunk.split("\n")):
            if "#" not in piece:
                continue
            for m in INLINE_TAG.finditer(piece):
                tag = clean_tag(m.group(1))
                if tag:
                    out.append((tag, start + offset))
    return tuple(out)


def sentence_at(line: str, start: int, end: int,
                spans: Sequence[tuple[int, int]] = ()) -> str:
    """The sentence of ``line`` around columns ``start:end``; ends inside ``spans`` don't count."""
    prefix = _LINE_PREFIX.match(line)
    begin = prefix.end() if prefix else 0
    stop = len(line)
    for m in _BOUNDARY.finditer(line):
        pos = m.start()
        if any(s <= pos < e for s, e in spans):
            continue
        if pos < start:
            begin = max(begin, m.end())
        elif pos >= end:
            stop = m.end()
            break
    return line[begin:stop].strip()


def resolve_relative(page_path: str, target: str) -> str:
    """Resolve a Markdown link target against the linking page's folder (POSIX, no ``..`` left)."""
    if target.startswith("/"):
        parts: list[str] = []
        rel = target[1:]
    else:
        parts = page_path.split("/")[:-1]
        rel = target
    for piece in rel.split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            if parts:
                parts.pop()
            continue
        parts.append(piece)
    return "/".join(parts)
