"""Calendars (``.ics``) into ``sources/calendar/``: one Markdown file per event series.

**One file per series, one entry per occurrence.** An event is keyed by its UID (the source id);
a recurring event's occurrences inside the sync window (``--since``, default one year ago;
``--until``, default 90 days ahead) are the file's entries, one line each, keyed by their start.
A person looking up "the weekly sync" finds one page with its attendees, description and every
date it took place, instead of fifty near-identical files; moved instances (RECURRENCE-ID) are
marked "moved from …", cancelled ones "cancelled", and EXDATEs are left out. A later sync with a
later window appends the new occurrences; nothing already written is rewritten.

Frontmatter: ``title`` (SUMMARY), ``date`` (the series' first DTSTART), ``start``/``end``
(ISO 8601 with offset; dates for all-day events), ``all_day``, ``timezone``, ``organizer``
(name, address), ``attendees`` (name, address, role, partstat), ``location``, ``status``,
``uid``, ``recurrence`` (RRULE text), ``occurrences`` (count written), ``first_occurrence``,
``last_occurrence``, ``calendar_file``; with an owner configured, ``owner_role`` (organizer,
attendee or none) and ``direction`` (sent = the owner organizes, received, internal, external).

**Meeting links.** After every calendar or meetings sync, :func:`link_sources` pairs meeting
transcripts with events: same date, start within 30 minutes when both times are known, and a
fuzzy title match (difflib ratio or word overlap ≥ 0.6). The event file gets ``meeting:
"[[sources/meetings/<file>]]"`` (a list when several occurrences of a series have
transcripts) and the meeting file ``event: "[[sources/calendar/<file>]]"``. Only frontmatter
is written, through the store, and only when it changes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from kenning.sources.owner import Owner
from kenning.sources.store import (
    Entry,
    Progress,
    SourceDoc,
    SourceStore,
    SyncError,
    SyncReport,
)

CONNECTOR = "calendar"
MEETINGS = "meetings"
DESCRIPTION_CAP = 8000
SAVE_EVERY = 500  # events; the state holds every occurrence, so saves are not free
DEFAULT_PAST = timedelta(days=365)
DEFAULT_AHEAD = timedelta(days=90)
LINK_TOLERANCE = timedelta(minutes=30)
TITLE_THRESHOLD = 0.6
# A series writes at most this many occurrences per sync window (a daily meeting is 455 in the
# default window): FREQ=SECONDLY or MINUTELY would otherwise write millions of lines, or never
# finish. The rule is walked lazily from DTSTART for at most EXPANSION_STEPS occurrences to
# find where the cap falls, so no series costs more than that however it repeats.
MAX_OCCURRENCES = 2000
EXPANSION_STEPS = 200_000


def sync(root: Path, target: Path | str, *, progress: Progress | None = None,
         since: str | date | None = None, until: str | date | None = None,
         today: date | None = None) -> SyncReport:
    """Sync one ``.ics`` file or every ``.ics`` file under a folder."""
    report = SyncReport(CONNECTOR)
    target = Path(target)
    today = today or datetime.now(UTC).date()
    start = _day(since, "--since") or today - DEFAULT_PAST
    end = _day(until, "--until") or today + DEFAULT_AHEAD
    if end <= start:
        raise SyncError(f"--until ({end}) must be after --since ({start})")
    files = [target] if target.is_file() else sorted(
        p for p in target.rglob("*") if p.is_file() and p.suffix.lower() == ".ics")
    if not files:
        report.warn(str(target), "no .ics files found")
        return report
    owner = Owner.load(root)
    outside = 0
    with SourceStore(root, CONNECTOR) as store:
        if store.load_warning:
            report.warnings.append(store.load_warning)
        written = 0
        for n, path in enumerate(files, 1):
            where = path.name if target.is_file() else path.relative_to(target).as_posix()
            if progress and len(files) > 1:
                progress(n - 1, len(files), where)
            try:
                raw = path.read_bytes()
            except OSError as exc:
                report.warn(where, f"cannot read ({exc.strerror or exc})")
                continue
            # The same file, window and owner as last time, every source file still there:
            # nothing can change, so the file is not expanded again (warnings are repeated).
            key = str(path.resolve())
            stamp = hashlib.sha256(raw + f"|{start}|{end}|{owner.fingerprint}".encode()).hexdigest()
            seen = store.input_unchanged(key, stamp, report)
            if seen is not None:
                outside += seen.get("outside", 0)
                continue
            first_warning, read_before, file_outside = len(report.warnings), report.items_read, 0
            sources: list[str] = []
            for doc, slots in _read_calendar(raw, where, start, end, report, owner, store,
                                             progress if len(files) == 1 else None):
                if doc is None:
                    file_outside += 1
                    continue
                doc.origin = f"{where}#{doc.source_id}"
                store.put(doc, report)
                _remember_slots(store, doc, slots)
                sources.append(doc.source_id)
                written += 1
                if written % SAVE_EVERY == 0:
                    store.save()
            outside += file_outside
            store.remember_input(key, stamp, sources, read=report.items_read - read_before,
                                 warnings=report.warnings[first_warning:], outside=file_outside)
        if progress:
            progress(len(files), len(files), "")
    if outside and not (report.created or report.appended or report.unchanged):
        report.warn(str(target), f"{outside} event(s) have no occurrence between {start} and "
                                 f"{end}; use --since/--until to widen the window")
    link_sources(root, report)
    return report


def _day(value: str | date | None, option: str) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return datetime.fromisoformat(str(value).strip().replace("Z", "+00:00")).date()
    except ValueError:
        raise SyncError(f"{option}: expected a date like 2026-01-31, got {value!r}") from None


# -- reading -----------------------------------------------------------------------------------


Slot = tuple[str, str, bool]  # (start ISO, end ISO, all day)


def _read_calendar(raw: bytes, where: str, start: date, end: date, report: SyncReport,
                   owner: Owner, store: SourceStore, progress: Progress | None = None
                   ) -> Iterable[tuple[SourceDoc | None, list[Slot]]]:
    import icalendar
    import recurring_ical_events

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # iCalendar is UTF-8 by definition; older exporters write their code page instead.
        report.warn(where, f"not valid UTF-8 (byte {exc.start}); read as Windows-1252")
        text = raw.decode("cp1252", errors="replace")
    try:
        calendars = icalendar.Calendar.from_ical(text, multiple=True)  # a file may hold several
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        report.warn(where, f"not a valid iCalendar file ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:160]})")
        return
    if not calendars:
        report.warn(where, "no VCALENDAR in the file")
        return
    for cal in calendars:
        try:
            # Google's X-WR-TIMEZONE: UTC times meant in the calendar's zone.
            import x_wr_timezone  # installed with recurring-ical-events

            cal = x_wr_timezone.to_standard(cal)
        except ImportError:
            pass
        except Exception as exc:
            report.warn(where, f"X-WR-TIMEZONE not applied ({type(exc).__name__}: {exc})")
        timezones = list(cal.walk("VTIMEZONE"))
        groups: dict[str, list[Any]] = {}
        counts: dict[str, int] = {}  # warnings of a kind so far (see WARN_EACH)
        for n, event in enumerate(cal.walk("VEVENT"), 1):
            report.items_read += 1
            uid = str(event.get("UID") or "").strip()
            if not uid:
                when = event.get("DTSTART")
                basis = f"{event.get('SUMMARY')}|{when.to_ical().decode() if when else n}"
                digest = hashlib.sha1(basis.encode("utf-8", "surrogatepass")).hexdigest()
                uid = "nouid-" + digest[:12]
                _warn_some(report, counts, f"{where}#event {n}", f"no UID; keyed as {uid}",
                           "no UID")
            groups.setdefault(uid, []).append(event)
        _warn_rest(report, where, counts)
        for done, (uid, events) in enumerate(groups.items()):
            item = f"{where}#{uid}"
            if progress and done % 50 == 0:
                progress(done, len(groups), item)
            master = next((e for e in events if e.get("RECURRENCE-ID") is None), events[0])
            if master.get("DTSTART") is None:
                _warn_some(report, counts, item, "event has no DTSTART; skipped", "no DTSTART")
                continue
            one = icalendar.Calendar()
            for tz in timezones:
                one.add_component(tz)
            for event in events:
                one.add_component(event)
            stop, too_early = _capped_end(master, start, end)
            if too_early:
                # Every occurrence in the window lies more than EXPANSION_STEPS repeats after
                # DTSTART: the series is kept, with what it is, but not expanded.
                note = (f"repeats more than {EXPANSION_STEPS:,} times before {start} "
                        f"({_rule_text(master)}); not expanded")
                report.warn(item, note)
                doc, slots = _build(uid, master, [], where, owner, store)
                doc.header = _with_note(doc.header, f"*Occurrences not listed: the series "
                                                    f"{note}.*")
                yield doc, slots
                continue
            try:
                occurrences = list(recurring_ical_events.of(one).between(start, stop or end))
            except Exception as exc:  # a broken RRULE or date in this event only
                report.warn(item, f"cannot expand the event ({type(exc).__name__}: {exc}); "
                                  "skipped")
                continue
            if not occurrences:
                yield None, []
                continue
            occurrences.sort(key=lambda e: _sort_key(e.get("DTSTART").dt))
            capped = stop is not None or len(occurrences) > MAX_OCCURRENCES
            occurrences = occurrences[:MAX_OCCURRENCES]
            doc, slots = _build(uid, master, occurrences, where, owner, store)
            if capped:
                last = _iso(occurrences[-1].get("DTSTART").dt)
                note = (f"repeats more than {MAX_OCCURRENCES:,} times between {start} and {end}; "
                        f"the first {MAX_OCCURRENCES:,} (to {last}) are listed, the rest are "
                        "in the .ics file")
                report.warn(item, note)
                doc.header = _with_note(doc.header, f"*Occurrences capped: the series {note}.*")
            yield doc, slots
        _warn_rest(report, where, counts)


# Warnings of one kind shown per file before they are counted instead (a file of 50,000 events
# without a UID gets 20 lines and a count, not 50,000 lines).
WARN_EACH = 20


def _warn_some(report: SyncReport, counts: dict[str, int], where: str, message: str,
               kind: str) -> None:
    counts[kind] = counts.get(kind, 0) + 1
    if counts[kind] <= WARN_EACH:
        report.warn(where, message)


def _warn_rest(report: SyncReport, where: str, counts: dict[str, int]) -> None:
    for kind, count in counts.items():
        if count > WARN_EACH:
            report.warn(where, f"{count - WARN_EACH:,} more event(s) with {kind}")
    counts.clear()


def _with_note(header: str, note: str) -> str:
    """``header`` with ``note`` as a paragraph before its ``## Occurrences`` heading."""
    head, sep, tail = header.rpartition("## Occurrences")
    return f"{head}{note}\n\n{sep}{tail}" if sep else f"{header}\n\n{note}"


