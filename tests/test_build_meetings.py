"""Meeting pages carry their state: topics from the notes export cited by line range, calendar
events as meeting pages, and one page for an event and its transcript — from real .ics, .vtt
and Markdown files synced by Kenning's connectors and built by `kenning build`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from kenning.vault import frontmatter

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Kenning tests//EN
BEGIN:VEVENT
UID:pricing-review@kestrel.dev
SUMMARY:Pricing review
DTSTART:20260310T100000Z
DTEND:20260310T110000Z
ORGANIZER;CN=Dana Kim:mailto:dana@kestrel.dev
ATTENDEE;CN=Omar Haddad;PARTSTAT=ACCEPTED:mailto:omar@bluefin.example
END:VEVENT
BEGIN:VEVENT
UID:standup@kestrel.dev
SUMMARY:Team standup
DTSTART:20260302T090000Z
DTEND:20260302T091500Z
RRULE:FREQ=WEEKLY;COUNT=3
ORGANIZER;CN=Dana Kim:mailto:dana@kestrel.dev
ATTENDEE;CN=Lena Park:mailto:lena@kestrel.dev
END:VEVENT
END:VCALENDAR
"""

VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v Dana Kim>Thanks for joining, Omar.

00:00:05.000 --> 00:00:09.000
<v Omar Haddad>Happy to. Let's start with the tiers.
"""

NOTES = """Title: Roadmap sync
Date: 2026-03-12
Attendees: Dana Kim, Lena Park

### Pricing tiers

We agreed three tiers.
Enterprise stays custom.

### Hiring plan

Two roles open.

### Action items

- Lena: post the roles

## Transcript

