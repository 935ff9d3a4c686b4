"""Meeting pages that carry their state: topics from the source, calendar events as meetings.

**Topics** (``## Topics`` on a meeting page, one line each, cited ``path#Lstart-Lend``):

- the headings of a notes export (``## Notes (from the export)`` in the source: Granola's
  ``### Pricing``, a Markdown export's sections), each from its heading to the line before the
  next heading; headings that hold items rather than a subject (Action items, Next steps,
  Decisions, To do, Follow-ups) are not topics (the items pages read them);
- the topic list of a QMSum-style export (``topic_list``), each cited at the transcript turns its
  spans cover (``topic_turns``), else at its line in the source's ``## Topics`` list.

A transcript with neither gets no ``## Topics``: topics made up from word counts over turn
windows read as noise on real calls (see docs/decisions.md), so the page says nothing rather than
something wrong.

**Calendar events** are meetings: a one-off event (one occurrence) makes a meeting page like a
transcript does, its organizer and attendees on it; an event and a transcript linked by sync
(``meeting:`` on the event, ``event:`` on the transcript) are one page citing both. A recurring
series is one page (``meetings/<title>.md``) with a line per occurrence; its transcripts keep
their own dated pages, each citing its occurrence.
"""

from __future__ import annotations

import re
from typing import Any

TOPICS = "## Topics"
_NOTES = "## Notes (from the export)"
_OWN_HEADINGS = frozenset({"## Topics", "## Transcript"})
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_TURN = re.compile(r"^- \*\*")
_NOT_TOPICS = re.compile(
    r"^(?:action[ -]?items?|next[ -]steps?|decisions?(?: made)?|to[ -]?dos?|todo|follow[ -]?ups?"
    r"|tasks?|notes?|summary|overview|attendees|participants|agenda)\b[\s:]*$", re.IGNORECASE)
_LINK = re.compile(r"\[\[([^\]|#]+)")
_OCCURRENCE = re.compile(r"^- (\d{4}-\d{2}-\d{2})\b(.*)$")


def _clean(text: str) -> str:
    """A heading as one line of page text (the build's own cleaning, emphasis marks off)."""
    from kenning.builder.pages import _clean as clean

    return clean(text).strip("*_ ")


