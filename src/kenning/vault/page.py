"""The page model: parse a vault Markdown file, render its owned parts, edit them in place.

This module is the one place that reads and writes Kenning's Markdown syntax; the syntax itself is
the contract in docs/vault-format.md. Parsing never raises on bad content — it reports Problems
with file lines. Editing functions are pure (text in, text out) and touch only the lines they own;
callers write the result atomically with kenning.vault.fsio.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.vault import frontmatter as _fm
from kenning.vault.frontmatter import FrontmatterError, set_frontmatter
from kenning.vault.layout import slug
from kenning.vault.markdown import (
    INLINE_TAG,
    WIKILINK,
    Heading,
    Link,
    Structure,
    clean_tag,
    extract_links,
    extract_tags,
    plain_name,
    scan,
    split_wikilink,
)
from kenning.vault.mounts import split_mount

__all__ = [
    "OWNED_KEYS",
    "Fact",
    "FrontmatterError",
    "Heading",
    "ItemLine",
    "Link",
    "Page",
    "PageEditError",
    "Problem",
    "RetainItem",
    "Tag",
    "TimelineEntry",
    "add_fact",
    "add_item",
    "append_retain",
    "append_timeline",
    "new_page",
    "page_title",
    "parse_page",
    "remove_item",
    "render_fact",
    "render_item",
    "render_retain",
    "render_timeline",
    "replace_fact",
    "replace_item",
    "set_frontmatter",
    "set_summary",
]

OWNED_KEYS: tuple[str, ...] = (
    "type", "aliases", "domain", "status", "created", "updated", "emails", "organization", "role",
    "domains", "date", "attendees", "key_people", "related", "see_also", "supersedes", "decided",
    "because", "rejected", "title", "first_seen", "last_seen",
)


@dataclass(frozen=True)
class Problem:
    """Something in a page that Kenning could not use as written; the rest still parses."""

    line: int
    code: str      # frontmatter | vocabulary | fact | timeline | retain | tag | item
    message: str
    field: str | None = None


@dataclass(frozen=True)
class Fact:
    """One line under ``## Facts``: a typed relation or a plain statement, with its fields."""

    line: int
    relation: str | None
    target: str | None
    text: str
    valid_from: str | None = None
    valid_to: str | None = None
    status: str = "active"
    successor: str | None = None
    epistemic: str = "unknown"
    confidence: float | None = None
    source: str | None = None
    block_id: str | None = None
    recorded: str | None = None    # when Kenning learned it (bi-temporal: belief time)
    expired: str | None = None     # when Kenning retired it (superseded or invalidated)
    seen: str | None = None        # the date of the first evidence of it (not when it began)


@dataclass(frozen=True)
class TimelineEntry:
    """One dated line under ``## Timeline``."""

    line: int
    date: str
    text: str
    source: str | None = None


@dataclass(frozen=True)
class RetainItem:
    """One typed bullet under ``## Retain`` (W world, B experience, O opinion, S summary)."""

    line: int
    kind: str
    entities: tuple[str, ...]
    confidence: float | None
    text: str


@dataclass(frozen=True)
class ItemLine:
    """One bullet under ``## Commitments``, ``## Open items``, ``## Action items`` or
    ``## Decisions``: a commitment, an ask or a decision (docs/vault-format.md, "Items").

    Parties (``who``, ``to``) are the raw field values: a wikilink, ``me`` for the vault's
    owner, or a plain name. ``status`` is derived: ``done`` for a checked box (or a
    ``[completion:: …]`` field), ``decided`` for a decision, else ``open``."""

    line: int
    section: str                   # commitments | open items | action items | decisions
    kind: str                      # commitment | ask | decision
    text: str
    checked: bool | None = None    # ``[x]`` True, ``[ ]`` False, no box None
    date: str | None = None        # when it was said (the leading date)
    who: str | None = None
    to: tuple[str, ...] = ()
    due: str | None = None
    completion: str | None = None  # when it was done / answered
    closed: str | None = None      # citation of the line that delivered / answered it
    because: str | None = None
    rejected: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    status: str = "open"           # open | done | decided | superseded
    by: str | None = None          # a superseded decision: what replaced it
    source: str | None = None
    block_id: str | None = None


@dataclass(frozen=True)
class Tag:
    """A tag of a page (frontmatter ``tags:`` or an inline ``#tag``) and the first line it is on."""

    name: str   # as written, without '#'; nested tags keep their '/'
    line: int


@dataclass(frozen=True)
class Page:
    """A parsed vault page; line numbers are 1-based file lines.

    ``title`` is what Obsidian shows (``title:``, else the file name); ``title_line`` and ``h1``
    are the first-line H1 that heads Kenning's summary (``summary``); ``about`` is what the page
    says it is about, for readers.
    """

    path: str
    text: str
    frontmatter: dict[str, Any]
    body_start: int
    title: str
    title_line: int | None
    aliases: tuple[str, ...]
    type: str | None
    domain: str | None
    summary: str
    summary_lines: tuple[int, int] | None
    facts: tuple[Fact, ...]
    timeline: tuple[TimelineEntry, ...]
    retain: tuple[RetainItem, ...]
    links: tuple[Link, ...]
    headings: tuple[Heading, ...]
    code_ranges: tuple[tuple[int, int], ...]
    problems: tuple[Problem, ...]
    h1: str | None = None                     # the first-line H1 as plain text
    about: str = ""                           # description:, summary:, else summary/paragraph
    about_lines: tuple[int, int] | None = None
    tags: tuple[Tag, ...] = ()
    items: tuple[ItemLine, ...] = ()          # commitments, asks and decisions

    @property
    def heading_alias(self) -> str | None:
        """The first-line H1 when it is another name than the title and the aliases, and the
        note's only H1 (a note with several uses them as section labels)."""
        h1 = self.h1
        if _h1_names_page(h1, self.title, self.aliases):
            return None
        if sum(1 for h in self.headings if h.level == 1) > 1:
            return None
        return h1


