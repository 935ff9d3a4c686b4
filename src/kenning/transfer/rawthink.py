"""Import a RAWThink vault (``rawthink-mcp`` 2.x): ``memory.jsonl`` plus its Markdown folders.

``memory.jsonl`` holds one JSON object a line: ``{"type": "entity", "name", "entityType",
"domain", "epistemic", "visibility", "observations": [...]}`` or ``{"type": "relation",
"from", "to", "relationType"}``. An observation is a string (old files) or ``{"text",
"kind", "created", "status", "invalidated_at", "superseded_by"}``; a decision is an entity of
type ``decision`` whose observations have kinds ``decided``/``because``/``rejected``/
``touches``. ``sessions/`` and handoffs become session documents, ``qnotes/`` notes.

The same reader takes the other ``memory.jsonl`` files written in the shape of the MCP
"memory" server, as found in public repositories: the item's kind in ``_type`` instead of
``type``, or in neither (an object with ``name`` and ``entityType`` is an entity, one with
``from``/``to`` and ``relationType`` a relation); ``from_entity``/``to_entity``; observations as
objects with ``text`` or ``content`` and a ``timestamp``/``createdAt``; dates as ISO text or
unix seconds or milliseconds (``createdAt``, ``_savedAt``). An entity's other keys
(``weight``, ``createdBy``, ``updatedAt``…) are kept in its page's frontmatter (dates as ISO
text; a key Kenning owns, such as ``status``, as ``rawthink_<key>``); a relation's or an
observation's other fields, and lines that are neither entity nor relation, are reported as
skipped with the reason, never dropped silently.

RAWThink has no ids: an observation's id is ``<entity name>#<sha1 of its text, 10 hex>``, so
re-importing an appended file finds the same items again; a relation's is
``<from>-><relationType>-><to>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.model import (
    KENNING_KEYS,
    Imported,
    ImportedDecision,
    ImportedDocument,
    ImportedEntity,
    ImportedFact,
    InputProblem,
    Origin,
    Skipped,
)

KIND = "rawthink"
MEMORY = "memory.jsonl"
MAX_LINE = 10 * 1024 * 1024
_DOC_FOLDERS = (("sessions", "sessions"), ("handoffs", "sessions"), ("qnotes", "notes"))


class RawthinkPathError(KenningError):
    """PATH is neither a RAWThink vault folder nor a memory.jsonl file."""


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


_ISO = re.compile(r"\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?)?")
_UNIX = re.compile(r"\d{9,13}(\.\d+)?")
#: unix time at or above this is in milliseconds (1e11 seconds is the year 5138)
_MILLIS = 100_000_000_000

_ENTITY_KEYS = {"type", "_type", "name", "entityType", "observations", "domain", "epistemic",
                "visibility"}
#: RAWThink's ranking state on an entity: not memory, reported as skipped
_RANKING = ("activation", "last_accessed")
_CREATED_KEYS = ("created", "createdAt", "created_at", "timestamp")
_RELATION_KEYS = {"type", "_type", "from", "to", "from_entity", "to_entity", "relationType",
                  "validFrom", "valid_from", "validTo", "valid_to", *_CREATED_KEYS}
_OBSERVATION_KEYS = {"text", "content", "kind", "status", "invalidated_at", "superseded_by",
                     *_CREATED_KEYS}


def _date(value: Any) -> str | None:
    """ISO text (``2025-03-01`` or ``2025-03-01T09:30:00``, UTC) from ISO text or unix seconds
    or milliseconds (a number or digits); None when ``value`` is none of these."""
    if isinstance(value, str) and _UNIX.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if abs(value) >= _MILLIS else value
        try:
            return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not _ISO.match(value.strip()):
        return None
    return value.strip()[:19].replace(" ", "T")


def _first_date(imported: Imported, where: Origin, item: dict[str, Any],
                keys: tuple[str, ...]) -> str | None:
    """The date under the first of ``keys`` that ``item`` has; a value there that is not a
    date is reported as skipped."""
    for key in keys:
        if item.get(key) is None or item.get(key) == "":
            continue
        day = _date(item[key])
        if day is None:
            imported.skipped.append(Skipped(where, f"{key} {item[key]!r} is not a date (ISO "
                                                   "text or unix time); left out"))
        return day
    return None


def _kind(item: dict[str, Any]) -> Any:
    """``entity``/``relation`` as the item says (``type`` or ``_type``) or as its keys show."""
    for key in ("type", "_type"):
        if item.get(key) is not None:
            return item[key]
    if "name" in item and "entityType" in item:
        return "entity"
    if ("from" in item or "from_entity" in item) and ("to" in item or "to_entity" in item) \
            and "relationType" in item:
        return "relation"
    return None


_PLURAL = {"entity": "entities", "relation": "relations", "observation": "observations"}


class _Unread:
    """Fields of relations and observations Kenning has no place for: one skipped entry per
    field and kind of item, with how many items had it and on which lines."""

    def __init__(self) -> None:
        self.lines: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.sample: dict[tuple[str, str], Any] = {}

    def add(self, what: str, item: dict[str, Any], known: set[str], number: int) -> None:
        for key in item:
            if key not in known:
                self.lines[(what, key)].append(number)
                self.sample.setdefault((what, key), item[key])

    def why(self, what: str, key: str) -> str:
        if what == "entity" and key in _RANKING:
            return "RAWThink's ranking state, not memory"
        return "Kenning has no place for it"

    def report(self, imported: Imported, name: str) -> None:
        for (what, key), lines in self.lines.items():
            shown = ", ".join(map(str, sorted(set(lines))[:5])) \
                + (", …" if len(set(lines)) > 5 else "")
            sample = json.dumps(self.sample[(what, key)], ensure_ascii=False)
            sample = sample if len(sample) <= 60 else sample[:57] + "…"
            imported.skipped.append(Skipped(Origin(name, lines[0]), (
                f"{what} field {key!r} not imported: {self.why(what, key)} "
                f"({len(lines)} {what if len(lines) == 1 else _PLURAL[what]}, lines {shown}; "
                f"e.g. {sample}); the original keeps it")))


def _fold(imported: Imported, what: str, word: str, fold: Any, fallback: str) -> str:
    try:
        mapped = fold(word)
    except VocabularyError:
        mapped = fallback
        if (what, word) not in imported.mapped:
            imported.notes.append(f"unknown {what} {word!r} mapped to {fallback}")
    imported.mapped[(what, word)] = mapped
    return mapped


def _lines(raw: bytes, name: str, imported: Imported) -> list[tuple[int, dict[str, Any]]]:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = Origin(name, number)
        if len(line) > MAX_LINE:
            imported.problems.append(InputProblem(where, f"line longer than {MAX_LINE} bytes"))
            continue
        try:
            item = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            imported.problems.append(InputProblem(where, f"not valid JSON ({exc})"))
            continue
        if not isinstance(item, dict):
            imported.problems.append(InputProblem(where, "not a JSON object"))
            continue
        out.append((number, item))
    return out


def _extras(item: dict[str, Any]) -> dict[str, Any]:
    """An entity's keys the reader does not use, for its page's frontmatter: ``…At``/``…_at``
    timestamps as ISO text, a key Kenning owns renamed ``rawthink_<key>``."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key in _ENTITY_KEYS or key in _CREATED_KEYS or key in _RANKING or value is None:
            continue
        if re.search(r"(At|_at)$", key) and (day := _date(value)):
            value = day
        out[f"rawthink_{key}" if key in KENNING_KEYS else key] = value
    return out


