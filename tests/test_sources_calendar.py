"""Calendars → sources/calendar/: recurrence in a window, all-day and TZID events, attendees,
owner roles, idempotence, bad input, and links between events and meeting transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_sources_meetings import _read, _snapshot

from kenning.api import Vault
from kenning.cli import main
from kenning.sources.calendar import title_similarity

WINDOW = ["--since", "2026-01-01", "--until", "2026-06-01"]

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Kenning tests//EN
BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:STANDARD
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
END:DAYLIGHT
END:VTIMEZONE
BEGIN:VEVENT
UID:weekly-sync-1@kestrel.dev
SUMMARY:Weekly sync
DTSTART;TZID=Europe/Berlin:20260302T100000
DTEND;TZID=Europe/Berlin:20260302T103000
RRULE:FREQ=WEEKLY;COUNT=6
EXDATE;TZID=Europe/Berlin:20260309T100000
LOCATION:Room 4
ORGANIZER;CN=Alex Morgan:mailto:alex@kestrel.dev
ATTENDEE;CN=Sarah Chen;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED:mailto:sarah@horizon.vc
ATTENDEE;CN=Luis Ortega;ROLE=OPT-PARTICIPANT;PARTSTAT=TENTATIVE:mailto:luis@kestrel.dev
DESCRIPTION:<p>Agenda:</p><ul><li><b>Launch</b> date</li><li>Hiring</li></ul>
END:VEVENT
BEGIN:VEVENT
UID:weekly-sync-1@kestrel.dev
RECURRENCE-ID;TZID=Europe/Berlin:20260316T100000
SUMMARY:Weekly sync
DTSTART;TZID=Europe/Berlin:20260317T140000
DTEND;TZID=Europe/Berlin:20260317T143000
END:VEVENT
BEGIN:VEVENT
UID:offsite-2026@kestrel.dev
SUMMARY:Team offsite
DTSTART;VALUE=DATE:20260310
DTEND;VALUE=DATE:20260312
DESCRIPTION:Two days in Lisbon.\\nBring laptops.
END:VEVENT
BEGIN:VEVENT
UID:board-q1@kestrel.dev
SUMMARY:Board meeting
DTSTART;TZID=America/New_York:20260401T090000
DTEND;TZID=America/New_York:20260401T110000
ORGANIZER;CN=Sarah Chen:mailto:sarah@horizon.vc
ATTENDEE;CN=Alex Morgan;PARTSTAT=NEEDS-ACTION:mailto:alex@kestrel.dev
STATUS:CONFIRMED
END:VEVENT
END:VCALENDAR
"""


def _sync(root: Path, kind: str, target: Path, *extra: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", kind, str(target), *extra,
                                       "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _occurrences(body: str) -> list[str]:
    return [line for line in body.split("## Occurrences", 1)[1].splitlines()
            if line.startswith("- ")]


def _ics(tmp_path: Path, text: str = ICS, name: str = "work.ics") -> Path:
    path = tmp_path / "cal" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("\n", "\r\n"), encoding="utf-8")
    return path


def test_recurring_all_day_and_timezone_events(vault: Vault, tmp_path: Path) -> None:
    report = _sync(vault.root, "calendar", _ics(tmp_path), *WINDOW)
    assert report["created"] == 3 and report["warnings"] == [] and report["items_read"] == 4
    folder = vault.root / "sources/calendar"
    assert sorted(p.name for p in folder.iterdir()) == [
        "2026-03-02-weekly-sync.md", "2026-03-10-team-offsite.md", "2026-04-01-board-meeting.md"]

    data, body = _read(folder / "2026-03-02-weekly-sync.md")
    assert data["source_id"] == data["uid"] == "weekly-sync-1@kestrel.dev"
    assert data["start"] == "2026-03-02T10:00:00+01:00"
    assert data["end"] == "2026-03-02T10:30:00+01:00"
    assert data["timezone"] == "Europe/Berlin" and data["all_day"] is False
    assert data["recurrence"] == "FREQ=WEEKLY;COUNT=6"
    assert data["organizer"] == {"name": "Alex Morgan", "address": "alex@kestrel.dev"}
    assert data["attendees"] == [
        {"name": "Sarah Chen", "address": "sarah@horizon.vc", "role": "req-participant",
         "partstat": "accepted"},
        {"name": "Luis Ortega", "address": "luis@kestrel.dev", "role": "opt-participant",
         "partstat": "tentative"}]
    assert data["location"] == "Room 4" and data["occurrences"] == 5
    assert data["first_occurrence"] == "2026-03-02T10:00:00+01:00"
    assert data["last_occurrence"] == "2026-04-06T10:00:00+02:00"  # summer time
    # EXDATE 03-09 is left out; the 03-16 instance moved to Tuesday afternoon.
    assert _occurrences(body) == [
        "- 2026-03-02 Mon 10:00–10:30 (Europe/Berlin)",
        "- 2026-03-17 Tue 14:00–14:30 (Europe/Berlin) — moved from 2026-03-16 10:00",
        "- 2026-03-23 Mon 10:00–10:30 (Europe/Berlin)",
        "- 2026-03-30 Mon 10:00–10:30 (Europe/Berlin)",
        "- 2026-04-06 Mon 10:00–10:30 (Europe/Berlin)",
    ]
    assert "- **Launch** date" in body and "<li>" not in body  # HTML description → Markdown
    assert "**Attendees:** Sarah Chen <sarah@horizon.vc>, Luis Ortega <luis@kestrel.dev>" in body

    data, body = _read(folder / "2026-03-10-team-offsite.md")
    assert data["all_day"] is True and data["start"] == "2026-03-10" and data["end"] == "2026-03-12"
    assert _occurrences(body) == ["- 2026-03-10 Tue – 2026-03-11 Wed (all day)"]
    assert "Two days in Lisbon.\nBring laptops." in body

    data, body = _read(folder / "2026-04-01-board-meeting.md")
    assert data["start"] == "2026-04-01T09:00:00-04:00" and data["timezone"] == "America/New_York"
    assert data["status"] == "confirmed" and "owner_role" not in data  # no owner configured


