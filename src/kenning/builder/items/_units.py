"""A rendered source file as the units people wrote: email messages, meeting turns, notes
sections, chat turns — each with its writer, addressees, date and file lines, quoted and
forwarded text left out. Line shapes are the connectors' (see kenning.sources.email.render,
kenning.sources.meetings.turn_line, kenning.sources.chats.format_turn); the heading and turn
patterns are the ones kenning.builder.mentions reads."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from kenning.builder import mentions as mn
from kenning.builder import names as nm
from kenning.builder.items.model import Party
from kenning.sources.owner import Owner

# Generic chat roles: no person (an assistant's "I'll draft it" promises nothing).
_MACHINE_ROLES = frozenset({"assistant", "system", "tool", "model", "ai", "bot", "function",
                            "developer", "gpt", "claude", "chatgpt", "copilot", "gemini"})
_OWNER_ROLES = frozenset({"user", "human", "me", "you"})
_UNKNOWN = frozenset({"unknown", "speaker", "them", "unidentified"})

_MEETING_TURN = re.compile(r"^- \*\*(?:\[(?P<ts>[\d:]+)\] )?(?P<label>[^*]+?):\*\*\s?(?P<text>.*)$")
_CHAT_TURN = re.compile(r"^- \*\*(?P<name>[^*]+)\*\*(?: \((?P<when>[^)]*)\))?:\s?(?P<text>.*)$")
_ADDR = re.compile(r"(?P<name>[^<>]*?)\s*<(?P<addr>[^<>\s]+@[^<>\s]+)>")
_BARE = re.compile(r"^[\w.+'=-]+@[\w-]+(?:\.[\w-]+)+$")
# Where a message's own text ends: a quote attribution, a reply header, a forwarded message.
_ATTRIBUTION = re.compile(r"^\s*(?:On|Am|Le|El|Il)\s.{0,300}(?:wrote|writes|schrieb|a écrit|"
                          r"escribió|scrisse)\s*:\s*$", re.IGNORECASE)
_WROTE_END = re.compile(r"(?:wrote|writes|said|a écrit|schrieb|escribió)\s*:\s*$", re.IGNORECASE)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*(?:Original Message|Ursprüngliche Nachricht)\s*-{2,}",
                       re.IGNORECASE)
_FORWARD = re.compile(r"^\s*(?:\\?-{2,}\s*Forwarded by\b|\\?-{2,}\s*Forwarded message|"
                      r"Begin forwarded message:|\\?-{2,}\s*Weitergeleitete)", re.IGNORECASE)
_FROM_HDR = re.compile(r"^\s*\*?(?:From|Von|De)\s*:\*?\s+\S", re.IGNORECASE)
_NEXT_HDR = re.compile(r"^\s*\*?(?:Sent|Date|To|Subject|cc)\s*:", re.IGNORECASE)
_NOTES_HDR = re.compile(r"^\s*\S.{0,60}\s+\d{1,2}/\d{1,2}/\d{2,4}\s+\d{1,2}:\d{2}", re.IGNORECASE)
_SKIP = re.compile(r"^(?:Signature: |Attachments: |Subject: |_\(.*\)_\s*$|_.*_\s*$)")


@dataclass
class Unit:
    """One message, turn or notes section."""

    kind: str                       # message | turn | notes | chat
    who: Party | None
    to: tuple[Party, ...]
    cc: tuple[Party, ...]
    date: date | None
    line: int                       # the header / turn line
    message: str | None
    lines: list[tuple[int, str]] = field(default_factory=list)  # (file line, own text)
    quoted: int = 0                 # lines left out as quoted / forwarded
    undated: bool = False
    forwarded: bool = False         # the text left out is a forwarded message


@dataclass
class Parsed:
    kind: str                       # email | meeting | chat | other
    date: date | None
    title: str
    units: list[Unit]
    people: list[Party]             # everyone the source names as a participant
    bulk: bool = False
    no_speakers: bool = False
    notes: list[str] = field(default_factory=list)


def to_date(value: Any) -> date | None:
    text = str(value or "")[:10]
    try:
        return date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None
    except ValueError:
        return None


def party(owner: Owner, name: str | None, email: str | None, *, first_name_too: bool = False
          ) -> Party:
    address = nm.clean_address(email) if email else None
    name = " ".join(name.split()) if name else None
    if name and "," in name:  # "Moreno, Rachel" → "Rachel Moreno"
        q = nm.parse_person(name)
        if q is not None and q.full:
            parts = [p.strip() for p in name.split(",", 1)]
            if len(parts) == 2 and parts[1] and " " not in parts[0]:
                name = f"{parts[1]} {parts[0]}"
    is_owner = owner.is_owner(address, name) or mn.is_owner_name(
        owner, name, first_name_too=first_name_too)
    return Party(name or None, address, is_owner)


def parties(owner: Owner, text: str) -> list[Party]:
    """``Name <addr>, Name <addr>, bare@addr and 3 more`` → parties."""
    text = re.sub(r"\s+and \d+ more\s*$", "", text.strip())
    out: list[Party] = []
    if "<" in text:
        for m in _ADDR.finditer(text):
            name = m.group("name").strip().lstrip(",").strip().strip('"')
            out.append(party(owner, name or None, m.group("addr")))
        tail = _ADDR.sub("", text)
        for bit in tail.split(","):
            bit = bit.strip()
            if _BARE.match(bit):
                out.append(party(owner, None, bit))
        return out
    for bit in text.split(","):
        bit = bit.strip()
        if not bit or bit == "(no sender)":
            continue
        out.append(party(owner, None, bit) if _BARE.match(bit) else party(owner, bit, None))
    return out


def parse(path: str, text: str, owner: Owner) -> Parsed:
    from kenning.vault import frontmatter

    fm = frontmatter.read(text)
    data = fm.data if isinstance(fm.data, dict) else {}
    lines = text.split("\n")
    kind = mn.source_kind(path)
    title = str(data.get("title") or data.get("subject") or path.rsplit("/", 1)[-1][:-3])
    day = to_date(data.get("date") or data.get("first_date") or data.get("started"))
    out = Parsed(kind, day, title, [], [], bulk=data.get("category") == "bulk")
    start = fm.body_start if fm.body_start else 1
    if kind == "email":
        _email(out, data, lines, start, owner)
    elif kind == "meeting":
        _meeting(out, data, lines, start, owner, path)
    elif kind == "chat":
        _chat(out, data, lines, start, owner)
    return out


# -- email -------------------------------------------------------------------------------------


def _email(out: Parsed, data: dict[str, Any], lines: list[str], start: int, owner: Owner) -> None:
    ids = [str(i) for i in data.get("message_ids") or [] if i]
    for p in data.get("participants") or []:
        if isinstance(p, dict):
            out.people.append(party(owner, str(p.get("name") or "") or None,
                                    str(p.get("address") or "") or None))
    unit: Unit | None = None
    cut = False        # the rest of this message is quoted / forwarded text
    pending_from = False
    for n in range(start, len(lines) + 1):
        raw = lines[n - 1].rstrip("\r")
        if raw.startswith("## "):
            m = mn._HEADER.match(raw)
            undated = bool(mn._HEADER_UNDATED.match(raw))
            if m is not None or undated:
                unit = _email_unit(raw, n, len(out.units), ids, owner, m, undated)
                out.units.append(unit)
                cut = pending_from = False
                continue
        if unit is None:
            continue
        stripped = raw.strip()
        if cut:
            if stripped:
                unit.quoted += 1
            continue
        if not stripped:
            unit.lines.append((n, ""))
            continue
        if _SKIP.match(stripped):
            omitted = re.match(r"_\((\d+) quoted lines? omitted\)_", stripped)
            if omitted:
                unit.quoted += int(omitted.group(1))
            continue
        if stripped.startswith(">") or stripped.startswith("\\>"):
            unit.quoted += 1
            continue
        if _ATTRIBUTION.match(stripped) or _ORIGINAL.match(stripped) or _FORWARD.match(stripped):
            cut = True
            unit.forwarded = unit.forwarded or bool(_FORWARD.match(stripped))
            unit.quoted += 1
            continue
        if _WROTE_END.search(stripped) and len(stripped) < 200:
            cut = True  # "... <x@y> wrote:" wrapped over two lines
            continue
        if re.match(r"^\s*To:\s*\S", stripped) and any(
                re.match(r"^\s*(?:cc|Subject|bcc)\s*:", lines[k].strip(), re.IGNORECASE)
                for k in range(n, min(n + 3, len(lines)))):
            # A Lotus Notes reply header ("Name / date / To: / cc: / Subject:"): the rest is
            # the quoted conversation; the name and date lines before it go too.
            while unit.lines and unit.lines[-1][1].strip() and len(unit.lines[-1][1]) < 80 \
                    and n - unit.lines[-1][0] <= 3:
                unit.lines.pop()
            cut = True
            continue
        if re.match(r"^_{10,}$", stripped) or re.match(r"(?i)^quoting\s.{2,120}:$", stripped):
            cut = True  # Outlook's rule before a reply header; Horde's "Quoting X:"
            unit.quoted += 1
            continue
        if _FROM_HDR.match(stripped):
            if any(_NEXT_HDR.match(lines[k].strip()) for k in range(n, min(n + 3, len(lines)))):
                cut = True  # "From: … / Sent: … / To: …": the quoted conversation follows
                unit.quoted += 1
                continue
            pending_from = True
            continue
        if pending_from and _NEXT_HDR.match(stripped):
            cut = True
            continue
        pending_from = False
        unit.lines.append((n, raw))


def _email_unit(raw: str, n: int, index: int, ids: list[str], owner: Owner,
                m: re.Match[str] | None, undated: bool) -> Unit:
    body = raw[3:]
    head, _, rest = body.partition(" · ")
    sender_text, _, recipients = rest.partition(" → ")
    day = to_date(head) if not undated else None
    sender = parties(owner, sender_text)
    to_text, cc_text = recipients, ""
    for marker in ("; cc ", "; bcc "):
        if marker in to_text:
            to_text, _, more = to_text.partition(marker)
            cc_text = (cc_text + ", " + more) if cc_text else more
    cc_text = cc_text.replace("; bcc ", ", ")
    return Unit("message", sender[0] if sender else None, tuple(parties(owner, to_text)),
                tuple(parties(owner, cc_text)), day, n, ids[index] if index < len(ids) else None,
                undated=undated or day is None)


# -- meetings ----------------------------------------------------------------------------------


def _meeting(out: Parsed, data: dict[str, Any], lines: list[str], start: int, owner: Owner,
             path: str) -> None:
    labels = mn._str_map(data.get("speaker_labels"))
    emails = data.get("attendee_emails") if isinstance(data.get("attendee_emails"), dict) else {}
    attended = bool(data.get("owner_attended"))
    known: dict[str, Party] = {}
    for raw in [*(data.get("attendees") or []), *(data.get("speakers") or [])]:
        name = str(raw)
        if name and name.casefold() not in known:
            known[name.casefold()] = party(owner, name, str(emails.get(name) or "") or None,
                                           first_name_too=attended)
    out.people = list(known.values())
    section: str | None = None
    unit: Unit | None = None
    for n in range(start, len(lines) + 1):
        raw = lines[n - 1].rstrip("\r")
        if raw.startswith("## "):
            heading = raw[3:].strip().lower()
            if section == "notes" and unit is not None and not heading.startswith(
                    ("transcript", "topics", "notes")):
                unit.lines.append((n, raw))  # a heading of the notes ("## Action items")
                continue
            section = "notes" if heading.startswith("notes") else \
                "transcript" if heading.startswith("transcript") else "other"
            if section == "notes":
                unit = Unit("notes", None, (), (), out.date, n, "notes")
                out.units.append(unit)
            else:
                unit = None
            continue
        if section == "notes" and unit is not None:
            unit.lines.append((n, raw))
            continue
        if section != "transcript":
            continue
        m = _MEETING_TURN.match(raw)
        if m is None:
            if unit is not None and raw.strip():
                unit.lines.append((n, raw))  # a continuation (hand-edited file)
            continue
        label = m.group("label").strip()
        name = labels.get(label, label)
        who: Party | None
        if name.casefold() in _UNKNOWN or re.fullmatch(r"(?i)speaker[ _-]?\w{0,3}", name):
            who = None
        else:
            who = known.get(name.casefold()) or party(owner, name, None, first_name_too=attended)
        unit = Unit("turn", who, (), (), out.date, n, str(len(out.units) + 1))
        unit.lines.append((n, m.group("text")))
        out.units.append(unit)
    turns = [u for u in out.units if u.kind == "turn"]
    if turns and all(u.who is None for u in turns):
        out.no_speakers = True


# -- chats -------------------------------------------------------------------------------------


def _chat(out: Parsed, data: dict[str, Any], lines: list[str], start: int, owner: Owner) -> None:
    people: dict[str, Party] = {}
    for raw in data.get("participants") or []:
        name = str(raw)
        if not name or name.casefold() in _MACHINE_ROLES:
            continue
        people[name.casefold()] = Party(None, None, True) if name.casefold() in _OWNER_ROLES \
            else party(owner, name, None, first_name_too=True)
    out.people = [p for p in people.values() if p.name]
    unit: Unit | None = None
    turn = 0
    for n in range(start, len(lines) + 1):
        raw = lines[n - 1].rstrip("\r")
        m = _CHAT_TURN.match(raw)
        if m is None:
            if unit is not None and raw.startswith("  "):
                unit.lines.append((n, raw[2:]))
            elif unit is not None and not raw.strip():
                unit.lines.append((n, ""))
            continue
        turn += 1
        name = m.group("name").strip()
        day = out.date
        when = m.group("when") or ""
        if re.match(r"\d{4}-\d{2}-\d{2}", when):
            day = to_date(when) or day
        if name.casefold() in _MACHINE_ROLES:
            unit = Unit("chat", None, (), (), day, n, str(turn))
            unit.kind = "machine"
        else:
            who = people.get(name.casefold()) or party(owner, name, None, first_name_too=True)
            if name.casefold() in _OWNER_ROLES:
                who = Party(next(iter(sorted(owner.names)), None) if owner.names else None,
                            next(iter(sorted(owner.emails)), None) if owner.emails else None,
                            True)
            unit = Unit("chat", who, (), (), day, n, str(turn))
        unit.lines.append((n, m.group("text")))
        out.units.append(unit)
    humans = [u.who for u in out.units if u.who is not None]
    for u in out.units:
        if u.who is not None:
            u.to = tuple({p.key: p for p in humans if p.key != u.who.key}.values())
