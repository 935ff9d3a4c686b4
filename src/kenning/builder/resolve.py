"""Entity resolution: the compact entity index and the resolver seam.

The seam is one function, :func:`resolve_batch` ``(mentions, index, context) -> list[Decision]``,
with plain data in and out, so another resolver (an LLM, see issue 5 item 4) can replace it:

- ``mentions``: ``list[Mention]`` (:mod:`kenning.builder.mentions`): ``source`` path, ``line``,
  ``text``, ``kind`` (person | organization | project | topic), ``via`` (participant, attendee,
  speaker, chat, calendar, signature, domain, text, tag, subject, link, owner), ``email``,
  ``name`` (cleaned), ``roles``, ``date``/``last_date``, ``org`` (organization named next to it),
  ``title`` (job title), ``phone``, ``domain``.
- ``index``: :class:`EntityIndex`, rebuilt from the pages on disk before every batch: one
  :class:`Entity` per page in people/, organizations/, projects/, topics/ (``page`` path,
  ``type``, ``name`` = title, ``aliases``, ``emails``, ``domains``, ``organization``, ``role``,
  ``last_seen``) plus lookups by email, domain and folded name.
- ``context``: :class:`ResolveContext`: ``may_create[i]`` (the strictness policy's answer for
  mention ``i``; a resolver must not create where it is False), ``blocked`` (identity keys of
  pages deleted by hand → the last date of evidence they had; older evidence must not bring them
  back), and ``sources`` (path → :class:`~kenning.builder.mentions.SourceInfo`).
- output: one :class:`Decision` per mention, in order: ``action`` link | create | unresolved |
  skip; ``page`` (link: an existing page path); ``new_key`` (create: decisions that name the same
  new entity share it) and ``name`` (its title); ``confidence`` 0–1; ``rule`` (why: the
  deterministic rule or ``llm``); ``candidates`` (pages it could have been, when unresolved).

Wrong merges are worse than missed merges: a name without an address links only when exactly one
candidate fits; otherwise the mention stays unresolved and its candidates are recorded
("possibly [[X]]").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kenning.builder import names as nm
from kenning.builder.mentions import ORGANIZATION, PERSON, PROJECT, TOPIC, Mention, SourceInfo

INDEX_TYPES = (PERSON, ORGANIZATION, PROJECT, TOPIC)


@dataclass
class Entity:
    """One entry of the compact entity index."""

    page: str                 # vault path; "new:<n>" for an entity planned in this batch
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    organization: str | None = None
    role: str | None = None
    last_seen: str | None = None
    persons: tuple[nm.PersonName, ...] = field(default=(), repr=False)
    orgs: tuple[str, ...] = ()  # people: every organization of a works_at fact (pages/names)
    owner: bool = False  # the vault owner's own page: never linked, never added to

    def as_dict(self) -> dict[str, Any]:
        return {"page": self.page, "type": self.type, "name": self.name,
                "aliases": list(self.aliases), "emails": list(self.emails),
                "domains": list(self.domains), "organization": self.organization,
                "role": self.role, "last_seen": self.last_seen}


class EntityIndex:
    """Entities with lookups by email, domain, folded name, surname, given name and org key."""

    def __init__(self, entities: list[Entity] | None = None) -> None:
        self.entities: list[Entity] = []
        self.by_page: dict[str, Entity] = {}
        self.by_email: dict[str, list[Entity]] = defaultdict(list)
        self.by_domain: dict[str, list[Entity]] = defaultdict(list)
        self.by_name: dict[str, list[Entity]] = defaultdict(list)
        self.by_last: dict[str, list[Entity]] = defaultdict(list)
        self.by_first: dict[str, list[Entity]] = defaultdict(list)
        self.by_org_key: dict[str, list[Entity]] = defaultdict(list)
        self.by_acronym: dict[str, list[Entity]] = defaultdict(list)
        for e in entities or []:
            self.add(e)

    def add(self, e: Entity) -> None:
        self.entities.append(e)
        self.by_page[e.page] = e
        for email in e.emails:
            self.by_email[email.lower()].append(e)
        for d in e.domains:
            self.by_domain[nm.org_domain(d)].append(e)
        names = [e.name, *e.aliases]
        for n in names:
            key = nm.fold(n)
            if key and e not in self.by_name[key]:
                self.by_name[key].append(e)
        if e.type == PERSON:
            persons = []
            for n in names:
                base = nm.parse_person(n) if "@" not in n else None
                for p in (base, base.alt if base is not None else None):
                    if p is None:
                        continue
                    persons.append(p)
                    if p.last and e not in self.by_last[p.last]:
                        self.by_last[p.last].append(e)
                    if p.first and not p.initial and e not in self.by_first[p.first]:
                        self.by_first[p.first].append(e)
            e.persons = tuple(persons)
        elif e.type == ORGANIZATION:
            for n in names:
                key = nm.org_key(n)
                if key and e not in self.by_org_key[key]:
                    self.by_org_key[key].append(e)
                acro = nm.acronym(n)
                if acro and e not in self.by_acronym[acro]:
                    self.by_acronym[acro].append(e)

    def get(self, page: str) -> Entity | None:
        return self.by_page.get(page)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [e.as_dict() for e in self.entities]


@dataclass
class ResolveContext:
    """What a resolver may consult besides the mentions and the index."""

    may_create: list[bool]
    blocked: dict[str, str] = field(default_factory=dict)   # identity key → last evidence date
    sources: dict[str, SourceInfo] = field(default_factory=dict)


@dataclass
class Decision:
    """The resolver's answer for one mention."""

    action: str                    # link | create | unresolved | skip
    page: str | None = None        # link: existing page path
    new_key: str | None = None     # create: shared by every decision naming that new entity
    name: str | None = None        # create: the title of the new page
    confidence: float = 0.0
    rule: str = ""
    candidates: tuple[str, ...] = ()


