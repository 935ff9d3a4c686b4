"""``kenning doctor``'s link and alias findings on a vault with every kind of link problem, on
both backends: exactly the findings (level, check, message, every item in order) the doctor
gave before it stopped reading every link row and every name (it now reads only the rows that
can be a finding, through a partial index, and counts the rest; see docs/decisions.md, "The
doctor reads only the links that can be findings"). The expected lists were recorded from the
previous implementation (main at c96e980) on this vault, which still passes this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault
from kenning.vault.mounts import add_mount

GUIDE = """\
# Guide

![[diagram.svg]] and ![[icons/diagram.svg]] and a photo ![[photo.png]]. A plan: [[Plan.pdf]].
Gone: ![[missing.png]] and [[Old Plan.pdf]] and [gone](Nowhere.md).
See [[Setup]], [[Setup.md]], [[notes/Setup]] and [the other](../notes/Setup.md).
Sections: [[Setup#Install]], [[Setup#^step1]], [[Setup#Uninstall]], [[Setup#^nope]].
By name: [[Maya]], [[Maya Okafor]], [[The Handbook]], [[Sam]], [[Nobody Known]].
Shared: [[Topic]], [[Topic#Missing part]], [[Sam#Anything]], [[Maya#Nowhere]].
Mounts: [[nope:Ada]], [[team:Bob]], [[team:Nobody]].
"""

SETUP = """\
# Setup

## Install

Run the installer. ^step1
"""


def build(root: Path) -> Vault:
    """Attachments, notes sharing a file name, titles, aliases shared by two pages, headings
    and blocks (present and missing), frontmatter names and @mentions with no page or several,
    source participants without a page, a mounted folder and a mount that does not exist, a
    title another page claims as alias and an alias only a source shares."""
    team = root.parent / "team"
    put_file(team / "Bob.md", "# Bob\n\nOn the team.\n")
    v, _ = Vault.init(root)
    add_mount(v.root, "team", team)
    put(v, "Attachments/icons/diagram.svg", "<svg/>")
    put(v, "Attachments/photo.PNG", "")
    put(v, "Attachments/Plan.pdf", "")
    put(v, "docs/Guide.md", GUIDE)
    put(v, "docs/Setup.md", SETUP)
    put(v, "notes/Setup.md", "# Setup (notes)\n\nThe notes' own setup.\n")
    put(v, "a/Topic.md", "# Topic\n\n## Part\n\nOne topic.\n")
    put(v, "b/c/Topic.md", "# Topic\n\nAnother topic.\n")
    put(v, "handbook.md", "---\ntitle: The Handbook\n---\n# The Handbook\n\nRules.\n")
    put(v, "people/Maya Okafor.md", "---\ntype: person\naliases: [Maya]\n---\n# Maya Okafor\n\n"
        "## Work\n\nMaya.\n")
    put(v, "people/Sam A.md", "---\naliases: [Sam]\n---\n# Sam A\n\nOne Sam.\n")
    put(v, "people/Sam B.md", "---\naliases: [Sam]\n---\n# Sam B\n\nAnother Sam.\n")
    put(v, "people/Tom.md", "---\ntype: person\norganization: Nowhere Inc\n---\n# Tom\n\nTom.\n")
    put(v, "people/Ana.md", "---\ntype: person\norganization: Sam\n---\n# Ana\n\nAna.\n")
    put(v, "memory/2026-03-02.md", "# 2026-03-02\n\n## Retain\n"
        "- W @Maya: moved to Berlin\n- B @Unknown_Person: met someone\n")
    put(v, "sources/chats/standup.md", "---\ntype: source\nkind: chat\naliases: [Ana]\n"
        "participants: [Joanna, Maya Okafor]\n---\n# Standup\n\n- **Joanna** (09:00): hi\n")
    put(v, "rules.md", "---\naliases: [The Handbook, Rulebook]\n---\n# Rules\n\nMore rules.\n")
    v.index()
    v.link("Maya Okafor", "advises", "Tom")
    return v


def put_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


LINK_CHECKS = ("source-names", "dangling-links", "unknown-mounts", "ambiguous-links",
               "links-by-title", "shared-names", "names-without-page", "broken-anchors", "links",
               "aliases")

#: The Guide with its dangling, ambiguous and unknown-mount links corrected: the doctor then
#: says every link resolves, counting the links to pages and to files.
FIXED = (GUIDE.replace(" and [[Old Plan.pdf]] and [gone](Nowhere.md)", "")
         .replace("Gone: ![[missing.png]]", "Here: ![[diagram.svg]]")
         .replace(", [[Sam]], [[Nobody Known]]", "").replace(", [[Sam#Anything]]", "")
         .replace("[[nope:Ada]], ", "").replace(", [[team:Nobody]]", ""))

Finding = tuple[str, str, str, tuple[str, ...]]
SOURCE_NAMES: Finding = (
    "ok", "source-names", "1 name(s) in source frontmatter have no page (yet)", ())
BY_TITLE: Finding = (
    "note", "links-by-title", "3 link(s) reach their page by its title or alias only; Obsidian "
    "links by file name and shows them as unresolved",
    ("docs/Guide.md:7 → [[Maya]] → people/Maya Okafor.md (by alias)",
     "docs/Guide.md:7 → [[The Handbook]] → handbook.md (by title)",
     "docs/Guide.md:8 → [[Maya]] → people/Maya Okafor.md (by alias)"))
SHARED: Finding = (
    "note", "shared-names", "2 link(s) name a file that several folders hold; each resolves as "
    "Obsidian resolves it (the shortest path, shown after the arrow)",
    ("docs/Guide.md:8 → [[Topic]] → a/Topic.md", "docs/Guide.md:8 → [[Topic]] → a/Topic.md"))
NAMES: Finding = (
    "note", "names-without-page", "3 name(s) in frontmatter or @mentions name no page, or "
    "several (they are not links in Obsidian)",
    ("memory/2026-03-02.md:5 → 'Unknown Person'",
     "people/Ana.md:3 [organization] → 'Sam' (several pages have the name)",
     "people/Tom.md:3 [organization] → 'Nowhere Inc'"))
ANCHORS: Finding = (
    "warn", "broken-anchors", "4 link(s) point at a heading or block the page does not have "
    "(Obsidian opens the page at its top)",
    ("docs/Guide.md:6 → [[Setup#Uninstall]]", "docs/Guide.md:6 → [[Setup#^nope]]",
     "docs/Guide.md:8 → [[Topic#Missing part]]", "docs/Guide.md:8 → [[Maya#Nowhere]]"))
ALIASES: Finding = (
    "note", "aliases", "2 alias(es) are shared by several pages; a link by such a name alone "
    "resolves only where a file has that name",
    ("'Sam': people/Sam A.md, people/Sam B.md", "'The Handbook': handbook.md, rules.md"))
EXPECTED: list[Finding] = [
    SOURCE_NAMES,
    ("warn", "dangling-links", "5 link(s) lead nowhere: Obsidian shows them as unresolved "
     "(1 of them embeds)",
     ("docs/Guide.md:4 → ![[missing.png]]", "docs/Guide.md:4 → [[Old Plan.pdf]]",
      "docs/Guide.md:4 → (Nowhere.md)", "docs/Guide.md:7 → [[Nobody Known]]",
      "docs/Guide.md:9 → [[team:Nobody]]")),
    ("warn", "unknown-mounts", "1 qualified link(s) name a mount that does not exist "
     "(mounts: team)", ("docs/Guide.md:9 → [[nope:Ada]] (no mount named 'nope')",)),
    ("warn", "ambiguous-links", "2 link(s) name no file, and several pages have the name as "
     "title or alias", ("docs/Guide.md:7 → [[Sam]]", "docs/Guide.md:8 → [[Sam]]")),
    BY_TITLE, SHARED, NAMES, ANCHORS, ALIASES,
]
EXPECTED_FIXED: list[Finding] = [
    SOURCE_NAMES, BY_TITLE, SHARED, NAMES, ANCHORS,
    ("ok", "links", "every link resolves: 18 to pages, 5 to attachments and other files", ()),
    ALIASES,
]


def link_findings(v: Vault) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [(f.level, f.check, f.message, f.items) for f in v.doctor().findings
            if f.check in LINK_CHECKS]


@pytest.mark.both_backends
def test_doctor_link_findings_are_those_of_every_link_row(backend: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v = build(tmp_path / "v")
    try:
        assert link_findings(v) == EXPECTED
        put(v, "docs/Guide.md", FIXED)
        v.index()
        assert link_findings(v) == EXPECTED_FIXED
    finally:
        v.close()