def _rule_text(event: Any) -> str:
    return "; ".join(r.to_ical().decode() for r in _as_list(event.get("RRULE")))


def _capped_end(master: Any, start: date, end: date) -> tuple[date | datetime | None, bool]:
    """Where to stop expanding a series so that at most :data:`MAX_OCCURRENCES` of its rules'
    occurrences fall between ``start`` and the stop (None: the whole window is fine), and
    whether the window lies more than :data:`EXPANSION_STEPS` occurrences after DTSTART.

    Each rule is walked lazily (dateutil), step by step, so this costs at most
    EXPANSION_STEPS steps; recurring-ical-events then expands only up to the stop. UNTIL is
    applied here, not by dateutil, which refuses an UNTIL whose time zone form differs from
    DTSTART's (recurring-ical-events repairs that, and would then expand without a bound).
    """
    import heapq
    import itertools

    rules = _as_list(master.get("RRULE"))
    if not rules:
        return None, False
    first = master.get("DTSTART").dt
    dated = not isinstance(first, datetime)
    first_dt = datetime(first.year, first.month, first.day) if dated else first
    zone = first_dt.tzinfo
    lo = datetime(start.year, start.month, start.day, tzinfo=zone)
    hi = datetime(end.year, end.month, end.day, tzinfo=zone)
    walks = [w for w in (_walk(r.to_ical().decode(), first_dt) for r in rules) if w is not None]
    if not walks:
        return None, False  # no rule dateutil can read alone: the full expander decides
    inside = steps = 0
    when = first_dt
    try:
        for when in itertools.islice(heapq.merge(*walks), EXPANSION_STEPS):
            steps += 1
            if when >= hi:
                return None, False
            if when >= lo:
                inside += 1
                if inside > MAX_OCCURRENCES:
                    return (when.date() if dated else when), False
    except (ValueError, TypeError, OverflowError):
        return None, False
    if steps < EXPANSION_STEPS:
        return None, False  # the rules ended (COUNT, UNTIL) before the window's end
    if inside == 0:
        return None, True
    return (when.date() if dated else when), False