def identity_keys(kind: str, name: str | None, email: str | None = None,
                  domain: str | None = None) -> list[str]:
    """Keys that identify an entity for the deleted-pages guard."""
    keys = []
    if email:
        keys.append("email:" + email.lower())
    if domain:
        keys.append("domain:" + nm.org_domain(domain))
    if name:
        if kind == PERSON:
            p = nm.parse_person(name) if "@" not in name else None
            if p is not None and p.full:
                keys.append("person:" + p.key)
        elif kind == ORGANIZATION:
            keys.append("org:" + nm.org_key(name))
        else:
            keys.append(f"{kind}:" + nm.fold(name))
    return keys


def org_fits(e: Entity, org: str, lookup: Any) -> bool:
    """Whether the organization named next to a person ("Sarah from Horizon", "Sarah Chen
    (Horizon Ventures)") is one the person entity ``e`` works or worked at: its organization
    and works_at pages (their names, aliases and mail domains), or the domains of its own
    addresses. Names compare by organization key, acronym or first word ("Horizon" for
    Horizon Ventures); a domain by :func:`~kenning.builder.names.org_matches_domain`."""
    key = nm.org_key(org)
    if not key:
        return False
    names: list[str] = []
    domains: set[str] = set()
    for value in dict.fromkeys(x for x in (e.organization, *e.orgs) if x):
        target = lookup(value)
        if target is None:
            names.append(value.rsplit("/", 1)[-1].removesuffix(".md"))
        else:
            names.extend((target.name, *target.aliases))
            domains.update(target.domains)
    domains.update(x.rsplit("@", 1)[-1] for x in e.emails if "@" in x)
    first = key.split()[:1]
    squeezed = key.replace(" ", "")
    for n in names:
        other = nm.org_key(n)
        if other == key or other.split()[:1] == first or nm.acronym(n) == squeezed:
            return True
    return any(nm.org_matches_domain(org, d) for d in domains if not nm.is_freemail(d))


def _middle_ok(a: nm.PersonName, b: nm.PersonName) -> bool:
    return not a.middle or not b.middle or a.middle[0] == b.middle[0]


