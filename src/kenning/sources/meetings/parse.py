"""Meeting transcript readers: each input file becomes one or more :class:`Meeting` values.

Accepted inputs (detected by extension, then by content):

Speaker labels (``sam:``, ``jo-smith:``, ``Felix (Geth):``, ``Name | Org:``, ``SARAH CHEN:``,
``王小明：``) are read by :mod:`kenning.sources.meetings.labels`, which also says when a prefix
before a colon is speech, not a speaker. A turn keeps its label as written (``Turn.label``) and
names its person (``Turn.speaker``) and the organization the label names (``Turn.org``).

- **WebVTT** (``.vtt``): speaker from ``<v Name>`` voice spans (one turn per voice when a cue
  holds several), else a label at the start of a cue line (``- Name:`` / ``>> Name:`` caption
  markers too), else the previous cue's speaker. One turn per cue.
- **SRT** (``.srt``): as WebVTT, speaker from a ``Name:`` / ``[Name]`` prefix.
- **Plain text / Markdown** (``.txt``, ``.md``, ``.markdown``): ``Name: text``,
  ``[00:01:02] Name: text``, ``00:01:02 Name: text``, ``Name (00:01:02): text``,
  ``**Name:** text``, ``- **[00:01:02] Name:** text``, the two-line form ``Name  00:03`` (or
  ``Name - 00:03``) followed by the text (Teams, Otter, Fireflies TXT), and a time on a line of
  its own before a turn (Meet). Lines without a speaker continue the previous turn. Optional
  YAML frontmatter or leading ``Title:``/``Date:``/``Attendees:`` lines give metadata; a
  ``# Title`` heading gives the title; when the file has a ``## Transcript`` heading, the text
  before it is kept as notes.
- **QMSum JSON**: ``{"meeting_transcripts": [{"speaker", "content"}], "topic_list": [...]}``.
- **Fireflies JSON** (GraphQL ``transcript`` object, bare, in ``{"data": {"transcript": …}}``
  or a list of them): ``id``, ``title``, ``date`` (epoch ms or ISO), ``duration`` (minutes),
  ``organizer_email``, ``participants``, ``meeting_attendees [{displayName, email, name}]``,
  ``sentences [{index, speaker_name, text, start_time, end_time}]``, ``summary {overview,
  action_items}``.
- **Granola JSON**: the public API note (``{"id": "not_…", "object": "note", "title",
  "owner", "created_at", "calendar_event": {scheduled_start_time, scheduled_end_time},
  "attendees": [{name, email}], "summary_markdown", "transcript": [{speaker: {source,
  diarization_label}, text, start_time, end_time}]}``), a list of notes or ``{"notes": […]}``,
  and the common exporter form (``id, title, date, people, notes_markdown,
  transcript_segments [{speaker, text, start, end}]`` with times in milliseconds). Granola's
  ``microphone`` source is the note owner (or "Me"), ``speaker`` is "Them" unless diarized.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from kenning.sources.meetings import labels
from kenning.sources.meetings.labels import Label

TRANSCRIPT_SUFFIXES = (".vtt", ".srt", ".txt", ".md", ".markdown", ".json")
UNKNOWN = "Unknown"
LONG_PARAGRAPH = 2000  # characters: a longer unlabelled paragraph is split into its lines


class FormatError(ValueError):
    """The file is not a transcript of any accepted shape; the message says what was expected."""


@dataclass
class Turn:
    speaker: str  # the person's display name ("Jo Smith")
    text: str
    start: float | None = None  # seconds from the start of the recording
    label: str = ""  # the label as written, when it is not the name ("jo-smith", "Felix (Geth)")
    org: str | None = None  # organization the label names
    alias: str | None = None  # another name the label gives


@dataclass
class Meeting:
    source_format: str
    turns: list[Turn]
    title: str | None = None
    date: str | None = None  # YYYY-MM-DD
    start: datetime | None = None  # wall-clock start (aware when the export says so)
    end: datetime | None = None
    duration: float | None = None  # seconds
    attendees: list[tuple[str, str | None]] = field(default_factory=list)  # (name, email)
    organizer: str | None = None
    export_id: str | None = None
    notes: str = ""  # summary / notes from the export (Markdown)
    topics: list[str] = field(default_factory=list)
    # Per topic, the turn spans it covers (QMSum's relevant_text_span: 0-based, inclusive).
    topic_spans: list[list[list[int]]] = field(default_factory=list)
    no_speakers: bool = False
    warnings: list[str] = field(default_factory=list)  # what was repaired while reading


# -- entry point -------------------------------------------------------------------------------


def read_file(path: Path, raw: bytes | None = None) -> list[Meeting]:
    """Parse one file; raises :class:`FormatError` (wrong shape) or ``OSError``."""
    if raw is None:
        raw = path.read_bytes()
    text, note = _decode(raw)
    meetings = _read_text(path, text)
    if note:
        for meeting in meetings:
            meeting.warnings.insert(0, note)
    return meetings


def _read_text(path: Path, text: str) -> list[Meeting]:
    kind = sniff(path, text)
    if kind == "json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            if path.suffix.lower() != ".json":
                # "[00:00:05] Sarah: …" opens like a JSON array: a transcript named .txt/.md
                # that is no JSON is read as the text it is.
                return [read_text(text, markdown=path.suffix.lower() in (".md", ".markdown"))]
            raise FormatError(f"invalid JSON ({exc})") from None
        except RecursionError:
            raise FormatError("invalid JSON (nested too deeply to parse)") from None
        return read_json(data)
    if kind == "vtt":
        return [read_vtt(text)]
    if kind == "srt":
        return [read_srt(text)]
    return [read_text(text, markdown=path.suffix.lower() in (".md", ".markdown"))]


def sniff(path: Path, text: str) -> str:
    head = text.lstrip("\ufeff \t\r\n")[:200]
    if head.startswith("WEBVTT"):
        return "vtt"
    if re.match(r"\d+\s*\r?\n\s*\d{1,2}:\d{2}:\d{2}[,.]\d{1,3}\s*-->", head):
        return "srt"
    suffix = path.suffix.lower()
    if suffix == ".json" or head[:1] in ("{", "["):
        return "json"
    if suffix in (".vtt", ".srt"):
        return suffix[1:]
    return "text"


def _decode(raw: bytes) -> tuple[str, str | None]:
    """The text of a transcript (UTF-8, UTF-16 with a BOM, else Windows-1252), and a note
    when it was not UTF-8."""
    for encoding in ("utf-8-sig", "utf-16"):
        if encoding == "utf-16" and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        try:
            return raw.decode(encoding), None
        except UnicodeDecodeError:
            continue
    where = "a byte sequence"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = "line " + str(raw[: exc.start].count(b"\n") + 1)
    return (raw.decode("cp1252", errors="replace"),
            f"not valid UTF-8 (from {where}); read as Windows-1252")


# -- timestamps and dates ----------------------------------------------------------------------

_TS = r"(?:\d{1,2}:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?"


def parse_offset(value: str) -> float:
    parts = value.replace(",", ".").split(":")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return seconds


def parse_when(value: Any) -> datetime | None:
    """A date or date-time from ISO text, epoch seconds/milliseconds or free text."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 10_000_000_000 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    text = str(value).strip()
    if text.isdigit():
        return parse_when(int(text))
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    from dateutil import parser as date_parser  # installed with icalendar

    try:
        return date_parser.parse(text, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return None


def date_in_name(stem: str) -> tuple[str | None, str]:
    """(YYYY-MM-DD, the rest of the name) when the file name holds a date."""
    # The first run of digits that is a real date: "one-off-1954_2026-03-05_001" is 2026-03-05,
    # not the impossible 1954-20-26 its first digits would make.
    for m in re.finditer(r"(?=(?<!\d)(\d{4})[-_.]?(\d{2})[-_.]?(\d{2})(?!\d))", stem):
        try:
            found = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
        if not 1970 <= found.year <= 2100:
            continue
        end = m.end(3)
        rest = (stem[: m.start()] + " " + stem[end:]).strip(" _-.")
        return found.isoformat(), rest
    return None, stem


# -- speaker lines -----------------------------------------------------------------------------

# "[00:01:02] Name: text", "00:01:02 Name: text", "**Name:** text", "- **[00:01] Name:** text",
# "Name (00:01:02): text", "Name | Org: text", "王小明：text"; the text may be empty (it follows
# on the next lines). Whether the label is a speaker is decided by labels.score.
_TURN = re.compile(
    rf"""^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?
    (?:[\[(](?P<ts1>{_TS})[\])][ \t]*|(?P<ts2>{_TS})[ \t]+)?
    (?:\*\*)?(?P<name>[^\s:：*\[\]#>|`][^:：*#`]{{0,59}}?)
    (?:[ \t]*[\[(](?P<ts3>{_TS})[\])])?
    [ \t]*(?:\*\*)?(?::(?:\*\*)?(?:[ \t]+(?P<text>.*?))?|：(?:\*\*)?[ \t]*(?P<text2>.*?))[ \t]*$""",
    re.VERBOSE)
# "Name  0:03", "Name - 00:03", "[Name] 10:01:02" on a line of its own; the text follows.
_HEADER = re.compile(
    rf"^[ \t]*\[?(?P<name>[^\W\d][^:\[\]]{{0,59}}?)\]?[ \t]*(?:[-–|][ \t]*)?\(?(?P<ts>{_TS})\)?"
    r"[ \t]*$")
# A time on a line of its own (Meet, some Otter exports): the start of the next turn.
_LONE_TIME = re.compile(rf"^[ \t]*[\[(]?(?P<ts>{_TS})[\])]?[ \t]*$")


@dataclass(frozen=True)
class _Candidate:
    label: Label
    text: str
    start: float | None
    placed: bool  # where only a label can be: a cue's start, a "Name  0:03" line


def _candidate(line: str, *, placed: bool = False) -> _Candidate | None:
    """The label a line opens with, if it has a label's shape (evidence is weighed later)."""
    m = _TURN.match(line)
    if m:
        label = labels.parse(m.group("name"))
        if label is not None:
            ts = m.group("ts1") or m.group("ts2") or m.group("ts3")
            said = (m.group("text") or m.group("text2") or "").strip()
            return _Candidate(label, said, parse_offset(ts) if ts else None, placed)
    h = _HEADER.match(line)
    if h:
        label = labels.parse(h.group("name"))
        if label is not None:
            return _Candidate(label, "", parse_offset(h.group("ts")), True)
    return None


def _speakers(found: list[_Candidate | None]) -> set[str]:
    """The labels (folded raw text) of ``found`` that are speakers, by :func:`labels.score`."""
    counts: dict[str, int] = {}
    for c in found:
        if c is not None:
            key = c.label.raw.casefold()
            counts[key] = counts.get(key, 0) + 1

    def points(c: _Candidate, others: bool) -> int:
        return labels.score(c.label, repeats=counts[c.label.raw.casefold()] >= 2,
                            placed=c.placed, others=others)

    strong = {c.label.raw.casefold() for c in found if c is not None and points(c, False)
              >= labels.NEEDED}
    return {c.label.raw.casefold() for c in found if c is not None and points(
        c, bool(strong - {c.label.raw.casefold()})) >= labels.NEEDED}


def _turn(c: _Candidate, start: float | None = None) -> Turn:
    label = c.label
    return Turn(label.name, c.text, c.start if c.start is not None else start,
                label=label.raw if label.raw != label.name else "", org=label.org,
                alias=label.alias)


def match_turn(line: str) -> tuple[str, str, float | None] | None:
    """(speaker, text, start seconds) when ``line`` alone opens a speaker turn."""
    c = _candidate(line)
    if c is None or labels.score(c.label, repeats=False, placed=c.placed,
                                 others=False) < labels.NEEDED:
        return None
    return c.label.name, c.text, c.start


_META_KEYS = {
    "title": "title", "meeting": "title", "subject": "title", "topic": "title",
    "date": "date", "when": "date", "time": "time", "start": "start", "started": "start",
    "end": "end", "attendees": "attendees", "participants": "attendees", "people": "attendees",
    "invitees": "attendees", "duration": "duration", "organizer": "organizer",
    "organiser": "organizer", "host": "organizer", "id": "id", "meeting id": "id",
}


# -- plain text and Markdown -------------------------------------------------------------------


def read_text(text: str, *, markdown: bool = False) -> Meeting:
    from kenning.vault import frontmatter

    meeting = Meeting(source_format="markdown" if markdown else "text", turns=[])
    meta: dict[str, Any] = {}
    parsed = frontmatter.read(text)
    if parsed.data and parsed.error is None:
        meta.update({str(k).lower(): v for k, v in parsed.data.items()})
        text = text[parsed.body_offset:]
    lines = text.splitlines()
    # A "## Transcript" heading splits notes (before) from turns (after).
    split = next((i for i, line in enumerate(lines)
                  if re.match(r"^#{1,6}\s+(full\s+)?transcript\b", line.strip(), re.I)), None)
    notes: list[str] = []
    body = lines
    if split is not None:
        notes, body = lines[:split], lines[split + 1:]
    for i, line in enumerate(list(notes)):
        h1 = re.match(r"^#\s+(.+)$", line.strip())
        if h1 and "title" not in meta:
            meta["title"] = h1.group(1).strip()
            notes[i] = ""
    # First every line's label, then the evidence over the whole file (labels.score), then turns.
    found: list[_Candidate | None] = []
    opening = True  # before the first label: "Title:", "Date:" … lines are metadata
    for line in body:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or (opening and _meta_line(stripped)):
            found.append(None)
            continue
        found.append(_candidate(line))
        opening = opening and found[-1] is None
    speakers = _speakers(found)
    spoken = [c is not None and c.label.raw.casefold() in speakers for c in found]
    turns: list[Turn] = []
    preamble: list[str] = []
    paragraph_break = False
    pending: float | None = None  # a time on its own line, for the turn that follows it
    for i, line in enumerate(body):
        stripped = line.strip()
        if not stripped:
            paragraph_break = True
            continue
        if stripped.startswith("#"):
            h1 = re.match(r"^#\s+(.+)$", stripped)
            if h1 and "title" not in meta and not turns:
                meta["title"] = h1.group(1).strip()
            elif not turns:
                preamble.append(line)
            paragraph_break = True
            continue
        if not turns:
            key = _meta_line(stripped)
            if key is not None and key[0] not in meta:
                meta[key[0]] = key[1]
                continue
        lone = _LONE_TIME.match(line)
        if lone and _next_spoken(body, spoken, i):
            pending = parse_offset(lone.group("ts"))
            continue
        c = found[i]
        if c is not None and spoken[i]:
            turns.append(_turn(c, pending))
            pending = None
        elif turns:
            last = turns[-1]
            last.text = f"{last.text} {stripped}".strip()
        else:
            preamble.append(line if not paragraph_break or not preamble else "\n" + line)
        paragraph_break = False
    if not turns:
        # No speakers at all: one "Unknown" turn per paragraph, or per line when a paragraph
        # is longer than a turn should be (a transcript with one cue a line and no blank
        # lines is one paragraph: as one turn it was cut at the turn cap, losing the rest).
        meeting.no_speakers = True
        for para in re.split(r"\n\s*\n", "\n".join(line for line in body
                                                  if not line.strip().startswith("#"))):
            joined = " ".join(para.split())
            if len(joined) > LONG_PARAGRAPH and "\n" in para.strip():
                turns += [Turn(UNKNOWN, " ".join(line.split())) for line in para.split("\n")
                          if line.strip()]
            elif joined:
                turns.append(Turn(UNKNOWN, joined))
        preamble = []
    meeting.turns = [t for t in turns if t.text or t.speaker]
    meeting.notes = "\n".join([*notes, *preamble]).strip()
    _apply_meta(meeting, meta)
    lowered = json.dumps(meta, default=str).lower() + meeting.notes[:2000].lower()
    if markdown and "granola" in lowered:
        meeting.source_format = "granola-markdown"
    elif "fireflies" in lowered:
        meeting.source_format = "fireflies-markdown" if markdown else "fireflies-text"
        ff = re.search(r"app\.fireflies\.ai/view/[^\s)]*::([A-Za-z0-9]+)", meeting.notes)
        if ff and not meeting.export_id:
            meeting.export_id = f"fireflies:{ff.group(1)}"
    return meeting


def _next_spoken(body: list[str], spoken: list[bool], i: int) -> bool:
    """Whether the next non-blank line after ``i`` opens a turn."""
    for j in range(i + 1, len(body)):
        if body[j].strip():
            return spoken[j]
    return False


def _meta_line(line: str) -> tuple[str, str] | None:
    m = re.match(r"^(?:[-*][ \t]+)?(?:\*\*)?([A-Za-z][A-Za-z ]{0,20}?)(?:\*\*)?:(?:\*\*)?[ \t]+"
                 r"(.+)$", line)
    if not m:
        return None
    key = _META_KEYS.get(m.group(1).strip().lower())
    return (key, m.group(2).strip()) if key else None


def _apply_meta(meeting: Meeting, meta: dict[str, Any]) -> None:
    def first(*keys: str) -> Any:
        for key in keys:
            if meta.get(key) not in (None, "", []):
                return meta[key]
        return None

    title = first("title", "meeting", "subject")
    if title:
        meeting.title = str(title)
    when = parse_when(first("start", "date", "when", "created_at", "created"))
    clock = first("time")
    if when is not None:
        if clock and when.hour == when.minute == 0:
            joined = parse_when(f"{when.date().isoformat()} {str(clock).split('-')[0].strip()}")
            when = joined or when
        meeting.date = when.date().isoformat()
        if not _date_only(first("start", "date", "when", "created_at", "created")) or clock:
            meeting.start = when
    end = parse_when(first("end"))
    if end is not None and meeting.start is not None:
        meeting.end = end
    people = first("attendees", "participants", "people", "invitees")
    if isinstance(people, str):
        people = [p for p in re.split(r"[,;]\s*", people) if p.strip()]
    for person in people or []:
        meeting.attendees.append(_person(person))
    if first("organizer", "organiser", "host"):
        meeting.organizer = _person(first("organizer", "organiser", "host"))[0]
    duration = first("duration")
    if duration is not None:
        meeting.duration = _duration_seconds(duration)
    export_id = first("granola_id", "fireflies_id", "id", "meeting id")
    if export_id:
        meeting.export_id = str(export_id)


def _date_only(value: Any) -> bool:
    if isinstance(value, str):
        return bool(re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", value))
    return isinstance(value, date) and not isinstance(value, datetime)


def _duration_seconds(value: Any) -> float | None:
    if isinstance(value, int | float):
        return float(value) * 60  # exports give minutes
    text = str(value).strip().lower()
    if re.fullmatch(_TS, text):
        return parse_offset(text)
    total = 0.0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(h|hour|hours|m|min|mins|minutes?|s|sec)",
                                   text):
        total += float(amount) * {"h": 3600, "m": 60, "s": 1}[unit[0]]
    return total or None


def _person(value: Any) -> tuple[str, str | None]:
    if isinstance(value, dict):
        email = value.get("email") or value.get("address")
        name = (value.get("name") or value.get("displayName") or value.get("display_name")
                or email or "")
        return " ".join(str(name).split()), (str(email).strip().lower() if email else None)
    text = " ".join(str(value).split())
    m = re.match(r"^(.*?)\s*<([^<>@\s]+@[^<>\s]+)>$", text)
    if m:
        return m.group(1).strip().strip('"') or m.group(2), m.group(2).lower()
    if re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text):
        return text, text.lower()
    return text, None


