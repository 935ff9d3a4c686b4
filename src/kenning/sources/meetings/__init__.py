"""Meeting transcripts into ``sources/meetings/``: one Markdown file per meeting.

Formats and their shapes are listed in :mod:`kenning.sources.meetings.parse`.

**Source id.** The export's own id when it has one (``granola:<id>``, ``fireflies:<id>``);
else ``meeting:<date>:<title slug>`` (title from the metadata or the file name, date from the
metadata or the file name); else — no date anywhere — ``meeting:<title slug>:<hash of the first
three turns>``. None of these depend on the file's bytes as a whole, so a re-export of the same
meeting with more turns appends the new turns to the same file instead of starting a new one.

**Date.** From the export's metadata, else a date in the file name (``2026-03-02 Weekly
sync.vtt``). A file's modification time is *not* used (copies and checkouts change it, and a
wrong date is worse than none): a transcript with no date gets none, and a warning says how to
give it one.

**Body.** One line per speaker turn, ``- **[00:01:02] Name:** text`` (``- **Name:** text`` when
the transcript has no times), keyed by the turn's position, so a citation ``path#L12-L14``
points at exact turns. Consecutive turns by one speaker stay separate. A turn longer than
:data:`TURN_CAP` characters is cut with a note saying so.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.sources.meetings.labels import is_marker
from kenning.sources.meetings.parse import (
    TRANSCRIPT_SUFFIXES,
    UNKNOWN,
    FormatError,
    Meeting,
    Turn,
    date_in_name,
    read_file,
)
from kenning.sources.owner import Owner
from kenning.sources.store import Entry, Progress, SourceDoc, SourceStore, SyncReport, slugify

CONNECTOR = "meetings"
# The renderer version (see SourceStore): 2 reads speaker labels as people write them
# ("sam:", "Name | Org:"); files written by 1 are re-rendered from their input on the next sync.
RENDERER = 2
TURN_CAP = 4000
NOTES_CAP = 8000
SAVE_EVERY = 200
# Speaker labels that are not people: kept as speakers, never listed as attendees.
_GENERIC = re.compile(r"^(?:unknown|them|me|you|speaker|spk|participant|guest|other|q|a|zoom user|"
                      r"interviewer|interviewee)(?:[\s_-]*\d+)?$", re.IGNORECASE)

__all__ = ["CONNECTOR", "TURN_CAP", "FormatError", "build_doc", "sync"]


def sync(root: Path, target: Path | str, *, progress: Progress | None = None) -> SyncReport:
    """Sync one transcript file or every transcript under a folder (recursively)."""
    report = SyncReport(CONNECTOR)
    target = Path(target)
    files = _discover(target)
    if not files:
        report.warn(str(target), "no transcript files found (looked for "
                                 + ", ".join(TRANSCRIPT_SUFFIXES) + ")")
        return report
    owner = Owner.load(root)
    with SourceStore(root, CONNECTOR, renderer=RENDERER) as store:
        if store.load_warning:
            report.warnings.append(store.load_warning)
        for n, path in enumerate(files, 1):
            where = _where(path, target)
            if progress:
                progress(n - 1, len(files), where)
            try:
                raw = path.read_bytes()
            except OSError as exc:
                report.warn(where, f"cannot read ({exc.strerror or exc})")
                continue
            # An input file read before, unchanged, whose sources are all still in the vault,
            # is not parsed again (its warnings are repeated).
            key = str(path.resolve())
            stamp = hashlib.sha256(raw + owner.fingerprint.encode()).hexdigest()
            if store.input_unchanged(key, stamp, report) is not None:
                continue
            first_warning = len(report.warnings)
            written: list[str] = []
            try:
                meetings = read_file(path, raw)
            except FormatError as exc:
                report.warn(where, str(exc))
                meetings = []
            except (TypeError, ValueError, AttributeError, KeyError, IndexError,
                    RecursionError) as exc:
                # A shape no reader expected: this file is skipped, the folder's others sync.
                report.warn(where, f"could not be read ({type(exc).__name__}: "
                                   f"{' '.join(str(exc).split())[:160]}); skipped")
                meetings = []
            for i, meeting in enumerate(meetings):
                item = where if len(meetings) == 1 else f"{where}#meeting {i + 1}"
                report.items_read += 1
                for warning in meeting.warnings:
                    report.warn(item, warning)
                doc = build_doc(meeting, path, item, report, owner=owner, store=store)
                if doc is not None:
                    doc.origin = item
                    store.put(doc, report)
                    _remember(store, doc)
                    written.append(doc.source_id)
            store.remember_input(key, stamp, written, read=len(meetings),
                                 warnings=report.warnings[first_warning:])
            if n % SAVE_EVERY == 0:
                store.save()
        if progress:
            progress(len(files), len(files), "")
    from kenning.sources.calendar import link_sources

    link_sources(root, report)
    return report


def _remember(store: SourceStore, doc: SourceDoc) -> None:
    """Title, date and start of each meeting, so linking need not read every meeting file."""
    entry = {"title": doc.title, "date": doc.date, "start": doc.fields.get("start")}
    if store.state["cursors"].get("index", {}).get(doc.source_id) != entry:
        store.cursors.setdefault("index", {})[doc.source_id] = entry


def _discover(target: Path) -> list[Path]:
    if target.is_file():
        return [target]
    if not target.is_dir():
        return []
    return sorted(p for p in target.rglob("*")
                  if p.is_file() and p.suffix.lower() in TRANSCRIPT_SUFFIXES
                  and not any(part.startswith(".") for part in p.relative_to(target).parts))


def _where(path: Path, target: Path) -> str:
    if target.is_dir():
        return f"{target.name}/{path.relative_to(target).as_posix()}"
    return path.name


def build_doc(meeting: Meeting, path: Path, where: str, report: SyncReport, *,
              owner: Owner | None = None, store: SourceStore | None = None) -> SourceDoc | None:
    """The source file content for one parsed meeting (None when it has nothing to write)."""
    turns = [t for t in meeting.turns if t.text]
    if not turns:
        report.warn(where, "no speaker turns found; nothing written")
        return None
    if meeting.no_speakers:
        report.warn(where, "no speaker names found; written as 'Unknown' turns, "
                           "one per paragraph or cue")
    name_date, name_rest = date_in_name(path.stem)
    title = meeting.title or _title_from_name(name_rest) or "Meeting"
    day = meeting.date or name_date
    if meeting.export_id:
        source_id = meeting.export_id if ":" in meeting.export_id else f"export:{meeting.export_id}"
    elif day:
        source_id = f"meeting:{day}:{slugify(title)}"
    else:
        opening = "\n".join(f"{t.speaker}: {t.text}" for t in turns[:3])
        digest = hashlib.sha1(opening.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        source_id = f"meeting:{slugify(title)}:{digest}"
        report.warn(where, "no date in the metadata or the file name; the meeting has no date "
                           "(start the file name with YYYY-MM-DD to give it one)")

    _one_name_per_person(turns)
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    attendees, emails = _attendees(meeting, speakers)
    labels, orgs, aliases = _label_fields(turns)
    # A file an older renderer wrote is rendered afresh: its fields are not merged in.
    previous = store.existing_fields(source_id) if store is not None and not store.stale(
        source_id) else {}
    if previous:
        attendees = _union(previous.get("attendees"), attendees)
        speakers = _union(previous.get("speakers"), speakers)
        old_emails = previous.get("attendee_emails")
        if isinstance(old_emails, dict):
            emails = {**old_emails, **emails}
        for key, new in (("speaker_labels", labels), ("speaker_organizations", orgs),
                         ("speaker_aliases", aliases)):
            old = previous.get(key)
            if isinstance(old, dict):
                new.update({k: v for k, v in old.items() if k not in new})
    duration = meeting.duration
    if duration is None and meeting.start and meeting.end:
        duration = (meeting.end - meeting.start).total_seconds()
    if duration is None and any(t.start is not None for t in turns):
        duration = max(t.start or 0 for t in turns)
    fields: dict[str, Any] = {
        "start": _iso(meeting.start),
        "end": _iso(meeting.end),
        "duration": _hms(duration) if duration else None,
        "attendees": attendees,
        "attendee_emails": emails or None,
        "organizer": meeting.organizer,
        "speakers": speakers,
        "speaker_labels": labels or None,
        "speaker_organizations": orgs or None,
        "speaker_aliases": aliases or None,
        "turns": max(len(turns), _int(previous.get("turns"))),
        "source_format": meeting.source_format,
        "original_file": path.name,
        "topic_list": meeting.topics or None,
        "topic_turns": meeting.topic_spans or None,
    }
    if day and not meeting.date:
        fields["date_source"] = "file name"
    if owner is not None and owner.known:
        fields["owner_attended"] = any(
            owner.is_owner(emails.get(a), a) for a in attendees) or any(
            owner.is_owner(e) for e in emails.values())
    entries = [Entry(str(i), turn_line(t)) for i, t in enumerate(turns, 1)]
    return SourceDoc(kind="meeting", source_id=source_id, title=title, date=day,
                     entries=entries, fields=fields,
                     header=_header(meeting, day, path))


def turn_line(turn: Turn) -> str:
    """``- **[00:01:02] Label:** text`` on one line, the label as the transcript wrote it
    (``stokes``, ``Felix (Geth)``); very long turns are cut with a note."""
    stamp = f"[{_hms(turn.start)}] " if turn.start is not None else ""
    speaker = " ".join((turn.label or turn.speaker).replace("*", "").split()) or UNKNOWN
    text = " ".join(turn.text.split())
    if len(text) > TURN_CAP:
        text = (text[:TURN_CAP].rstrip() + f" … *(turn cut at {TURN_CAP:,} of {len(text):,} "
                "characters; the rest is in the original file)*")
    return f"- **{stamp}{speaker}:** {text}"


def _header(meeting: Meeting, day: str | None, path: Path) -> str:
    when = day or "date unknown"
    if meeting.start is not None:
        when = meeting.start.strftime("%Y-%m-%d %H:%M")
        if meeting.end is not None:
            when += "–" + meeting.end.strftime("%H:%M")
        if meeting.start.tzinfo is not None:
            when += " " + (meeting.start.tzname() or "")
    # The header is written once; what a re-export can change (attendees, length) lives in
    # the frontmatter, which is kept current.
    blocks = [f"**When:** {when.strip()} · **From:** "
              f"{_FORMAT_NAMES.get(meeting.source_format, meeting.source_format)} `{path.name}`"]
    if meeting.notes:
        notes = meeting.notes.strip()
        if len(notes) > NOTES_CAP:
            notes = notes[:NOTES_CAP].rstrip() + (f"\n\n*(notes cut at {NOTES_CAP:,} characters;"
                                                  " the rest is in the original file)*")
        blocks.append("## Notes (from the export)\n\n" + notes)
    if meeting.topics:
        blocks.append("## Topics\n\n" + "\n".join(f"- {t}" for t in meeting.topics))
    if meeting.no_speakers:
        blocks.append("*The transcript names no speakers: each paragraph or cue is one turn, "
                      "attributed to Unknown.*")
    blocks.append("## Transcript")
    return "\n\n".join(blocks)


_FORMAT_NAMES = {"webvtt": "WebVTT", "srt": "SRT", "text": "plain transcript",
                 "markdown": "Markdown transcript", "qmsum": "QMSum JSON",
                 "fireflies-json": "Fireflies JSON", "fireflies-markdown": "Fireflies Markdown",
                 "fireflies-text": "Fireflies text", "granola-json": "Granola JSON",
                 "granola-markdown": "Granola Markdown"}


def _attendees(meeting: Meeting, speakers: list[str]) -> tuple[list[str], dict[str, str]]:
    names: dict[str, str] = {}
    emails: dict[str, str] = {}
    by_email: dict[str, str] = {}
    for name, email in meeting.attendees:
        if not name:
            continue
        if email and email in by_email:
            # The same address under a second label: keep the better (non-address) name.
            known = by_email[email]
            if "@" in known and "@" not in name:
                names.pop(known.casefold(), None)
                emails.pop(known, None)
            else:
                continue
        names.setdefault(name.casefold(), name)
        if email:
            emails[name] = email
            by_email[email] = name
    for speaker in speakers:
        if not _GENERIC.match(speaker) and not is_marker(speaker):
            names.setdefault(speaker.casefold(), speaker)
    return list(names.values()), emails


def _one_name_per_person(turns: list[Turn]) -> None:
    """"potuz" and "Potuz", "Marius van der Wijden" and "Marius Van Der Wijden": one speaker,
    named as first written."""
    first: dict[str, str] = {}
    for t in turns:
        t.speaker = first.setdefault(t.speaker.casefold(), t.speaker)


def _label_fields(turns: list[Turn]) -> tuple[dict[str, str], dict[str, str],
                                                dict[str, list[str]]]:
    """The labels that are not the speaker's name ({label: name}), the organization each
    speaker's label names ({name: organization}) and other names the labels give."""
    labels: dict[str, str] = {}
    orgs: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    for t in turns:
        if _GENERIC.match(t.speaker) or is_marker(t.speaker):
            continue
        if t.label:
            labels.setdefault(t.label, t.speaker)
        if t.org:
            orgs.setdefault(t.speaker, t.org)
        for other in (t.alias, t.label if t.label and " " not in t.label else None):
            if other and other.casefold() != t.speaker.casefold() and other not in \
                    aliases.get(t.speaker, []):
                aliases.setdefault(t.speaker, []).append(other)
    return labels, orgs, aliases


def _union(old: Any, new: list[str]) -> list[str]:
    merged: dict[str, str] = {}
    for value in [*(old if isinstance(old, list) else []), *new]:
        merged.setdefault(str(value).casefold(), str(value))
    return list(merged.values())


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.replace(microsecond=0).isoformat()


def _hms(seconds: float | None) -> str:
    total = int(seconds or 0)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


def _title_from_name(rest: str) -> str:
    rest = rest.strip(" _-.")
    if not rest:
        return ""
    if " " not in rest:
        rest = re.sub(r"[_-]+", " ", rest)
    return " ".join(rest.replace("_", " ").split())
