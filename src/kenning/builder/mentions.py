"""Mention extraction, deterministic: what each source says about people, organizations,
projects and topics, each with its file line.

A source file (``sources/<kind>/*.md``, frontmatter as written by the connectors in
:mod:`kenning.sources`) becomes one :class:`SourceInfo` holding its :class:`Mention` list:

- **email**: every participant of the frontmatter (name + address + roles), cited at the first
  message header line that shows them (else their frontmatter line); a message's ``Signature:``
  line adds the sender's role, organization and phone; every non-freemail domain of a
  participant is an organization mention (``org-domain``).
- **meetings**: attendees (with ``attendee_emails``) and speakers, cited at their first turn
  (turn lines show the label as written; ``speaker_labels`` maps it to the name). The
  organization a speaker's label names (``speaker_organizations``: "Name | Org", "Name (Org)")
  is an organization mention read like a signature, cited at that speaker's labelled turn.
  In the talk, a capitalised phrase with an organization word but no legal form ("the
  Telegram group") only links to a known organization (``via`` "mention").
- **chats**: participants other than generic roles (user, assistant, tool …).
- **calendar**: organizer and attendees (name + address).
- **text** (every body line outside headers, signatures and notes): "Dr. Kim", "Sarah Chen
  (Horizon Ventures)", "Sarah from TechFlow", "S. Chen", "First Last" when First is a known
  given name, "From: Kean, Steven J" lines, organizations with a legal form or designator
  ("Acme Corp", "Bluefin Capital"), ``#tags`` (topics), "Project X" (projects) and explicit
  ``[[links]]``.

Only participants (and signature organizations, tags and projects) may create pages; names found
in prose only link to pages that exist (see :mod:`kenning.builder.resolve`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kenning.builder import names as nm
from kenning.sources.owner import Owner

PERSON, ORGANIZATION, PROJECT, TOPIC = "person", "organization", "project", "topic"
# A message with more participants than this creates pages only for its senders; every
# participant is still a mention and still links to a page that exists (see docs).
MAX_CREATING_PARTICIPANTS = 50
# Text mentions read per source (a pasted directory is not a list of contacts).
MAX_TEXT_MENTIONS = 200


@dataclass
class Mention:
    """One mention of an entity in a source (plain data; see the resolver seam)."""

    source: str               # vault path of the source file
    line: int                 # 1-based file line
    text: str                 # as written ("Sarah Chen", "horizon.vc", "#pricing")
    kind: str                 # person | organization | project | topic
    via: str                  # participant | attendee | speaker | chat | calendar | signature |
                              # domain | text | mention | tag | subject | link
    email: str | None = None  # lower-cased address, for people
    name: str | None = None   # the cleaned name (None: the display name was not a name)
    roles: tuple[str, ...] = ()  # from / to / cc / bcc / reply-to / organizer / attendee
    date: str | None = None       # YYYY-MM-DD of the first message/turn naming it
    last_date: str | None = None  # YYYY-MM-DD of the last one
    org: str | None = None    # organization named next to it ("Sarah from TechFlow")
    title: str | None = None  # job title (signature)
    phone: str | None = None
    domain: str | None = None  # organization mentions from a domain
    moved: str | None = None  # the sender said they changed jobs / address: the old
                              # organization they named ("" when none); see build/moves.py
    # From the address book (:mod:`kenning.builder.identities`), for mentions with an address:
    best: str | None = None   # the person's best name across every source (the page title)
    same: tuple[str, ...] = ()  # the person's other addresses
    junk: str | None = None   # malformed | role | list: the address names no person
    signed: tuple[str, ...] = ()  # person names in the sender's signature ("Mike Hicks")
    unit: bool = False        # an organization named after its domain's organization, one of
                              # several ("Enron Americas" at enron.com): a unit, never that page
    anonymous: bool = False   # no name was ever seen with the address and it never wrote:
                              # it links to a page that exists but creates none


@dataclass
class SourceInfo:
    """What the build needs from one source file."""

    path: str
    kind: str                 # email | meeting | chat | calendar | other
    title: str
    date: str | None
    bulk: bool = False
    direction: str | None = None
    owner_sent: bool = False  # the owner wrote in it (or organized / attended it)
    participants: int = 0
    mentions: list[Mention] = field(default_factory=list)
    first_line: int = 1       # line of the first message / turn (for citations)
    warnings: list[str] = field(default_factory=list)
    # (display name, address) pairs written in the text: forwarded and quoted headers
    # ("cc: "Wenner, Adam" <awenner@velaw.com>", "From: Jeff Dasovich [mailto:…]").
    paired: list[tuple[str, str]] = field(default_factory=list)
    # Meetings and calendar events (see builder/meetings.py): the sources sync linked to this
    # one (a transcript's event, an event's transcripts), a transcript's topics (name,
    # ``#Lstart-Lend``), an event's occurrences (date, line, note) and whether it repeats.
    linked: tuple[str, ...] = ()
    topics: list[tuple[str, str]] = field(default_factory=list)
    occurrences: list[tuple[str, int, str]] = field(default_factory=list)
    recurring: bool = False


_FOLDER_KIND = {"email": "email", "meetings": "meeting", "chats": "chat", "calendar": "calendar"}
_HEADER = re.compile(r"^## (?P<date>\d{4}-\d{2}-\d{2})?[^·]*· (?P<sender>.*?)(?: → (?P<rest>.*))?$")
_HEADER_UNDATED = re.compile(r"^## undated · ")
_ANGLE = re.compile(r"<([^<>\s]+@[^<>\s]+)>")
_TURN = re.compile(r"^- \*\*(?:\[[\d:]+\] )?(?P<name>[^*:]+?):?\*\*")
_CHAT_TURN = re.compile(r"^- \*\*(?P<name>[^*]+)\*\*")
_PHONE = re.compile(r"(?:\+?\d[\d\s().-]{7,}\d)")
_ROLE_WORDS = re.compile(
    r"\b(CEO|CTO|CFO|COO|CMO|CIO|VP|SVP|EVP|Vice President|President|Director|Manager|Partner|"
    r"Engineer|Founder|Co-?founder|Head of|Lead|Counsel|Analyst|Associate|Principal|Consultant|"
    r"Specialist|Coordinator|Officer|Chair(?:man|woman)?|Executive|Assistant|Administrator|"
    r"Attorney|Advis[oe]r|Scientist|Designer|Developer|Architect|Recruiter|Professor|"
    r"Secretary|Treasurer|Representative|Owner|Chief \w+|Chief of Staff|Intern|Editor|"
    r"Researcher|Strategist|Controller|Accountant|Producer|Trader|Broker|Chair)\b")
_UP = "A-ZÀ-ÖØ-ÞĀ-Žİ"   # Latin capitals (Latin-1 and Extended-A, which alternates cases)
_LO = "a-zß-öø-ÿā-žı"
# A capitalized name word: "Sarah", "Şebnem", "Yılmaz", "O'Brien", "McDonald".
_CAP = rf"(?:Mc|Mac|O['’]|D['’])?[{_UP}][{_LO}'’-]+"
_HONORIFIC = re.compile(rf"\b(?:Dr|Mr|Mrs|Ms|Prof)\.? ({_CAP}(?: {_CAP})?)")
_PAREN_ORG = re.compile(rf"\b({_CAP}(?: [A-Z]\.)?(?: {_CAP})?) \(([A-Z][\w&.,' -]{{1,60}}?)\)")
_FROM_ORG = re.compile(rf"\b({_CAP}) (?:from|at) ((?:[A-Z][\w&-]*)(?: [A-Z][\w&-]*){{0,2}})")
_INITIALS = re.compile(rf"\b([{_UP}])\. ({_CAP})\b")
_FULL = re.compile(rf"\b({_CAP}) ((?:[A-Z]\. )?{_CAP})\b")
_FROM_LINE = re.compile(r"^\s*(?:From|Von|De)\s*:\s*(.+?)\s*$")
_LAST_FIRST = re.compile(rf"^({_CAP}), ({_CAP})(?: ([A-Z])\.?)?$")
_ORG_WORDS = "|".join(sorted({*nm.LEGAL_SUFFIXES, *nm.ORG_DESIGNATORS} - {"co", "as", "pc"},
                             key=len, reverse=True))
_ORG = re.compile(rf"\b((?:[A-Z][\w&'-]*\s){{1,3}}?(?:(?i:{_ORG_WORDS}))\b\.?)")
# A legal form as it is written in a name ("Acme Corp.", "Globex GmbH"), not "company".
_SPOKEN_LEGAL = re.compile(r"^(?:Inc|Incorporated|LLC|L\.L\.C|Ltd|Limited|GmbH|Corp|Corporation|"
                           r"PLC|plc|AG|SA|S\.A|BV|B\.V|NV|N\.V|LP|LLP|PLLC|SARL|S\.r\.l|SRL|SpA|"
                           r"S\.p\.A|Oy|KK|KG|Pty|Pte)\.?$")
_TAG = re.compile(r"(?<![\w&#/])#([A-Za-z][\w-]{2,40})\b")
_PROJECT = re.compile(rf"\bProject ({_CAP}(?: {_CAP})?)")
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# The sender's own word that they changed jobs or address (first person, in their message).
_MOVE = re.compile(
    r"\b(?:I(?:'ve| have)? (?:moved|switched|left|joined|started (?:at|with))\b|"
    r"I(?:'m| am) now (?:at|with)\b|my new (?:e-?mail|address|company|employer|job)\b|"
    r"(?:use|update to|note) (?:this|my new) (?:e-?mail )?address\b|"
    r"(?:this|here) is my new\b)", re.IGNORECASE)
_MOVED_FROM = re.compile(r"\b(?:moved|switched) from ((?:[A-Z][\w&.'-]*\s?){1,4}?)\s*(?:to|,|\.)\b"
                         r"|\bI(?:'ve| have)? left ((?:[A-Z][\w&.'-]*\s?){1,4})")
_PAIRED = re.compile(
    r"(?:\"([^\"<>@\n]{3,60})\"|([A-Z][\w.'’-]*(?:,? [A-Z][\w.'’-]*){1,3}))\s*"
    r"(?:<|\[mailto:)\s*([\w.+'=-]+@[\w-]+(?:\.[\w-]+)+)\s*[>\]]")
_SKIP_LINE = re.compile(r"^(?:Signature:|Attachments:|Subject:|_\(|_.*_$|> |\*\*When:\*\*)")
_NOT_NAMES = frozenset({"The", "This", "That", "Thanks", "Thank", "Dear", "Hi", "Hello", "Best",
                        "Regards", "Please", "Re", "Fw", "Fwd", "Subject", "From", "To", "Cc",
                        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                        "Sunday", "January", "February", "March", "April", "May", "June",
                        "July", "August", "September", "October", "November", "December",
                        "North", "South", "East", "West", "New", "San", "Los", "Las", "Santa",
                        "United", "General", "Senior", "Vice", "Chief"})


def source_kind(path: str) -> str:
    parts = path.split("/")
    return _FOLDER_KIND.get(parts[1], "other") if len(parts) > 2 else "other"


def _day(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text[:10] if re.match(r"\d{4}-\d{2}-\d{2}", text) else None


def extract(path: str, text: str, owner: Owner) -> SourceInfo:
    """Every mention in one source file (never raises on content)."""
    from kenning.vault import frontmatter

    fm = frontmatter.read(text)
    data = fm.data
    lines = text.split("\n")
    kind = source_kind(path)
    title = str(data.get("title") or data.get("subject") or path.rsplit("/", 1)[-1][:-3])
    info = SourceInfo(path, kind, title, _day(data.get("date") or data.get("first_date")))
    if fm.error:
        info.warnings.append(f"{path}:{fm.error[0]}: {fm.error[1]}; read as text only")
    body_start = fm.body_start
    fm_lines = lines[: body_start - 1]
    info.bulk = data.get("category") == "bulk"
    info.direction = data.get("direction") if isinstance(data.get("direction"), str) else None
    if kind == "email":
        _email(info, data, lines, fm_lines, body_start, owner)
    elif kind == "meeting":
        from kenning.builder.meetings import linked_sources, topics

        _meeting(info, data, lines, fm_lines, body_start, owner)
        info.linked = linked_sources(data.get("event"))
        info.topics = topics(lines, body_start, data)
    elif kind == "chat":
        _chat(info, data, lines, fm_lines, body_start, owner)
    elif kind == "calendar":
        from kenning.builder.meetings import linked_sources, occurrences

        _calendar(info, data, lines, fm_lines, body_start, owner)
        info.linked = linked_sources(data.get("meeting"))
        info.occurrences = occurrences(lines, body_start)
        info.recurring = bool(data.get("recurrence")) or len(info.occurrences) > 1
        if info.occurrences:
            info.first_line = info.occurrences[0][1]
    _text(info, lines, body_start, owner)
    return info


def _owner_first_names(owner: Owner) -> set[str]:
    out = set()
    for name in owner.names:
        q = nm.parse_person(name)
        if q is not None and q.first and not q.initial:
            out.add(q.first)
    return out


def is_owner_name(owner: Owner, name: str | None, *, first_name_too: bool = False) -> bool:
    """The owner's name (any of ``owner.names``, folded), or, in a conversation the owner is
    part of, the owner's given name alone ("Alex" in a chat with Alex Morgan)."""
    if not name or not owner.names:
        return False
    key = nm.fold(name)
    if key in {nm.fold(n) for n in owner.names}:
        return True
    q = nm.parse_person(name)
    if q is not None and q.full and any(
            (o := nm.parse_person(n)) is not None and o.key == q.key for n in owner.names):
        return True  # "Lay, Kenneth" for Kenneth Lay
    return first_name_too and key in _owner_first_names(owner)


