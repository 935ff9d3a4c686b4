"""Hostile inputs to ``kenning sync``: one bad item never sinks its neighbours, and unbounded
input (a calendar series without an end) gets bounded work.

Each case writes its input next to the vault (``<vault>/../in``), runs ``sync`` on it, then
``index --json`` and a ``search``: the sync names the bad file (and line, message or event) on
one line, every other item is synced, no source file is skipped by the index, and the good
items are found.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hostile import Case, Run, one_line_naming

IN = "{root}/../in"
WINDOW = ("--since", "2026-01-01", "--until", "2026-12-31")


def _inbox(root: Path) -> Path:
    folder = root.parent / "in"
    folder.mkdir(exist_ok=True)
    return folder


def _case(name: str, setup: Callable[[Path], None], sync: tuple[str, ...], search: str,
          folder: str, needles: list[tuple[str, ...]], *, files: int | None = None,
          more: Callable[[Path], list[str]] | None = None,
          before: tuple[tuple[str, ...], ...] = ()) -> Case:
    """A case: ``before`` commands, then ``sync``, ``index --json`` and ``search``; the sync
    names every needle group on one line, the index skips nothing, the search finds a file of
    ``sources/<folder>/``, and ``folder`` holds ``files`` source files when given."""

    def check(root: Path, runs: list[Run]) -> list[str]:
        sync_run, index_run, search_run = runs[-3:]
        problems: list[str] = []
        for group in needles:
            problems += one_line_naming(sync_run, *group)
        try:
            skipped = json.loads(index_run.stdout)["skipped"]
        except (ValueError, KeyError):
            skipped = [f"index printed no JSON: {index_run.output[-300:]!r}"]
        if skipped:
            problems.append(f"the index skipped source files: {skipped}")
        if f"sources/{folder}/" not in search_run.stdout:
            problems.append(f"search {search!r} finds no sources/{folder}/ file: "
                            f"{search_run.output[-300:]!r}")
        found = sorted((root / "sources" / folder).glob("*.md"))
        if files is not None and len(found) != files:
            problems.append(f"{len(found)} source files in sources/{folder}/, not {files}")
        for path in found:
            data = path.read_bytes()
            if b"\x00" in data:
                problems.append(f"{path.name} holds a NUL byte")
        if more:
            problems += more(root)
        return problems

    return Case("sources", name, setup, (*before, sync, ("index", "--json"),
                                        ("search", search)), check)


def _texts(root: Path, folder: str) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in (root / "sources" / folder).glob("*.md")]


# -- chats -------------------------------------------------------------------------------------


def _claude(uuid: str, role: str, text: str, session: str = "s1") -> str:
    return json.dumps({"type": role, "uuid": uuid, "sessionId": session,
                       "timestamp": "2026-11-01T10:00:00Z",
                       "message": {"role": role, "content": text}})


def _good_session(folder: Path) -> None:
    (folder / "good.jsonl").write_text(
        _claude("g1", "user", "Where is the lighthouse logbook kept?", "s9") + "\n")


def _deep_line(root: Path) -> None:
    folder = _inbox(root)
    (folder / "s1.jsonl").write_text("\n".join([
        _claude("u1", "user", "How do we fix the flaky deploy?"),
        "[" * 100_000 + "]" * 100_000,
        _claude("u2", "assistant", "Pin the runner image."),
    ]) + "\n")
    _good_session(folder)


def _surrogate_line(root: Path) -> None:
    folder = _inbox(root)
    (folder / "s1.jsonl").write_text("\n".join([
        _claude("u1", "user", "How do we fix the flaky deploy?"),
        _claude("u2", "assistant", "A lone \ud800 escape in the middle"),
    ]) + "\n")
    _good_session(folder)


def _huge_line(root: Path) -> None:
    folder = _inbox(root)
    with (folder / "huge.jsonl").open("w") as fh:
        fh.write('{"speaker": "Ann", "text": "')
        for _ in range(50):
            fh.write("x" * 1_048_576)
        fh.write('"}\n')
    _good_session(folder)


def _empty_files(root: Path) -> None:
    folder = _inbox(root)
    (folder / "empty.jsonl").write_text("")
    (folder / "blank.json").write_text("  \n\n")
    (folder / "list.json").write_text("[]")
    (folder / "nul.jsonl").write_bytes(b"\x00" * 64)
    _good_session(folder)


def _chatgpt_bad(root: Path) -> None:
    def conv(cid: str, title: str, text: str) -> dict:
        def node(nid: str, parent: str | None, children: list, role: str, said: str) -> dict:
            return {"id": nid, "parent": parent, "children": children,
                    "message": {"id": f"m-{nid}", "author": {"role": role},
                                "create_time": 1_760_000_000,
                                "content": {"content_type": "text", "parts": [said]}}}
        return {"id": cid, "title": title, "create_time": 1_760_000_000, "current_node": "b",
                "mapping": {"a": node("a", None, ["b"], "user", text),
                            "b": node("b", "a", [], "assistant", "Noted: " + text)}}
    bad = conv("c2", "Broken", "never shown")
    bad["mapping"]["b"]["parent"] = "gone"
    bad["mapping"]["a"]["children"] = 5
    (_inbox(root) / "conversations.json").write_text(json.dumps(
        [conv("c1", "Trip", "Plan the lighthouse trip"), bad,
         conv("c3", "Ferry", "Book the ferry")]))


# -- email -------------------------------------------------------------------------------------


def _message(n: int, subject: str, body: str, extra: str = "", sender: str = "Ann <ann@x.com>"
             ) -> str:
    return (f"From ann@x.com Mon Jan  5 1{n}:00:00 2026\nFrom: {sender}\nTo: Bo <bo@x.com>\n"
            f"Subject: {subject}\nMessage-ID: <m{n}@x.com>\n"
            f"Date: Mon, 5 Jan 2026 1{n}:00:00 +0000\n{extra}\n{body}\n\n")


LUNCH = _message(9, "Lunch", "Lunch at the lighthouse at noon.")


def _nul_email(root: Path) -> None:
    (_inbox(root) / "box.mbox").write_bytes(
        _message(1, "Budget\x00 plan", "The harbour\x00 budget is \x07 ready.").encode()
        + LUNCH.encode())


def _from_line(root: Path) -> None:
    body = ("Hi Bo,\n\nFrom the harbour office we heard the plan is approved.\n"
            "From here on it is easy.\n\nAnn")
    (_inbox(root) / "box.mbox").write_text(_message(1, "Harbour", body) + LUNCH)


def _no_boundary(root: Path) -> None:
    (_inbox(root) / "box.mbox").write_text(
        _message(1, "Contract", "The harbour contract renewal is due Friday.",
                 "MIME-Version: 1.0\nContent-Type: multipart/mixed\n") + LUNCH)


def _report_mbox() -> str:
    body = "\n".join(f"Paragraph {j}: the harbour numbers for region {j} hold."
                     for j in range(1, 15))
    return "".join(_message(n, f"Report {n}", body) for n in range(1, 4))


def _truncated(root: Path) -> None:
    whole = _report_mbox()
    (_inbox(root) / "cut.mbox").write_text(whole[:-300])
    (_inbox(root) / "full.mbox").write_text(whole)


def _one_copy(root: Path) -> list[str]:
    report3 = [t for t in _texts(root, "email") if "Report 3" in t]
    if len(report3) != 1 or report3[0].count("\n## ") != 1 or "Paragraph 14" not in report3[0]:
        return [f"report 3 is not one whole message: {[t[-400:] for t in report3]!r}"]
    return []


def _recipients(root: Path) -> None:
    to = ", ".join(f"Person {i} <p{i}@corp.example>" for i in range(5000))
    (_inbox(root) / "all.eml").write_text(
        f"From: Ann <ann@x.com>\nTo: {to}\nSubject: All hands\nMessage-ID: <all@x.com>\n"
        "Date: Mon, 5 Jan 2026 10:00:00 +0000\n\nAll hands at the lighthouse on Friday.\n")


def _wrong_charset(root: Path) -> None:
    (_inbox(root) / "box.mbox").write_bytes(
        _message(1, "Caf\xe9", "The harbour caf\xe9 opens at nine.",
                 "Content-Type: text/plain; charset=utf-8\n").encode("cp1252")
        + _message(2, "Quote", "Bo\u2019s harbour plan \u2013 approved.",
                   "Content-Type: text/plain; charset=iso-8859-1\n").encode("cp1252"))


def _charset_text(root: Path) -> list[str]:
    text = "\n".join(_texts(root, "email"))
    return [] if "café" in text and "Bo’s harbour plan – approved" in text else [
        f"text not decoded as Windows-1252: {text[-500:]!r}"]


# -- meetings ----------------------------------------------------------------------------------


def _good_meeting(folder: Path) -> None:
    (folder / "2026-11-06 Fine.txt").write_text("Ann: The lighthouse plan is approved.\n")


def _bad_vtt(root: Path) -> None:
    folder = _inbox(root)
    cues = ["WEBVTT", ""]
    for i in range(40):
        start = "99:99:99.999" if i % 3 == 0 else f"00:00:{i:02d}.000"
        end = "garbage" if i % 5 == 0 else f"00:00:{i + 1:02d}.000"
        cues += [f"{start} --> {end}", f"<v Ann>Cue {i} about the harbour.", ""]
    (folder / "2026-11-02 Standup.vtt").write_text("\n".join(cues))


def _all_cues(root: Path) -> list[str]:
    text = "\n".join(_texts(root, "meetings"))
    lost = [i for i in range(40) if f"Cue {i} about the harbour." not in text]
    return [f"cues lost: {lost}"] if lost else []


def _megaline(root: Path) -> None:
    folder = _inbox(root)
    (folder / "2026-11-03 Long.txt").write_text("Ann: " + "harbour " * 131_072 + "\n")
    _good_meeting(folder)


def _deep_json(root: Path) -> None:
    folder = _inbox(root)
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    _good_meeting(folder)


def _nul_meeting(root: Path) -> None:
    folder = _inbox(root)
    (folder / "2026-11-07 Review.txt").write_bytes(b"Ann: The \x00 budget.\nBo: Ok\x1b[31m.\n")
    _good_meeting(folder)


# -- calendar ----------------------------------------------------------------------------------


def _ics(*events: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n" + "".join(events) + \
        "END:VCALENDAR\r\n"


def _event(uid: str, start: str, title: str, rule: str = "") -> str:
    return (f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:{start}\r\nDURATION:PT1S\r\n"
            f"SUMMARY:{title}\r\n" + (f"RRULE:{rule}\r\n" if rule else "") + "END:VEVENT\r\n")


KEEP = _event("keep@x", "20261110T100000Z", "Lighthouse review")


def _series(freq: str, start: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        (_inbox(root) / "cal.ics").write_text(_ics(_event("rep@x", start, "Repeating", freq),
                                                   KEEP))
    return setup


def _until_mismatch(root: Path) -> None:
    zone = ("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\n"
            "DTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\n"
            "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
    event = ("BEGIN:VEVENT\r\nUID:rep@x\r\nDTSTART;TZID=Europe/Berlin:20260101T000000\r\n"
             "DURATION:PT1S\r\nSUMMARY:Repeating\r\n"
             "RRULE:FREQ=SECONDLY;UNTIL=20991231T000000\r\nEND:VEVENT\r\n")
    (_inbox(root) / "cal.ics").write_text(_ics(zone, event, KEEP))


def _many_events(root: Path) -> None:
    events = [_event(f"e{i}@x", f"202611{1 + i % 28:02d}T{8 + i % 10:02d}0000Z",
                     f"Event {i}") for i in range(300)]
    (_inbox(root) / "many.ics").write_text(_ics(*events, KEEP))


def _broken_calendars(root: Path) -> None:
    folder = _inbox(root)
    (folder / "empty.ics").write_text("")
    (folder / "garbage.ics").write_bytes(b"BEGIN:VCALENDAR\r\nthis is \x00 not\r\nEND:VCAL")
    (folder / "nested.ics").write_text("BEGIN:VCALENDAR\r\n" + "BEGIN:VEVENT\r\n" * 2000
                                       + "END:VEVENT\r\n" * 2000 + "END:VCALENDAR\r\n")
    (folder / "latin.ics").write_bytes(_ics(_event("l@x", "20261111T100000Z",
                                                   "Caf\xe9 r\xe9union")).encode("cp1252"))
    (folder / "good.ics").write_text(_ics(KEEP))


CASES = [
    _case("chats-jsonl-line-nested-100k-deep", _deep_line, ("sync", "chats", IN), "lighthouse",
          "chats", [("s1.jsonl", "line 2", "nested too deeply")], files=2),
    _case("chats-jsonl-lone-surrogate-escape", _surrogate_line, ("sync", "chats", IN),
          "lone escape", "chats", [("U+FFFD", "entry u2")], files=2),
    _case("chats-jsonl-one-line-of-50-mb", _huge_line, ("sync", "chats", IN), "lighthouse",
          "chats", [("huge.jsonl", "line 1", "skipped")], files=1),
    _case("chats-empty-and-blank-files", _empty_files, ("sync", "chats", IN), "lighthouse",
          "chats", [("empty.jsonl", "empty"), ("blank.json", "empty"), ("list.json",),
                    ("nul.jsonl",)], files=1),
    _case("chats-chatgpt-one-malformed-conversation", _chatgpt_bad, ("sync", "chats", IN),
          "ferry", "chats", [("conversations.json", "conversation 2", "skipped")], files=2),
    _case("email-nul-in-body-and-header", _nul_email, ("sync", "email", IN), "harbour budget",
          "email", [("U+FFFD", "m1@x.com")], files=2),
    _case("email-unescaped-from-line-in-body", _from_line, ("sync", "email", IN),
          "harbour office", "email", [("box.mbox#message 1", "'From '")], files=2),
    _case("email-multipart-without-boundary", _no_boundary, ("sync", "email", IN),
          "harbour contract", "email", [("box.mbox#message 1", "without a usable boundary")],
          files=2),
    _case("email-truncated-mbox-then-whole", _truncated, ("sync", "email", f"{IN}/full.mbox"),
          "harbour numbers", "email", [("full.mbox#message 3", "truncated copy")], files=3,
          more=_one_copy, before=(("sync", "email", f"{IN}/cut.mbox"),)),
    _case("email-5000-recipients", _recipients, ("sync", "email", IN), "lighthouse", "email",
          [], files=1),
    _case("email-charsets-declared-wrong", _wrong_charset, ("sync", "email", IN), "harbour",
          "email", [("box.mbox#message 1", "not; read as cp1252")], files=2, more=_charset_text),
    _case("meetings-vtt-impossible-timestamps", _bad_vtt, ("sync", "meetings", IN), "harbour",
          "meetings", [("Standup.vtt", "unreadable or impossible timestamp", "line 3")],
          files=1, more=_all_cues),
    _case("meetings-one-line-of-1-mb", _megaline, ("sync", "meetings", IN), "lighthouse",
          "meetings", [], files=2),
    _case("meetings-json-nested-100k-deep", _deep_json, ("sync", "meetings", IN), "lighthouse",
          "meetings", [("deep.json", "nested too deeply")], files=1),
    _case("meetings-control-characters", _nul_meeting, ("sync", "meetings", IN), "budget",
          "meetings", [("Review.txt", "U+FFFD", "entry 1")], files=2),
    _case("calendar-secondly-without-end", _series("FREQ=SECONDLY", "20260101T000000Z"),
          ("sync", "calendar", IN, *WINDOW), "lighthouse", "calendar",
          [("cal.ics#rep@x", "more than 2,000 times")], files=2),
    _case("calendar-secondly-from-years-before", _series("FREQ=SECONDLY", "20200101T000000Z"),
          ("sync", "calendar", IN, *WINDOW), "lighthouse", "calendar",
          [("cal.ics#rep@x", "not expanded")], files=2),
    _case("calendar-minutely-without-end", _series("FREQ=MINUTELY", "20260101T000000Z"),
          ("sync", "calendar", IN, *WINDOW), "lighthouse", "calendar",
          [("cal.ics#rep@x", "more than 2,000 times")], files=2),
    _case("calendar-secondly-until-2099-floating", _until_mismatch,
          ("sync", "calendar", IN, *WINDOW), "lighthouse", "calendar",
          [("cal.ics#rep@x", "more than 2,000 times")], files=2),
    _case("calendar-many-events-one-file", _many_events, ("sync", "calendar", IN, *WINDOW),
          "lighthouse", "calendar", [], files=301),
    _case("calendar-empty-garbage-nested-latin1", _broken_calendars,
          ("sync", "calendar", IN, *WINDOW), "lighthouse", "calendar",
          [("empty.ics", "no VCALENDAR"), ("garbage.ics", "not a valid iCalendar"),
           ("latin.ics", "not valid UTF-8"), ("nested.ics", "more event(s) with no DTSTART")],
          files=2),
]
