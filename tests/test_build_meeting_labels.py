"""Meeting labels in the build: every speaker an attendee of the meeting page, the organization a
label names as works_at evidence cited at that label's turn, and no organizations made of
capitalised phrases in the talk."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from kenning.cli import main
from kenning.vault.page import Page, parse_page

VTT = """WEBVTT

1
00:00:01.000 --> 00:00:03.000
stokes: Welcome to the call, let's start with the Telegram group.

2
00:00:03.500 --> 00:00:06.000
Felix (Geth): Thanks. The Working Group met, and Blob Labs shipped a draft.

3
00:00:06.500 --> 00:00:09.000
Pablo Deymo | Lambda: We signed with Acme Corp and talked to the Kestrel Labs people.

4
00:00:09.500 --> 00:00:11.000
Ana Lima | Kestrel Labs: Yes, we did.
"""


def _run(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pages(root: Path, folder: str) -> dict[str, Page]:
    """Pages of one folder by title (file names are the build's business)."""
    out = {}
    for path in (root / folder).glob("*.md"):
        rel = path.relative_to(root).as_posix()
        page = parse_page(path.read_text(encoding="utf-8"), rel)
        out[page.title] = page
    return out


def _stem(link: str) -> str:
    return re.sub(r"^\[\[([^|\]#]+).*$", r"\1", link).rsplit("/", 1)[-1].removesuffix(".md")


def test_speakers_attend_and_label_organizations_are_works_at(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    src = tmp_path / "in" / "2026-03-02 Core devs.vtt"
    src.parent.mkdir()
    src.write_text(VTT, encoding="utf-8")
    _run(root, "sync", "meetings", str(src))
    _run(root, "build")

    people = _pages(root, "people")
    assert {"Stokes", "Felix", "Pablo Deymo", "Ana Lima"} <= set(people)
    (meeting,) = _pages(root, "meetings").values()
    attending = {_stem(a) for a in meeting.frontmatter["attendees"]}
    assert {Path(people[n].path).stem for n in ("Stokes", "Felix", "Pablo Deymo",
                                                 "Ana Lima")} <= attending

    orgs = _pages(root, "organizations")
    # The labels name Geth, Lambda and Kestrel Labs; "Acme Corp" has a legal form. The talk's
    # "Telegram group", "Working Group" and "Blob Labs" are not organizations.
    assert set(orgs) == {"Geth", "Lambda", "Kestrel Labs", "Acme"}, set(orgs)

    source = (root / "sources" / "meetings" / "2026-03-02-core-devs.md").read_text()
    lines = source.split("\n")
    for person, org in (("Felix", "Geth"), ("Pablo Deymo", "Lambda"),
                        ("Ana Lima", "Kestrel Labs")):
        (fact,) = [f for f in people[person].facts if f.relation == "works_at"]
        assert Path(orgs[org].path).stem == _stem(fact.target or ""), fact
        cited = int(re.search(r"#L(\d+)", fact.source or "").group(1))
        assert f"{person} " in lines[cited - 1] and org in lines[cited - 1]  # the label line
