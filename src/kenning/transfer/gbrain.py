"""gbrain: the Markdown export of a brain (``gbrain export --dir DIR``).

gbrain (github.com/garrytan/gbrain) writes each page as ``<slug>.md``: YAML frontmatter
(``type``, ``title``, the page's other keys, ``tags``), then the page's **compiled truth** — the
current synthesis, rewritten as evidence changes — and, after a ``<!-- timeline -->`` line, its
**timeline**: append-only dated evidence, ``- **2026-04-07** | Source — Summary`` with indented
detail lines. Inside the compiled truth, fenced tables hold the page's **takes**
(``<!--- gbrain:takes:begin -->``: who believes what, with a weight) and **facts**
(``<!--- gbrain:facts:begin -->``: claims with kind, confidence and validity); a row struck
through (``~~claim~~``) is no longer held. Links between pages are ``[Name](people/slug)`` and
``[[people/slug]]``, and frontmatter fields such as ``company:`` or ``attendees:``, which gbrain
turns into typed graph edges (``works_at``, ``attended`` …). Raw enrichment data is exported
beside the pages as ``.raw/<slug>.json``.

Here each page becomes an :class:`ImportedEntity`: the compiled truth its summary (first
paragraph) and body, each timeline entry an :class:`ImportedEvent`, each takes and facts row a
fact with its epistemic status, confidence, validity and supersession, and the typed links
relation facts. The mapping and its reasons: docs/import.md "gbrain".
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.basic_memory import fenced, prose_without
from kenning.transfer.model import (
    Imported,
    ImportedEntity,
    ImportedEvent,
    ImportedFact,
    InputProblem,
    Origin,
    Skipped,
)
from kenning.vault import frontmatter as fm

KIND = "gbrain"

#: gbrain page types (its gbrain-base schema pack) → Kenning entity types. Types not here are
#: folded with kenning.vocabulary (person, project, meeting, concept, event …); what is left
#: (deal, yc, civic, diary, image …) becomes ``thing`` and is reported.
TYPE_MAP: dict[str, str] = {
    "company": "organization",
    "note": "topic",
    "writing": "artifact",
    "analysis": "artifact",
    "guide": "artifact",
    "architecture": "artifact",
    "hardware": "artifact",
    "media": "artifact",
    "email": "artifact",
    "slack": "artifact",
    "source": "artifact",
    "calendar-event": "event",
}

#: where gbrain infers a page's type from its path when the frontmatter has no ``type:``
#: (folder → type, the first match wins; otherwise ``concept``)
PATH_TYPES: tuple[tuple[str, str], ...] = (
    ("writing/", "writing"), ("wiki/analysis/", "analysis"), ("wiki/guides/", "guide"),
    ("wiki/guide/", "guide"), ("wiki/hardware/", "hardware"),
    ("wiki/architecture/", "architecture"), ("wiki/concepts/", "concept"),
    ("wiki/concept/", "concept"), ("people/", "person"), ("person/", "person"),
    ("companies/", "company"), ("company/", "company"), ("deals/", "deal"), ("deal/", "deal"),
    ("yc/", "yc"), ("civic/", "civic"), ("projects/", "project"), ("project/", "project"),
    ("sources/", "source"), ("source/", "source"), ("media/", "media"), ("emails/", "email"),
    ("email/", "email"), ("slack/", "slack"), ("cal/", "calendar-event"),
    ("calendar/", "calendar-event"), ("notes/", "note"), ("note/", "note"),
    ("meetings/", "meeting"), ("meeting/", "meeting"), ("life/events/", "event"),
    ("life/diary/", "diary"),
)

#: frontmatter fields gbrain turns into typed edges: (page type, field) → (its link type,
#: whether the edge points INTO this page — ``key_people: [Ada]`` on a company means Ada
#: works_at the company). A ``None`` page type applies to every page.
FRONTMATTER_LINKS: dict[tuple[str | None, str], tuple[str, bool]] = {
    ("person", "company"): ("works_at", False),
    ("person", "companies"): ("works_at", False),
    ("person", "founded"): ("founded", False),
    ("company", "key_people"): ("works_at", True),
    ("company", "partner"): ("yc_partner", True),
    ("company", "investors"): ("invested_in", True),
    ("deal", "investors"): ("invested_in", True),
    ("deal", "lead"): ("led_round", True),
    ("meeting", "attendees"): ("attended", True),
    (None, "sources"): ("discussed_in", True),
}

#: the verbs gbrain's base schema pack declares for links in prose (``link_types[].inference``):
#: a link in a sentence saying so becomes a relation fact of that type
VERBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("founded", re.compile(r"\b(founded|founder of|co-?founded|started)\b", re.I)),
    ("invested_in", re.compile(r"\b(invested in|backed|seeded|funded|wrote a check)\b", re.I)),
    ("advises", re.compile(r"\b(advises|advisor|advising|advisor to)\b", re.I)),
    ("works_at", re.compile(r"\b(works? at|employed by|works? for|joined|hired by|ceo of|"
                            r"cto of|cmo of)\b", re.I)),
)

TAKE_EPISTEMIC = {"fact": "assertion", "take": "hypothesis", "bet": "hypothesis",
                  "hunch": "speculation"}
FACT_EPISTEMIC = {"fact": "assertion", "event": "assertion", "preference": "assertion",
                  "commitment": "assertion", "belief": "hypothesis"}
_FACT_VISIBILITY = {"private", "world"}
_FACT_NOTABILITY = {"high", "medium", "low"}

_FENCES = {"takes": ("<!--- gbrain:takes:begin -->", "<!--- gbrain:takes:end -->"),
           "facts": ("<!--- gbrain:facts:begin -->", "<!--- gbrain:facts:end -->")}
_ENTRY = re.compile(r"\s*-?\s*\*\*(\d{4}-\d{2}-\d{2})\*\*\s*([|\-–—]+)\s*(.+?)\s*$")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(<?([^)\s>]+)>?\)")
_WIKI = re.compile(r"\[\[([^\]|#\n]+)(#[^\]|\n]*)?(?:\|([^\]\n]+))?\]\]")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:|//|#", re.I)
_FULL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_OWN_KEYS = {"title", "type", "aliases"}
_SUMMARY_HEAD = re.compile(r"#{1,6}\s+(executive\s+summary|summary|tl;?dr)\s*$", re.I)
_UNLINKABLE = re.compile(r"[\[\]|#^]")      # a title no wikilink can name as written
_CELL = re.compile(r"(?<!\\)\|")


class NotAGbrainExport(KenningError):
    """PATH is not a folder written by ``gbrain export``."""


@dataclass
class _Page:
    rel: str
    slug: str
    title: str
    source_type: str
    meta: dict[str, Any]
    body_start: int                 # file line of body line 0
    lines: list[str]                # the body
    key_lines: dict[str, int] = field(default_factory=dict)
    entity: ImportedEntity | None = None
    links: list[tuple[int, str, str]] = field(default_factory=list)   # (line, href, label)


def read(path: Path) -> Imported:
    """Everything in the gbrain export folder ``path`` (see the module doc)."""
    root = Path(path)
    if not root.is_dir():
        raise NotAGbrainExport(f"{root}: not a folder; give the folder `gbrain export --dir` "
                               "wrote")
    got = Imported(KIND, root)
    pages: list[_Page] = []
    for file in sorted(root.rglob("*")):
        if not file.is_file():
            continue
        rel = file.relative_to(root).as_posix()
        parts = file.relative_to(root).parts
        if ".raw" in parts[:-1]:
            got.skipped.append(Skipped(Origin(rel), "raw enrichment data gbrain keeps beside "
                                                    "a page (not memory); the page is imported"))
            continue
        if any(p.startswith(".") for p in parts) or file.suffix.lower() != ".md":
            got.skipped.append(Skipped(Origin(rel), "not a page of the export (*.md)"))
            continue
        got.files.append(rel)
        page = _read_page(root, rel, got)
        if page is not None:
            pages.append(page)
    if not got.files:
        raise NotAGbrainExport(f"{root}: no pages (*.md) in this folder; give the folder "
                               "`gbrain export --dir` wrote")
    _Build(pages, got).run()
    return got


def _read_page(root: Path, rel: str, got: Imported) -> _Page | None:
    data = (root / rel).read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        got.problems.append(InputProblem(Origin(rel, line), f"not UTF-8 (byte "
                                         f"0x{data[exc.start]:02x}); save it as UTF-8"))
        return None
    front = fm.read(text)
    if front.error is not None:
        line, message = front.error
        got.problems.append(InputProblem(Origin(rel, line), f"frontmatter: {message}"))
        return None
    meta = dict(front.data)
    slug = str(meta.get("slug") or rel[:-3]).strip()
    lines = text[front.body_offset:].split("\n")
    title = _scalar(meta.get("title")) or _first_h1(lines) or _humanize(slug)
    source_type = _scalar(meta.get("type")) or _path_type(rel)
    return _Page(rel, slug, " ".join(title.split()), source_type, meta, front.body_start,
                 lines, _key_lines(text, front.body_start) if front.block else {})


class _Build:
    """Entities from the pages, with links resolved among them."""

    def __init__(self, pages: list[_Page], got: Imported) -> None:
        self.pages = pages
        self.got = got
        self.by_slug = {p.slug.lower(): p for p in pages}
        self.by_name: dict[str, _Page] = {}
        for page in pages:
            for key in (page.title, page.slug.rsplit("/", 1)[-1], _slugify(page.title)):
                self.by_name.setdefault(key.casefold(), page)
        seen: dict[str, str] = {}
        for page in pages:
            other = seen.setdefault(page.slug.lower(), page.rel)
            if other != page.rel:
                got.notes.append(f"{page.rel}: slug {page.slug!r} is also {other}'s; their "
                                 "items are merged into one page")

    def run(self) -> None:
        for page in self.pages:
            page.entity = self._entity(page)
        for page in self.pages:
            self._frontmatter_links(page)
            self._inline_links(page)
        self.got.entities = [p.entity for p in self.pages if p.entity is not None]

    # -- one page ---------------------------------------------------------------------------

    def _entity(self, page: _Page) -> ImportedEntity:
        kind = self._type(page)
        meta = page.meta
        extra = {k: v for k, v in meta.items() if k not in _OWN_KEYS}
        extra["slug"] = page.slug
        aliases = [a for a in _strings(meta.get("aliases")) if a != page.title]
        date = _scalar(meta.get("updated") or meta.get("date")) or None
        entity = ImportedEntity(page.title, kind, Origin(page.rel, 1, page.slug, date),
                                source_type=page.source_type, aliases=aliases,
                                frontmatter=extra,
                                created=_scalar(meta.get("created")) or None)
        split = _timeline_split(page.lines)
        truth_end = split[0] if split else len(page.lines)
        taken: set[int] = set()
        for fence in ("takes", "facts"):
            taken |= self._fence(page, entity, fence, truth_end)
        if split is not None:
            start, stop, sentinel = split
            if sentinel:
                taken.add(start)
            taken |= self._timeline(page, entity, start + (1 if sentinel else 0), stop)
        prose = prose_without("\n".join(page.lines), taken, page.title)
        summary, body = _first_paragraph(prose)
        entity.summary = self._relink(summary) if summary else None
        entity.body = self._relink(body) if body else None
        for i, line in enumerate(page.lines):
            if i < truth_end or (split and i < split[1]):
                for match in _MD_LINK.finditer(line):
                    page.links.append((page.body_start + i, match.group(2), match.group(1)))
                for match in _WIKI.finditer(line):
                    page.links.append((page.body_start + i, match.group(1),
                                       match.group(3) or ""))
        return entity

    def _type(self, page: _Page) -> str:
        word = page.source_type
        key = word.strip().lower()
        if key in TYPE_MAP:
            kind = TYPE_MAP[key]
        else:
            try:
                kind = vocabulary.entity_type(word)
            except VocabularyError:
                kind = "thing"
                if ("type", word) not in self.got.mapped:
                    self.got.notes.append(f"{page.rel}: gbrain type {word!r} has no Kenning "
                                          "counterpart; imported as thing (kept as "
                                          "imported_type)")
            if kind in ("note", "daily", "source", "session", "code"):
                kind = "topic"
        self.got.mapped[("type", word)] = kind
        return kind

    def _fence(self, page: _Page, entity: ImportedEntity, fence: str, end: int) -> set[int]:
        """The rows of one takes/facts fence as facts; the fence's lines (taken from the body)."""
        begin_mark, end_mark = _FENCES[fence]
        lines = page.lines
        code = fenced(lines)
        begin = next((i for i in range(end) if lines[i].strip() == begin_mark
                      and not code[i]), None)
        if begin is None:
            near = next((i for i in range(end) if f"gbrain:{fence}:begin" in lines[i]), None)
            if near is not None:
                self.got.skipped.append(Skipped(Origin(page.rel, page.body_start + near), (
                    f"a {fence} fence marker gbrain does not read (it needs "
                    f"'{begin_mark}'); kept as text in the body")))
            return set()
        close = next((i for i in range(begin + 1, end) if lines[i].strip() == end_mark), None)
        if close is None:
            self.got.skipped.append(Skipped(Origin(page.rel, page.body_start + begin), (
                f"{fence} fence without its end marker '{end_mark}'; kept as text in the "
                "body")))
            return set()
        header: list[str] | None = None
        rows: dict[int, tuple[ImportedFact, str | None]] = {}
        for i in range(begin + 1, close):
            cells = _cells(lines[i])
            if cells is None:
                continue
            where = Origin(page.rel, page.body_start + i)
            if header is None:
                lower = [c.lower() for c in cells]
                if "claim" in lower and "kind" in lower:
                    header = lower
                else:
                    self.got.skipped.append(Skipped(where, f"{fence} row before the table's "
                                                           "header"))
                continue
            if all(re.fullmatch(r"[-:\s]+", c) for c in cells):
                continue
            row = dict(zip(header, cells, strict=False))
            made = (self._take(page, row, where) if fence == "takes"
                    else self._fact(page, row, where))
            if isinstance(made, str):
                self.got.skipped.append(Skipped(where, f"{fence} row: {made}"))
                continue
            number, fact, successor = made
            if number in rows:
                self.got.skipped.append(Skipped(where, f"{fence} row #{number} appears twice; "
                                                       "the first is imported"))
                continue
            rows[number] = (fact, successor)
        for fact, successor in rows.values():
            if successor is not None:
                after = rows.get(int(successor))
                if after is not None:
                    fact.superseded_by = after[0].origin.key()
            entity.facts.append(fact)
        taken = set(range(begin, close + 1))
        return taken

    def _take(self, page: _Page, row: dict[str, str], where: Origin
              ) -> tuple[int, ImportedFact, str | None] | str:
        number = _row_number(row.get("#", ""))
        if number is None:
            return f"row number {row.get('#', '')!r} is not a positive number"
        claim, struck = _struck(row.get("claim", ""))
        kind = row.get("kind", "").strip().lower()
        if kind not in TAKE_EPISTEMIC:
            return f"kind {kind!r} is not a take kind (fact, take, bet, hunch)"
        weight = _number(row.get("weight", ""))
        since, until = _since(row.get("since", ""))
        source = row.get("source", "").strip()
        holder = row.get("who", "").strip()
        successor = _superseded_by(source)
        parts = [kind]
        if holder:
            parts.append(f"held by {self._holder(holder)}")
        for label, value in (("since", since), ("until", until)):
            if value and not _FULL_DATE.fullmatch(value):
                parts.append(f"{label} {value}")
        if source:
            parts.append(f"source: {source}")
        status = "active" if not struck else ("superseded" if successor else "invalidated")
        fact = ImportedFact(
            f"{claim} ({'; '.join(parts)})", _row_origin(page, where, "takes", number, since),
            valid_from=since if since and _FULL_DATE.fullmatch(since) else None,
            valid_to=until if until and _FULL_DATE.fullmatch(until) else None,
            status=status, epistemic=TAKE_EPISTEMIC[kind],
            confidence=min(max(weight, 0.0), 1.0) if weight is not None else None)
        return number, fact, successor

    def _fact(self, page: _Page, row: dict[str, str], where: Origin
              ) -> tuple[int, ImportedFact, str | None] | str:
        number = _row_number(row.get("#", ""))
        if number is None:
            return f"row number {row.get('#', '')!r} is not a positive number"
        claim, struck = _struck(row.get("claim", ""))
        kind = row.get("kind", "").strip().lower()
        if kind not in FACT_EPISTEMIC:
            return (f"kind {kind!r} is not a fact kind (event, preference, commitment, "
                    "belief, fact)")
        visibility = row.get("visibility", "").strip().lower()
        notability = row.get("notability", "").strip().lower()
        if visibility not in _FACT_VISIBILITY:
            return f"visibility {visibility!r} is not private or world"
        if notability not in _FACT_NOTABILITY:
            return f"notability {notability!r} is not high, medium or low"
        confidence = _number(row.get("confidence", ""))
        if confidence is None:
            return f"confidence {row.get('confidence', '')!r} is not a number"
        since = row.get("valid_from", "").strip() or None
        until = row.get("valid_until", "").strip() or None
        source = row.get("source", "").strip()
        context = row.get("context", "").strip()
        successor = _superseded_by(context)
        forgotten = bool(re.match(r"forgotten\s*:", context, re.I))
        parts = [kind]
        if visibility == "private":
            parts.append("private")
        parts.append(f"notability {notability}")
        for label, value in (("from", since), ("until", until)):
            if value and not _FULL_DATE.fullmatch(value):
                parts.append(f"{label} {value}")
        if source:
            parts.append(f"source: {source}")
        if context:
            parts.append(context)
        for key in ("claim_metric", "claim_value", "claim_unit", "claim_period"):
            if row.get(key, "").strip():
                parts.append(f"{key.removeprefix('claim_')} {row[key].strip()}")
        status = "active" if not struck else ("superseded" if successor else "invalidated")
        fact = ImportedFact(
            f"{claim} ({'; '.join(parts)})", _row_origin(page, where, "facts", number, since),
            valid_from=since if since and _FULL_DATE.fullmatch(since) else None,
            valid_to=until if until and _FULL_DATE.fullmatch(until) else None,
            status=status, epistemic=FACT_EPISTEMIC[kind],
            confidence=min(max(confidence, 0.0), 1.0),
            expired=until if forgotten and until and _FULL_DATE.fullmatch(until) else None)
        return number, fact, successor

    def _timeline(self, page: _Page, entity: ImportedEntity, start: int, stop: int
                  ) -> set[int]:
        lines = page.lines
        taken: set[int] = set()
        seen: dict[str, int] = {}
        i = start
        while i < stop:
            line = lines[i]
            match = _ENTRY.fullmatch(line)
            if match is None:
                stripped = line.strip()
                if stripped and not re.match(r"#{1,6}\s", stripped):
                    self.got.skipped.append(Skipped(
                        Origin(page.rel, page.body_start + i),
                        "a timeline line gbrain does not read as an entry "
                        "(it needs '- **YYYY-MM-DD** | …')"))
                taken.add(i)
                i += 1
                continue
            date, separator, summary = match.groups()
            source = ""
            if "|" in separator:
                at = _source_split(summary)
                if at >= 0:
                    source, summary = summary[:at].strip(), summary[at + 1:].strip()
            first = i
            detail: list[str] = []
            i += 1
            while i < stop:
                nxt = lines[i]
                if _ENTRY.fullmatch(nxt) or re.match(r"#{1,6}\s", nxt):
                    break
                if not nxt.strip():
                    if detail:
                        break
                    i += 1
                    continue
                if nxt[:1].isspace() or not nxt.startswith(("-", "*", "#")):
                    detail.append(nxt.strip())
                    i += 1
                    continue
                break
            taken.update(range(first, i))
            text = " ".join([summary, *detail])
            if source:
                text += f" (source: {source})"
            text = self._relink(text)
            key = hashlib.sha256(f"{date} {text}".encode()).hexdigest()[:8]
            seen[key] = seen.get(key, 0) + 1
            ident = f"{page.slug}@{date}/{key}" + (f"-{seen[key]}" if seen[key] > 1 else "")
            entity.timeline.append(ImportedEvent(
                date, text, Origin(page.rel, page.body_start + first, ident, date)))
        return taken

    # -- links ------------------------------------------------------------------------------

    def _resolve(self, ref: str) -> _Page | None:
        """The page a link or frontmatter value names: a slug, a path, a title."""
        text = ref.strip()
        while text.startswith(("../", "./")):
            text = text[3:] if text.startswith("../") else text[2:]
        text = text.removesuffix(".md").strip("/")
        text = text.split(":", 1)[-1] if re.match(r"[a-z0-9_-]+:[^/]", text) else text
        return self.by_slug.get(text.lower()) or self.by_name.get(text.casefold()) \
            or self.by_name.get(_slugify(text).casefold())

    def _name(self, ref: str, label: str = "") -> str:
        page = self._resolve(ref)
        if page is not None:
            return page.title
        return label.strip() or _humanize(ref.removesuffix(".md"))

    def _relink(self, text: str) -> str:
        """Links to pages of the export, written as Kenning's links to the imported pages
        (``[Alice Chen](people/alice-chen)`` → ``[[Alice Chen]]``); others stay as written."""
        def markdown(match: re.Match[str]) -> str:
            href = match.group(2)
            if _SCHEME.match(href):
                return match.group(0)
            page = self._resolve(href.split("#", 1)[0])
            if page is None or _UNLINKABLE.search(page.title):
                return match.group(0)
            label = match.group(1)
            return f"[[{page.title}]]" if label == page.title else f"[[{page.title}|{label}]]"

        def wiki(match: re.Match[str]) -> str:
            page = self._resolve(match.group(1))
            if page is None or _UNLINKABLE.search(page.title):
                return match.group(0)
            label = match.group(3)
            tail = f"|{label}" if label and label != page.title else ""
            return f"[[{page.title}{match.group(2) or ''}{tail}]]"

        return _WIKI.sub(wiki, _MD_LINK.sub(markdown, text))

    def _holder(self, holder: str) -> str:
        if holder in ("world", "brain"):
            return holder
        page = self._resolve(holder)
        return f"[[{page.title}]]" if page is not None else holder

    def _relation(self, subject: _Page, word: str, target: str, text: str,
                  origin: Origin) -> None:
        entity = subject.entity
        if entity is None:
            return
        try:
            relation = vocabulary.relation(word)
        except VocabularyError:
            relation = "related_to"
            text = f"{text} ({KIND}: {word})".strip()
        self.got.mapped[("relation", word)] = relation
        key = f"{origin.id}>{relation}>{target}"
        if any(f.relation == relation and (f.target or "").casefold() == target.casefold()
               for f in entity.facts):
            return      # the same edge, read from another field or line: once is enough
        entity.facts.append(ImportedFact(text, Origin(origin.file, origin.line, key,
                                                      origin.date),
                                         relation=relation, target=target))

    def _frontmatter_links(self, page: _Page) -> None:
        block_lines = page.key_lines
        for key, value in page.meta.items():
            rule = FRONTMATTER_LINKS.get((page.source_type, key)) \
                or FRONTMATTER_LINKS.get((None, key))
            if rule is None:
                continue
            verb, incoming = rule
            origin = Origin(page.rel, block_lines.get(key, 1), f"{page.slug}:{key}")
            for name in _names(value):
                other = self._resolve(name)
                if other is None:
                    self.got.notes.append(f"{page.rel}:{origin.line}: {key}: {name!r} is no "
                                          "page of the export; kept as a link")
                if not incoming:
                    self._relation(page, verb, other.title if other else name, "", origin)
                elif other is not None:
                    self._relation(other, verb, page.title, "", origin)
                else:
                    self._relation(page, "related_to", name,
                                   f"({KIND}: {key}, {verb} this page)", origin)

    def _inline_links(self, page: _Page) -> None:
        seen: set[str] = set()
        for line, href, label in page.links:
            if _SCHEME.match(href):
                continue
            other = self._resolve(href.split("#", 1)[0])
            if other is None or other is page:
                continue
            sentence = _sentence(page.lines[line - page.body_start], label or href)
            verb = None
            if page.source_type == "meeting":
                if other.source_type == "person":
                    if other.slug in seen:
                        continue
                    seen.add(other.slug)
                    self._relation(other, "attended", page.title, "",
                                   Origin(page.rel, line, f"{page.slug}#L{line}"))
                continue
            verb = next((v for v, pattern in VERBS if pattern.search(sentence)), None)
            if verb is None:
                continue       # a mention: the link stays in the body
            self._relation(page, verb, other.title, self._relink(sentence),
                           Origin(page.rel, line, f"{page.slug}#L{line}"))


