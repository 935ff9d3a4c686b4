"""Read an OpenClaw workspace: core memory, daily logs with ``## Retain``, ``bank/`` pages.

The layout (OpenClaw's docs, "Memory" and the workspace-memory research notes)::

    MEMORY.md | memory.md        curated long-term memory (core memory)
    memory/YYYY-MM-DD.md         daily logs; an optional "## Retain" section of typed bullets
    memory/<other>.md            other memory files (context digest, important/…)
    bank/world.md                objective facts         } bullets, typed like Retain bullets:
    bank/experience.md           what the agent did      } "- O(c=0.9) @Peter: text"
    bank/opinions.md             judgments + confidence  }
    bank/entities/<Name>.md      one page per entity (Peter.md, The-Castle.md)
    AGENTS.md SOUL.md USER.md …  the agent's bootstrap files (not memory)

What becomes what (docs/import.md "## openclaw"):

- core memory and every ``memory/*.md`` → :class:`ImportedDocument` at the same vault path,
  verbatim (Kenning reads ``## Retain`` natively); a Retain bullet that is not ``K: text`` is
  reported (the line stays in the log);
- ``bank/entities/<Name>.md`` → an entity: its ``type:`` mapped (none → ``thing``, reported),
  the first paragraph its summary, every top-level bullet a fact (``O``/``(c=…)`` → a
  hypothesis with that confidence; ``rel:: [[Target]] text`` → a relation), a dated bullet
  (``2025-11-27 — …``) a timeline line, the rest of the prose kept as the page's body;
- ``bank/world|experience|opinions.md`` → each bullet that ``@mentions`` an entity becomes a fact
  on it (the first mention; ``B``/``S`` with a date a timeline line); the file itself is also kept
  as a document under ``bank/``, so a bullet that names nobody is not lost.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.model import (
    Imported,
    ImportedDocument,
    ImportedEntity,
    ImportedEvent,
    ImportedFact,
    InputProblem,
    Origin,
    Skipped,
)

KIND = "openclaw"
CORE = ("MEMORY.md", "memory.md")
BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md",
             "BOOTSTRAP.md")
BANK_FILES = ("world.md", "experience.md", "opinions.md")

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}$")
_BULLET = re.compile(r"^[-*+]\s+(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
#: ``K``, ``K(c=0.9)``, then mentions, then ``:`` — the Retain bullet shape
_TYPED = re.compile(r"^([A-Za-z])(?:\(c=([^)]*)\))?"
                    r"((?:\s+@(?:\[\[[^\]]+\]\]|[\w.\-]+))*)\s*:\s*(.*)$")
_MENTION = re.compile(r"@(?:\[\[([^\]|#]+)[^\]]*\]\]|([\w][\w.\-]*[\w]|[\w]))")
_CONF = re.compile(r"\(c=([0-9]*\.?[0-9]+)\)")
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?)\s*(?:[—–:-]+\s*)?(.*)$")
_RELATION = re.compile(r"^([A-Za-z][\w-]*)::\s*\[\[([^\]|#]+)[^\]]*\]\]\s*(.*)$")


def read(path: Path) -> Imported:
    """Everything the OpenClaw workspace at ``path`` holds (see the module doc)."""
    root = Path(path)
    if not root.is_dir():
        raise KenningError(f"{root}: not a folder (an OpenClaw workspace is a folder, "
                           "~/.openclaw/workspace by default)")
    if not any((root / n).is_file() for n in CORE) and not (root / "memory").is_dir() \
            and not (root / "bank").is_dir():
        raise KenningError(f"{root}: not an OpenClaw workspace (no MEMORY.md, memory/ or bank/)")
    got = Imported(kind=KIND, root=root)
    texts: dict[str, str] = {}
    for file in sorted(p for p in root.rglob("*.md") if p.is_file()):
        rel = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        top = rel.split("/", 1)[0]
        if rel in BOOTSTRAP:
            got.skipped.append(Skipped(Origin(rel), "the agent's bootstrap file (persona, "
                                                    "instructions), not memory"))
            continue
        if rel not in CORE and top not in ("memory", "bank"):
            got.skipped.append(Skipped(Origin(rel), "not an OpenClaw memory file (memory is "
                                                    "MEMORY.md, memory/ and bank/)"))
            continue
        try:
            text = file.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = file.read_bytes()[:exc.start].count(b"\n") + 1
            got.problems.append(InputProblem(Origin(rel, line),
                                             f"not UTF-8 (byte {exc.start})"))
            continue
        got.files.append(rel)
        texts[rel] = text
    cores = [n for n in CORE if n in texts]
    if len(cores) == 2 and texts[cores[0]] == texts[cores[1]]:
        cores = cores[:1]  # one file seen twice (a case-insensitive file system)
    if len(cores) == 2:
        # one core memory in the vault: both files, one after the other
        got.documents.append(_document("memory.md", cores[0], texts[cores[0]].rstrip("\n")
                                       + "\n\n" + texts[cores[1]]))
        got.notes.append("both MEMORY.md and memory.md exist; imported one after the other as "
                         "core memory")
    elif cores:
        got.documents.append(_document("memory.md", cores[0], texts[cores[0]]))
    entities: dict[str, ImportedEntity] = {}
    names: dict[str, str] = {}
    for rel, text in texts.items():
        if rel.startswith("bank/entities/"):
            entity = _entity(rel, text, got)
            if entity is None:
                continue
            for name in (entity.name, *entity.aliases):
                names.setdefault(_norm(name), entity.name)
            if _norm(entity.name) in entities:
                got.skipped.append(Skipped(entity.origin, f"{entity.name!r} again (also "
                                   f"{entities[_norm(entity.name)].origin.file}); merged"))
                entities[_norm(entity.name)].facts.extend(entity.facts)
                entities[_norm(entity.name)].timeline.extend(entity.timeline)
                continue
            entities[_norm(entity.name)] = entity
    for rel, text in texts.items():
        if rel.startswith("memory/"):
            _daily(rel, text, got)
        elif rel.startswith("bank/") and not rel.startswith("bank/entities/"):
            got.documents.append(_document(rel, rel, text))
            if rel.split("/", 1)[1] in BANK_FILES:
                _bank_file(rel, text, got, entities, names)
    got.entities.extend(entities.values())
    return got


def _norm(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").split()).casefold()


def _document(path: str, rel: str, text: str) -> ImportedDocument:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return ImportedDocument(path=path, text=text, origin=Origin(rel, 1, f"{rel}@{digest}",
                                                                _day_of(rel)))


def _day_of(rel: str) -> str | None:
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return stem if rel.startswith("memory/") and _DAY.match(stem) else None


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _daily(rel: str, text: str, got: Imported) -> None:
    """A daily log (or another memory file), kept whole; bad Retain bullets reported."""
    got.documents.append(_document(rel, rel, text))
    in_retain = None
    for number, line in enumerate(_lines(text), 1):
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if heading.group(2).strip().casefold() == "retain" and level >= 2:
                in_retain = level
            elif in_retain is not None and level <= in_retain:
                in_retain = None
            continue
        bullet = _BULLET.match(line)
        if in_retain is None or not bullet:
            continue
        typed = _TYPED.match(bullet.group(1))
        if not typed or typed.group(1).upper() not in vocabulary.RETAIN_KINDS \
                or not typed.group(4).strip():
            got.skipped.append(Skipped(Origin(rel, number, None, _day_of(rel)),
                                       "Retain bullet is not 'K: text' (K one of "
                                       f"{', '.join(vocabulary.RETAIN_KINDS)}); kept in the "
                                       "log's text, not read as a retained fact"))
            continue
        conf = typed.group(2)
        if conf is not None and _confidence(conf) is None:
            got.notes.append(f"{rel}:{number}: confidence {conf!r} is not a number from 0 "
                             "to 1; the bullet is kept as written (Kenning reads it without)")


def _confidence(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if 0 <= number <= 1 else None


def _entity(rel: str, text: str, got: Imported) -> ImportedEntity | None:
    from kenning.vault.page import parse_page

    page = parse_page(text, rel)
    bad = [p for p in page.problems if p.code == "frontmatter"]
    if bad:
        got.problems.append(InputProblem(Origin(rel, bad[0].line),
                                         f"frontmatter: {bad[0].message}"))
        return None
    front: dict[str, Any] = dict(page.frontmatter)
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    lines = _lines(text)
    start = page.body_start - 1 if page.body_start else 0
    name = None
    for line in lines[start:]:
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) == 1:
            name = heading.group(2).strip()
            break
        if line.strip():
            break
    name = str(front.pop("title", None) or name or " ".join(stem.replace("-", " ")
                                                               .replace("_", " ").split()))
    aliases = [str(a) for a in (front.pop("aliases", None) or [])
               if isinstance(a, (str, int, float))]
    if isinstance(page.frontmatter.get("aliases"), str):
        aliases = [page.frontmatter["aliases"]]
    if stem != name and stem not in aliases:
        aliases.append(stem)  # @The-Castle, @The_Castle and [[The-Castle]] still find it
    raw_type = front.pop("type", None)
    origin = Origin(rel, 1, f"entity/{stem}")
    if raw_type is None:
        kind = "thing"
        got.mapped[("type", "(none)")] = "thing"
    else:
        try:
            kind = vocabulary.entity_type(str(raw_type))
        except VocabularyError:
            kind = "thing"
            got.notes.append(f"{rel}: type {raw_type!r} is not Kenning's; imported as thing")
        got.mapped[("type", str(raw_type))] = kind
    entity = ImportedEntity(name=name, type=kind, origin=origin,
                            source_type=str(raw_type) if raw_type is not None else None,
                            aliases=aliases, frontmatter=front)
    domain = front.pop("domain", None)
    if isinstance(domain, str):
        entity.domain = domain
    created = front.pop("created", None)
    if created is not None:
        entity.created = str(created)
    summary: list[str] = []
    body: list[str] = []
    section: list[str] = []
    heading_of_section: str | None = None
    opinions = False
    seen_h1 = False
    summary_done = False
    number = start
    while number < len(lines):
        line = lines[number]
        number += 1
        heading = _HEADING.match(line)
        if heading:
            if len(heading.group(1)) == 1 and not seen_h1:
                seen_h1 = True
                continue
            summary_done = True
            if section and any(s.strip() for s in section):
                body.extend([heading_of_section or "", *section] if heading_of_section
                            else section)
            heading_of_section, section = line, []
            opinions = "opinion" in heading.group(2).casefold()
            continue
        bullet = _BULLET.match(line)
        if bullet:
            summary_done = True
            # continuation lines (indented) belong to the bullet
            parts = [bullet.group(1)]
            while number < len(lines) and lines[number].startswith(("  ", "\t")) \
                    and lines[number].strip():
                parts.append(lines[number].strip().lstrip("-*+ ").strip())
                number += 1
            _item(" ".join(parts), Origin(rel, number - len(parts) + 1), entity, got,
                  opinion=opinions)
            continue
        if not summary_done and heading_of_section is None:
            if line.strip():
                summary.append(line.strip())
            elif summary:
                summary_done = True
            continue
        section.append(line)
    if section and any(s.strip() for s in section):
        body.extend([heading_of_section, *section] if heading_of_section else section)
    entity.summary = " ".join(summary) or None
    kept = "\n".join(body).strip("\n")
    entity.body = kept + "\n" if kept else None
    return entity


def _item(text: str, origin: Origin, entity: ImportedEntity, got: Imported, *,
          opinion: bool = False) -> None:
    """One bullet of an entity page: a fact, a relation or a timeline line."""
    text = text.strip()
    if not text:
        got.skipped.append(Skipped(origin, "empty bullet"))
        return
    dated = _DATED.match(text)
    if dated and dated.group(2).strip():
        date, rest = dated.group(1), dated.group(2).strip()
        typed = _TYPED.match(rest)
        entity.timeline.append(ImportedEvent(date, typed.group(4).strip() if typed else rest,
                                             origin))
        return
    fact = _fact(text, origin, got, opinion=opinion)
    if fact is not None:
        entity.facts.append(fact)


def _mention_name(mention: str) -> str:
    found = _MENTION.match(mention)
    return (found.group(1) or found.group(2)) if found else mention


def _fact(text: str, origin: Origin, got: Imported, *, opinion: bool = False,
          own: str | None = None) -> ImportedFact | None:
    kind = None
    confidence = None
    typed = _TYPED.match(text)
    if typed and typed.group(1).upper() in vocabulary.RETAIN_KINDS and typed.group(4).strip():
        kind = typed.group(1).upper()
        if typed.group(2) is not None:
            confidence = _confidence(typed.group(2))
            if confidence is None:
                got.notes.append(f"{origin.file}:{origin.line}: confidence "
                                 f"{typed.group(2)!r} is not a number from 0 to 1; the fact "
                                 "is kept without it")
        mentions = " ".join(m for m in typed.group(3).split()
                            if own is None or _norm(_mention_name(m)) != _norm(own))
        text = typed.group(4).strip()
        if mentions:
            text = f"{text} ({mentions})"
    elif (conf := _CONF.search(text)) is not None:
        confidence = _confidence(conf.group(1))
    relation = target = None
    rel = _RELATION.match(text)
    if rel:
        word, target, text = rel.group(1), rel.group(2).strip(), rel.group(3).strip()
        try:
            relation = vocabulary.relation(word)
        except VocabularyError:
            relation = "related_to"
            text = f"{text} ({KIND}: {word})".strip()
        got.mapped[("relation", word)] = relation
    epistemic = None
    if kind == "O" or opinion or confidence is not None:
        epistemic = "hypothesis"
    elif kind == "W":
        epistemic = None
    if kind in ("B", "S"):
        text = f"{text} ({vocabulary.RETAIN_KINDS[kind]})"
    return ImportedFact(text=text, origin=origin, relation=relation, target=target,
                        epistemic=epistemic, confidence=confidence, recorded=origin.date)


def _bank_file(rel: str, text: str, got: Imported, entities: dict[str, ImportedEntity],
               names: dict[str, str]) -> None:
    """``bank/world|experience|opinions.md``: a bullet naming an entity becomes its fact."""
    opinion = rel.endswith("opinions.md")
    for number, line in enumerate(_lines(text), 1):
        bullet = _BULLET.match(line)
        if not bullet:
            continue
        body = bullet.group(1).strip()
        dated = _DATED.match(body)
        date = dated.group(1) if dated and dated.group(2).strip() else None
        rest = dated.group(2).strip() if date and dated else body
        typed = _TYPED.match(rest)
        found = [m.group(1) or m.group(2) for m in _MENTION.finditer(
            typed.group(3) if typed and typed.group(3).strip() else rest)]
        if not found:
            continue   # kept in the bank document; it names no entity
        who = found[0].strip()
        key = _norm(who)
        name = names.get(key) or " ".join(who.replace("_", " ").split())
        if _norm(name) not in entities:
            entities[_norm(name)] = ImportedEntity(name=name, type="thing", origin=Origin(
                rel, number, f"mention/{name}"), source_type=None)
            got.mapped[("type", "(mentioned)")] = "thing"
            names[key] = name
        entity = entities[_norm(name)]
        origin = Origin(rel, number, None, date)
        if date and typed and typed.group(1).upper() in ("B", "S"):
            entity.timeline.append(ImportedEvent(date, typed.group(4).strip(), origin))
            continue
        fact = _fact(rest, origin, got, opinion=opinion, own=who)
        if fact is not None:
            entity.facts.append(fact)