def _person_match(q: nm.PersonName, e: Entity, *, strict: bool) -> str | None:
    """How a parsed name matches a person entity: exact | nickname | initials | None (either
    spelling of a German umlaut counts: "Juergen Weiss" is "Jürgen Weiß")."""
    if q.alt is None:
        return _match_one(q, e, strict=strict)
    order = {"exact": 3, "nickname": 2, "initials": 1}
    found = [h for h in (_match_one(q, e, strict=strict), _match_one(q.alt, e, strict=strict))
             if h]
    return max(found, key=lambda h: order.get(h, 0)) if found else None


def _match_one(q: nm.PersonName, e: Entity, *, strict: bool) -> str | None:
    best: str | None = None
    order = {"exact": 3, "nickname": 2, "initials": 1}
    for p in e.persons:
        if q.last and p.last:
            if q.last != p.last or not _middle_ok(q, p):
                continue
            if not q.first:
                how = "surname"
            elif not p.first:
                continue
            else:
                how = nm.first_names_match(q.first, p.first) or ""
                if how == "initials" and not q.initial:
                    how = ""  # "Sarah Chen" is not "S. Chen"'s only reading
                if strict and how != "exact":
                    continue
            if not how:
                continue
        elif q.first and not q.last and p.first and not p.initial:
            how = nm.first_names_match(q.first, p.first) or ""
            if how not in ("exact", "nickname"):
                continue
            how = "first"
        else:
            continue
        if best is None or order.get(how, 0) > order.get(best, 0):
            best = how
    return best


