"""Vault Markdown as inert HTML for the entity page: the one place the web view builds HTML.

markdown-it-py (CommonMark, tables, strikethrough) with raw HTML switched off, so ``<script>``,
``<img onerror=…>`` and friends in a page are shown as text. Links keep only ``http``,
``https`` and ``mailto`` schemes or a path inside the vault (``javascript:``, ``data:``,
``vbscript:`` and every other scheme become plain text). Obsidian's ``[[Target#Heading|alias]]``
links to the entity page of the page ``resolve`` names (a missing one is marked ``missing``
and searches for the name); ``![[Page]]`` embeds that page one level deep (an embed inside an
embed is a link); ``![[image.png]]`` shows the image through ``/file/``.

Every block carries ``data-line`` (its first line in the FILE, frontmatter counted) and the
first block of a line ``id="L<n>"``; blocks overlapping the highlighted range get class ``hl``.
Text from the vault never reaches the output unescaped: the renderer escapes it and the output
is wrapped in :class:`markupsafe.Markup` here, never elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape

from kenning.vault.markdown import resolve_relative, split_wikilink

MAX_CHARS = 300_000   # the most body text rendered at once; a larger page shows a window
MAX_LINES = 4_000     # ... and the most lines
EMBED_CHARS = 20_000  # an embedded page is shown up to this much
SAFE_SCHEMES = ("http", "https", "mailto")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".avif", ".bmp")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")
_SLUG_DROP = re.compile(r"[^\w\- ]+")

Resolve = Callable[[str], "str | None"]
Embed = Callable[[str, "str | None"], "str | None"]


@dataclass
class Rendered:
    """A page body as HTML, and what of it was shown."""

    html: Markup
    first_line: int          # the first file line shown
    last_line: int           # the last file line shown
    total_lines: int         # lines in the file
    cut: bool = False        # only a window of the body is shown
    body_start: int = 1      # the file line where the body starts (after the frontmatter)
    lead_line: int | None = None  # the line of the body's leading H1 when it is the title
    lead_hl: bool = False         # ... and it is in the highlighted range
    missing: list[str] = field(default_factory=list)  # wikilink targets no page answers


def slug(text: str) -> str:
    """The anchor of a heading: ``[[Page#Some Heading]]`` opens ``…#h-some-heading``."""
    return "h-" + "-".join(_SLUG_DROP.sub("", text).lower().split())


def safe_href(url: str) -> str | None:
    """``url`` when a browser following it runs nothing: a safe scheme or no scheme at all."""
    probe = _INVISIBLE.sub("", unquote(url))
    m = _SCHEME.match(probe)
    if m is None:
        return url
    return url if m.group(1).lower() in SAFE_SCHEMES else None


def is_image(name: str) -> bool:
    """Whether a file name is one the view shows as an image."""
    return name.lower().endswith(IMAGE_SUFFIXES)


# -- the parser ---------------------------------------------------------------------------------

def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[…]]`` and ``![[…]]`` as one ``wikilink`` token (meta: target, heading, alias, embed)."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    start = pos + (3 if embed else 2)
    end = src.find("]]", start)
    if end < 0 or end == start:
        return False
    inner = src[start:end]
    if "\n" in inner or "[" in inner or "]" in inner:
        return False
    if not silent:
        target, heading, alias = split_wikilink(inner)
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target, "heading": heading, "alias": alias, "embed": embed}
        token.content = inner
    state.pos = end + 2
    return True


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.validateLink = lambda url: safe_href(url) is not None  # type: ignore[method-assign]
    md.add_render_rule("wikilink", _render_wikilink)
    return md


def _render_wikilink(self: Any, tokens: list[Token], idx: int, options: Any,
                     env: dict[str, Any]) -> str:
    ctx: _Context = env["kenning"]
    return ctx.wikilink(tokens[idx].meta)


_MD = _parser()  # one parser; all per-render state travels in ``env``


# -- one render ---------------------------------------------------------------------------------