# -- the shapes of an export ---------------------------------------------------------------------


def _timeline_split(lines: list[str]) -> tuple[int, int, bool] | None:
    """Where the timeline starts: (first line, end, whether that line is a sentinel)."""
    code = fenced(lines)
    for i, line in enumerate(lines):
        if code[i]:
            continue
        stripped = line.strip()
        if stripped in ("<!-- timeline -->", "<!--timeline-->") or re.fullmatch(
                r"---\s+timeline\s+---", stripped, re.I):
            return i, len(lines), True
        if stripped == "---":
            nxt = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            if re.match(r"##\s+(timeline|history)\b", nxt, re.I):
                return i, len(lines), True
    for i, line in enumerate(lines):
        if code[i] or not re.match(r"##\s+(timeline|history)\b", line.strip(), re.I):
            continue
        if not "\n".join(lines[:i]).strip():
            continue
        end, dated, shaped = len(lines), 0, True
        for j in range(i + 1, len(lines)):
            stripped = lines[j].strip()
            if re.match(r"##\s+\S", stripped):
                end = j
                break
            if not stripped:
                continue
            if re.match(r"\s*[-*+]\s+\**\d{4}\b", lines[j]):
                dated += 1
            elif not (dated and re.match(r"\s{2,}\S", lines[j])):
                shaped = False
                break
        if shaped and dated:
            return i, end, False
    return None