class _Batch:
    def __init__(self, mentions: list[Mention], index: EntityIndex,
                 context: ResolveContext) -> None:
        self.mentions, self.index, self.ctx = mentions, index, context
        self.pending = EntityIndex()
        self.counter = 0
        # Pages each source's mentions resolved to so far (thread participants, co-mentions).
        self.source_pages: dict[str, set[str]] = defaultdict(set)
        # Addresses decided in this batch (an address linked by name is that page from now on).
        self.email_target: dict[str, Entity] = {}

    # -- helpers ---------------------------------------------------------------------------

    def both(self, attr: str, key: str) -> list[Entity]:
        return [*getattr(self.index, attr).get(key, []), *getattr(self.pending, attr).get(key, [])]

    def new(self, kind: str, name: str, m: Mention) -> Entity:
        self.counter += 1
        e = Entity(f"new:{self.counter}", kind, name,
                   emails=(m.email,) if m.email else (),
                   domains=(m.domain,) if m.domain and kind == ORGANIZATION and (
                       m.via == "domain" or nm.org_name_fits_domain(
                           name, m.domain, own=m.via == "signature" and not m.unit)) else ())
        self.pending.add(e)
        return e

    def blocked(self, kind: str, name: str | None, m: Mention) -> bool:
        day = m.last_date or m.date or ""
        for key in identity_keys(kind, name, m.email if kind == PERSON else None,
                                 m.domain if kind == ORGANIZATION else None):
            until = self.ctx.blocked.get(key)
            if until is not None and day <= until:
                return True
        return False

    def link(self, e: Entity, confidence: float, rule: str) -> Decision:
        if e.owner:
            return Decision("skip", confidence=1.0, rule="owner")
        if e.page.startswith("new:"):
            return Decision("create", new_key=e.page, name=e.name, confidence=confidence,
                            rule=rule)
        return Decision("link", page=e.page, confidence=confidence, rule=rule)

    def create(self, i: int, kind: str, name: str, rule: str,
               candidates: tuple[str, ...] = ()) -> Decision:
        m = self.mentions[i]
        if not self.ctx.may_create[i]:
            return Decision("unresolved", confidence=0.0, rule="not-created:nameless"
                            if m.anonymous else "not-created:strictness", candidates=candidates)
        if self.blocked(kind, name, m):
            return Decision("unresolved", confidence=0.0, rule="not-created:deleted-by-hand",
                            candidates=candidates)
        e = self.new(kind, name, m)
        return Decision("create", new_key=e.page, name=name, confidence=0.9, rule=rule)

    # -- people ----------------------------------------------------------------------------

    def person(self, i: int, m: Mention) -> Decision:
        if m.via == "owner":
            return Decision("skip", confidence=1.0, rule="owner")
        if m.junk:
            return Decision("unresolved", confidence=0.0, rule=f"not-a-person:{m.junk}")
        if m.email and m.email in self.email_target:
            return self.link(self.email_target[m.email], 1.0, "email-address")
        if m.email:
            hits = self.both("by_email", m.email)
            if len(hits) == 1:
                return self.link(hits[0], 1.0, "email-address")
            if len(hits) > 1:
                return Decision("unresolved", rule="email-on-several-pages",
                                candidates=tuple(sorted(e.page for e in hits)))
            # Another address of the same person (the address book's decision) has a page.
            same: dict[str, Entity] = {}
            for other in m.same:
                target = self.email_target.get(other)
                for e in [target] if target is not None else self.both("by_email", other):
                    if e.type == PERSON:
                        same.setdefault(e.page, e)
            if len(same) == 1:
                return self.link(next(iter(same.values())), 0.95, "same-person")
        q = nm.parse_person(m.best or m.name) if (m.best or m.name) else None
        if m.email:
            if q is not None and q.full:
                domain = m.email.rsplit("@", 1)[-1]
                fits = [e for e in self._named(q, strict=True)
                        if e.type == PERSON and self._domain_ok(e, domain)]
                if len(fits) == 1:
                    return self.link(fits[0], 0.9, "exact-name")
                # A page known by name only (a meeting attendee, a chat participant) claims
                # its address under a nickname too ("Joe Osei" <joseph@…> → Joseph Osei),
                # when it is the only page of that name and its organization fits the domain.
                if not fits:
                    named = [e for e in self._named(q, strict=False) if e.type == PERSON]
                    if len(named) == 1 and not named[0].emails and (
                            not named[0].organization or nm.is_freemail(domain)
                            or self._org_fits(named[0], nm.name_from_domain(domain))):
                        return self.link(named[0], 0.85, "nickname")
            title = m.best or (q.display if q is not None and (q.full or not q.honorific)
                               else None) or nm.name_from_address(m.email) or m.email
            return self.create(i, PERSON, title, "new-email-address")
        if q is None:
            return Decision("unresolved", rule="not-a-name")
        return self.person_by_name(i, m, q)

    def _named(self, q: nm.PersonName, *, strict: bool) -> list[Entity]:
        pool = self.both("by_last", q.last) if q.last else self.both("by_first", q.first)
        if q.alt is not None and q.alt.last and q.alt.last != q.last:
            pool = [*pool, *self.both("by_last", q.alt.last)]
        if not q.last:
            nn_pool: list[Entity] = []
            for first, ents in list(self.index.by_first.items()) + list(
                    self.pending.by_first.items()):
                if first[:1] == q.first[:1] and first != q.first and \
                        nm.first_names_match(q.first, first) == "nickname":
                    nn_pool.extend(ents)
            pool = [*pool, *nn_pool]
        seen: dict[str, Entity] = {}
        for e in pool:
            if _person_match(q, e, strict=strict):
                seen.setdefault(e.page, e)
        return list(seen.values())

    @staticmethod
    def _domain_ok(e: Entity, domain: str) -> bool:
        if not e.emails or nm.is_freemail(domain):
            return True
        doms = {nm.org_domain(x.rsplit("@", 1)[-1]) for x in e.emails}
        return nm.org_domain(domain) in doms or all(nm.is_freemail(d) for d in doms)

    def _org_fits(self, e: Entity, org: str) -> bool:
        return org_fits(e, org, lambda p: self.index.get(p) or self.pending.get(p))

    def _org_context(self, m: Mention, pool: list[Entity]) -> list[Entity]:
        """The candidates working at an organization this source names: an organization page
        resolved in it, or a capitalized word of its title."""
        orgs = [p for p in self.source_pages.get(m.source, ()) if (
            (self.index.get(p) or self.pending.get(p)) or Entity(p, "", "")).type
            == ORGANIZATION]
        info = self.ctx.sources.get(m.source)
        words = [w for w in (info.title.split() if info is not None else [])
                 if w[:1].isupper() and len(w) >= 3 and w.isalpha()]
        out = []
        for e in pool:
            mine = {x for x in (e.organization, *e.orgs) if x}
            if mine & set(orgs) or any(org_fits(e, w, self._lookup) for w in words):
                out.append(e)
        return out

    def _lookup(self, page: str) -> Entity | None:
        return self.index.get(page) or self.pending.get(page)

    def person_by_name(self, i: int, m: Mention, q: nm.PersonName) -> Decision:
        matches = {e.page: (e, _person_match(q, e, strict=False)) for e in self._named(
            q, strict=False)}
        cands = tuple(sorted(p for p in matches if not p.startswith("new:")))
        context = self.source_pages.get(m.source, set())
        creating = m.via in ("participant", "attendee", "speaker", "chat", "calendar")
        if q.full:
            exact = [e for e, how in matches.values() if how == "exact"]
            pool = exact or [e for e, _ in matches.values()]
            if m.org:
                pool = [e for e in pool if self._org_fits(e, m.org) or not e.organization]
            if len(pool) == 1:
                how = matches[pool[0].page][1]
                rule = {"exact": "exact-name", "nickname": "nickname"}.get(how or "", "name")
                return self.link(pool[0], 0.95 if how == "exact" else 0.85, rule)
            in_ctx = [e for e in pool if e.page in context]
            if len(in_ctx) == 1:
                return self.link(in_ctx[0], 0.8, "name-context")
            if not pool and creating:
                return self.create(i, PERSON, q.display, "new-name", cands)
            return Decision("unresolved", rule="ambiguous-name" if pool else "no-candidate",
                            candidates=cands)
        # Partial names: initials, surname with a title, a first name alone.
        pool = [e for e, _ in matches.values()]
        rule = "initials" if q.initial else "surname-context" if not q.first else \
            "first-name-context"
        if m.org:
            fitting = [e for e in pool if self._org_fits(e, m.org)]
            if len(fitting) == 1:
                return self.link(fitting[0], 0.75, rule.replace("context", "organization")
                                 if "context" in rule else rule)
            pool = fitting
        elif q.initial and len(pool) == 1:
            return self.link(pool[0], 0.8, "initials")
        else:
            everyone = pool
            pool = [e for e in pool if e.page in context] if (context or not creating) else pool
            if len(pool) == 1 and (context and pool[0].page in context):
                return self.link(pool[0], 0.7, rule)
            if len(everyone) == 1:
                # No candidate in the conversation, and only one person of that name at all:
                # when they work at an organization the source names (resolved in it, or a
                # word of its title: "Fatima" in "Nordlicht sync 3"), it is them.
                fitting = self._org_context(m, everyone)
                if len(fitting) == 1:
                    return self.link(fitting[0], 0.7, rule.replace("context", "organization")
                                     if "context" in rule else rule)
        if not matches and creating and q.first and not q.honorific:
            return self.create(i, PERSON, q.display, "new-name")
        return Decision("unresolved", rule="ambiguous-" + rule.split("-context")[0]
                        if matches else "no-candidate", candidates=cands)

    # -- organizations, projects, topics ---------------------------------------------------

    def organization(self, i: int, m: Mention) -> Decision:
        if m.via == "domain" and m.domain:
            hits = self.both("by_domain", m.domain)
            if len(hits) == 1:
                return self.link(hits[0], 1.0, "org-domain")
            if len(hits) > 1:
                return Decision("unresolved", rule="domain-on-several-pages",
                                candidates=tuple(sorted(e.page for e in hits)))
            named = [e for e in self.index.entities + self.pending.entities
                     if e.type == ORGANIZATION and not e.domains
                     and any(nm.org_name_fits_domain(n, m.domain) for n in (e.name, *e.aliases))]
            if len(named) == 1:
                return self.link(named[0], 0.8, "org-domain-name")
            title = m.name or nm.name_from_domain(m.domain)
            # One organization per name: enron.net is the Enron of enron.com.
            same = [e for e in self.both("by_org_key", nm.org_key(title))
                    if e.type == ORGANIZATION]
            if len(same) == 1:
                return self.link(same[0], 0.85, "org-domain-same-name")
            if m.junk:
                return Decision("unresolved", rule=f"not-an-organization:{m.junk}")
            return self.create(i, ORGANIZATION, title, "org-domain")
        name = m.name or m.text
        key = nm.org_key(name)
        own = m.via == "signature" and not m.unit
        if m.domain and nm.org_name_fits_domain(name, m.domain, own=own):
            hits = self.both("by_domain", m.domain)
            if len(hits) == 1:
                return self.link(hits[0], 0.95, "org-domain")
        hits = self.both("by_org_key", key)
        if len(hits) == 1:
            return self.link(hits[0], 0.95, "org-name")
        if len(hits) > 1:
            return Decision("unresolved", rule="ambiguous-org-name",
                            candidates=tuple(sorted(e.page for e in hits)))
        compact = key.replace(" ", "")
        if name.isupper() and 2 <= len(compact) <= 6:
            hits = self.both("by_acronym", compact)
            if len(hits) == 1:
                return self.link(hits[0], 0.8, "acronym")
        acro = nm.acronym(name)
        if acro:
            hits = [e for e in self.both("by_org_key", acro) if e.name.isupper()]
            if len(hits) == 1:
                return self.link(hits[0], 0.8, "acronym")
        return self.create(i, ORGANIZATION, nm.strip_legal(name), "legal-suffix"
                           if m.via == "text" else "signature-org")

    def simple(self, i: int, m: Mention) -> Decision:
        key = nm.fold(m.name or m.text)
        hits = [e for e in self.both("by_name", key) if e.type == m.kind]
        if len(hits) == 1:
            return self.link(hits[0], 0.95, "exact-name")
        if len(hits) > 1:
            return Decision("unresolved", rule="ambiguous-name",
                            candidates=tuple(sorted(e.page for e in hits)))
        return self.create(i, m.kind, m.name or m.text, "tag" if m.via == "tag" else
                           "explicit-project")

    def explicit_link(self, m: Mention) -> Decision:
        target = m.name or m.text
        hits = self.both("by_name", nm.fold(target))
        stem = target.rsplit("/", 1)[-1].removesuffix(".md")
        hits = hits or [e for e in self.index.entities
                        if e.page.rsplit("/", 1)[-1][:-3] == stem or e.page == target
                        or e.page == target + ".md"]
        if len(hits) == 1:
            m.kind = hits[0].type
            return self.link(hits[0], 1.0, "explicit-link")
        return Decision("unresolved", rule="explicit-link-" + ("ambiguous" if hits else
                                                               "dangling"),
                        candidates=tuple(sorted(e.page for e in hits)))

    def run(self) -> list[Decision]:
        out: list[Decision | None] = [None] * len(self.mentions)
        # Addresses first, so names and first names see the thread's participants.
        order = sorted(range(len(self.mentions)), key=lambda i: (
            self.mentions[i].source, 0 if self.mentions[i].email else
            1 if self.mentions[i].kind == ORGANIZATION else 2, i))
        for i in order:
            m = self.mentions[i]
            if m.via == "link":
                d = self.explicit_link(m)
            elif m.kind == PERSON:
                d = self.person(i, m)
            elif m.kind == ORGANIZATION:
                d = self.organization(i, m)
            elif m.kind in (PROJECT, TOPIC):
                d = self.simple(i, m)
            else:
                d = Decision("unresolved", rule="unknown-kind")
            target = d.page or d.new_key
            if target and d.action in ("link", "create"):
                self.source_pages[m.source].add(target)
                entity = self.index.get(target) or self.pending.get(target)
                if m.email and m.kind == PERSON and entity is not None:
                    self.email_target.setdefault(m.email, entity)
            out[i] = d
        return [d if d is not None else Decision("unresolved", rule="none") for d in out]


def resolve_batch(mentions: list[Mention], index: EntityIndex,
                  context: ResolveContext) -> list[Decision]:
    """Decide, for every mention of a batch, which page it is (the deterministic resolver)."""
    return _Batch(mentions, index, context).run()
