#!/usr/bin/env python3
"""Generate a hard, labelled entity-resolution corpus for ``kenning eval resolution``.

    python bench/gen_resolution.py --out DIR [--seed 7] [--people 60] [--threads N]
                                   [--meetings N] [--chats N] [--newsletters N] [--force]

Writes the corpus format of :mod:`kenning.evaluate.resolution`::

    DIR/config.yaml                 the owner (Alex Morgan, alex@larkspur.test, larkspur.test)
    DIR/gold.jsonl                  one line per (source, mention form): source, match, identity,
                                    kind
    DIR/sources/email/mail.mbox     threads with replies (quoted), signatures, newsletters
    DIR/sources/meetings/*.vtt|txt  transcripts (WebVTT voice tags, "Name: text" lines)
    DIR/sources/chats/*.json        chat sessions in the generic JSON form
    DIR/manifest.json               counts and the hard cases planted

What makes it hard (all deterministic for a seed):

- name variants of one person: "Robert Smith", "Bob Smith", "R. Smith", "Smith, Robert",
  "Robert J. Smith", "ROBERT SMITH", the bare address as display name, "Bob" in a greeting;
- nicknames (Bob ↔ Robert, Liz ↔ Elizabeth …, pairs the ``nicknames`` package knows);
- initials and honorifics ("R. Smith", "Dr. Kim" — with two Kims in the corpus);
- diacritics written with and without them ("José García" / "Jose Garcia");
- one first name shared by different people ("Sarah Chen" at Horizon Ventures, "Sarah Park" at
  TechFlow, both "Sarah" in their own threads) and one shared last name;
- people changing organizations: a new address at the new domain from a date on, same name,
  with a line saying so;
- organization aliases ("Horizon Ventures" / "Horizon VC" / "Horizon" / "Horizon Ventures LLC")
  and a look-alike ("Horizon Health", never called "Horizon" alone);
- mailing-list noise: bulk mail with List-Unsubscribe / List-Id / Precedence: bulk, sent "via" a
  list address with a person's name in the display name, and naming outsiders who share first
  names with people in the corpus;
- display names that are addresses (the sender's own, sometimes a colleague's);
- signature lines "Role | Organization", "Role / Organization", "Role – Organization" (and
  "Role | Organization | phone" on one line) beside "Role, Organization";
- an organization whose mail domain is not its name ("Kitebird Corp" at ``kitebird.io``): the
  page made from the domain and the page of the written name must be one;
- German names written with umlauts and ß and transliterated ("Jürgen Weiß" / "Juergen Weiss");
- a Japanese name written family name first (山田 花子, also without the space), whose page
  must keep that order.

Gold is per source file: inside one email thread, transcript or chat a mention form names one
identity (forms that would be ambiguous inside one source are not generated there). The owner is
never labelled (the vault owner is "I", not an entity). Stdlib only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import shutil
import sys
import unicodedata
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime
from pathlib import Path

POLICY = default_policy.clone(linesep="\n")
START = dt.datetime(2025, 1, 6, 9, 0, tzinfo=dt.UTC)
DAYS = 340

OWNER = {"first": "Alex", "last": "Morgan", "email": "alex@larkspur.test",
         "org": "Larkspur Labs", "domain": "larkspur.test"}

# (formal first name, nickname): pairs the `nicknames` package lists.
NICKED = [("Robert", "Bob"), ("William", "Bill"), ("Elizabeth", "Liz"), ("Katherine", "Kate"),
          ("Michael", "Mike"), ("James", "Jim"), ("Margaret", "Maggie"),
          ("Christopher", "Chris"), ("Daniel", "Dan"), ("Jennifer", "Jen"), ("Thomas", "Tom"),
          ("Joseph", "Joe"), ("Steven", "Steve"), ("Nicholas", "Nick"), ("Samantha", "Sam"),
          ("Anthony", "Tony"), ("Edward", "Ed"), ("Richard", "Rick"), ("Rebecca", "Becky"),
          ("Benjamin", "Ben"), ("Matthew", "Matt"), ("Andrew", "Andy"), ("Patricia", "Pat"),
          ("Victoria", "Vicky")]
PLAIN_FIRST = ("Priya Wei Fatima Lars Aisha Hiroshi Olga Mateo Ingrid Tariq Nadia Kofi Elena "
               "Yusuf Laura Hannah Omar Mei Ruth Kwame Leila Anders Chioma Dmitri Noor Ravi "
               "Astrid Jonas Marisol Emeka").split()
DIACRITIC = [("José", "García"), ("Zoë", "Laurent"), ("Renée", "Lefèvre"), ("Björn", "Ångström"),
             ("Inés", "Muñoz"), ("François", "Côté"), ("Jürgen", "Weiß"), ("Şebnem", "Yılmaz"),
             ("Anaïs", "Dupré"), ("Søren", "Holm"), ("Jörg", "Müller")]
# A name written family name first, and its romanized address.
CJK_PERSON = ("花子", "山田", "hanako.yamada")
LAST = ("Nguyen Patel Johnson Rossi Novak Schmidt Tanaka Haddad Mensah Ivanova Lindgren O'Brien "
        "Hughes Fischer Costa Silva Reyes Walsh Brennan Sato Kowalski Dubois Okonkwo Petrov "
        "Larsen Moreau Bianchi Castillo Farah Gruber Jansen Keller Madsen Mwangi Nakagawa "
        "Nieminen Obi Quinn Rahman Sandoval Torres Varga Weiss Yamamoto Zhou Abbott Becker "
        "Delgado Ellison Foster Garner Holloway Ibsen Kaplan Lowe Mercer Navarro Osei Pryor "
        "Rasmussen Stone Thornton Underwood Vance Whitfield").split()
ROLES = ["Partner", "Principal", "VP of Engineering", "Head of Platform", "CTO", "Product Manager",
         "Staff Engineer", "Account Executive", "Head of Finance", "Engineering Manager",
         "Director of Operations", "Solutions Architect", "Chief of Staff", "Data Scientist"]


@dataclass
class Org:
    ident: str
    name: str  # canonical
    domain: str
    forms: list[str]  # text forms used in prose (canonical first)
    short: str | None = None  # a one-word form, when safe

    def words(self) -> set[str]:
        return {w for f in self.forms for w in _words(f)}


ORGS = [
    Org("org:horizon-ventures", "Horizon Ventures", "horizon.vc",
        ["Horizon Ventures", "Horizon VC", "Horizon Ventures LLC", "Horizon"], "Horizon"),
    Org("org:techflow", "TechFlow", "techflow.io", ["TechFlow", "TechFlow Inc.", "Techflow"]),
    Org("org:globex", "Globex Corporation", "globex.test",
        ["Globex Corporation", "Globex", "Globex Corp."], "Globex"),
    Org("org:initech", "Initech", "initech.test", ["Initech", "Initech LLC"]),
    Org("org:horizon-health", "Horizon Health", "horizonhealth.test",
        ["Horizon Health", "Horizon Health Inc."]),
    Org("org:northwind-freight", "Northwind Freight", "northwind.test",
        ["Northwind Freight", "Northwind", "Northwind Freight GmbH"], "Northwind"),
    Org("org:bluepeak-analytics", "Bluepeak Analytics", "bluepeak.io",
        ["Bluepeak Analytics", "Bluepeak", "Bluepeak Analytics Inc."], "Bluepeak"),
    Org("org:ironwood-capital", "Ironwood Capital", "ironwoodcap.test",
        ["Ironwood Capital", "Ironwood", "Ironwood Capital Partners"], "Ironwood"),
    Org("org:lumen-systems", "Lumen Systems", "lumensys.test",
        ["Lumen Systems", "Lumen", "Lumen Systems AG"], "Lumen"),
    Org("org:quarry-labs", "Quarry Labs", "quarrylabs.test", ["Quarry Labs", "Quarry"], "Quarry"),
    Org("org:kitebird", "Kitebird Corp", "kitebird.io",
        ["Kitebird Corp", "Kitebird Corporation", "Kitebird"], "Kitebird"),
    Org("org:meridian-partners", "Meridian Partners", "meridian.test",
        ["Meridian Partners", "Meridian", "Meridian Partners LLP"], "Meridian"),
    Org("org:sakura-robotics", "Sakura Robotics", "sakura-robotics.test",
        ["Sakura Robotics", "Sakura Robotics K.K."]),
    Org("org:cedar-finch", "Cedar & Finch", "cedarfinch.test",
        ["Cedar & Finch", "Cedar and Finch"]),
    Org("org:nordlicht", "Nordlicht Energie", "nordlicht.test",
        ["Nordlicht Energie", "Nordlicht", "Nordlicht Energie GmbH"], "Nordlicht"),
    Org("org:starling-health", "Starling Health", "starlinghealth.test",
        ["Starling Health", "Starling"], "Starling"),
]
OWNER_ORG = Org("org:larkspur-labs", "Larkspur Labs", "larkspur.test",
                ["Larkspur Labs", "Larkspur"], "Larkspur")

NEWSLETTERS = [
    ("list:dev-weekly", "Dev Weekly", "newsletter@devweekly.test", "devweekly.test"),
    ("list:saas-digest", "The SaaS Digest", "digest@saasdigest.test", "saasdigest.test"),
    ("list:horizon-updates", "Horizon Portfolio Updates", "updates@horizon.vc", "horizon.vc"),
]
# Outsiders named in newsletters: first names shared with people in the corpus.
NOISE = ["Sarah Lee", "Robert Brown", "Priya Shah", "Daniel Okoro", "José Ramírez",
         "Elizabeth Warren-Hale", "Wei Zhang", "Grace Liu"]


@dataclass
class Person:
    ident: str
    first: str
    last: str
    nick: str | None
    middle: str | None
    title: str | None  # "Dr."
    orgs: list[tuple[dt.datetime, Org, str]]  # (from, org, address), in date order
    role: str

    @property
    def full(self) -> str:
        if _cjk(self.last):
            return f"{self.last} {self.first}"  # family name first, as written
        return f"{self.first} {self.last}"

    @property
    def cjk(self) -> bool:
        return _cjk(self.last)

    def at(self, when: dt.datetime) -> tuple[Org, str]:
        current = self.orgs[0]
        for start, org, addr in self.orgs:
            if start <= when:
                current = (start, org, addr)
        return current[1], current[2]

    def moved_on(self, when: dt.datetime) -> bool:
        return len(self.orgs) > 1 and self.orgs[1][0] <= when

    def names(self) -> set[str]:
        """Name words that must not appear for another identity in the same source."""
        out = {*_words(self.first), *_words(self.last), *_words(_ascii(self.first)),
               *_words(_ascii(self.last)), *_words(_digraph(self.first)),
               *_words(_digraph(self.last))}
        if self.nick:
            out |= _words(self.nick)
        return out


def _ascii(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


_DIGRAPH = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue",
                          "ß": "ss"})


def _digraph(text: str) -> str:
    """German transliteration: "Jürgen Weiß" → "Juergen Weiss"."""
    return text.translate(_DIGRAPH)


def _cjk(text: str) -> bool:
    return any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", _ascii(text.replace("ß", "ss")).lower()).strip("-")


def _local(first: str, last: str, style: int) -> str:
    f, la = _slug(first).replace("-", ""), _slug(last).replace("-", "")
    return [f"{f}.{la}", f, f"{f[0]}{la}", f"{f}{la[0]}"][style]


# -- the cast ------------------------------------------------------------------------------------


def make_people(rng: random.Random, n: int) -> list[Person]:
    orgs = {o.ident: o for o in ORGS}
    people: list[Person] = []
    used_last: set[str] = set()

    def add(first: str, last: str, nick: str | None, org: Org, *, title: str | None = None,
            style: int | None = None) -> Person:
        style = rng.randrange(4) if style is None else style
        addr = f"{_local(first, last, style)}@{org.domain}"
        middle = rng.choice("ABCDEFGHJKLMNPRST") if rng.random() < 0.3 else None
        p = Person(f"person:{_slug(first + ' ' + last)}", first, last, nick, middle, title,
                   [(START, org, addr)], rng.choice(ROLES))
        people.append(p)
        used_last.add(last)
        return p

    # The planted cases first.
    add("Sarah", "Chen", None, orgs["org:horizon-ventures"], style=0).role = "Partner"
    add("Sarah", "Park", None, orgs["org:techflow"], style=0)
    bob = add("Robert", "Smith", "Bob", orgs["org:globex"], style=0)
    _move(bob, orgs["org:initech"], START + dt.timedelta(days=170), "bob")
    add("José", "García", None, orgs["org:northwind-freight"], style=0)
    add("Daniel", "Kim", "Dan", orgs["org:bluepeak-analytics"], style=0)
    add("Grace", "Kim", None, orgs["org:lumen-systems"], title="Dr.", style=0)
    add("Elizabeth", "Hughes", "Liz", orgs["org:horizon-health"], style=0)
    add("Jürgen", "Weiß", None, orgs["org:kitebird"], style=0)
    # Everyone else: a mix of nicknamed, plain and diacritic names.
    firsts = list(NICKED)
    rng.shuffle(firsts)
    plain = list(PLAIN_FIRST)
    rng.shuffle(plain)
    diacritic = [d for d in DIACRITIC[1:] if d != ("Jürgen", "Weiß")]
    rng.shuffle(diacritic)
    lasts = [x for x in LAST if x not in used_last]
    rng.shuffle(lasts)
    # More people than last names: double-barrelled ones, still unique.
    lasts = [f"{a}-{b}" for a in LAST[:20] for b in LAST[20:40]][: max(0, n - len(lasts))] + lasts
    pool = [o for o in ORGS]
    while len(people) < n:
        roll = rng.random()
        org = rng.choice(pool)
        if roll < 0.12 and diacritic:
            first, last = diacritic.pop()
            nick = None
        elif roll < 0.55 and firsts:
            first, nick = firsts.pop()
            last = lasts.pop()
        elif plain:
            first, nick, last = plain.pop(), None, lasts.pop()
        else:  # pools exhausted: reuse first names (another shared-first-name case)
            first, nick = rng.choice(NICKED)
            last = lasts.pop()
        title = "Dr." if rng.random() < 0.08 else None
        p = add(first, last, nick, org, title=title)
        if rng.random() < 0.1:
            others = [o for o in ORGS if o is not org]
            _move(p, rng.choice(others), START + dt.timedelta(days=rng.randrange(90, 250)), None)
    # A Japanese name (family name first) at one of the organizations.
    first, last, local = CJK_PERSON
    org = pool[len(people) % len(pool)]
    people.append(Person("person:yamada-hanako", first, last, None, None, None,
                         [(START, org, f"{local}@{org.domain}")], rng.choice(ROLES)))
    # Colleagues of the owner (internal mail).
    for first, last in (("Hannah", "Voss"), ("Kenji", "Mori"), ("Rita", "Okafor")):
        if len(people) >= n + 3:
            break
        p = Person(f"person:{_slug(first + ' ' + last)}", first, last, None, None, None,
                   [(START, OWNER_ORG, f"{first.lower()}@{OWNER_ORG.domain}")],
                   rng.choice(ROLES))
        people.append(p)
    return people


def _move(p: Person, org: Org, when: dt.datetime, local: str | None) -> None:
    local = local or _local(p.first, p.last, 0)
    p.orgs.append((when, org, f"{local}@{org.domain}"))


# -- per-source gold -----------------------------------------------------------------------------


@dataclass
class SourceGold:
    """The gold of one source file; refuses a form that would name two identities in it."""

    source: str
    forms: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # folded → identity
    words: dict[str, str] = field(default_factory=dict)  # name word → identity
    lines: list[dict[str, str | None]] = field(default_factory=list)

    def claim(self, ident: str, words: set[str]) -> bool:
        """Reserve name words for one identity; False when another identity holds one."""
        if any(self.words.get(w, ident) != ident for w in words):
            return False
        for w in words:
            self.words[w] = ident
        return True

    def add(self, match: str, ident: str, kind: str | None) -> None:
        key = " ".join(match.casefold().split())
        old = self.forms.get(key)
        if old is not None:
            if old[0] != ident:
                raise AssertionError(f"{self.source}: {match!r} names {old[0]} and {ident}")
            return
        self.forms[key] = (ident, kind)
        line: dict[str, str | None] = {"source": self.source, "match": match, "identity": ident}
        if kind:
            line["kind"] = kind
        self.lines.append(line)


class Forms:
    """Mention forms of people and organizations, chosen at random but legal in their source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def display(self, p: Person, addr: str, others: list[str]) -> str:
        r = self.rng.random()
        if p.cjk:
            return p.full if r < 0.5 else p.full.replace(" ", "") if r < 0.85 else addr
        if r < 0.40:
            return p.full
        if r < 0.52 and p.nick:
            return f"{p.nick} {p.last}"
        if r < 0.64:
            return f"{p.last}, {p.first}"
        if r < 0.72 and p.middle:
            return f"{p.first} {p.middle}. {p.last}"
        if r < 0.78:
            return addr  # the address as display name
        if r < 0.80 and others:
            return self.rng.choice(others)  # a colleague's address as display name
        if r < 0.86 and _ascii(p.full) != p.full:
            if _digraph(p.full) != p.full and self.rng.random() < 0.5:
                return _digraph(p.full)  # "Juergen Weiss"
            return _ascii(p.full)
        if r < 0.90:
            return p.full.upper()
        if r < 0.94:
            return f"{p.full} (E-mail)"
        return p.full

    def prose(self, p: Person, org: Org, participant: bool) -> list[str]:
        """Candidate prose forms, most specific first is not implied: the caller picks."""
        if p.cjk:
            return [p.full, f"{p.full} ({org.forms[0]})"]
        forms = [p.full, f"{p.first[0]}. {p.last}", f"{p.full} ({org.forms[0]})",
                 f"{p.first} from {org.short or org.name}"]
        if p.nick:
            forms += [f"{p.nick} {p.last}"]
            if participant:
                forms.append(p.nick)
        if p.title:
            forms.append(f"{p.title} {p.last}")
        if _ascii(p.full) != p.full:
            forms.append(_ascii(p.full))
        if _digraph(p.full) != p.full:
            forms.append(_digraph(p.full))
        if participant:
            forms.append(p.first)
        return forms

    def org(self, org: Org) -> str:
        return self.rng.choice(org.forms)