def _fm_line(fm_lines: list[str], needle: str, default: int = 1) -> int:
    if needle:
        for i, line in enumerate(fm_lines, 1):
            if needle in line:
                return i
    return default


def _personal_domain(m: Mention, domain: str) -> bool:
    """``tom@alvarez.example`` for Tom Alvarez: a person's own domain, not an organization's."""
    q = nm.parse_person(m.name) if m.name else None
    if q is None:
        return False
    label = nm.registrable_label(domain).replace("-", "").replace("_", "")
    parts = [p for p in (q.first, q.last) if p and len(p) >= 3]
    return bool(parts) and label in {*(p.replace(" ", "") for p in parts),
                                     "".join(parts).replace(" ", ""),
                                     (q.first[:1] + q.last).replace(" ", "")}


def _domain_mentions(info: SourceInfo, mentions: list[Mention], owner: Owner) -> None:
    seen: set[str] = set()
    personal = {nm.org_domain(m.email.rsplit("@", 1)[1]) for m in mentions
                if m.email and "@" in m.email
                and _personal_domain(m, nm.org_domain(m.email.rsplit("@", 1)[1]))}
    for m in mentions:
        if not m.email or "@" not in m.email:
            continue
        domain = nm.org_domain(m.email.rsplit("@", 1)[1])
        if domain in seen or nm.is_freemail(domain) or not nm.valid_domain(domain) \
                or domain in personal:
            continue
        seen.add(domain)
        info.mentions.append(Mention(info.path, m.line, domain, ORGANIZATION, "domain",
                                     roles=m.roles, date=m.date, last_date=m.last_date,
                                     domain=domain))


