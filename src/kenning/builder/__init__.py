"""``kenning build``: sources → entity pages (people, organizations, projects, topics, meetings).

:func:`run_build` reads every source whose bytes changed since the last build (a content hash
per source in ``.kenning/build/state.json``), in date order, in batches. Before each batch it
rebuilds the compact entity index from the pages on disk, so later batches see what earlier ones
created. For each batch: extract mentions (:mod:`.mentions`), decide what each one is
(:func:`.resolve.resolve_batch`, the resolver seam), write the pages (:mod:`.pages`), rename
pages whose fuller name was learned (:mod:`.rename`), and record every mention with its decision
in ``.kenning/build/mentions.jsonl``.

Note strictness (``build.strictness`` in ``.kenning/config.yaml``: low | medium | high; inferred
when unset) decides which mentions may create pages; every mention may update a page that exists.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kenning.builder.mentions import (
    MAX_CREATING_PARTICIPANTS,
    ORGANIZATION,
    PERSON,
    PROJECT,
    TOPIC,
    Mention,
    SourceInfo,
)
from kenning.builder.resolve import Decision, EntityIndex, ResolveContext, resolve_batch
from kenning.builder.state import BuildState, file_hash, infer_strictness, list_sources
from kenning.vault.writes import write_lock

__all__ = ["DEFAULT_BATCH", "BuildReport", "Resolver", "may_create", "run_build"]

DEFAULT_BATCH = 50

Resolver = Callable[[list[Mention], EntityIndex, ResolveContext], list[Decision]]
Progress = Callable[[int, int | None, str], None]


@dataclass
class BuildReport:
    """What one build did."""

    sources_total: int = 0
    sources_built: int = 0
    sources_removed: int = 0
    batches: int = 0
    mentions: int = 0
    linked: int = 0
    unresolved: int = 0
    pages_created: list[str] = field(default_factory=list)
    pages_updated: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    sources_revisited: int = 0  # second pass: sources resolved again against the final index
    # The items pass (builder/items): commitments, asks and decisions.
    items_found: int = 0        # in the sources whose items this build extracted
    items_new: int = 0          # not held by an earlier build
    items_closed: int = 0       # closed by this build (delivered, answered)
    items_total: int = 0        # held after settling
    item_notes: list[str] = field(default_factory=list)  # one line each, naming the file
    items_seconds: float = 0.0
    strictness: str = ""
    strictness_why: str = ""
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False
    diff: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["renamed"] = [{"from": a, "to": b} for a, b in self.renamed]
        if not self.dry_run:
            data.pop("diff")
        return data


def may_create(mentions: list[Mention], infos: dict[str, SourceInfo], strictness: str,
               contacts: set[str]) -> list[bool]:
    """The note-strictness policy: which mentions may create a page (see docs/build.md)."""
    out = [False] * len(mentions)
    people_ok: dict[str, set[int]] = {}
    domains_ok: dict[str, set[str]] = {}
    for i, m in enumerate(mentions):
        info = infos[m.source]
        if info.bulk or m.via == "owner" or m.kind != PERSON or m.junk:
            continue
        ok = False
        if m.anonymous:
            ok = False
        elif m.via == "participant":
            if info.participants > MAX_CREATING_PARTICIPANTS and "from" not in m.roles:
                ok = False
            elif strictness == "high":
                ok = bool(m.email and m.email in contacts)
            else:
                ok = True
        elif m.via in ("attendee", "speaker", "chat"):
            ok = True
        elif m.via == "calendar":
            ok = strictness != "high" or info.owner_sent
        out[i] = ok
        if ok:
            people_ok.setdefault(m.source, set()).add(m.line)
            if m.email and "@" in m.email:
                from kenning.builder.names import org_domain

                domains_ok.setdefault(m.source, set()).add(org_domain(m.email.split("@")[1]))
    for i, m in enumerate(mentions):
        info = infos[m.source]
        if info.bulk:
            continue
        if m.kind == ORGANIZATION:
            if m.via == "domain":
                out[i] = m.domain in domains_ok.get(m.source, set())
            elif m.via == "signature":
                out[i] = m.line in people_ok.get(m.source, set())
            elif m.via == "text":
                out[i] = strictness == "low"
        elif m.kind in (PROJECT, TOPIC) and m.via in ("tag", "subject", "text"):
            out[i] = info.owner_sent if strictness == "high" else True
    return out


def _org_domains(infos: dict[str, SourceInfo], texts: dict[str, str], book: Any,
                 known: list[Any]) -> tuple[dict[str, str | None], dict[str, bool], set[str]]:
    """(label → the written name, domain → may make an organization page, domains with
    several units named after them) for the mail domains of this build's sources (see
    orgnames.py): a sender's own "Enron Americas" names the domain's organization only when it
    is the one such name; with "Enron North America" beside it, both are units."""
    from kenning.builder import names as nm
    from kenning.builder.orgnames import best_form, org_domain_evidence, written_forms

    domains = {m.domain for info in infos.values() for m in info.mentions
               if m.kind == ORGANIZATION and m.via == "domain" and m.domain}
    if not domains:
        return {}, {}, set()
    labels = {nm.registrable_label(d).replace("-", "") for d in domains}
    forms = written_forms(texts.values(), labels)
    people: dict[str, set[str]] = {d: set() for d in domains}
    for card in book.cards.values():
        if card.problem is None and "@" in card.address:
            d = nm.org_domain(card.address.rsplit("@", 1)[1])
            if d in people:
                # One person with several addresses is one person.
                people[d].add(min((card.address, *card.same)))
    named = {nm.org_domain(d) for e in known if e.type == ORGANIZATION for d in e.domains}
    for e in known:
        if e.type == PERSON:
            for a in e.emails:
                d = nm.org_domain(a.rsplit("@", 1)[-1])
                if d in people:
                    people[d].add(e.page)
    units: dict[str, set[str]] = defaultdict(set)
    by_label: dict[str, list[str]] = defaultdict(list)
    for d in domains:
        by_label[nm.registrable_label(d).replace("-", "")].append(d)
    for info in infos.values():
        for m in info.mentions:
            if m.kind != ORGANIZATION or m.via not in ("signature", "text"):
                continue
            if m.domain and nm.org_name_fits_domain(m.text, m.domain,
                                                    own=m.via == "signature"):
                named.add(m.domain)
            # "Enron Americas", "Enron North America": names that start with a domain's
            # label and are no domain's own name are units of that organization.
            key = nm.org_key(m.text)
            words = key.split()
            if len(words) < 2 or words[0] not in by_label:
                continue
            if any(nm.org_name_fits_domain(m.text, d) for d in domains):
                continue
            for d in by_label[words[0]]:
                units[d].add(key)
    return ({label: best_form(forms.get(label)) for label in labels},
            org_domain_evidence(people, forms, named),
            {d for d, keys in units.items() if len(keys) >= 2})


def _contacts(infos: dict[str, SourceInfo]) -> set[str]:
    """Addresses of everyone in a conversation the owner wrote in."""
    out = set()
    for info in infos.values():
        if info.owner_sent and info.kind in ("email", "calendar"):
            out.update(m.email for m in info.mentions if m.email and m.kind == PERSON)
    return out


def run_build(root: Path | str, *, batch_size: int = DEFAULT_BATCH, dry_run: bool = False,
              progress: Progress | None = None, resolver: Resolver | None = None,
              item_model: Any = None) -> BuildReport:
    """Build entity pages from new or changed sources (see the module docstring).

    A build is one unit (:mod:`.journal`): every file it changes is journaled first, and a
    build that did not finish is rolled back by the next, which then builds from where the
    killed one started. Temp files of writes a kill cut short are removed first.

    ``resolver`` and ``item_model`` are the configured model's entity resolution
    (:func:`kenning.builder.llm.make_resolver`) and item pass
    (:meth:`kenning.builder.items.llm.ItemModel.from_vault`); without them the build is
    deterministic."""
    from kenning.builder.journal import begin, build_lock, interrupted, rollback
    from kenning.vault.fsio import sweep_temp_files
    from kenning.vault.writes import check_format

    root = Path(root).expanduser().resolve()
    if not dry_run:
        check_format(root)  # a vault of a newer format: refused before the build lock
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    if dry_run:
        notes = ["the last build was interrupted: `kenning build` rolls its changes back first; "
                 "this dry run shows the changes against its half-written pages"] \
            if interrupted(root) else []
        return _build(root, batch_size, True, progress, resolver, None, notes, item_model)
    with build_lock(root) as notes:
        swept = sweep_temp_files(root)
        if swept:
            notes.append(f"removed {len(swept)} temp file(s) that killed writes left: "
                         + ", ".join(swept[:5]) + (" …" if len(swept) > 5 else ""))
        journal = begin(root)
        try:
            report = _build(root, batch_size, False, progress, resolver, journal, notes,
                            item_model)
        except BaseException:
            # A build that failed undoes itself now (a kill is undone by the next run).
            with contextlib.suppress(Exception):
                rollback(root)
            raise
        journal.finish()
    return report


def _build(root: Path, batch_size: int, dry_run: bool, progress: Progress | None,
           resolver: Resolver | None, journal: Any, notes: list[str],
           item_model: Any = None) -> BuildReport:
    from kenning.builder import names as nm
    from kenning.builder import state as st
    from kenning.builder.identities import build_address_book
    from kenning.builder.mentions import extract
    from kenning.builder.moves import merge_moves, moved_mentions
    from kenning.builder.pages import (
        INDEX_FOLDERS,
        Applier,
        IndexLoader,
        read_entity,
        write_person_summaries,
    )
    from kenning.builder.rename import rename_pages
    from kenning.builder.workspace import Workspace
    from kenning.sources.owner import Owner
    from kenning.vault.fsio import UnreadableFile, decode_markdown
    from kenning.vault.layout import load_config

    started = time.perf_counter()
    resolver = resolver or resolve_batch
    report = BuildReport(dry_run=dry_run, warnings=list(notes))
    intend = journal.record if journal is not None else None
    config = load_config(root)
    owner = Owner.from_config(config.raw, where=str(root / ".kenning" / "config.yaml"))
    state = BuildState.load(root)
    if state.warning:
        report.warnings.append(state.warning)
    ws = Workspace(root, dry_run=dry_run, intend=intend)

    # Pages deleted by hand since the last build: remember who they were. A page whose
    # identity another page on disk carries was moved (renamed in Obsidian), not deleted.
    carried: set[str] | None = None
    for path, rec in sorted(state.pages.items()):
        if not ws.exists(path):
            if carried is None:
                carried = _carried_keys(ws)
            if not set(rec.get("keys", [])) & carried:
                for key in rec.get("keys", []):
                    state.deleted[key] = max(state.deleted.get(key, ""),
                                             rec.get("last_seen") or "")
            del state.pages[path]

    # Pages Kenning created, and those an older Kenning named by a slug moved to their titles.
    owned, migrated = _migrate_names(root, ws, state)

    paths = list_sources(root)
    report.sources_total = len(paths)
    infos: dict[str, SourceInfo] = {}
    texts: dict[str, str] = {}
    hashes: dict[str, str] = {}
    for rel in paths:
        try:
            data = (root / rel).read_bytes()
        except OSError as exc:
            report.warnings.append(f"{rel}: cannot read ({exc.strerror}); skipped")
            continue
        digest = file_hash(data)
        if state.sources.get(rel) == digest:
            continue
        hashes[rel] = digest
        try:
            text = decode_markdown(data)
        except UnreadableFile as exc:
            report.warnings.append(f"{rel}: {exc.reason}; skipped")
            continue
        info = extract(rel, text, owner)
        report.warnings.extend(info.warnings)
        infos[rel] = info
        texts[rel] = text
    # One decision per address across every source of this build: its person's name, its
    # other addresses, whether it is the owner's or no one's (see identities.py); and per
    # mail domain, whether it is an organization and what people call it (orgnames.py).
    loader = IndexLoader(ws)
    if infos:
        from kenning.builder import cache

        nm.seed_parsed(cache.load(root, "names"))
    index0 = loader.load() if infos else None
    known = index0.entities if index0 else []
    book = build_address_book(infos.values(), [
        (e.name, e.aliases, e.emails) for e in known if e.type == PERSON and e.emails], owner)
    orgs = _org_domains(infos, texts, book, known)
    texts.clear()

    def annotate(info: SourceInfo) -> None:
        book.apply(info)
        for m in info.mentions:
            if m.kind == ORGANIZATION and m.via == "domain" and m.domain:
                m.name = orgs[0].get(nm.registrable_label(m.domain).replace("-", ""))
                if not orgs[1].get(m.domain, True):
                    m.junk = "one-address"
            elif m.kind == ORGANIZATION and m.domain in orgs[2]:
                m.unit = True

    for info in infos.values():
        annotate(info)
    owner_addresses = frozenset(a for a, card in book.cards.items() if card.owner)
    present = set(paths)
    removed = [p for p in state.sources if p not in present]
    for p in removed:
        del state.sources[p]
    report.sources_removed = len(removed)

    contacts = set(state.contacts) | _contacts(infos)
    state.contacts = sorted(contacts)
    emails = sum(1 for p in paths if p.startswith("sources/email/"))
    build_cfg = (config.raw or {}).get("build") if isinstance(config.raw, dict) else None
    configured = build_cfg.get("strictness") if isinstance(build_cfg, dict) else None
    strictness, why = infer_strictness(configured, owner_known=owner.known,
                                       email_sources=emails, owner_wrote=bool(contacts))
    report.strictness, report.strictness_why = strictness, why
    state.strictness = strictness

    order = sorted(infos, key=lambda p: (infos[p].date or "9999", p))
    rebuilt = set(order) | set(removed)
    rows = [r for r in st.read_log(root) if r.get("source") not in rebuilt] \
        if (order or removed) else None
    created: set[str] = set()
    moves = list(migrated)   # (old, new) of this run's renames and merges, in order
    if not order:
        index0 = None

    def run_batch(batch: list[str], binfos: dict[str, SourceInfo]) -> list[dict[str, Any]]:
        """Resolve and write one batch of sources; returns its mention-log rows."""
        # Read the pages, decide and write under the vault write lock, so an agent's write
        # between this batch's read and its commit is never overwritten.
        with write_lock(root) if not dry_run else contextlib.nullcontext():
            index = loader.load()
            owner_pages = _mark_owner(index, owner, owner_addresses)
            mentions = [m for p in batch for m in binfos[p].mentions]
            allowed = may_create(mentions, binfos, strictness, contacts)
            context = ResolveContext(allowed, dict(state.deleted), {p: binfos[p] for p in batch})
            decisions = list(resolver(mentions, index, context))
            if len(decisions) != len(mentions):
                raise ValueError(f"the resolver returned {len(decisions)} decisions for "
                                 f"{len(mentions)} mentions")
            for i, d in enumerate(decisions):
                if d.action == "link" and d.page in owner_pages:
                    decisions[i] = Decision("skip", confidence=1.0, rule="owner")
            # A create is valid when some mention allowed to create names that new entity.
            creatable = {d.new_key for i, d in enumerate(decisions)
                         if d.action == "create" and allowed[i]}
            for i, d in enumerate(decisions):
                if d.action == "create" and d.new_key not in creatable:
                    decisions[i] = Decision("unresolved", rule="not-created:strictness",
                                            candidates=d.candidates)
            applier = Applier(ws, index, state, binfos)
            applier.owned = owned | created
            new_rows = applier.apply(mentions, decisions)
            # A model's validated facts, timeline lines and aliases for this batch.
            extras = getattr(resolver, "batches", None)
            if extras and set(extras[-1].sources) <= set(batch):  # the record of this call
                from kenning.builder.llm import apply_extras

                apply_extras(applier, new_rows, extras[-1].extras)
            renames = applier.write()
            for path, u in applier.updates.items():
                if u.new:
                    created.add(path)
            # Only Kenning's own pages move (a rename can be a merge); a person's page gets
            # the fuller name as an alias.
            renames = _own_renames(ws, renames, owned | created)
            if renames:
                # Pages created in this batch count too (a domain page learning the name of a
                # page that prose created a moment ago is that page).
                fresh = [read_entity(path, text, INDEX_FOLDERS[path.split("/", 1)[0]], data)
                         for path, (text, data) in applier.final.items()
                         if applier.updates[path].new
                         and path.split("/", 1)[0] in INDEX_FOLDERS]
                if fresh:
                    index = EntityIndex([*index.entities, *(e for e in fresh if e is not None)])
            done = rename_pages(ws, state, renames, index)
            moved = moved_mentions(mentions, new_rows)
            if moved:
                done += merge_moves(ws, state, loader.load(), moved)
            ws.commit()
            if not dry_run:
                _register(root, ws, applier, done)
        for path, (text, data) in applier.final.items():
            folder = path.split("/", 1)[0]
            if folder in INDEX_FOLDERS and ws.exists(path) and ws.read(path) == text:
                loader.prime(path, text, data, INDEX_FOLDERS[folder])
        moves.extend(done)
        for old, new in done:
            owned.discard(old)
            if ws.original.get(new) is None:  # renamed, not merged into a page that was there
                owned.add(new)
            if old in created:
                created.discard(old)
                if ws.original.get(new) is None:
                    created.add(new)
        report.batches += 1
        return new_rows

    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        new_rows = run_batch(batch, infos)
        assert rows is not None
        rows.extend(new_rows)
        report.mentions += len(new_rows)
        for p in batch:
            state.sources[p] = hashes[p]
        report.sources_built += len(batch)
        if progress is not None:
            progress(report.sources_built, len(order), batch[-1])

    # Second pass: the graph converges. Sources holding a mention left unresolved that an
    # entity created or renamed (or given a new alias) by this build may now name are resolved
    # again against the final index (earlier sources never saw the pages later ones created).
    if index0 is not None and rows is not None:
        final = loader.load()
        retry = _retry_sources(rows, index0, final)
        if retry:
            more: dict[str, SourceInfo] = {}
            for rel in retry:
                if rel in infos:
                    more[rel] = infos[rel]
                    continue
                try:
                    text = decode_markdown((root / rel).read_bytes())
                except (OSError, UnreadableFile):
                    continue  # the first pass reported it
                more[rel] = extract(rel, text, owner)
                annotate(more[rel])
            # Only sources where the deterministic resolver now links a mention that was left
            # unresolved are built again (cheap to decide; the writing is what costs).
            open_rows = {(r.get("source"), r.get("line"), r.get("kind"), r.get("text"))
                         for r in rows if not r.get("page") and r.get("source") in more}
            ms = [m for p in sorted(more) for m in more[p].mentions]
            trial = resolve_batch(ms, final, ResolveContext(
                may_create(ms, more, strictness, contacts), dict(state.deleted), more))
            better = {m.source for m, d in zip(ms, trial, strict=True) if d.action == "link"
                      and (m.source, m.line, m.kind, m.text) in open_rows}
            again = sorted(better, key=lambda p: (more[p].date or "9999", p))
            for start in range(0, len(again), batch_size):
                batch = again[start:start + batch_size]
                new_rows = run_batch(batch, more)
                done_sources = set(batch)
                rows[:] = [r for r in rows if r.get("source") not in done_sources]
                rows.extend(new_rows)
            report.sources_revisited = len(again)
    if rows is not None:
        built = set(order)
        counted = [r for r in rows if r.get("source") in built]
        report.linked = sum(1 for r in counted if r.get("page"))
        # The owner, and what names no one (a role address, an unnamed provider's domain),
        # are decisions, not open questions.
        report.unresolved = sum(1 for r in counted if not r.get("page")
                                and r.get("rule") != "owner"
                                and not str(r.get("rule")).startswith(_NOT_ENTITIES))
    if rows is not None:
        for r in rows:
            if r.get("page"):
                r["page"] = state.follow(r["page"])
        # Person summaries from the whole log: threads in all and who they appear with.
        touched = [p for p in dict.fromkeys(ws.written) if p.startswith("people/")
                   and ws.exists(p)]
        if touched:
            with write_lock(root) if not dry_run else contextlib.nullcontext():
                write_person_summaries(ws, state, rows, touched, loader.load())
                ws.commit()
    if rows is None and migrated:
        rows = st.read_log(root)  # the log follows pages that moved to their titles
    if rows is not None or _items_wanted(root):
        _items_pass(root, ws, state, infos, rows, owner, loader, owned | created, report,
                    dry_run, intend, item_model)
    if not dry_run and (rows is not None or removed):
        _save(root, state, rows, intend)
    if not dry_run and loader.loaded:
        _save_caches(root, loader, rows)
    elif not dry_run and not paths and not state.pages:
        pass
    # A page created and renamed in the same run is a create under its final name; a page
    # that existed is reported once, from where it was to where it is.
    report.renamed += _renames(moves, ws)
    if not dry_run:
        _follow_manual_links(root, state, report, intend)
    report.pages_created = sorted(p for p in created if ws.exists(p))
    report.pages_updated = sorted(p for p in ws.written if p not in created and ws.exists(p)
                                  and ws.original.get(p) is not None)
    if dry_run:
        report.diff = ws.diff()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _items_wanted(root: Path) -> bool:
    """The items state is missing or older than the extractor."""
    from kenning.builder.items.write import needed

    return needed(root)


def _items_pass(root: Path, ws: Any, state: BuildState, infos: dict[str, SourceInfo],
                rows: list[dict[str, Any]] | None, owner: Any, loader: Any, owned: set[str],
                report: BuildReport, dry_run: bool, intend: Any, model: Any) -> None:
    """Commitments, asks and decisions onto their pages (:mod:`kenning.builder.items.write`)."""
    from kenning.builder import state as st
    from kenning.builder.items.write import run_items

    if rows is None:
        rows = st.read_log(root)
    for r in rows:
        if r.get("page"):
            r["page"] = state.follow(r["page"])
    out = run_items(root, ws, hashes=dict(state.sources), infos=infos, rows=rows, owner=owner,
                    index=loader.load, owned=owned, follow=state.follow, dry_run=dry_run,
                    intend=intend, model=model)
    report.items_found, report.items_new = out.found, out.new
    report.items_closed, report.items_total = out.closed, out.total
    report.item_notes = out.notes
    report.warnings.extend(out.warnings)
    report.items_seconds = out.seconds


def _carried_keys(ws: Any) -> set[str]:
    """Identity keys (emails, domains, full names) of the entity pages on disk."""
    from kenning.builder.pages import IndexLoader
    from kenning.builder.resolve import identity_keys

    out: set[str] = set()
    for e in IndexLoader(ws).load().entities:
        for email in e.emails:
            out.update(identity_keys(e.type, None, email=email))
        for domain in e.domains:
            out.update(identity_keys(e.type, None, domain=domain))
        for name in (e.name, *e.aliases):
            out.update(identity_keys(e.type, name))
    return out


def _migrate_names(root: Path, ws: Any, state: BuildState) -> \
        tuple[set[str], list[tuple[str, str]]]:
    """Kenning's pages (registry, else what the build recorded), after moving those still
    named by an older Kenning's slug (:mod:`kenning.builder.filenames`)."""
    from kenning.builder.filenames import kenning_pages, migrate_names
    from kenning.vault.created import update_created

    with write_lock(root) if not ws.dry_run else contextlib.nullcontext():
        pages = kenning_pages(root, state, ws)
        moved = migrate_names(ws, state, pages)
        ws.commit()
        to = dict(moved)
        pages = {to.get(p, p): by for p, by in pages.items()}
        if not ws.dry_run and (moved or pages):
            update_created(root, add=pages, moved=moved, intend=ws.intend)
    return set(pages), moved