_UNTIL = re.compile(r"(?:^|;)UNTIL=([^;]*)", re.IGNORECASE)


def _walk(rule: str, first: datetime) -> Iterator[datetime] | None:
    """The occurrences of one RRULE from ``first`` on, lazily (None when dateutil cannot
    read it)."""
    import itertools

    from dateutil.rrule import rrulestr

    m = _UNTIL.search(rule)
    until = _until(m[1], first) if m else None
    text = _UNTIL.sub("", rule).strip(";")
    try:
        occurrences = iter(rrulestr(text, dtstart=first))
    except (ValueError, TypeError, OverflowError):
        return None
    if until is None:
        return occurrences
    return itertools.takewhile(lambda when: when <= until, occurrences)


def _until(value: str, first: datetime) -> datetime | None:
    """An RRULE's UNTIL as a time comparable with ``first`` (aware or naive like it)."""
    value = value.strip().upper()
    for pattern in ("%Y%m%dT%H%M%SZ", "%Y%m%dT%H%M%S", "%Y%m%d"):
        try:
            until = datetime.strptime(value, pattern)
        except ValueError:
            continue
        if pattern.endswith("Z"):
            until = until.replace(tzinfo=UTC)
            return until if first.tzinfo else until.replace(tzinfo=None)
        if pattern == "%Y%m%d":
            until = until.replace(hour=23, minute=59, second=59)
        return until.replace(tzinfo=first.tzinfo)
    return None