@dataclass
class _Context:
    path: str
    resolve: Resolve
    embed: Embed | None
    attachment: Resolve
    cache: dict[str, str | None] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def page(self, target: str) -> str | None:
        if target not in self.cache:
            self.cache[target] = self.resolve(target)
            if self.cache[target] is None:
                self.missing.append(target)
        return self.cache[target]

    def wikilink(self, meta: dict[str, Any]) -> str:
        target, heading, alias = meta["target"], meta["heading"], meta["alias"]
        shown = alias or " > ".join(p for p in (target, heading) if p) or meta.get("raw", "")
        if meta["embed"] and is_image(target):
            src = self.attachment(target)
            if src:
                return (f'<img class="embed-image" src="{escape(src)}" '
                        f'alt="{escape(alias or target)}" loading="lazy">')
            return (f'<span class="missing" title="no such image in the vault">'
                    f'{escape(target)}</span>')
        if not target:  # [[#Heading]]: this page
            return f'<a class="wikilink" href="#{escape(slug(heading or ""))}">{escape(shown)}</a>'
        found = self.page(target)
        if found is None:
            href = "/search" + "?q=" + quote(target)
            return (f'<a class="wikilink missing" href="{escape(href)}" '
                    f'title="no page named {escape(target)}: search for it">{escape(shown)}</a>')
        href = "/page/" + quote(found) + (f"#{slug(heading)}" if heading else "")
        link = f'<a class="wikilink" href="{escape(href)}">{escape(shown)}</a>'
        if meta["embed"] and self.embed is not None:
            inner = self.embed(found, heading)
            if inner is not None:
                return (f'<div class="embed" data-embed="{escape(found)}">'
                        f'<div class="embed-title">{link}</div>{inner}</div>')
        return link


def _fix_links(children: list[Token], ctx: _Context) -> None:
    """Relative Markdown links to vault pages open their entity page; images go through /file/;
    external links open without a referrer."""
    for tok in children:
        if tok.type == "link_open":
            href = str(tok.attrGet("href") or "")
            if not _SCHEME.match(href) and not href.startswith(("#", "/")):
                target = resolve_relative(ctx.path, unquote(href.split("#", 1)[0]))
                if target.endswith(".md"):
                    tok.attrSet("href", "/page/" + quote(target))
                elif target:
                    tok.attrSet("href", "/file/" + quote(target))
            elif _SCHEME.match(href):
                tok.attrSet("rel", "noopener noreferrer nofollow")
        elif tok.type == "image":
            src = str(tok.attrGet("src") or "")
            if not _SCHEME.match(src) and not src.startswith("/"):
                tok.attrSet("src", "/file/" + quote(resolve_relative(ctx.path, unquote(src))))
            tok.attrSet("loading", "lazy")


_CONTAINERS = {"bullet_list_open", "ordered_list_open", "blockquote_open", "table_open",
               "thead_open", "tbody_open"}


def _block_embeds(tokens: list[Token]) -> None:
    """A paragraph that is only a page embed becomes a ``div`` (an embed holds blocks)."""
    for i in range(1, len(tokens) - 1):
        tok = tokens[i]
        if tok.type != "inline" or not tok.children or tokens[i - 1].type != "paragraph_open":
            continue
        kids = [c for c in tok.children if not (c.type == "text" and not c.content.strip())]
        if len(kids) == 1 and kids[0].type == "wikilink" and kids[0].meta["embed"] \
                and not is_image(kids[0].meta["target"]):
            tokens[i - 1].tag = tokens[i + 1].tag = "div"
            tokens[i - 1].attrJoin("class", "embed-block")


def _tag_blocks(tokens: list[Token], offset: int, hl: tuple[int, int] | None,
                lines: bool) -> None:
    """data-line, id and hl on the blocks, an anchor in each heading."""
    seen: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.type == "inline" or tok.map is None or tok.hidden or tok.nesting == -1:
            continue
        first = tok.map[0] + offset
        last = max(first, tok.map[1] - 1 + offset)
        if tok.type == "heading_open" and i + 1 < len(tokens):
            text = tokens[i + 1].content
            anchor = Token("html_inline", "", 0)
            anchor.content = f'<span class="anchor" id="{escape(slug(text))}"></span>'
            if tokens[i + 1].children is not None:
                tokens[i + 1].children.insert(0, anchor)
        if not lines:
            continue
        tok.attrSet("data-line", str(first))
        if first not in seen:
            seen.add(first)
            tok.attrSet("id", f"L{first}")
        if hl and tok.type not in _CONTAINERS and first <= hl[1] and last >= hl[0]:
            tok.attrJoin("class", "hl")


