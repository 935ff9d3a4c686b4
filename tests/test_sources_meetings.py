"""Meeting transcripts → sources/meetings/: formats, append on re-export, bad input, real QMSum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.sources import meetings
from kenning.vault import frontmatter

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
QMSUM = EVAL / "meetings" / "qmsum" / "transcripts"


def _sync(root: Path, target: Path) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", "meetings", str(target), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted((root / "sources").rglob("*")) if p.is_file()}


def _read(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    parsed = frontmatter.read(text)
    return parsed.data, text[parsed.body_offset:]


def _turn_lines(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("- **")]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


VTT = """WEBVTT

NOTE exported from Teams

1
00:00:01.000 --> 00:00:04.000
<v Sarah Chen>Morning everyone, let's start with the launch.</v>

2
00:00:05.000 --> 00:00:09.500
<v Alex Morgan>We moved it to April.</v>

3
00:01:02.250 --> 00:01:05.000
Priya Raman: Zoom-style prefix, no voice span.

4
00:01:06.000 --> 00:01:08.000
And this cue continues Priya.
"""


def test_webvtt_voice_spans_prefixes_and_times(vault: Vault, tmp_path: Path) -> None:
    src = _write(tmp_path / "in" / "2026-03-02 Weekly sync.vtt", VTT)
    report = _sync(vault.root, src)
    assert report["created"] == 1 and report["entries_added"] == 4 and report["warnings"] == []
    path = vault.root / "sources/meetings/2026-03-02-weekly-sync.md"
    data, body = _read(path)
    assert data["title"] == "Weekly sync" and data["date"] == "2026-03-02"
    assert data["date_source"] == "file name"
    assert data["source_format"] == "webvtt"
    assert data["original_file"] == "2026-03-02 Weekly sync.vtt"
    assert data["source_id"] == "meeting:2026-03-02:weekly-sync"
    assert data["attendees"] == ["Sarah Chen", "Alex Morgan", "Priya Raman"]
    assert data["speakers"] == data["attendees"] and data["turns"] == 4
    assert data["duration"] == "00:01:08"
    assert _turn_lines(body) == [
        "- **[00:00:01] Sarah Chen:** Morning everyone, let's start with the launch.",
        "- **[00:00:05] Alex Morgan:** We moved it to April.",
        "- **[00:01:02] Priya Raman:** Zoom-style prefix, no voice span.",
        "- **[00:01:06] Priya Raman:** And this cue continues Priya.",
    ]


def test_reexport_with_more_turns_appends_only_the_new_ones(vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "in" / "2026-03-02 Weekly sync.vtt"
    first_two = VTT.split("\n3\n")[0]
    _write(src, first_two)
    _sync(vault.root, src)
    path = vault.root / "sources/meetings/2026-03-02-weekly-sync.md"
    _, body_before = _read(path)
    snap = _snapshot(vault.root)

    again = _sync(vault.root, src)  # the same export: nothing moves
    assert again["unchanged"] == 1 and again["entries_added"] == 0
    assert _snapshot(vault.root) == snap

    _write(src, VTT)  # re-exported after the meeting ended: two more turns
    report = _sync(vault.root, src)
    assert report["appended"] == 1 and report["entries_added"] == 2 and report["created"] == 0
    data, body = _read(path)
    assert body.startswith(body_before.rstrip("\n"))
    assert len(_turn_lines(body)) == 4 and data["turns"] == 4
    assert "Priya Raman" in data["attendees"]
    assert len(list((vault.root / "sources/meetings").iterdir())) == 1

    # A person deletes the source file: the unchanged input writes it again, whole.
    text = path.read_text(encoding="utf-8")
    path.unlink()
    report = _sync(vault.root, src)
    assert report["created"] == 1 and report["entries_added"] == 4
    assert path.read_text(encoding="utf-8").split("content_hash")[1] == text.split(
        "content_hash")[1]


def test_srt_and_plain_transcripts(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    _write(folder / "standup_2026-04-07.srt", """1
00:00:00,500 --> 00:00:03,000
Dana Kim: Blocked on the API keys.

2
00:00:03,500 --> 00:00:06,000
[Luis Ortega] I can get them today.
""")
    _write(folder / "notes" / "planning.txt", """Title: Q3 planning
Date: 2026-04-09 14:00
Attendees: Dana Kim, Luis Ortega <luis@kestrel.dev>, Mei Lin