def _sort_key(value: date | datetime) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return value.strftime("%Y-%m-%dT%H:%M:%S")
    return value.isoformat() + "T00:00:00"


def _build(uid: str, master: Any, occurrences: list[Any], where: str, owner: Owner,
           store: SourceStore) -> tuple[SourceDoc, list[Slot]]:
    title = _text(master.get("SUMMARY")) or "(no title)"
    dtstart = master.get("DTSTART").dt
    dtend = _end(master)
    all_day = not isinstance(dtstart, datetime)
    organizer = _address(master.get("ORGANIZER"))
    attendees = [_attendee(a) for a in _as_list(master.get("ATTENDEE"))]
    entries: list[Entry] = []
    slots: list[Slot] = []
    for occ in occurrences:
        o_start = occ.get("DTSTART").dt
        o_end = _end(occ)
        key = _iso(o_start)
        rid = occ.get("RECURRENCE-ID")
        moved = rid is not None and _iso(rid.dt) != key
        if moved:
            key += f" (moved from {_iso(rid.dt)})"
        entries.append(Entry(key, _occurrence_line(occ, o_start, o_end, master, rid if moved
                                                   else None)))
        slots.append((_iso(o_start), _iso(o_end), not isinstance(o_start, datetime)))
    fields: dict[str, Any] = {
        "start": _iso(dtstart),
        "end": _iso(dtend),
        "all_day": all_day,
        "timezone": _tzname(dtstart),
        "organizer": organizer,
        "attendees": attendees,
        "location": _text(master.get("LOCATION")),
        "status": _text(master.get("STATUS")).lower() or None,
        "uid": uid,
        "recurrence": master.get("RRULE").to_ical().decode() if master.get("RRULE") else None,
        "calendar_file": where,
    }
    record = store.known(uid)
    keys = set(record["keys"]) if record else set()
    keys.update(e.key for e in entries)
    starts = sorted({k.split(" ", 1)[0] for k in keys})
    fields["occurrences"] = len(keys)
    if starts:
        fields["first_occurrence"], fields["last_occurrence"] = starts[0], starts[-1]
    if owner.known:
        people = [(a.get("name"), a.get("address")) for a in attendees]
        org = (organizer or {}).get("name"), (organizer or {}).get("address")
        if organizer and owner.is_owner(org[1], org[0]):
            fields["owner_role"] = "organizer"
        elif any(owner.is_owner(a, n) for n, a in people):
            fields["owner_role"] = "attendee"
        else:
            fields["owner_role"] = "none"
        fields["direction"] = owner.direction(org, people) if organizer else None
    doc = SourceDoc(kind="calendar", source_id=uid, title=title,
                    date=(dtstart if all_day else dtstart.date()).isoformat(),
                    entries=entries, fields=fields,
                    header=_header(master, dtstart, dtend, organizer, attendees))
    return doc, slots


