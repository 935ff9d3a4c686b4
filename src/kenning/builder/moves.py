"""Job changes: one person, two addresses at two organizations, one page — and the old
``works_at`` fact superseded, not left active next to the new one.

**Merging on the sender's own word.** A new address gets a page of its own (an address
identifies a person; a name shared with a page whose addresses are all at another organization
is not enough: two people can share a name). When the person writing from that address says in
their own message that they moved ("I have moved from Globex to Northwind, please use this
address from now on", "my new address", "I have joined …" — :data:`kenning.builder.mentions._MOVE`)
and exactly one other person page carries the same name (same surname, the same given name or a
nickname of it, no conflicting middle initial), the new page is merged into that one. When the
message names the old organization, the other page must have worked there (its organization,
``works_at`` facts or mail domains); otherwise nothing is merged. Two pages with that name, or
none: nothing is merged (wrong merges are worse than missed ones).

**Superseding.** When a person page holds ``works_at`` facts for two organizations, each one
followed by a later fact (by ``from`` date) for an unrelated organization (not one sharing its
first word: ``Enron`` and ``Enron Energy Services`` may be a company and its unit) is
rewritten ``[status:: superseded]`` with ``[to:: the day before the successor's from]``,
``[by:: [[page#^id]]]`` (the successor gets a block id ``^works-<org>``) and
``[expired:: the successor's from]``: the date of the evidence that retired it, so a rebuild
writes the same bytes. Facts without a ``from`` date, and facts not active, are left alone.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from kenning.builder import names as nm
from kenning.builder.mentions import PERSON, Mention
from kenning.builder.resolve import Entity, EntityIndex, _person_match, org_fits
from kenning.builder.state import BuildState
from kenning.builder.workspace import Workspace
from kenning.vault.layout import slug
from kenning.vault.page import Fact, parse_page, replace_fact


def namesake(index: EntityIndex, page: str, name: str) -> Entity | None:
    """The one person page other than ``page`` that carries the full name ``name``."""
    q = nm.parse_person(name) if "@" not in name else None
    if q is None or not q.full:
        return None
    found: dict[str, Entity] = {}
    for e in index.by_last.get(q.last, []):
        if e.type != PERSON or e.page == page:
            continue
        if _person_match(q, e, strict=False) in ("exact", "nickname"):
            found[e.page] = e
    return next(iter(found.values())) if len(found) == 1 else None


def merge_moves(ws: Workspace, state: BuildState, index: EntityIndex,
                moved: list[tuple[Mention, str]]) -> list[tuple[str, str]]:
    """Merge each page a mover's new address is on into their earlier page (see the module
    docstring); returns (merged page, kept page) pairs."""
    from kenning.builder.rename import merge_pages

    done: list[tuple[str, str]] = []
    gone: set[str] = set()
    for m, page in moved:
        page = state.follow(page) or page
        new = index.get(page)
        if new is None or page in gone or new.type != PERSON or not ws.exists(page):
            continue
        old = None
        for name in dict.fromkeys(n for n in (m.name, new.name, *new.aliases) if n):
            old = namesake(index, page, name)
            if old is not None:
                break
        if old is None or old.page in gone or not ws.exists(old.page):
            continue
        if m.email and m.email in old.emails:
            continue
        if m.moved and not org_fits(old, m.moved, index.get):
            continue  # they said they came from somewhere this namesake never worked
        _take_current_job(ws, state, old.page, page)
        merge_pages(ws, state, old.page, page)
        text = ws.read(old.page)
        if text is not None:
            ws.write(old.page, supersede_works_at(text, old.page))
        gone.add(page)
        done.append((page, old.page))
    return done


def _take_current_job(ws: Workspace, state: BuildState, keep: str, other: str) -> None:
    """Before merging ``other`` (the new address's page) into ``keep``: ``keep`` takes its
    organization and role, where ``keep`` still holds what the build wrote (a person's own
    value stays, and the merge then records the other one under "Merged from")."""
    from kenning.vault import frontmatter as fmod
    from kenning.vault.page import set_frontmatter

    a, b = ws.read(keep), ws.read(other)
    if a is None or b is None:
        return
    fa, fb = fmod.read(a), fmod.read(b)
    if fa.error or fb.error:
        return
    rec = state.pages.setdefault(keep, {})
    updates: dict[str, Any] = {}
    for key in ("organization", "role"):
        value = fb.data.get(key)
        mine = fa.data.get(key)
        if isinstance(value, str) and value and value != mine and \
                mine in (None, "", rec.get(key)):
            updates[key] = value
            rec[key] = value
    if updates:
        ws.write(keep, set_frontmatter(a, updates))


def related(a: str, b: str) -> bool:
    """Two organization pages (file stems) that may be one organization and a unit of it, or
    one organization twice: the same page, or the same first word (``enron`` and
    ``enron-energy-services``). A job change is only read between unrelated ones: working in a
    unit does not end working at the company."""
    # File stems are titles ("Enron Energy Services") or an older Kenning's slugs
    # ("enron-energy-services"): compare them as slugs.
    a, b = (slug(x.rsplit("/", 1)[-1]) for x in (a, b))
    return a == b or a.split("-", 1)[0] == b.split("-", 1)[0]


def _day_before(day: str) -> str | None:
    try:
        return (dt.date.fromisoformat(day[:10]) - dt.timedelta(days=1)).isoformat()
    except ValueError:
        return None


def _block_id(target: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "-", target.rsplit("/", 1)[-1]).strip("-").lower()
    return f"works-{name or 'org'}"


def supersede_works_at(text: str, path: str) -> str:
    """Supersede every active, dated ``works_at`` fact followed by a later one for another
    organization (see the module docstring)."""
    if text.count("works_at::") < 2:
        return text
    quick = _works_lines(text)
    if len({t.lower() for t, _, _ in quick}) < 2 or not any(
            st == "active" and any(f2 > f and not related(t2, t) for t2, f2, _ in quick)
            for t, f, st in quick):
        return text  # nothing to supersede: no need to parse the page
    page = parse_page(text, path)
    facts = [f for f in page.facts if f.relation == "works_at" and f.target and _since(f)]
    if len({f.target for f in facts}) < 2:
        return text
    ordered = sorted(facts, key=lambda f: (_since(f), f.line))
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    for i, fact in enumerate(ordered):
        if fact.status != "active":
            continue
        nxt = next((g for g in ordered[i + 1:] if not related(g.target or "", fact.target or "")
                    and _since(g) > _since(fact)), None)
        if nxt is None:
            continue
        text, block = _ensure_block_id(text, path, nxt)
        current = next(f for f in parse_page(text, path).facts if f.line == fact.line)
        later = _since(nxt)
        updated = Fact(current.line, current.relation, current.target, current.text,
                       current.valid_from, current.valid_to or _day_before(later),
                       "superseded", f"[[{stem}#^{block}]]", current.epistemic,
                       current.confidence, current.source, current.block_id, current.recorded,
                       current.expired or later[:10], current.seen)
        text = replace_fact(text, current.line, updated)
    return text


_WORKS_LINE = re.compile(r"^[ \t]*[-*+][ \t]+works_at::[ \t]*\[\[([^\]|#]+)")
_FROM = re.compile(r"\[(?:from|seen)::[ \t]*([0-9-]+)[ \t]*\]")


def _since(fact: Fact) -> str:
    """Since when a job fact holds as far as the evidence goes: its start date, else the date
    it was first seen."""
    return fact.valid_from or fact.seen or ""
_STATUS = re.compile(r"\[status::[ \t]*(\w+)[ \t]*\]")


def _works_lines(text: str) -> list[tuple[str, str, str]]:
    """(target, from, status) of every dated ``works_at`` line: a quick scan, no parse (a fact
    inside a code block would count too; the parse in :func:`supersede_works_at` decides)."""
    out = []
    for line in text.split("\n"):
        m = _WORKS_LINE.match(line)
        if m:
            f = _FROM.search(line)
            st = _STATUS.search(line)
            if f:
                out.append((m.group(1).strip(), f.group(1), st.group(1).lower() if st
                            else "active"))
    return out


def current_works_at(text: str, path: str) -> tuple[str, str] | None:
    """(target, from) of the latest active, dated ``works_at`` fact (None without one)."""
    if "works_at::" not in text:
        return None
    active = [(f, t) for t, f, st in _works_lines(text) if st == "active"]
    if not active:
        return None
    day, target = max(active)
    return target, day


def _ensure_block_id(text: str, path: str, fact: Fact) -> tuple[str, str]:
    current = next(f for f in parse_page(text, path).facts if f.line == fact.line)
    if current.block_id:
        return text, current.block_id
    block = _block_id(current.target or "")
    taken = {f.block_id for f in parse_page(text, path).facts if f.block_id}
    n = 1
    base = block
    while block in taken:
        n += 1
        block = f"{base}-{n}"
    updated = Fact(current.line, current.relation, current.target, current.text,
                   current.valid_from, current.valid_to, current.status, current.successor,
                   current.epistemic, current.confidence, current.source, block,
                   current.recorded, current.expired, current.seen)
    return replace_fact(text, current.line, updated), block


def moved_mentions(mentions: list[Mention], rows: list[dict[str, Any]]) -> \
        list[tuple[Mention, str]]:
    """(mention, page) for every sender who said they moved and was resolved to a page."""
    return [(m, r["page"]) for m, r in zip(mentions, rows, strict=True)
            if m.moved is not None and m.email and r.get("page") and m.kind == PERSON]