@dataclass(frozen=True)
class _Section:
    name: str       # facts | timeline | retain | one of ITEM_SECTIONS
    heading: int    # file line of the heading
    level: int
    end: int        # last file line of the section (inclusive)


@dataclass(frozen=True)
class _Parsed:
    page: Page
    sections: tuple[_Section, ...]
    items: tuple[tuple[int, int], ...] = ()
    last_line: int = 0
    closer: str | None = None   # closes a fence/HTML block the page ends inside (markdown.scan)


# ---------------------------------------------------------------------------------------------
# Line syntax

# Item sections and the kind of item each holds (a ``[kind:: …]`` field overrides it).
ITEM_SECTIONS = {"commitments": "commitment", "open items": "ask", "action items": "commitment",
                 "decisions": "decision"}
_SECTION_NAMES = {"facts": "facts", "timeline": "timeline", "retain": "retain",
                  **{name: name for name in ITEM_SECTIONS}}
_BULLET = re.compile(r"[ \t]*[-*+][ \t]+(.*?)[ \t]*$")
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$")
_FIELD = re.compile(r"[ \t]*\[([A-Za-z][\w-]*)::[ \t]*((?:\[\[[^\[\]\n]*\]\]|[^\[\]\n])*?)[ \t]*\]")
_REL_PREFIX = re.compile(r"([A-Za-z][\w-]*)::(?=\s|$)[ \t]*")
_LEADING_LINK = re.compile(r"\[\[([^\[\]|#\n]+)\]\](?:[ \t]+|$)")
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
_TIMELINE = re.compile(
    r"(?P<date>\d{4}(?:-\d{2}(?:-\d{2})?)?(?: \d{2}:\d{2})?)"
    r"(?:[ \t]*[—–:][ \t]*|[ \t]*-(?:[ \t]+|$))(?P<text>.*)")
_MENTION = r"@(?:\[\[[^\[\]\n]+\]\]|[\w][\w.\-]*)"
_RETAIN = re.compile(
    rf"(?P<kind>[A-Za-z]+)(?:\([ \t]*c[ \t]*=[ \t]*(?P<c>[^)]*?)[ \t]*\))?"
    rf"(?P<mentions>(?:[ \t]+{_MENTION})*)[ \t]*:(?:[ \t]+|$)(?P<text>.*)")
_MENTION_RE = re.compile(rf"(?<![\w@]){_MENTION}")
_BARE_NAME = re.compile(r"[\w][\w.\-]*")
_LONE_CR = re.compile(r"\r(?!\n)")
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")

_FACT_FIELDS = ("from", "to", "seen", "recorded", "expired", "status", "by", "epistemic",
                "confidence", "source")
# Fact fields whose values come from the vocabulary.
_FOLDERS: dict[str, Callable[[str], str]] = {"status": vocabulary.fact_status,
                                              "epistemic": vocabulary.epistemic}


def _valid_date(value: str, *, time: bool = False) -> bool:
    day, _, clock = value.partition(" ")
    m = _DATE.fullmatch(day)
    if m is None or (clock and not time):
        return False
    year, month, dom = m.groups()
    try:
        _dt.date(int(year), int(month or 1), int(dom or 1))
    except ValueError:
        return False
    if clock:
        hh, _, mm = clock.partition(":")
        return len(hh) == 2 and len(mm) == 2 and hh.isdigit() and mm.isdigit() \
            and int(hh) < 24 and int(mm) < 60
    return True


