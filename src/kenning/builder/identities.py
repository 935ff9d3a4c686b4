"""The address book: which addresses are one person, the name each goes by, and which addresses
name no one — decided once per build over every source it reads, before any page is written.

Read from every email, calendar and meeting mention that carries an address (this build's
sources) and from the person pages on disk (their titles and aliases name their addresses):

- **A name from any header names an address.** Every display name seen with an address
  (From, To, Cc, the X-To / X-cc lists the connector paired with their addresses, Notes forms
  like ``Steven J Kean/NA/Enron@Enron``, "Kean, Steven") is counted; the most frequent person
  name wins, shown in its fullest form ("Steven J Kean" over "Steven Kean"). A bare address
  is a title only when no name was ever seen.
- **One person, several addresses.** Within one organization's registrable domains (the public
  suffix list; one label under any suffix, ``enron.com`` and ``enron.net``; never a webmail
  provider): addresses with the same normalised name are one
  person unless their middle initials differ; a nickname ("Steve Kean" / "Steven J Kean")
  joins only when an address's local part spells the other's name (``skean`` = s + kean); an
  address with no name joins the one person at that domain whose name its local part spells
  (``steven.j.kean``, ``kean.steve``, ``jdasovic`` — a Notes-truncated surname, ``j..kean`` —
  a middle initial), or whose surname it is when exactly one person there has it. Two people
  can share a name: never across organizations on a name alone, never when two candidates fit.
- **The owner** is every configured address and name, plus any address carrying the owner's
  name (a nickname too) at a domain of the owner's organization (the configured domains and
  those with the same registrable label: ``enron.net`` for ``enron.com``).
- **No one**: malformed addresses (no known top-level domain, a mail system's id or escape)
  and role or list accounts (``info@``, ``noreply@``, ``*-request@``, ``energy-l@``, a
  display name that names a group) make no person page
  (:func:`~kenning.builder.names.address_problem`).

:meth:`AddressBook.apply` writes what it decided onto each mention (``best``, ``same``,
``junk``, owner mentions turned into ``via="owner"``); the resolver does the rest.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kenning.builder import names as nm
from kenning.builder.mentions import PERSON, SourceInfo
from kenning.sources.owner import Owner

_ADDRESS_VIAS = frozenset({"participant", "calendar", "attendee", "speaker", "owner"})
# An address never named that never wrote gets a page once it is in this many threads.
ANONYMOUS_THREADS = 3


@dataclass(frozen=True)
class Card:
    """What the address book decided about one address."""

    address: str
    name: str | None = None        # the person's best name (None: no name was ever seen)
    same: tuple[str, ...] = ()     # the person's other addresses
    problem: str | None = None     # malformed | role | list: no person page
    owner: bool = False
    anonymous: bool = False        # never named, never a sender: creates no page


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, a: str) -> str:
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _best(names: Counter[str]) -> tuple[nm.PersonName | None, int, int]:
    """The winning person name of a count of display names: (parsed, its count, the count of
    all person names), or (None, 0, total) when none is a person's full name."""
    by_key: dict[str, list[tuple[nm.PersonName, int]]] = defaultdict(list)
    total = 0
    for text, n in names.items():
        q = nm.parse_person(text)
        if q is None or nm.is_group_name(text) or not (
                q.full or (q.initial and len(q.middle) >= 2 and q.last)):
            continue  # a person's name: given name and surname ("D Todd Hall" too)
        by_key[q.key].append((q, n))
        total += n
    if not by_key:
        return None, 0, total
    key = max(by_key, key=lambda k: (sum(n for _, n in by_key[k]), len(k), k))
    forms = by_key[key]
    # The fullest form of the winning name (a middle initial), then the most frequent.
    q = max(forms, key=lambda f: (bool(f[0].middle), f[1], len(f[0].display),
                                  f[0].display))[0]
    return q, sum(n for _, n in forms), total


def _owner_labels(owner: Owner) -> set[str]:
    doms = set(owner.domains) | {e.rsplit("@", 1)[1] for e in owner.emails if "@" in e}
    return {nm.registrable_label(d) for d in doms if d}


def _owner_persons(owner: Owner) -> list[nm.PersonName]:
    out = []
    for name in owner.names:
        q = nm.parse_person(name)
        if q is not None and q.full:
            out.append(q)
    return out


def _same_name(a: nm.PersonName, b: nm.PersonName) -> str | None:
    """exact | nickname | None for two full names (middle initials must not differ)."""
    for x in (a, a.alt):
        for y in (b, b.alt):
            if x is None or y is None or x.last != y.last:
                continue
            if x.middle and y.middle and x.middle[:1] != y.middle[:1]:
                continue
            how = nm.first_names_match(x.first, y.first)
            if how == "exact":
                return "exact"
            # Across addresses, a nickname that keeps the initial (Steve / Steven, Sue /
            # Susan): the table also has rarer readings (Bill for Robert) that would join two
            # people.
            if how == "nickname" and x.first[:1] == y.first[:1]:
                return "nickname"
    return None


