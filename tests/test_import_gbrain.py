"""gbrain import (kenning.transfer.gbrain) on an export written by gbrain's own code.

tests/fixtures/import/gbrain/export was written with gbrain 0.46.28.0's own serializer and
fence renderers (the functions `gbrain export` calls), and expected.json is what gbrain's own
parsers read back from it: pages, takes, facts, timeline entries and the link candidates of its
link extraction (make_fixture.ts). The round trip imports the export into a fresh vault, then
reads the VAULT — not the report — to find every page, take, fact, timeline entry and link."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from kenning import vocabulary
from kenning.api import Vault
from kenning.errors import KenningError, VocabularyError
from kenning.transfer import gbrain
from kenning.transfer.plan import ImportFailed
from kenning.vault.page import Page, parse_page

FIXTURE = Path(__file__).parent / "fixtures" / "import" / "gbrain"
EXPORT = FIXTURE / "export"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))["pages"]
TITLES = {v["slug"]: v["title"] for v in EXPECTED.values()}


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


def _pages(root: Path) -> dict[str, Page]:
    pages = {}
    for file in sorted(root.rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        if not rel.startswith(("sources/", ".kenning/")):
            page = parse_page(file.read_text(encoding="utf-8"), rel)
            pages[page.title] = page
    return pages


def _fold(word: str) -> str:
    try:
        return vocabulary.relation(word)
    except VocabularyError:
        return "related_to"


def _linked(page: Page, title: str) -> bool:
    """Whether ``page`` links to the page titled ``title`` (in a fact, the body or a line)."""
    return any(Path(link.target).name == title for link in page.links) or any(
        Path(f.target or "").name == title for f in page.facts)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("gbrain") / "v"
    vault, _ = Vault.init(root)
    report = vault.import_from("gbrain", EXPORT)
    yield vault, report
    vault.close()


# -- read() on its own -------------------------------------------------------------------------


def test_read_takes_facts_and_timeline_as_gbrain_reads_them() -> None:
    got = gbrain.read(EXPORT)
    assert not got.problems and len(got.entities) == len(EXPECTED) == 7
    by_file = {e.origin.file: e for e in got.entities}
    for rel, page in EXPECTED.items():
        entity = by_file[rel]
        assert entity.name == page["title"] and entity.source_type == page["type"]
        assert entity.origin.id == page["slug"] == entity.frontmatter["slug"]
        rows = [f for f in entity.facts if f.relation is None]
        assert len(rows) == len(page["takes"]) + len(page["facts"]), rel
        assert [t.date for t in entity.timeline] == [t["date"] for t in page["timeline"]]
    assert got.mapped[("type", "company")] == "organization"
    assert got.mapped[("type", "deal")] == "thing"
    assert [s.origin.file for s in got.skipped] == ["people/.raw/alice-chen.json"]


def test_takes_keep_kind_holder_weight_and_supersession() -> None:
    alice = next(e for e in gbrain.read(EXPORT).entities if e.name == "Alice Chen")
    facts = {f.origin.id: f for f in alice.facts}
    q2, q3 = facts["people/alice-chen#takes/3"], facts["people/alice-chen#takes/4"]
    assert q2.status == "superseded" and q2.superseded_by == q3.origin.key()
    assert q2.epistemic == "hypothesis" and q2.confidence == 0.6
    assert q2.valid_from == "2026-03-15" and "until 2026-06" in q2.text
    assert facts["people/alice-chen#takes/5"].epistemic == "speculation"
    assert facts["people/alice-chen#takes/1"].epistemic == "assertion"
    assert "held by [[Alice Chen]]" in q3.text
    tokyo = facts["people/alice-chen#facts/4"]
    assert tokyo.status == "invalidated" and tokyo.valid_to == "2024-05-10"
    assert "forgotten: user asked to remove" in tokyo.text
    assert facts["people/alice-chen#facts/5"].epistemic == "hypothesis"   # a belief


def test_compiled_truth_is_summary_and_body_with_links_to_the_imported_pages() -> None:
    alice = next(e for e in gbrain.read(EXPORT).entities if e.name == "Alice Chen")
    assert alice.summary == ("VP Engineering at [[Acme Example]]. Met through Bob; sharp, "
                             "fast, under-appreciated.")
    body = alice.body or ""
    assert body.startswith("## State\nLeading the API migration")
    assert "[[Do Things That Don't Scale]]" in body
    assert "gbrain:takes" not in body and "| claim |" not in body and "<!-- timeline" not in body


# -- the round trip ----------------------------------------------------------------------------


def test_round_trip_every_page_take_fact_and_entry_is_in_the_vault(imported) -> None:
    vault, report = imported
    pages = _pages(vault.root)
    counted = {"rows": 0, "events": 0}
    for rel, expected in EXPECTED.items():
        page = pages[expected["title"]]
        assert page.frontmatter["slug"] == expected["slug"]
        assert page.frontmatter["imported_from"] == "gbrain"
        plain = [f for f in page.facts if f.relation is None]
        for row, kinds in [*((r, gbrain.TAKE_EPISTEMIC) for r in expected["takes"]),
                           *((r, gbrain.FACT_EPISTEMIC) for r in expected["facts"])]:
            match = [f for f in plain if f.text.startswith(row["claim"] + " (")]
            assert len(match) == 1, (rel, row)
            fact = match[0]
            assert fact.epistemic == kinds[row["kind"]]
            assert fact.confidence == row.get("weight", row.get("confidence"))
            if row["active"]:
                assert fact.status == "active"
            elif row.get("supersededBy") or "superseded by" in row.get("source", ""):
                assert fact.status == "superseded" and fact.successor
            else:
                assert fact.status == "invalidated"
            assert f"gbrain id {expected['slug']}#" in (fact.source or "")
            counted["rows"] += 1
        for entry in expected["timeline"]:
            match = [t for t in page.timeline if t.date == entry["date"]
                     and entry["summary"] in t.text and entry["detail"] in t.text]
            assert len(match) == 1, (rel, entry)
            counted["events"] += 1
    assert counted["rows"] == sum(len(p["takes"]) + len(p["facts"]) for p in EXPECTED.values())
    assert counted["events"] == sum(len(p["timeline"]) for p in EXPECTED.values()) == 6
    assert report["read"]["facts"] == counted["rows"]
    assert report["read"]["events"] == counted["events"]


def test_round_trip_every_link_gbrain_extracts_is_in_the_vault(imported) -> None:
    vault, _ = imported
    pages = _pages(vault.root)
    checked = typed = 0
    for expected in EXPECTED.values():
        for link in expected["links"]:
            if not link["exists"]:
                continue
            a, b = pages[TITLES[link["from"]]], pages[TITLES[link["to"]]]
            assert _linked(a, b.title) or _linked(b, a.title), link
            checked += 1
    # the edges gbrain types from frontmatter fields are relation facts of that type
    frontmatter_edges = [("Alice Chen", "works_at", "Acme Example"),
                         ("Alice Chen", "founded", "Widget Co"),
                         ("Alice Chen", "invested_in", "Acme seed round"),
                         ("Alice Chen", "attended", "Acme board meeting 2026-04-03")]
    for subject, relation, target in frontmatter_edges:
        facts = [f for f in pages[subject].facts if f.relation == _fold(relation)
                 and Path(f.target or "").name == target]
        assert len(facts) == 1, (subject, relation, target)
        typed += 1
    assert checked >= 8 and typed == 4


def test_round_trip_edges_to_pages_not_in_the_export_are_kept_and_reported(imported) -> None:
    vault, report = imported
    unresolved = {u["name"] for p in EXPECTED.values() for u in p["unresolved"]}
    assert unresolved == {"Sequoia Example", "Bob Example"}
    assert {d["name"] for d in report["dangling"]} >= unresolved
    deal = _pages(vault.root)["Acme seed round"]
    assert any(f.target == "Sequoia Example" and "(gbrain: lead, led_round" in f.text
               for f in deal.facts)


def test_round_trip_types_and_citations(imported) -> None:
    vault, _ = imported
    pages = _pages(vault.root)
    assert pages["Acme Example"].path == "organizations/Acme Example.md"
    assert pages["Acme seed round"].type == "thing"
    assert pages["Acme seed round"].frontmatter["imported_type"] == "deal"
    entry = next(t for t in pages["Alice Chen"].timeline if t.date == "2026-04-07")
    link = (entry.source or "").split("]]")[0].removeprefix("[[")
    path, line = link.split("#L")
    assert (vault.root / path).read_text(encoding="utf-8").split("\n")[int(line) - 1] \
        .startswith("- **2026-04-07** | Meeting notes")


def test_importing_twice_adds_nothing(imported) -> None:
    vault, _ = imported
    before = _tree(vault.root)
    again = vault.import_from("gbrain", EXPORT)
    assert _tree(vault.root) == before
    assert again["written"]["facts"] == again["written"]["events"] == 0
    assert again["written"]["already"] > 0


# -- bad input ---------------------------------------------------------------------------------


def _copy(tmp_path: Path) -> Path:
    src = tmp_path / "export"
    shutil.copytree(EXPORT, src)
    return src


def test_malformed_frontmatter_and_non_utf8_stop_the_import(vault: Vault,
                                                             tmp_path: Path) -> None:
    src = _copy(tmp_path)
    (src / "people" / "broken.md").write_text("---\ntype: person\ntitle: [Broken\n---\n\nx\n")
    (src / "people" / "latin.md").write_bytes(b"---\ntitle: Latin\n---\n\ncaf\xe9\n")
    before = _tree(vault.root)
    with pytest.raises(ImportFailed) as err:
        vault.import_from("gbrain", src)
    lines = err.value.lines
    assert any(x.startswith("people/broken.md:") and "frontmatter" in x for x in lines)
    assert "people/latin.md:5: not UTF-8 (byte 0xe9); save it as UTF-8" in lines
    assert _tree(vault.root) == before


def test_bad_rows_and_fences_are_skipped_with_their_line(tmp_path: Path) -> None:
    src = tmp_path / "odd"
    (src / "people").mkdir(parents=True)
    (src / "people" / "zed.md").write_text(
        "---\ntype: person\ntitle: Zed\n---\n\nZed.\n\n## Takes\n\n"
        "<!--- gbrain:takes:begin -->\n| # | claim | kind | who | weight | since | source |\n"
        "|---|---|---|---|---|---|---|\n| 1 | Good | take | brain | 0.5 | 2026-01-01 | x |\n"
        "| 1 | Again | take | brain | 0.5 | | |\n| 2 | Odd | rumour | brain | 0.5 | | |\n"
        "<!--- gbrain:takes:end -->\n\n## Facts\n\n<!-- gbrain:facts:begin -->\n"
        "\n<!-- timeline -->\n\n- **2026-01-02** | Note — fine\n- 2026: not an entry\n")
    got = gbrain.read(src)
    reasons = {f"{s.origin.file}:{s.origin.line}": s.reason for s in got.skipped}
    assert "row #1 appears twice" in reasons["people/zed.md:14"]
    assert "kind 'rumour'" in reasons["people/zed.md:15"]
    assert "fence marker gbrain does not read" in reasons["people/zed.md:20"]
    assert "not read as an entry" in reasons["people/zed.md:25"]
    zed = got.entities[0]
    assert [f.text for f in zed.facts] == ["Good (take; held by brain; source: x)"]
    assert "<!-- gbrain:facts:begin -->" in (zed.body or "")     # kept, not lost
    assert [t.text for t in zed.timeline] == ["fine (source: Note)"]


def test_duplicate_slugs_are_reported_and_merged(tmp_path: Path, vault: Vault) -> None:
    src = tmp_path / "dup"
    (src / "people").mkdir(parents=True)
    (src / "people" / "a.md").write_text("---\ntitle: Ann\nslug: people/ann\n---\n\nOne.\n\n"
                                         "<!-- timeline -->\n\n- **2026-01-01** | x — first\n")
    (src / "people" / "b.md").write_text("---\ntitle: Ann\nslug: people/ann\n---\n\nTwo.\n\n"
                                         "<!-- timeline -->\n\n- **2026-01-02** | x — second\n")
    got = gbrain.read(src)
    assert any("slug 'people/ann' is also people/a.md's" in n for n in got.notes)
    vault.import_from("gbrain", src)
    ann = _pages(vault.root)["Ann"]
    assert {t.date for t in ann.timeline} == {"2026-01-01", "2026-01-02"}


def test_a_path_that_is_not_an_export_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KenningError, match="not a folder"):
        gbrain.read(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KenningError, match="no pages"):
        gbrain.read(tmp_path / "empty")


def test_round_trip_every_fact_on_an_imported_page_is_an_imported_one(imported) -> None:
    """Body text after the page's Facts/Timeline never reads as facts or timeline lines."""
    vault, _ = imported
    for page in _pages(vault.root).values():
        assert all("/imports/gbrain/" in (f.source or "") for f in page.facts), page.path
        assert all("/imports/gbrain/" in (t.source or "") for t in page.timeline), page.path
    meeting = _pages(vault.root)["Acme board meeting 2026-04-03"]
    assert "## From gbrain\n\n- [[Alice Chen]] presented the migration plan." in meeting.text