def topics(lines: list[str], body_start: int, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(topic, ``#Lstart-Lend`` anchor) for a meeting source's lines (see the module docstring)."""
    out: list[tuple[str, str]] = []
    notes_at = topics_at = transcript_at = None
    for n in range(body_start, len(lines) + 1):
        line = lines[n - 1].rstrip("\r")
        if line == _NOTES and notes_at is None:
            notes_at = n
        elif line in _OWN_HEADINGS:
            if line == TOPICS and topics_at is None:
                topics_at = n
            elif line == "## Transcript":
                transcript_at = n
                break
    end_notes = min(x for x in (topics_at, transcript_at, len(lines) + 1) if x is not None)
    if notes_at is not None:
        heads = []
        for n in range(notes_at + 1, end_notes):
            m = _HEADING.match(lines[n - 1].rstrip("\r"))
            if m:
                heads.append((n, _clean(m.group(2))))
        for i, (n, title) in enumerate(heads):
            last = (heads[i + 1][0] if i + 1 < len(heads) else end_notes) - 1
            while last > n and not lines[last - 1].strip():
                last -= 1
            if title and not _NOT_TOPICS.match(title):
                out.append((title, f"#L{n}-L{last}"))
    names = [str(t) for t in data.get("topic_list") or [] if t]
    if names:
        spans = data.get("topic_turns") if isinstance(data.get("topic_turns"), list) else []
        turn_lines = [n for n in range((transcript_at or body_start) + 1, len(lines) + 1)
                      if _TURN.match(lines[n - 1])]
        listed: dict[str, int] = {}
        if topics_at is not None:
            for n in range(topics_at + 1, (transcript_at or len(lines) + 1)):
                line = lines[n - 1].rstrip("\r")
                if line.startswith("- "):
                    listed.setdefault(" ".join(line[2:].split()), n)
        for i, name in enumerate(names):
            anchors = []
            for span in spans[i] if i < len(spans) and isinstance(spans[i], list) else []:
                try:
                    a, b = int(span[0]), int(span[1])
                except (TypeError, ValueError, IndexError):
                    continue
                if 0 <= a <= b and b < len(turn_lines):
                    anchors.append(f"#L{turn_lines[a]}-L{turn_lines[b]}")
            if not anchors and " ".join(name.split()) in listed:
                n = listed[" ".join(name.split())]
                anchors.append(f"#L{n}-L{n}")
            for anchor in anchors[:3]:  # a topic spread over many spans: its first three
                out.append((_clean(name), anchor))
    return out


def occurrences(lines: list[str], body_start: int) -> list[tuple[str, int, str]]:
    """(date, line, what follows the time) of each line under a calendar source's
    ``## Occurrences``."""
    out = []
    inside = False
    for n in range(body_start, len(lines) + 1):
        line = lines[n - 1].rstrip("\r")
        if line.startswith("## "):
            inside = line == "## Occurrences"
            continue
        if inside:
            m = _OCCURRENCE.match(line)
            if m:
                rest = m.group(2)
                note = rest.split(" — ", 1)[1].strip() if " — " in rest else ""
                out.append((m.group(1), n, note))
    return out


def linked_sources(value: Any) -> tuple[str, ...]:
    """Source paths (``sources/…md``) of a ``meeting:``/``event:`` frontmatter value."""
    items = value if isinstance(value, list) else [value] if value else []
    out = []
    for item in items:
        m = _LINK.search(str(item))
        if m:
            path = m.group(1).strip()
            out.append(path if path.endswith(".md") else path + ".md")
    return tuple(dict.fromkeys(out))


def topic_lines(source: str, found: list[tuple[str, str]]) -> list[str]:
    """The ``## Topics`` lines for ``found`` topics of ``source``: ``- Topic [source:: …]``,
    one line a topic (several spans of one topic on one line)."""
    base = source[:-3] if source.endswith(".md") else source
    grouped: dict[str, list[str]] = {}
    for name, anchor in found:
        grouped.setdefault(name, []).append(f"[source:: [[{base}{anchor}]]]")
    return [f"- {name} " + " ".join(cites) for name, cites in grouped.items()]


def set_topics(text: str, lines: list[str], rec: dict[str, Any]) -> str:
    """``text`` with ``lines`` as its ``## Topics`` section (before ``## Timeline``, else at the
    end) while that section is missing or still exactly what the build last wrote (``rec``,
    the page's build state, key ``topics``); a section a person edited stays theirs."""
    if not lines:
        return text
    nl = "\r\n" if "\r\n" in text else "\n"
    rows = text.split("\n")
    body = [r.rstrip("\r") for r in rows]
    at = next((i for i, r in enumerate(body) if r == TOPICS), None)
    last = rec.get("topics")
    if at is not None:
        end = next((i for i in range(at + 1, len(body)) if body[i].startswith(("# ", "## "))),
                   len(body))
        current = [r for r in body[at + 1:end] if r.strip()]
        if current == lines:
            rec["topics"] = lines
            return text
        if last is None or current != last:
            return text  # a person's section
        keep_blank = end < len(body)
        new = [TOPICS, "", *lines] + ([""] if keep_blank else [])
        out = body[:at] + new + body[end:]
    else:
        if last is not None:
            return text  # the build wrote it once and a person removed it
        block = [TOPICS, "", *lines, ""]
        tl = next((i for i, r in enumerate(body) if r == "## Timeline"), None)
        if tl is None:
            while body and not body[-1].strip():
                body.pop()
            out = [*body, "", *block]
        else:
            out = body[:tl] + block + body[tl:]
    rec["topics"] = lines
    joined = nl.join(out)
    return joined if joined.endswith(nl) else joined + nl