def test_window_limits_expansion_and_a_wider_window_appends(vault: Vault, tmp_path: Path) -> None:
    ics = _ics(tmp_path)
    report = _sync(vault.root, "calendar", ics, "--since", "2026-03-01", "--until", "2026-03-20")
    assert report["created"] == 2  # the board meeting in April is outside the window
    path = vault.root / "sources/calendar/2026-03-02-weekly-sync.md"
    data, body = _read(path)
    assert data["occurrences"] == 2 and len(_occurrences(body)) == 2

    snap = _snapshot(vault.root)
    again = _sync(vault.root, "calendar", ics, "--since", "2026-03-01", "--until", "2026-03-20")
    assert again["unchanged"] == 2 and again["created"] == again["appended"] == 0
    assert _snapshot(vault.root) == snap  # no byte, no mtime

    wider = _sync(vault.root, "calendar", ics, *WINDOW)
    assert wider["created"] == 1 and wider["appended"] == 1 and wider["entries_added"] == 4
    data, after = _read(path)
    assert after.startswith(body.rstrip("\n")) and data["occurrences"] == 5
    assert data["last_occurrence"] == "2026-04-06T10:00:00+02:00"


def test_nothing_in_the_window_says_so(vault: Vault, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["-C", str(vault.root), "sync", "calendar",
                                       str(_ics(tmp_path)), "--since", "2020-01-01",
                                       "--until", "2020-12-31", "--json"])
    assert result.exit_code == 1
    (warning,) = json.loads(result.stdout)["warnings"]
    assert "3 event(s) have no occurrence between 2020-01-01 and 2020-12-31" in warning


def test_owner_roles_and_direction(vault: Vault, tmp_path: Path) -> None:
    config = vault.root / ".kenning/config.yaml"
    config.write_text(config.read_text() + "owner:\n  names: [Alex Morgan]\n"
                      "  emails: [alex@kestrel.dev]\n  domains: [kestrel.dev]\n")
    _sync(vault.root, "calendar", _ics(tmp_path), *WINDOW)
    data, _ = _read(vault.root / "sources/calendar/2026-03-02-weekly-sync.md")
    assert data["owner_role"] == "organizer" and data["direction"] == "sent"
    data, _ = _read(vault.root / "sources/calendar/2026-04-01-board-meeting.md")
    assert data["owner_role"] == "attendee" and data["direction"] == "received"


def test_a_broken_calendar_warns_and_others_land(vault: Vault, tmp_path: Path) -> None:
    _ics(tmp_path)
    _ics(tmp_path, "BEGIN:VCALENDAR\nthis is not ical\n", name="broken.ics")
    _ics(tmp_path, ICS.replace("RRULE:FREQ=WEEKLY;COUNT=6", "RRULE:FREQ=SOMETIMES"),
         name="bad-rule.ics")
    _ics(tmp_path, "", name="empty.ics")
    one = ("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:{uid}\nSUMMARY:{uid}\n"
           "DTSTART:20260305T090000Z\nEND:VEVENT\nEND:VCALENDAR\n")
    _ics(tmp_path, one.format(uid="first") + one.format(uid="second"), name="two.ics")
    report = _sync(vault.root, "calendar", tmp_path / "cal", *WINDOW)
    warnings = "\n".join(report["warnings"])
    assert "broken.ics: not a valid iCalendar file" in warnings
    assert "bad-rule.ics#weekly-sync-1@kestrel.dev" in warnings
    assert "empty.ics: no VCALENDAR in the file" in warnings
    assert len(report["warnings"]) == 3
    # work.ics whole, the other events of bad-rule.ics (same UIDs), both calendars of two.ics
    assert report["created"] == 5


MEETING_VTT = """WEBVTT

00:00:02.000 --> 00:00:05.000
<v Sarah Chen>Launch moves to April.

00:00:06.000 --> 00:00:08.000
<v Alex Morgan>Agreed.
"""