def _email(info: SourceInfo, data: dict[str, Any], lines: list[str], fm_lines: list[str],
           body_start: int, owner: Owner) -> None:
    participants = [p for p in data.get("participants") or [] if isinstance(p, dict)]
    info.participants = len(participants)
    # Mailing lists the thread came through: written to, never a person — by List-Post, or an
    # address whose local part is the subject's list tag ("[aur-general] …" to aur-general@).
    lists = {nm.clean_address(str(a)) for a in data.get("lists") or [] if a}
    list_tags = {t.lower() for t in _LIST_TAG.findall(str(data.get("subject") or info.title))}
    # Message headers: where each address first/last appears, and each sender's signature.
    first: dict[str, tuple[int, str | None]] = {}
    last: dict[str, str | None] = {}
    signatures: dict[str, tuple[int, str]] = {}
    moves: dict[str, str] = {}  # sender → old organization named in "I have moved …"
    sender = None
    for n in range(body_start, len(lines) + 1):
        line = lines[n - 1].rstrip("\r")
        if line.startswith("## "):
            m = _HEADER.match(line)
            if m is None and not _HEADER_UNDATED.match(line):
                continue
            if info.first_line == 1:
                info.first_line = n
            day = m.group("date") if m else None
            shown = [a.lower() for a in _ANGLE.findall(line)]
            bare = re.findall(r"(?:^|[·→,;] ?)([\w.+'-]+@[\w-]+(?:\.[\w-]+)+)", line)
            sender_part = m.group("sender") if m else ""
            sm = _ANGLE.search(sender_part)
            sender = (sm.group(1) if sm else sender_part.strip()).lower() or None
            for addr in [*shown, *(b.lower() for b in bare)]:
                first.setdefault(addr, (n, day))
                if day:
                    last[addr] = day
            if sender_part and not sm:
                first.setdefault(sender_part.strip().lower(), (n, day))
        elif line.startswith("Signature: ") and sender:
            signatures[sender] = (n, line[len("Signature: "):])
        elif sender and sender not in moves and _MOVE.search(line) \
                and not line.lstrip().startswith(">"):
            old = _MOVED_FROM.search(line)
            moves[sender] = (old.group(1) or old.group(2)).strip() if old else ""
    base: list[Mention] = []
    for p in participants:
        address = nm.clean_address(str(p.get("address") or ""))
        raw_name = p.get("name")
        roles = tuple(str(r) for r in p.get("roles") or [] if r)
        if owner.is_owner(address, str(raw_name or "")) or p.get("owner"):
            if "from" in roles:
                info.owner_sent = True
            base.append(Mention(info.path, _fm_line(fm_lines, address or str(raw_name)),
                                str(raw_name or address or ""), PERSON, "participant",
                                email=address, name=None, roles=roles, date=info.date))
            base[-1].title = "__owner__"
            continue
        name = nm.clean_display_name(str(raw_name) if raw_name else None, address)
        key = address or fold_key(raw_name)
        where = first.get(key or "") if key else None
        line = where[0] if where else _fm_line(fm_lines, address or str(raw_name or ""))
        day = (where[1] if where else None) or info.date
        mention = Mention(info.path, line, str(raw_name or address or ""), PERSON,
                          "participant", email=address, name=name, roles=roles, date=day,
                          last_date=last.get(address or "", day))
        if address and (address in lists or address.split("@", 1)[0] in list_tags):
            mention.junk = "list"
        sig = signatures.get(address or "")
        if sig:
            _signature(mention, sig[1], info)
        if address in moves and "from" in roles:
            mention.moved = moves[address]
        base.append(mention)
    info.mentions.extend(base)
    _domain_mentions(info, [m for m in base if m.title != "__owner__"], owner)
    for m in base:
        if m.title == "__owner__":
            m.title = None
            m.via = "owner"