def test_timeline_sentinels_gbrain_reads(tmp_path: Path) -> None:
    """`--- timeline ---`, a `---` before `## Timeline`, and a bare `## Timeline` of dated
    bullets all start the timeline; a prose `## History` does not."""
    src = tmp_path / "t"
    src.mkdir()
    entry = "- **2026-02-03** | Src — happened\n"
    (src / "a.md").write_text("---\ntitle: A\n---\n\nTruth.\n\n--- timeline ---\n\n" + entry)
    (src / "b.md").write_text("---\ntitle: B\n---\n\nTruth.\n\n---\n\n## Timeline\n\n" + entry)
    (src / "c.md").write_text("---\ntitle: C\n---\n\nTruth.\n\n## Timeline\n\n" + entry
                              + "\n## Next\n\nMore truth.\n")
    (src / "d.md").write_text("---\ntitle: D\n---\n\nTruth.\n\n## History\n\nIt began.\n")
    got = {e.name: e for e in gbrain.read(src).entities}
    for name in "ABC":
        assert [(t.date, t.text) for t in got[name].timeline] == \
            [("2026-02-03", "happened (source: Src)")], name
        assert "happened" not in (got[name].body or "")
    assert "More truth." in (got["C"].body or "")
    assert got["D"].timeline == [] and "It began." in (got["D"].body or "")
    assert all(e.type == "concept" for e in got.values())     # no type, no folder: concept


