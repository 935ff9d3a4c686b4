"""basic-memory: a project folder of Markdown notes with observations and relations.

basic-memory (github.com/basicmachines-co/basic-memory) keeps each note as a Markdown file with
YAML frontmatter (``title``, ``type``, ``permalink``, ``tags`` …). In the body, a list item
``- [category] text #tag (context)`` is an *observation*, a list item
``- relation_type [[Target]] (context)`` an explicit *relation*, and every other ``[[link]]``
an implicit ``links_to`` relation. Every note is an entity of its knowledge graph.

Here each note becomes an :class:`ImportedEntity` named by its title: each observation a fact
whose text is the line as written (category, tags and context stay readable), each explicit
relation a relation fact, and the rest of the note — its prose, with the inline links in it —
the page's body, verbatim. The mapping and its reasons: docs/import.md "basic-memory".
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.model import (
    Imported,
    ImportedEntity,
    ImportedFact,
    InputProblem,
    Origin,
    Skipped,
)
from kenning.vault import frontmatter as fm

KIND = "basic-memory"

#: basic-memory types that are not Kenning words. ``note`` (its default: every note written
#: without a type) is a note *about a subject* holding observations about it — Kenning's
#: ``topic``. A Kenning ``note`` is a person's own page that Kenning never writes, which would
#: make the imported observations impossible to keep current. A guide, report or spec is a
#: document: ``artifact`` (as gbrain's are).
TYPE_MAP: dict[str, str] = {"note": "topic", "guide": "artifact", "report": "artifact",
                            "spec": "artifact"}

#: frontmatter keys the entity carries itself (not copied into the page's frontmatter)
_OWN_KEYS = {"title", "type", "aliases", "created"}

_CATEGORY = re.compile(r"\[([^\[\]()]+)\]\s+(.+)", re.S)
_CLOCK = re.compile(r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?:\s+-\s+\d{1,3}:\d{2}"
                    r"(?::\d{2})?(?:[.,]\d{1,3})?)?")
_DIRECTIVE = re.compile(r"\s+#bm:links_to\s*$")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*\r?$")


class NotABasicMemoryProject(KenningError):
    """PATH is not a folder of basic-memory notes."""


def read(path: Path) -> Imported:
    """Everything in the basic-memory project folder ``path`` (see the module doc)."""
    root = Path(path)
    if not root.is_dir():
        raise NotABasicMemoryProject(f"{root}: not a folder; give the basic-memory project "
                                     "folder (the one holding its notes)")
    got = Imported(KIND, root)
    notes: list[tuple[str, str]] = []
    for file in sorted(root.rglob("*")):
        rel = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in file.relative_to(root).parts) \
                or not file.is_file():
            continue
        if file.suffix.lower() != ".md":
            got.skipped.append(Skipped(Origin(rel), "not a Markdown note (basic-memory "
                                                    "indexes it as a file, with no content)"))
            continue
        got.files.append(rel)
        data = file.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            got.problems.append(InputProblem(Origin(rel, line), f"not UTF-8 (byte "
                                             f"0x{data[exc.start]:02x}); save it as UTF-8"))
            continue
        notes.append((rel, text.removeprefix("\ufeff")))
    if not got.files:
        raise NotABasicMemoryProject(f"{root}: no Markdown notes (*.md) in this folder")
    parsed = [n for n in (_note(rel, text, got) for rel, text in notes) if n is not None]
    _resolve(parsed, got)
    got.entities = [n.entity for n in parsed]
    return got


class _Note:
    """One note while it is read: its entity and the relations still to resolve."""

    def __init__(self, rel: str, entity: ImportedEntity, permalink: str) -> None:
        self.rel = rel
        self.entity = entity
        self.permalink = permalink


def _note(rel: str, text: str, got: Imported) -> _Note | None:
    front = fm.read(text)
    if front.error is not None:
        line, message = front.error
        got.problems.append(InputProblem(Origin(rel, line), f"frontmatter: {message}"))
        return None
    meta: dict[str, Any] = dict(front.data)
    stem = rel.rsplit("/", 1)[-1][:-3]
    title = " ".join(str(meta.get("title") or "").split()) or stem
    permalink = str(meta.get("permalink") or "").strip() or rel[:-3]
    source_type = _scalar(meta.get("type")) or "note"
    kind = _type(source_type, rel, got)
    created = _date(meta.get("created") or meta.get("date"))
    when = _date(meta.get("modified") or meta.get("updated")) or created
    aliases = [a for a in _strings(meta.get("aliases")) if a != title]
    if stem != title and stem not in aliases:
        aliases.append(stem)
    extra = {k: v for k, v in meta.items() if k not in _OWN_KEYS}
    extra["permalink"] = permalink
    entity = ImportedEntity(title, kind, Origin(rel, 1, permalink, when), source_type=source_type,
                            aliases=aliases, frontmatter=extra, created=created)
    body = text[front.body_offset:]
    offset = front.body_start - 1          # file line of body line 0, minus one
    entity.facts, taken = _items(body, offset, rel, permalink, when)
    entity.body = prose_without(body, taken, title)
    return _Note(rel, entity, permalink)


def _items(body: str, offset: int, rel: str, permalink: str, when: str | None
           ) -> tuple[list[ImportedFact], set[int]]:
    """Observations and explicit relations of list items, with the body lines they take."""
    tokens = _markdown().parse(body)
    facts: list[ImportedFact] = []
    taken: set[int] = set()
    seen: Counter[str] = Counter()
    items = quotes = 0
    for token in tokens:
        if token.type == "list_item_open":
            items += 1
        elif token.type == "list_item_close":
            items -= 1
        elif token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        if token.type != "inline" or not items or quotes or token.map is None:
            continue
        content = token.content.strip()
        fact = _relation(content) or _observation(content)
        if fact is None:
            continue
        what, word, target, text = fact
        key = hashlib.sha256(content.encode()).hexdigest()[:8]
        seen[key] += 1
        ident = f"{permalink}/{key}" + (f"-{seen[key]}" if seen[key] > 1 else "")
        origin = Origin(rel, offset + token.map[0] + 1, ident, when)
        if what == "relation":
            facts.append(ImportedFact(text, origin, relation=word, target=target))
        else:
            since, until = _temporal(text)
            facts.append(ImportedFact(text, origin, valid_from=since, valid_to=until))
        taken.update(range(token.map[0], token.map[1]))
    return facts, taken


@functools.lru_cache(maxsize=1)
def _markdown() -> Any:
    """One CommonMark block parser (the inline pass is off: only a block's source text is
    read, as basic-memory reads it)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    return md