def _confidence(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


def _parse_fact(line: int, content: str, problems: list[Problem]) -> Fact:
    block_id = None
    m = _BLOCK_ID.search(content)
    if m:
        block_id = m.group(1)
        content = content[: m.start()]
    values: dict[str, Any] = {}
    kept: list[str] = []
    pos = 0
    for m in _FIELD.finditer(content):
        key, raw = m.group(1).lower(), m.group(2).strip()
        ok = True
        if key not in _FACT_FIELDS:
            ok = False  # not ours: stays in the text untouched
        elif key in ("from", "to", "seen", "recorded", "expired"):
            if _valid_date(raw):
                values[key] = raw
            else:
                ok = False
                problems.append(Problem(line, "fact", f"[{key}:: {raw}] is not a date "
                                        "(YYYY, YYYY-MM or YYYY-MM-DD); kept in the text", key))
        elif key in _FOLDERS:
            try:
                values[key] = _FOLDERS[key](raw)
            except VocabularyError as exc:
                ok = False
                problems.append(Problem(line, "vocabulary", exc.message, key))
        elif key == "confidence":
            conf = _confidence(raw)
            if conf is None:
                ok = False
                problems.append(Problem(line, "fact", f"confidence {raw!r} must be a number "
                                        "from 0 to 1; kept in the text", key))
            else:
                values[key] = conf
        else:  # by, source
            values[key] = raw
        if ok:
            kept.append(content[pos : m.start()])
            pos = m.end()
    kept.append(content[pos:])
    text = "".join(kept).strip()
    relation = target = None
    m = _REL_PREFIX.match(text)
    if m:
        try:
            relation = vocabulary.relation(m.group(1))
        except VocabularyError as exc:
            problems.append(Problem(line, "vocabulary", exc.message + "; read as a statement",
                                    "relation"))
        else:
            text = text[m.end():]
            lead = _LEADING_LINK.match(text)
            if lead:
                target = lead.group(1).strip()
                text = text[lead.end():]
            else:
                first = WIKILINK.search(text)
                if first:
                    target = split_wikilink(first.group(2))[0] or None
            text = text.strip()
    return Fact(line, relation, target, text, values.get("from"), values.get("to"),
                values.get("status", "active"), values.get("by"),
                values.get("epistemic", vocabulary.EPISTEMIC_DEFAULT), values.get("confidence"),
                values.get("source"), block_id, values.get("recorded"), values.get("expired"),
                values.get("seen"))


def _parse_timeline(line: int, content: str, problems: list[Problem]) -> TimelineEntry | None:
    m = _TIMELINE.fullmatch(content)
    if m is None or not _valid_date(m.group("date"), time=True):
        problems.append(Problem(line, "timeline", "timeline bullets start with a date "
                                "(YYYY, YYYY-MM or YYYY-MM-DD, optional HH:MM) and '—'"))
        return None
    text, source = m.group("text"), None
    for f in _FIELD.finditer(text):
        if f.group(1).lower() == "source":
            source = f.group(2).strip()
            text = text[: f.start()] + text[f.end():]
            break
    return TimelineEntry(line, m.group("date"), text.strip(), source)


def _mention_name(raw: str) -> str:
    if raw.startswith("@[["):
        return split_wikilink(raw[3:-2])[0]
    return raw[1:].rstrip(".-").replace("_", " ")


def _parse_retain(line: int, content: str, problems: list[Problem]) -> RetainItem | None:
    m = _RETAIN.fullmatch(content)
    if m is None:
        problems.append(Problem(line, "retain", "retain bullets look like '- W @Name: text' "
                                "(kinds W, B, O, S)"))
        return None
    kind = m.group("kind").upper()
    if kind not in vocabulary.RETAIN_KINDS:
        problems.append(Problem(line, "retain", f"unknown retain kind {m.group('kind')!r}; "
                                f"allowed: {', '.join(vocabulary.RETAIN_KINDS)}", "kind"))
        return None
    conf = None
    if m.group("c") is not None:
        conf = _confidence(m.group("c"))
        if conf is None:
            problems.append(Problem(line, "retain", f"confidence {m.group('c')!r} must be a "
                                    "number from 0 to 1", "confidence"))
    text = m.group("text").strip()
    entities: list[str] = []
    for raw in (*_MENTION_RE.findall(m.group("mentions")), *_MENTION_RE.findall(text)):
        name = _mention_name(raw)
        if name and name not in entities:
            entities.append(name)
    return RetainItem(line, kind, tuple(entities), conf, text)


_CHECKBOX = re.compile(r"\[(?P<mark>[ xX/\-])\][ \t]+")
_ITEM_DATE = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})[ \t]*[—–][ \t]*")
_OWNER_LABEL = re.compile(r"(?P<who>[^\W\d_][\w.' -]{0,38}[\w.])[ \t]*:[ \t]+(?=\S)")
_TASKS_DUE = re.compile(r"[ \t]*\U0001F4C5\ufe0f?[ \t]*(\d{4}-\d{2}-\d{2})")
_TASKS_DONE = re.compile(r"[ \t]*\u2705\ufe0f?[ \t]*(\d{4}-\d{2}-\d{2})")
_DUE_IN_TEXT = re.compile(r"\b(?:by|due|before|until)[ \t]+(\d{4}-\d{2}-\d{2})\b", re.IGNORECASE)
_ITEM_LISTS = ("to", "rejected", "about")
_ITEM_ONE = ("who", "due", "completion", "closed", "because", "status", "by", "source",
             "kind")
_ITEM_KINDS = ("commitment", "ask", "decision")
_ITEM_STATUSES = ("open", "done", "decided", "superseded")