def _own_renames(ws: Any, renames: list[tuple[str, str]], owned: set[str]) -> \
        list[tuple[str, str]]:
    """The renames of pages Kenning created; the fuller name of any other page joins its
    aliases instead (a person's note keeps its name and place)."""
    from kenning.builder.names import fold
    from kenning.builder.pages import _list
    from kenning.vault import frontmatter as fmod
    from kenning.vault.page import set_frontmatter

    out = []
    for path, title in renames:
        if path in owned:
            out.append((path, title))
            continue
        text = ws.read(path)
        fm = fmod.read(text) if text is not None else None
        if text is None or fm is None or fm.error:
            continue
        aliases = _list(fm.data.get("aliases"))
        if fold(title) not in {fold(a) for a in aliases}:
            ws.write(path, set_frontmatter(text, {"aliases": [*aliases, title]}))
    return out


def _register(root: Path, ws: Any, applier: Any, done: list[tuple[str, str]]) -> None:
    """Record a committed batch's new pages in the created-page registry, and follow its
    renames (a page merged into one that was there is simply gone)."""
    from kenning.vault.created import update_created

    add = {p: "build" for p, u in applier.updates.items() if u.new}
    renamed, merged = [], []
    for a, b in done:
        if ws.original.get(b) is None:
            renamed.append((a, b))
            if add.pop(a, None):
                add[b] = "build"
        else:
            merged.append(a)
            add.pop(a, None)
    add = {p: by for p, by in add.items() if ws.exists(p)}
    if add or done:
        update_created(root, add=add, moved=renamed, removed=merged, intend=ws.intend)