def _entity(imported: Imported, name: str, number: int, item: dict[str, Any],
            by_name: dict[str, ImportedEntity], unread: _Unread) -> None:
    origin = Origin(name, number, id=str(item.get("name")))
    ename = item.get("name")
    if not isinstance(ename, str) or not ename.strip():
        imported.problems.append(InputProblem(Origin(name, number), "entity without a name"))
        return
    source_type = str(item.get("entityType") or "thing")
    etype = _fold(imported, "type", source_type, vocabulary.entity_type, "thing")
    dom = item.get("domain")
    kdomain = _fold(imported, "domain", str(dom), vocabulary.domain, "general") if dom else None
    epistemic = item.get("epistemic")
    if epistemic not in vocabulary.EPISTEMIC_STATUSES:
        if epistemic is not None:
            imported.notes.append(f"{name}:{number}: epistemic {epistemic!r} is not Kenning's; "
                                  "imported as unknown")
        epistemic = None
    unread.add("entity", {k: item[k] for k in _RANKING if k in item}, set(), number)
    entity = by_name.get(ename)
    fm = _extras(item)
    if item.get("visibility"):
        fm["visibility"] = item["visibility"]
    if entity is None:
        entity = ImportedEntity(name=ename, type=etype, origin=origin, source_type=source_type,
                                domain=kdomain, epistemic=epistemic, frontmatter=fm)
        by_name[ename] = entity
        imported.entities.append(entity)
    else:
        imported.notes.append(f"{name}:{number}: entity {ename!r} appears again; merged")
        for key, value in fm.items():
            entity.frontmatter.setdefault(key, value)
    observations = item.get("observations")
    if observations is not None and not isinstance(observations, list):
        imported.skipped.append(Skipped(origin, "observations is not a list "
                                        f"({type(observations).__name__}); left out"))
        observations = []
    decided: str | None = None
    because: str | None = None
    rejected: list[str] = []
    first_date: str | None = None
    seen = {f.origin.id for f in entity.facts}
    for index, obs in enumerate(observations or []):
        if isinstance(obs, str):
            obs = {"text": obs, "status": "active"}
        text = next((obs[k] for k in ("text", "content") if isinstance(obs.get(k), str)
                     and obs[k].strip()), None) if isinstance(obs, dict) else None
        if text is None:
            shape = (f"an object with keys {', '.join(sorted(obs)) or 'none'}"
                     if isinstance(obs, dict) else type(obs).__name__)
            imported.skipped.append(Skipped(origin, f"observations[{index}] has no text "
                                                    f"(it is {shape})"))
            continue
        unread.add("observation", obs, _OBSERVATION_KEYS, number)
        created = _first_date(imported, origin, obs, _CREATED_KEYS)
        first_date = first_date or created
        kind = obs.get("kind") or "note"
        if etype == "decision" and kind in ("decided", "because", "rejected"):
            if kind == "decided":
                decided = text
            elif kind == "because":
                because = text
            else:
                rejected.append(text)
            continue
        if kind == "touches":  # a file or area the decision touches, rarely an entity
            text = f"touches: {text}"
        oid = f"{ename}#{_hash(text)}"
        if oid in seen:
            imported.skipped.append(Skipped(origin, f"observations[{index}] is the same text "
                                                    "as an earlier one of the entity; once"))
            continue
        seen.add(oid)
        status = obs.get("status") or "active"
        if status not in vocabulary.FACT_STATUSES:
            imported.notes.append(f"{name}:{number}: observation status {status!r} is not "
                                  "Kenning's; imported as active")
            status = "active"
        fact = ImportedFact(text=text, origin=Origin(name, number, id=oid, date=created),
                            recorded=created, status=status, epistemic=epistemic,
                            expired=_first_date(imported, origin, obs, ("invalidated_at",)))
        if isinstance(obs.get("superseded_by"), str) and obs["superseded_by"]:
            # RAWThink keeps the text of what replaced it; the link is made when that text
            # is an observation of the same entity (see _link_successors).
            fact.text = f"{text} (superseded by: {obs['superseded_by']})"
            fact.superseded_by = f"{name}#{ename}#{_hash(obs['superseded_by'])}"
        entity.facts.append(fact)
    if decided or because or rejected:
        entity.decisions.append(ImportedDecision(
            decided=decided or ename, because=because, rejected=rejected, date=first_date,
            origin=Origin(name, number, id=f"{ename}#decision", date=first_date)))
    created = _first_date(imported, origin, item, _CREATED_KEYS)
    entity.created = entity.created or created or first_date
    _link_successors(entity)


