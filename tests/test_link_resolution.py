"""Links resolve as Obsidian resolves them: any vault file, by name, partial or full path, same
folder first then the shortest path; attachments are reached, not graph pages; doctor reports
what Obsidian would show as unresolved, and is healthy on a healthy vault."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault

CHECKER = Path(__file__).resolve().parents[1] / "bench" / "obsidian_links.py"
_spec = importlib.util.spec_from_file_location("obsidian_links", CHECKER)
obsidian_links = importlib.util.module_from_spec(_spec)
sys.modules["obsidian_links"] = obsidian_links
_spec.loader.exec_module(obsidian_links)

GUIDE = """\
# Guide

![[diagram.svg]] and ![[icons/diagram.svg]] and ![[Attachments/icons/diagram.svg]].
A photo: ![[photo.png]]. A plan: [[Plan.pdf]]. A board: [[Board.canvas]].
Gone: ![[missing.png]] and [[Old Plan.pdf]].
See [[Setup]], [[Setup.md]], [[notes/Setup]] and [[setup|the setup]].
Also [the setup](Setup.md), [the other](../notes/Setup.md), [spaced](Some%20Note.md).
Sections: [[Setup#Install]], [[Setup#Install: step one]], [[Setup#^step1]], [[Setup#^shot]].
Broken sections: [[Setup#Uninstall]], [[Setup#^nope]]; a citation: [[Setup#L3-L5]].
Math is not a link: $[a](b)$ but after it [[Setup]] is.
"""

SETUP = """\
# Setup

## Install

### Install: step one

Run the installer. ^step1

![[photo.png]]^shot
"""


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "Attachments/icons/diagram.svg", "<svg/>")
    put(vault, "Attachments/photo.PNG", "")
    put(vault, "Attachments/Plan.pdf", "")
    put(vault, "Board.canvas", "{}")
    put(vault, "docs/Guide.md", GUIDE)
    put(vault, "docs/Setup.md", SETUP)
    put(vault, "notes/Setup.md", "# Setup (notes)\n\nThe notes' own setup.\n")
    put(vault, "archive/old/Setup.md", "# Setup (old)\n\nAn old setup.\n")
    put(vault, "notes/Some Note.md", "# Some Note\n\nSpaces in the name.\n")
    put(vault, "top/Index.md", "# Index\n\nStart with [[Setup]].\n")
    put(vault, "people/Sam A.md", "---\naliases: [Sam]\n---\n# Sam A\n\nOne Sam.\n")
    put(vault, "people/Sam B.md", "---\naliases: [Sam]\n---\n# Sam B\n\nAnother Sam.\n")
    vault.index()
    return vault


def links_of(vault: Vault, origin: str) -> list[tuple[str, str, str | None, str | None]]:
    """(ref, resolution, page path, file) of the links a page produced, in order."""
    return [tuple(r) for r in vault.store.rows(
        """SELECT l.dst_ref, l.resolution, d.path, l.file FROM links l
           JOIN pages o ON o.id = l.origin_id LEFT JOIN pages d ON d.id = l.dst_id
           WHERE o.path = ? ORDER BY l.line, l.id""", (origin,))]


def test_attachments_resolve_by_name_partial_path_and_full_path(v: Vault) -> None:
    rows = {(ref, state, file) for ref, state, _, file in links_of(v, "docs/Guide.md")}
    for ref in ("diagram.svg", "icons/diagram.svg", "Attachments/icons/diagram.svg"):
        assert (ref, "file", "Attachments/icons/diagram.svg") in rows
    assert ("photo.png", "file", "Attachments/photo.PNG") in rows  # case-insensitive
    assert ("Plan.pdf", "file", "Attachments/Plan.pdf") in rows
    assert ("Board.canvas", "file", "Board.canvas") in rows
    assert ("missing.png", "unresolved", None) in rows
    assert ("Old Plan.pdf", "unresolved", None) in rows


def test_attachments_are_not_graph_neighbours(v: Vault) -> None:
    others = {e.other.path for e in v.neighbors("docs/Guide.md")}
    assert others == {"docs/Setup.md", "notes/Setup.md", "notes/Some Note.md"}


def test_notes_resolve_by_name_md_suffix_path_and_markdown_link(v: Vault) -> None:
    rows = [(ref, state, page) for ref, state, page, _ in links_of(v, "docs/Guide.md")
            if state == "resolved"]
    # Same folder first: docs/Setup.md, not the shorter notes/ or the root-most archive one.
    assert ("Setup", "resolved", "docs/Setup.md") in rows
    assert ("Setup.md", "resolved", "docs/Setup.md") in rows
    assert ("setup", "resolved", "docs/Setup.md") in rows
    assert ("notes/Setup", "resolved", "notes/Setup.md") in rows
    assert ("../notes/Setup.md", "resolved", "notes/Setup.md") in rows
    assert ("Some Note.md", "resolved", "notes/Some Note.md") in rows  # by name, from anywhere
    assert not [r for r in links_of(v, "docs/Guide.md") if r[0] in ("a", "b")]  # $…$ is math


def test_an_ambiguous_name_resolves_by_the_shortest_path_and_keeps_its_backlink(v: Vault
                                                                                ) -> None:
    assert links_of(v, "top/Index.md") == [("Setup", "resolved", "docs/Setup.md", None)]
    assert "top/Index.md" in {e.origin for e in v.backlinks("docs/Setup.md")}
    notes = {f.check: f for f in v.doctor().findings}
    assert "ambiguous-links" not in notes
    assert notes["shared-names"].level == "note"
    assert notes["shared-names"].items == ("top/Index.md:3 → [[Setup]] → docs/Setup.md",)


def test_headings_and_blocks_resolve_to_the_page_and_missing_ones_are_reported(v: Vault
                                                                              ) -> None:
    rows = [(ref, state, page) for ref, state, page, _ in links_of(v, "docs/Guide.md")]
    assert rows.count(("Setup", "resolved", "docs/Setup.md")) == 9  # 2 plain, 4 + 3 sections
    anchors = {f.check: f for f in v.doctor().findings}["broken-anchors"]
    assert anchors.level == "warn"
    assert anchors.items == ("docs/Guide.md:9 → [[Setup#Uninstall]]",
                             "docs/Guide.md:9 → [[Setup#^nope]]")


def test_doctor_is_healthy_with_shared_aliases_and_lists_what_obsidian_would(v: Vault) -> None:
    health = v.doctor()
    checks = {f.check: f for f in health.findings}
    assert checks["aliases"].level == "note"
    assert health.ok
    assert checks["dangling-links"].items == ("docs/Guide.md:5 → ![[missing.png]]",
                                              "docs/Guide.md:5 → [[Old Plan.pdf]]")
    assert "1 of them embeds" in checks["dangling-links"].message
    obsidian = {(f.path, f.line, f.target) for f in obsidian_links.check(v.root)
                if f.resolved is None}
    assert obsidian == {("docs/Guide.md", 5, "missing.png"), ("docs/Guide.md", 5, "Old Plan.pdf")}


def test_a_link_by_alias_only_works_in_kenning_and_doctor_says_obsidian_differs(v: Vault
                                                                               ) -> None:
    put(v, "people/Maya Okafor.md", "---\naliases: [Maya]\n---\n# Maya Okafor\n\nMaya.\n")
    put(v, "memory/2026-01-02.md", "# 2026-01-02\n\nLunch with [[Maya]] and [[Sam]].\n")
    v.index()
    assert links_of(v, "memory/2026-01-02.md") == [
        ("Maya", "resolved", "people/Maya Okafor.md", None), ("Sam", "ambiguous", None, None)]
    checks = {f.check: f for f in v.doctor().findings}
    assert checks["links-by-title"].level == "note"
    assert checks["links-by-title"].items == (
        "memory/2026-01-02.md:3 → [[Maya]] → people/Maya Okafor.md (by alias)",)
    assert checks["ambiguous-links"].items == ("memory/2026-01-02.md:3 → [[Sam]]",)


@pytest.mark.parametrize("scan", [False, True], ids=["lookup", "scan"])
def test_a_file_that_appears_disappears_or_moves_re_resolves_its_links(
        v: Vault, scan: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.index import indexer

    if scan:  # the pass over every link that many changed names take
        monkeypatch.setattr(indexer, "DIRTY_SCAN", 0)
    (v.root / "Attachments/icons/diagram.svg").unlink()
    v.index()
    gone = {r[1] for r in links_of(v, "docs/Guide.md") if r[0].endswith("diagram.svg")}
    assert gone == {"unresolved"}
    put(v, "elsewhere/diagram.svg", "<svg/>")
    v.index()
    rows = {r[0]: r for r in links_of(v, "docs/Guide.md") if r[0].endswith("diagram.svg")}
    assert rows["diagram.svg"][1:] == ("file", None, "elsewhere/diagram.svg")
    assert rows["icons/diagram.svg"][1] == "unresolved"  # the partial path no longer fits
    # A note of the same name appearing in the linking note's own folder takes over.
    put(v, "top/Setup.md", "# Setup (top)\n\nRight here.\n")
    v.index()
    assert links_of(v, "top/Index.md") == [("Setup", "resolved", "top/Setup.md", None)]
    (v.root / "top/Setup.md").unlink()
    v.index()
    assert links_of(v, "top/Index.md") == [("Setup", "resolved", "docs/Setup.md", None)]


def test_a_markdown_file_that_cannot_be_indexed_is_still_a_link_target(v: Vault) -> None:
    (v.root / "notes/Binary.md").write_bytes(b"# Binary\x00\x01")
    put(v, "notes/Uses binary.md", "# Uses binary\n\nSee [[Binary]].\n")
    v.index()
    assert links_of(v, "notes/Uses binary.md") == [("Binary", "file", None, "notes/Binary.md")]


def test_doctor_text_cuts_long_lists_and_json_lists_every_item(v: Vault) -> None:
    put(v, "notes/Many.md", "# Many\n\n" + "".join(f"[[Nothing {i}]]\n\n" for i in range(25)))
    v.index()
    cli = [sys.executable, "-m", "kenning.cli", "-C", str(v.root), "doctor"]
    text = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert text.returncode == 0, text.stdout + text.stderr  # dangling links warn, not fail
    assert "… and 7 more (`kenning doctor --json` lists them all)" in text.stdout
    data = json.loads(subprocess.run([*cli, "--json"], capture_output=True, text=True,
                                     check=False).stdout)
    dangling = next(f for f in data["findings"] if f["check"] == "dangling-links")
    assert dangling["count"] == len(dangling["items"]) == 27
    assert data["ok"] is True
    strict = subprocess.run([*cli, "--strict"], capture_output=True, text=True, check=False)
    assert strict.returncode == 1  # with --strict the warnings fail; the notes never do


def test_a_vault_with_only_notes_is_healthy_even_with_strict(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "w")
    put(vault, "a/Topic.md", "---\naliases: [T]\n---\n# Topic\n\nSee [[b/Topic]].\n")
    put(vault, "b/Topic.md", "---\naliases: [T]\n---\n# Topic\n\nSee [[Topic]] and ![[x.png]].\n")
    put(vault, "b/x.png", "")
    vault.index()
    health = vault.doctor()
    assert health.ok
    assert not [f for f in health.findings if f.level in ("warn", "error")
                and f.check not in ("vectors",)], health.to_dict()


OBSIDIAN_CASES = [  # (link, linking note, the file Obsidian opens)
    ("Page", "a/Note.md", "Page.md"),          # the name is the root file's full path
    ("Page", "b/c/Note.md", "Page.md"),
    ("Topic", "a/Note.md", "a/Topic.md"),      # same folder first …
    ("Topic", "z/Note.md", "a/Topic.md"),      # … then the shortest path, then a-z
    ("Topic", "b/c/Note.md", "b/c/Topic.md"),
    ("Deep", "a/Note.md", "a/x/Deep.md"),      # a subfolder of the note's folder counts
    ("Deep", "q/Note.md", "zz/Deep.md"),
    ("c/Topic", "z/Note.md", "b/c/Topic.md"),  # a partial path
    ("/b/c/Topic", "z/Note.md", "b/c/Topic.md"),  # from the root
    ("/c/Topic", "z/Note.md", None),           # rooted: no suffix search
    ("../Page", "a/Note.md", "Page.md"),       # relative to the note
    ("./Topic", "b/c/Note.md", "b/c/Topic.md"),
    ("X.PNG", "a/Note.md", "img/x.png"),       # case, and an extension of its own
    ("x", "a/Note.md", None),                  # .md is the only extension added
    ("v1.2 notes", "a/Note.md", "d/v1.2 notes.md"),
    ("diagram.svg", "a/Note.md", "diagram.svg.md"),  # no such attachment: the note named so
    ("Topic.md", "z/Note.md", "a/Topic.md"),
    ("q/Topic", "z/Note.md", None),            # a path that does not end the file's path
]
FILES = ["Page.md", "a/Page.md", "a/Topic.md", "b/Topic.md", "b/c/Topic.md", "img/x.png",
         "d/v1.2 notes.md", "diagram.svg.md", "a/x/Deep.md", "zz/Deep.md"]


@pytest.mark.parametrize(("link", "source", "expected"), OBSIDIAN_CASES)
def test_kenning_and_the_checker_resolve_as_obsidian_does(link: str, source: str,
                                                          expected: str | None) -> None:
    from kenning.index.links import VaultFile, file_key, find_file, norm_name, ref_key

    assert obsidian_links.Resolver(FILES).resolve(link, source) == expected
    norm = norm_name(link)
    files = [VaultFile(p, norm_name(p), None if not p.endswith(".md") else i,
                       p.endswith(".md")) for i, p in enumerate(FILES)]
    hit = find_file(norm, source, [f for f in files if file_key(f.path) == ref_key(norm)])
    assert (hit[0].path if hit else None) == expected


def test_bare_names_kenning_reads_are_a_note_not_a_broken_link(v: Vault) -> None:
    put(v, "people/Tom.md", "---\ntype: person\norganization: Nowhere Inc\n---\n# Tom\n\nTom.\n")
    put(v, "people/Ana.md", "---\ntype: person\norganization: Sam\n---\n# Ana\n\nAna.\n")
    v.index()
    checks = {f.check: f for f in v.doctor().findings}
    assert checks["names-without-page"].level == "note"
    assert checks["names-without-page"].items == (
        "people/Ana.md:3 [organization] → 'Sam' (several pages have the name)",
        "people/Tom.md:3 [organization] → 'Nowhere Inc'")
    assert "ambiguous-links" not in checks and "dangling-links" in checks
    assert not any("Nowhere" in i for i in checks["dangling-links"].items)


def test_markdown_attachment_opens_by_full_path_only() -> None:
    """An import's Markdown original kept as an attachment opens by its full path; the bare
    name still means the page."""
    from kenning.index.links import find_file, vault_file

    page = vault_file("people/Peter.md", 1, True)
    kept = vault_file("sources/imports/openclaw/x/bank/entities/Peter.md", None, False)
    hit = find_file("sources/imports/openclaw/x/bank/entities/peter", "people/Peter.md",
                    [page, kept])
    assert hit == (kept, "path")
    assert find_file("peter", "notes/a.md", [page, kept]) == (page, "path")