def _relation(content: str) -> tuple[str, str, str, str] | None:
    """``type [[Target]] (context)`` → (relation, type word, target, "(context)"), as basic-memory
    reads an explicit relation: one word (or a quoted label) before the first link, nothing
    after it but one parenthesised context. A ``#bm:links_to`` tail makes it prose."""
    if "[[" not in content or _DIRECTIVE.search(content):
        return None
    before, _, rest = content.partition("[[")
    before = before.strip()
    if not before:
        return None
    if before[0] in "'\"" and len(before) > 1 and before.endswith(before[0]):
        word = before[1:-1].strip()
    elif any(c.isspace() for c in before):
        return None
    else:
        word = before
    target, closed, after = rest.partition("]]")
    target = target.strip()
    if not word or not closed or not target:
        return None
    after = after.strip()
    if after and not _one_group(after):
        return None
    return "relation", word, target, after


def _one_group(text: str) -> bool:
    if not text.startswith("("):
        return False
    depth = 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return i == len(text) - 1
    return False


def _observation(content: str) -> tuple[str, None, None, str] | None:
    """``[category] text #tag (context)``, or a line with a ``#tag``: the line as written."""
    text = _DIRECTIVE.sub("", content).strip()
    if not text or text.startswith(("[ ]", "[x]", "[-]")):
        return None
    if re.fullmatch(r"\[.*?\]\(.*?\)", text) or re.fullmatch(r"\[\[.*?\]\]", text):
        return None
    match = _CATEGORY.match(text)
    if match:
        category = match.group(1).strip()
        if _CLOCK.fullmatch(category) or (len(category) == 1 and (
                category in "xX" or not category.isalnum())):
            match = None
    if match or any(part.startswith("#") for part in text.split()):
        return "observation", None, None, " ".join(text.split())
    return None


_TEMPORAL = re.compile(
    r"(?:\[[^\[\]()]+\]\s+)?@(?:(effective|valid|occurred)(?=[\[(:]))?"
    r"(?:[\[(](\d{4}-\d{2}-\d{2})?\s*,\s*(\d{4}-\d{2}-\d{2})?[\])]"
    r"|:?(\d{4}-\d{2}-\d{2})(?=\s))")


def _temporal(text: str) -> tuple[str | None, str | None]:
    """The validity of an observation's temporal qualifier (basic-memory's SPEC-82) when its
    dates are ISO: ``@effective[2026-06-10,2026-07-27)`` → from, to; ``@occurred:2026-06-10``
    or ``@2026-06-10`` → from. Other forms (``due``, ``mentioned``, quoted dates) stay text."""
    match = _TEMPORAL.match(text)
    if match is None:
        return None, None
    _kind, start, end, point = match.groups()
    return (point, None) if point else (start, end)