# A mailing list's tag in a subject line: "Re: [aur-general] Guidelines".
_LIST_TAG = re.compile(r"\[([\w.+-]+)\]")


def fold_key(value: Any) -> str | None:
    return str(value).strip().lower() if value else None


def _signature(mention: Mention, raw: str, info: SourceInfo) -> None:
    parts = []
    for p in (p.strip() for p in raw.split(" · ")):
        # "Director | Acme Corp | +1 555 0100": a line of several fields.
        if " | " in p and _role_and_org(p) is None:
            parts.extend(x.strip() for x in p.split(" | ") if x.strip())
        elif p:
            parts.append(p)
    domain = mention.email.rsplit("@", 1)[1] if mention.email and "@" in mention.email else ""
    for part in parts[:6]:
        if len(part) > 80 or nm.looks_like_address(part):
            continue  # "keith.packard at intel.com" is how to write to them, not where they work
        if mention.phone is None and _PHONE.fullmatch(part.split("(")[0].strip()):
            mention.phone = part
            continue
        split = _role_and_org(part)
        if split is not None:
            role, org = split
            if mention.title is None:
                mention.title = role
            if mention.org is None:
                mention.org = org
            continue
        words = set(nm.fold(part).split())
        shouting = part.isupper() and len(words) > 1
        if mention.org is None and not shouting and (
                words & (nm.LEGAL_SUFFIXES - {"co", "as", "ab"} | _SIGNATURE_ORG_WORDS)
                or (domain and nm.org_matches_domain(part, domain))) \
                and not _PHONE.search(part) and len(words) <= 6:
            mention.org = part.rstrip(".,")
            continue
        if mention.title is None and _ROLE_WORDS.search(part) and len(part) <= 60:
            mention.title = part
            continue
        if _SIGNED.fullmatch(part) and not _ROLE_WORDS.search(part):
            mention.signed = (*mention.signed, part)
    if mention.org:
        info.mentions.append(Mention(info.path, mention.line, mention.org, ORGANIZATION,
                                     "signature", date=mention.date,
                                     last_date=mention.last_date,
                                     domain=nm.org_domain(domain) if domain else None))


