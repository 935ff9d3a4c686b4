"""One bad item never sinks its neighbours, and unbounded input gets bounded work (issue 12).

Every test writes real input files into a temporary folder, runs the real ``kenning sync …``
command on them, and then ``kenning index``: the bad item is skipped or repaired with one
warning naming its file and line (or message), every other item is synced, and every source
file Kenning wrote is indexed (none is skipped as binary, invalid UTF-8 or too large).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.vault import frontmatter


@pytest.fixture
def root(tmp_path: Path) -> Path:
    v, _ = Vault.init(tmp_path / "vault")
    v.close()
    return tmp_path / "vault"


def _sync(root: Path, kind: str, target: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", kind, str(target), *extra,
                                       "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"sync {kind} raised {result.exception!r}")
    data = json.loads(result.stdout)
    data["exit_code"] = result.exit_code
    return data


def _index(root: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["-C", str(root), "index", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _sources(root: Path, folder: str) -> dict[str, str]:
    """Every source file of ``folder`` by name, checked to be text the index reads."""
    out = {}
    for path in sorted((root / "sources" / folder).glob("*.md")):
        data = path.read_bytes()
        assert b"\x00" not in data, path
        out[path.name] = data.decode("utf-8")  # raises on invalid UTF-8
    return out


def _warned(report: dict[str, Any], *needles: str) -> bool:
    return any(all(n in w for n in needles) for w in report["warnings"])


def _all_indexed(root: Path) -> None:
    index = _index(root)
    assert index["skipped"] == [], index["skipped"]


def _claude_line(uuid: str, role: str, text: str, minute: int) -> str:
    return json.dumps({"type": role, "uuid": uuid, "sessionId": "sess-1",
                       "timestamp": f"2026-11-01T10:{minute:02d}:00Z",
                       "message": {"role": role, "content": text}})


# -- chats -----------------------------------------------------------------------------------


def test_a_jsonl_line_that_cannot_be_parsed_skips_that_line_only(root: Path,
                                                                 tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    lines = [
        _claude_line("u1", "user", "How do we fix the flaky deploy?", 0),
        "[" * 100_000 + "]" * 100_000,  # RecursionError in json
        _claude_line("u2", "assistant", "A lone \ud800 surrogate", 1),  # a "\ud800" escape
        _claude_line("u3", "assistant", "Pin the runner image; that fixes the deploy.", 2),
    ]
    (folder / "sess-1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "sess-2.jsonl").write_text(
        _claude_line("v1", "user", "A second session about the lighthouse.", 5)
        .replace("sess-1", "sess-2") + "\n", encoding="utf-8")

    report = _sync(root, "chats", folder)

    assert _warned(report, "sess-1.jsonl", "line 2", "nested too deeply")
    assert _warned(report, "control characters", "entry u2")
    files = _sources(root, "chats")
    assert len(files) == 2
    first = next(t for t in files.values() if "flaky deploy" in t)
    assert "Pin the runner image" in first
    assert "A lone \ufffd surrogate" in first
    assert any("lighthouse" in t for t in files.values())
    _all_indexed(root)


def test_an_absurdly_long_jsonl_line_is_skipped_with_its_number(root: Path,
                                                                tmp_path: Path) -> None:
    from kenning.sources.chats import MAX_LINE_CHARS

    path = tmp_path / "big.jsonl"
    huge = json.dumps({"speaker": "Ann", "text": "x" * (MAX_LINE_CHARS + 10)})
    path.write_text("\n".join([json.dumps({"speaker": "Ann", "text": "The ferry leaves at 9."}),
                               huge,
                               json.dumps({"speaker": "Bo", "text": "I will be there."})])
                    + "\n", encoding="utf-8")

    report = _sync(root, "chats", path)

    assert _warned(report, "big.jsonl", "line 2", "skipped")
    (text,) = _sources(root, "chats").values()
    assert "The ferry leaves at 9." in text and "I will be there." in text
    _all_indexed(root)


def test_one_malformed_chatgpt_conversation_skips_only_itself(root: Path,
                                                              tmp_path: Path) -> None:
    def conversation(cid: str, title: str, text: str) -> dict[str, Any]:
        def node(nid: str, parent: str | None, children: list[str], role: str,
                 said: str) -> dict[str, Any]:
            return {"id": nid, "parent": parent, "children": children,
                    "message": {"id": f"m-{nid}", "author": {"role": role},
                                "create_time": 1_760_000_000,
                                "content": {"content_type": "text", "parts": [said]}}}
        return {"id": cid, "title": title, "create_time": 1_760_000_000, "current_node": "b",
                "mapping": {"a": node("a", None, ["b"], "user", text),
                            "b": node("b", "a", [], "assistant", "Noted: " + text)}}

    bad = conversation("c2", "Broken", "never shown")
    bad["mapping"]["b"]["parent"] = "gone"  # a gap: the walk looks at every node's children
    bad["mapping"]["a"]["children"] = 5  # … and meets a number
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([conversation("c1", "Trip", "Plan the lighthouse trip"), bad,
                                  conversation("c3", "Ferry", "Book the ferry")]),
                      encoding="utf-8")

    report = _sync(root, "chats", export)

    assert _warned(report, "conversations.json", "conversation 2", "skipped")
    texts = _sources(root, "chats").values()
    assert any("lighthouse trip" in t for t in texts)
    assert any("Book the ferry" in t for t in texts)


# -- control characters in every kind of source ------------------------------------------------


def _nul_email(folder: Path) -> Path:
    path = folder / "box.mbox"
    path.write_bytes(
        b"From ann@x.com Mon Jan  5 10:00:00 2026\n"
        b"From: Ann <ann@x.com>\nTo: Bo <bo@x.com>\nSubject: Budget\x00 plan\n"
        b"Message-ID: <m1@x.com>\nDate: Mon, 5 Jan 2026 10:00:00 +0000\n\n"
        b"The harbour\x00 budget is \x07 ready.\n\n"
        b"From bo@x.com Mon Jan  5 11:00:00 2026\n"
        b"From: Bo <bo@x.com>\nTo: Ann <ann@x.com>\nSubject: Lunch\n"
        b"Message-ID: <m2@x.com>\nDate: Mon, 5 Jan 2026 11:00:00 +0000\n\nLunch at noon.\n")
    return path


def _nul_meeting(folder: Path) -> Path:
    path = folder / "2026-11-07 Review.txt"
    path.write_bytes(b"Ann: The harbour \x00 budget.\nBo: Ok\x1b[31m agreed.\n")
    return path


def _nul_chat(folder: Path) -> Path:
    path = folder / "chat.json"
    path.write_text(json.dumps([{"speaker": "Ann", "text": "The harbour\u0000 budget\u0085."},
                                {"speaker": "Bo", "text": "Agreed\u2028now."}]),
                    encoding="utf-8")
    return path


def _nul_calendar(folder: Path) -> Path:
    path = folder / "cal.ics"
    path.write_bytes(b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\n"
                     b"UID:e1@x\r\nDTSTART:20261110T100000Z\r\nDTEND:20261110T110000Z\r\n"
                     b"SUMMARY:Harbour\x01 budget\r\nDESCRIPTION:Bring the \x02 numbers\r\n"
                     b"END:VEVENT\r\nEND:VCALENDAR\r\n")
    return path


@pytest.mark.parametrize(("kind", "folder", "make"), [
    ("email", "email", _nul_email), ("meetings", "meetings", _nul_meeting),
    ("chats", "chats", _nul_chat), ("calendar", "calendar", _nul_calendar)])
def test_control_characters_never_reach_a_source_file(root: Path, tmp_path: Path, kind: str,
                                                      folder: str, make: Any) -> None:
    source = make(tmp_path)
    extra = ("--since", "2026-01-01", "--until", "2026-12-31") if kind == "calendar" else ()

    report = _sync(root, kind, source, *extra)

    files = _sources(root, folder)  # no NUL, valid UTF-8
    assert files
    text = "\n".join(files.values())
    for bad in ("\x01", "\x02", "\x07", "\x1b", "\x85", "\u2028"):
        assert bad not in text
    assert "Harbour" in text or "harbour" in text
    assert _warned(report, "U+FFFD")
    _all_indexed(root)
    result = CliRunner().invoke(main, ["-C", str(root), "search", "harbour budget", "--json"])
    assert f"sources/{folder}/" in result.stdout


# -- meetings --------------------------------------------------------------------------------


VTT = """WEBVTT