GRANOLA_BOARD = {
    "id": "not_board0000000001", "object": "note", "title": "Q1 board meeting",
    "calendar_event": {"scheduled_start_time": "2026-04-01T13:05:00Z",
                       "scheduled_end_time": "2026-04-01T15:00:00Z"},
    "transcript": [{"speaker": {"source": "microphone"}, "text": "Revenue is up.",
                    "start_time": "2026-04-01T13:06:00Z", "end_time": "2026-04-01T13:06:04Z"}],
}


def _meetings(tmp_path: Path) -> Path:
    folder = tmp_path / "meetings"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "2026-03-23 weekly sync.vtt").write_text(MEETING_VTT, encoding="utf-8")
    (folder / "2026-03-23 Vendor call.vtt").write_text(MEETING_VTT, encoding="utf-8")
    (folder / "board.json").write_text(json.dumps(GRANOLA_BOARD), encoding="utf-8")
    late = dict(GRANOLA_BOARD, id="not_board0000000002", title="Board meeting prep",
                calendar_event={"scheduled_start_time": "2026-04-01T18:00:00Z"})
    (folder / "late.json").write_text(json.dumps(late), encoding="utf-8")
    return folder


def _check_links(root: Path) -> None:
    event, _ = _read(root / "sources/calendar/2026-03-02-weekly-sync.md")
    meeting, _ = _read(root / "sources/meetings/2026-03-23-weekly-sync.md")
    assert event["meeting"] == "[[sources/meetings/2026-03-23-weekly-sync]]"
    assert meeting["event"] == "[[sources/calendar/2026-03-02-weekly-sync]]"
    # Same date, different title: not linked.
    vendor, _ = _read(root / "sources/meetings/2026-03-23-vendor-call.md")
    assert "event" not in vendor
    # Granola note in UTC, event in New York time: 13:05Z is 09:05 EDT, within 30 minutes.
    board, _ = _read(root / "sources/calendar/2026-04-01-board-meeting.md")
    assert board["meeting"] == "[[sources/meetings/2026-04-01-q1-board-meeting]]"
    # 18:00Z is 14:00 EDT, an hour after the board meeting ended: not linked.
    prep, _ = _read(root / "sources/meetings/2026-04-01-board-meeting-prep.md")
    assert "event" not in prep


def test_event_and_meeting_linked_calendar_first(vault: Vault, tmp_path: Path) -> None:
    _sync(vault.root, "calendar", _ics(tmp_path), *WINDOW)
    meeting_folder = _meetings(tmp_path)
    _sync(vault.root, "meetings", meeting_folder)
    _check_links(vault.root)
    body_before = (vault.root / "sources/meetings/2026-03-23-weekly-sync.md").read_text()
    snap = _snapshot(vault.root)
    _sync(vault.root, "calendar", _ics(tmp_path), *WINDOW)
    _sync(vault.root, "meetings", meeting_folder)
    assert _snapshot(vault.root) == snap  # linking again writes nothing
    assert "- **[00:00:02] Sarah Chen:** Launch moves to April." in body_before


def test_event_and_meeting_linked_meetings_first(vault: Vault, tmp_path: Path) -> None:
    meeting_folder = _meetings(tmp_path)
    _sync(vault.root, "meetings", meeting_folder)
    meeting_path = vault.root / "sources/meetings/2026-03-23-weekly-sync.md"
    _, body_before = _read(meeting_path)
    _sync(vault.root, "calendar", _ics(tmp_path), *WINDOW)
    _check_links(vault.root)
    _, body_after = _read(meeting_path)
    assert body_after == body_before  # the link is frontmatter only
    snap = _snapshot(vault.root)
    _sync(vault.root, "meetings", meeting_folder)
    assert _snapshot(vault.root) == snap


def test_title_similarity() -> None:
    assert title_similarity("Weekly sync", "weekly-sync") == 1.0
    assert title_similarity("Q1 board meeting", "Board meeting") >= 0.6
    assert title_similarity("Weekly sync", "Weekly sync with Horizon") >= 0.6
    assert title_similarity("Vendor call", "Weekly sync") < 0.6
    assert title_similarity("Sync", "Board sync") < 0.6


def test_google_x_wr_timezone(vault: Vault, tmp_path: Path) -> None:
    ics = _ics(tmp_path, """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Google Inc//Google Calendar 70.9054//EN
X-WR-TIMEZONE:Europe/Berlin
BEGIN:VEVENT
UID:abc123@google.com
SUMMARY:Coffee with Mei
DTSTART:20260305T090000Z
DTEND:20260305T093000Z
END:VEVENT
END:VCALENDAR
""", name="google.ics")
    _sync(vault.root, "calendar", ics, *WINDOW)
    data, body = _read(vault.root / "sources/calendar/2026-03-05-coffee-with-mei.md")
    assert data["start"] == "2026-03-05T10:00:00+01:00" and data["timezone"] == "Europe/Berlin"
    assert _occurrences(body) == ["- 2026-03-05 Thu 10:00–10:30 (Europe/Berlin)"]