def test_an_escaped_pipe_stays_in_its_cell() -> None:
    assert gbrain._cells(r"| 1 | A \| B | take | brain | 0.5 |  | x |") == \
        ["1", "A | B", "take", "brain", "0.5", "", "x"]
    assert gbrain._cells("not a row") is None


def test_summary_only_from_the_opening_paragraph_or_a_summary_section(tmp_path: Path) -> None:
    src = tmp_path / "s"
    src.mkdir()
    (src / "a.md").write_text("---\ntitle: A\n---\n\n## State\nBusy.\n\n## Next\nMore.\n")
    (src / "b.md").write_text("---\ntitle: B\n---\n\n## TL;DR\nShort.\n\n## Next\nMore.\n")
    got = {e.name: e for e in gbrain.read(src).entities}
    assert got["A"].summary is None and got["A"].body == "## State\nBusy.\n\n## Next\nMore."
    assert got["B"].summary == "Short." and got["B"].body == "## Next\nMore."


def test_a_page_with_crlf_line_endings_reads_the_same(tmp_path: Path) -> None:
    text = (EXPORT / "people" / "alice-chen.md").read_text(encoding="utf-8")
    for name, data in (("crlf", text.replace("\n", "\r\n")), ("lf", text)):
        (tmp_path / name / "people").mkdir(parents=True)
        (tmp_path / name / "people" / "alice-chen.md").write_bytes(data.encode())
    crlf, lf = (gbrain.read(tmp_path / n).entities[0] for n in ("crlf", "lf"))
    assert [(f.text, f.origin.line, f.status) for f in crlf.facts] == \
        [(f.text, f.origin.line, f.status) for f in lf.facts]
    assert [(t.date, t.text) for t in crlf.timeline] == [(t.date, t.text) for t in lf.timeline]
    assert (crlf.summary, crlf.body) == (lf.summary, lf.body)


