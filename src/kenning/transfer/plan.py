"""From what an importer read to the vault: plan every page, then write it as one batch.

:func:`run_import` reads PATH with the importer of KIND, stops at the first sign of trouble in
the input (nothing written: every :class:`~kenning.transfer.model.InputProblem` is listed, one
line each, naming file and line), and otherwise plans, against the vault as it is:

- the **originals**: every input file copied byte for byte into the raw layer,
  ``sources/imports/<kind>/<YYYY-MM-DD>-<hash8>/<file>`` (files, not pages: see
  ``vault.layout.IMPORT_ORIGINALS``), so each citation opens the line its item came from;
- **entity pages**: a new page per entity (``people/Ada Park.md`` …), or the entity's facts
  merged into the page of that name when Kenning may write it; a person's own note is never
  written — the import writes beside it (``Ada Park (rawthink).md``) and links it;
- **facts, timeline lines, decisions** on those pages, each citing its original:
  ``[source:: [[sources/imports/…/memory.jsonl#L12]] rawthink id Ada/3f2a, 2025-03-01]``;
- **documents** (sessions, daily logs, core memory) at their path; beside a different file of
  that path, except that a daily log there gets the Retain lines it lacks (and the rest, once)
  and ``memory.md`` still as ``kenning init`` wrote it gets the imported core memory appended
  (``pages.documents_merged`` in the report);
- the **ledger** ``.kenning/imports/<kind>.json``: every item's origin key and the page it went
  to. An item imported before is not imported again, so a second import of the same input
  writes nothing, and an input that grew adds only what is new.

Then everything — pages, originals, the created-pages registry, the ledger — is written as one
journaled batch (``vault.writes.write_files``): all of it lands or none of it, even across a
crash. ``dry_run`` plans the same and writes nothing. The report says what became a page, a
fact, a link, a decision, what was already there, and what was skipped and why.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kenning import vocabulary
from kenning.errors import KenningError, VocabularyError
from kenning.memory.common import (
    Context,
    Resolver,
    journal,
    next_fact_id,
    not_kennings,
    read_page,
    reindex,
    today,
    wiki_target,
    write_files,
    write_lock,
)
from kenning.transfer import IMPORTERS
from kenning.transfer.model import (
    KENNING_KEYS,
    Imported,
    ImportedDocument,
    ImportedEntity,
    ImportedFact,
    Origin,
)
from kenning.vault.created import created_change, read_created
from kenning.vault.fsio import STATE_DIR, utf8_text
from kenning.vault.layout import (
    CORE_MEMORY,
    IMPORT_ORIGINALS,
    daily_log_date,
    entity_path,
    folder_keys,
    free_path,
    name_key,
)
from kenning.vault.page import (
    Fact,
    FrontmatterError,
    ItemLine,
    TimelineEntry,
    add_fact,
    add_item,
    append_retain,
    append_timeline,
    new_page,
    parse_page,
    render_retain,
    set_frontmatter,
)

LEDGER_DIR = "imports"
MAX_PROBLEMS_SHOWN = 20
_DATE = re.compile(r"\d{4}(-\d{2}(-\d{2}( \d{2}:\d{2})?)?)?$")
_UNSAFE = re.compile(r"[\[\]\r\n]+")


class ImportFailed(KenningError):
    """The input cannot be imported as it is; nothing was written. One line per problem."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


@dataclass
class _Target:
    """A page the import writes (new, or merged into), built in memory: what it gets is
    queued, and rendered once at the end (a new page in one piece; an existing one by line
    splices that leave every other byte alone)."""

    path: str
    title: str
    created: bool
    original: str = ""
    foreign: bool = False               # a person's note: never written
    front: dict[str, Any] = field(default_factory=dict)   # a new page's frontmatter
    summary: str = ""
    body: str = ""
    updates: dict[str, Any] = field(default_factory=dict)  # frontmatter added to an old page
    facts: list[Fact] = field(default_factory=list)
    events: list[TimelineEntry] = field(default_factory=list)
    decisions: list[ItemLine] = field(default_factory=list)
    top: int = 0                        # the highest fN id taken on the page

    @property
    def changed(self) -> bool:
        return self.created or bool(self.facts or self.events or self.decisions
                                    or self.updates)


