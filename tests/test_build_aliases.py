"""The vault a build leaves passes `doctor`: the build never writes an alias another page holds
(as title or alias), nor a desk name ("Legal") as a person's alias; a source whose title is an
organization's name is no alias conflict."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_build import ALEX, build, email, vault

from kenning.cli import main
from kenning.vault.page import parse_page


def _pages(root: Path, folder: str) -> dict[str, list[str]]:
    """Title → aliases of every page in ``folder``."""
    out = {}
    for p in sorted((root / folder).glob("*.md")):
        page = parse_page(p.read_text(encoding="utf-8"), p.relative_to(root).as_posix())
        out[page.title] = [str(a) for a in page.frontmatter.get("aliases") or []]
    return out


def _doctor(root: Path) -> dict:
    assert CliRunner().invoke(main, ["-C", str(root), "index"]).exit_code == 0
    result = CliRunner().invoke(main, ["-C", str(root), "doctor", "--json"])
    return json.loads(result.output)


def test_a_desk_name_is_never_a_persons_alias(tmp_path: Path) -> None:
    root = vault(tmp_path)
    tana = ("Tana Jones", "tana.jones@enron.com", "from")
    mark = ("Mark Taylor", "mark.taylor@enron.com", "from")
    email(root, "t1", "ISDA draft", "2001-01-02", [tana, ALEX])
    email(root, "m1", "Master agreement", "2001-01-03", [mark, ALEX])
    email(root, "t2", "Re: ISDA draft", "2001-02-02", [("Legal", tana[1], "from"), ALEX])
    email(root, "m2", "Re: Master agreement", "2001-02-03", [("Legal", mark[1], "from"), ALEX])
    build(root)
    people = _pages(root, "people")
    assert "Tana Jones" in people and "Mark Taylor" in people
    assert all("legal" not in {a.casefold() for a in aliases} for aliases in people.values()), \
        people
    report = _doctor(root)
    assert next(f for f in report["findings"] if f["check"] == "aliases")["level"] == "ok"


def test_a_name_another_page_holds_is_not_written_as_an_alias(tmp_path: Path) -> None:
    root = vault(tmp_path)
    bob = ("Bob Smith", "bob@acme.com", "from")
    robert = ("Robert Smith", "robert@globex.com", "from")
    email(root, "b1", "Pricing", "2001-01-02", [bob, ALEX])
    email(root, "r1", "Contract", "2001-01-03", [robert, ALEX])
    # Robert signs as "Bob Smith" too: that is already another page's title.
    email(root, "r2", "Re: Contract", "2001-02-03", [("Bob Smith", robert[1], "from"), ALEX])
    build(root)
    people = _pages(root, "people")
    assert "Bob Smith" in people and "Robert Smith" in people, people
    assert "Bob Smith" not in people["Robert Smith"], people
    report = _doctor(root)
    assert next(f for f in report["findings"] if f["check"] == "aliases")["level"] == "ok"


def test_a_source_titled_as_an_organization_is_no_alias_conflict(tmp_path: Path) -> None:
    root = vault(tmp_path)
    (root / "organizations" / "Enron.md").write_text(
        "---\ntype: organization\naliases: [Enron Corporation]\n---\n# Enron\n", encoding="utf-8")
    email(root, "e1", "Enron Corporation", "2001-01-02",
          [("Tana Jones", "tana.jones@enron.com", "from"), ALEX])
    report = _doctor(root)
    assert report["ok"]
    aliases = [f for f in report["findings"] if f["check"] == "aliases"]
    assert aliases[0]["level"] == "ok", aliases
