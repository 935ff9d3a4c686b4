"""Import a RAWThink vault (``rawthink-mcp`` 2.x): ``memory.jsonl`` plus its Markdown folders.

``memory.jsonl`` holds one JSON object a line: ``{"type": "entity", "name", "entityType",
"domain", "epistemic", "visibility", "observations": [...]}`` or ``{"type": "relation",
"from", "to", "relationType"}``. An observation is a string (old files) or ``{"text",
"kind", "created", "status", "invalidated_at", "superseded_by"}``; a decision is an entity of
type ``decision`` whose observations have kinds ``decided``/``because``/``rejected``/
``touches``. ``sessions/`` and handoffs become session documents, ``qnotes/`` notes.

RAWThink has no ids: an observation's id is ``<entity name>#<sha1 of its text, 10 hex>``, so
re-importing an appended file finds the same items again; a relation's is
``<from>-><relationType>-><to>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.model import (
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


def _date(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:19]


def _fold(imported: Imported, what: str, word: str, fold: Any, fallback: str) -> str:
    try:
        mapped = fold(word)
    except VocabularyError:
        mapped = fallback
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


def _entity(imported: Imported, name: str, number: int, item: dict[str, Any],
            by_name: dict[str, ImportedEntity]) -> None:
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
        epistemic = None
    entity = by_name.get(ename)
    if entity is None:
        fm: dict[str, Any] = {}
        if item.get("visibility"):
            fm["visibility"] = item["visibility"]
        entity = ImportedEntity(name=ename, type=etype, origin=origin, source_type=source_type,
                                domain=kdomain, epistemic=epistemic, frontmatter=fm)
        by_name[ename] = entity
        imported.entities.append(entity)
    else:
        imported.notes.append(f"{name}:{number}: entity {ename!r} appears again; merged")
    decided: str | None = None
    because: str | None = None
    rejected: list[str] = []
    first_date: str | None = None
    seen = {f.origin.id for f in entity.facts}
    for obs in item.get("observations") or []:
        if isinstance(obs, str):
            obs = {"text": obs, "status": "active"}
        if not isinstance(obs, dict) or not isinstance(obs.get("text"), str):
            imported.skipped.append(Skipped(origin, "observation that is not text"))
            continue
        text = obs["text"]
        created = _date(obs.get("created"))
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
            continue
        seen.add(oid)
        status = obs.get("status") or "active"
        if status not in vocabulary.FACT_STATUSES:
            status = "active"
        fact = ImportedFact(text=text, origin=Origin(name, number, id=oid, date=created),
                            recorded=created, status=status, epistemic=epistemic,
                            expired=_date(obs.get("invalidated_at")))
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
    entity.created = entity.created or first_date
    _link_successors(entity)


def _link_successors(entity: ImportedEntity) -> None:
    keys = {f.origin.key() for f in entity.facts}
    for fact in entity.facts:
        if fact.superseded_by and fact.superseded_by not in keys:
            fact.superseded_by = None


def _relation(imported: Imported, name: str, number: int, item: dict[str, Any],
              by_name: dict[str, ImportedEntity]) -> None:
    src, dst, word = item.get("from"), item.get("to"), str(item.get("relationType") or "")
    if not isinstance(src, str) or not isinstance(dst, str) or not src or not dst:
        imported.problems.append(InputProblem(Origin(name, number), "relation without from/to"))
        return
    rel = _fold(imported, "relation", word, vocabulary.relation, "related_to")
    text = "" if rel == word else f"(rawthink: {word})"
    origin = Origin(name, number, id=f"{src}->{word}->{dst}")
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
        return
    entity.facts.append(ImportedFact(text=text, origin=origin, relation=rel, target=dst))


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
        for number, item in items:
            kind = item.get("type")
            if kind == "entity":
                _entity(imported, name, number, item, by_name)
            elif kind == "relation":
                relations.append((number, item))
            else:
                imported.skipped.append(Skipped(Origin(name, number),
                                                f"unknown item type {kind!r}"))
        for number, item in relations:
            _relation(imported, name, number, item, by_name)
    if root.is_dir():
        _documents(imported, root)
    return imported