def _parse_item(line: int, section: str, content: str, problems: list[Problem]) -> ItemLine:
    """A bullet of an item section; lenient (a person's own bullet is an item as written)."""
    block_id = None
    m = _BLOCK_ID.search(content)
    if m:
        block_id = m.group(1)
        content = content[: m.start()]
    checked = None
    m = _CHECKBOX.match(content)
    if m:
        checked = m.group("mark") in "xX"
        content = content[m.end():]
    date = None
    m = _ITEM_DATE.match(content)
    if m and _valid_date(m.group("date")):
        date = m.group("date")
        content = content[m.end():]
    one: dict[str, str] = {}
    many: dict[str, list[str]] = {k: [] for k in _ITEM_LISTS}
    kept: list[str] = []
    pos = 0
    for f in _FIELD.finditer(content):
        key, raw = f.group(1).lower(), f.group(2).strip()
        ok = key in _ITEM_LISTS or key in _ITEM_ONE
        if ok and key in ("due", "completion") and not _valid_date(raw):
            ok = False
            problems.append(Problem(line, "item", f"[{key}:: {raw}] is not a date "
                                    "(YYYY-MM-DD); kept in the text", key))
        elif ok and key == "kind" and raw.lower() not in _ITEM_KINDS:
            ok = False
            problems.append(Problem(line, "item", f"[kind:: {raw}] must be one of "
                                    f"{', '.join(_ITEM_KINDS)}; kept in the text", key))
        elif ok and key == "status" and raw.lower() not in _ITEM_STATUSES:
            ok = False
            problems.append(Problem(line, "item", f"[status:: {raw}] must be one of "
                                    f"{', '.join(_ITEM_STATUSES)}; kept in the text", key))
        if ok:
            if key in _ITEM_LISTS:
                many[key].append(raw)
            elif key not in one:
                one[key] = raw.lower() if key in ("kind", "status") else raw
            kept.append(content[pos : f.start()])
            pos = f.end()
    kept.append(content[pos:])
    text = "".join(kept)
    # The Obsidian Tasks plugin's own signifiers: 📅 due, ✅ done on.
    for key, mark in (("due", _TASKS_DUE), ("completion", _TASKS_DONE)):
        m = mark.search(text)
        if m and _valid_date(m.group(1)):
            one.setdefault(key, m.group(1))
            text = text[: m.start()] + text[m.end():]
    text = " ".join(text.split())
    if "due" not in one:  # "- [ ] Lena: pricing page copy by 2026-06-15"
        m = _DUE_IN_TEXT.search(text)
        if m and _valid_date(m.group(1)):
            one["due"] = m.group(1)
    kind = one.get("kind") or ITEM_SECTIONS[section]
    who = one.get("who")
    if who is None and kind != "decision":
        label = _OWNER_LABEL.match(text)  # "Priya: benchmark the cache" (meeting notes)
        if label:
            who = label.group("who").strip()
    status = one.get("status")
    if status is None:
        if kind == "decision":
            status = "decided"
        elif checked or one.get("completion"):
            status = "done"
        else:
            status = "open"
    return ItemLine(line, section, kind, text, checked, date, who, tuple(many["to"]),
                    one.get("due"), one.get("completion"), one.get("closed"), one.get("because"),
                    tuple(many["rejected"]), tuple(many["about"]), status, one.get("by"),
                    one.get("source"), block_id)


# ---------------------------------------------------------------------------------------------
# Parsing

_Report = Callable[[str, str, str], None]


def parse_page(text: str, path: str) -> Page:
    """Parse a page's text; never raises on bad content (see ``Page.problems``)."""
    return _analyse(text, path).page


def _analyse(text: str, path: str) -> _Parsed:
    src = text[1:] if text.startswith("\ufeff") else text
    problems: list[Problem] = []
    fm = _fm.read(src)
    if fm.error:
        problems.append(Problem(fm.error[0], "frontmatter", fm.error[1]))
    body = src[fm.body_offset:]
    if "\r" in body:
        body = _LONE_CR.sub(" ", body.replace("\r\n", "\n"))
    first = fm.body_start
    lines = body.split("\n")
    last_line = first + len(lines) - 1
    struct = scan(body, first)
    data = fm.data

    def key_problem(key: str, code: str, message: str) -> None:
        line = _fm.key_line(fm.block, key) or (fm.block.yaml_start if fm.block else 1)
        problems.append(Problem(line, code, message, key))

    page_type = _vocab_key(data, "type", vocabulary.entity_type, key_problem)
    page_domain = _vocab_key(data, "domain", vocabulary.domain, key_problem)
    aliases = _aliases(data.get("aliases"), key_problem)

    headings = struct.headings
    lead = struct.lead
    h1 = (plain_name(lead.text) or None) if lead is not None else None
    title = page_title(data, path, h1)
    title_line = lead.line if lead is not None else None

    summary, summary_lines = "", None
    if title_line is not None:
        stop = next((h.line for h in headings if h.line > title_line), last_line + 1)
        span = [n for n in range(title_line + 1, stop) if lines[n - first].strip()]
        if span:
            summary_lines = (span[0], span[-1])
            summary = "\n".join(lines[span[0] - first : span[-1] - first + 1]).strip()
    about, about_lines = _about(data, fm.block, lines, first, struct,
                                (summary, summary_lines) if _h1_names_page(h1, title, aliases)
                                else ("", None))
    tags = _tags(data, fm.block, lines, first, struct, key_problem,
                 INLINE_TAG.search(body) is not None)

    sections = _sections(headings, last_line)

    facts: list[Fact] = []
    timeline: list[TimelineEntry] = []
    retain: list[RetainItem] = []
    items: list[ItemLine] = []
    if sections:
        for start, owner in _owned_items(sections, struct.items):
            m = _BULLET.fullmatch(lines[start - first])
            if m is None or not m.group(1):
                continue
            content = m.group(1)
            if owner.name == "facts":
                facts.append(_parse_fact(start, content, problems))
            elif owner.name == "timeline":
                entry = _parse_timeline(start, content, problems)
                if entry:
                    timeline.append(entry)
            elif owner.name in ITEM_SECTIONS:
                items.append(_parse_item(start, owner.name, content, problems))
            else:
                item = _parse_retain(start, content, problems)
                if item:
                    retain.append(item)

    links = extract_links(lines, struct.text_ranges, first)
    page = Page(
        path=path, text=text, frontmatter=data, body_start=first, title=title,
        title_line=title_line, aliases=aliases, type=page_type, domain=page_domain,
        summary=summary, summary_lines=summary_lines, facts=tuple(facts),
        timeline=tuple(timeline), retain=tuple(retain), links=links, headings=headings,
        code_ranges=struct.code_ranges, problems=tuple(sorted(problems, key=lambda p: p.line)),
        h1=h1, about=about, about_lines=about_lines, tags=tags, items=tuple(items),
    )
    return _Parsed(page, tuple(sections), struct.items, last_line, struct.closer)