# -- WebVTT and SRT ----------------------------------------------------------------------------


def read_vtt(text: str) -> Meeting:
    """A WebVTT transcript: one turn per cue (see :func:`cue_blocks` for broken timings)."""
    if not text.lstrip("\ufeff \t\r\n").startswith("WEBVTT"):
        raise FormatError("not a valid WebVTT file (it must start with WEBVTT)")
    meeting = Meeting(source_format="webvtt", turns=[])
    cues = cue_blocks(text, meeting.warnings)
    if not cues and "-->" not in text:
        raise FormatError("not a valid WebVTT file (no cues: no line with '-->')")
    _cues(meeting, cues)
    for note in re.findall(r"^NOTE[ \t]+(.+)$", text, re.MULTILINE):
        key = _meta_line(note.strip())
        if key and key[0] in ("title", "date", "attendees", "time", "start"):
            _apply_meta(meeting, {key[0]: key[1]})
    return meeting


def read_srt(text: str) -> Meeting:
    """An SRT transcript: one turn per cue, as WebVTT."""
    meeting = Meeting(source_format="srt", turns=[])
    cues = cue_blocks(text, meeting.warnings)
    if not cues:
        raise FormatError("not a valid SRT file (no cues: no line with '-->')")
    _cues(meeting, cues)
    return meeting