def test_frontmatter_edges_written_as_wikilinks_and_odd_titles(tmp_path: Path) -> None:
    src = tmp_path / "w"
    (src / "people").mkdir(parents=True)
    (src / "companies").mkdir()
    (src / "people" / "ann.md").write_text(
        "---\ntype: person\ntitle: Ann\ncompany: '[[companies/c-sharp|C#]]'\n---\n\n"
        "Ann writes [C#](companies/c-sharp) all day.\n")
    (src / "companies" / "c-sharp.md").write_text("---\ntype: company\ntitle: 'C# Inc'\n---\n"
                                                   "\nA company.\n")
    ann = next(e for e in gbrain.read(src).entities if e.name == "Ann")
    assert [(f.relation, f.target) for f in ann.facts] == [("works_at", "C# Inc")]
    assert ann.summary == "Ann writes [C#](companies/c-sharp) all day."   # no [[C# Inc]]


def test_a_later_export_adds_only_its_new_rows_and_entries(vault: Vault, tmp_path: Path) -> None:
    src = _copy(tmp_path)
    vault.import_from("gbrain", src)
    page = src / "people" / "alice-chen.md"
    text = page.read_text(encoding="utf-8")
    text = text.replace("<!--- gbrain:takes:end -->",
                        "| 6 | Ships on time | bet | brain | 0.5 | 2026-05-01 | standup |\n"
                        "<!--- gbrain:takes:end -->")
    text = text.replace("## Timeline\n\n", "## Timeline\n\n- **2026-05-01** | Slack — Asked "
                                           "about the offsite.\n")
    page.write_text(text, encoding="utf-8")
    again = vault.import_from("gbrain", src)
    assert again["written"]["facts"] == 1 and again["written"]["events"] == 1
    assert again["written"]["pages_created"] == 0
    alice = _pages(vault.root)["Alice Chen"]
    assert sum(f.text.startswith("Ships on time (bet") for f in alice.facts) == 1
    assert sum("Asked about the offsite" in t.text for t in alice.timeline) == 1
    assert len([f for f in alice.facts if f.relation is None]) == 11
