"""Source files written by an older renderer are re-rendered from their input (a repair,
recorded), never at the cost of text only the old file holds; every source file has a title."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.sources.store import Entry, SourceDoc, SourceStore, SyncReport
from kenning.vault import frontmatter

VTT = """WEBVTT

1
00:00:01.000 --> 00:00:02.000
Mario Havel: Hey.

2
00:00:03.000 --> 00:00:04.000
stokes: Welcome to the call.

3
00:00:05.000 --> 00:00:06.000
Felix (Geth): Thanks.
"""
# What the renderer before speaker labels (meetings renderer 1) wrote for VTT: "stokes:" was not
# a label, so the chair's turn went to the previous speaker and the chair was no attendee.
OLD = """---
type: source
kind: meeting
title: Core devs
date: 2026-03-02
connector: meetings
source_id: meeting:2026-03-02:core-devs
fetched: '2026-11-30T10:00:00Z'
content_hash: sha256:af6a6194e5edb91cc76137319ba68f3ceea020bb35e2235119ecd9edd09db384
duration: 00:00:06
attendees:
  - Mario Havel
  - Felix (Geth)
speakers:
  - Mario Havel
  - Felix (Geth)
turns: 3
source_format: webvtt
original_file: 2026-03-02 Core devs.vtt
date_source: file name
---
# Core devs

**When:** 2026-03-02 · **From:** WebVTT `2026-03-02 Core devs.vtt`

## Transcript

- **[00:00:01] Mario Havel:** Hey.

- **[00:00:03] Mario Havel:** stokes: Welcome to the call.

- **[00:00:05] Felix (Geth):** Thanks.
"""
SOURCE = "sources/meetings/2026-03-02-core-devs.md"


def _sync(root: Path, kind: str, target: Path) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", kind, str(target), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted((root / "sources").rglob("*")) if p.is_file()}


def _state(root: Path, connector: str) -> dict:
    return json.loads((root / ".kenning" / "sync" / f"{connector}.json").read_text())


def _as_if_written_by_renderer_1(root: Path, text: str = OLD) -> None:
    """Put the vault back to what the older meetings connector left: its file and its state
    (records without a renderer); the input's stamp stays the one just recorded."""
    (root / SOURCE).write_text(text, encoding="utf-8")
    path = root / ".kenning" / "sync" / "meetings.json"
    state = json.loads(path.read_text())
    for record in state["sources"].values():
        record.pop("renderer", None)
        record["keys"] = ["1", "2", "3"]
    state.pop("repairs", None)
    path.write_text(json.dumps(state))


def _input(tmp_path: Path, text: str = VTT) -> Path:
    src = tmp_path / "in" / "2026-03-02 Core devs.vtt"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(text, encoding="utf-8")
    return src


def test_an_unchanged_input_is_re_rendered_when_the_parser_changed(vault: Vault,
                                                                   tmp_path: Path) -> None:
    src = _input(tmp_path)
    _sync(vault.root, "meetings", src)
    _as_if_written_by_renderer_1(vault.root)

    report = _sync(vault.root, "meetings", src)  # the same input, the same stamp
    assert report["rerendered"] == 1 and report["kept"] == 0 and report["warnings"] == []
    assert report["repairs"] == [f"{SOURCE}: re-rendered (renderer 1 → 2)"]
    text = (vault.root / SOURCE).read_text(encoding="utf-8")
    data = frontmatter.read(text).data
    assert data["renderer"] == 2
    assert data["attendees"] == ["Mario Havel", "Stokes", "Felix"]  # not merged with the old
    assert data["speaker_organizations"] == {"Felix": "Geth"}
    assert "- **[00:00:03] stokes:** Welcome to the call." in text
    assert "Mario Havel:** stokes:" not in text
    assert data["fetched"] != "2026-11-30T10:00:00Z"  # the content changed
    state = _state(vault.root, "meetings")
    assert [(r["path"], r["from"], r["to"], r["result"]) for r in state["repairs"]] == [
        (SOURCE, 1, 2, "re-rendered")]
    assert state["sources"]["meeting:2026-03-02:core-devs"]["renderer"] == 2

    before = _snapshot(vault.root)
    again = _sync(vault.root, "meetings", src)
    assert again["unchanged"] == 1 and again["rerendered"] == 0 and again["repairs"] == []
    assert _snapshot(vault.root) == before