def _renames(moves: list[tuple[str, str]], ws: Any) -> list[tuple[str, str]]:
    """(where it was, where it is) for each page that existed before this run and moved."""
    final: dict[str, str] = {}
    for old, new in moves:
        for k, v in list(final.items()):
            if v == old:
                final[k] = new
        final.setdefault(old, new)
    return [(old, new) for old, new in final.items()
            if old != new and ws.original.get(old) is not None]


def _follow_manual_links(root: Path, state: BuildState, report: BuildReport,
                         intend: Any = None) -> None:
    from kenning.builder.filenames import follow_manual_links
    from kenning.errors import KenningError

    moves = {old: state.follow(old) or old for old, _ in report.renamed}
    try:
        follow_manual_links(root, {k: v for k, v in moves.items() if k != v}, intend=intend)
    except KenningError as exc:
        report.warnings.append(f".kenning/manual-links.jsonl: not updated for the moved pages "
                               f"({exc.message}); run `kenning build` again")


def _mark_owner(index: EntityIndex, owner: Any,
                addresses: frozenset[str] = frozenset()) -> set[str]:
    """Mark the owner's own person page(s) (an address or a name of ``owner:``, or an address
    the address book found to be the owner's): the owner is "I", so the build never links a
    mention to that page nor adds to it (a page a person keeps about themself stays theirs)."""
    from kenning.builder.names import fold

    names = {fold(n) for n in owner.names}
    mine = set(owner.emails) | set(addresses)
    out = set()
    for e in index.entities:
        e.owner = e.type == PERSON and bool(
            set(e.emails) & mine or fold(e.name) in names
            or any(fold(a) in names for a in e.aliases))
        if e.owner:
            out.add(e.page)
    return out