def run_import(ctx: Context, kind: str, path: str | Path, *, dry_run: bool = False
               ) -> dict[str, Any]:
    """Import the memory of tool ``kind`` at ``path`` into the vault (see the module doc)."""
    return apply_import(ctx, read_input(ctx.root, kind, path), dry_run=dry_run)


def read_input(root: Path, kind: str, path: str | Path) -> Imported:
    """What the importer of ``kind`` reads at ``path``; :class:`ImportFailed` (one line per
    problem, naming file and line) when the input has problems."""
    if kind not in IMPORTERS:
        raise KenningError(f"unknown import kind {kind!r}; known: {', '.join(IMPORTERS)}")
    source = Path(path).expanduser()
    if not source.exists():
        raise KenningError(f"{source}: no such file or folder")
    source = source.resolve()
    root = root.resolve()
    inside = source.relative_to(root).as_posix() + "/" if root in source.parents else ""
    if source == root or inside.startswith((STATE_DIR + "/", IMPORT_ORIGINALS)):
        raise KenningError(f"{source}: that is the vault itself, its state or an earlier "
                           "import's originals; import from the tool's own folder")
    reader = importlib.import_module(IMPORTERS[kind])
    got: Imported = reader.read(source)
    if got.problems:
        shown = [str(p) for p in got.problems[:MAX_PROBLEMS_SHOWN]]
        more = len(got.problems) - len(shown)
        raise ImportFailed([f"nothing imported from {source}: {len(got.problems)} problem(s)",
                            *shown, *([f"… and {more} more"] if more else [])])
    return got


def apply_import(ctx: Context, got: Imported, *, dry_run: bool = False) -> dict[str, Any]:
    """Plan ``got`` against the vault and write it as one journaled batch (or, with
    ``dry_run``, only report it); the report says what went where."""
    with write_lock(ctx.root):
        plan = _Plan(ctx, got)
        plan.build()
        report = plan.report(dry_run=dry_run)
        if dry_run or not plan.writes:
            return report
        write_files(ctx.root, plan.writes)
        journal(ctx.root, [{"op": "import", "kind": got.kind, "path": p}
                           for p in sorted(plan.pages_written | set(plan.documents))])
    return {**report, **reindex(ctx)}


def _clean(value: str) -> str:
    return _UNSAFE.sub(" ", value).strip()