def is_owner_person(owner: Owner, q: nm.PersonName | None, *, nickname: bool) -> bool:
    """``q`` is one of the owner's names (a nickname of the given name too when ``nickname``)."""
    if q is None or not q.full:
        return False
    for o in _owner_persons(owner):
        how = _same_name(q, o)
        if how == "exact" or (how == "nickname" and nickname):
            return True
    return False


class AddressBook:
    """Cards for every address a build sees (see the module docstring)."""

    def __init__(self, cards: dict[str, Card]) -> None:
        self.cards = cards

    def get(self, address: str | None) -> Card | None:
        return self.cards.get(address) if address else None

    def apply(self, info: SourceInfo) -> None:
        """Write the book's decisions onto the person mentions of one source."""
        for m in info.mentions:
            if m.kind != PERSON or not m.email or m.via not in _ADDRESS_VIAS:
                continue
            card = self.cards.get(m.email)
            if card is None:
                continue
            if card.owner and m.via != "owner":
                m.via, m.name, m.title = "owner", None, None
                if "from" in m.roles:
                    info.owner_sent = True
                continue
            if m.via == "owner":
                continue
            m.junk = m.junk or card.problem
            m.best = card.name
            m.same = card.same
            m.anonymous = card.anonymous


def build_address_book(infos: Iterable[SourceInfo], people: Iterable[tuple[str, tuple[str, ...],
                                                                         tuple[str, ...]]],
                       owner: Owner) -> AddressBook:
    """Decide the cards from the mentions of ``infos`` and the person pages ``people``
    (title, aliases, emails each)."""
    names: dict[str, Counter[str]] = defaultdict(Counter)
    seen: set[str] = set()
    owner_seen: set[str] = set()
    senders: set[str] = set()
    listed: set[str] = set()  # mailing-list addresses (the sources say so)
    sources: dict[str, set[str]] = defaultdict(set)
    for info in infos:
        for m in info.mentions:
            if m.kind != PERSON or not m.email or m.via not in _ADDRESS_VIAS:
                continue
            seen.add(m.email)
            if m.junk == "list":
                listed.add(m.email)
            sources[m.email].add(info.path)
            if {"from", "organizer"} & set(m.roles) or m.via in ("attendee", "speaker"):
                senders.add(m.email)
            if m.via == "owner":
                owner_seen.add(m.email)
                continue
            if m.name and "@" not in m.name:
                names[m.email][m.name] += 1
        for text, address in info.paired:
            name = nm.clean_display_name(text, address)
            if name:
                names[address][name] += 1
    # Names written near an address: signature names of its sender, full names in the text
    # of the sources it is in (a name only names the address whose local part spells it).
    written: dict[str, list[str]] = defaultdict(list)
    for info in infos:
        prose = [m.name for m in info.mentions if m.kind == PERSON and m.via == "text"
                 and m.name]
        for m in info.mentions:
            if m.kind != PERSON or not m.email or m.via not in _ADDRESS_VIAS:
                continue
            if m.signed:
                written[m.email].extend(m.signed)
            if prose:
                written[m.email].extend(prose)
    for title, aliases, emails in people:
        for email in emails:
            seen.add(email)
            for n in (title, *aliases):
                if n and "@" not in n:
                    names[email][n] += 1

    problem: dict[str, str | None] = {}
    best: dict[str, nm.PersonName | None] = {}
    for a in seen:
        q, n, total = _best(names.get(a, Counter()))
        top = names[a].most_common(1)[0][0] if names.get(a) else None
        problem[a] = "list" if a in listed else nm.address_problem(
            a, top if q is None else q.display)
        # An address shown with two different people's names (a shared mailbox, an assistant)
        # names no one in particular: it keeps its best name but joins no one.
        consistent = q is not None and n * 3 >= total * 2
        best[a] = q if consistent else None

    # An address with no name in any header: a name written near it whose form its local part
    # spells ("Adam Wenner" for awenner@), when exactly one does; else its first.last.
    weak: dict[str, nm.PersonName] = {}
    for a in seen:
        if best.get(a) is not None or problem[a] is not None or "@" not in a:
            continue
        local = a.rsplit("@", 1)[0]
        fits: Counter[str] = Counter()
        shown: dict[str, nm.PersonName] = {}
        for text in written.get(a, ()):
            q = nm.parse_person(text)
            if q is not None and q.full and nm.local_part_fits(local, q) == "full":
                fits[q.key] += 1
                shown.setdefault(q.key, q)
        if len(fits) == 1:
            key = next(iter(fits))
            best[a] = shown[key]
            names[a][shown[key].display] += fits[key]
            continue
        guess = nm.name_from_address(a)
        q = nm.parse_person(guess) if guess else None
        if q is not None and q.full:
            weak[a] = q
    uf = _Union()
    by_domain: dict[str, list[str]] = defaultdict(list)
    for a in seen:
        if problem[a] is None and "@" in a:
            dom = nm.org_domain(a.rsplit("@", 1)[1])
            if not nm.is_freemail(dom):
                # One organization: its registrable domains under any suffix (enron.com and
                # enron.net are one Enron, as its organization page is).
                by_domain[nm.registrable_label(dom)].append(a)
    for addresses in by_domain.values():
        if len(addresses) < 2:
            continue
        _cluster(sorted(addresses), {a: best.get(a) or weak.get(a) for a in addresses}, uf)

    # Owner: configured addresses and names, and the owner's name at the owner's domains.
    labels = _owner_labels(owner)
    owner_roots: set[str] = set()
    for a in seen:
        if a in owner_seen or a in owner.emails:
            owner_roots.add(uf.find(a))
            continue
        q = best.get(a)
        if q is not None and is_owner_person(owner, q, nickname=False) and owner.names:
            owner_roots.add(uf.find(a))
            continue
        if "@" not in a or problem[a] is not None:
            continue
        if nm.registrable_label(a.rsplit("@", 1)[1]) not in labels:
            continue
        local = a.rsplit("@", 1)[0]
        if (q is not None and is_owner_person(owner, q, nickname=True)) or (
                q is None and any(nm.local_part_fits(local, o) == "full"
                                  for o in _owner_persons(owner))):
            owner_roots.add(uf.find(a))

    groups: dict[str, list[str]] = defaultdict(list)
    for a in seen:
        groups[uf.find(a)].append(a)
    cards: dict[str, Card] = {}
    for root, members in groups.items():
        members.sort()
        counted: Counter[str] = Counter()
        for a in members:
            counted.update(names.get(a, Counter()))
        q, _, _ = _best(counted)
        name = q.display if q is not None else None
        if name is None and len(members) > 1:
            # Only local parts name them (mike.roan, michael.roan): the fullest form.
            forms = [weak[a] for a in members if a in weak]
            if forms:
                name = max(forms, key=lambda f: (len(f.first), bool(f.middle), f.display)).display
        is_owner = root in owner_roots
        # Nobody ever named it, it never wrote, its local part spells no name (rbutts@) and
        # it was only copied on a thread or two: a page could say nothing but an address.
        anonymous = name is None and not any(a in senders or nm.name_from_address(a)
                                             for a in members) and len(
            set().union(*(sources.get(a, set()) for a in members))) < ANONYMOUS_THREADS
        for a in members:
            cards[a] = Card(a, name, tuple(x for x in members if x != a), problem[a], is_owner,
                            anonymous)
    return AddressBook(cards)


