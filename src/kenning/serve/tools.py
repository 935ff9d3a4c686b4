"""The MCP tool table: names, short descriptions, JSON schemas, annotations, profiles, handlers.

Three profiles, each a superset of the one before, so an agent loads only the tools it needs:

- ``recall``: read-only — search, recall, page, graph, session_start;
- ``record``: recall + the write path — record, decide, revise, retain, session_close;
- ``full``: record + link, delete, reflect, index.

Handlers run on one worker thread (``Runtime.call``) and return JSON-ready dicts in the shapes of
``kenning.answers`` (each item once, no nulls); a tool with a token budget names how its answer
is cut to fit it (``ToolSpec.cut``), and the server fits the whole answer, notes and marks
included. Values from the closed vocabulary (types, domains, relations, epistemic status) are
folded through ``kenning.vocabulary`` before the schema is checked, so ``company`` becomes
``organization`` and an unknown value is refused with the allowed list.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning import answers, vocabulary
from kenning.errors import IndexBusy, KenningError
from kenning.serve import trust
from kenning.serve.trust import Caller, Refused

if TYPE_CHECKING:
    from kenning.api import Vault

PROFILES: tuple[str, ...] = ("recall", "record", "full")
INDEX_STALE_SECONDS = 2.0

# Kenning keeps these page types itself; agents record the others.
_INTERNAL_TYPES = ("daily", "source", "session", "note", "code")


@dataclass
class Runtime:
    """What a tool handler works with: the vault, the caller, and notes for the answer."""

    vault: Vault
    caller: Caller
    notes: list[str] = field(default_factory=list)
    last_index: list[float] = field(default_factory=lambda: [0.0])
    budget: int | None = None  # the call's token budget: a ceiling on the whole answer

    @property
    def root(self) -> Path:
        return self.vault.root

    def fresh(self) -> None:
        """Bring the index up to date when it may be stale (edits made outside the server).

        Lexical only, like the write path: an embedding pass over many new chunks can take
        minutes, longer than a client waits; `kenning index` (or the `index` tool) adds vectors.
        """
        now = time.monotonic()
        if now - self.last_index[0] < INDEX_STALE_SECONDS:
            return
        try:
            self.vault.index(wait=0.0, embed=False)
        except IndexBusy:
            self.notes.append("another kenning process is indexing; answers may miss the "
                              "newest edits")
            return
        self.last_index[0] = time.monotonic()

    def wrote(self, out: Any = None) -> None:
        """A write happened: the next read refreshes the index first, unless the write says
        it re-indexed what it wrote (the memory writes do, before they answer): a second pass
        would find nothing, and under load it made every search after a write wait for it."""
        if isinstance(out, dict) and out.get("indexed") is True:
            return
        self.last_index[0] = 0.0


Handler = Callable[[Runtime, dict[str, Any]], Any]


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool."""

    name: str
    profile: str  # the smallest profile that has it
    description: str
    schema: dict[str, Any]
    handler: Handler
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    needs: str | None = None  # a Vault method that must exist for the tool to be offered
    cut: answers.Cut | None = None  # how the answer shrinks to fit the call's budget

    def in_profile(self, profile: str) -> bool:
        """True when ``profile`` includes this tool (profiles nest: recall ⊂ record ⊂ full)."""
        return PROFILES.index(self.profile) <= PROFILES.index(profile)


# -- schema helpers ------------------------------------------------------------------------


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties,
                           "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def _str(description: str | None = None) -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {})}


def _int(description: str | None = None) -> dict[str, Any]:
    return {"type": "integer", **({"description": description} if description else {})}