def _first_paragraph(prose: str) -> tuple[str, str]:
    """(summary, the rest): the first plain paragraph of the compiled truth, when it opens the
    page or its ``## Executive Summary`` (``## Summary``, ``## TL;DR``); else no summary."""
    lines = prose.split("\n")
    code = fenced(lines)
    start = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            if start is not None:
                return _cut(lines, start, i)
            continue
        plain = not re.match(r"(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\||<|```|~~~|\s{4})", line)
        if start is None:
            if re.match(r"#{2,6}\s", stripped) and not code[i] and not _SUMMARY_HEAD.match(
                    stripped):
                return "", prose        # the first section is not a summary: no summary
            if plain and not code[i]:
                start = i
        elif not plain:
            return _cut(lines, start, i)
    return _cut(lines, start, len(lines)) if start is not None else ("", prose)


def _cut(lines: list[str], start: int, stop: int) -> tuple[str, str]:
    rest = lines[:start] + lines[stop:]
    heading_only = all(not x.strip() or re.match(r"#{1,6}\s", x.strip())
                       for x in lines[:start])
    if heading_only and start and _SUMMARY_HEAD.match(lines[start - 1].strip()):
        rest = lines[:start - 1] + lines[stop:]     # the summary's own heading goes with it
    return "\n".join(lines[start:stop]).strip(), "\n".join(rest).strip("\n")