def _cluster(addresses: list[str], best: dict[str, nm.PersonName | None], uf: _Union) -> None:
    """Join the addresses of one organization's domain that are one person."""
    named = [a for a in addresses if best.get(a) is not None]
    by_last: dict[str, list[str]] = defaultdict(list)
    for a in named:
        q = best[a]
        assert q is not None
        for v in (q, q.alt):
            if v is not None and a not in by_last[v.last]:
                by_last[v.last].append(a)
    # Named addresses: the same name; a nickname only when a local part spells the other name.
    for group in by_last.values():
        for i, a in enumerate(group):
            qa = best[a]
            assert qa is not None
            for b in group[i + 1:]:
                qb = best[b]
                assert qb is not None
                how = _same_name(qa, qb)
                if how == "exact":
                    uf.union(a, b)
                elif how == "nickname" and (
                        nm.local_part_fits(a.rsplit("@", 1)[0], qb) == "full"
                        and nm.local_part_fits(b.rsplit("@", 1)[0], qa) == "full"):
                    # Each address spells the other's name (skean for Steven Kean,
                    # steven.kean for Steve Kean): a shared nickname alone is not enough.
                    uf.union(a, b)
    # Addresses with no name: the one person whose name the local part spells, by any of the
    # forms that person's addresses carry (e..haedicke@ spells "Mark E Haedicke", not the
    # "Mark Haedicke" another of his addresses shows).
    people: dict[str, list[nm.PersonName]] = defaultdict(list)
    for a in named:
        q = best[a]
        assert q is not None
        people[uf.find(a)].append(q)
    surnames: dict[str, set[str]] = defaultdict(set)
    for root, forms in people.items():
        for q in forms:
            surnames[q.last].add(root)
    for a in addresses:
        if best.get(a) is not None:
            continue
        local = a.rsplit("@", 1)[0]
        full, surname = set(), set()
        for root, forms in people.items():
            hows = {nm.local_part_fits(local, q) for q in forms}
            if "full" in hows:
                full.add(root)
            elif "surname" in hows:
                surname.add(root)
        if len(full) == 1:
            uf.union(a, next(iter(full)))
        elif not full and len(surname) == 1:
            root = next(iter(surname))
            if all(len(surnames[q.last]) == 1 for q in people[root]):
                uf.union(a, root)