# -- email -------------------------------------------------------------------------------------

SUBJECTS = ["Pilot timeline", "Pricing proposal", "Kickoff next week", "Security questionnaire",
            "Quarterly review", "Contract renewal", "Intro", "Data export question",
            "Board deck numbers", "Integration plan", "Follow-up from the call", "Reference check",
            "Invoice for March", "SSO rollout", "Roadmap preview", "Hiring: platform engineer"]
BODY = [
    "I spoke with {p} yesterday and they want the numbers by Friday.",
    "Looping in {p}, who owns this on the {o} side.",
    "Can you send the deck to {p} before the call?",
    "We met the {o} team last week; they liked the replay demo.",
    "{o} wants to move the kickoff to the first week of the month.",
    "{p} asked whether the pilot can start with two teams.",
    "Thanks to {p} for the intro to {o}.",
    "Per {p}, legal at {o} needs the DPA signed first.",
    "{p} will join the call on Thursday.",
    "I have copied {p} so the invoices go to the right place.",
]
SIGN_OFFS = ["Best,", "Thanks,", "Cheers,", "Regards,", "—"]


@dataclass
class Msg:
    when: dt.datetime
    sender: tuple[str, str]  # display, address
    to: list[tuple[str, str]]
    cc: list[tuple[str, str]]
    subject: str
    body: str
    msgid: str
    refs: list[str]
    bulk: dict[str, str] = field(default_factory=dict)