[00:00:05] Dana Kim: Let's go through the roadmap.
It has three parts.
00:01:10 Luis Ortega: Caching first.
**Mei Lin:** Agreed, then search.
Mei Lin (00:02:30): One more thing about hiring.
""")
    report = _sync(vault.root, folder)
    assert report["created"] == 2 and report["warnings"] == []

    data, body = _read(vault.root / "sources/meetings/2026-04-07-standup.md")
    assert data["source_format"] == "srt" and data["attendees"] == ["Dana Kim", "Luis Ortega"]
    assert _turn_lines(body) == ["- **[00:00:00] Dana Kim:** Blocked on the API keys.",
                                 "- **[00:00:03] Luis Ortega:** I can get them today."]

    data, body = _read(vault.root / "sources/meetings/2026-04-09-q3-planning.md")
    assert data["title"] == "Q3 planning" and data["start"] == "2026-04-09T14:00:00"
    assert data["attendees"] == ["Dana Kim", "Luis Ortega", "Mei Lin"]
    assert data["attendee_emails"] == {"Luis Ortega": "luis@kestrel.dev"}
    assert _turn_lines(body) == [
        "- **[00:00:05] Dana Kim:** Let's go through the roadmap. It has three parts.",
        "- **[00:01:10] Luis Ortega:** Caching first.",
        "- **Mei Lin:** Agreed, then search.",
        "- **[00:02:30] Mei Lin:** One more thing about hiring.",
    ]


def test_two_line_speaker_headers_and_a_list_of_notes(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    # Otter / Fireflies TXT: the speaker and time on one line, what they said below.
    _write(folder / "2026-04-10 customer call.txt", """Dana Kim  0:03
Thanks for joining.
We have two topics.