def _sections(headings: tuple[Heading, ...], last_line: int) -> tuple[_Section, ...]:
    """The Facts/Timeline/Retain sections, each running to the line before the next heading of
    its level or higher (one pass with a stack of open sections: linear in headings)."""
    out: list[_Section] = []
    open_: list[tuple[int, str, Heading]] = []  # (index in out, name, heading), levels rising
    for h in headings:
        while open_ and open_[-1][2].level >= h.level:
            i, name, head = open_.pop()
            out[i] = _Section(name, head.line, head.level, h.line - 1)
        name = _SECTION_NAMES.get(h.text.casefold()) if h.level >= 2 else None
        if name is not None:
            open_.append((len(out), name, h))
            out.append(_Section(name, h.line, h.level, last_line))
    return tuple(out)


def _owned_items(sections: tuple[_Section, ...], items: tuple[tuple[int, int], ...]
                 ) -> list[tuple[int, _Section]]:
    """(first line, section) of each top-level item inside a section; the innermost section
    wins. Sections nest or are disjoint, so one sweep with a stack finds each owner."""
    out: list[tuple[int, _Section]] = []
    stack: list[_Section] = []
    i = 0
    for start, _end in items:
        while i < len(sections) and sections[i].heading < start:
            while stack and stack[-1].end < sections[i].heading:
                stack.pop()
            stack.append(sections[i])
            i += 1
        while stack and stack[-1].end < start:
            stack.pop()
        if stack:
            out.append((start, stack[-1]))
    return out


def _vocab_key(data: dict[str, Any], key: str, fold: Callable[[str], str],
               report: _Report) -> str | None:
    if key not in data or data[key] is None:
        return None
    value = data[key]
    if not isinstance(value, str):
        report(key, "vocabulary", f"{key} must be a single word, not {type(value).__name__}")
        return None
    try:
        return str(fold(value))
    except VocabularyError as exc:
        report(key, "vocabulary", exc.message)
        return None


def _aliases(value: Any, report: _Report) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        raw: list[Any] = [value]
    elif isinstance(value, list):
        raw = value
    elif isinstance(value, int | float):
        raw = [str(value)]
    else:
        report("aliases", "frontmatter", "aliases must be a name or a list of names")
        return ()
    out: list[str] = []
    for item in raw:
        if isinstance(item, dict | list) or item is None:
            continue
        name = str(item).strip()
        if name and name not in out:
            out.append(name)
    return tuple(out)


def page_title(frontmatter: dict[str, Any], path: str, h1: str | None = None) -> str:
    """A page's title, the one rule (docs/vault-format.md §2): ``title:``, else the file name.

    ``h1`` is the page's first-line H1; it is the title only when the file name is its old
    Kenning slug (``people/sarah-chen.md`` with ``# Sarah Chen``): the same name, written out.
    """
    raw = frontmatter.get("title")
    if isinstance(raw, str) and plain_name(raw):
        return plain_name(raw)
    stem = posixpath.splitext(posixpath.basename(split_mount(path)[1]))[0]
    # A slug is lower case without spaces: only then is the slug worth computing.
    if h1 and h1 != stem and stem == stem.lower() and " " not in stem \
            and slug(h1) == stem:
        return h1
    return stem


def _h1_names_page(h1: str | None, title: str, aliases: Iterable[str]) -> bool:
    """No first-line H1, or one that is the page's title or an alias: it names the page (else
    it is a heading alias, or a section label such as "# Todo")."""
    return not h1 or _same_name(h1, title) or any(_same_name(h1, a) for a in aliases)


def _same_name(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


ABOUT_CHARS = 320  # a first paragraph used as the summary is cut at a sentence within this
_ABOUT_KEYS = ("description", "summary")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]")
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)")


def _about(data: dict[str, Any], block: _fm.FrontmatterBlock | None, lines: list[str],
           first: int, struct: Structure, summary: tuple[str, tuple[int, int] | None]
           ) -> tuple[str, tuple[int, int] | None]:
    """What the page says it is about, and its lines: ``description:``/``summary:``, else the
    summary under the title H1, else the first paragraph (cut at a sentence)."""
    for key in _ABOUT_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip(), _key_span(block, key)
    if summary[0]:
        return summary
    for start, end in struct.paragraphs:
        text = "\n".join(lines[n - first].strip() for n in range(start, end + 1))
        rest = _EMBED.sub(" ", text)
        if text.startswith("|") or not any(c.isalnum() for c in INLINE_TAG.sub(" ", rest)):
            continue  # a table, or only embeds and tags: nothing that says what the note is
        return _cut(text, start)
    return "", None