def prose_without(body: str, taken: set[int], title: str) -> str:
    """The body without the lines that became facts, the H1 that repeats the title, and
    headings left over an empty section (``## Observations`` once its items are facts)."""
    lines = body.split("\n")
    keep = [i not in taken for i in range(len(lines))]
    code = fenced(lines)
    heads = [(i, len(m.group(1)), (m.group(2) or "").strip()) for i, line in enumerate(lines)
             if (m := _ATX.fullmatch(line)) and not code[i]]
    for n, (i, level, text) in enumerate(heads):
        if level == 1 and " ".join(text.split()).casefold() == title.casefold() \
                and not any(keep[j] and lines[j].strip() for j in range(i)):
            keep[i] = False
            continue
        end = next((j for j, lvl, _ in heads[n + 1:] if lvl <= level), len(lines))
        section = range(i + 1, end)
        if any(not keep[j] for j in section) and not any(
                keep[j] and lines[j].strip() for j in section):
            keep[i] = False
    out: list[str] = []
    for i, line in enumerate(lines):
        if not keep[i] or (not line.strip() and out and not out[-1].strip()):
            continue
        out.append(line)
    return "\n".join(line.removesuffix("\r") for line in out).strip("\n")   # one line ending


def fenced(lines: list[str]) -> list[bool]:
    """For each line, whether it is inside a fenced code block (the fence lines themselves
    count as inside, but for the opening one)."""
    out: list[bool] = []
    fence: str | None = None
    for line in lines:
        out.append(fence is not None)
        stripped = line.lstrip()
        mark = stripped[:3]
        if fence is None and mark in ("```", "~~~"):
            fence = mark
        elif fence is not None and stripped.startswith(fence):
            fence = None
    return out


def _resolve(notes: list[_Note], got: Imported) -> None:
    """Relation targets named as basic-memory names notes (title, permalink, path) → the
    title of the note imported; duplicates and relations to no note of the input reported."""
    names: dict[str, str] = {}
    titles: Counter[str] = Counter(n.entity.name.casefold() for n in notes)
    links: Counter[str] = Counter()
    for note in notes:
        for key in (note.entity.name, note.permalink, note.rel[:-3],
                    note.rel.rsplit("/", 1)[-1][:-3], *note.entity.aliases):
            names.setdefault(key.casefold(), note.entity.name)
        links[note.permalink] += 1
    for title, count in sorted(titles.items()):
        if count > 1:
            got.notes.append(f"{count} notes are titled {title!r}; their observations are "
                             "merged into one page")
    for permalink, count in sorted(links.items()):
        if count > 1:
            rels = [n for n in notes if n.permalink == permalink]
            got.notes.append(f"{count} notes have permalink {permalink!r} "
                             f"({', '.join(n.rel for n in rels)}); all but the first are "
                             "identified by their file path")
            for note in rels[1:]:
                note.permalink = note.rel[:-3]
                _reidentify(note)
    for note in notes:
        for fact in note.entity.facts:
            if fact.relation is None or fact.target is None:
                continue
            word = fact.relation
            try:
                fact.relation = vocabulary.relation(word)
            except VocabularyError:
                fact.relation = "related_to"
                fact.text = f"{fact.text} ({KIND}: {word})".strip()
            got.mapped[("relation", word)] = fact.relation
            raw = fact.target
            bare = raw.split("|", 1)[0].split("#", 1)[0].strip()
            bare = bare.split("::", 1)[-1].strip()   # a project::note reference
            fact.target = names.get(bare.casefold()) or names.get(bare.lower().strip("/")) \
                or bare
            if bare.casefold() not in names:
                got.notes.append(f"{_where(fact.origin)}: relation to [[{raw}]], a note not "
                                 "in this project; kept as a link")


def _reidentify(note: _Note) -> None:
    entity = note.entity
    entity.origin = Origin(entity.origin.file, entity.origin.line, note.permalink,
                           entity.origin.date)
    for fact in entity.facts:
        tail = fact.origin.id.rsplit("/", 1)[-1] if fact.origin.id else ""
        fact.origin = Origin(fact.origin.file, fact.origin.line, f"{note.permalink}/{tail}",
                             fact.origin.date)


def _type(word: str, rel: str, got: Imported) -> str:
    key = word.strip().lower()
    if key in TYPE_MAP:
        kind = TYPE_MAP[key]
    else:
        try:
            kind = vocabulary.entity_type(word)
        except VocabularyError:
            kind = "thing"
            if ("type", word) not in got.mapped:
                got.notes.append(f"{rel}: type {word!r} has no Kenning counterpart; imported "
                                 "as thing (the word is kept as imported_type)")
        if kind in ("note", "daily", "source", "session", "code"):
            kind = "topic"
    got.mapped[("type", word)] = kind
    return kind


def _where(origin: Origin) -> str:
    return origin.file + (f":{origin.line}" if origin.line else "")


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


def _date(value: Any) -> str | None:
    """ISO date or timestamp from a frontmatter value (a string the loader already made)."""
    text = str(value).strip() if value is not None else ""
    return text if re.match(r"\d{4}-\d{2}-\d{2}", text) else None