Dana Kim: Two things today.
Lena Park: Ready.
"""

WINDOW = ["--since", "2026-01-01", "--until", "2026-06-01"]


def _run(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    return root


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    cal = tmp_path / "work.ics"
    cal.write_text(ICS, encoding="utf-8")
    talks = tmp_path / "talks"
    talks.mkdir()
    (talks / "2026-03-10-pricing-review.vtt").write_text(VTT, encoding="utf-8")
    (talks / "2026-03-12-roadmap-sync.md").write_text(NOTES, encoding="utf-8")
    (talks / "2026-03-09-team-standup.vtt").write_text(
        "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n<v Lena Park>Nothing blocking.\n",
        encoding="utf-8")
    return cal, talks


def _line(path: Path, prefix: str) -> int:
    return next(i for i, row in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
                if row.startswith(prefix))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(
                (".kenning/index", ".kenning/build/journal"))}


def _pricing_page(root: Path) -> str:
    pages = sorted(p.name for p in (root / "meetings").glob("*.md"))
    assert [p for p in pages if "ricing" in p] == ["2026-03-10 Pricing review.md"], pages
    return (root / "meetings" / "2026-03-10 Pricing review.md").read_text(encoding="utf-8")


def _expected_pricing(root: Path) -> list[str]:
    event = root / "sources/calendar/2026-03-10-pricing-review.md"
    talk = root / "sources/meetings/2026-03-10-pricing-review.md"
    when = _line(event, "- 2026-03-10 ")
    first = _line(talk, "- **")
    return [f"- 2026-03-10 — Calendar event [source:: [[sources/calendar/2026-03-10-pricing-review"
            f"#L{when}]]]",
            f"- 2026-03-10 — Transcript [source:: [[sources/meetings/2026-03-10-pricing-review"
            f"#L{first}]]]"]


def _expected_pricing_transcript(root: Path) -> str:
    talk = root / "sources/meetings/2026-03-10-pricing-review.md"
    return (f"- 2026-03-10 — Transcript [source:: [[sources/meetings/2026-03-10-pricing-review"
            f"#L{_line(talk, '- **')}]]]")


def _timeline(text: str) -> list[str]:
    return [r for r in text.split("## Timeline\n", 1)[1].split("\n## ", 1)[0].split("\n")
            if r.strip()]


def test_event_and_transcript_are_one_page_citing_both(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    cal, talks = _inputs(tmp_path)
    _run(root, "sync", "calendar", str(cal), *WINDOW)
    _run(root, "sync", "meetings", str(talks))
    talk = root / "sources/meetings/2026-03-10-pricing-review.md"
    assert frontmatter.read(talk.read_text(encoding="utf-8")).data["event"] == \
        "[[sources/calendar/2026-03-10-pricing-review]]"
    _run(root, "build")
    text = _pricing_page(root)
    data = frontmatter.read(text).data
    assert data["type"] == "meeting" and str(data["date"]) == "2026-03-10"
    assert data["attendees"] == ["[[Dana Kim]]", "[[Omar Haddad]]"]
    assert _timeline(text) == _expected_pricing(root)
    # The attendees' pages link the one page, from the event and from the transcript.
    omar = (root / "people" / "Omar Haddad.md").read_text(encoding="utf-8")
    assert "Invited to [[2026-03-10 Pricing review|Pricing review]]" in omar
    assert "Attended [[2026-03-10 Pricing review|Pricing review]]" in omar
    # The attendees' `attended` edges to the one page, in the index's graph.
    CliRunner().invoke(main, ["-C", str(root), "index"])
    edges = _run(root, "graph", "neighbors", "meetings/2026-03-10 Pricing review.md")
    assert sorted({e["path"] for e in edges if e["rel"] == "attended"}) == \
        ["people/Dana Kim.md", "people/Omar Haddad.md"]
    # A recurring series is one page of its own, a line per occurrence.
    standup = (root / "meetings" / "Team standup.md").read_text(encoding="utf-8")
    event = root / "sources/calendar/2026-03-02-team-standup.md"
    assert _timeline(standup) == [
        f"- {day} — Calendar event [source:: [[sources/calendar/2026-03-02-team-standup"
        f"#L{_line(event, '- ' + day)}]]]" for day in ("2026-03-02", "2026-03-09", "2026-03-16")]
    assert frontmatter.read(standup).data["attendees"] == ["[[Dana Kim]]", "[[Lena Park]]"]
    # The transcript of one occurrence keeps its own page, citing that occurrence.
    occurrence = root / "sources/meetings/2026-03-09-team-standup.md"
    assert frontmatter.read(occurrence.read_text(encoding="utf-8")).data["event"] == \
        "[[sources/calendar/2026-03-02-team-standup]]"
    page = next(p for p in (root / "meetings").glob("2026-03-09 *.md"))
    assert _timeline(page.read_text(encoding="utf-8")) == [
        "- 2026-03-09 — Calendar event, one of [[Team standup]] [source:: [[sources/calendar/"
        f"2026-03-02-team-standup#L{_line(event, '- 2026-03-09')}]]]",
        "- 2026-03-09 — Transcript [source:: [[sources/meetings/2026-03-09-team-standup"
        f"#L{_line(occurrence, '- **')}]]]"]
    before = _snapshot(root)
    _run(root, "build")
    assert _snapshot(root) == before


def test_transcript_built_first_then_its_event_joins_the_page(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    cal, talks = _inputs(tmp_path)
    _run(root, "sync", "meetings", str(talks))
    _run(root, "build")
    assert (root / "meetings" / "2026-03-10 pricing review.md").exists()
    transcript_line = _expected_pricing_transcript(root)
    _run(root, "sync", "calendar", str(cal), *WINDOW)  # links the transcript to its event
    _run(root, "build")
    pages = sorted(p.name for p in (root / "meetings").glob("*.md"))
    assert [p for p in pages if "ricing" in p] == ["2026-03-10 pricing review.md"]
    text = (root / "meetings" / "2026-03-10 pricing review.md").read_text(encoding="utf-8")
    # Sync added `event:` to the transcript's frontmatter, so its turns moved down a line: the
    # transcript's line now cites where its first turn is (on the attendees' pages too).
    assert _timeline(text) == _expected_pricing(root)
    assert transcript_line not in _expected_pricing(root)
    omar = (root / "people" / "Omar Haddad.md").read_text(encoding="utf-8")
    talk = root / "sources/meetings/2026-03-10-pricing-review.md"
    turn = next(i for i, row in enumerate(talk.read_text(encoding="utf-8").split("\n"), 1)
                if row.startswith("- **") and "Omar Haddad:" in row)
    attended = [r for r in _timeline(omar) if r.startswith("- 2026-03-10 — Attended")]
    assert attended == ["- 2026-03-10 — Attended [[2026-03-10 pricing review|pricing review]] "
                        f"[source:: [[sources/meetings/2026-03-10-pricing-review#L{turn}]]]"]
    before = _snapshot(root)
    _run(root, "build")
    assert _snapshot(root) == before


def test_topics_are_the_notes_sections_cited_by_line_range(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _, talks = _inputs(tmp_path)
    _run(root, "sync", "meetings", str(talks))
    _run(root, "build")
    source = root / "sources/meetings/2026-03-12-roadmap-sync.md"
    rows = source.read_text(encoding="utf-8").split("\n")
    tiers, hiring = _line(source, "### Pricing tiers"), _line(source, "### Hiring plan")
    actions = _line(source, "### Action items")
    # Each section runs from its heading to its last non-blank line; the action items are
    # not a topic (the items sections read them).
    assert rows[hiring - 3].strip() and not rows[hiring - 2].strip()
    page = next(p for p in (root / "meetings").glob("*.md") if "oadmap" in p.name)
    text = page.read_text(encoding="utf-8")
    topics = text.split("## Topics\n\n", 1)[1].split("\n\n", 1)[0].split("\n")
    base = "sources/meetings/2026-03-12-roadmap-sync"
    assert topics == [f"- Pricing tiers [source:: [[{base}#L{tiers}-L{hiring - 2}]]]",
                      f"- Hiring plan [source:: [[{base}#L{hiring}-L{actions - 2}]]]"]
    assert text.index("## Topics") < text.index("## Timeline")
    # A transcript without sections gets no topics made up for it.
    plain = (root / "meetings" / "2026-03-10 pricing review.md").read_text(encoding="utf-8")
    assert "## Topics" not in plain
    # A person's edit of the section is theirs: a re-synced, rebuilt source leaves it.
    page.write_text(text.replace("- Hiring plan", "- Hiring plan (two roles)"), encoding="utf-8")
    edited = page.read_text(encoding="utf-8")
    source.write_text(source.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _run(root, "build")
    assert page.read_text(encoding="utf-8") == edited


QMSUM = Path(__file__).resolve().parents[2] / "shared" / "eval" / "meetings" / "qmsum" / \
    "transcripts" / "ES2004a.json"


@pytest.mark.skipif(not QMSUM.exists(), reason="QMSum eval data not present")
def test_qmsum_topics_cite_the_turns_their_spans_cover(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "qmsum"
    folder.mkdir()
    (folder / "2026-05-04-es2004a.json").write_bytes(QMSUM.read_bytes())
    _run(root, "sync", "meetings", str(folder))
    _run(root, "build")
    source = root / "sources/meetings/2026-05-04-es2004a.md"
    rows = source.read_text(encoding="utf-8").split("\n")
    turns = [n for n, row in enumerate(rows, 1) if row.startswith("- **")]
    expected = []
    for topic in json.loads(QMSUM.read_text(encoding="utf-8"))["topic_list"]:
        cites = " ".join(f"[source:: [[sources/meetings/2026-05-04-es2004a"
                         f"#L{turns[int(a)]}-L{turns[int(b)]}]]]"
                         for a, b in topic["relevant_text_span"][:3])
        expected.append(f"- {' '.join(topic['topic'].split())} {cites}")
    page = next((root / "meetings").glob("2026-05-04 *.md")).read_text(encoding="utf-8")
    assert page.split("## Topics\n\n", 1)[1].split("\n\n", 1)[0].split("\n") == expected