def _cut(text: str, start: int) -> tuple[str, tuple[int, int]]:
    """``text`` (lines from file line ``start``) cut to ``ABOUT_CHARS`` at a sentence end."""
    if len(text) <= ABOUT_CHARS:
        return text, (start, start + text.count("\n"))
    masked = WIKILINK.sub(lambda m: "x" * len(m.group(0)), text)  # "[[Dr. No]]" ends nothing
    stop = max((m.end() for m in _SENTENCE_END.finditer(masked, 0, ABOUT_CHARS)), default=0)
    if stop:
        cut = text[:stop]
    else:
        space = masked.rfind(" ", 0, ABOUT_CHARS)
        cut = text[: space if space > 0 else ABOUT_CHARS].rstrip() + "…"
    return cut.strip(), (start, start + text[: len(cut.rstrip("…"))].count("\n"))


def _key_span(block: _fm.FrontmatterBlock | None, key: str) -> tuple[int, int] | None:
    """File lines of a top-level frontmatter key and its indented value lines."""
    line = _fm.key_line(block, key)
    if line is None or block is None:
        return None
    yaml_lines = block.yaml_text.split("\n")
    end = line
    for n in range(line + 1, block.yaml_start + len(yaml_lines)):
        raw = yaml_lines[n - block.yaml_start].rstrip("\r")
        if raw.strip() and not raw[0].isspace():
            break
        if raw.strip():
            end = n
    return line, end


def _tags(data: dict[str, Any], block: _fm.FrontmatterBlock | None, lines: list[str],
          first: int, struct: Structure, report: _Report, inline: bool) -> tuple[Tag, ...]:
    """Frontmatter ``tags:`` (list or comma/space separated) and inline ``#tags``, each once
    (case-insensitive, first occurrence kept)."""
    found: dict[str, Tag] = {}
    for key in ("tags", "tag"):
        value = data.get(key)
        if value is None:
            continue
        items = value if isinstance(value, list) else [value]
        line = _fm.key_line(block, key) or (block.yaml_start if block else 1)
        for item in items:
            if isinstance(item, dict | list) or item is None:
                report(key, "tag", f"{key} must be a tag or a list of tags")
                continue
            for raw in re.split(r"[,\s]+", str(item)):
                if not raw:
                    continue
                tag = clean_tag(raw)
                if tag is None:
                    report(key, "tag", f"{raw!r} is not a tag (letters, digits, _, - and /, "
                                       "not only digits); not indexed")
                else:
                    found.setdefault(tag.casefold(), Tag(tag, line))
    if inline:  # the body has a '#' that could start a tag (most notes: none at all)
        for tag, line in extract_tags(lines, struct.text_ranges, first):
            found.setdefault(tag.casefold(), Tag(tag, line))
    return tuple(found.values())


# ---------------------------------------------------------------------------------------------
# Rendering


def _one_line(value: str) -> str:
    return value.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").strip()


def _num(value: float) -> str:
    return repr(float(value))


def render_fact(fact: Fact) -> str:
    """One ``- …`` line for a fact (no newline); default status/epistemic are left out."""
    text = _one_line(fact.text)
    if fact.relation:
        if fact.target:
            first = WIKILINK.search(text)
            if first is None or split_wikilink(first.group(2))[0] != fact.target:
                text = f"[[{fact.target}]] {text}".rstrip()
        out = f"- {fact.relation}:: {text}".rstrip()
    else:
        out = f"- {text}".rstrip()
    fields = [("from", fact.valid_from), ("to", fact.valid_to), ("seen", fact.seen),
              ("recorded", fact.recorded), ("expired", fact.expired),
              ("status", None if fact.status == "active" else fact.status),
              ("by", fact.successor),
              ("epistemic", None if fact.epistemic == vocabulary.EPISTEMIC_DEFAULT
               else fact.epistemic),
              ("confidence", None if fact.confidence is None else _num(fact.confidence)),
              ("source", fact.source)]
    for key, value in fields:
        if value is not None:
            out += f" [{key}:: {_one_line(value)}]"
    if fact.block_id:
        out += f" ^{fact.block_id}"
    return out


def render_timeline(entry: TimelineEntry) -> str:
    """One ``- DATE — text [source:: …]`` line (no newline)."""
    out = f"- {entry.date} — {_one_line(entry.text)}".rstrip()
    if entry.source:
        out += f" [source:: {_one_line(entry.source)}]"
    return out


def render_item(item: ItemLine) -> str:
    """One item line (no newline): ``- [ ] DATE — text [who:: …] [to:: …] [due:: …]
    [completion:: …] [closed:: …] [because:: …] [rejected:: …] [about:: …] [status:: …]
    [by:: …] [source:: …] ^id``; the box only when ``checked`` is set (the build sets it on
    commitments and asks, never on decisions); defaults are left out."""
    out = "-"
    if item.checked is not None:
        out += " [x]" if item.checked else " [ ]"
    if item.date:
        out += f" {item.date} —"
    out += f" {_one_line(item.text)}"
    default = ITEM_SECTIONS.get(item.section)
    labelled = item.who is not None and item.text.startswith(item.who + ":")
    fields: list[tuple[str, str | None]] = [
        ("kind", item.kind if item.kind != default else None),
        ("who", None if labelled else item.who),
        *(("to", t) for t in item.to), ("due", item.due), ("completion", item.completion),
        ("closed", item.closed), ("because", item.because),
        *(("rejected", r) for r in item.rejected), *(("about", a) for a in item.about),
        ("status", item.status if item.status not in ("open", "done", "decided") else None),
        ("by", item.by), ("source", item.source)]
    for key, value in fields:
        if value:
            out += f" [{key}:: {_one_line(value)}]"
    if item.block_id:
        out += f" ^{item.block_id}"
    return out


def _render_mention(name: str) -> str:
    bare = name.replace(" ", "_")
    if "_" not in name and _BARE_NAME.fullmatch(bare) and not bare.endswith((".", "-")):
        return "@" + bare
    return f"@[[{name}]]"


def render_retain(item: RetainItem) -> str:
    """One ``- K(c=…) @Name: text`` line (no newline)."""
    out = f"- {item.kind}"
    if item.confidence is not None:
        out += f"(c={_num(item.confidence)})"
    for name in item.entities:
        out += " " + _render_mention(name)
    text = _one_line(item.text)
    return out + (f": {text}" if text else ":")


def new_page(*, title: str, frontmatter: dict[str, Any], summary: str = "",
             facts: Iterable[Fact] = (), timeline: Iterable[TimelineEntry] = (),
             body: str = "") -> str:
    """Text of a new page: frontmatter (given key order), H1, summary, Facts, Timeline, body."""
    title = _one_line(title)
    if not title:
        raise ValueError("a page needs a non-empty title")
    blocks: list[str] = []
    if frontmatter:
        blocks.append("---\n" + _fm.render(frontmatter) + "---\n# " + title)
    else:
        blocks.append("# " + title)
    summary_text = _summary_text(summary)
    if summary_text:
        blocks.append(summary_text)
    fact_lines = [render_fact(f) for f in facts]
    if fact_lines:
        blocks.append("## Facts\n\n" + "\n".join(fact_lines))
    entry_lines = [render_timeline(e) for e in timeline]
    if entry_lines:
        blocks.append("## Timeline\n\n" + "\n".join(entry_lines))
    text = "\n\n".join(blocks) + "\n"
    if body:
        text += "\n" + body
    return text


def _summary_text(summary: str) -> str:
    text = summary.replace("\r\n", "\n").replace("\r", "\n").strip()
    for line in text.split("\n"):
        if _ATX.match(line):
            raise ValueError(f"a summary cannot contain a heading line: {line!r}")
    return text


# ---------------------------------------------------------------------------------------------
# Editing (line splicing; untouched lines keep every byte, including their line endings)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def text_lines(text: str) -> list[str]:
    """A file's lines as Kenning numbers them: split on ``\\n`` only, line endings removed."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _split(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _splice(text: str, start: int, stop: int, new: list[str]) -> str:
    """Replace file lines ``start``..``stop-1`` (1-based, half-open) with ``new`` lines."""
    nl = _newline(text)
    lines = _split(text)
    start = min(start, len(lines) + 1)
    stop = min(max(stop, start), len(lines) + 1)
    unterminated_end = bool(lines) and not lines[-1].endswith("\n")
    if unterminated_end and start > len(lines):
        lines[-1] += nl
    rendered = [n + nl for n in new]
    if unterminated_end and stop > len(lines) and rendered and start <= len(lines):
        # Replacing the last line of a file without a final newline keeps it without one.
        rendered[-1] = rendered[-1][: -len(nl)]
    return "".join(lines[: start - 1] + rendered + lines[stop - 1:])


def _is_blank(lines: list[str], line: int) -> bool:
    return 1 <= line <= len(lines) and not lines[line - 1].strip()


class PageEditError(KenningError, ValueError):
    """An edit that would not read back as written; the page is left as it was."""


def _append_to_section(text: str, parsed: _Parsed, name: str, rendered: str,
                       create_before: int | None) -> str:
    new_text = _appended(text, parsed, name, rendered, create_before)
    # Whatever the page holds, the appended line must read back as an item of its section
    # (not as code, a comment or another section's item): else nothing is written.
    if not _reads_back(new_text, name, rendered):
        raise PageEditError(f"cannot add to ## {name.capitalize()}: the line would not read "
                            "back as one of its items; nothing written", path=parsed.page.path)
    return new_text


def _reads_back(text: str, name: str, rendered: str) -> bool:
    """True when a line ``rendered`` of ``text`` is a top-level item of a ``name`` section
    (block structure only: cheaper than a whole parse, the same reading)."""
    src = text[1:] if text.startswith("\ufeff") else text
    block = _fm.locate(src)
    offset, first = (block.body_offset, block.body_start) if block else (0, 1)
    body = src[offset:]
    if "\r" in body:
        body = _LONE_CR.sub(" ", body.replace("\r\n", "\n"))
    lines = body.split("\n")
    struct = scan(body, first)
    sections = _sections(struct.headings, first + len(lines) - 1)
    return any(owner.name == name and lines[start - first].rstrip() == rendered
               for start, owner in _owned_items(sections, struct.items))


def _appended(text: str, parsed: _Parsed, name: str, rendered: str,
              create_before: int | None) -> str:
    lines = _split(text)
    section = next((s for s in parsed.sections if s.name == name), None)
    if section is not None:
        last = min(section.end, len(lines))
        while last > section.heading and not lines[last - 1].strip():
            last -= 1
        in_item = any(s <= last <= e for s, e in parsed.items if s > section.heading)
        new = [rendered] if in_item else ["", rendered]
        return _splice(text, last + 1, last + 1, _closed(lines, last, parsed, new))
    title = "## " + name.capitalize()
    if create_before is not None:
        new = [title, "", rendered, ""]
        if not _is_blank(lines, create_before - 1) and create_before > 1:
            new.insert(0, "")
        return _splice(text, create_before, create_before, new)
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    new = [title, "", rendered] if end == 0 else ["", title, "", rendered]
    return _splice(text, end + 1, end + 1, _closed(lines, end, parsed, new))


def _closed(lines: list[str], after: int, parsed: _Parsed, new: list[str]) -> list[str]:
    """``new`` lines to insert after file line ``after``, led by the line that closes a code
    fence or HTML block the page ends inside (as Obsidian and CommonMark read it, such a block
    runs to the end: what follows it would be swallowed). Only lines are added."""
    if parsed.closer is None or any(line.strip() for line in lines[after:]):
        return new
    return [parsed.closer, *new] if new[0] == "" else [parsed.closer, "", *new]


def add_fact(text: str, fact: Fact) -> str:
    """Append a fact to ``## Facts`` (created after the summary, before the item sections and
    ``## Timeline``)."""
    parsed = _analyse(text, "page.md")
    before: int | None = None
    # Facts come before the state and the history: the first item section or the timeline.
    later = [s.heading for s in parsed.sections if s.name == "timeline" or s.name in ITEM_SECTIONS]
    if later:
        before = min(later)
    elif parsed.page.title_line is not None:
        # Before the next level-1/2 heading: a ### heading right after the summary would
        # otherwise end up inside the new section.
        before = next((h.line for h in parsed.page.headings
                       if h.line > parsed.page.title_line and h.level <= 2), None)
    return _append_to_section(text, parsed, "facts", render_fact(fact), before)


def replace_fact(text: str, line: int, fact: Fact) -> str:
    """Rewrite the fact on file line ``line`` (its indentation and bullet marker are kept)."""
    if not any(f.line == line for f in _analyse(text, "page.md").page.facts):
        raise ValueError(f"line {line} is not a fact line")
    return _rewrite_bullet(text, line, render_fact(fact))


def _rewrite_bullet(text: str, line: int, rendered: str) -> str:
    """File line ``line`` rewritten as the ``- …`` line ``rendered``, keeping its indentation
    and bullet marker."""
    raw = _split(text)[line - 1].rstrip("\r\n")
    marker = re.match(r"\ufeff?[ \t]*[-*+][ \t]+", raw)
    prefix = marker.group(0) if marker else "- "
    return _splice(text, line, line + 1, [prefix + rendered[2:]])


def append_timeline(text: str, entry: TimelineEntry) -> str:
    """Append an entry to ``## Timeline`` (created at the end of the page if missing)."""
    return _append_to_section(text, _analyse(text, "page.md"), "timeline",
                              render_timeline(entry), None)


def append_retain(text: str, item: RetainItem) -> str:
    """Append a bullet to ``## Retain`` (created at the end of the page if missing)."""
    return _append_to_section(text, _analyse(text, "page.md"), "retain", render_retain(item),
                              None)


def add_item(text: str, item: ItemLine) -> str:
    """Append an item to its section (``item.section``), which is created when missing:
    before ``## Timeline`` if the page has one, else at the end of the page."""
    if item.section not in ITEM_SECTIONS:
        raise ValueError(f"{item.section!r} is not an item section")
    parsed = _analyse(text, "page.md")
    timeline = next((s for s in parsed.sections if s.name == "timeline"), None)
    before = timeline.heading if timeline is not None else None
    return _append_to_section(text, parsed, item.section, render_item(item), before)


def replace_item(text: str, line: int, item: ItemLine) -> str:
    """Rewrite the item on file line ``line`` (its indentation and bullet marker are kept)."""
    if not any(i.line == line for i in _analyse(text, "page.md").page.items):
        raise ValueError(f"line {line} is not an item line")
    return _rewrite_bullet(text, line, render_item(item))


def remove_item(text: str, line: int) -> str:
    """Remove the item on file line ``line`` (one line; its section heading stays)."""
    parsed = _analyse(text, "page.md")
    if not any(i.line == line for i in parsed.page.items):
        raise ValueError(f"line {line} is not an item line")
    return _splice(text, line, line + 1, [])


def set_summary(text: str, summary: str) -> str:
    """Replace the text between the H1 and the next heading; raises ValueError without an H1."""
    parsed = _analyse(text, "page.md")
    page = parsed.page
    if page.title_line is None:
        raise ValueError("the page has no '# Title' line to put a summary under")
    body = _summary_text(summary)
    summary_lines = body.split("\n") if body else []
    nxt = next((h.line for h in page.headings if h.line > page.title_line), None)
    if nxt is None:
        lines = _split(text)
        new = ["", *summary_lines] if summary_lines else []
        return _splice(text, page.title_line + 1, len(lines) + 1, new)
    new = ["", *summary_lines, ""] if summary_lines else [""]
    return _splice(text, page.title_line + 1, nxt, new)