Luis Ortega - 01:15
Sounds good.
""")
    second = dict(GRANOLA_NOTE, id="not_second00000001", title="Follow-up",
                  calendar_event={"scheduled_start_time": "2026-02-03T10:00:00Z"})
    _write(folder / "granola-notes.json", json.dumps({"notes": [GRANOLA_NOTE, second]}))
    report = _sync(vault.root, folder)
    assert report["created"] == 3 and report["items_read"] == 3 and report["warnings"] == []
    _, body = _read(vault.root / "sources/meetings/2026-04-10-customer-call.md")
    assert _turn_lines(body) == [
        "- **[00:00:03] Dana Kim:** Thanks for joining. We have two topics.",
        "- **[00:01:15] Luis Ortega:** Sounds good."]
    data, _ = _read(vault.root / "sources/meetings/2026-02-03-follow-up.md")
    assert data["source_id"] == "granola:not_second00000001" and data["turns"] == 3


GRANOLA_NOTE = {
    "id": "not_1d3tmYTlCICgjy",
    "object": "note",
    "title": "Pricing review",
    "owner": {"name": "Alex Morgan", "email": "alex@kestrel.dev"},
    "created_at": "2026-01-27T15:29:10Z",
    "calendar_event": {
        "event_title": "Pricing review",
        "invitees": [{"email": "raisin@horizon.vc"}],
        "organiser": "alex@kestrel.dev",
        "calendar_event_id": "2su99n6iiik37iiknmb5t4fkfh_20260127T153000Z",
        "scheduled_start_time": "2026-01-27T15:30:00Z",
        "scheduled_end_time": "2026-01-27T16:00:00Z",
    },
    "attendees": [{"name": "Alex Morgan", "email": "alex@kestrel.dev"},
                  {"name": "Raisin Patel", "email": "raisin@horizon.vc"}],
    "folder_membership": [{"id": "fol_4y6LduVdwSKC27", "object": "folder", "name": "Deals"}],
    "summary_text": "We agreed on usage-based pricing.",
    "summary_markdown": "### Decisions\n\n- Usage-based pricing from March",
    "transcript": [
        {"speaker": {"source": "microphone"}, "text": "Shall we go usage-based?",
         "start_time": "2026-01-27T15:31:00Z", "end_time": "2026-01-27T15:31:04Z"},
        {"speaker": {"source": "speaker"}, "text": "Yes, from March.",
         "start_time": "2026-01-27T15:31:05Z", "end_time": "2026-01-27T15:31:08Z"},
        {"speaker": {"source": "speaker", "diarization_label": "Raisin"},
         "text": "And seats stay free.",
         "start_time": "2026-01-27T15:32:10Z", "end_time": "2026-01-27T15:32:12Z"},
    ],
}

FIREFLIES = {"data": {"transcript": {
    "id": "01HX9ABCDEF",
    "title": "Horizon intro call",
    "date": 1769526000000,  # 2026-01-27T15:00:00Z in epoch milliseconds
    "dateString": "2026-01-27T15:00:00.000Z",
    "duration": 32.5,
    "organizer_email": "sarah@horizon.vc",
    "participants": ["sarah@horizon.vc", "alex@kestrel.dev"],
    "meeting_attendees": [{"displayName": "Sarah Chen", "email": "sarah@horizon.vc",
                           "name": "Sarah Chen"}],
    "speakers": [{"id": "0", "name": "Sarah Chen"}, {"id": "1", "name": "Alex Morgan"}],
    "sentences": [
        {"index": 0, "speaker_name": "Sarah Chen", "speaker_id": "0",
         "text": "Thanks for making time.", "raw_text": "thanks for making time",
         "start_time": 1.2, "end_time": 2.9},
        {"index": 1, "speaker_name": "Alex Morgan", "speaker_id": "1",
         "text": "Happy to. We raised our seed in May.", "raw_text": "happy to",
         "start_time": 3.1, "end_time": 6.0},
    ],
    "summary": {"overview": "Intro between Horizon and Kestrel.",
                "action_items": ["Sarah sends the term sheet"], "keywords": ["seed"]},
}}}


def test_granola_and_fireflies_json(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    _write(folder / "granola.json", json.dumps(GRANOLA_NOTE))
    _write(folder / "fireflies.json", json.dumps(FIREFLIES))
    report = _sync(vault.root, folder)
    assert report["created"] == 2 and report["warnings"] == []

    data, body = _read(vault.root / "sources/meetings/2026-01-27-pricing-review.md")
    assert data["source_id"] == "granola:not_1d3tmYTlCICgjy"
    assert data["source_format"] == "granola-json"
    assert data["start"] == "2026-01-27T15:30:00+00:00"
    assert data["end"] == "2026-01-27T16:00:00+00:00"
    assert data["duration"] == "00:30:00"
    assert data["attendees"] == ["Alex Morgan", "Raisin Patel", "Raisin"]
    assert data["speakers"] == ["Alex Morgan", "Them", "Raisin"]
    assert data["organizer"] == "alex@kestrel.dev"
    assert _turn_lines(body) == ["- **[00:00:00] Alex Morgan:** Shall we go usage-based?",
                                 "- **[00:00:05] Them:** Yes, from March.",
                                 "- **[00:01:10] Raisin:** And seats stay free."]
    assert "Usage-based pricing from March" in body  # the export's notes, before the transcript
    assert body.index("## Notes (from the export)") < body.index("## Transcript")

    data, body = _read(vault.root / "sources/meetings/2026-01-27-horizon-intro-call.md")
    assert data["source_id"] == "fireflies:01HX9ABCDEF"
    assert data["start"] == "2026-01-27T15:00:00+00:00" and data["duration"] == "00:32:30"
    assert data["end"] == "2026-01-27T15:32:30+00:00"
    assert data["attendees"] == ["Sarah Chen", "alex@kestrel.dev", "Alex Morgan"]
    assert data["attendee_emails"] == {"Sarah Chen": "sarah@horizon.vc",
                                       "alex@kestrel.dev": "alex@kestrel.dev"}
    assert _turn_lines(body)[1] == ("- **[00:00:03] Alex Morgan:** Happy to. "
                                    "We raised our seed in May.")
    assert "Sarah sends the term sheet" in body


def test_granola_markdown_export(vault: Vault, tmp_path: Path) -> None:
    src = _write(tmp_path / "Design review.md", """---
title: Design review
date: 2026-02-11T09:00:00+01:00
attendees: [Ana Silva, Tom Berg]
granola_id: 8f1c2d
---
# Design review

## Notes

- Keep the sidebar

## Transcript