# Unresolved mentions that are never retried: the owner, display names that are no name.
_FINAL_RULES = frozenset({"owner", "not-a-name", "unknown-kind", "none"})
_NOT_ENTITIES = ("not-a-person:", "not-an-organization:")


def _words(text: str) -> set[str]:
    from kenning.builder.names import fold

    return {w for w in fold(text).split() if len(w) >= 2}


def _retry_sources(rows: list[dict[str, Any]], before: EntityIndex,
                   after: EntityIndex) -> list[str]:
    """Sources with an unresolved mention that an entity this build created, renamed or gave a
    new name, alias or address may now name: a person mention whose name matches such a person
    (a first name alone only when that person is the one of that name), an organization
    mention sharing a word with such an organization. Decided from the log rows alone."""
    from kenning.builder.names import parse_person
    from kenning.builder.resolve import _person_match

    people: list[Any] = []
    org_words: set[str] = set()
    for e in after.entities:
        if e.type not in (PERSON, ORGANIZATION):
            continue
        old = before.by_page.get(e.page)
        if old is not None and (old.name, old.aliases, old.emails, old.domains) == \
                (e.name, e.aliases, e.emails, e.domains):
            continue
        if e.type == PERSON:
            people.append(e)
            continue
        for n in (e.name, *e.aliases):
            org_words |= _words(n)
        for domain in e.domains:
            org_words |= _words(domain.split(".", 1)[0])
    if not people and not org_words:
        return []
    by_last: dict[str, list[Any]] = {}
    by_first: dict[str, list[Any]] = {}
    for e in people:
        for p in e.persons:
            if p.last:
                by_last.setdefault(p.last, []).append(e)
            if p.first:
                by_first.setdefault(p.first, []).append(e)
    out: set[str] = set()
    for r in rows:
        kind, source = r.get("kind"), r.get("source")
        if r.get("page") or r.get("rule") in _FINAL_RULES or source in out:
            continue
        text = str(r.get("text") or "")
        if kind == ORGANIZATION:
            if _words(text) & org_words:
                out.add(str(source))
            continue
        if kind != PERSON or not people:
            continue
        name = _mention_name(text)
        q = parse_person(name) if "@" not in name else None
        if q is None:
            continue
        pool = by_last.get(q.last, []) if q.last else by_first.get(q.first, [])
        if not q.last and q.first:
            # A first name alone, with no organization next to it ("Sarah from TechFlow"):
            # only when it names one person at all.
            if name == text and len(after.by_first.get(q.first, [])) != 1:
                continue
            pool = [e for e in people if _person_match(q, e, strict=False)]
        if any(_person_match(q, e, strict=False) for e in pool):
            out.add(str(source))
    return sorted(out)