def _render(body: str, offset: int, ctx: _Context, hl: tuple[int, int] | None,
            lines: bool = True, title: str | None = None) -> tuple[str, int | None]:
    """HTML of ``body`` (its first line is file line ``offset``); with ``title``, a leading H1
    that is the title is left out (the page shows it) and its line returned."""
    env = {"kenning": ctx}
    tokens = _MD.parse(body, env)
    lead_line = None
    if (title is not None and len(tokens) >= 3 and tokens[0].type == "heading_open"
            and tokens[0].tag == "h1" and tokens[0].map is not None
            and " ".join(tokens[1].content.split()) == " ".join(title.split())):
        lead_line = tokens[0].map[0] + offset
        del tokens[:3]
    for tok in tokens:
        if tok.type == "inline" and tok.children:
            _fix_links(tok.children, ctx)
    _block_embeds(tokens)
    _tag_blocks(tokens, offset, hl, lines)
    return _MD.renderer.render(tokens, _MD.options, env), lead_line


def body_start(text: str) -> int:
    """The 1-based file line where the body starts (after the frontmatter, if any)."""
    from kenning.vault.frontmatter import locate

    block = locate(text)
    if block is None or block.close_line is None:
        return 1
    return block.close_line + 1


def _window(lines: list[str], start: int, hl: tuple[int, int] | None, at: int | None
            ) -> tuple[int, int]:
    """(first, last) 0-based indexes into ``lines`` (the body's) of the part to render."""
    n = len(lines)
    centre = None
    if hl is not None:
        centre = hl[0] - start
    elif at is not None:
        centre = at - start
    lo = 0 if centre is None else max(0, min(centre - MAX_LINES // 4, n - 1))
    hi = lo
    size = 0
    while hi < n and hi - lo < MAX_LINES and size + len(lines[hi]) <= MAX_CHARS:
        size += len(lines[hi]) + 1
        hi += 1
    return lo, max(lo, hi - 1)


def render_page(text: str, *, path: str, resolve: Resolve, attachment: Resolve,
                embed: Embed | None = None, hl: tuple[int, int] | None = None,
                at: int | None = None, title: str | None = None) -> Rendered:
    """The body of a page (``text``: the whole file) as HTML with file line numbers.

    A body beyond :data:`MAX_CHARS` or :data:`MAX_LINES` is shown as a window of that size: the
    highlighted range (or line ``at``) near its top, else the start. A single line too long for
    the window is cut.
    """
    start = body_start(text)
    all_lines = text.split("\n")
    body_lines = all_lines[start - 1:]
    total = len(all_lines) - (1 if text.endswith("\n") else 0)
    ctx = _Context(path, resolve, embed, attachment)
    cut = len(body_lines) > MAX_LINES or len(text) > MAX_CHARS
    if cut:
        lo, hi = _window(body_lines, start, hl, at)
        chunk = body_lines[lo:hi + 1]
        if sum(len(x) for x in chunk) > MAX_CHARS:  # one enormous line
            chunk = [chunk[0][:MAX_CHARS] + " …"]
        body = "\n".join(chunk)
        first = start + lo
        last = start + hi
    else:
        body = "\n".join(body_lines)
        first, last = start, max(start, total)
    html, lead = _render(body, first, ctx, hl, title=title if first == start else None)
    return Rendered(Markup(html), first, last, total, cut=cut, missing=ctx.missing,
                    body_start=start, lead_line=lead,
                    lead_hl=bool(lead and hl and hl[0] <= lead <= hl[1]))


def render_embed(text: str, *, path: str, heading: str | None, resolve: Resolve,
                 attachment: Resolve) -> Markup:
    """Another page's body (or one section of it) inside this one: no line numbers, and its
    own embeds shown as links (one level, so a page embedding itself ends there)."""
    start = body_start(text)
    lines = text.split("\n")[start - 1:]
    if heading:
        lines = _section(lines, heading)
    body = "\n".join(lines)
    if len(body) > EMBED_CHARS:
        body = body[:EMBED_CHARS] + "\n\n…"
    ctx = _Context(path, resolve, None, attachment)
    html, _ = _render(body, start, ctx, None, lines=False)
    return Markup(html)


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def _section(lines: list[str], heading: str) -> list[str]:
    """The lines of the section under ``heading`` (to the next heading of its level or above)."""
    want = heading.strip().casefold()
    for i, line in enumerate(lines):
        m = _ATX.match(line)
        if m and m.group(2).strip().casefold() == want:
            level = len(m.group(1))
            out = [line]
            for rest in lines[i + 1:]:
                n = _ATX.match(rest)
                if n and len(n.group(1)) <= level:
                    break
                out.append(rest)
            return out
    return lines


_WIKI_TEXT = re.compile(r"\[\[([^\[\]\n]+?)\]\]")


def inline_links(text: str, resolve: Resolve) -> Markup:
    """A short text (a property value, a fact) escaped, its ``[[links]]`` made page links."""
    out: list[str] = []
    last = 0
    for m in _WIKI_TEXT.finditer(text):
        out.append(str(escape(text[last:m.start()])))
        target, heading, alias = split_wikilink(m.group(1))
        shown = alias or " > ".join(p for p in (target, heading) if p)
        found = resolve(target) if target else None
        if found:
            href = "/page/" + quote(found) + (f"#{slug(heading)}" if heading else "")
            out.append(f'<a class="wikilink" href="{escape(href)}">{escape(shown)}</a>')
        else:
            out.append(f'<span class="missing">{escape(shown)}</span>')
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def plain_snippet(text: str) -> str:
    """A search snippet as a person reads it: ``[[a|b]]`` as ``b``."""
    return _WIKI_TEXT.sub(lambda m: (split_wikilink(m.group(1))[2]
                                     or split_wikilink(m.group(1))[0]), text)


def marked(text: str, terms: list[str]) -> Markup:
    """``text`` escaped, the query's matched ``terms`` wrapped in ``<mark>``."""
    words = sorted({t for t in terms if t and len(t) > 1}, key=len, reverse=True)
    if not words:
        return Markup(escape(text))
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(str(escape(text[last:m.start()])))
        out.append(f"<mark>{escape(m.group())}</mark>")
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def properties(text: str, values: list[tuple[str, Markup]],
               hl: tuple[int, int] | None = None) -> Markup:
    """The frontmatter as a small table at the top of the body: each row carries the file
    lines of its key (``data-line``, ``id``), and rows a cited range covers get ``hl``."""
    from kenning.vault.frontmatter import key_lines, locate

    block = locate(text)
    if not values:
        return Markup("")
    starts = key_lines(block) if block is not None else {}
    close = block.close_line if block is not None and block.close_line else 0
    ordered = sorted(starts.values())
    rows = []
    for key, value in values:
        first = starts.get(key)
        attrs = ""
        if first is not None:
            later = [n for n in ordered if n > first]
            last = (later[0] if later else close or first + 1) - 1
            cls = ' class="hl"' if hl and first <= hl[1] and max(first, last) >= hl[0] else ""
            attrs = f' data-line="{first}" id="L{first}"{cls}'
        rows.append(f'<tr{attrs}><th scope="row">{escape(key)}</th><td>{value}</td></tr>')
    return Markup('<table class="props-table">' + "".join(rows) + "</table>")


def render_code(text: str, *, hl: tuple[int, int] | None = None, at: int | None = None
                ) -> Rendered:
    """A source file as numbered lines (each with its ``data-line`` and ``id``), the cited
    range highlighted; a long file shows the window around it, as a long page does."""
    lines = text.split("\n")
    total = len(lines) - (1 if text.endswith("\n") else 0)
    lines = lines[:total] or [""]
    lo, hi = 0, len(lines) - 1
    cut = len(lines) > MAX_LINES
    if cut:
        lo, hi = _window(lines, 1, hl, at)
    out = ['<pre class="code">']
    for number in range(lo + 1, hi + 2):
        mark = ' class="hl"' if hl and hl[0] <= number <= hl[1] else ""
        line = lines[number - 1]
        if len(line) > 2000:
            line = line[:2000] + " …"
        out.append(f'<span data-line="{number}" id="L{number}"{mark}>{escape(line)}\n</span>')
    out.append("</pre>")
    return Rendered(Markup("".join(out)), lo + 1, hi + 1, total, cut=cut)