**Me:** Can we keep the sidebar?
**Them:** Yes, but collapsed by default.
""")
    report = _sync(vault.root, src)
    assert report["created"] == 1
    data, body = _read(vault.root / "sources/meetings/2026-02-11-design-review.md")
    assert data["source_format"] == "granola-markdown" and data["source_id"] == "export:8f1c2d"
    assert data["start"] == "2026-02-11T09:00:00+01:00"
    assert data["attendees"] == ["Ana Silva", "Tom Berg"]  # "Me"/"Them" are not attendees
    assert data["speakers"] == ["Me", "Them"]
    assert _turn_lines(body) == ["- **Me:** Can we keep the sidebar?",
                                 "- **Them:** Yes, but collapsed by default."]
    assert "- Keep the sidebar" in body


def test_bad_input_warns_and_everything_else_lands(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    _write(folder / "wrong-shape.json", json.dumps({"messages": [{"role": "user"}]}))
    _write(folder / "broken.json", '{"meeting_transcripts": [')
    _write(folder / "2026-05-01 dictation.txt",
           "We should revisit the budget.\nIt is too high.\n\nSecond thought: hire later.\n")
    _write(folder / "2026-05-02 ok.vtt", VTT)
    long_turn = "word " * 1500
    _write(folder / "2026-05-03 monologue.txt", f"Ana Silva: {long_turn}\n")
    report = _sync(vault.root, folder)
    assert report["created"] == 3
    warnings = "\n".join(report["warnings"])
    assert "in/wrong-shape.json: expected a QMSum transcript" in warnings
    assert "found an object with messages" in warnings
    assert "in/broken.json: invalid JSON" in warnings
    assert "in/2026-05-01 dictation.txt: no speaker names found" in warnings
    assert len(report["warnings"]) == 3

    data, body = _read(vault.root / "sources/meetings/2026-05-01-dictation.md")
    assert data["speakers"] == ["Unknown"] and "attendees" not in data
    assert _turn_lines(body) == ["- **Unknown:** We should revisit the budget. It is too high.",
                                 "- **Unknown:** Second thought: hire later."]
    _, body = _read(vault.root / "sources/meetings/2026-05-03-monologue.md")
    (line,) = _turn_lines(body)
    assert "turn cut at 4,000 of 7,499 characters" in line
    assert len(line) < meetings.TURN_CAP + 200


def test_qmsum_real_transcripts(vault: Vault) -> None:
    if not QMSUM.is_dir():
        pytest.skip("shared eval data (meetings/qmsum) is not present")
    inputs = sorted(QMSUM.glob("*.json"))
    report = _sync(vault.root, QMSUM)
    assert report["created"] == len(inputs) == 35
    assert report["items_read"] == 35
    # QMSum has no dates: one warning per file, and nothing else.
    assert all("no date" in w for w in report["warnings"]) and len(report["warnings"]) == 35
    files = {(_read(p)[0]["original_file"]): p
             for p in (vault.root / "sources/meetings").glob("*.md")}
    assert sorted(files) == [p.name for p in inputs]
    for src in inputs:
        rows = json.loads(src.read_text(encoding="utf-8"))["meeting_transcripts"]
        spoken = [r for r in rows if " ".join(r["content"].split())]  # empty turns are skipped
        data, body = _read(files[src.name])
        lines = _turn_lines(body)
        assert len(lines) == len(spoken) == data["turns"], src.name
        assert lines[0] == f"- **{spoken[0]['speaker']}:** {' '.join(spoken[0]['content'].split())}"
        assert data["attendees"] and data["source_format"] == "qmsum"
        assert set(data["speakers"]) == {r["speaker"] for r in spoken}
    # Syncing the same input again changes no byte and no mtime.
    snap = _snapshot(vault.root)
    again = _sync(vault.root, QMSUM)
    assert again["unchanged"] == 35 and again["created"] == again["appended"] == 0
    assert _snapshot(vault.root) == snap


def test_the_date_in_a_file_name_is_the_first_real_one() -> None:
    from kenning.sources.meetings.parse import date_in_name

    # "1954_20…" is no date; the call's own date follows it.
    assert date_in_name("one-off-1954_2026-03-05_001")[0] == "2026-03-05"
    assert date_in_name("2026-03-02 Weekly sync") == ("2026-03-02", "Weekly sync")
    assert date_in_name("20260302 standup")[0] == "2026-03-02"
    assert date_in_name("notes 1954") == (None, "notes 1954")


def test_a_text_transcript_that_opens_with_a_bracketed_time_is_text(vault: Vault,
                                                                    tmp_path: Path) -> None:
    """"[00:00:05] Name: …" opens like a JSON array; a .txt that is no JSON is read as text."""
    folder = tmp_path / "in"
    _write(folder / "2026-05-04 standup.txt",
           "[00:00:05] Ana Silva: Morning. The deploy went out.\n"
           "[00:00:12] Ben Ode: Good. I'll write the release notes by Friday.\n")
    report = _sync(vault.root, folder)
    assert report["created"] == 1 and report["warnings"] == []
    data, body = _read(vault.root / "sources/meetings/2026-05-04-standup.md")
    assert data["speakers"] == ["Ana Silva", "Ben Ode"]
    assert "- **[00:00:12] Ben Ode:** Good. I'll write the release notes by Friday." in body
