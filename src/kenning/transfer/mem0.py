"""Read a mem0 JSON export: memories with their ids, dates, scopes, metadata and categories.

Accepted shapes (all what mem0 itself prints): ``Memory.get_all()`` / ``search()`` output,
``{"results": [...]}`` with, when the graph store was on, ``"relations": [{"source",
"relationship", "destination"|"target"}]``; a bare list of memories; ``{"memories": [...]}``.
PATH is the JSON file, or a folder whose ``*.json`` files are all read.

Who a memory is about (docs/import.md "## mem0"):

- a memory's ``user_id`` is the person it is about. When the whole input has **one** user (a
  personal store), or the user is mem0's default (``default_user``, ``user``, ``me``), that
  user is the vault's owner, who never has a page in Kenning: the owner's memories become
  ``W`` bullets of the ``## Retain`` section of the daily log of the day mem0 recorded them
  (``memory/YYYY-MM-DD.md``), each with its mem0 id, so Kenning's reflect folds them further;
- any other user is a ``person`` page named by the user id; an agent's own memories (an
  ``agent_id`` and no ``user_id``) go on a page for the agent (``thing``, imported type
  ``agent``);
- graph relations become relation facts on the source's page (a relation word Kenning does not
  know becomes ``related_to`` with the word kept in the text); a relation from the owner is a
  fact on the destination's page.

Every memory keeps its id (the citation), ``created_at`` (recorded), and everything else it
carries — ``categories``, ``metadata``, ``run_id``, ``agent_id``, ``actor_id``, ``role``,
``updated_at`` and fields this reader does not know — readable in the fact's text.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.transfer.model import (
    Imported,
    ImportedDocument,
    ImportedEntity,
    ImportedFact,
    InputProblem,
    Origin,
    Skipped,
)

KIND = "mem0"
#: user ids mem0 and its integrations use for "the one user of this store"
OWNER_IDS = frozenset({"default_user", "default", "user", "me", "owner"})
#: a memory's fields this reader turns into something; anything else is kept in the text
KNOWN = frozenset({"id", "memory", "text", "data", "hash", "metadata", "categories",
                   "created_at", "updated_at", "user_id", "agent_id", "run_id", "actor_id",
                   "role", "score", "expiration_date", "attributed_to", "immutable",
                   "event", "text_lemmatized"})
#: fields shown in the text only when set, in this order
SHOWN = ("run_id", "agent_id", "actor_id", "role", "attributed_to")


@dataclass
class _Memory:
    data: dict[str, Any]
    origin: Origin
    text: str


def read(path: Path) -> Imported:
    """Everything the mem0 export at ``path`` holds (see the module doc)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if p.is_file())
        if not files:
            raise KenningError(f"{path}: no *.json file (a mem0 export is a JSON file)")
        base = path
    elif path.is_file():
        files, base = [path], path.parent
    else:
        raise KenningError(f"{path}: no such file or folder")
    got = Imported(kind=KIND, root=path)
    memories: list[_Memory] = []
    relations: list[tuple[dict[str, Any], Origin]] = []
    for file in files:
        rel = file.relative_to(base).as_posix()
        got.files.append(rel)
        _read_file(file, rel, got, memories, relations)
    if got.problems:
        return got
    _build(got, memories, relations)
    return got