_CUE_TIME = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?$")
_NOT_CUES = ("WEBVTT", "NOTE", "STYLE", "REGION")


def _cue_time(value: str) -> float | None:
    """Seconds of a cue timestamp (``01:02:03.456``, ``02:03,4``), None when impossible."""
    m = _CUE_TIME.match(value.strip())
    if not m:
        return None
    hours, minutes, seconds = int(m[1] or 0), int(m[2]), int(m[3])
    if minutes > 59 or seconds > 59:
        return None
    millis = int(m[4].ljust(3, "0")) if m[4] else 0
    return (hours * 3600 + minutes * 60 + seconds) + millis / 1000


def cue_blocks(text: str, warnings: list[str]) -> list[tuple[str, float | None, float | None]]:
    """The cues of a WebVTT or SRT text as (text, start, end), every cue kept.

    A cue whose timing cannot be read (``99:99:99.999``, garbage) is kept without a time, one
    that ends before it starts keeps its start; ``warnings`` gets one line per kind saying
    how many and on which lines. (webvtt-py, used before, drops such cues silently.)
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    cues: list[tuple[str, float | None, float | None]] = []
    unreadable: list[int] = []
    backwards: list[int] = []
    block: list[tuple[int, str]] = []

    def flush() -> None:
        if not block:
            return
        first = block[0][1].lstrip("\ufeff").strip()
        if first.split(" ", 1)[0].split("\t", 1)[0] in _NOT_CUES:
            return
        timing = next((i for i, (_, line) in enumerate(block[:3]) if "-->" in line), None)
        if timing is None:
            return  # a cue number or identifier alone: no text to keep
        number, line = block[timing]
        left, _, right = line.partition("-->")
        start = _cue_time(left)
        end = _cue_time(right.strip().split(" ", 1)[0].split("\t", 1)[0]) if right.strip() \
            else None
        body = "\n".join(t for _, t in block[timing + 1:])
        if start is None or end is None:
            unreadable.append(number)
            end = end if start is not None and end is not None else start
        elif end < start:
            backwards.append(number)
            end = start
        cues.append((body, start, end))

    for number, line in enumerate(lines, 1):
        if line.strip():
            block.append((number, line))
        else:
            flush()
            block = []
    flush()
    if unreadable:
        warnings.append(f"{len(unreadable)} cue(s) with an unreadable or impossible timestamp "
                        f"(line {_line_list(unreadable)}) kept, without a time when the start "
                        "is unreadable")
    if backwards:
        warnings.append(f"{len(backwards)} cue(s) ending before they start (line "
                        f"{_line_list(backwards)}) kept with their start time")
    return cues


def _line_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    return shown + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


_VOICE = re.compile(r"<v(?:\.[\w.-]+)*[ \t]+([^>]+)>")
_TAG = re.compile(r"</?[a-z][^>]*>|</v>", re.IGNORECASE)


def _cues(meeting: Meeting, cues: list[tuple[str, float | None, float | None]]) -> None:
    """One turn per cue (per speaker when a cue holds several: ``<v A>…`` / ``- A: …`` lines);
    a cue without a label continues the previous cue's speaker."""
    # (cue number, cue start, the line's label, its text, whether a voice span names it)
    lines: list[tuple[int, float | None, _Candidate | None, str, bool]] = []
    for n, (raw, start, _stop) in enumerate(cues):
        for k, line in enumerate(raw.split("\n")):
            voice = _VOICE.search(line)
            plain = " ".join(_TAG.sub("", line).split())
            if voice:
                name = " ".join(voice.group(1).split())
                label = labels.parse(name) or Label(name, name, labels.NAME)
                lines.append((n, start, _Candidate(label, plain, None, True), plain, True))
                continue
            if not plain:
                continue
            marked = plain.startswith(("-", ">>"))
            bare = re.sub(r"^(?:-|>>)\s*", "", plain)
            found = _candidate(bare, placed=k == 0 or marked) or _bracket(bare)
            lines.append((n, start, found, plain, False))
    speakers = _speakers([c for _, _, c, _, voiced in lines if not voiced])
    speaker: Turn | None = None  # the last speaker, carried into unlabelled cues
    current: Turn | None = None
    named = False
    cue = -1
    for n, start, c, plain, voiced in lines:
        if c is not None and (voiced or c.label.raw.casefold() in speakers):
            current = _turn(c, start)
            speaker, named = current, True
            meeting.turns.append(current)
        elif n != cue or current is None:
            current = Turn(speaker.speaker if speaker else UNKNOWN, plain, start,
                           label=speaker.label if speaker else "",
                           org=speaker.org if speaker else None,
                           alias=speaker.alias if speaker else None)
            meeting.turns.append(current)
        else:
            current.text = f"{current.text} {plain}".strip()
        cue = n
    meeting.turns = [t for t in meeting.turns if t.text]
    stops = [stop for _, _, stop in cues if stop is not None]
    if meeting.turns and stops:
        meeting.duration = max(stops)
    if not named:
        meeting.no_speakers = True