def _link_successors(entity: ImportedEntity) -> None:
    keys = {f.origin.key() for f in entity.facts}
    for fact in entity.facts:
        if fact.superseded_by and fact.superseded_by not in keys:
            fact.superseded_by = None


def _relation(imported: Imported, name: str, number: int, item: dict[str, Any],
              by_name: dict[str, ImportedEntity], unread: _Unread) -> None:
    src = item.get("from", item.get("from_entity"))
    dst = item.get("to", item.get("to_entity"))
    word = str(item.get("relationType") or "")
    if not isinstance(src, str) or not isinstance(dst, str) or not src or not dst:
        imported.problems.append(InputProblem(Origin(name, number), "relation without from/to"))
        return
    rel = _fold(imported, "relation", word, vocabulary.relation, "related_to")
    text = "" if rel == word else f"(rawthink: {word})"
    unread.add("relation", item, _RELATION_KEYS, number)
    where = Origin(name, number)
    created = _first_date(imported, where, item, _CREATED_KEYS)
    origin = Origin(name, number, id=f"{src}->{word}->{dst}", date=created)
    entity = by_name.get(src)
    if entity is None:
        imported.notes.append(f"{name}:{number}: relation from {src!r}, not an entity in the "
                              "file; a page is made for it")
        entity = ImportedEntity(name=src, type="thing", origin=origin)
        by_name[src] = entity
        imported.entities.append(entity)
    if dst not in by_name:
        imported.notes.append(f"{name}:{number}: relation to {dst!r}, not in the file")
    if any(f.origin.id == origin.id for f in entity.facts):
        imported.skipped.append(Skipped(where, f"the relation {origin.id} again; once"))
        return
    entity.facts.append(ImportedFact(
        text=text, origin=origin, relation=rel, target=dst, recorded=created,
        valid_from=_first_date(imported, where, item, ("validFrom", "valid_from")),
        valid_to=_first_date(imported, where, item, ("validTo", "valid_to"))))