def _enum(values: tuple[str, ...] | list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _list(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


# The idempotency key every write tool takes (kenning.memory.idempotency).
_KEY = {"type": "string", "maxLength": 200,
        "description": "idempotency key: a retry with it returns the first result"}

# Fields whose values are folded through the vocabulary before validation.
_FOLD: dict[str, Callable[[str], str]] = {
    "type": vocabulary.entity_type, "types": vocabulary.entity_type,
    "domain": vocabulary.domain, "domains": vocabulary.domain,
    "rel": vocabulary.relation, "rels": vocabulary.relation,
    "epistemic": vocabulary.epistemic,
}


def fold_vocabulary(value: Any) -> Any:
    """Fold vocabulary synonyms in a call's arguments; unknown values are left for the schema."""
    if isinstance(value, list):
        return [fold_vocabulary(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        fold = _FOLD.get(key)
        if fold is not None and isinstance(item, str):
            out[key] = _try(fold, item)
        elif fold is not None and isinstance(item, list):
            out[key] = [_try(fold, v) if isinstance(v, str) else v for v in item]
        else:
            out[key] = fold_vocabulary(item)
    return out


def _try(fold: Callable[[str], str], value: str) -> str:
    try:
        return fold(value)
    except KenningError:
        return value


def _date(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except (TypeError, ValueError):
        raise Refused(f"{key}: expected a date YYYY-MM-DD, got {value!r}") from None


def _check_folder(folder: str) -> str:
    parts = folder.replace("\\", "/").strip("/").split("/")
    if folder.startswith(("/", "\\", "~")) or ".." in parts or (len(folder) > 1
                                                              and folder[1] == ":"):
        raise Refused(f"folders: must be a folder inside the vault, not {folder!r}")
    return folder


def _check_ref(rt: Runtime, ref: str) -> str:
    """A page reference; when it is written as a path it must stay inside the vault."""
    if not ref.strip():
        raise Refused("ref: empty page reference")
    if trust.looks_like_path(ref):
        trust.safe_path(rt.root, ref.split("#")[0])
    return ref


# -- recall profile ------------------------------------------------------------------------


def _search(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    query = a["query"]
    if not query.strip():
        raise Refused("query: empty")
    notes = rt.notes
    limit = trust.clamp(a.get("limit"), trust.MAX_LIMIT, default=10, name="limit", notes=notes)
    budget = rt.budget = trust.clamp(a.get("budget"), trust.MAX_BUDGET, default=2000,
                                     lower=50, name="budget", notes=notes)
    rt.fresh()
    results = rt.vault.search(
        query, mode=a.get("mode", "hybrid"), types=a.get("types", ()),
        domains=a.get("domains", ()), folders=[_check_folder(f) for f in a.get("folders", ())],
        entity=_check_ref(rt, a["entity"]) if a.get("entity") else None,
        since=_date(a, "since"), until=_date(a, "until"), as_of=_date(a, "as_of"),
        limit=limit, budget=budget, group=a.get("group", "page"), tags=a.get("tags", ()),
        mounts=rt.caller.scope(a.get("mounts")), near_symbol=a.get("near_symbol") or None,
        walk_depth=trust.clamp(a.get("walk_depth"), 3, default=1, name="walk_depth",
                               notes=notes))
    return answers.search(results)


def _recall(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    budget = rt.budget = trust.clamp(a.get("budget"), trust.MAX_BUDGET, default=1500,
                                     lower=50, name="budget", notes=rt.notes)
    rt.fresh()
    # A remote caller's recall is not recorded: it must not move the recency signal that ranks
    # everyone's results.
    answer = rt.vault.recall(a["entity"], budget=budget, overview=bool(a.get("overview")),
                             tags=a.get("tags", ()), record=rt.caller.trusted,
                             mounts=rt.caller.scope(a.get("mounts")))
    return answer.to_dict()


def _page(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    ref = _check_ref(rt, a["ref"])
    rt.fresh()
    mounts = rt.caller.scope(a.get("mounts"))
    if a.get("format") == "markdown":
        from kenning.vault import provenance

        page = rt.vault.find(ref, mounts=mounts)
        ledger = provenance.Ledger(rt.root)
        # Opening a page is deliberate use; a remote caller's must not move everyone's recency.
        text = rt.vault.read(page.path, record=rt.caller.trusted)
        marked = ledger.marked_lines(page.path, text)
        out: dict[str, Any] = {"path": page.path,
                               "text": provenance.mark_markdown(page.path, text, ledger)}
        if marked or ledger.page(page.path):
            out["untrusted_lines"] = marked
        return out
    data = rt.vault.show(ref, record=rt.caller.trusted, mounts=mounts)
    as_of, believed_on = _date(a, "as_of"), _date(a, "believed_on")
    if as_of or believed_on:
        held = rt.vault.facts(data["path"], as_of=as_of, believed_on=believed_on)
        data["facts"] = held.get("facts", []) if isinstance(held, dict) else held
        data["facts_as_of"], data["facts_believed_on"] = as_of, believed_on
    out = answers.page(data)
    if data.get("items"):
        # The page's commitments, asks and decisions, each with its status and citation.
        out["items"] = data["items"]
    return out


def _graph(rt: Runtime, a: dict[str, Any]) -> Any:
    op, v, notes = a["op"], rt.vault, rt.notes
    rels, when = a.get("rels", ()), {"as_of": _date(a, "as_of"),
                                     "believed_on": _date(a, "believed_on")}
    limit = trust.clamp(a.get("limit"), trust.MAX_LIMIT, default=25, name="limit", notes=notes)
    rt.fresh()
    mounts = rt.caller.scope(a.get("mounts"))
    if op == "orphans":
        nodes = v.orphans(types=a.get("types", ()), mounts=mounts)
        return _cut({"nodes": [n.to_dict() for n in nodes]}, "nodes", limit)
    if not a.get("ref"):
        raise Refused(f"ref: required for op={op}")
    if op in CODE_OPS:
        # The code graph: ref is a symbol (qualified name, dotted tail or bare name).
        answer = v.code(CODE_OPS[op], a["ref"], depth=trust.clamp(
            a.get("depth"), 3, default=1, name="depth", notes=notes),
            mounts=mounts)
        key = {"def": "definitions", "refs": "references"}.get(CODE_OPS[op], CODE_OPS[op])
        return _cut(answer, key, limit)
    ref = _check_ref(rt, a["ref"])
    if op == "neighbors":
        edges = v.neighbors(ref, rels=rels, direction=a.get("direction", "both"),
                            mounts=mounts, **when)
        return _cut({"edges": [e.to_dict() for e in edges]}, "edges", limit)
    if op == "backlinks":
        edges = v.backlinks(ref, rels=rels, mounts=mounts, **when)
        return _cut({"edges": [e.to_dict() for e in edges]}, "edges", limit)
    depth = trust.clamp(a.get("depth"), trust.MAX_DEPTH, default=2, name="depth", notes=notes)
    if op == "traverse":
        result = v.traverse(ref, depth=depth, rels=rels, direction=a.get("direction", "out"),
                            mounts=mounts, **when)
        # The nodes shown (nearest first) and only the edges between them: an edge to a page
        # left out by the limit would name a page the answer does not show.
        kept = [result.start, *result.nodes[:limit]]
        titles = {n.id: n.title for n in kept}
        out = {"start": result.start.to_dict(), "depth": result.depth,
               "nodes": [n.to_dict() for n in kept[1:]],
               "edges": [{"src": titles[s], "rel": r, "dst": titles[d]}
                         for s, r, d in result.edges if s in titles and d in titles]}
        if len(result.nodes) > limit:
            out["truncated"] = f"{limit} of {len(result.nodes)} pages shown"
        return out
    # op == "path"
    if not a.get("to"):
        raise Refused("to: required for op=path")
    chain = v.path(ref, _check_ref(rt, a["to"]), max_depth=depth, rels=rels,
                   direction=a.get("direction", "both"), mounts=mounts, **when)
    return {"path": [{**n.to_dict(), "via": rel} for n, rel in chain]}


CODE_OPS = {"definition": "def", "references": "refs", "callers": "callers",
            "callees": "callees"}


def _cut(data: dict[str, Any], key: str, limit: int) -> dict[str, Any]:
    total = len(data[key])
    if total > limit:
        data[key] = data[key][:limit]
        data["truncated"] = f"{limit} of {total} shown"
    return data


def _session_start(rt: Runtime, a: dict[str, Any]) -> Any:
    budget = rt.budget = trust.clamp(a.get("budget"), trust.MAX_BUDGET, default=2000,
                                     lower=100, name="budget", notes=rt.notes)
    rt.fresh()
    return rt.vault.session_start(a.get("project"), budget=budget)


# -- record profile ------------------------------------------------------------------------


def _record(rt: Runtime, a: dict[str, Any]) -> Any:
    if not any(a.get(k) for k in ("entities", "relations", "observations")):
        raise Refused("nothing to record: give entities, relations or observations")
    rt.fresh()  # names are checked against the index: let it see notes edited meanwhile
    out = rt.vault.record(a.get("entities"), a.get("relations"), a.get("observations"),
                          trusted=rt.caller.trusted, key=a.get("key"))
    rt.wrote(out)
    return answers.written(out)


def _decide(rt: Runtime, a: dict[str, Any]) -> Any:
    out = rt.vault.record_decision(a["name"], a["domain"], a["decided"], a["because"],
                                   a.get("rejected"), date=_date(a, "date"),
                                   source=a.get("source"), trusted=rt.caller.trusted,
                                   key=a.get("key"))
    rt.wrote(out)
    return answers.written(out)


def _revise(rt: Runtime, a: dict[str, Any]) -> Any:
    entity = _check_ref(rt, a["entity"])
    if a.get("new_text") is None and not a.get("superseded_by"):
        if not a.get("reason"):
            raise Refused("give new_text (or superseded_by) to revise, or reason to invalidate")
        out = rt.vault.invalidate(entity, a["observation"], reason=a["reason"],
                                  source=a.get("source"), trusted=rt.caller.trusted,
                                  key=a.get("key"))
    else:
        out = rt.vault.revise(entity, a["observation"], a.get("new_text"),
                              superseded_by=a.get("superseded_by"),
                              superseding_entity=a.get("superseding_entity"),
                              valid_from=_date(a, "valid_from"), source=a.get("source"),
                              epistemic=a.get("epistemic"), confidence=a.get("confidence"),
                              trusted=rt.caller.trusted, key=a.get("key"))
    rt.wrote(out)
    return answers.written(out)


def _retain(rt: Runtime, a: dict[str, Any]) -> Any:
    if not a["text"].strip():
        raise Refused("text: empty")
    if a["kind"] == "note":
        out = rt.vault.note(a["text"], title=a.get("title"), trusted=rt.caller.trusted,
                            key=a.get("key"))
    else:
        out = rt.vault.retain(a["kind"], a["text"], a.get("entities"), a.get("confidence"),
                              trusted=rt.caller.trusted, key=a.get("key"))
    rt.wrote(out)
    return answers.written(out)


def _session_close(rt: Runtime, a: dict[str, Any]) -> Any:
    out = rt.vault.session_close(a["transcript"], project=a.get("project"),
                                 summary=a.get("summary"), trusted=rt.caller.trusted,
                                 key=a.get("key"))
    rt.wrote(out)
    return answers.written(out)


# -- full profile --------------------------------------------------------------------------


def _link(rt: Runtime, a: dict[str, Any]) -> Any:
    trust.refuse_unless_allowed(rt.caller, "link")
    rt.fresh()
    out = rt.vault.link(_check_ref(rt, a["from"]), a["rel"], _check_ref(rt, a["to"]),
                        remove=bool(a.get("remove")), valid_from=_date(a, "valid_from"),
                        valid_to=_date(a, "valid_to"))
    rt.wrote(out)
    return answers.written(out)


def _delete(rt: Runtime, a: dict[str, Any]) -> Any:
    trust.refuse_unless_allowed(rt.caller, "delete")
    rt.fresh()
    out = rt.vault.delete(_check_ref(rt, a["ref"]), trusted=rt.caller.trusted)
    rt.wrote(out)
    return answers.written(out)


def _reflect(rt: Runtime, a: dict[str, Any]) -> Any:
    rt.fresh()
    out = rt.vault.reflect(a.get("since", "7d"), apply=a.get("apply", True))
    rt.wrote(out)
    return answers.written(out)


def _index(rt: Runtime, a: dict[str, Any]) -> Any:
    from dataclasses import asdict

    report = rt.vault.index(wait=10.0)
    rt.last_index[0] = time.monotonic()
    data = asdict(report)
    data["skipped"] = [{"path": p, "reason": r} for p, r in report.skipped][:50]
    return data


# -- the table -----------------------------------------------------------------------------


def build_tools() -> list[ToolSpec]:
    """Every tool Kenning can offer (filter with ``offered``)."""
    types = _enum(vocabulary.ENTITY_TYPES)
    record_types = _enum([t for t in vocabulary.ENTITY_TYPES if t not in _INTERNAL_TYPES])
    domains = _enum(vocabulary.DOMAINS)
    rels = _enum(vocabulary.RELATION_TYPES)
    epistemic = _enum(vocabulary.EPISTEMIC_STATUSES)
    fact = {"valid_from": _str(), "valid_to": _str(), "epistemic": epistemic,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}, "source": _str()}
    return [
        ToolSpec(
            "search", "recall",
            "Search the vault (words + meaning); results cite path#Lstart-Lend. "
            "Dates YYYY-MM-DD; as_of = what held then.",
            _obj({"query": _str(), "mode": _enum(("hybrid", "lexical", "dense")),
                  "types": _list(types), "domains": _list(domains), "folders": _list(_str()),
                  "entity": _str("only pages linked to this page"), "since": _str(),
                  "until": _str(), "as_of": _str(), "limit": _int(),
                  "budget": _int("max tokens"), "group": _enum(("page", "chunk")),
                  "tags": _list(_str("all must match; 'a' matches 'a/b'")),
                  "mounts": _list(_str("only these mounts; 'vault' = own pages")),
                  "near_symbol": _str("raise code near this symbol"),
                  "walk_depth": _int()},
                 ("query",)),
            _search, read_only=True, idempotent=True, cut=answers.cut_evidence),
        ToolSpec(
            "recall", "recall",
            "What is known about one entity (person, project, topic…): summary, active facts, "
            "open items (promises, asks, decisions), latest timeline, neighbours, cited.",
            _obj({"entity": _str("name or question"), "budget": _int("max tokens"),
                  "overview": {"type": "boolean"},
                  "tags": _list(_str("the page has all")), "mounts": _list(_str())},
                 ("entity",)),
            _recall, read_only=True, idempotent=True,
            cut=answers.cut_lists("overview", "neighbours", "timeline", "facts", "items")),
        ToolSpec(
            "page", "recall",
            "Read one page by title, alias or vault path: summary, tags, fields, facts, "
            "items, timeline, links; or its Markdown.",
            _obj({"ref": _str(), "format": _enum(("fields", "markdown")), "as_of": _str(),
                  "believed_on": _str(), "mounts": _list(_str())}, ("ref",)),
            _page, read_only=True, idempotent=True),
        ToolSpec(
            "graph", "recall",
            "Typed link graph: neighbors, backlinks, traverse (depth≤4), path (ref→to), "
            "orphans. Code (ref = symbol): definition, references, callers, callees.",
            _obj({"op": _enum(("neighbors", "backlinks", "traverse", "path", "orphans",
                               *CODE_OPS)),
                  "ref": _str(), "to": _str(), "depth": _int(), "rels": _list(rels),
                  "direction": _enum(("out", "in", "both")), "as_of": _str(),
                  "believed_on": _str(), "types": _list(types), "limit": _int(),
                  "mounts": _list(_str())}, ("op",)),
            _graph, read_only=True, idempotent=True),
        ToolSpec(
            "session_start", "recall",
            "Start of a session: core memory, the last handoff for the project, what changed "
            "since.",
            _obj({"project": _str(), "budget": _int("max tokens")}),
            _session_start, read_only=True, idempotent=True, needs="session_start",
            cut=answers.cut_text("text")),
        ToolSpec(
            "record", "record",
            "Record entities, relations, observations (all or nothing). A person's untyped "
            "note is never edited: relations from it become manual links.",
            _obj({
                "entities": _list(_obj({
                    "name": _str(), "type": record_types, "domain": domains,
                    "aliases": _list(_str()), "summary": _str(),
                    "observations": _list({"anyOf": [_str(), _obj(
                        {"text": _str(), **fact}, ("text",))]})}, ("name", "type"))),
                "relations": _list(_obj({"from": _str(), "rel": rels, "to": _str(),
                                         "valid_from": _str(), "valid_to": _str(),
                                         "source": _str()}, ("from", "rel", "to"))),
                "observations": _list(_obj({"entity": _str(), "text": _str(), **fact},
                                           ("entity", "text"))),
                "key": _KEY}),
            _record, read_only=False, needs="record"),
        ToolSpec(
            "decide", "record",
            "Record a decision: what was decided, why, and the rejected options (each "
            "{option, why}, or the option as text).",
            _obj({"name": _str(), "domain": domains, "decided": _str(), "because": _str(),
                  "rejected": _list({"anyOf": [_str(), _obj({"option": _str(), "why": _str()},
                                                            ("option",))]}),
                  "date": _str(), "source": _str(), "key": _KEY},
                 ("name", "domain", "decided", "because")),
            _decide, read_only=False, needs="record_decision"),
        ToolSpec(
            "revise", "record",
            "Supersede a fact with new_text (the old stays, marked superseded) or, with only "
            "reason, invalidate it. observation = fact text or id. Not on a person's "
            "note.",
            _obj({"entity": _str(), "observation": _str(), "new_text": _str(),
                  "superseded_by": _str(), "superseding_entity": _str(),
                  "valid_from": _str(), "epistemic": epistemic,
                  "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                  "reason": _str(), "source": _str(), "key": _KEY},
                 ("entity", "observation")),
            _revise, read_only=False, needs="revise"),
        ToolSpec(
            "retain", "record",
            "Append to today's log: W world fact, B own experience, O opinion (confidence), "
            "S summary; or kind=note for a free note.",
            _obj({"kind": _enum(("W", "B", "O", "S", "note")), "text": _str(),
                  "entities": _list(_str()),
                  "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                  "title": _str("note title"), "key": _KEY}, ("kind", "text")),
            _retain, read_only=False, needs="retain"),
        ToolSpec(
            "session_close", "record",
            "End of a session: save the transcript, keep what is marked worth keeping, write "
            "the handoff for next time.",
            _obj({"transcript": {"anyOf": [_str(), _list(_obj(
                      {"role": _str(), "content": _str()}, ("role", "content")))]},
                  "project": _str(), "summary": _str(), "key": _KEY}, ("transcript",)),
            _session_close, read_only=False, needs="session_close"),
        ToolSpec(
            "link", "full",
            "Add or remove a manual typed link between two pages (kept across re-indexing).",
            _obj({"from": _str(), "rel": rels, "to": _str(), "remove": {"type": "boolean"},
                  "valid_from": _str(), "valid_to": _str()}, ("from", "rel", "to")),
            _link, read_only=False, destructive=True, idempotent=True),
        ToolSpec(
            "delete", "full",
            "Move a page Kenning created to .trash/ (recoverable). Local callers only.",
            _obj({"ref": _str()}, ("ref",)),
            _delete, read_only=False, destructive=True, idempotent=True, needs="delete"),
        ToolSpec(
            "reflect", "full",
            "Fold retained log bullets into entity pages, adjust opinion confidence, refresh "
            "summaries.",
            _obj({"since": _str("e.g. 7d or YYYY-MM-DD"), "apply": {"type": "boolean"}}),
            _reflect, read_only=False, needs="reflect"),
        ToolSpec(
            "index", "full",
            "Re-index what changed on disk (incremental).",
            _obj({}),
            _index, read_only=False, idempotent=True),
    ]


def needed_scope(spec: ToolSpec) -> str:
    """The token scope a tool needs: ``read`` for the read-only tools, ``record`` for the
    write path (the record profile), ``admin`` for the rest (link, delete, reflect, index)."""
    if spec.read_only:
        return "read"
    return "record" if spec.profile == "record" else "admin"


def offered(profile: str, caller: Caller, *, vault_type: type | None = None) -> list[ToolSpec]:
    """The tools ``caller`` sees in ``profile`` (and that this Kenning implements)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if vault_type is None:
        from kenning.api import Vault

        vault_type = Vault
    return [t for t in build_tools()
            if t.in_profile(profile) and trust.may_call(caller, t.name)
            and (t.needs is None or hasattr(vault_type, t.needs))]
