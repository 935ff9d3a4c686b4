"""Markdown for a message entry and frontmatter fields for a thread file.

An entry is one header line — ``## <date> · <from> → <to>; cc <cc>`` — then the message's new
text, its signature on one ``Signature:`` line and its attachments on one ``Attachments:`` line.
The header line is the unit a citation points at; the text never contains a line that Markdown
would read as a heading, rule or code fence (such lines are escaped with a backslash).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kenning.sources.email.message import Parsed, Person, clean_subject
from kenning.sources.owner import INTERNAL, RECEIVED, SENT, Owner

MAX_SHOWN = 8  # recipients shown per role on a header line
_UNSAFE = re.compile(r"^(\s{0,3})(#|```|~~~|[-=_*](?:\s*[-=_*]){2,}\s*$|[=]+\s*$|-\s*$)")
ROLES = ("from", "to", "cc", "bcc", "reply-to")


def iso(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def person(p: Person) -> str:
    if p.name and p.address:
        return f"{_inline(p.name)} <{p.address}>"
    return _inline(p.name or p.address)


def _people(people: list[Person]) -> str:
    shown = ", ".join(person(p) for p in people[:MAX_SHOWN])
    if len(people) > MAX_SHOWN:
        shown += f" and {len(people) - MAX_SHOWN} more"
    return shown


def _inline(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def header_line(m: Parsed) -> str:
    when = m.date.strftime("%Y-%m-%d %H:%M %z") if m.date else "undated"
    if m.date is not None:
        when = when[:-2] + ":" + when[-2:] if len(when) > 17 else when
    parts = [f"## {when} · {person(m.sender) if m.sender else '(no sender)'}"]
    if m.to:
        parts.append(f" → {_people(m.to)}")
    if m.cc:
        parts.append(f"; cc {_people(m.cc)}")
    if m.bcc:
        parts.append(f"; bcc {_people(m.bcc)}")
    return "".join(parts)


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def safe_body(text: str) -> str:
    return "\n".join(_UNSAFE.sub(r"\1\\\2", line) for line in text.split("\n"))


def entry_text(m: Parsed, thread_subject: str, notes: list[str] | None = None) -> str:
    lines = [header_line(m)]
    if clean_subject(m.subject).lower() != thread_subject.lower() and m.subject:
        lines.append(f"Subject: {_inline(m.subject)}")
    for note in notes or []:
        lines.append(f"_{note}_")
    lines.append("")
    lines.append(safe_body(m.text) if m.text.strip() else "_(no new text)_")
    if m.quoted:
        lines.append(f"\n_({m.quoted} quoted line{'s' if m.quoted != 1 else ''} omitted)_")
    if m.signature:
        lines.append("\nSignature: " + " · ".join(_inline(x) for x in m.signature.split("\n")))
    if m.attachments:
        shown = "; ".join(f"{_inline(a.name)} ({a.type}, {_size(a.size)})"
                          for a in m.attachments[:50])
        more = f"; and {len(m.attachments) - 50} more" if len(m.attachments) > 50 else ""
        lines.append(f"\nAttachments: {shown}{more}")
    return "\n".join(lines)


# -- thread fields ---------------------------------------------------------------------------


def merge_fields(old: dict[str, Any], messages: list[Parsed], keys: list[str], sid: str,
                 owner: Owner) -> dict[str, Any]:
    """Frontmatter for a thread: the fields already on disk merged with new messages."""
    participants: dict[str, dict[str, Any]] = {}
    for p in old.get("participants") or []:
        if isinstance(p, dict):
            ident = str(p.get("address") or p.get("name") or "")
            if ident:
                participants[ident] = dict(p)
    for m in messages:
        for role, people in (("from", [m.sender] if m.sender else []), ("to", m.to),
                             ("cc", m.cc), ("bcc", m.bcc), ("reply-to", m.reply_to)):
            for p in people:
                ident = p.address or p.name
                entry = participants.setdefault(ident, {"name": p.name, "address": p.address})
                if not entry.get("name") and p.name:
                    entry["name"] = p.name
                roles = list(entry.get("roles") or [])
                if role not in roles:
                    roles.append(role)
                entry["roles"] = sorted(roles, key=ROLES.index)
    for entry in participants.values():
        entry.pop("owner", None)
        if owner.is_owner(entry.get("address"), entry.get("name")):
            entry["owner"] = SENT if "from" in entry.get("roles", []) else RECEIVED
        for key in ("name", "address"):
            if not entry.get(key):
                entry.pop(key, None)
    message_ids = list(dict.fromkeys([*(old.get("message_ids") or []), *keys]))
    dates = [d for d in [old.get("first_date"), old.get("last_date"),
                         *(iso(m.date) for m in messages)] if d]
    ordered = sorted(dates, key=_sortable)
    folders = sorted({*(old.get("folders") or []), *(m.folder for m in messages if m.folder)})
    labels = sorted({*(old.get("labels") or []), *(lb for m in messages for lb in m.labels)})
    old_count = int(old.get("messages") or 0)
    bulk_old = old.get("category") == "bulk" if old_count else True
    fields: dict[str, Any] = {
        "subject": old.get("subject") or thread_title(messages),
        "thread_id": sid,
        "message_ids": message_ids,
        "messages": len(message_ids),
        "first_date": ordered[0] if ordered else None,
        "last_date": ordered[-1] if ordered else None,
        "participants": list(participants.values()),
        "direction": _direction(old.get("direction"), messages, owner),
        "folders": folders,
        "labels": labels,
        "category": "bulk" if bulk_old and all(m.bulk for m in messages) else "personal",
        "attachments": int(old.get("attachments") or 0)
        + sum(len(m.attachments) for m in messages),
    }
    lists = sorted({*(old.get("lists") or []), *(a for m in messages for a in m.lists)})
    if lists:
        fields["lists"] = lists  # mailing-list addresses among the participants: no people
    for key in ("merged_threads", "continued_in"):
        if old.get(key):
            fields[key] = old[key]
    return fields


def thread_title(messages: list[Parsed]) -> str:
    for m in messages:
        if m.subject.strip():
            return clean_subject(m.subject) or m.subject.strip()
    return "(no subject)"


def _sortable(value: str) -> str:
    try:
        return datetime.fromisoformat(value).astimezone().isoformat()
    except (ValueError, TypeError):
        return str(value)


def _direction(old: str | None, messages: list[Parsed], owner: Owner) -> str | None:
    """internal when every message is; sent when the owner sent any; else received/external."""
    if not owner.known:
        return None
    seen = {old} if old else set()
    for m in messages:
        sender = (m.sender.name, m.sender.address) if m.sender else (None, None)
        seen.add(owner.direction(sender, [(p.name, p.address) for p in
                                          [*m.to, *m.cc, *m.bcc]]))
    seen.discard(None)
    for value in (SENT, RECEIVED):
        if value in seen:
            return value
    if seen == {INTERNAL}:
        return INTERNAL
    return next(iter(sorted(seen - {INTERNAL})), None) or (INTERNAL if seen else None)
