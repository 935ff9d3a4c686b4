"""The agent write path: record, record_decision, revise, invalidate, retain, note, delete.

Every call works in two phases under the vault write lock: first it builds the new text of every
page it touches in memory, collecting every problem of the whole batch (vocabulary, names, sizes,
missing entities, malformed pages); if there is any, it raises one ``MemoryInputError`` listing
them all and writes nothing. Then it writes each file atomically, appends to the write journal and
indexes incrementally, so recall sees the write at once.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kenning import vocabulary
from kenning.errors import KenningError
from kenning.index.edges import date_ceiling, date_floor
from kenning.memory.common import (
    MAX_ITEMS,
    MAX_TEXT,
    MemoryInputError,
    Problems,
    Resolver,
    cite,
    epistemic,
    journal,
    new_page_path,
    next_fact_id,
    not_kennings,
    read_page,
    reindex,
    today,
    wiki_target,
    write_files,
    write_lock,
)
from kenning.memory.idempotency import check_key, digest, entry, prune, replay
from kenning.vault.created import created_change, read_created, update_created
from kenning.vault.frontmatter import FrontmatterError
from kenning.vault.layout import entity_file_name, entity_path, name_key
from kenning.vault.page import (
    Fact,
    Page,
    RetainItem,
    TimelineEntry,
    add_fact,
    append_retain,
    append_timeline,
    new_page,
    parse_page,
    render_fact,
    render_retain,
    replace_fact,
    set_frontmatter,
)
from kenning.vault.writes import note_landed, stamp_source

if TYPE_CHECKING:
    from kenning.memory.common import Context


class NotAllowed(KenningError, PermissionError):
    """An operation the caller may not do (e.g. a remote caller deleting a page)."""


_ENTITY_KEYS = {"name", "type", "domain", "aliases", "summary", "observations"}
_OBS_KEYS = {"text", "valid_from", "valid_to", "epistemic", "confidence", "source"}
_REL_KEYS = {"from", "rel", "to", "text", "valid_from", "valid_to", "epistemic", "confidence",
             "source"}
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)", re.M)
_LINK = re.compile(r"\[\[|\]\(")
_MENTION = re.compile(r"(?<![\w@])@[\w\[]")


@dataclass
class _Edit:
    """A page being changed in memory: its path, title, text and the fact ids it got."""

    path: str
    title: str
    text: str
    created: bool
    facts: list[tuple[str, str]] = field(default_factory=list)   # (block id, text)
    taken: set[str] = field(default_factory=set)
    original: str = ""
    foreign: str | None = None   # why Kenning may not write this page (a person's note)
    # Facts queued by add_fact and appended in one splice by _Batch.flush: parsing the page
    # once per observation made a call of n observations cost O(n²).
    pending: list[Fact] = field(default_factory=list)
    top: int | None = None                 # the highest fN id on the page or queued
    seen: dict[str, str] | None = None     # today's active facts (rendered, no id) → id
    existing: set[str] = field(default_factory=set)  # ids of facts that were already there

    @property
    def changed(self) -> bool:
        return self.created or self.text != self.original


class _Batch:
    """Pages a call will write, built in memory first."""

    def __init__(self, ctx: Context, problems: Problems, *, trusted: bool = True) -> None:
        self.ctx = ctx
        self.root = ctx.root
        self.p = problems
        self.trusted = trusted
        self.edits: dict[str, _Edit] = {}
        self.resolver = Resolver(ctx)
        self.created = read_created(self.root)
        self.ledger: Any = None  # what remote callers wrote (vault.provenance), when needed

    def open(self, path: str, where: str) -> _Edit | None:
        """The page at ``path`` to read, and to change when it is Kenning's (``foreign`` says
        why not)."""
        if path in self.edits:
            return self.edits[path]
        try:
            text, page = read_page(self.root, path)
        except (OSError, KenningError) as exc:
            self.p.add(where, f"cannot read {path}: {exc}")
            return None
        edit = _Edit(path, page.title, text, created=False, original=text,
                     foreign=not_kennings(path, page, self.created))
        self.edits[path] = edit
        return edit

    def new_path(self, base: str) -> str:
        """A free path for a new page (case-insensitively, and not taken in this batch)."""
        return new_page_path(self.root, base, {name_key(p) for p in self.edits})

    def add_fact(self, edit: _Edit, fact: Fact, *, defer: bool = False) -> str:
        """Give ``fact`` the next free id and append it to the page; return the id.

        A fact identical to an active one recorded on the page today (same text, relation and
        fields) is that fact: its id is returned and nothing is added, so a retried call adds
        no second bullet. With ``defer``, the line is queued and written by :meth:`flush`.
        """
        if edit.seen is None or edit.top is None:
            page = parse_page(_with_pending(edit), edit.path)
            edit.seen = {_fact_key(f): f.block_id for f in page.facts
                         if f.block_id and f.status == "active" and f.recorded == today()}
            edit.top = _fact_number(next_fact_id(page, edit.taken)) - 1
        key = _fact_key(fact)
        known = edit.seen.get(key)
        if known is not None:
            if known not in edit.existing:
                edit.existing.add(known)
                edit.facts.append((known, fact.text))
            return known
        edit.top += 1
        while f"f{edit.top}" in edit.taken:
            edit.top += 1
        block = f"f{edit.top}"
        edit.taken.add(block)
        edit.seen[key] = block
        edit.pending.append(replace(fact, block_id=block))
        edit.facts.append((block, fact.text))
        if not defer:
            self.flush(edit)
        return block

    def flush(self, edit: _Edit | None = None) -> None:
        """Write the queued facts of ``edit`` (of every page without it) into its text."""
        for e in [edit] if edit is not None else list(self.edits.values()):
            if e.pending:
                e.text = _with_pending(e)
                e.pending = []

    def touch(self, edit: _Edit, updates: dict[str, Any] | None = None) -> None:
        """Set ``updated`` (and other owned keys) on a page this call changed, unless the
        frontmatter is malformed. A page only read (a relation's target) is left as it is."""
        self.flush(edit)
        if edit.created or not (updates or edit.changed) or edit.foreign:
            return
        try:
            edit.text = set_frontmatter(edit.text, {**(updates or {}), "updated": today()})
        except FrontmatterError as exc:
            if updates:
                self.p.add(edit.path, f"cannot change its frontmatter ({exc}); fix the YAML")

    def facts(self) -> list[dict[str, Any]]:
        """The facts this call names, with their ids and citations in the new page texts."""
        self.flush()
        out = []
        for edit in self.edits.values():
            page = parse_page(edit.text, edit.path)
            by_id = {f.block_id: f for f in page.facts if f.block_id}
            for block, text in edit.facts:
                fact = by_id.get(block)
                if fact is not None:
                    out.append({"entity": edit.title, "path": edit.path, "id": block,
                                "citation": cite(edit.path, fact.line), "text": text,
                                **({"existing": True} if block in edit.existing else {})})
        return out

    def write(self, extra: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """Write every edited page, and ``extra`` files (an idempotency entry), as one
        journaled batch; return the facts written."""
        out = self.facts()
        foreign = [f"{e.foreign}; nothing written" for e in self.edits.values()
                   if e.foreign and e.changed]
        if foreign:  # every operation refuses earlier with its own words; this is the guard
            raise MemoryInputError(foreign)
        if not self.trusted:
            _remote_guard(self)
        changed = {edit.path: edit.text for edit in self.edits.values() if edit.changed}
        made = {e.path: "record" for e in self.edits.values() if e.created}
        registry = created_change(self.root, add=made, day=today()) if made else None
        # One batch, the registry of created pages and an idempotency entry with the pages: a
        # crash part-way leaves a journal the next writer (or `Vault.open`) finishes.
        write_files(self.root, {**changed, **dict([registry] if registry else []),
                                **(extra or {})})
        return out


def _fact_key(fact: Fact) -> str:
    """What makes two facts the same observation: the rendered line without its id."""
    return render_fact(replace(fact, line=0, block_id=None))


def _fact_number(block: str) -> int:
    return int(block[1:])


def _with_pending(edit: _Edit) -> str:
    """The page text with the queued facts appended under ``## Facts``, in order: the first
    through the page editor (which finds or creates the section), the rest on the lines right
    after it, so the page is parsed twice however many facts there are."""
    if not edit.pending:
        return edit.text
    first, *rest = edit.pending
    text = add_fact(edit.text, first)
    if not rest:
        return text
    line = next(f.line for f in parse_page(text, edit.path).facts
                if f.block_id == first.block_id)
    lines = text.split("\n")
    nl = "\r\n" if lines[line - 1].endswith("\r") else "\n"
    end = nl[:-1]  # the "\r" of a CRLF line: split on "\n" leaves it on the line
    lines[line:line] = [render_fact(f) + end for f in rest]
    return "\n".join(lines)


def _text_of(root: Any, path: str) -> str | None:
    """The text of the page at ``path``, or None when it cannot be read."""
    try:
        return read_page(root, path)[0]
    except (OSError, KenningError):
        return None


def _write_keyed(root: Any, files: dict[str, str], key: str | None, op: str,
                 fingerprint: str, result: dict[str, Any], *, made: str | None = None) -> None:
    """Write ``files`` and, with an idempotency key, its entry, as one journaled batch; with
    ``made`` (what created them), the registry of created pages in the same batch."""
    extra = dict([entry(key, op, fingerprint, result)]) if key is not None else {}
    change = created_change(root, add={p: made for p in files}, day=today()) if made else None
    write_files(root, {**files, **extra, **dict([change] if change else [])})
    if key is not None:
        prune(root)


# -- checks shared by the operations -------------------------------------------------------------


def _fact_body(p: Problems, where: str, text: str, *, trusted: bool) -> tuple[
        str | None, str | None, str] | None:
    """(relation, target, text) of fact text; a leading ``rel:: [[Target]]`` makes it typed.

    Text that would read back as something else (``[key:: value]`` fields, a trailing ``^id``)
    is refused rather than silently changed.
    """
    if not trusted and _LINK.search(text):
        p.add(where, "remote callers cannot write links ([[…]] or […](…)) in text; "
              "use relations between recorded entities")
        return None
    parsed = parse_page("## Facts\n- " + text + "\n", "check.md")
    facts = parsed.facts
    if len(facts) != 1 or parsed.problems:
        why = parsed.problems[0].message if parsed.problems else "it is not one line of text"
        p.add(where, f"cannot be stored as a fact: {why}")
        return None
    fact = facts[0]
    if fact.relation and not trusted:
        p.add(where, f"{text[:60]!r} starts with '{fact.relation}::': remote callers cannot "
              "write typed facts in text (they are graph edges); use relations between "
              "recorded entities")
        return None
    if (fact.valid_from, fact.valid_to, fact.recorded, fact.expired, fact.successor,
            fact.confidence, fact.source, fact.block_id) != (None,) * 8 \
            or fact.status != "active" or fact.epistemic != vocabulary.EPISTEMIC_DEFAULT:
        p.add(where, f"{text[:60]!r} contains Kenning fact syntax ([key:: value] or a trailing "
              "^id); pass dates, status and sources as fields")
        return None
    return fact.relation, fact.target, fact.text


def _source(p: Problems, where: str, value: Any, resolver: Resolver, *, trusted: bool
            ) -> str | None:
    source = p.text(where, value, required=False, limit=1000, one_line=True)
    if not source:
        return stamp_source(None)  # a remote person's write names them (vault.writes)
    if re.search(r"[\[\]]", re.sub(r"\[\[[^\[\]]*\]\]", "", source)):
        p.add(where, f"{source!r} may contain brackets only as [[wikilinks]]")
        return None
    if not trusted:
        for target in re.findall(r"\[\[([^\]]*)\]\]", source):
            found, _ = resolver.find(target)
            if found is None:
                p.add(where, f"{target!r} is not a page of the vault (remote callers may cite "
                      "only existing pages)")
                return None
    return stamp_source(source)


def _observation(p: Problems, where: str, raw: Any, resolver: Resolver, *, trusted: bool,
                 allow_entity: bool = False) -> Fact | None:
    """A Fact (line 0, no block id) from an observation string or dict, or None with problems."""
    if isinstance(raw, str):
        raw = {"text": raw}
    if not isinstance(raw, dict):
        p.add(where, f"must be text or an object with 'text', not {type(raw).__name__}")
        return None
    allowed = _OBS_KEYS | ({"entity"} if allow_entity else set())
    for key in sorted(set(raw) - allowed):
        p.add(where, f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})")
    text = p.text(where + ".text", raw.get("text"), one_line=True)
    if text is None:
        return None
    body = _fact_body(p, where + ".text", text, trusted=trusted)
    start = p.date(where + ".valid_from", raw.get("valid_from"))
    end = p.date(where + ".valid_to", raw.get("valid_to"))
    if start and end and date_floor(start) > (date_ceiling(end) or ""):
        p.add(where, f"valid_from {start} is after valid_to {end}")
    status = epistemic(p, where + ".epistemic", raw.get("epistemic"))
    conf = p.confidence(where + ".confidence", raw.get("confidence"))
    source = _source(p, where + ".source", raw.get("source"), resolver, trusted=trusted)
    if body is None:
        return None
    relation, target, rest = body
    if relation and target and trusted:
        found, candidates = resolver.find(target)
        if found is None:
            p.add(where + ".text", f"{relation}:: points at {target!r}, which "
                  + ("names several pages: " + ", ".join(candidates) if candidates
                     else "is not a page; record it first"))
    return Fact(0, relation, target, rest, start, end, "active", None, status, conf, source,
                None, today(), None)


def _items(p: Problems, where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        p.add(where, f"must be a list, not {type(value).__name__}")
        return []
    return list(value)


# -- record --------------------------------------------------------------------------------------


def _count(ents: list[Any]) -> int:
    """Entities plus the observations and aliases nested in them: the work of a call."""
    return sum(1 + sum(len(e[k]) for k in ("observations", "aliases")
                       if isinstance(e.get(k), list | tuple))
               if isinstance(e, dict) else 1 for e in ents)


def record(ctx: Context, entities: list[dict[str, Any]] | None = None,
           relations: list[dict[str, Any]] | None = None,
           observations: list[dict[str, Any]] | None = None, *,
           trusted: bool = True, dry_run: bool = False, key: str | None = None
           ) -> dict[str, Any]:
    """Create or update entities, relations and observations in one all-or-nothing call.

    ``dry_run`` validates the whole call exactly as a write would and writes nothing. ``key``
    (an idempotency key): a repeated call with it returns the first result, writing nothing."""
    p = Problems()
    ents = _items(p, "entities", entities)
    rels = _items(p, "relations", relations)
    obs = _items(p, "observations", observations)
    given = check_key(p, key)
    total = _count(ents) + len(rels) + len(obs)
    if total > MAX_ITEMS:
        p.add("", f"{total} items in one call, counting the observations and aliases inside "
              f"entities (at most {MAX_ITEMS}); split it into several calls")
        p.raise_if_any()
    if not (ents or rels or obs):
        p.add("", "nothing to record: give entities, relations or observations")
    p.raise_if_any()
    fingerprint = digest("record", [ents, rels, obs, trusted])
    with write_lock(ctx.root):
        if not dry_run and (done := replay(ctx.root, given, "record", fingerprint)):
            return {**done, **reindex(ctx)}
        batch = _Batch(ctx, p, trusted=trusted)
        named: dict[str, _Edit] = {}   # normalised name or alias → page, for this call
        links: list[dict[str, Any]] = []  # relations from a person's note: manual links
        found: dict[str, _Edit | None] = {}   # name → page it resolved to, for this call

        def find(where: str, ref: Any) -> _Edit | None:
            from kenning.index.indexer import norm_name

            name = p.name(where, ref)
            if name is None:
                return None
            if norm_name(name) in named:
                return named[norm_name(name)]
            if name in found:  # a call naming one page a thousand times looks it up once
                return found[name]
            path, candidates = batch.resolver.find(name)
            if path is None:
                p.add(where, f"{name!r} names several pages: {', '.join(candidates)}; give the "
                      "path" if candidates else f"no entity named {name!r}: record it in "
                      "'entities' of the same call or first")
                return None
            found[name] = batch.open(path, where)
            return found[name]

        for i, raw in enumerate(ents):
            _plan_entity(batch, named, f"entities[{i}]", raw, trusted=trusted)
        for i, raw in enumerate(rels):
            where = f"relations[{i}]"
            if not isinstance(raw, dict):
                p.add(where, f"must be an object with from, rel, to, not {type(raw).__name__}")
                continue
            for key in sorted(set(raw) - _REL_KEYS):
                p.add(where, f"unknown field {key!r} (allowed: {', '.join(sorted(_REL_KEYS))})")
            rel = p.vocab(where + ".rel", vocabulary.relation, raw.get("rel"))
            src = find(where + ".from", raw.get("from"))
            dst = find(where + ".to", raw.get("to"))
            extra = {k: v for k, v in raw.items() if k in _OBS_KEYS - {"text"}}
            text = raw.get("text")
            if text is not None and not isinstance(text, str):
                p.add(where + ".text", "must be text")
                text = None
            fact = _observation(p, where, {"text": text or "relation", **extra}, batch.resolver,
                                trusted=trusted)
            if fact is None or src is None or dst is None or rel is None:
                continue
            if src.foreign:
                # The relation is kept on Kenning's side: an edge in the manual-link log.
                if not trusted:
                    p.add(where + ".from", f"{src.foreign}; remote callers cannot add a "
                          "relation from it (record it from a page Kenning keeps)")
                    continue
                links.append(_manual_link(src.path, rel, dst.path, fact, text))
                continue
            if not trusted and not _remote_own(batch, src):
                p.add(where + ".from", f"{src.path} is not a page a remote caller created; "
                      "remote callers add relations only from entities they record (a "
                      "relation is a link on that page, and links rank every search)")
                continue
            link = batch.resolver.link(dst.path, dst.title)
            fact = replace(fact, relation=rel, target=link[2:-2].split("|")[0],
                           text=f"{link} {text.strip() if text else ''}".strip())
            batch.add_fact(src, fact, defer=True)
        for i, raw in enumerate(obs):
            where = f"observations[{i}]"
            if not isinstance(raw, dict):
                p.add(where, f"must be an object with entity and text, not {type(raw).__name__}")
                continue
            target = find(where + ".entity", raw.get("entity"))
            fact = _observation(p, where, raw, batch.resolver, trusted=trusted,
                                allow_entity=True)
            if target is not None and target.foreign:
                p.add(where + ".entity", f"{target.foreign}: record the observation on a "
                      "page Kenning keeps, or give the note a `type:` in its frontmatter")
                continue
            if fact is not None and target is not None:
                batch.add_fact(target, fact, defer=True)
        for edit in batch.edits.values():
            batch.touch(edit)
        p.raise_if_any()
        created = [e.path for e in batch.edits.values() if e.created]
        updated = [e.path for e in batch.edits.values() if not e.created and e.changed]
        if dry_run:
            return {"dry_run": True, "created": created, "updated": updated,
                    "links": [_link_result(e) for e in links]}
        extra = {}
        if given is not None:
            stored = {"created": created, "updated": updated, "facts": batch.facts()}
            if links:
                stored["links"] = [_link_result(e) for e in links]
            extra = dict([entry(given, "record", fingerprint, stored)])
        facts = batch.write(extra)
        if links:
            _append_manual_links(ctx, links)
        journal(ctx.root, [{"op": "record", **f} for f in facts if not f.get("existing")]
                + [{"op": "record", "link": _link_result(e)} for e in links])
    out: dict[str, Any] = {"created": created, "updated": updated, "facts": facts}
    if links:
        out["links"] = [_link_result(e) for e in links]
    return {**out, **reindex(ctx)}


def _manual_link(src: str, rel: str, dst: str, fact: Fact, text: str | None) -> dict[str, Any]:
    """A manual-link log entry for a relation from a person's note (see record)."""
    entry: dict[str, Any] = {"op": "add", "src": src, "rel": rel, "dst": dst,
                             "at": _dt.datetime.now().astimezone().strftime(
                                 "%Y-%m-%dT%H:%M:%S%z"), "by": "record"}
    for key, value in (("valid_from", fact.valid_from), ("valid_to", fact.valid_to),
                       ("text", (text or "").strip() or None), ("source", fact.source),
                       ("epistemic", fact.epistemic if fact.epistemic
                        != vocabulary.EPISTEMIC_DEFAULT else None),
                       ("confidence", fact.confidence)):
        if value is not None:
            entry[key] = value
    return entry


def _link_result(entry: dict[str, Any]) -> dict[str, Any]:
    return {"from": entry["src"], "rel": entry["rel"], "to": entry["dst"],
            "stored": ".kenning/manual-links.jsonl"}


def _append_manual_links(ctx: Context, entries: list[dict[str, Any]]) -> None:
    """Append to ``.kenning/manual-links.jsonl`` (the index's log of edges that are not page
    content) under the index's writer lock, as ``Vault.link`` does."""
    from kenning.index.indexer import append_manual_links

    with ctx.store.writer_lock(wait=10.0):
        append_manual_links(ctx.root, entries)


def _plan_entity(batch: _Batch, named: dict[str, _Edit], where: str, raw: Any, *,
                 trusted: bool) -> None:
    from kenning.index.indexer import norm_name

    p = batch.p
    if not isinstance(raw, dict):
        p.add(where, f"must be an object with name and type, not {type(raw).__name__}")
        return
    for key in sorted(set(raw) - _ENTITY_KEYS):
        p.add(where, f"unknown field {key!r} (allowed: {', '.join(sorted(_ENTITY_KEYS))})")
    name = p.name(where + ".name", raw.get("name"))
    if "type" not in raw:
        p.add(where + ".type", "is required; allowed: " + ", ".join(vocabulary.ENTITY_TYPES))
        etype = None
    else:
        etype = p.vocab(where + ".type", vocabulary.entity_type, raw.get("type"))
    domain = p.vocab(where + ".domain", vocabulary.domain, raw["domain"]) \
        if raw.get("domain") is not None else None
    aliases = [alias for j, raw_alias in enumerate(_items(p, where + ".aliases",
                                                          raw.get("aliases")))
               if (alias := p.name(f"{where}.aliases[{j}]", raw_alias))]
    summary = p.text(where + ".summary", raw.get("summary"), required=False)
    if summary and _HEADING.search(summary):
        p.add(where + ".summary", "may not contain a Markdown heading line")
        summary = None
    if summary and not trusted and _LINK.search(summary):
        p.add(where + ".summary", "remote callers cannot write links in text")
    facts = [f for j, o in enumerate(_items(p, where + ".observations", raw.get("observations")))
             if (f := _observation(p, f"{where}.observations[{j}]", o, batch.resolver,
                                   trusted=trusted))]
    if name is None or etype is None:
        return
    if norm_name(name) in named:
        p.add(where + ".name", f"{name!r} appears twice in this call")
        return
    path, candidates = batch.resolver.find(name)
    if candidates:
        p.add(where + ".name", f"{name!r} names several pages: {', '.join(candidates)}")
        return
    if not trusted and not _remote_names(batch, where, name, aliases, path):
        return
    if path is not None:
        edit = batch.open(path, where)
        if edit is None:
            return
        page = parse_page(edit.text, path)
        if page.type and page.type != etype:
            p.add(where + ".type", f"{name!r} exists as {path} with type {page.type}, not "
                  f"{etype}")
            return
        updates: dict[str, Any] = {}
        new_aliases = [a for a in aliases if a not in page.aliases and a != page.title]
        if new_aliases:
            updates["aliases"] = [*page.aliases, *new_aliases]
        if domain and not page.domain:
            updates["domain"] = domain
        if edit.foreign:
            # Naming a person's note is fine (a relation may point at it); changing it is not.
            if updates or facts or (summary and not page.summary):
                p.add(where + ".name", f"{edit.foreign}: record what is new about it on a "
                      "page Kenning keeps, or give the note a `type:` in its frontmatter")
            named[norm_name(name)] = edit
            return
        if updates:
            batch.touch(edit, updates)
        if summary and not page.summary:
            from kenning.vault.page import set_summary

            try:
                edit.text = set_summary(edit.text, summary)
            except ValueError as exc:
                p.add(where + ".summary", str(exc))
    else:
        path = batch.new_path(entity_path(etype, name))
        front: dict[str, Any] = {"type": etype}
        if aliases:
            front["aliases"] = aliases
        if domain:
            front["domain"] = domain
        front["created"] = today()
        front["updated"] = today()
        edit = _Edit(path, name, new_page(title=name, frontmatter=front, summary=summary or ""),
                     created=True)
        batch.edits[path] = edit
    named[norm_name(name)] = edit
    for alias in aliases:
        named.setdefault(norm_name(alias), edit)
    for fact in facts:
        batch.add_fact(edit, fact, defer=True)


def _names_and_links(text: str, path: str) -> tuple[set[str], Counter[tuple[str, str]]]:
    """A page's names, and its links to other pages, counted (each is an edge; a link to
    itself, such as a superseded fact's ``[by:: [[Page#^f2]]]``, is not one)."""
    from kenning.index.indexer import norm_name

    page = parse_page(text, path)
    own = {norm_name(n) for n in (page.title, *page.aliases, path.rsplit(".", 1)[0],
                                  path.rsplit("/", 1)[-1].rsplit(".", 1)[0])}
    links = [("link", norm_name(link.target)) for link in page.links if link.target]
    links += [(f.relation or "", norm_name(f.target)) for f in page.facts if f.target]
    return {page.title, *page.aliases}, Counter((r, t) for r, t in links
                                                if t.split("#")[0] not in own)


def _remote_guard(batch: _Batch) -> None:
    """The last check of a remote caller's batch: no page it did not create gains a name or a
    link (a ``[[source]]``, a successor, a relation), whatever the operation built."""
    problems = []
    for edit in batch.edits.values():
        if not edit.changed or _remote_own(batch, edit):
            continue
        names_before, links_before = _names_and_links(edit.original, edit.path)
        names_after, links_after = _names_and_links(edit.text, edit.path)
        if names_after - names_before:
            problems.append(f"{edit.path}: remote callers cannot change the names of a page "
                            "they did not create; nothing written")
        if links_after - links_before:
            new = ", ".join(sorted({t for _, t in links_after - links_before}))
            problems.append(f"{edit.path}: remote callers cannot add links ({new}) to a page "
                            "they did not create (a [[source]] or successor is a link); "
                            "nothing written")
    if problems:
        raise MemoryInputError(problems)


def _remote_own(batch: _Batch, edit: _Edit) -> bool:
    """True for a page a remote caller may link from or rename: created in this call, or by
    an earlier remote call (the provenance ledger)."""
    from kenning.vault import provenance

    if batch.ledger is None:  # read once per call, not once per page
        batch.ledger = provenance.Ledger(batch.root)
    return edit.created or batch.ledger.page(edit.path)


def _remote_names(batch: _Batch, where: str, name: str, aliases: list[str],
                  path: str | None) -> bool:
    """A remote caller's entity may not take a name another page holds (its title, an alias,
    a look-alike of either) nor change the aliases of a page it did not create: names decide
    which page a link and a recall mean. False (with problems) when it tries."""
    from kenning.memory.common import lookalike_key, name_holders

    p = batch.p
    ok = True
    current: set[str] = set()
    if path is not None:
        edit = batch.open(path, where)
        if edit is None:
            return False
        page = parse_page(edit.text, path)
        current = {lookalike_key(a) for a in (*page.aliases, page.title)}
        new = [a for a in aliases if lookalike_key(a) not in current]
        if new and not _remote_own(batch, edit):
            p.add(where + ".aliases", f"remote callers cannot change the aliases of {path}, "
                  "a page they did not create")
            return False
    asked = [a for a in aliases if lookalike_key(a) not in current]
    holders = name_holders(batch.ctx, [*asked, *([name] if path is None else [])])
    for j, alias in enumerate(aliases):
        others = [h for h in holders.get(alias, []) if h != path]
        if alias in asked and others:
            p.add(f"{where}.aliases[{j}]", f"{alias!r} is already a name of "
                  f"{', '.join(others)}; remote callers cannot give a page a name another "
                  "page holds")
            ok = False
    if path is None and holders.get(name):
        p.add(where + ".name", f"{name!r} looks like the name of {', '.join(holders[name])} "
              "(same letters after Unicode folding); use that name, or one that differs")
        ok = False
    return ok


# -- decisions -----------------------------------------------------------------------------------


def rejected_option(text: str) -> dict[str, str | None]:
    """A rejected option written as text — ``option — why``, ``option -- why``, ``option: why``
    (as ``kenning decide --rejected`` and a decision page's ``rejected:`` list write it) or the
    option alone (RAWThink's ``rejected=[str]``) — as ``{option, why}``, why None when not
    given."""
    for sep in (" — ", " -- ", ": "):
        if sep in text:
            option, why = text.split(sep, 1)
            return {"option": option.strip(), "why": why.strip() or None}
    return {"option": text.strip().removesuffix(":").strip(), "why": None}


def record_decision(ctx: Context, name: str, domain: str, decided: str, because: str,
                    rejected: list[dict[str, str]] | None = None, *, date: str | None = None,
                    source: str | None = None, trusted: bool = True,
                    dry_run: bool = False, key: str | None = None) -> dict[str, Any]:
    """A ``decisions/`` page whose decision, reason and each rejected option (with its why) are
    separate lines, so each can be found and cited on its own. A rejected option is
    ``{option, why}`` or text (:func:`rejected_option`); its why may be missing (RAWThink gives
    options alone): the page then says only that it was rejected.

    The same decision recorded again on the same day (a retry) is the page already there: its
    result comes back and nothing is written. ``key``: see :mod:`kenning.memory.idempotency`."""
    p = Problems()
    given = check_key(p, key)
    fingerprint = digest("decide", [name, domain, decided, because, rejected, date, source,
                                    trusted])
    title = p.name("name", name)
    dom = p.vocab("domain", vocabulary.domain, domain)
    what = p.text("decided", decided, one_line=True)
    why = p.text("because", because)
    if why and _HEADING.search(why):
        p.add("because", "may not contain a Markdown heading line")
    day = p.date("date", date) or today()
    options: list[tuple[str, str]] = []     # (option, why); why "" when not given
    for i, raw in enumerate(_items(p, "rejected", rejected)):
        if isinstance(raw, str):
            raw = rejected_option(raw)
        if not isinstance(raw, dict):
            p.add(f"rejected[{i}]", "must be text or an object with option (and why)")
            continue
        for key in sorted(set(raw) - {"option", "why"}):
            p.add(f"rejected[{i}]", f"unknown field {key!r} (allowed: option, why)")
        option = p.text(f"rejected[{i}].option", raw.get("option"), one_line=True, limit=1000)
        reason = p.text(f"rejected[{i}].why", raw.get("why"), one_line=True, required=False)
        if option:
            options.append((option, reason or ""))
    for where, value in (("decided", what), ("because", why),
                         *((f"rejected[{i}]", o + " " + r) for i, (o, r) in enumerate(options))):
        if value and not trusted and _LINK.search(value):
            p.add(where, "remote callers cannot write links in text")
    with write_lock(ctx.root):
        if not dry_run and (done := replay(ctx.root, given, "decide", fingerprint)):
            return {**done, **reindex(ctx)}
        resolver = Resolver(ctx)
        cited = _source(p, "source", source, resolver, trusted=trusted)
        path = entity_path("decision", title) if title else None
        taken = None
        if title and path:
            existing, candidates = resolver.find(title)
            if existing or candidates or new_page_path(ctx.root, path) != path:
                taken = existing or path
        p.raise_if_any()
        assert title and path and what and why and dom
        front: dict[str, Any] = {
            "type": "decision", "domain": dom, "status": "active", "decided": day,
            "because": " ".join(why.split()),
            "rejected": [f"{o} — {r}" if r else o for o, r in options],
            "created": today(), "updated": today(),
        }
        if not options:
            del front["rejected"]
        body = "## Because\n\n" + why.replace("\r\n", "\n") + "\n"
        if options:
            body += "\n## Rejected\n\n" + "".join(
                f"- {o} — rejected: {r}\n" if r else f"- {o} — rejected\n" for o, r in options)
        text = new_page(title=title, frontmatter=front, summary=f"Decided on {day}: {what}",
                        body=body)
        text = append_timeline(text, TimelineEntry(0, day, f"Decided: {what[:200]}", cited))
        same = taken == path and _text_of(ctx.root, path) == text
        if taken and not same:
            p.add("name", f"a page named {title!r} exists ({taken}); revise it or choose "
                  "another name")
            p.raise_if_any()
        if dry_run:  # validated as a write would be; nothing written
            return {"dry_run": True, "path": path, "title": title}
        lines = text.split("\n")
        summary_line = next(n for n, line in enumerate(lines, 1)
                            if line.startswith(f"Decided on {day}:"))
        because_line = lines.index("## Because") + 3
        rejected_out = []
        if options:
            start = lines.index("## Rejected") + 3
            rejected_out = [{"option": o, "why": r or None, "citation": cite(path, start + i)}
                            for i, (o, r) in enumerate(options)]
        because_end = because_line + len(why.split("\n")) - 1
        result = {
            "path": path, "created": True, "title": title,
            "citations": {"decided": cite(path, summary_line),
                          "because": cite(path, because_line, because_end),
                          "rejected": rejected_out},
        }
        if same:  # the decision is already there, exactly: a retry
            return {**result, "existing": True, **reindex(ctx)}
        _write_keyed(ctx.root, {path: text}, given, "decide", fingerprint, result,
                     made="decide")
        journal(ctx.root, [{"op": "decide", "path": path, "citation": cite(path, summary_line),
                              "text": what}])
    return {**result, **reindex(ctx)}


# -- revise / invalidate -------------------------------------------------------------------------


def _match_fact(p: Problems, where: str, page: Page, ref: Any) -> Fact | None:
    """The active fact ``ref`` names: a block id (``^f3``/``f3``), its exact text, or a unique
    case-insensitive part of its text."""
    if not isinstance(ref, str) or not ref.strip():
        p.add(where, "give the fact's id (^f3) or its text")
        return None
    key = ref.strip()
    block = key[1:] if key.startswith("^") else key
    by_id = [f for f in page.facts if f.block_id == block]
    if by_id:
        fact = by_id[0]
    else:
        fold = " ".join(key.casefold().split())
        exact = [f for f in page.facts if " ".join(f.text.casefold().split()) == fold]
        part = [f for f in page.facts if fold in " ".join(f.text.casefold().split())]
        pool = exact or part
        active = [f for f in pool if f.status == "active"]
        if len(active) == 1:
            fact = active[0]
        elif len(active) > 1:
            p.add(where, f"{_q(key)} matches {len(active)} facts of {page.path} (lines "
                  + ", ".join(str(f.line) for f in active) + "); give the id (^fN)")
            return None
        elif pool:
            fact = pool[0]
        else:
            p.add(where, f"no fact of {page.path} matches {_q(key)}")
            return None
    if fact.status != "active":
        p.add(where, f"the fact on {page.path}:{fact.line} is already {fact.status}"
              + (f" (by {fact.successor})" if fact.successor else ""))
        return None
    return fact


def _q(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _day_before(value: str) -> str:
    floor = date_floor(value) or value
    return (_dt.date.fromisoformat(floor) - _dt.timedelta(days=1)).isoformat()


def _entity(p: Problems, batch: _Batch, where: str, ref: Any, *,
            writing: bool = False) -> _Edit | None:
    """The page ``ref`` names; with ``writing``, None (and a problem) for a person's note."""
    if not isinstance(ref, str) or not ref.strip():
        p.add(where, "give the entity's name or path")
        return None
    path, candidates = batch.resolver.find(ref)
    if path is None:
        p.add(where, f"{ref!r} names several pages: {', '.join(candidates)}" if candidates
              else f"no page named {ref!r}")
        return None
    edit = batch.open(path, where)
    if writing and edit is not None and edit.foreign:
        p.add(where, f"{edit.foreign}: its facts are yours to change")
        return None
    return edit


def revise(ctx: Context, entity: str, observation: str, new_text: str | None = None, *,
           superseded_by: str | None = None, superseding_entity: str | None = None,
           valid_from: str | None = None, source: str | None = None,
           epistemic_status: str | None = None, confidence: float | None = None,
           trusted: bool = True, key: str | None = None) -> dict[str, Any]:
    """Supersede a fact: it stays, marked ``superseded`` with the day and a link to its successor
    (a new fact with ``new_text``, or an existing one named by ``superseded_by``). ``key``: an
    idempotency key (a retry returns the first result)."""
    p = Problems()
    given = check_key(p, key)
    fingerprint = digest("revise", [entity, observation, new_text, superseded_by,
                                    superseding_entity, valid_from, source, epistemic_status,
                                    confidence, trusted])
    if (new_text is None) == (superseded_by is None):
        p.add("new_text", "give either the new text or superseded_by (an existing fact), "
              "not both or neither")
    start = p.date("valid_from", valid_from)
    with write_lock(ctx.root):
        if (done := replay(ctx.root, given, "revise", fingerprint)):
            return {**done, **reindex(ctx)}
        batch = _Batch(ctx, p, trusted=trusted)
        edit = _entity(p, batch, "entity", entity, writing=True)
        if edit is not None and new_text is not None and not superseding_entity:
            done = _revised_today(edit, observation, new_text)
            if done is not None:  # this very revision was made today: a retry
                return {**done, "existing": True, **reindex(ctx)}
        old = _match_fact(p, "observation", parse_page(edit.text, edit.path), observation) \
            if edit else None
        target = _entity(p, batch, "superseding_entity", superseding_entity, writing=True) \
            if superseding_entity else edit
        new_fact = None
        if new_text is not None:
            new_fact = _observation(p, "new_text", {
                "text": new_text, "valid_from": valid_from, "source": source,
                "epistemic": epistemic_status, "confidence": confidence}, batch.resolver,
                trusted=trusted)
        successor: tuple[_Edit, Fact] | None = None
        if superseded_by is not None and target is not None:
            ref = superseded_by.strip().removeprefix("[[").removesuffix("]]")
            page_ref, _, block = ref.rpartition("#")
            holder = _entity(p, batch, "superseded_by", page_ref) if page_ref else target
            if holder is not None:
                fact = _match_fact(p, "superseded_by", parse_page(holder.text, holder.path),
                                   block or ref)
                if fact is not None:
                    successor = (holder, fact)
        p.raise_if_any()
        assert edit is not None and old is not None and target is not None
        old_id = old.block_id
        if old_id is None:
            old_id = next_fact_id(parse_page(edit.text, edit.path), edit.taken)
            edit.taken.add(old_id)
        if successor is not None:
            holder, fact = successor
            new_id = fact.block_id
            if new_id is None:
                new_id = next_fact_id(parse_page(holder.text, holder.path), holder.taken)
                holder.taken.add(new_id)
                holder.text = replace_fact(holder.text, fact.line, replace(fact, block_id=new_id))
            new_holder = holder
            new_line_text = fact.text
        else:
            assert new_fact is not None
            new_id = batch.add_fact(target, new_fact)
            new_holder = target
            new_line_text = new_fact.text
        # Re-read the old fact's line: adding to the same page appends after it.
        current = min((f for f in parse_page(edit.text, edit.path).facts
                       if f.text == old.text and f.status == "active"),
                      key=lambda f: abs(f.line - old.line))
        closed = current.valid_to
        if closed is None and start:
            closed = _day_before(start)
        edit.text = replace_fact(edit.text, current.line, replace(
            current, status="superseded", successor=wiki_target(new_holder.path, "#^" + new_id),
            expired=today(), valid_to=closed, block_id=old_id))
        edit.text = append_timeline(edit.text, TimelineEntry(
            0, today(), f"Revised {_q(old.text)} → {_q(new_line_text)}",
            None if successor else new_fact.source if new_fact else None))
        for e in batch.edits.values():
            batch.touch(e)
        p.raise_if_any()
        batch.flush()
        old_page = parse_page(edit.text, edit.path)
        new_page_ = parse_page(new_holder.text, new_holder.path)
        old_line = next(f.line for f in old_page.facts if f.block_id == old_id)
        new_line = next(f.line for f in new_page_.facts if f.block_id == new_id)
        result = {
            "path": edit.path,
            "old": {"id": old_id, "text": old.text, "citation": cite(edit.path, old_line)},
            "new": {"id": new_id, "path": new_holder.path, "text": new_line_text,
                    "citation": cite(new_holder.path, new_line)},
        }
        batch.write(dict([entry(given, "revise", fingerprint, result)]) if given else None)
        if given:
            prune(ctx.root)
        journal(ctx.root, [{"op": "revise", "path": edit.path, "id": old_id,
                              "citation": result["new"]["citation"], "old": old.text,
                              "text": new_line_text}])
    return {**result, **reindex(ctx)}


def _revised_today(edit: _Edit, ref: Any, new_text: Any) -> dict[str, Any] | None:
    """The result of revising ``ref`` to ``new_text`` on this page when that was done today and
    no active fact still matches ``ref`` (a retried revise), else None."""
    if not isinstance(ref, str) or not isinstance(new_text, str):
        return None
    page = parse_page(edit.text, edit.path)
    key = ref.strip()
    block, fold = key.removeprefix("^"), " ".join(key.casefold().split())

    def named(f: Fact) -> bool:
        return f.block_id == block or " ".join(f.text.casefold().split()) == fold

    if any(named(f) for f in page.facts if f.status == "active"):
        return None
    want = " ".join(new_text.split())
    here = wiki_target(edit.path, "#^")
    for old in page.facts:
        if not (old.status == "superseded" and old.expired == today() and named(old)
                and old.successor and old.successor.startswith(here[:-2])):
            continue
        new = next((f for f in page.facts if f.status == "active" and f.text == want
                    and old.successor == wiki_target(edit.path, f"#^{f.block_id}")), None)
        if new is not None:
            return {"path": edit.path,
                    "old": {"id": old.block_id, "text": old.text,
                            "citation": cite(edit.path, old.line)},
                    "new": {"id": new.block_id, "path": edit.path, "text": new.text,
                            "citation": cite(edit.path, new.line)}}
    return None


def invalidate(ctx: Context, entity: str, observation: str, *, reason: str,
               source: str | None = None, trusted: bool = True, key: str | None = None
               ) -> dict[str, Any]:
    """Mark a fact ``invalidated`` (it was never true), with the day; the reason goes on the
    page's timeline. Nothing is deleted. ``key``: an idempotency key."""
    p = Problems()
    given = check_key(p, key)
    fingerprint = digest("invalidate", [entity, observation, reason, source, trusted])
    why = p.text("reason", reason, one_line=True)
    if why and not trusted and _LINK.search(why):
        p.add("reason", "remote callers cannot write links in text")
    with write_lock(ctx.root):
        if (done := replay(ctx.root, given, "invalidate", fingerprint)):
            return {**done, **reindex(ctx)}
        batch = _Batch(ctx, p, trusted=trusted)
        cited = _source(p, "source", source, batch.resolver, trusted=trusted)
        edit = _entity(p, batch, "entity", entity, writing=True)
        old = _match_fact(p, "observation", parse_page(edit.text, edit.path), observation) \
            if edit else None
        p.raise_if_any()
        assert edit is not None and old is not None and why is not None
        block = old.block_id or next_fact_id(parse_page(edit.text, edit.path))
        edit.text = replace_fact(edit.text, old.line, replace(
            old, status="invalidated", expired=today(), block_id=block))
        edit.text = append_timeline(edit.text, TimelineEntry(
            0, today(), f"Invalidated {_q(old.text)}: {why}", cited))
        batch.touch(edit)
        p.raise_if_any()
        result = {"path": edit.path, "id": block, "text": old.text,
                  "citation": cite(edit.path, old.line)}
        batch.write(dict([entry(given, "invalidate", fingerprint, result)]) if given else None)
        if given:
            prune(ctx.root)
        journal(ctx.root, [{"op": "invalidate", "path": edit.path, "id": block,
                              "citation": result["citation"], "text": old.text,
                              "reason": why}])
    return {**result, **reindex(ctx)}


# -- retain / note / delete ----------------------------------------------------------------------


def daily_log_path(day: str | None = None) -> str:
    return f"memory/{day or today()}.md"


def retain(ctx: Context, kind: str, text: str, entities: list[str] | None = None,
           confidence: float | None = None, *, trusted: bool = True,
           dry_run: bool = False, key: str | None = None) -> dict[str, Any]:
    """Append ``- K(c=…) @Name: text`` to the ``## Retain`` section of today's daily log.

    A bullet already in today's log, exactly, is not added again (a retry): its line is
    returned. ``key``: an idempotency key."""
    p = Problems()
    given = check_key(p, key)
    fingerprint = digest("retain", [kind, text, entities, confidence, trusted])
    letter = kind.strip().upper() if isinstance(kind, str) else ""
    if letter not in vocabulary.RETAIN_KINDS:
        p.add("kind", f"unknown retain kind {kind!r}; allowed: "
              + ", ".join(f"{k} ({v})" for k, v in vocabulary.RETAIN_KINDS.items()))
    body = p.text("text", text, one_line=True)
    if body and not trusted and _LINK.search(body):
        p.add("text", "remote callers cannot write links in text")
    names = [n for i, e in enumerate(_items(p, "entities", entities))
             if (n := p.name(f"entities[{i}]", e))]
    if not trusted and (names or (body and _MENTION.search(body))):
        # A retain bullet's @names are mention edges, and reflect folds the bullet into
        # those pages: a remote caller records on the entity instead.
        p.add("entities" if names else "text", "remote callers cannot @mention entities in "
              "retained bullets (mentions are links); record an observation on the entity")
    conf = p.confidence("confidence", confidence)
    if body and letter in vocabulary.RETAIN_KINDS:
        item = RetainItem(0, letter, tuple(dict.fromkeys(names)), conf, body)
        back = parse_page("## Retain\n" + render_retain(item) + "\n", "check.md")
        if back.problems or len(back.retain) != 1 or back.retain[0].text != body:
            p.add("text", f"{_q(body)} does not read back as one retain bullet")
    p.raise_if_any()
    assert body is not None
    item = RetainItem(0, letter, tuple(dict.fromkeys(names)), conf, body)
    path = daily_log_path()
    if dry_run:  # validated as a write would be; nothing written
        return {"dry_run": True, "path": path, "kind": letter}
    with write_lock(ctx.root):
        if (done := replay(ctx.root, given, "retain", fingerprint)):
            return {**done, **reindex(ctx)}
        target = ctx.root / path
        page = None
        if target.exists():
            old, page = read_page(ctx.root, path)
        else:
            old = new_page(title=today(), frontmatter={"type": "daily", "date": today()})
        bullet = render_retain(item)
        there = [r.line for r in (page.retain if page else ()) if render_retain(r) == bullet]
        if there:  # already retained today, exactly: a retry
            line = there[0]
            return {"path": path, "line": line, "citation": cite(path, line), "kind": letter,
                    "entities": list(item.entities), "existing": True, **reindex(ctx)}
        new = append_retain(old, item)
        line = parse_page(new, path).retain[-1].line
        result = {"path": path, "line": line, "citation": cite(path, line), "kind": letter,
                  "entities": list(item.entities)}
        _write_keyed(ctx.root, {path: new}, given, "retain", fingerprint, result)
        journal(ctx.root, [{"op": "retain", "path": path, "citation": cite(path, line),
                              "text": bullet[2:]}])
    return {**result, **reindex(ctx)}


def note(ctx: Context, text: str, *, title: str | None = None, trusted: bool = True,
         key: str | None = None) -> dict[str, Any]:
    """A quick free note: ``notes/YYYY-MM-DD <title>.md`` with the text as written.

    The same note written again on the same day (a retry) is the note already there: nothing
    is written. ``key``: an idempotency key."""
    p = Problems()
    given = check_key(p, key)
    fingerprint = digest("note", [text, title, trusted])
    body = p.text("text", text, limit=MAX_TEXT * 5)
    name = p.text("title", title, required=False, one_line=True, limit=200)
    if body and not trusted and _LINK.search(body):
        p.add("text", "remote callers cannot write links in text")
    p.raise_if_any()
    assert body is not None
    if not name:
        first = next(line for line in body.splitlines() if line.strip())
        name = " ".join(first.lstrip("#").split())[:60] or "note"
    with write_lock(ctx.root):
        if (done := replay(ctx.root, given, "note", fingerprint)):
            return {**done, **reindex(ctx)}
        base = f"notes/{entity_file_name(f'{today()} {name}')}"
        try:
            content = new_page(title=name, frontmatter={"type": "note", "created": today()},
                               body=body.replace("\r\n", "\n").rstrip("\n") + "\n")
        except ValueError as exc:
            raise MemoryInputError([f"title: {exc}"]) from None
        path = _same_note(ctx.root, base, content) or new_page_path(ctx.root, base)
        start = content[: content.rindex(body.replace("\r\n", "\n"))].count("\n") + 1
        result = {"path": path, "title": name,
                  "citation": cite(path, start, len(content.rstrip("\n").split("\n")))}
        if (ctx.root / path).exists():  # the same note, already written today: a retry
            return {**result, "existing": True, **reindex(ctx)}
        _write_keyed(ctx.root, {path: content}, given, "note", fingerprint, result,
                     made="note")
        journal(ctx.root, [{"op": "note", "path": path, "citation": cite(path, start),
                              "text": name}])
    return {**result, **reindex(ctx)}


def _same_note(root: Any, base: str, content: str) -> str | None:
    """The note at ``base`` or one of its `` 2``, `` 3`` … siblings whose text is ``content``."""
    stem = base[:-3]
    for n in range(1, 100):
        path = base if n == 1 else f"{stem} {n}.md"
        if not (root / path).exists():
            return None
        if _text_of(root, path) == content:
            return path
    return None


def delete(ctx: Context, ref: str, *, trusted: bool = True) -> dict[str, Any]:
    """Move a page Kenning created to ``.trash/`` (Obsidian's trash; never indexed). Local
    callers only; a person's note is never deleted."""
    if not trusted:
        raise NotAllowed("delete is not available to remote callers; nothing was deleted")
    p = Problems()
    with write_lock(ctx.root):
        batch = _Batch(ctx, p)
        path = None
        if isinstance(ref, str) and ref.strip():
            path, candidates = batch.resolver.find(ref)
            if path is None:
                p.add("ref", f"{ref!r} names several pages: {', '.join(candidates)}"
                      if candidates else f"no page named {ref!r}")
        else:
            p.add("ref", "give the page's name or path")
        if path is not None and path not in batch.created:
            p.add("ref", f"{path} is not a page Kenning created; Kenning never deletes a "
                  "person's note (move it to the trash yourself)")
        p.raise_if_any()
        assert path is not None
        trash = new_page_path(ctx.root, f".trash/{path}")
        (ctx.root / trash).parent.mkdir(parents=True, exist_ok=True)
        (ctx.root / path).replace(ctx.root / trash)
        note_landed(path, trash)
        update_created(ctx.root, removed=[path])
        journal(ctx.root, [{"op": "delete", "path": path, "trash": trash}])
    return {"deleted": path, "trash": trash, **reindex(ctx)}
