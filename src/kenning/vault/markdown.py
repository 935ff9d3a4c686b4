"""Markdown block structure and link extraction for vault pages.

Block structure (headings, code blocks, list items, paragraphs with their line ranges) comes from
markdown-it-py with the inline phase switched off: the index only needs line ranges, and skipping
inline parsing makes a 600-word note take well under a millisecond. Links are then found with
regular expressions inside the text-bearing blocks only, so links in code are never extracted.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

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
    # The line that closes the body's last block when it runs unclosed to the end (a code fence,
    # an HTML comment, <pre>…): text appended after it would be read inside that block.
    closer: str | None = None


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
                     tuple(paragraphs), _closer(tokens, body))


_CLOSING_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
# CommonMark's HTML blocks that run until a terminator (types 1-5; the others end at a blank
# line): the opening pattern, and the terminator as a line of its own.
_HTML_OPENERS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r" {0,3}<(script|pre|style|textarea)(?:\s|>|$)", re.IGNORECASE), None),
    (re.compile(r" {0,3}<!--"), "-->"),
    (re.compile(r" {0,3}<\?"), "?>"),
    (re.compile(r" {0,3}<![A-Za-z]"), ">"),
    (re.compile(r" {0,3}<!\[CDATA\["), "]]>"),
)


def _closer(tokens: Sequence[Token], body: str) -> str | None:
    """The line that ends the body's last top-level block if it is a fence or an HTML block
    left open to the end of the text, else None (the block parser's own reading, not a guess)."""
    last = next((t for t in reversed(tokens) if t.level == 0 and t.map), None)
    if last is None or last.type not in ("fence", "html_block"):
        return None
    assert last.map is not None
    lines = body.split("\n")
    content = len(lines)
    while content and not lines[content - 1].strip():
        content -= 1
    start, end = last.map
    if end < content:
        return None  # other lines follow: the block ended before the end
    final = lines[end - 1] if end - 1 < len(lines) else ""
    if last.type == "fence":
        char, size = last.markup[0], len(last.markup)
        m = _CLOSING_FENCE.fullmatch(final)
        if end - 1 > start and m and m.group(1)[0] == char and len(m.group(1)) >= size:
            return None
        return last.markup
    opener = lines[start]
    for pattern, terminator in _HTML_OPENERS[::-1]:  # CDATA before the general <!X
        m = pattern.match(opener)
        if m is None:
            continue
        if terminator is None:
            tags = ("</script>", "</pre>", "</style>", "</textarea>")
            if any(t in final.lower() for t in tags):
                return None
            return f"</{m.group(1).lower()}>"
        return None if terminator in final else terminator
    return None


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
            idx = bisect_right(starts, offset) - 1  # a scan from the top was quadratic
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
    by_line: dict[int, list[tuple[int, int, int, Link]]] = {}
    for item in found:
        by_line.setdefault(item[0], []).append(item)
    out: list[Link] = []
    for line, items in by_line.items():
        spans = [(s, e) for _, s, e, _ in items]
        sentences = sentences_at(lines[line - first_line], spans)
        for (_, _, _, link), sentence in zip(items, sentences, strict=True):
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
    merged = sorted({*spans, (start, end)})
    return sentences_at(line, merged)[merged.index((start, end))]


def sentences_at(line: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The sentence of ``line`` around each of ``spans`` (sorted by start); sentence ends inside
    a span don't count. One pass over the line and the spans: linear in links per line."""
    prefix = _LINE_PREFIX.match(line)
    floor = prefix.end() if prefix else 0
    # Sentence ends outside every span, as (position, end of the mark), in order.
    ends: list[tuple[int, int]] = []
    covered_until = -1  # the spans are sorted by start, so one moving index finds the cover
    i = 0
    for m in _BOUNDARY.finditer(line):
        pos = m.start()
        while i < len(spans) and spans[i][0] <= pos:
            covered_until = max(covered_until, spans[i][1])
            i += 1
        if pos < covered_until:
            continue
        ends.append((pos, m.end()))
    positions = [p for p, _ in ends]
    out = []
    for start, end in spans:
        before = bisect_left(positions, start)   # ends[:before] lie before the span
        after = bisect_left(positions, end)      # ends[after] is the first at or past its end
        begin = max(floor, ends[before - 1][1]) if before else floor
        stop = ends[after][1] if after < len(ends) else len(line)
        if stop - begin > SENTENCE_CHARS:
            # A "sentence" of a whole 100 KB line, once per link, is quadratic in memory.
            begin, stop = _window(line, begin, stop, start, end)
        out.append(line[begin:stop].strip())
    return out


SENTENCE_CHARS = 600  # longest link context kept; longer sentences are cut around the link
_CONTEXT = 240        # characters kept on each side of the link in a cut sentence


def _window(line: str, begin: int, stop: int, start: int, end: int) -> tuple[int, int]:
    """``begin..stop`` narrowed to about ``_CONTEXT`` characters either side of the link, at
    white space where there is some."""
    lo, hi = max(begin, start - _CONTEXT), min(stop, end + _CONTEXT)
    if lo > begin:
        space = line.find(" ", lo, start)
        lo = space + 1 if space >= 0 else lo
    if hi < stop:
        space = line.rfind(" ", end, hi)
        hi = space if space >= 0 else hi
    return lo, hi


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