# What stands between a role and an organization on one signature line.
_ROLE_SEPARATOR = re.compile(r",\s+|\s+[|/–—-]\s+|\s+(?:at|@)\s+")
# A signature part that is a person's name: two to four capitalized words ("Mike Hicks",
# "Steven J. Kean"); whose name it is, the address book decides (see identities.py).
_SIGNED = re.compile(rf"{_CAP}(?: (?:[{_UP}]\.?|{_CAP})){{1,3}}")


def _role_and_org(part: str) -> tuple[str, str] | None:
    """``"Data Scientist, Globex Corporation"`` → (role, organization); also "Role |
    Organization", "Role / Organization", "Role – Organization", "Role at Organization" and
    the other way round; None when the part is not a role beside an organization."""
    m = _ROLE_SEPARATOR.search(part)
    if m is None:
        return None
    left, right = part[:m.start()].strip().rstrip(".,"), part[m.end():].strip().rstrip(".,")
    if not left or not right or _PHONE.search(part) or "@" in part:
        return None

    def org_like(text: str) -> bool:
        words = text.split()
        return (text[:1].isupper() and len(words) <= 6 and not any(c.isdigit() for c in text)
                and not _ROLE_WORDS.search(text) and nm.fold(text) not in nm.LEGAL_SUFFIXES)

    if _ROLE_WORDS.search(left) and len(left) <= 60 and org_like(right):
        return left, right
    if _ROLE_WORDS.search(right) and len(right) <= 60 and org_like(left) \
            and len(left.split()) >= 2:
        return right, left
    return None