def _bracket(text: str) -> _Candidate | None:
    m = re.match(r"^\[([^\]]{1,60})\]\s*(.+)$", text)
    label = labels.parse(m.group(1)) if m else None
    return _Candidate(label, m.group(2).strip(), None, True) if m and label else None


# -- JSON exports ------------------------------------------------------------------------------

EXPECTED_JSON = ("a QMSum transcript (meeting_transcripts: [{speaker, content}]), a Fireflies "
                 "transcript (sentences: [{speaker_name, text}]) or a Granola note (transcript: "
                 "[{speaker, text}] or transcript_segments)")


def read_json(data: Any) -> list[Meeting]:
    if isinstance(data, dict) and isinstance(data.get("data"), dict):
        inner = data["data"]
        data = inner.get("transcript") or inner.get("transcripts") or inner
    if isinstance(data, dict) and isinstance(data.get("notes"), list):
        data = data["notes"]
    if isinstance(data, dict) and isinstance(data.get("meetings"), list):
        data = data["meetings"]
    items = data if isinstance(data, list) else [data]
    meetings: list[Meeting] = []
    for item in items:
        if not isinstance(item, dict):
            raise FormatError(f"expected {EXPECTED_JSON}; found a list of "
                              f"{type(item).__name__}")
        if isinstance(item.get("meeting_transcripts"), list):
            meetings.append(_qmsum(item))
        elif isinstance(item.get("sentences"), list):
            meetings.append(_fireflies(item))
        elif isinstance(item.get("transcript"), list) or isinstance(
                item.get("transcript_segments"), list):
            meetings.append(_granola(item))
        else:
            keys = ", ".join(sorted(map(str, item))[:8]) or "no keys"
            raise FormatError(f"expected {EXPECTED_JSON}; found an object with {keys}")
    if not meetings:
        raise FormatError(f"expected {EXPECTED_JSON}; found an empty list")
    return meetings


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())