def _documents(imported: Imported, root: Path) -> None:
    for folder, target in _DOC_FOLDERS:
        base = root / folder
        if not base.is_dir():
            continue
        for file in sorted(base.rglob("*.md")):
            rel = file.relative_to(root).as_posix()
            try:
                text = file.read_text(encoding="utf-8-sig")
            except UnicodeDecodeError as exc:
                imported.problems.append(InputProblem(Origin(rel), f"not UTF-8 ({exc})"))
                continue
            sub = file.relative_to(base).as_posix()
            text = _doc_type(text, "note" if target == "notes" else "session", imported)
            imported.files.append(rel)
            imported.documents.append(ImportedDocument(
                path=f"{target}/{sub}", text=text, origin=Origin(rel, 1, id=rel)))


_TYPE_LINE = re.compile(r"^type:[ \t]*(.*?)[ \t]*$", re.M)


def _doc_type(text: str, kenning_type: str, imported: Imported) -> str:
    """A session/handoff/qnote keeps its frontmatter; its ``type`` (qnote, handoff…) becomes
    Kenning's (note, session), the original kept as ``rawthink_type``."""
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---", 4)
    if end < 0:
        return text
    head = text[4:end]
    found = _TYPE_LINE.search(head)
    if found is None or found.group(1) == kenning_type:
        return text
    imported.mapped[("type", found.group(1))] = kenning_type
    head = (head[:found.start()] + f"type: {kenning_type}\nrawthink_type: {found.group(1)}"
            + head[found.end():])
    return "---\n" + head + text[end:]


def read(path: Path) -> Imported:
    """Read a RAWThink vault folder or a memory.jsonl file; never writes."""
    path = Path(path)
    if path.is_dir():
        root, memory = path, path / MEMORY
        if not memory.is_file() and not any((path / f).is_dir() for f, _ in _DOC_FOLDERS):
            raise RawthinkPathError(f"{path}: no {MEMORY}, sessions/ or qnotes/ here; "
                                    "not a RAWThink vault")
    elif path.is_file():
        root, memory = path, path
    else:
        raise RawthinkPathError(f"{path}: no such file or folder")
    imported = Imported(kind=KIND, root=root)
    by_name: dict[str, ImportedEntity] = {}
    if memory.is_file():
        name = memory.name
        imported.files.append(name)
        items = _lines(memory.read_bytes(), name, imported)
        relations = []
        unread = _Unread()
        for number, item in items:
            kind = _kind(item)
            if kind == "entity":
                _entity(imported, name, number, item, by_name, unread)
            elif kind == "relation":
                relations.append((number, item))
            elif kind is None:
                imported.skipped.append(Skipped(Origin(name, number), (
                    "no type, and not the keys of an entity (name, entityType) or a relation "
                    f"(from, to, relationType): keys {', '.join(sorted(item)) or 'none'}")))
            else:
                imported.skipped.append(Skipped(Origin(name, number),
                                                f"unknown item type {kind!r}"))
        for number, item in relations:
            _relation(imported, name, number, item, by_name, unread)
        unread.report(imported, name)
    if root.is_dir():
        _documents(imported, root)
    return imported