_SIGNATURE_ORG_WORDS = frozenset({"ventures", "capital", "partners", "labs", "associates", "group",
                                  "holdings", "consulting", "technologies", "university",
                                  "institute", "foundation"})


def _meeting(info: SourceInfo, data: dict[str, Any], lines: list[str], fm_lines: list[str],
             body_start: int, owner: Owner) -> None:
    attendees = [str(a) for a in data.get("attendees") or [] if a]
    speakers = [str(s) for s in data.get("speakers") or [] if s]
    emails = data.get("attendee_emails") if isinstance(data.get("attendee_emails"), dict) else {}
    # A turn shows its label as written ("stokes", "Felix (Geth)"); the frontmatter says whose.
    labels = _str_map(data.get("speaker_labels"))
    orgs = _str_map(data.get("speaker_organizations"))
    info.owner_sent = bool(data.get("owner_attended")) or not owner.known
    turn_line: dict[str, int] = {}
    org_line: dict[str, int] = {}  # speaker → first turn whose label names their organization
    for n in range(body_start, len(lines) + 1):
        m = _TURN.match(lines[n - 1])
        if m:
            label = m.group("name").strip()
            who = labels.get(label, label)
            turn_line.setdefault(who.lower(), n)
            if who in orgs and orgs[who].lower() in label.lower():
                org_line.setdefault(who, n)
            if info.first_line == 1:
                info.first_line = n
    names = list(dict.fromkeys([*attendees, *speakers]))
    info.participants = len(names)
    for raw in names:
        address = nm.clean_address(str(emails.get(raw) or ""))
        line = turn_line.get(raw.lower()) or _fm_line(fm_lines, raw)
        via = "attendee" if raw in attendees else "speaker"
        if owner.is_owner(address, raw) or is_owner_name(
                owner, raw, first_name_too=bool(data.get("owner_attended"))):
            # The owner is "I", never a page, but an attendee of the meeting all the same.
            info.mentions.append(Mention(info.path, line, raw, PERSON, "owner", email=address,
                                         roles=(via,), date=info.date))
            continue
        name = nm.clean_display_name(raw, address)
        if name is None and address is None:
            continue
        mention = Mention(info.path, line, raw, PERSON, via, email=address, name=name,
                          roles=("attendee",), date=info.date, last_date=info.date)
        org = orgs.get(raw)
        if org:
            # "Name | Org" / "Name (Org)": the speaker's own label names their organization,
            # read like an email signature — works_at evidence cited at that turn.
            mention.line = org_line.get(raw, line)
            mention.org = org
            info.mentions.append(Mention(info.path, mention.line, org, ORGANIZATION,
                                         "signature", date=info.date, last_date=info.date))
        info.mentions.append(mention)


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if k and v}