def _cells(line: str) -> list[str] | None:
    """The cells of a table row (``\\|`` is a pipe inside a cell), None when not a row."""
    text = line.strip()
    if not text.startswith("|") or "|" not in text[1:]:
        return None
    inner = text[1:-1] if text.endswith("|") and not text.endswith("\\|") else text[1:]
    return [c.replace("\\|", "|").strip() for c in _CELL.split(inner)]


def _struck(claim: str) -> tuple[str, bool]:
    text = claim.strip()
    if len(text) > 4 and text.startswith("~~") and text.endswith("~~"):
        return text[2:-2].strip(), True
    return text, False


def _row_number(raw: str) -> int | None:
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else None


def _number(raw: str) -> float | None:
    try:
        value = float(raw.strip().replace(",", ""))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def _since(raw: str) -> tuple[str | None, str | None]:
    text = raw.strip()
    if not text:
        return None, None
    match = re.fullmatch(r"(.+?)\s*(?:→|->)\s*(.+)", text)
    return (match.group(1).strip(), match.group(2).strip()) if match else (text, None)


def _superseded_by(text: str) -> str | None:
    match = re.search(r"superseded by #(\d+)", text, re.I)
    return match.group(1) if match else None


def _row_origin(page: _Page, where: Origin, fence: str, number: int, date: str | None
                ) -> Origin:
    return Origin(page.rel, where.line, f"{page.slug}#{fence}/{number}",
                  date if date and re.match(r"\d{4}-\d{2}", date) else None)