def _read_file(file: Path, rel: str, got: Imported, memories: list[_Memory],
               relations: list[tuple[dict[str, Any], Origin]]) -> None:
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = file.read_bytes()[:exc.start].count(b"\n") + 1
        got.problems.append(InputProblem(Origin(rel, line), f"not UTF-8 (byte {exc.start})"))
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        got.problems.append(InputProblem(Origin(rel, exc.lineno),
                                         f"not JSON ({exc.msg}, column {exc.colno})"))
        return
    lines = _Lines(text)
    items: Any
    graph: Any = None
    if isinstance(data, list):
        items = data
    elif isinstance(data, dict) and isinstance(data.get("results", data.get("memories")), list):
        items = data.get("results", data.get("memories"))
        graph = data.get("relations")
        other = sorted(set(data) - {"results", "memories", "relations"})
        if other:
            got.notes.append(f"{rel}: top-level field(s) {', '.join(other)} are not memories; "
                             "kept in the copied original only")
    elif isinstance(data, dict) and ("memory" in data or "id" in data):
        items = [data]
    else:
        got.problems.append(InputProblem(Origin(rel, 1), 'not a mem0 export (expected a list '
                                         'of memories or {"results": [...]})'))
        return
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            got.skipped.append(Skipped(Origin(rel, lines.find_value(item)),
                                       f"results[{index}] is not a memory object"))
            continue
        mid = item.get("id")
        line = lines.find_value(str(mid) if mid is not None else item.get("memory", ""))
        date = item.get("created_at") if isinstance(item.get("created_at"), str) else None
        origin = Origin(rel, line, str(mid) if mid is not None else None, date)
        body = item.get("memory", item.get("text", item.get("data")))
        if not isinstance(body, str) or not body.strip():
            got.skipped.append(Skipped(origin, "memory has no text"))
            continue
        memories.append(_Memory(item, origin, " ".join(body.split())))
    if graph is None:
        return
    if isinstance(graph, dict):   # what Memory.add returns: added/deleted entities
        graph = [*(graph.get("added_entities") or [])]
    if not isinstance(graph, list):
        got.skipped.append(Skipped(Origin(rel, lines.find('"relations"')),
                                   "relations is not a list; kept in the copied original"))
        return
    start = lines.find('"relations"') or 1
    for index, edge in enumerate(graph):
        if isinstance(edge, list) and len(edge) == 1:
            edge = edge[0]
        line = lines.find('"source"', start)
        start = line + 1 if line else start
        origin = Origin(rel, line, f"relation/{index}")
        if not isinstance(edge, dict):
            got.skipped.append(Skipped(origin, f"relations[{index}] is not an object"))
            continue
        source, word = edge.get("source"), edge.get("relationship", edge.get("relation"))
        target = edge.get("destination", edge.get("target"))
        if not all(isinstance(v, str) and v.strip() for v in (source, word, target)):
            got.skipped.append(Skipped(origin, f"relations[{index}] lacks source, "
                                               "relationship or destination"))
            continue
        relations.append((edge, origin))


class _Lines:
    """Line numbers of strings in a JSON text (json.loads gives no positions)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.after = 0

    def find_value(self, value: Any) -> int | None:
        """The line of a JSON string value, however the file escaped it."""
        for ascii_only in (False, True):
            at = self.find(json.dumps(value, ensure_ascii=ascii_only), peek=True)
            if at is not None:
                return self.find(json.dumps(value, ensure_ascii=ascii_only))
        return None

    def find(self, needle: str, from_line: int = 0, *, peek: bool = False) -> int | None:
        lo = self.starts[from_line - 1] if from_line else self.after
        at = self.text.find(needle, lo)
        if at < 0:
            at = self.text.find(needle)
        if at < 0:
            return None
        if not from_line and not peek:
            self.after = at + 1
        return bisect.bisect_right(self.starts, at)


def _graph_name(value: str) -> str:
    """mem0's graph writes names lower case with ``_`` for spaces."""
    return " ".join(value.replace("_", " ").split())