def _chat(info: SourceInfo, data: dict[str, Any], lines: list[str], fm_lines: list[str],
          body_start: int, owner: Owner) -> None:
    info.date = info.date or _day(data.get("started"))
    turn_line: dict[str, int] = {}
    for n in range(body_start, len(lines) + 1):
        m = _CHAT_TURN.match(lines[n - 1])
        if m:
            turn_line.setdefault(m.group("name").strip().lower(), n)
            if info.first_line == 1:
                info.first_line = n
    people = [str(p) for p in data.get("participants") or [] if p]
    info.participants = len(people)
    info.owner_sent = True  # a chat is a conversation the owner was part of
    for raw in people:
        line = turn_line.get(raw.lower()) or _fm_line(fm_lines, raw)
        if is_owner_name(owner, raw, first_name_too=True):
            info.mentions.append(Mention(info.path, line, raw, PERSON, "owner", date=info.date))
            continue
        name = nm.clean_display_name(raw)
        if name is None:
            continue
        info.mentions.append(Mention(info.path, line, raw, PERSON, "chat", name=name,
                                     roles=("participant",), date=info.date,
                                     last_date=info.date))


def _calendar(info: SourceInfo, data: dict[str, Any], lines: list[str], fm_lines: list[str],
              body_start: int, owner: Owner) -> None:
    people: list[tuple[dict[str, Any], str]] = []
    org = data.get("organizer")
    if isinstance(org, dict):
        people.append((org, "organizer"))
    for a in data.get("attendees") or []:
        if isinstance(a, dict):
            people.append((a, "attendee"))
    info.participants = len(people)
    info.owner_sent = data.get("owner_role") in ("organizer", "attendee") or not owner.known
    base: list[Mention] = []
    for p, role in people:
        address = nm.clean_address(str(p.get("address") or ""))
        raw = str(p.get("name") or address or "")
        line = _fm_line(fm_lines, address or raw)
        if owner.is_owner(address, raw):
            info.mentions.append(Mention(info.path, line, raw, PERSON, "owner", email=address,
                                         date=info.date))
            continue
        name = nm.clean_display_name(p.get("name"), address)
        if name is None and address is None:
            continue
        base.append(Mention(info.path, line, raw, PERSON, "calendar", email=address,
                            name=name, roles=(role,), date=info.date, last_date=info.date))
    info.mentions.extend(base)
    _domain_mentions(info, base, owner)