def _source_split(text: str) -> int:
    """Where ``Source — Summary`` splits: a dash with spaces around it, outside brackets."""
    depth = 0
    for i, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in "—–-" and 0 < i < len(text) - 1 \
                and text[i - 1].isspace() and text[i + 1].isspace():
            return i
    return -1


def _sentence(line: str, needle: str) -> str:
    text = re.sub(r"^\s*[-*+]\s+", "", line).strip()
    parts = re.split(r"(?<=[.!?])\s+", text)
    return next((p for p in parts if needle in p), text)


def _key_lines(text: str, body_start: int) -> dict[str, int]:
    """The file line of each top-level frontmatter key."""
    out: dict[str, int] = {}
    for n, line in enumerate(text.split("\n")[1:body_start - 1], start=2):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", line)
        if match:
            out.setdefault(match.group(1), n)
    return out


def _names(value: Any) -> list[str]:
    """The names a frontmatter edge field holds: a name, a slug, ``[[slug|Label]]``, a list
    of those, or ``{name: …}`` mappings."""
    if isinstance(value, str):
        text = value.strip()
        wiki = re.fullmatch(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]", text)
        return [wiki.group(1).strip()] if wiki else ([text] if text else [])
    if isinstance(value, dict):
        name = value.get("name") or value.get("slug")
        return [str(name).strip()] if name else []
    if isinstance(value, list):
        return [n for item in value for n in _names(item)]
    return []


def _path_type(rel: str) -> str:
    path = rel.lower()
    return next((kind for prefix, kind in PATH_TYPES
                 if path.startswith(prefix) or f"/{prefix}" in path), "concept")


def _first_h1(lines: list[str]) -> str:
    code = fenced(lines)
    for i, line in enumerate(lines):
        match = re.match(r"#\s+(.+?)\s*#*\s*$", line)
        if match and not code[i]:
            return match.group(1)
    return ""


def _humanize(slug: str) -> str:
    last = slug.rsplit("/", 1)[-1]
    return " ".join(w[:1].upper() + w[1:] for w in re.split(r"[-_\s]+", last) if w) or slug


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _scalar(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value).strip()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []
