"""basic-memory import (kenning.transfer.basic_memory) on notes the real basic-memory wrote.

The fixture project (tests/fixtures/import/basic-memory/project) was written by basic-memory
0.24.1's own CLI, and expected.json is what basic-memory's own parser reads from each note
(make_fixture.sh). The round trip imports the project into a fresh vault and then reads the
VAULT — not the report — to find every note, observation and relation of expected.json."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from kenning import vocabulary
from kenning.api import Vault
from kenning.errors import KenningError, VocabularyError
from kenning.transfer import basic_memory
from kenning.transfer.plan import ImportFailed, guard_body
from kenning.vault.page import Page, parse_page

FIXTURE = Path(__file__).parent / "fixtures" / "import" / "basic-memory"
PROJECT = FIXTURE / "project"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))["notes"]


def _tree(root: Path) -> dict[str, str]:
    """Every file of the vault but the index, locks and journal, by content hash."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


def _pages(root: Path) -> dict[str, Page]:
    """Every page of the vault outside the raw layer, by title (casefolded)."""
    pages = {}
    for file in sorted(root.rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        if rel.startswith(("sources/", ".kenning/")):
            continue
        page = parse_page(file.read_text(encoding="utf-8"), rel)
        pages[page.title.casefold()] = page
    return pages


def _fold(word: str) -> str:
    try:
        return vocabulary.relation(word)
    except VocabularyError:
        return "related_to"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("bm") / "v"
    vault, _ = Vault.init(root)
    report = vault.import_from("basic-memory", PROJECT)
    yield vault, report
    vault.close()


# -- read() on its own ----------------------------------------------------------------------------


def test_read_maps_every_note_observation_and_relation() -> None:
    got = basic_memory.read(PROJECT)
    assert not got.problems and len(got.entities) == len(EXPECTED) == 9
    by_file = {e.origin.file: e for e in got.entities}
    for rel, note in EXPECTED.items():
        entity = by_file[rel]
        assert entity.name == note["title"] and entity.source_type == note["type"]
        assert entity.origin.id == note["permalink"] == entity.frontmatter["permalink"]
        observations = [f for f in entity.facts if f.relation is None]
        assert len(observations) == len(note["observations"]), rel
        for fact, obs in zip(observations, note["observations"], strict=True):
            assert obs["content"] in fact.text
            if obs["category"]:
                assert fact.text.startswith(f"[{obs['category']}] ")
            if obs["context"]:
                assert fact.text.endswith(f"({obs['context']})")
        explicit = [r for r in note["relations"] if r["type"] != "links_to"]
        relations = [f for f in entity.facts if f.relation]
        assert [(f.relation, f.target) for f in relations] == \
            [(_fold(r["type"]), r["target"]) for r in explicit], rel
    assert got.mapped[("type", "note")] == "topic"
    assert got.mapped[("type", "guide")] == "artifact"
    assert got.mapped[("type", "recipe")] == "thing"
    assert got.mapped[("relation", "requires")] == "depends_on"
    assert got.mapped[("relation", "inspired_by")] == "related_to"


def test_fact_lines_point_at_their_line_in_the_note() -> None:
    got = basic_memory.read(PROJECT)
    for entity in got.entities:
        lines = (PROJECT / entity.origin.file).read_text(encoding="utf-8").split("\n")
        for fact in entity.facts:
            line = lines[fact.origin.line - 1]
            assert line.startswith("- ") and (fact.target or fact.text.split(" #")[0][:20]) \
                in line


def test_prose_kept_verbatim_without_the_lines_that_became_facts() -> None:
    got = basic_memory.read(PROJECT)
    coffee = next(e for e in got.entities if e.name == "Coffee Brewing Methods")
    body = coffee.body or ""
    assert "Pour-over gives the cleanest cup; see [[Coffee Bean Origins]] for what goes in it,\n" \
           "and ask [[Ada Park]] about grind size." in body
    # a task, a code block and a callout are not observations: they stay prose
    assert "- [ ] try the Hoffmann method" in body
    assert "- [not-an-observation] inside a code block #ignored" in body
    assert "> [!note] A callout" in body
    assert "[method]" not in body and "## Relations" not in body and "# Coffee" not in body


def test_relation_to_a_note_not_in_the_project_is_kept_and_reported() -> None:
    got = basic_memory.read(PROJECT)
    assert any("[[Burr Grinder]], a note not in this project" in n for n in got.notes)
    ada = next(e for e in got.entities if e.name == "Ada Park")
    assert ada.aliases == ["Ada"] and ada.created == "2024-11-02"


# -- the round trip --------------------------------------------------------------------------------


def test_round_trip_every_note_observation_and_relation_is_in_the_vault(imported) -> None:
    vault, report = imported
    pages = _pages(vault.root)
    found_obs = found_rel = found_links = 0
    for rel, note in EXPECTED.items():
        page = pages[note["title"].casefold()]
        assert page.frontmatter["permalink"] == note["permalink"]
        assert page.frontmatter["imported_from"] == "basic-memory"
        facts = [f for f in page.facts if f.relation is None]
        for obs in note["observations"]:
            match = [f for f in facts if obs["content"] in f.text
                     and (not obs["category"] or f"[{obs['category']}]" in f.text)
                     and (not obs["context"] or f"({obs['context']})" in f.text)]
            assert len(match) == 1, (rel, obs)
            assert "/basic-memory/" in (match[0].source or "")
            assert f"{note['permalink']}/" in (match[0].source or "")
            for when in obs["temporal"]:       # basic-memory's own reading of @effective…
                assert match[0].valid_from == when["lower"]
                assert match[0].valid_to == when["upper"]
            found_obs += 1
        links = {Path(link.target).name.casefold() for link in page.links}
        for relation in note["relations"]:
            target = relation["target"].casefold()
            if relation["type"] == "links_to":
                assert target in links, (rel, relation)
                found_links += 1
                continue
            rel_facts = [f for f in page.facts if f.relation == _fold(relation["type"])
                         and Path(f.target or "").name.casefold() == target]
            assert rel_facts, (rel, relation)
            if _fold(relation["type"]) == "related_to" and \
                    relation["type"] not in ("relates_to", "related_to"):
                assert any(f"(basic-memory: {relation['type']})" in f.text for f in rel_facts)
            found_rel += 1
    assert found_obs == sum(len(n["observations"]) for n in EXPECTED.values()) == 20
    assert found_rel == sum(1 for n in EXPECTED.values() for r in n["relations"]
                            if r["type"] != "links_to") == 16
    assert found_links > 0
    assert report["read"]["facts"] == found_obs and report["read"]["relations"] == found_rel


def test_round_trip_citations_open_the_original_line(imported) -> None:
    vault, _ = imported
    page = _pages(vault.root)["ada park"]
    fact = next(f for f in page.facts if f.text.startswith("[role]"))
    link = (fact.source or "").split("]]")[0].removeprefix("[[")
    path, line = link.split("#L")
    original = (vault.root / path).read_text(encoding="utf-8").split("\n")[int(line) - 1]
    assert original == "- [role] Backend engineer on the payments team #work"
    assert (vault.root / path).read_bytes() == (PROJECT / "people/Ada Park.md").read_bytes()


def test_types_map_onto_kenning_folders(imported) -> None:
    vault, _ = imported
    pages = _pages(vault.root)
    assert pages["ada park"].path == "people/Ada Park.md" and pages["ada park"].type == "person"
    assert pages["coffee brewing methods"].type == "topic"
    assert pages["coffee brewing methods"].frontmatter["imported_type"] == "note"
    assert pages["brewing guide"].type == "artifact"
    assert pages["brewing guide"].frontmatter["imported_type"] == "guide"
    assert pages["flat white"].type == "thing" and pages["flat white"].path == \
        "things/Flat White.md"
    assert pages["flat white"].frontmatter["imported_type"] == "recipe"
    assert "ada" in {a.casefold() for a in pages["ada park"].aliases}


def test_importing_twice_adds_nothing(imported) -> None:
    vault, _ = imported
    before = _tree(vault.root)
    again = vault.import_from("basic-memory", PROJECT)
    assert _tree(vault.root) == before
    assert again["written"]["facts"] == again["written"]["relations"] == 0
    assert again["written"]["pages_created"] == 0 and again["written"]["already"] > 0


def test_dry_run_writes_nothing(vault: Vault) -> None:
    before = _tree(vault.root)
    report = vault.import_from("basic-memory", PROJECT, dry_run=True)
    assert report["dry_run"] and report["written"]["facts"] == 20
    assert _tree(vault.root) == before


# -- bad input ----------------------------------------------------------------------------------


def _copy(tmp_path: Path) -> Path:
    src = tmp_path / "project"
    shutil.copytree(PROJECT, src)
    return src


def test_malformed_frontmatter_stops_the_import_and_names_file_and_line(
        vault: Vault, tmp_path: Path) -> None:
    src = _copy(tmp_path)
    (src / "notes" / "Broken.md").write_text(
        "---\ntitle: Broken\ntags: [a, b\npermalink: x\n---\n\n- [fact] never read\n")
    before = _tree(vault.root)
    with pytest.raises(ImportFailed) as err:
        vault.import_from("basic-memory", src)
    assert any(line.startswith("notes/Broken.md:") and "frontmatter" in line
               for line in err.value.lines)
    assert _tree(vault.root) == before


def test_a_note_that_is_not_utf8_is_a_problem_naming_its_line(vault: Vault,
                                                               tmp_path: Path) -> None:
    src = _copy(tmp_path)
    (src / "notes" / "Latin.md").write_bytes(b"# Latin\n\n- [fact] caf\xe9 au lait\n")
    before = _tree(vault.root)
    with pytest.raises(ImportFailed) as err:
        vault.import_from("basic-memory", src)
    assert "notes/Latin.md:3: not UTF-8" in str(err.value)
    assert _tree(vault.root) == before


def test_duplicate_titles_merge_and_duplicate_permalinks_are_told_apart(
        vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "dup"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    (src / "a" / "Tea.md").write_text("---\ntitle: Tea\npermalink: p/tea\n---\n\n"
                                      "- [fact] Green tea is unoxidised\n")
    (src / "b" / "Tea.md").write_text("---\ntitle: Tea\npermalink: p/tea\n---\n\n"
                                      "- [fact] Black tea is fully oxidised\n")
    got = basic_memory.read(src)
    assert any("2 notes are titled 'tea'" in n for n in got.notes)
    assert any("2 notes have permalink 'p/tea'" in n for n in got.notes)
    assert len({e.origin.key() for e in got.entities}) == 2
    vault.import_from("basic-memory", src)
    page = _pages(vault.root)["tea"]
    assert {f.text for f in page.facts} == {"[fact] Green tea is unoxidised",
                                            "[fact] Black tea is fully oxidised"}


def test_unknown_type_and_relation_word_are_mapped_and_reported(tmp_path: Path) -> None:
    src = tmp_path / "odd"
    src.mkdir()
    (src / "Gizmo.md").write_text("---\ntype: widget\n---\n\n- blocks [[Other]]\n")
    (src / "Other.md").write_text("# Other\n\nplain\n")
    (src / "picture.png").write_bytes(b"\x89PNG")
    got = basic_memory.read(src)
    gizmo = next(e for e in got.entities if e.name == "Gizmo")
    assert gizmo.type == "thing" and got.mapped[("type", "widget")] == "thing"
    assert any("type 'widget'" in n for n in got.notes)
    fact = gizmo.facts[0]
    assert fact.relation == "related_to" and "(basic-memory: blocks)" in fact.text
    assert fact.target == "Other"
    assert [s.origin.file for s in got.skipped] == ["picture.png"]


def test_a_path_that_is_not_a_project_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KenningError, match="not a folder"):
        basic_memory.read(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KenningError, match="no Markdown notes"):
        basic_memory.read(tmp_path / "empty")


def test_round_trip_every_fact_on_an_imported_page_is_an_imported_one(imported) -> None:
    """Body text after the page's Facts never reads as facts (a bullet list of prose gets a
    heading of its own)."""
    vault, _ = imported
    for page in _pages(vault.root).values():
        assert all("/imports/basic-memory/" in (f.source or "") for f in page.facts), page.path
    got = basic_memory.read(PROJECT)
    guide = next(e for e in got.entities if e.name == "Brewing Guide")
    assert (guide.body or "").startswith("A plain how-to")     # an ordered list is no bullet
    assert guard_body("- a\n- b", "basic-memory") == "## From basic-memory\n\n- a\n- b"
    assert guard_body("## H\n- a", "basic-memory") == "## H\n- a"
    assert guard_body("1. a\n2. b", "basic-memory") == "1. a\n2. b"


def test_cli_dry_run_then_import(vault: Vault, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    before = _tree(vault.root)
    dry = CliRunner().invoke(main, ["-C", str(vault.root), "import", "basic-memory",
                                    str(PROJECT), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would write: 9 new pages" in dry.output and "20 facts, 16 relations" in dry.output
    assert "mapped type 'note' → 'topic'" in dry.output
    assert _tree(vault.root) == before
    src = _copy(tmp_path)
    (src / "Bad.md").write_text("---\ntitle: [x\n---\n")
    bad = CliRunner().invoke(main, ["-C", str(vault.root), "import", "basic-memory", str(src)])
    assert bad.exit_code != 0 and "Bad.md:2: frontmatter" in bad.output
    assert _tree(vault.root) == before


def test_a_persons_own_note_of_that_name_is_never_written(vault: Vault) -> None:
    mine = vault.root / "Ada Park.md"
    mine.write_text("Ada, from the coffee club. My own words.\n", encoding="utf-8")
    before = mine.read_bytes()
    vault.index()
    vault.import_from("basic-memory", PROJECT)
    assert mine.read_bytes() == before
    beside = parse_page((vault.root / "people/Ada Park (basic-memory).md").read_text(),
                        "people/Ada Park (basic-memory).md")
    assert any(f.text.startswith("[role] Backend engineer") for f in beside.facts)
    assert "[[Ada Park]]" in beside.text


def test_a_note_with_crlf_line_endings_reads_the_same(tmp_path: Path) -> None:
    src = tmp_path / "crlf"
    src.mkdir()
    text = (PROJECT / "people" / "Ada Park.md").read_text(encoding="utf-8")
    (src / "Ada Park.md").write_bytes(text.replace("\n", "\r\n").encode())
    (src / "Plain.md").write_bytes(text.encode())
    crlf, plain = sorted(basic_memory.read(src).entities, key=lambda e: e.origin.file)
    assert [(f.text, f.origin.line, f.relation) for f in crlf.facts] == \
        [(f.text, f.origin.line, f.relation) for f in plain.facts]
    assert crlf.body == plain.body == "Barista turned backend engineer."