def _end(event: Any) -> date | datetime:
    start = event.get("DTSTART").dt
    if event.get("DTEND") is not None:
        return event.get("DTEND").dt
    if event.get("DURATION") is not None:
        return start + event.get("DURATION").dt
    return start + timedelta(days=1) if not isinstance(start, datetime) else start


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _address(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    address = re.sub(r"^mailto:", "", str(value).strip(), flags=re.IGNORECASE).strip()
    name = _text(getattr(value, "params", {}).get("CN"))
    out = {"name": name, "address": address.lower() if "@" in address else address}
    return {k: v for k, v in out.items() if v} or None


def _attendee(value: Any) -> dict[str, str]:
    person = _address(value) or {}
    params = getattr(value, "params", {})
    for key, param in (("role", "ROLE"), ("partstat", "PARTSTAT")):
        if params.get(param):
            person[key] = str(params[param]).lower()
    return person


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _iso(value: date | datetime) -> str:
    if isinstance(value, datetime):
        return value.replace(microsecond=0).isoformat()
    return value.isoformat()


def _tzname(value: date | datetime) -> str | None:
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    return getattr(value.tzinfo, "key", None) or getattr(value.tzinfo, "zone", None) or \
        value.tzname()


def _when(start: date | datetime, end: date | datetime) -> str:
    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if isinstance(end, date) and end > start else start
        if last > start:
            return f"{start.isoformat()} {start:%a} – {last.isoformat()} {last:%a} (all day)"
        return f"{start.isoformat()} {start:%a} (all day)"
    zone = _tzname(start)
    label = f" ({zone})" if zone else ""
    if isinstance(end, datetime) and end.date() == start.date():
        return f"{start:%Y-%m-%d %a %H:%M}–{end:%H:%M}{label}"
    if isinstance(end, datetime) and end > start:
        return f"{start:%Y-%m-%d %a %H:%M} – {end:%Y-%m-%d %a %H:%M}{label}"
    return f"{start:%Y-%m-%d %a %H:%M}{label}"


def _occurrence_line(occ: Any, start: date | datetime, end: date | datetime, master: Any,
                     moved_from: Any) -> str:
    notes = []
    if moved_from is not None:
        rid = moved_from.dt
        notes.append("moved from " + (f"{rid:%Y-%m-%d %H:%M}" if isinstance(rid, datetime)
                                      else rid.isoformat()))
    if _text(occ.get("STATUS")).upper() == "CANCELLED":
        notes.append("cancelled")
    title = _text(occ.get("SUMMARY"))
    if title and title != _text(master.get("SUMMARY")):
        notes.append(f"“{title}”")
    place = _text(occ.get("LOCATION"))
    if place and place != _text(master.get("LOCATION")):
        notes.append(f"at {place}")
    return "- " + _when(start, end) + "".join(f" — {n}" for n in notes)


def _header(master: Any, start: date | datetime, end: date | datetime,
            organizer: dict[str, str] | None, attendees: list[dict[str, str]]) -> str:
    lines = [f"**When:** {_when(start, end)}"]
    if master.get("RRULE"):
        lines[0] += f", repeating ({master.get('RRULE').to_ical().decode()})"
    if _text(master.get("LOCATION")):
        lines.append(f"**Where:** {_text(master.get('LOCATION'))}")
    if organizer:
        lines.append(f"**Organizer:** {_person(organizer)}")
    if attendees:
        # Replies (PARTSTAT) change often: they are in the frontmatter, which is kept current.
        lines.append("**Attendees:** " + ", ".join(_person(a) for a in attendees))
    blocks = ["  \n".join(lines)]
    description = _description(master)
    if description:
        blocks.append("## Description\n\n" + description)
    blocks.append("## Occurrences")
    return "\n\n".join(blocks)


def _person(p: dict[str, str]) -> str:
    name, address = p.get("name"), p.get("address")
    if name and address and name.lower() != address:
        return f"{name} <{address}>"
    return name or address or "?"


_HTML = re.compile(r"<(?:p|br|div|span|a|b|i|ul|ol|li|table|html|body|strong|em)\b", re.I)


def _description(event: Any) -> str:
    text = str(event.get("DESCRIPTION") or "")
    html = ""
    for key, value in event.items():
        if key.upper() == "X-ALT-DESC" and str(getattr(value, "params", {}).get(
                "FMTTYPE", "")).lower() == "text/html":
            html = str(value)
    if not text.strip() and html:
        text = html
    if _HTML.search(text):
        from markdownify import markdownify

        text = markdownify(text, heading_style="ATX", bullets="-")
    text = re.sub(r"[ \t]+\n", "\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    # The description's own headings must not look like this file's sections.
    text = re.sub(r"^(#{1,6})\s", lambda m: "#" * max(3, len(m.group(1))) + " ", text,
                  flags=re.MULTILINE)
    if len(text) > DESCRIPTION_CAP:
        text = (text[:DESCRIPTION_CAP].rstrip() + f"\n\n*(description cut at "
                f"{DESCRIPTION_CAP:,} characters; the rest is in the .ics file)*")
    return text


def _remember_slots(store: SourceStore, doc: SourceDoc, slots: list[Slot]) -> None:
    """Occurrence times for :func:`link_sources`, kept in the connector's cursors."""
    known = store.state["cursors"].get("events", {}).get(doc.source_id) or {}
    merged = sorted({tuple(s) for s in known.get("slots", [])} | set(slots))
    record = {"title": doc.title, "slots": [list(s) for s in merged]}
    if known != record:
        store.cursors.setdefault("events", {})[doc.source_id] = record


# -- linking events and meeting transcripts ----------------------------------------------------


def link_sources(root: Path, report: SyncReport | None = None) -> int:
    """Link meeting files and event files of the same date, time and title (both ways).

    Returns the number of files whose frontmatter changed.
    """
    cal = SourceStore(root, CONNECTOR)
    events = cal.state["cursors"].get("events") or {}
    meet = SourceStore(root, MEETINGS)
    if not events or not meet.state["sources"]:
        return 0
    by_day: dict[str, list[tuple[str, datetime | None, datetime | None]]] = {}
    for sid, info in events.items():
        if not cal.known(sid):
            continue
        for s, e, all_day in info.get("slots", []):
            if all_day:
                day, last = date.fromisoformat(s[:10]), date.fromisoformat(e[:10])
                while True:
                    by_day.setdefault(day.isoformat(), []).append((sid, None, None))
                    day += timedelta(days=1)
                    if day >= last:
                        break
            else:
                by_day.setdefault(s[:10], []).append((sid, _parse(s), _parse(e)))
    meeting_link: dict[str, str] = {}
    event_links: dict[str, set[str]] = {}
    index = meet.state["cursors"].get("index") or {}
    for msid, record in meet.state["sources"].items():
        fm = index.get(msid) or meet.existing_fields(msid)
        day = str(fm.get("date") or "")[:10]
        if not day:
            continue
        m_start = _parse(fm.get("start"))
        title = str(fm.get("title") or "")
        candidates = [(c, True) for c in by_day.get(day, [])]
        if m_start is not None:
            # Times in different zones can fall on neighbouring dates: the time decides.
            d = date.fromisoformat(day)
            for other in (d - timedelta(days=1), d + timedelta(days=1)):
                candidates += [(c, False) for c in by_day.get(other.isoformat(), [])
                               if c[1] is not None]
        best: tuple[float, float, str] | None = None
        for (esid, e_start, e_end), same_day in candidates:
            score = title_similarity(title, events[esid].get("title", ""))
            if score < TITLE_THRESHOLD:
                continue
            distance = 0.0
            if not same_day and m_start is None:
                continue
            if m_start is not None and e_start is not None:
                a, b = _comparable(m_start, e_start)
                _, c = _comparable(m_start, e_end or e_start)
                if not (b - LINK_TOLERANCE <= a <= max(c, b + LINK_TOLERANCE)):
                    continue
                distance = abs((a - b).total_seconds())
            candidate = (score, -distance, esid)
            if best is None or candidate[:2] > best[:2]:
                best = candidate
        if best is None:
            continue
        esid = best[2]
        meeting_link[msid] = _wikilink(cal.known(esid)["path"])
        event_links.setdefault(esid, set()).add(_wikilink(record["path"]))
    changed = 0
    for msid, link in meeting_link.items():
        changed += _set_fields(meet, msid, {"event": link})
    for esid, links in event_links.items():
        current = cal.existing_fields(esid).get("meeting")
        merged = set(links)
        for old in current if isinstance(current, list) else [current]:
            if isinstance(old, str) and old.startswith("[["):
                merged.add(old)
        ordered = sorted(merged)
        changed += _set_fields(cal, esid, {"meeting": ordered[0] if len(ordered) == 1
                                           else ordered})
    meet.save()
    cal.save()
    return changed


def _wikilink(path: str) -> str:
    return "[[" + (path[:-3] if path.endswith(".md") else path) + "]]"


def _set_fields(store: SourceStore, source_id: str, fields: dict[str, Any]) -> int:
    """Set frontmatter keys on an existing source file through the store (body untouched)."""
    current = store.existing_fields(source_id)
    if not current or all(current.get(k) == v for k, v in fields.items()):
        return 0
    doc = SourceDoc(kind=str(current.get("kind") or ""), source_id=source_id,
                    title=str(current.get("title") or ""), date=None, entries=[],
                    fields=fields, complete=False)  # frontmatter only: never a re-render
    scratch = SyncReport(store.connector)
    store.put(doc, scratch)
    return scratch.appended


def _parse(value: Any) -> datetime | None:
    if not value or not isinstance(value, str) or "T" not in value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _comparable(a: datetime, b: datetime) -> tuple[datetime, datetime]:
    """Aware with aware; a naive (floating, local) time is compared on the wall clock."""
    if (a.tzinfo is None) == (b.tzinfo is None):
        return a, b
    return a.replace(tzinfo=None), b.replace(tzinfo=None)


_STOP = frozenset("a an the and or of with for to on in at meeting call re fw".split())


def title_similarity(a: str, b: str) -> float:
    """0..1: difflib ratio of the normalized titles, or word overlap when both have 2+ words."""
    ta = [w for w in re.findall(r"\w+", a.lower()) if w not in _STOP]
    tb = [w for w in re.findall(r"\w+", b.lower()) if w not in _STOP]
    if not ta or not tb:
        return 0.0
    ratio = SequenceMatcher(None, " ".join(ta), " ".join(tb)).ratio()
    sa, sb = set(ta), set(tb)
    overlap = len(sa & sb) / (min(len(sa), len(sb)) if min(len(sa), len(sb)) >= 2
                              else len(sa | sb))
    return max(ratio, overlap)