def _addr(display: str, address: str) -> Address:
    local, _, domain = address.partition("@")
    return Address(display_name=display, username=local, domain=domain)


def render_message(m: Msg) -> bytes:
    msg = EmailMessage(policy=POLICY)
    msg["From"] = _addr(*m.sender)
    msg["To"] = [_addr(*t) for t in m.to]
    if m.cc:
        msg["Cc"] = [_addr(*c) for c in m.cc]
    msg["Subject"] = m.subject
    msg["Date"] = format_datetime(m.when)
    msg["Message-ID"] = m.msgid
    if m.refs:
        msg["In-Reply-To"] = m.refs[-1]
        msg["References"] = " ".join(m.refs)
    for key, value in m.bulk.items():
        msg[key] = value
    msg.set_content(m.body, cte="8bit")
    data = msg.as_bytes(policy=POLICY)
    data = re.sub(rb"(?m)^(>*From )", rb">\1", data)
    stamp = m.when.strftime("%a %b %d %H:%M:%S %Y")
    return f"From {m.sender[1]} {stamp}\n".encode() + data.rstrip(b"\n") + b"\n\n"


class Generator:
    def __init__(self, seed: int, people: int, threads: int, meetings: int, chats: int,
                 newsletters: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.people = make_people(self.rng, people)
        self.n_threads, self.n_meetings, self.n_chats = threads, meetings, chats
        self.n_newsletters = newsletters
        self.forms = Forms(self.rng)
        self.gold: list[SourceGold] = []
        self.stats: dict[str, int] = {}
        self.owner_words = _words(OWNER["first"]) | _words(OWNER["last"])

    # Person choice: people of one org (or two), avoiding name words already claimed.
    def _cast(self, sg: SourceGold, when: dt.datetime, k: int,
              prefer: Person | None = None) -> list[Person]:
        chosen: list[Person] = []
        pool = list(self.people)
        self.rng.shuffle(pool)
        if prefer is not None:
            pool.insert(0, prefer)
        anchor_org = None
        for p in pool:
            if len(chosen) >= k:
                break
            if p in chosen or p.names() & self.owner_words:
                continue
            org, _ = p.at(when)
            if anchor_org and org is not anchor_org and org is not OWNER_ORG \
                    and self.rng.random() < 0.6:
                continue
            if not sg.claim(p.ident, p.names()):
                continue
            if not self._claim_org(sg, org):
                sg.words = {w: i for w, i in sg.words.items() if i != p.ident}
                continue
            chosen.append(p)
            anchor_org = anchor_org or (org if org is not OWNER_ORG else None)
        return chosen

    def _claim_org(self, sg: SourceGold, org: Org) -> bool:
        return sg.claim(org.ident, org.words() - {"inc", "llc", "gmbh", "ag", "llp", "k", "corp",
                                                  "and"})

    def _mention(self, sg: SourceGold, p: Person, when: dt.datetime, participant: bool) -> str:
        org, _ = p.at(when)
        # A form that names two people of the corpus at that time ("Robert from Initech" when
        # two Roberts work there) is ambiguous to any reader: not generated. Bare first names are
        # only used for people present in the source, where context decides.
        taken = {f.casefold() for q in self.people if q is not p
                 for f in self.forms.prose(q, q.at(when)[0], participant=False)}
        forms = [f for f in self.forms.prose(p, org, participant)
                 if " " not in f or f.casefold() not in taken]
        form = self.rng.choice(forms)
        sg.add(form, p.ident, "person")
        if " from " in form or f"({org.forms[0]})" in form:
            sg.add(org.short or org.name if " from " in form else org.forms[0], org.ident,
                   "organization")
        return form

    def _org_mention(self, sg: SourceGold, org: Org) -> str:
        form = self.forms.org(org)
        sg.add(form, org.ident, "organization")
        return form

    def _body_lines(self, sg: SourceGold, when: dt.datetime, cast: list[Person],
                    sender: Person | None, n: int, extra: list[Person] | None = None
                    ) -> list[str]:
        """Prose lines mentioning people of ``cast`` (present: first names allowed) and
        ``extra`` (only named: full forms)."""
        lines = []
        for _ in range(n):
            template = self.rng.choice(BODY)
            text = template
            if "{p}" in template:
                others = [p for p in cast + (extra or []) if p is not sender]
                if not others:
                    continue
                p = self.rng.choice(others)
                text = text.replace("{p}", self._mention(sg, p, when, participant=p in cast))
                org = p.at(when)[0]
            else:
                org = self.rng.choice(cast).at(when)[0] if cast else OWNER_ORG
            if "{o}" in text:
                if org is OWNER_ORG:
                    text = text.replace("{o}", "our")
                else:
                    text = text.replace("{o}", self._org_mention(sg, org))
            lines.append(text)
        return lines

    def _signature(self, sg: SourceGold, p: Person, when: dt.datetime) -> str:
        org, _ = p.at(when)
        sg.add(p.full, p.ident, "person")
        if org is not OWNER_ORG:
            sg.add(org.name, org.ident, "organization")
        phone = f"+1 555 {self.rng.randrange(1000, 9999)}"
        if org is OWNER_ORG:
            return f"-- \n{p.full}\n{p.role}, {org.name}\n{phone}"
        sep = self.rng.choice([", ", ", ", " | ", " / ", " – ", "|"])
        if sep == "|":  # one line of fields
            return f"-- \n{p.full}\n{p.role} | {org.name} | {phone}"
        return f"-- \n{p.full}\n{p.role}{sep}{org.name}\n{phone}"

    def thread(self, n: int, when: dt.datetime, mbox: list[bytes]) -> None:
        root_id = f"<t{n}.s{self.seed}@gen.larkspur.test>"
        sg = SourceGold(root_id)
        sg.claim("owner", self.owner_words)
        k = self.rng.choice([1, 1, 2, 2, 3])
        movers = [p for p in self.people if len(p.orgs) > 1]
        prefer = self.rng.choice(movers) if movers and self.rng.random() < 0.15 else None
        cast = self._cast(sg, when, k, prefer)
        if not cast:
            return
        extra = self._cast(sg, when, self.rng.choice([0, 1, 1, 2]))  # mentioned only
        subject = self.rng.choice(SUBJECTS)
        if subject == "Intro" and len(cast) >= 2:
            subject = f"Intro: {cast[0].first} <> {cast[1].first}"
        owner = (f"{OWNER['first']} {OWNER['last']}", OWNER["email"])
        refs: list[str] = []
        previous: Msg | None = None
        n_msgs = self.rng.choice([1, 2, 2, 3, 3, 4])
        for i in range(n_msgs):
            t = when + dt.timedelta(hours=3 * i + self.rng.randrange(0, 3),
                                    minutes=self.rng.randrange(60))
            from_owner = (i % 2 == 1) if self.rng.random() < 0.85 else (i % 2 == 0)
            sender = None if from_owner else cast[i // 2 % len(cast)]
            colleagues = [p.at(t)[1] for p in cast if p is not sender]
            if sender is None:
                frm = owner
                to_people = cast[:2]
                cc_people = cast[2:]
            else:
                _, addr = sender.at(t)
                frm = (self.forms.display(sender, addr, colleagues), addr)
                sg.add(addr, sender.ident, "person")
                to_people = []
                cc_people = [p for p in cast if p is not sender]
            to = [owner] if sender is not None else []
            for p in to_people:
                _, addr = p.at(t)
                to.append((self.forms.display(p, addr, []), addr))
                sg.add(addr, p.ident, "person")
            cc = []
            for p in cc_people:
                _, addr = p.at(t)
                cc.append((self.forms.display(p, addr, []), addr))
                sg.add(addr, p.ident, "person")
            addressee = (to_people or cast)[0] if sender is None else None
            body: list[str] = []
            if addressee is not None:
                greet = addressee.nick if addressee.nick and self.rng.random() < 0.5 \
                    else addressee.first
                sg.add(greet, addressee.ident, "person")
                body.append(f"Hi {greet},")
            else:
                body.append(f"Hi {OWNER['first']},")
            body.append("")
            if sender is not None and sender.moved_on(t) and self.rng.random() < 0.7 \
                    and self._claim_org(sg, sender.orgs[0][1]):
                old, new = sender.orgs[0][1], sender.orgs[-1][1]
                body.append(f"Quick note: I have moved from {self._org_mention(sg, old)} to "
                            f"{self._org_mention(sg, new)}, so please use this address from "
                            "now on.")
                self.stats["move_notes"] = self.stats.get("move_notes", 0) + 1
            body += self._body_lines(sg, t, cast, sender, self.rng.choice([1, 2, 3]), extra)
            body.append("")
            if sender is None:
                body += [self.rng.choice(SIGN_OFFS), OWNER["first"]]
            else:
                sign = sender.nick if sender.nick and self.rng.random() < 0.4 else sender.first
                sg.add(sign, sender.ident, "person")
                body += [self.rng.choice(SIGN_OFFS), sign]
                if self.rng.random() < 0.4:
                    body += ["", self._signature(sg, sender, t)]
            if previous is not None:
                body += ["", f"On {format_datetime(previous.when)}, {previous.sender[0]} "
                             f"<{previous.sender[1]}> wrote:"]
                body += [f"> {line}" if line else ">" for line in previous.body.splitlines()[:12]]
            msgid = root_id if i == 0 else f"<t{n}.m{i}.s{self.seed}@gen.larkspur.test>"
            msg = Msg(t, frm, to, cc, ("Re: " if i else "") + subject, "\n".join(body) + "\n",
                      msgid, list(refs))
            mbox.append(render_message(msg))
            refs.append(msgid)
            previous = msg
            self.stats["messages"] = self.stats.get("messages", 0) + 1
        self.gold.append(sg)

    def newsletter(self, n: int, when: dt.datetime, mbox: list[bytes]) -> None:
        ident, name, address, domain = NEWSLETTERS[n % len(NEWSLETTERS)]
        msgid = f"<nl{n}.s{self.seed}@{domain}>"
        sg = SourceGold(msgid)
        display = name
        if ident == "list:horizon-updates":
            display = "Sarah Chen via Horizon Portfolio Updates"
        sg.add(address, ident, None)
        featured = self.rng.sample(NOISE, 2)
        lines = [f"{name} — issue {n + 1}", "",
                 f"This week: an interview with {featured[0]} on pricing experiments, and "
                 f"{featured[1]} on hiring your first platform engineer.", ""]
        for person in featured:
            sg.add(person, f"noise:{_slug(person)}", "person")
        lines += ["Read online: https://" + domain + f"/issues/{n + 1}", "",
                  "You are receiving this because you subscribed. Unsubscribe: https://" + domain
                  + "/unsubscribe"]
        msg = Msg(when, (display, address), [(f"{OWNER['first']} {OWNER['last']}",
                                              OWNER["email"])], [], f"{name} #{n + 1}",
                  "\n".join(lines) + "\n", msgid, [],
                  {"List-Unsubscribe": f"<https://{domain}/unsubscribe>",
                   "List-Id": f"{name} <news.{domain}>", "Precedence": "bulk"})
        mbox.append(render_message(msg))
        self.gold.append(sg)
        self.stats["newsletters"] = self.stats.get("newsletters", 0) + 1

    # -- meetings and chats --------------------------------------------------------------------

    def meeting(self, n: int, when: dt.datetime, out: Path) -> None:
        vtt = n % 2 == 0
        cast_probe = SourceGold("")
        cast_probe.claim("owner", self.owner_words)
        cast = self._cast(cast_probe, when, self.rng.choice([2, 3, 4]))
        if not cast:
            return
        org = next((p.at(when)[0] for p in cast if p.at(when)[0] is not OWNER_ORG), OWNER_ORG)
        title = f"{org.short or org.name} sync {n + 1}"
        name = f"{when.date().isoformat()} {title}.{'vtt' if vtt else 'txt'}"
        sg = SourceGold(f"sources/meetings/{name}")
        sg.words = dict(cast_probe.words)
        speakers: dict[str, str] = {}
        for p in cast:
            r = self.rng.random()
            label = p.full if r < 0.6 else (
                f"{p.nick} {p.last}" if p.nick and r < 0.75 else
                _ascii(p.full) if r < 0.85 else p.first)
            speakers[p.ident] = label
        extra = self._cast(sg, when, self.rng.choice([0, 1]))
        turns: list[tuple[str, str]] = []
        owner_label = f"{OWNER['first']} {OWNER['last']}"
        turns.append((owner_label, "Thanks for making the time, let's start with the pilot."))
        for _ in range(self.rng.randrange(4, 9)):
            p = self.rng.choice(cast)
            text = " ".join(self._body_lines(sg, when, cast, p, 1, extra)) or "Sounds good."
            sg.add(speakers[p.ident], p.ident, "person")
            turns.append((speakers[p.ident], text))
            if self.rng.random() < 0.3:
                turns.append((owner_label, "Agreed, let's write that down."))
        if vtt:
            lines = ["WEBVTT", "", f"NOTE Title: {title}", ""]
            for i, (who, text) in enumerate(turns):
                start, end = i * 20, i * 20 + 18
                lines += [f"{i + 1}", f"{_clock(start)} --> {_clock(end)}", f"<v {who}>{text}",
                          ""]
        else:
            attendees = ", ".join([owner_label, *(p.full for p in cast)])
            for p in cast:
                sg.add(p.full, p.ident, "person")
            lines = [f"Title: {title}", f"Date: {when.date().isoformat()}",
                     f"Attendees: {attendees}", ""]
            lines += [f"{who}: {text}" for who, text in turns]
        path = out / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.gold.append(sg)
        self.stats["meetings"] = self.stats.get("meetings", 0) + 1

    def chat(self, n: int, when: dt.datetime, out: Path) -> None:
        name = f"chat-{n + 1:03d}.json"
        sg = SourceGold(f"sources/chats/{name}")
        sg.claim("owner", self.owner_words)
        cast = self._cast(sg, when, self.rng.choice([1, 2, 3]))
        if not cast:
            return
        labels = {}
        for p in cast:
            label = p.full if self.rng.random() < 0.5 else p.first
            labels[p.ident] = label
            sg.add(p.full, p.ident, "person")  # in the participants list
        messages = []
        t = when
        for i in range(self.rng.randrange(4, 10)):
            t += dt.timedelta(minutes=self.rng.randrange(1, 9))
            if i % 2 == 0:
                speaker, text = OWNER["first"], self.rng.choice(
                    ["Any update on this?", "Can you share the numbers?", "Thanks!",
                     "Let's sync tomorrow."])
            else:
                p = self.rng.choice(cast)
                speaker = labels[p.ident]
                sg.add(speaker, p.ident, "person")
                text = " ".join(self._body_lines(sg, t, cast, p, 1)) or "Will do."
            messages.append({"speaker": speaker, "text": text,
                             "timestamp": t.isoformat().replace("+00:00", "Z")})
        data = {"id": f"gen-{self.seed}-chat-{n + 1}",
                "title": f"Chat with {', '.join(p.first for p in cast)}",
                "participants": [f"{OWNER['first']} {OWNER['last']}", *(p.full for p in cast)],
                "messages": messages}
        (out / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                encoding="utf-8")
        self.gold.append(sg)
        self.stats["chats"] = self.stats.get("chats", 0) + 1

    # -- all -----------------------------------------------------------------------------------

    def write(self, out: Path) -> dict[str, object]:
        (out / "sources" / "email").mkdir(parents=True)
        (out / "sources" / "meetings").mkdir()
        (out / "sources" / "chats").mkdir()
        events: list[tuple[dt.datetime, str, int]] = []
        for kind, count in (("thread", self.n_threads), ("newsletter", self.n_newsletters),
                            ("meeting", self.n_meetings), ("chat", self.n_chats)):
            for i in range(count):
                day = self.rng.randrange(DAYS)
                when = START + dt.timedelta(days=day, hours=self.rng.randrange(0, 8),
                                            minutes=self.rng.randrange(60))
                events.append((when, kind, i))
        events.sort()
        mbox: list[bytes] = []
        for when, kind, i in events:
            if kind == "thread":
                self.thread(i, when, mbox)
            elif kind == "newsletter":
                self.newsletter(i, when, mbox)
            elif kind == "meeting":
                self.meeting(i, when, out / "sources" / "meetings")
            else:
                self.chat(i, when, out / "sources" / "chats")
        (out / "sources" / "email" / "mail.mbox").write_bytes(b"".join(mbox))
        lines = [json.dumps(line, ensure_ascii=False) for sg in self.gold for line in sg.lines]
        (out / "gold.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (out / "config.yaml").write_text(
            "# The vault owner of this synthetic corpus (never labelled in gold.jsonl).\n"
            "owner:\n"
            f"  names: [{OWNER['first']} {OWNER['last']}]\n"
            f"  emails: [{OWNER['email']}]\n"
            f"  domains: [{OWNER['domain']}]\n", encoding="utf-8")
        identities = sorted({line["identity"] for sg in self.gold for line in sg.lines
                             if line["identity"]})
        manifest: dict[str, object] = {
            "seed": self.seed, "people": len(self.people),
            "threads": self.n_threads, **dict(sorted(self.stats.items())),
            "gold_lines": len(lines), "identities": len(identities),
            "movers": [p.full for p in self.people if len(p.orgs) > 1],
            "shared_first_names": sorted({p.first for p in self.people
                                          if sum(q.first == p.first for q in self.people) > 1}),
            "shared_last_names": sorted({p.last for p in self.people
                                         if sum(q.last == p.last for q in self.people) > 1}),
        }
        (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2)
                                           + "\n", encoding="utf-8")
        return manifest


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"


def generate(out: Path, *, seed: int = 7, people: int = 60, threads: int | None = None,
             meetings: int | None = None, chats: int | None = None,
             newsletters: int | None = None, force: bool = False) -> dict[str, object]:
    """Write the corpus to ``out`` (which must not exist unless ``force``); return the manifest."""
    out = Path(out)
    if out.exists():
        if not force:
            raise SystemExit(f"{out} exists (use --force to replace it)")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    gen = Generator(seed, people, threads if threads is not None else people * 3,
                    meetings if meetings is not None else max(2, people // 4),
                    chats if chats is not None else max(2, people // 6),
                    newsletters if newsletters is not None else max(3, people // 6))
    return gen.write(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--people", type=int, default=60)
    parser.add_argument("--threads", type=int, help="email threads (default 3 × people)")
    parser.add_argument("--meetings", type=int, help="transcripts (default people / 4)")
    parser.add_argument("--chats", type=int, help="chat sessions (default people / 6)")
    parser.add_argument("--newsletters", type=int, help="bulk messages (default people / 6)")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    manifest = generate(args.out, seed=args.seed, people=args.people, threads=args.threads,
                        meetings=args.meetings, chats=args.chats, newsletters=args.newsletters,
                        force=args.force)
    print(json.dumps(manifest, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
