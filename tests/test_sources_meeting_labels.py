"""Speaker labels as people write them: handles, "Name | Org", "Name (Org)", capitals, CJK,
timestamps on either side, and speech with colons that is not a label.

The fixtures in ``tests/fixtures/transcripts/`` are small and invented; each turn's expected
speaker is written out below, so a turn glued to the previous speaker fails the test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.sources.meetings import labels
from kenning.vault import frontmatter

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def _sync(root: Path, target: Path) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", "meetings", str(target), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _source(root: Path, original: str) -> tuple[dict, list[str]]:
    for path in (root / "sources" / "meetings").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        parsed = frontmatter.read(text)
        if parsed.data["original_file"] == original:
            body = text[parsed.body_offset:]
            return parsed.data, [line for line in body.splitlines() if line.startswith("- **")]
    raise AssertionError(f"no source for {original}")


def _one(vault: Vault, tmp_path: Path, name: str) -> tuple[dict, list[str], dict]:
    src = tmp_path / "in" / name
    src.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / name, src)
    report = _sync(vault.root, src)
    data, turns = _source(vault.root, name)
    return data, turns, report


def test_webvtt_labels_as_zoom_teams_and_meet_write_them(vault: Vault, tmp_path: Path) -> None:
    data, turns, report = _one(vault, tmp_path, "2026-03-10 Zoom community call.vtt")
    assert report["warnings"] == []
    assert turns == [
        "- **[00:00:01] sam:** Hi all, welcome to the community call.",
        "- **[00:00:03] Felix (Geth):** Thanks sam. Quick update from the client team.",
        "- **[00:00:06] Pablo Deymo | Lambda:** We shipped the parser.",
        "- **[00:00:09] jo-smith:** Note: the release is on Friday.",
        # A cue that starts with "Note:" is speech: it continues the speaker before it.
        "- **[00:00:11] jo-smith:** Note: this cue still belongs to jo-smith.",
        "- **[00:00:13] jo_smith:** Is this the same Jo?",
        "- **[00:00:15] SARAH CHEN:** I think so. See https://example.org/notes for the plan.",
        "- **[00:00:17] Dr. Kim:** The meeting moves to 10:30 next week.",
        "- **[00:00:19] Zoë Müller (she/her):** Works for me.",
        "- **[00:00:21] 王小明:** 我同意。",
        "- **[00:00:23] Boma’s iPhone:** Sorry, joining from my phone.",
        "- **[00:00:25] Ana Lima:** Voice spans work too.",
        "- **[00:00:25] Bo Chen | Kestrel Labs:** And two voices in one cue.",
        "- **[00:00:28] dan (danceratopz):** Me first.",
        "- **[00:00:28] Chris - Base:** Then me.",
        "- **[00:00:30] Chris - Base:** and a cue with no label continues the last speaker.",
    ]
    # Every speaker is an attendee, under the name a person would use.
    assert data["attendees"] == data["speakers"] == [
        "Sam", "Felix", "Pablo Deymo", "Jo Smith", "Sarah Chen", "Dr. Kim", "Zoë Müller",
        "王小明", "Boma", "Ana Lima", "Bo Chen", "Dan", "Chris"]
    assert data["speaker_labels"]["jo-smith"] == data["speaker_labels"]["jo_smith"] == "Jo Smith"
    assert data["speaker_labels"]["sam"] == "Sam"
    assert "Dr. Kim" not in data["speaker_labels"]  # written as its name: no mapping needed
    assert data["speaker_organizations"] == {"Felix": "Geth", "Pablo Deymo": "Lambda",
                                             "Bo Chen": "Kestrel Labs", "Chris": "Base"}
    assert data["speaker_aliases"] == {"Jo Smith": ["jo-smith", "jo_smith"],
                                       "Dan": ["danceratopz"]}
    assert data["turns"] == 16


def test_plain_text_timestamps_before_and_after_and_speech_with_colons(
        vault: Vault, tmp_path: Path) -> None:
    data, turns, report = _one(vault, tmp_path, "2026-03-11 planning notes.txt")
    assert report["warnings"] == []
    assert data["title"] == "Planning notes"
    assert turns == [
        # "The plan is:" and "Note:" are speech, not speakers.
        "- **[00:00:05] sam:** Morning. The plan is: ship it on Monday. "
        "Note: we shipped the beta already.",
        "- **[00:00:20] sam:** Second point.",
        "- **[00:00:35] Sam Lee:** I'll take the docs.",
        "- **jo-smith:** Sounds good. 10:30 works for the review.",
        "- **SARAH CHEN:** Agreed.",
        "- **Dr. Kim:** One more thing: https://example.org/spec is the spec.",
        "- **Mercy Okafor | Northwind:** We can host it.",
        "- **[00:00:50] Lee Park (Northwind):** I'll send the invite.",  # Teams' "Name  0:50"
        # A time on its own line (Meet) starts the next turn; "Next Steps:" is a heading.
        "- **[00:01:10] jo_smith:** Done here. Next Steps: send the invite, book the room.",
    ]
    assert data["attendees"] == ["Lee Park", "Sam", "Sam Lee", "Jo Smith", "Sarah Chen",
                                 "Dr. Kim", "Mercy Okafor"]
    assert data["speaker_organizations"] == {"Mercy Okafor": "Northwind", "Lee Park": "Northwind"}


def test_srt_labels_brackets_and_caption_markers(vault: Vault, tmp_path: Path) -> None:
    data, turns, _ = _one(vault, tmp_path, "2026-03-12 captions.srt")
    assert turns == [
        "- **[00:00:01] lightclient:** Let's begin.",
        "- **[00:00:03] Tullio | Erigon:** We are ready.",
        "- **[00:00:05] Tullio | Erigon:** Update: nothing from us.",
        "- **[00:00:07] Ana Lima:** Bracketed speaker.",
        "- **[00:00:09] ANA LIMA:** Caption marker and capitals.",
    ]
    assert data["attendees"] == ["Lightclient", "Tullio", "Ana Lima"]
    assert data["speaker_organizations"] == {"Tullio": "Erigon"}


def test_colons_in_dictation_make_no_speaker(vault: Vault, tmp_path: Path) -> None:
    data, turns, report = _one(vault, tmp_path, "2026-03-13 dictation.txt")
    assert "no speaker names found" in report["warnings"][0]
    assert data["speakers"] == ["Unknown"] and "attendees" not in data
    assert len(turns) == 1 and turns[0].startswith("- **Unknown:** so: we should")


def test_a_lowercase_label_needs_evidence(vault: Vault, tmp_path: Path) -> None:
    """One lowercase "word:" alone is too little; the same label again, or other speakers in
    the file, make it a speaker."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "2026-04-01 alone.txt").write_text("ok: here is the thing\nmore text\n")
    (folder / "2026-04-02 twice.txt").write_text("nixo: first\nnixo: second\n")
    (folder / "2026-04-03 with others.txt").write_text("Ana Lima: hello\nnixo: hi\n")
    _sync(vault.root, folder)
    assert _source(vault.root, "2026-04-01 alone.txt")[0]["speakers"] == ["Unknown"]
    assert _source(vault.root, "2026-04-02 twice.txt")[0]["speakers"] == ["Nixo"]
    assert _source(vault.root, "2026-04-03 with others.txt")[0]["speakers"] == ["Ana Lima",
                                                                               "Nixo"]