class _Plan:
    """Every write of one import, decided in memory."""

    def __init__(self, ctx: Context, got: Imported) -> None:
        self.ctx = ctx
        self.root = ctx.root
        self.got = got
        self.kind = got.kind
        self.day = today()
        self.resolver = Resolver(ctx)
        self.created = read_created(self.root)
        self.ledger_path = f"{STATE_DIR}/{LEDGER_DIR}/{self.kind}.json"
        self.ledger = self._read_ledger()
        self.items: dict[str, str] = self.ledger.setdefault("items", {})
        self.targets: dict[str, _Target] = {}          # path → page being written
        self.names: dict[str, str] = {}                # norm name → path, this import
        self.writes: dict[str, str] = {}
        self.pages_written: set[str] = set()
        self.documents: list[str] = []
        self.merged_documents: list[str] = []
        self.taken: dict[str, set[str]] = {}           # folder → name keys taken
        self.fact_ids: dict[str, tuple[_Target, int]] = {}  # origin key → queued fact
        self.counts: Counter[str] = Counter()
        self.dangling: Counter[str] = Counter()
        self.skipped: list[dict[str, Any]] = [
            {"where": _where(s.origin), "reason": s.reason} for s in got.skipped]
        self.notes: list[str] = list(got.notes)
        self.snapshot = ""

    # -- the ledger and the originals ---------------------------------------------------------

    def _read_ledger(self) -> dict[str, Any]:
        file = self.root / self.ledger_path
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"kind": self.kind, "snapshots": {}, "items": {}}
        except (OSError, ValueError) as exc:
            raise KenningError(f"{file}: cannot read the import ledger ({exc}); move it aside "
                               "to import again from scratch") from exc
        if not isinstance(data, dict) or not isinstance(data.get("items", {}), dict):
            raise KenningError(f"{file}: not an import ledger; move it aside to import again")
        return data

    def _originals(self) -> None:
        """Copy the input files into the raw layer, once per distinct input."""
        base = self.got.root if self.got.root.is_dir() else self.got.root.parent
        digest = hashlib.sha256()
        contents: dict[str, str] = {}
        for rel in sorted(self.got.files):
            data = (base / rel).read_bytes()
            digest.update(rel.encode() + b"\0" + data + b"\0")
            try:
                contents[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                # The importer reported (or skipped) what it could not read; the copy keeps
                # every byte it can, the bad ones as U+FFFD.
                contents[rel] = utf8_text(data.decode("utf-8", "replace"))
        key = digest.hexdigest()
        snapshots = self.ledger.setdefault("snapshots", {})
        self.snapshot = snapshots.get(key) or f"{self.day}-{key[:8]}"
        snapshots[key] = self.snapshot
        for rel, text in contents.items():
            target = self._original_path(rel)
            existing = self.root / target
            if existing.is_file():
                continue
            self.writes[target] = text
            self.counts["originals"] += 1

    def _original_path(self, rel: str) -> str:
        return f"{IMPORT_ORIGINALS}{self.kind}/{self.snapshot}/{rel}"

    def cite(self, origin: Origin) -> str:
        link = self._original_path(origin.file) + (f"#L{origin.line}" if origin.line else "")
        tail = [f"{self.kind} id {_clean(origin.id)}" if origin.id else self.kind]
        if origin.date:
            tail.append(_clean(origin.date))
        return f"[[{link}]] " + ", ".join(tail)

    # -- pages ----------------------------------------------------------------------------------

    def build(self) -> None:
        from kenning.index.indexer import norm_name

        self._originals()
        entities = [self._checked(e) for e in self.got.entities]
        # Every page first, so relations between imported entities link to each other.
        placed: list[tuple[ImportedEntity, _Target]] = []
        for entity in entities:
            target = self._place(entity)
            for name in (entity.name, *entity.aliases):
                self.names.setdefault(norm_name(name), target.path)
            placed.append((entity, target))
        for entity, target in placed:
            self._facts(entity, target)
        for entity, target in placed:
            self._timeline(entity, target)
            self._decisions(entity, target)
        self._supersessions(entities)
        for document in self.got.documents:
            self._document(document)
        made: dict[str, str] = {}
        for target in self.targets.values():
            if target.foreign or not target.changed:
                continue
            text = self._render(target)
            if text == target.original:
                continue
            self.writes[target.path] = text
            self.pages_written.add(target.path)
            if target.created:
                made[target.path] = "import"
        for path in self.documents:
            made[path] = "import"
        if made and (registry := created_change(self.root, add=made, day=self.day)):
            self.writes[registry[0]] = registry[1]
        if self.writes:
            self.ledger["kind"] = self.kind
            self.writes[self.ledger_path] = json.dumps(self.ledger, ensure_ascii=False,
                                                       indent=1, sort_keys=True) + "\n"

    def _render(self, target: _Target) -> str:
        if target.created:
            text = new_page(title=target.title, frontmatter=target.front,
                            summary=target.summary, facts=target.facts,
                            timeline=target.events, body=target.body)
        else:
            text = target.original
            if target.updates:
                try:
                    text = set_frontmatter(text, target.updates)
                except FrontmatterError as exc:
                    self.notes.append(f"{target.path}: aliases/domain not added ({exc})")
            for fact in target.facts:
                text = add_fact(text, fact)
            for entry in target.events:
                text = append_timeline(text, entry)
        for item in target.decisions:
            text = add_item(text, item)
        return text

    def _checked(self, entity: ImportedEntity) -> ImportedEntity:
        """The entity with a type and domain Kenning knows (mapped, or reported)."""
        where = _where(entity.origin)
        try:
            kind = vocabulary.entity_type(entity.type)
        except VocabularyError:
            self.notes.append(f"{where}: type {entity.type!r} is not Kenning's; imported as "
                              "thing")
            kind = "thing"
        domain = entity.domain
        if domain is not None:
            try:
                domain = vocabulary.domain(domain)
            except VocabularyError:
                self.notes.append(f"{where}: domain {domain!r} is not Kenning's; kept as "
                                  "imported_domain")
                entity.frontmatter.setdefault("imported_domain", domain)
                domain = None
        return replace(entity, type=kind, domain=domain)

    def _place(self, entity: ImportedEntity) -> _Target:
        """The page this entity's items go to: the page it went to before, another entity of
        this import with that name, the vault's page of that name, or a new page (beside the
        vault's page when that is a person's note)."""
        from kenning.index.indexer import norm_name

        key = "entity:" + entity.origin.key()
        before = self.items.get(key)
        if before and (before in self.targets or (self.root / before).is_file()):
            target = self._open(before)
            if not target.foreign:
                return target
        if (known := self.names.get(norm_name(entity.name))) is not None:
            self.counts["duplicates"] += 1
            self.notes.append(f"{_where(entity.origin)}: {entity.name!r} again; merged into "
                              f"{known}")
            return self.targets[known]
        path, candidates = self.resolver.find(entity.name)
        if path is None and candidates:
            self.notes.append(f"{_where(entity.origin)}: {entity.name!r} names several pages "
                              f"({', '.join(candidates)}); imported as a page of its own")
        beside = None
        if path is not None:
            target = self._open(path)
            if not target.foreign:
                self.items[key] = target.path
                self._merge_frontmatter(target, entity)
                return target
            beside = target
        target = self._new(entity, beside)
        self.items[key] = target.path
        return target

    def _open(self, path: str) -> _Target:
        if path in self.targets:
            return self.targets[path]
        text, page = read_page(self.root, path)
        target = _Target(path, page.title, created=False, original=text,
                         foreign=not_kennings(path, page, self.created) is not None)
        target.top = int(next_fact_id(page)[1:]) - 1
        self.targets[path] = target
        return target

    def _free(self, base: str) -> str:
        folder = base.rsplit("/", 1)[0] if "/" in base else ""
        if folder not in self.taken:
            self.taken[folder] = folder_keys(self.root, folder)
        keys = self.taken[folder]
        path = free_path(base, keys.__contains__)
        keys.add(name_key(path))
        return path

    def _new(self, entity: ImportedEntity, beside: _Target | None = None) -> _Target:
        title = " ".join(entity.name.split())
        base = entity_path(entity.type, f"{title} ({self.kind})" if beside else title)
        front: dict[str, Any] = {"type": entity.type}
        if entity.domain:
            front["domain"] = entity.domain
        aliases = [a for a in dict.fromkeys(" ".join(a.split()) for a in entity.aliases)
                   if a and a != title]
        if aliases and beside is None:
            front["aliases"] = aliases
        front["created"] = _date(entity.created) or self.day
        front["imported_from"] = self.kind
        if entity.source_type and entity.source_type != entity.type:
            front["imported_type"] = entity.source_type
        decision = entity.decisions[0] if entity.type == "decision" and entity.decisions \
            else None
        if decision is not None:
            front["status"] = "superseded" if decision.superseded_by else "active"
            if _date(decision.date):
                front["decided"] = _date(decision.date)
            if decision.because:
                front["because"] = " ".join(decision.because.split())
            if decision.rejected:
                front["rejected"] = [" ".join(r.split()) for r in decision.rejected]
        for key, value in entity.frontmatter.items():
            if key not in front and key not in KENNING_KEYS:
                front[key] = value
        summary = _no_headings((entity.summary or "").strip())
        if beside is not None:
            beside_link = self._link_path(beside.path, beside.title)
            front["related"] = [beside_link]
            summary = (f"Imported from {self.kind} beside {beside_link}"
                       ", a note of yours that Kenning does not write.\n\n" + summary).strip()
        body = guard_body((entity.body or "").strip("\n"), self.kind)
        target = _Target(self._free(base), title, created=True, front=front, summary=summary,
                         body=body + "\n" if body else "")
        self.targets[target.path] = target
        self.counts["pages_beside" if beside else "pages_created"] += 1
        return target

    def _merge_frontmatter(self, target: _Target, entity: ImportedEntity) -> None:
        """Aliases the existing page lacks; a domain when it has none."""
        page = parse_page(target.original, target.path)
        have = {a.casefold() for a in (*page.aliases, page.title)}
        extra = [a for a in dict.fromkeys(" ".join(a.split()) for a in entity.aliases)
                 if a and a.casefold() not in have]
        if extra:
            target.updates["aliases"] = [*page.aliases, *extra]
        if entity.domain and "domain" not in page.frontmatter:
            target.updates["domain"] = entity.domain

    # -- items on pages -------------------------------------------------------------------------

    def _fresh(self, origin: Origin, path: str) -> bool:
        """True the first time an item is seen (in this import or an earlier one)."""
        key = origin.key()
        if key in self.items:
            self.counts["already"] += 1
            return False
        self.items[key] = path
        return True

    def _facts(self, entity: ImportedEntity, target: _Target) -> None:
        for imported in entity.facts:
            if not self._fresh(imported.origin, target.path):
                continue
            fact = self._fact(imported, entity)
            if fact is None:
                continue
            target.top += 1
            fact = replace(fact, block_id=f"f{target.top}")
            target.facts.append(fact)
            self.fact_ids[imported.origin.key()] = (target, len(target.facts) - 1)
            self.counts["relations" if fact.relation else "facts"] += 1

    def _fact(self, imported: ImportedFact, entity: ImportedEntity) -> Fact | None:
        where = _where(imported.origin)
        text = " ".join(imported.text.split())
        relation = target = None
        if imported.relation:
            try:
                relation = vocabulary.relation(imported.relation)
            except VocabularyError:
                relation = "related_to"
                text = f"{text} ({self.kind}: {imported.relation})".strip()
            if imported.target:
                link = self._link(imported.target)
                target = link[2:-2].split("|")[0]
                text = f"{link} {text}".strip()
        if not text:
            self.skipped.append({"where": where, "reason": "no text"})
            return None
        status = imported.status if imported.status in vocabulary.FACT_STATUSES else "active"
        epistemic = imported.epistemic or entity.epistemic or vocabulary.EPISTEMIC_DEFAULT
        if epistemic not in vocabulary.EPISTEMIC_STATUSES:
            self.notes.append(f"{where}: epistemic {epistemic!r} is not Kenning's; unknown")
            epistemic = vocabulary.EPISTEMIC_DEFAULT
        confidence = imported.confidence
        if confidence is not None and not 0 <= confidence <= 1:
            self.notes.append(f"{where}: confidence {confidence} is not 0–1; left out")
            confidence = None
        return Fact(0, relation, target, text, valid_from=_date(imported.valid_from),
                    valid_to=_date(imported.valid_to), status=status, epistemic=epistemic,
                    confidence=confidence, source=self.cite(imported.origin),
                    recorded=_date(imported.recorded or imported.origin.date),
                    expired=_date(imported.expired))

    def _link(self, name: str) -> str:
        from kenning.index.indexer import norm_name

        path = self.names.get(norm_name(name))
        if path is None:
            path, _ = self.resolver.find(name)
        if path is None:
            self.dangling[name] += 1
            return f"[[{_clean(name)}]]"
        title = self.targets[path].title if path in self.targets else Path(path).stem
        return self._link_path(path, title)

    def _link_path(self, path: str, title: str) -> str:
        return self.resolver.link(path, title, pending=self.targets)

    def _supersessions(self, entities: list[ImportedEntity]) -> None:
        """``[status:: superseded] [by:: [[Page#^fN]]]`` on facts the input says were
        replaced by another fact of this import."""
        for entity in entities:
            for imported in entity.facts:
                mine = self.fact_ids.get(imported.origin.key())
                successor = self.fact_ids.get(imported.superseded_by or "")
                if mine is None or successor is None:
                    continue
                target, index = mine
                by_target, by_index = successor
                by = wiki_target(by_target.path, f"#^{by_target.facts[by_index].block_id}")
                target.facts[index] = replace(target.facts[index], status="superseded",
                                              successor=by)

    def _timeline(self, entity: ImportedEntity, target: _Target) -> None:
        for event in entity.timeline:
            if not self._fresh(event.origin, target.path):
                continue
            date = event.date.strip()
            if not _DATE.match(date):
                self.skipped.append({"where": _where(event.origin),
                                     "reason": f"timeline date {date!r} is not a date"})
                continue
            target.events.append(TimelineEntry(0, date, " ".join(event.text.split()),
                                               self.cite(event.origin)))
            self.counts["events"] += 1

    def _decisions(self, entity: ImportedEntity, target: _Target) -> None:
        for decision in entity.decisions:
            if not self._fresh(decision.origin, target.path):
                continue
            who = self._link(decision.who) if decision.who else None
            by = None
            if decision.superseded_by and (went := self.items.get(decision.superseded_by)):
                by = wiki_target(went)
            target.decisions.append(ItemLine(
                0, "decisions", "decision", " ".join(decision.decided.split()),
                date=_date(decision.date), who=who,
                because=" ".join(decision.because.split()) if decision.because else None,
                rejected=tuple(" ".join(r.split()) for r in decision.rejected),
                about=tuple(self._link(a) for a in decision.about),
                status="superseded" if by else "decided", by=by,
                source=self.cite(decision.origin)))
            self.counts["decisions"] += 1

    # -- documents ------------------------------------------------------------------------------

    def _document(self, document: ImportedDocument) -> None:
        key = document.origin.key()
        if key in self.items:
            self.counts["already"] += 1
            return
        rel = document.path.strip("/")
        text = document.text if document.text.endswith("\n") else document.text + "\n"
        existing = self.root / rel
        if existing.is_file():
            try:
                same = existing.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                same = False
            if same:
                self.items[key] = rel
                self.counts["already"] += 1
                return
            merged = self._merged(rel, existing, document, text)
            if merged is not None:
                self.items[key] = rel
                if merged[1] == merged[0]:
                    self.counts["already"] += 1
                    return
                self.writes[rel] = merged[1]
                self.pages_written.add(rel)
                self.merged_documents.append(rel)
                return
            beside = self._free(rel)
            self.notes.append(f"{rel} exists and differs; {_where(document.origin)} written "
                              f"beside it as {beside}")
            rel = beside
        else:
            rel = self._free(rel)
        self.items[key] = rel
        self.writes[rel] = text
        self.documents.append(rel)
        self.counts["documents"] += 1

    def _merged(self, rel: str, existing: Path, document: ImportedDocument, text: str
                ) -> tuple[str, str] | None:
        """(old, new) text when the document merges into the file already at ``rel``: the
        vault's core memory still as ``kenning init`` wrote it gets the imported core memory
        appended; a daily log gets the imported log's Retain bullets it lacks (as Kenning's
        own retain appends them) and the rest of the imported log, once, under
        ``## Imported from <kind>``. None: not mergeable (the document goes beside)."""
        try:
            # a document this import already merged there comes first
            old = self.writes.get(rel) or existing.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        where = f"## Imported from {self.kind} ({_clean(document.origin.file)})"
        if rel == "memory.md":
            if old.replace("\r\n", "\n") != CORE_MEMORY:
                return None
            rest = _demoted(_without(text, rel))
            return old, old.rstrip("\n") + f"\n\n{where}\n\n{rest}" if rest else old
        if daily_log_date(rel) is None:
            return None
        new = old
        rest = _demoted(_without(text, rel, retain=True))
        if rest and rest.strip() not in old:
            new = new.rstrip("\n") + f"\n\n{where}\n\n{rest}"
        have = {render_retain(r) for r in parse_page(old, rel).retain}
        for item in parse_page(text, rel).retain:
            if render_retain(item) not in have:
                have.add(render_retain(item))
                new = append_retain(new, item)
        return old, new

    # -- the report -----------------------------------------------------------------------------

    def report(self, *, dry_run: bool) -> dict[str, Any]:
        got = self.got
        pages = {
            "created": sorted(p for p, t in self.targets.items() if t.created),
            "merged": sorted(p for p, t in self.targets.items()
                             if not t.created and not t.foreign and t.changed),
            "documents": sorted(self.documents),
            "documents_merged": sorted(self.merged_documents),
        }
        read = {
            "entities": len(got.entities),
            "facts": sum(1 for e in got.entities for f in e.facts if not f.relation),
            "relations": sum(1 for e in got.entities for f in e.facts if f.relation),
            "events": sum(len(e.timeline) for e in got.entities),
            "decisions": sum(len(e.decisions) for e in got.entities),
            "documents": len(got.documents),
            "files": len(got.files),
        }
        self.counts["pages_merged"] = len(pages["merged"])
        written = {k: self.counts[k] for k in (
            "pages_created", "pages_merged", "pages_beside", "facts", "relations", "events",
            "decisions", "documents", "originals", "already", "duplicates")}
        return {
            "kind": self.kind, "path": str(got.root), "dry_run": dry_run,
            "originals": f"{IMPORT_ORIGINALS}{self.kind}/{self.snapshot}",
            "read": read, "written": written, "pages": pages,
            "dangling": [{"name": n, "links": c} for n, c in sorted(self.dangling.items())],
            "mapped": [{"field": f, "from": a, "to": b}
                       for (f, a), b in sorted(got.mapped.items())],
            "skipped": self.skipped, "notes": self.notes,
        }


def _where(origin: Origin) -> str:
    return origin.file + (f":{origin.line}" if origin.line else "")


def _date(value: str | None) -> str | None:
    """An ISO date (``2025-03-01``) from a date or timestamp; None when it is not one."""
    if not value:
        return None
    day = value.strip()[:10]
    return day if re.fullmatch(r"\d{4}-\d{2}-\d{2}", day) else None


_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6})(\s.*|)$")