def test_a_file_holding_text_the_input_lacks_is_kept_and_frozen(vault: Vault,
                                                                 tmp_path: Path) -> None:
    src = _input(tmp_path)
    _sync(vault.root, "meetings", src)
    # Someone wrote a remark into the old file: re-rendering would drop it.
    old = OLD + "\nMy remark: ask Felix about the Geth release.\n"
    _as_if_written_by_renderer_1(vault.root, old)
    before = _snapshot(vault.root)

    report = _sync(vault.root, "meetings", src)
    assert report["kept"] == 1 and report["rerendered"] == 0
    (warning,) = report["warnings"]
    assert warning.startswith(f"{SOURCE}: not re-rendered (renderer 1 → 2)")
    assert "'remark'" in warning and "kept as it is" in warning
    assert _snapshot(vault.root) == before  # not a byte moved
    assert _state(vault.root, "meetings")["repairs"][-1]["result"] == "kept"

    # A longer re-export is not appended in the new renderer's form to the old file.
    _input(tmp_path, VTT + "\n4\n00:00:07.000 --> 00:00:08.000\nstokes: Bye.\n")
    report = _sync(vault.root, "meetings", src)
    assert "kept as renderer 1 wrote it" in report["warnings"][0]
    assert _snapshot(vault.root) == before


def test_a_re_rendering_that_gives_the_same_body_moves_no_byte(vault: Vault) -> None:
    doc = SourceDoc("chat", "s-1", "Planning", "2026-03-02",
                    [Entry("1", "- **Ana** (10:00): hello")], {"participants": ["Ana"]})
    with SourceStore(vault.root, "chats") as store:  # renderer 1
        rel = store.put(doc, SyncReport("chats"))
    assert rel is not None
    before = _snapshot(vault.root)
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats", renderer=2) as store:
        assert store.stale("s-1")
        store.put(doc, report)
        assert not store.stale("s-1")
    assert report.rerendered == report.kept == 0 and report.unchanged == 1
    assert _snapshot(vault.root) == before
    assert _state(vault.root, "chats")["sources"]["s-1"]["renderer"] == 2


def test_appending_keeps_the_version_that_rendered_the_file(vault: Vault) -> None:
    """Email threads arrive in parts: a newer renderer appends to an old file (its entries are
    keyed by Message-ID) and the file still says which renderer wrote it."""
    def doc(*keys: str) -> SourceDoc:
        return SourceDoc("email", "t-1", "Budget", "2026-03-02",
                         [Entry(k, f"## 2026-03-02 · ana · {k}\n\ntext {k}") for k in keys],
                         complete=False)

    with SourceStore(vault.root, "email") as store:
        rel = store.put(doc("a"), SyncReport("email"))
    assert rel is not None
    with SourceStore(vault.root, "email", renderer=3) as store:
        store.put(doc("b"), SyncReport("email"))
        assert store.rendered_by("t-1") == 1
    data = frontmatter.read((vault.root / rel).read_text()).data
    assert data["renderer"] == 1 and "text b" in (vault.root / rel).read_text()


def test_every_source_file_has_its_title_in_the_frontmatter(vault: Vault, tmp_path: Path) -> None:
    """Source files are named by date and slug; the title says what they are about (a note's
    title is its frontmatter title, else its file name)."""
    mail = tmp_path / "mail" / "cur"
    mail.mkdir(parents=True)
    (mail / "1.eml").write_text("From: Ana <ana@x.org>\nTo: bo@y.org\nSubject: Re: California\n"
                                "Message-ID: <m1@x>\nDate: Thu, 03 May 2001 10:00:00 +0000\n\n"
                                "Hello\n")
    (mail / "2.eml").write_text("From: Ana <ana@x.org>\nTo: bo@y.org\nSubject: \n"
                                "Message-ID: <m2@x>\nDate: Fri, 04 May 2001 10:00:00 +0000\n\n"
                                "No subject here\n")
    _sync(vault.root, "email", tmp_path / "mail")
    _sync(vault.root, "meetings", _input(tmp_path))
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"speaker": "Ana", "text": "hi"}]))
    _sync(vault.root, "chats", chat)
    ics = tmp_path / "cal.ics"
    ics.write_text("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//t//EN\nBEGIN:VEVENT\nUID:e1\n"
                   "DTSTART:20260302T100000Z\nDTEND:20260302T110000Z\nSUMMARY:Weekly sync\n"
                   "END:VEVENT\nEND:VCALENDAR\n")
    result = CliRunner().invoke(main, ["-C", str(vault.root), "sync", "calendar", str(ics),
                                       "--since", "2026-01-01", "--until", "2026-12-31"])
    assert result.exit_code == 0, result.output
    titles = {}
    for path in sorted((vault.root / "sources").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        parsed = frontmatter.read(text)
        h1 = next(line[2:] for line in text[parsed.body_offset:].splitlines()
                  if line.startswith("# "))
        assert parsed.data["title"] == h1, path
        titles.setdefault(path.parent.name, []).append(parsed.data["title"])
    assert sorted(titles["email"]) == ["(no subject)", "California"]
    assert titles["meetings"] == ["Core devs"] and titles["calendar"] == ["Weekly sync"]
    assert titles["chats"] == ["hi"]