def _text(info: SourceInfo, lines: list[str], body_start: int, owner: Owner) -> None:
    found: list[Mention] = []
    seen: set[tuple[str, str]] = set()
    title = info.title

    def add(n: int, text: str, kind: str, via: str, **kw: Any) -> None:
        key = (kind, text.lower())
        if key in seen or len(found) >= MAX_TEXT_MENTIONS:
            return
        seen.add(key)
        if kind == PERSON and via == "text" and is_owner_name(owner, kw.get("name")):
            via = "owner"  # the owner is "I", never a page
        found.append(Mention(info.path, n, text, kind, via, date=info.date,
                             last_date=info.date, **kw))

    # The subject: projects and tags only (cited at the H1 / title line).
    title_line = next((i for i in range(body_start, len(lines) + 1)
                       if lines[i - 1].startswith("# ")), body_start)
    for m in _PROJECT.finditer(title):
        add(title_line, m.group(1).strip(), PROJECT, "subject")
    for m in _TAG.finditer(title):
        add(title_line, m.group(1), TOPIC, "tag")
    in_fence = False
    for n in range(body_start, len(lines) + 1):
        line = lines[n - 1].rstrip("\r")
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence and "@" in line and ("<" in line or "[mailto:" in line) \
                and not line.startswith("#"):
            for m in _PAIRED.finditer(line):
                address = nm.clean_address(m.group(3))
                if address:
                    info.paired.append(((m.group(1) or m.group(2)).strip(), address))
        if in_fence or not stripped or line.startswith(("#", "## ")) \
                or _SKIP_LINE.match(stripped):
            continue
        turn = _TURN.match(line) or _CHAT_TURN.match(line)
        if turn:
            line = line[turn.end():]
        if "`" in line:
            line = re.sub(r"`[^`]*`", " ", line)
        fm = _FROM_LINE.match(line)
        if fm:
            lf = _LAST_FIRST.match(fm.group(1))
            if lf:
                add(n, fm.group(1), PERSON, "text", name=f"{lf.group(2)} {lf.group(1)}")
            continue
        for m in _WIKILINK.finditer(line):
            add(n, m.group(1).strip(), PERSON, "link", name=m.group(1).strip())
        for m in _TAG.finditer(line):
            add(n, m.group(1), TOPIC, "tag")
        for m in _PROJECT.finditer(line):
            add(n, m.group(1).strip(), PROJECT, "text")
        for m in _HONORIFIC.finditer(line):
            add(n, m.group(0), PERSON, "text", name=m.group(0))
        for m in _PAREN_ORG.finditer(line):
            person, org = m.group(1), m.group(2).strip()
            if person.split()[0] in _NOT_NAMES:
                continue
            add(n, m.group(0), PERSON, "text", name=person, org=org)
        for m in _FROM_ORG.finditer(line):
            if m.group(1) in _NOT_NAMES or nm.fold(m.group(1)) not in nm.given_names():
                continue
            add(n, m.group(0), PERSON, "text", name=m.group(1), org=m.group(2))
        for m in _INITIALS.finditer(line):
            add(n, m.group(0), PERSON, "text", name=m.group(0))
        for m in _FULL.finditer(line):
            first = m.group(1)
            if first in _NOT_NAMES or nm.fold(first) not in nm.given_names():
                continue
            if m.group(2).split()[-1] in _NOT_NAMES:
                continue
            add(n, m.group(0), PERSON, "text", name=m.group(0))
        for m in _ORG.finditer(line):
            org = m.group(1).strip().rstrip(".")
            words = org.split()
            if words[0] in _NOT_NAMES or len(words) < 2:
                continue
            if info.kind == "meeting" and not _SPOKEN_LEGAL.search(words[-1]):
                # Talk is full of capitalised phrases ("the Telegram group", "Working Group",
                # "Blob Labs"): without a legal form it only names an organization that is
                # already known (a label or signature names it) — "mention" never creates one.
                if words[-1][:1].isupper():
                    add(n, org, ORGANIZATION, "mention", name=org)
                continue
            add(n, org, ORGANIZATION, "text", name=org)
    info.mentions.extend(found)