def _build(got: Imported, memories: list[_Memory],
           relations: list[tuple[dict[str, Any], Origin]]) -> None:
    users = list(dict.fromkeys(str(m.data["user_id"]) for m in memories
                               if m.data.get("user_id") not in (None, "")))
    owners = {u for u in users if u.casefold() in OWNER_IDS}
    if len(users) == 1:
        owners.add(users[0])
    if owners:
        got.notes.append(f"user {', '.join(sorted(owners))} taken as the vault's owner (me): "
                         "their memories are Retain bullets of the daily logs, not a page")
    entities: dict[str, ImportedEntity] = {}
    seen: dict[str, Origin] = {}
    unknown: set[str] = set()
    days: dict[str, list[tuple[_Memory, str]]] = {}

    def entity(name: str, kind: str, source_type: str, origin: Origin) -> ImportedEntity:
        key = name.casefold()
        if key not in entities:
            entities[key] = ImportedEntity(name=name, type=kind, origin=Origin(
                origin.file, origin.line, f"{source_type}/{name}"), source_type=source_type)
            got.mapped[("type", source_type)] = kind
        return entities[key]

    for memory in memories:
        data, origin = memory.data, memory.origin
        if origin.id is not None:
            if origin.id in seen:
                first = seen[origin.id]
                got.skipped.append(Skipped(origin, f"duplicate id {origin.id} (first at "
                                                   f"{first.file}:{first.line}); not imported "
                                                   "again"))
                continue
            seen[origin.id] = origin
        unknown.update(k for k in data if k not in KNOWN)
        user = data.get("user_id")
        user = str(user) if user not in (None, "") else None
        agent = data.get("agent_id")
        agent = str(agent) if agent not in (None, "") else None
        owner = user is not None and user in owners
        text = memory.text + _extras(data, skip={"user_id"} if user else {"agent_id"},
                                     expiry=owner)
        if owner:
            day = (origin.date or "")[:10]
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
                got.skipped.append(Skipped(origin, "owner's memory without a created_at date "
                                                   "(no daily log to put it in)"))
                continue
            days.setdefault(day, []).append((memory, text))
            continue
        if user is not None:
            page = entity(user, "person", "user", origin)
        elif agent is not None:
            page = entity(agent, "thing", "agent", origin)
        else:
            run = data.get("run_id")
            if run in (None, ""):
                got.skipped.append(Skipped(origin, "memory has no user_id, agent_id or run_id "
                                                   "(nobody it is about)"))
                continue
            page = entity(str(run), "thing", "run", origin)
        page.facts.append(ImportedFact(
            text=text, origin=origin, recorded=origin.date,
            valid_to=_str(data.get("expiration_date"))))
    if unknown:
        got.notes.append(f"field(s) {', '.join(sorted(unknown))} are not mem0's documented "
                         "memory fields; kept in each fact's text")
    for edge, origin in relations:
        source = _graph_name(edge["source"])
        target = _graph_name(edge.get("destination", edge.get("target")))
        word = " ".join(edge.get("relationship", edge.get("relation")).split())
        try:
            relation = vocabulary.relation(word)
            text = ""
        except VocabularyError:
            relation = "related_to"
            text = f"({KIND}: {word})"
        if source in owners or source.casefold() in OWNER_IDS:
            page = entity(target, "thing", "graph node", origin)
            page.facts.append(ImportedFact(text=f"the vault's owner ({source}) {word} "
                                           f"{target} ({KIND} graph relation)", origin=origin))
            continue
        got.mapped[("relation", word)] = relation
        entity(target, "thing", "graph node", origin)
        entity(source, "thing", "graph node", origin).facts.append(ImportedFact(
            text=text, origin=origin, relation=relation, target=target))
    got.entities.extend(entities.values())
    for day, items in sorted(days.items()):
        got.documents.append(_daily_log(day, items))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _extras(data: dict[str, Any], *, skip: set[str], expiry: bool = False) -> str:
    """What the memory carries besides its text, readable: ``(categories: food; …)``."""
    parts: list[str] = []
    cats = data.get("categories")
    if isinstance(cats, list) and cats:
        parts.append("categories: " + ", ".join(_scalar(c) for c in cats))
    elif cats not in (None, [], ""):
        parts.append(f"categories: {_scalar(cats)}")
    meta = data.get("metadata")
    if isinstance(meta, dict) and meta:
        parts.append("metadata: " + ", ".join(f"{k}={_scalar(v)}" for k, v in meta.items()))
    elif meta not in (None, {}, ""):
        parts.append(f"metadata: {_scalar(meta)}")
    for key in SHOWN:
        if key not in skip and data.get(key) not in (None, ""):
            parts.append(f"{key.removesuffix('_id')}: {_scalar(data[key])}")
    if expiry and isinstance(data.get("expiration_date"), str):
        parts.append(f"expires {data['expiration_date']}")
    if data.get("immutable"):
        parts.append("immutable")
    updated = data.get("updated_at")
    if isinstance(updated, str) and updated and updated != data.get("created_at"):
        parts.append(f"updated {updated}")
    for key in sorted(k for k in data if k not in KNOWN):
        parts.append(f"{key}: {_scalar(data[key])}")
    text = "; ".join(" ".join(p.split()) for p in parts)
    return f" ({text.replace('[[', '[ [')})" if text else ""


def _daily_log(day: str, items: list[tuple[_Memory, str]]) -> ImportedDocument:
    """The owner's memories of one day, as the Retain section of that day's log."""
    from kenning.vault.page import RetainItem, append_retain, new_page

    text = new_page(title=day, frontmatter={"type": "daily", "date": day})
    for memory, body in items:
        tail = f"{KIND} id {memory.origin.id}" if memory.origin.id else KIND
        when = (memory.origin.date or "")[11:16]
        tail += f", {when}" if when else ""
        text = append_retain(text, RetainItem(0, "W", (), None, f"{body} [{tail}]"))
    first = items[0][0].origin
    ids = ",".join(m.origin.id or f"L{m.origin.line}" for m, _ in items)
    key = hashlib.sha256(ids.encode()).hexdigest()[:12]
    return ImportedDocument(path=f"memory/{day}.md", text=text,
                            origin=Origin(first.file, first.line, f"daily/{day}/{key}", day))