def _without(text: str, rel: str, *, retain: bool = False) -> str:
    """The body of ``text``: no frontmatter, no H1 title, and (``retain``) no ``## Retain``
    section."""
    page = parse_page(text, rel)
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    skip_level = 0
    for number, line in enumerate(lines, 1):
        if number < page.body_start or number == page.title_line:
            continue
        heading = _HEADING_LINE.match(line)
        if heading:
            level = len(heading.group(1))
            if skip_level and level <= skip_level:
                skip_level = 0
            if retain and level >= 2 and heading.group(2).strip().casefold() == "retain":
                skip_level = level
        if not skip_level:
            kept.append(line)
    return "\n".join(kept).strip("\n")


def _demoted(text: str) -> str:
    """Headings two levels down (under an ``## Imported from …`` heading)."""
    out = [re.sub(r"^( {0,3})(#{1,4})(\s|$)", r"\1##\2\3", line) for line in text.split("\n")]
    return "\n".join(out).strip("\n") + "\n" if text.strip() else ""


def guard_body(body: str, kind: str) -> str:
    """An imported page's body, with a heading of its own (``## From <kind>``) when the page
    parser would read a bullet of it as a list item before its first heading: after the page's
    ``## Facts`` or ``## Timeline`` (there now, or added later) such bullets would read as facts
    or timeline lines, which they are not. Every importer's body goes through here."""
    from kenning.vault.markdown import scan

    structure = scan(body, 1)
    first_heading = min((h.line for h in structure.headings), default=None)
    if structure.items and (first_heading is None or structure.items[0][0] < first_heading):
        return f"## From {kind}\n\n{body}"
    return body


def _no_headings(text: str) -> str:
    """A summary may not hold a heading line: such lines lose their ``#`` marks."""
    return "\n".join(re.sub(r"^ {0,3}#{1,6}(\s|$)", "", line) for line in text.split("\n"))


def _type_of(target: _Target) -> str:
    page = parse_page(target.text, target.path)
    return page.type or "thing"