def test_marks_nobody_says_are_turns_but_not_attendees(vault: Vault, tmp_path: Path) -> None:
    """Podcast and call transcripts mark breaks and music with a label of their own."""
    src = tmp_path / "in" / "2026-04-04 episode.md"
    src.parent.mkdir()
    src.write_text("**Ana Lima:** Welcome back.\n\n**Break:** [25:10]\n\n"
                   "**Jingle:** la la la\n\n**Bo Chen:** Where were we?\n")
    _sync(vault.root, src)
    data, turns = _source(vault.root, src.name)
    assert turns == ["- **Ana Lima:** Welcome back.", "- **Break:** [25:10]",
                     "- **Jingle:** la la la", "- **Bo Chen:** Where were we?"]
    assert data["attendees"] == ["Ana Lima", "Bo Chen"]


@pytest.mark.parametrize(("text", "name", "org", "alias"), [
    ("Sarah Chen", "Sarah Chen", None, None),
    ("sam", "Sam", None, None),
    ("jo-smith", "Jo Smith", None, None),
    ("jo_smith", "Jo Smith", None, None),
    ("SARAH CHEN", "Sarah Chen", None, None),
    ("RPR", "RPR", None, None),  # initials stay as written
    ("DR. KIM", "Dr. Kim", None, None),
    ("Anne de Vries", "Anne de Vries", None, None),
    ("Łukasz Rozmej", "Łukasz Rozmej", None, None),
    ("田中さん", "田中さん", None, None),
    ("Felix (Geth)", "Felix", "Geth", None),
    ("Tullio | Erigon", "Tullio", "Erigon", None),
    ("Jay || Silence Labs", "Jay", "Silence Labs", None),
    ("Danno Ferrin - Tectonic.xyz", "Danno Ferrin", "Tectonic.xyz", None),
    ("ivo Georgiev @ ambire", "ivo Georgiev", "ambire", None),
    ("Sam Lee (Host)", "Sam Lee", None, None),  # a meeting role is not an employer
    ("Jo (she/her)", "Jo", None, None),
    ("Robert (Bob)", "Robert", None, "Bob"),  # a given name is a nickname
    ("dan (danceratopz)", "Dan", None, "danceratopz"),  # a lowercase handle is an alias
    ("Tom Lehman | EIP-8182", "Tom Lehman", None, None),  # a proposal, not an organization
    ("Karim T.", "Karim T.", None, None),
    ("ethDreamer", "ethDreamer", None, None),
    ("Audio shared by Marco Rossi", "Marco Rossi", None, None),
    ("Nico mobile", "Nico", None, None),
])
def test_label_shapes(text: str, name: str, org: str | None, alias: str | None) -> None:
    label = labels.parse(text)
    assert label is not None, text
    assert (label.name, label.org, label.alias, label.raw) == (name, org, alias, text)


@pytest.mark.parametrize("text", [
    "Note", "The plan is", "Second thought", "Next Steps", "Action Items", "https", "10",
    "So", "follow-up", "e.g", "Budget - what we spend", "Call with Sam", "v2",
])
def test_what_is_not_a_label(text: str) -> None:
    assert labels.parse(text) is None