def _qmsum(item: dict[str, Any]) -> Meeting:
    turns = []
    for row in item["meeting_transcripts"]:
        if not isinstance(row, dict):
            continue
        turns.append(Turn(_text(row.get("speaker")) or UNKNOWN, _text(row.get("content"))))
    listed = [t for t in item.get("topic_list") or [] if isinstance(t, dict) and t.get("topic")]
    topics = [_text(t.get("topic")) for t in listed]
    spans = [[[int(a), int(b)] for a, b in (span for span in t.get("relevant_text_span") or []
                                             if isinstance(span, list) and len(span) == 2)
              if str(a).isdigit() and str(b).isdigit()] for t in listed]
    return Meeting(source_format="qmsum", turns=turns, topics=topics,
                   topic_spans=spans if any(spans) else [],
                   no_speakers=not any(t.speaker != UNKNOWN for t in turns))


def _fireflies(item: dict[str, Any]) -> Meeting:
    turns = []
    for row in item["sentences"]:
        if not isinstance(row, dict):
            continue
        start = row.get("start_time")
        try:
            offset = float(start) if start not in (None, "") else None
        except (TypeError, ValueError):
            offset = None
        turns.append(Turn(_text(row.get("speaker_name")) or UNKNOWN,
                          _text(row.get("text") or row.get("raw_text")), offset))
    meeting = Meeting(source_format="fireflies-json", turns=turns,
                      title=_text(item.get("title")) or None,
                      export_id=f"fireflies:{item['id']}" if item.get("id") else None)
    when = parse_when(item.get("date") or item.get("dateString"))
    if when is not None:
        meeting.start, meeting.date = when, when.date().isoformat()
    if isinstance(item.get("duration"), int | float):
        meeting.duration = float(item["duration"]) * 60  # Fireflies gives minutes
        if meeting.start is not None:
            meeting.end = meeting.start + timedelta(seconds=meeting.duration)
    for person in item.get("meeting_attendees") or []:
        meeting.attendees.append(_person(person))
    for address in item.get("participants") or []:
        for part in str(address).split(","):
            if part.strip():
                meeting.attendees.append(_person(part.strip()))
    if item.get("organizer_email"):
        meeting.organizer = str(item["organizer_email"]).lower()
    summary = item.get("summary") if isinstance(item.get("summary"), dict) else {}
    notes = []
    if summary.get("overview"):
        notes.append(f"**Overview:** {summary['overview']}".strip())
    actions = summary.get("action_items")
    if actions:
        if isinstance(actions, list):
            actions = "\n".join(f"- {a}" for a in actions)
        notes.append(f"**Action items:**\n\n{actions}".strip())
    meeting.notes = "\n\n".join(notes)
    meeting.no_speakers = not any(t.speaker != UNKNOWN for t in turns)
    return meeting


