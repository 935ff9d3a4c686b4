"""Names: cleaning display names, parsing person names, name keys, nicknames, organization keys.

Everything here is pure and deterministic. ``nameparser`` splits person names ("Kean, Steven J",
"Dr. Kim", "S. Chen"); ``nicknames`` says which given names are variants of each other
(Bob ↔ Robert). Both are imported lazily and cached.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

FREEMAIL = frozenset({
    "gmail.com", "googlemail.com", "yahoo.com", "yahoo.co.uk", "yahoo.fr", "ymail.com",
    "hotmail.com", "hotmail.co.uk", "outlook.com", "live.com", "msn.com", "aol.com", "aim.com",
    "icloud.com", "me.com", "mac.com", "proton.me", "protonmail.com", "pm.me", "gmx.com",
    "gmx.de", "gmx.net", "web.de", "mail.com", "yandex.ru", "yandex.com", "zoho.com",
    "fastmail.com", "hey.com", "qq.com", "163.com", "126.com", "comcast.net", "earthlink.net",
    "att.net", "verizon.net", "sbcglobal.net", "juno.com", "netscape.net", "compuserve.com",
    "prodigy.net", "excite.com", "mindspring.com", "tutanota.com", "hushmail.com",
})
# Second-level suffixes under which the organization's name is the third label from the right.
_PUBLIC_SUFFIX_2 = frozenset({
    "co.uk", "ac.uk", "gov.uk", "org.uk", "com.au", "net.au", "org.au", "edu.au", "co.jp",
    "ne.jp", "or.jp", "ac.jp", "co.nz", "co.za", "com.br", "com.cn", "com.mx", "co.in",
    "co.kr", "com.sg", "com.hk", "com.tw",
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
GENERIC_NAMES = frozenset({
    "user", "assistant", "system", "tool", "human", "ai", "bot", "me", "you", "unknown",
    "speaker", "them", "guest", "host", "moderator", "everyone", "all", "team", "admin",
    "noreply", "no-reply", "postmaster", "mailer-daemon", "info", "support", "undisclosed",
    "undisclosed-recipients", "recipients", "operator", "participant", "interviewer",
    "interviewee", "e-mail", "e mail", "email", "mail", "fax", "phone", "contact", "sender",
    "recipient", "list", "group", "office", "inbox", "newsletter", "notification", "notifications",
})


def fold(text: str) -> str:
    """Case-, diacritic- and punctuation-free, single-spaced: ``Zoë  O'Neil`` → ``zoe oneil``."""
    out = []
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(ch):
            continue
        if ch.isalnum():
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
    if not text or "@" in text or _ADDRESS.search(text):
        return None
    if not any(ch.isalpha() for ch in text):
        return None
    if fold(text) in GENERIC_NAMES:
        return None
    if address and text == address.split("@", 1)[0] and not text[:1].isupper():
        return None  # "jsmith" for jsmith@x.com says nothing the address does not
    return text


def name_from_address(address: str) -> str | None:
    """``jeff.dasovich@enron.com`` → ``Jeff Dasovich``; None unless the local part is first.last."""
    local = address.split("@", 1)[0]
    parts = [p for p in re.split(r"[._]", local) if p]
    if len(parts) != 2 or not all(p.isalpha() and len(p) >= 2 for p in parts):
        return None
    return " ".join(p.capitalize() for p in parts)


@dataclass(frozen=True)
class PersonName:
    """A parsed person name; every part folded (lower case, no diacritics)."""

    first: str          # given name, or "" when only a surname is known ("Dr. Kim")
    middle: str
    last: str
    honorific: bool     # written with a title (Dr., Ms.)
    initial: bool       # the given name is an initial ("S. Chen")
    display: str        # the name as it should be shown: "Steven J Kean"

    @property
    def full(self) -> bool:
        return bool(self.first and self.last and not self.initial)

    @property
    def key(self) -> str:
        """``first last`` folded; middle names and initials are not part of the key."""
        return f"{self.first} {self.last}".strip()


@lru_cache(maxsize=65536)
def parse_person(name: str) -> PersonName | None:
    """Parse a person's name (any of "Sarah Chen", "Chen, Sarah", "Dr. Kim", "S. Chen")."""
    text = " ".join(name.split()).strip(" ,;")
    if not text or not any(ch.isalpha() for ch in text):
        return None
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


@lru_cache(maxsize=1)
def _nicknamer() -> Any:
    from nicknames import NickNamer

    return NickNamer()


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """Given names known to the nicknames table (a lexicon for "First Last" in prose)."""
    nn = _nicknamer()
    names: set[str] = set()
    for table in (getattr(nn, "_canonical_lookup", {}), getattr(nn, "_nickname_lookup", {})):
        names.update(str(k) for k in table)
    return frozenset(n for n in names if len(n) >= 3)


@lru_cache(maxsize=65536)
def first_names_match(a: str, b: str) -> str | None:
    """How two folded given names match: ``exact``, ``nickname``, ``initials`` or None."""
    if not a or not b:
        return None
    if a == b:
        return "exact"
    if len(a) == 1 or len(b) == 1:
        return "initials" if a[0] == b[0] else None
    nn = _nicknamer()
    if b in nn.nicknames_of(a) or a in nn.nicknames_of(b):
        return "nickname"
    if b in nn.canonicals_of(a) or a in nn.canonicals_of(b):
        return "nickname"
    return None


_DOTTED = re.compile(r"\b([A-Za-z])\.([A-Za-z])\.")


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


def registrable_label(domain: str) -> str:
    """The organization's own label of a mail domain: ``gen.pge.com`` → ``pge``."""
    parts = domain.lower().strip(".").split(".")
    if len(parts) >= 3 and ".".join(parts[-2:]) in _PUBLIC_SUFFIX_2:
        return parts[-3]
    return parts[-2] if len(parts) >= 2 else parts[0]


def org_domain(domain: str) -> str:
    """The registrable domain: ``gen.pge.com`` → ``pge.com``."""
    parts = domain.lower().strip(".").split(".")
    if len(parts) >= 3 and ".".join(parts[-2:]) in _PUBLIC_SUFFIX_2:
        return ".".join(parts[-3:])
    return ".".join(parts[-2:])


def name_from_domain(domain: str) -> str:
    """A readable organization name from its domain: ``duke-energy.com`` → ``Duke Energy``."""
    label = registrable_label(domain)
    words = [w for w in re.split(r"[-_]", label) if w]
    if len(label) <= 4 and len(words) == 1:
        return label.upper()  # pjm.com → PJM, ibm.com → IBM
    return " ".join(w.capitalize() for w in words) or domain


# Webmail providers by their own label, whatever the top-level domain (gmx.at, yahoo.es,
# fastmail.fm …): an address there says nothing about where the person works.
_FREEMAIL_LABELS = frozenset({
    "gmail", "googlemail", "yahoo", "ymail", "hotmail", "outlook", "live", "msn", "aol",
    "icloud", "proton", "protonmail", "gmx", "yandex", "zoho", "fastmail", "tutanota",
    "hushmail", "mailbox", "posteo", "mail", "web", "qq", "naver", "rediffmail", "libero",
    "wanadoo", "t-online", "freenet", "seznam", "rambler", "inbox",
})


def is_freemail(domain: str) -> bool:
    domain = domain.lower()
    return domain in FREEMAIL or org_domain(domain) in FREEMAIL or (
        "." in domain and registrable_label(domain) in _FREEMAIL_LABELS)


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