00:00:01.000 --> 00:00:02.000
<v Ann>First good cue.

99:99:99.999 --> 99:99:99.999
<v Bo>Impossible time cue.

00:00:05.000 --> 00:00:03.000
<v Ann>End before start.

garbage --> nonsense
<v Bo>Garbage timing.

00:00:07.000 --> 00:00:08.000
<v Ann>Second good cue.
"""


def test_vtt_cues_with_impossible_timestamps_keep_their_text(root: Path,
                                                             tmp_path: Path) -> None:
    path = tmp_path / "2026-11-02 Standup.vtt"
    path.write_text(VTT, encoding="utf-8")
    srt = tmp_path / "2026-11-03 Review.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nAnn: hello there\n\n"
                   "2\n00:61:00,000 --> 00:00:03,000\nBo: a broken time\n", encoding="utf-8")

    report = _sync(root, "meetings", tmp_path)

    files = _sources(root, "meetings")
    standup = next(t for n, t in files.items() if "standup" in n)
    for said in ("First good cue.", "Impossible time cue.", "End before start.",
                 "Garbage timing.", "Second good cue."):
        assert said in standup
    assert "- **[00:00:05] Ann:** End before start." in standup
    assert "- **Bo:** Impossible time cue." in standup
    assert frontmatter.read(standup).data["turns"] == 5
    assert _warned(report, "Standup.vtt", "2 cue(s)", "line 6, 12")
    assert _warned(report, "Standup.vtt", "1 cue(s) ending before they start", "line 9")
    review = next(t for n, t in files.items() if "review" in n)
    assert "a broken time" in review
    assert _warned(report, "Review.srt", "line 6")


def test_a_transcript_nested_too_deeply_skips_only_that_file(root: Path,
                                                             tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (tmp_path / "2026-11-06 Fine.txt").write_text("Ann: The harbour plan is approved.\n",
                                                  encoding="utf-8")

    report = _sync(root, "meetings", tmp_path)

    assert _warned(report, "deep.json", "nested too deeply")
    assert any("harbour plan" in t for t in _sources(root, "meetings").values())


# -- email -----------------------------------------------------------------------------------


def test_a_multipart_message_without_a_boundary_keeps_its_text(root: Path,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "nob.eml"
    path.write_text("From: Ann <ann@x.com>\nTo: Bo <bo@x.com>\nSubject: Contract\n"
                    "Message-ID: <nb1@x.com>\nDate: Mon, 5 Jan 2026 10:00:00 +0000\n"
                    "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n"
                    "The contract renewal is due Friday.\n", encoding="utf-8")

    report = _sync(root, "email", path)

    (text,) = _sources(root, "email").values()
    assert "The contract renewal is due Friday." in text
    assert _warned(report, "nob.eml", "multipart/mixed without a usable boundary")


def _mbox(count: int) -> str:
    out = []
    for i in range(1, count + 1):
        body = "\n".join(f"Paragraph {j} of report {i}: the numbers for region {j} hold."
                         for j in range(1, 15))
        out.append(f"From ann@x.com Mon Jan  5 1{i}:00:00 2026\nFrom: Ann <ann@x.com>\n"
                   f"To: Bo <bo@x.com>\nSubject: Report {i}\nMessage-ID: <r{i}@x.com>\n"
                   f"Date: Mon, 5 Jan 2026 1{i}:00:00 +0000\n\n{body}\n\n")
    return "".join(out)


@pytest.mark.parametrize("order", ["cut first", "whole first", "one sync"])
def test_a_truncated_mbox_and_the_whole_one_keep_each_message_once(root: Path, tmp_path: Path,
                                                                   order: str) -> None:
    whole = _mbox(3)
    (tmp_path / "in").mkdir()
    cut, full = tmp_path / "in" / "a-cut.mbox", tmp_path / "in" / "b-full.mbox"
    cut.write_text(whole[:-300], encoding="utf-8")  # ends inside report 3's paragraph 11
    full.write_text(whole, encoding="utf-8")

    if order == "one sync":
        reports = [_sync(root, "email", tmp_path / "in")]
    else:
        first, second = (cut, full) if order == "cut first" else (full, cut)
        reports = [_sync(root, "email", first), _sync(root, "email", second)]

    files = _sources(root, "email")
    assert len(files) == 3
    report3 = next(t for t in files.values() if "Report 3" in t)
    assert report3.count("\n## ") == 1, report3
    assert "Paragraph 14 of report 3" in report3
    assert frontmatter.read(report3).data["message_ids"] == ["r3@x.com"]
    if order != "whole first":
        assert _warned(reports[-1], "b-full.mbox", "truncated copy of <r3@x.com>")
    again = _sync(root, "email", full)
    assert again["created"] == again["appended"] == 0
    assert _sources(root, "email") == files
    _all_indexed(root)


# -- calendar --------------------------------------------------------------------------------


def _ics(*events: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n" + "".join(events) + \
        "END:VCALENDAR\r\n"


def _event(uid: str, start: str, title: str, rule: str = "") -> str:
    return (f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:{start}\r\nDURATION:PT1S\r\n"
            f"SUMMARY:{title}\r\n" + (f"RRULE:{rule}\r\n" if rule else "") + "END:VEVENT\r\n")


WINDOW = ("--since", "2026-01-01", "--until", "2026-12-31")


def test_an_endless_minutely_series_is_capped_and_the_rest_of_the_file_kept(
        root: Path, tmp_path: Path) -> None:
    from kenning.sources.calendar import MAX_OCCURRENCES

    path = tmp_path / "cal.ics"
    path.write_text(_ics(_event("tick@x", "20260101T000000Z", "Every minute", "FREQ=MINUTELY"),
                         _event("ok@x", "20261110T100000Z", "Harbour review")),
                    encoding="utf-8")

    report = _sync(root, "calendar", path, *WINDOW)

    files = _sources(root, "calendar")
    tick = next(t for t in files.values() if "Every minute" in t)
    assert frontmatter.read(tick).data["occurrences"] == MAX_OCCURRENCES
    assert tick.count("\n- 2026-") == MAX_OCCURRENCES
    assert "Occurrences capped" in tick
    assert any("Harbour review" in t for t in files.values())
    assert _warned(report, "cal.ics#tick@x", f"more than {MAX_OCCURRENCES:,} times")
    _all_indexed(root)


def test_a_series_whose_window_is_too_many_repeats_away_is_kept_unexpanded(
        root: Path, tmp_path: Path) -> None:
    path = tmp_path / "cal.ics"
    path.write_text(_ics(_event("sec@x", "20200101T000000Z", "Every second", "FREQ=SECONDLY"),
                         _event("ok@x", "20261110T100000Z", "Harbour review")),
                    encoding="utf-8")

    report = _sync(root, "calendar", path, *WINDOW)

    files = _sources(root, "calendar")
    sec = next(t for t in files.values() if "Every second" in t)
    assert "not expanded" in sec
    assert any("Harbour review" in t for t in files.values())
    assert _warned(report, "cal.ics#sec@x", "not expanded")


def test_an_ics_that_is_not_utf8_is_read_as_windows_1252(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "old.ics"
    path.write_bytes(_ics(_event("l@x", "20261110T100000Z", "Caf\xe9 r\xe9union"))
                     .encode("cp1252"))

    report = _sync(root, "calendar", path, *WINDOW)

    (text,) = _sources(root, "calendar").values()
    assert "Café réunion" in text
    assert _warned(report, "old.ics", "not valid UTF-8")


def test_an_unescaped_from_line_in_a_body_stays_in_its_message(root: Path,
                                                              tmp_path: Path) -> None:
    body = ("Hi Bo,\n\nFrom the harbour office we heard the plan is approved.\n"
            "From here on it is easy.\n\nAnn\n")
    path = tmp_path / "box.mbox"
    path.write_text(
        "From ann@x.com Mon Jan  5 10:00:00 2026\nFrom: Ann <ann@x.com>\nTo: Bo <bo@x.com>\n"
        "Subject: Harbour\nMessage-ID: <h1@x.com>\nDate: Mon, 5 Jan 2026 10:00:00 +0000\n\n"
        f"{body}\nFrom bo@x.com Mon Jan  5 11:00:00 2026\nFrom: Bo <bo@x.com>\n"
        "To: Ann <ann@x.com>\nSubject: Lunch\nMessage-ID: <l1@x.com>\n"
        "Date: Mon, 5 Jan 2026 11:00:00 +0000\n\nLunch at noon.\n", encoding="utf-8")

    report = _sync(root, "email", path)

    files = _sources(root, "email")
    assert len(files) == 2
    harbour = next(t for t in files.values() if "Harbour" in t)
    assert "From the harbour office we heard" in harbour and "From here on" in harbour
    assert report["items_read"] == 2
    assert _warned(report, "box.mbox#message 1", "2 body line(s) starting with 'From '")


BERLIN = ("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\n"
          "TZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\n"
          "END:STANDARD\r\nBEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\n"
          "TZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n"
          "END:VTIMEZONE\r\n")


def test_an_until_in_another_time_zone_form_does_not_unbound_the_series(
        root: Path, tmp_path: Path) -> None:
    # dateutil refuses a floating UNTIL with a zoned DTSTART; the expander repairs it and
    # would then walk every second to 2099.
    path = tmp_path / "cal.ics"
    path.write_text(_ics(BERLIN, "BEGIN:VEVENT\r\nUID:u@x\r\n"
                         "DTSTART;TZID=Europe/Berlin:20260101T000000\r\nDURATION:PT1S\r\n"
                         "SUMMARY:Until mismatch\r\nRRULE:FREQ=SECONDLY;UNTIL=20991231T000000\r\n"
                         "END:VEVENT\r\n"), encoding="utf-8")

    report = _sync(root, "calendar", path, *WINDOW)

    (text,) = _sources(root, "calendar").values()
    assert "Occurrences capped" in text
    assert _warned(report, "cal.ics#u@x", "more than")


def test_an_until_ends_the_series_where_it_says(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "cal.ics"
    path.write_text(_ics(_event("d@x", "20260105T090000Z", "Daily standup",
                                "FREQ=DAILY;UNTIL=20260109T090000Z")), encoding="utf-8")

    report = _sync(root, "calendar", path, *WINDOW)

    (text,) = _sources(root, "calendar").values()
    assert frontmatter.read(text).data["occurrences"] == 5
    assert "capped" not in text and not report["warnings"]