def _mention_name(text: str) -> str:
    """The name of a person mention's text ("Sarah from TechFlow", "Sarah Chen (Horizon)")."""
    name = text.split(" (", 1)[0]
    for sep in (" from ", " at "):
        name = name.split(sep, 1)[0]
    return name


def _save_caches(root: Path, loader: Any, rows: list[dict[str, Any]] | None) -> None:
    """The next build's caches (:mod:`kenning.builder.cache`): the index entries of the pages
    on disk, and the parsed names it will parse again — the person pages' names and aliases
    and the person mentions of the log. Both are functions of the vault as this
    build leaves it, so the same vault gives the same bytes."""
    from kenning.builder import cache
    from kenning.builder import names as nm

    entries = loader.save_cache()
    if rows is None:
        return
    wanted: set[str] = set()
    for entry in entries.values():
        e = entry[1]
        if e is not None and e[0] == PERSON:
            wanted.update(n for n in (e[1], *e[2]) if "@" not in n)
    for r in rows:
        if r.get("kind") != PERSON:
            continue
        text = str(r.get("text") or "")
        if "@" not in text:
            wanted.add(text)  # a display name, parsed again when its source is read again
        if not r.get("page") and r.get("rule") not in _FINAL_RULES:
            name = _mention_name(text)
            if "@" not in name:
                wanted.add(name)
    cache.save(root, "names", {n: nm.person_entry(nm.parse_person(n)) for n in sorted(wanted)})


def _save(root: Path, state: BuildState, rows: list[dict[str, Any]] | None,
          intend: Any = None) -> None:
    from kenning.builder import state as st

    if rows is not None:
        for r in rows:
            if r.get("page"):
                r["page"] = state.follow(r["page"])
        st.write_log(root, rows, intend=intend)
    state.save(root, intend=intend)