def _granola(item: dict[str, Any]) -> Meeting:
    owner = item.get("owner") if isinstance(item.get("owner"), dict) else {}
    me = _text(owner.get("name")) or "Me"
    event = item.get("calendar_event") if isinstance(item.get("calendar_event"), dict) else {}
    rows = item.get("transcript") if isinstance(item.get("transcript"), list) else \
        item.get("transcript_segments") or []
    stamps: list[datetime | float | None] = []
    speakers: list[str] = []
    texts: list[str] = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        who = row.get("speaker")
        if isinstance(who, dict):
            label = _text(who.get("diarization_label") or who.get("name"))
            name = label or (me if who.get("source") == "microphone" else "Them")
        else:
            source = row.get("source")
            name = _text(who) or (me if source == "microphone" else "Them" if source else "")
        start = row.get("start_time", row.get("start", row.get("start_timestamp")))
        if isinstance(start, int | float):
            stamps.append(start / 1000 if "transcript_segments" in item else float(start))
        else:
            stamps.append(parse_when(start))
        speakers.append(name or UNKNOWN)
        texts.append(_text(row.get("text")))
    absolute = [s for s in stamps if isinstance(s, datetime)]
    t0 = min(absolute) if absolute else None
    turns = []
    for name, said, stamp in zip(speakers, texts, stamps, strict=True):
        if isinstance(stamp, datetime) and t0 is not None:
            offset: float | None = (stamp - t0).total_seconds()
        elif isinstance(stamp, float):
            offset = stamp
        else:
            offset = None
        turns.append(Turn(name, said, offset))
    meeting = Meeting(source_format="granola-json", turns=turns,
                      title=_text(item.get("title") or event.get("event_title")) or None,
                      export_id=f"granola:{item['id']}" if item.get("id") else None)
    start = parse_when(event.get("scheduled_start_time")) or t0 or parse_when(
        item.get("date") or item.get("created_at"))
    if start is not None:
        meeting.start, meeting.date = start, start.date().isoformat()
    end = parse_when(event.get("scheduled_end_time"))
    if end is not None:
        meeting.end = end
    for person in item.get("attendees") or item.get("people") or []:
        meeting.attendees.append(_person(person))
    for person in event.get("invitees") or []:
        meeting.attendees.append(_person(person))
    if event.get("organiser") or event.get("organizer"):
        meeting.organizer = _person(event.get("organiser") or event.get("organizer"))[0]
    notes = item.get("summary_markdown") or item.get("notes_markdown") or item.get(
        "summary_text") or item.get("summary") or ""
    meeting.notes = str(notes).strip()
    meeting.no_speakers = not any(t.speaker != UNKNOWN for t in turns)
    return meeting
