"""The import plan (kenning.transfer.plan) on a real vault on disk: what an importer read
becomes pages, facts, links, decisions and documents, each citing a copy of its original line;
a second import adds nothing; a person's note is never written; a dry run writes nothing.

The importers themselves (and their round trips on each tool's real format) are tested in
tests/test_import_<kind>.py; here the input is built by hand so every branch of the plan is
reached."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.transfer.model import (
    Imported,
    ImportedDecision,
    ImportedDocument,
    ImportedEntity,
    ImportedEvent,
    ImportedFact,
    Origin,
)
from kenning.transfer.plan import apply_import
from kenning.vault.page import parse_page

LINES = ['{"type":"entity","name":"Ada Park"}', '{"type":"entity","name":"Kestrel"}',
         '{"type":"relation","from":"Ada Park","to":"Kestrel"}']


def _input(src: Path, *, extra_fact: bool = False) -> Imported:
    src.mkdir(parents=True, exist_ok=True)
    (src / "memory.jsonl").write_text("\n".join(LINES) + ("\n{}" if extra_fact else "") + "\n")

    def o(line: int, ident: str) -> Origin:
        return Origin("memory.jsonl", line, ident, "2025-03-01")

    facts = [ImportedFact("Likes tea", o(1, "Ada Park/tea")),
             ImportedFact("Likes coffee", o(1, "Ada Park/coffee"), status="superseded",
                          superseded_by="memory.jsonl#Ada Park/tea"),
             ImportedFact("", o(3, "Ada Park>uses>Kestrel"), relation="uses", target="Kestrel"),
             ImportedFact("", o(3, "Ada Park>blocks>Nowhere"), relation="blocks",
                          target="Nowhere")]
    if extra_fact:
        facts.append(ImportedFact("Moved to Lisbon", o(4, "Ada Park/lisbon"),
                                  epistemic="hypothesis", confidence=0.7))
    ada = ImportedEntity("Ada Park", "thing", o(1, "Ada Park"), domain="finance",
                         aliases=["Ada"], facts=facts, summary="An engineer.")
    kestrel = ImportedEntity(
        "Kestrel", "artifact", o(2, "Kestrel"),
        decisions=[ImportedDecision("Use SQLite", o(2, "Kestrel/d1"), because="simple",
                                    rejected=["Postgres: heavy"], date="2025-04-01")],
        timeline=[ImportedEvent("2025-04-01", "Started", o(2, "Kestrel/t1"))])
    doc = ImportedDocument("sessions/2025-03-01 Refactor.md", "# Refactor\n\nDid things.\n",
                           Origin("sessions/refactor.md", 1, "refactor"))
    return Imported("rawthink", src, files=["memory.jsonl"], entities=[ada, kestrel],
                    documents=[doc])


def _tree(root: Path) -> dict[str, str]:
    """Every file of the vault but the index and locks, by content hash."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


@pytest.fixture
def imported(vault: Vault, tmp_path: Path) -> tuple[Vault, dict]:
    report = apply_import(vault.memory, _input(tmp_path / "src"))
    return vault, report


def test_entities_become_pages_with_cited_facts(imported: tuple[Vault, dict]) -> None:
    vault, report = imported
    ada = parse_page((vault.root / "things/Ada Park.md").read_text(), "things/Ada Park.md")
    assert ada.type == "thing" and ada.domain == "finance" and ada.aliases == ("Ada",)
    assert ada.about == "An engineer."
    by_text = {f.text: f for f in ada.facts}
    assert by_text["Likes tea"].recorded == "2025-03-01"
    coffee = by_text["Likes coffee"]
    assert coffee.status == "superseded" and coffee.successor == "[[Ada Park#^f1]]"
    uses = next(f for f in ada.facts if f.relation == "uses")
    assert uses.target == "Kestrel"
    unknown = next(f for f in ada.facts if f.target == "Nowhere")
    # An unknown relation word is related_to, the word kept in the text; a target the input
    # does not have stays a link, counted in the report.
    assert unknown.relation == "related_to" and unknown.text == "(rawthink: blocks)"
    assert report["dangling"] == [{"name": "Nowhere", "links": 1}]
    snapshot = report["originals"]
    assert by_text["Likes tea"].source == (f"[[{snapshot}/memory.jsonl#L1]] rawthink id "
                                           "Ada Park/tea, 2025-03-01")
    original = vault.root / snapshot / "memory.jsonl"
    assert original.read_text().splitlines()[0] == LINES[0]
    kestrel = parse_page((vault.root / "artifacts/Kestrel.md").read_text(), "x")
    (decision,) = kestrel.items
    assert (decision.text, decision.because, decision.rejected) == (
        "Use SQLite", "simple", ("Postgres: heavy",))
    assert [e.text for e in kestrel.timeline] == ["Started"]
    doc = vault.root / "sessions/2025-03-01 Refactor.md"
    assert doc.read_text() == "# Refactor\n\nDid things.\n"
    assert report["written"] | {"originals": 1} == {
        "pages_created": 2, "pages_merged": 0, "pages_beside": 0, "facts": 2, "relations": 2,
        "events": 1, "decisions": 1, "documents": 1, "originals": 1, "already": 0,
        "duplicates": 0}


def test_the_index_reads_the_import(imported: tuple[Vault, dict]) -> None:
    vault, _ = imported
    hits = vault.search("coffee", mode="lexical")
    assert hits and hits[0].path == "things/Ada Park.md"
    assert [e.other.path for e in vault.neighbors("Ada Park", rels=["uses"])] == [
        "artifacts/Kestrel.md"]
    report = vault.doctor()
    dangling = [f for f in report.findings if f.check == "dangling-links"]
    # The only dangling link is the relation to an entity the input never had: every
    # citation of an original resolves (the copies are files, not pages).
    assert [item for f in dangling for item in f.items] == [
        "things/Ada Park.md:18 → [[Nowhere]]"]
    # The original line holds the words too, but a copy is a file, never a page of its own.
    assert all(not h.path.startswith("sources/imports/")
               for h in vault.search("Ada Park Kestrel", mode="lexical"))


def test_a_second_import_writes_nothing(imported: tuple[Vault, dict], tmp_path: Path) -> None:
    vault, _ = imported
    before = _tree(vault.root)
    again = apply_import(vault.memory, _input(tmp_path / "src"))
    assert _tree(vault.root) == before
    assert again["written"]["already"] == 7
    assert again["written"]["facts"] == again["written"]["pages_created"] == 0


def test_an_input_that_grew_adds_only_what_is_new(imported: tuple[Vault, dict],
                                                  tmp_path: Path) -> None:
    vault, first = imported
    again = apply_import(vault.memory, _input(tmp_path / "src", extra_fact=True))
    assert again["written"]["facts"] == 1 and again["written"]["already"] == 7
    assert again["originals"] != first["originals"]      # the new input, copied beside
    ada = parse_page((vault.root / "things/Ada Park.md").read_text(), "x")
    lisbon = next(f for f in ada.facts if f.text == "Moved to Lisbon")
    assert lisbon.epistemic == "hypothesis" and lisbon.confidence == 0.7
    assert lisbon.source.startswith(f"[[{again['originals']}/memory.jsonl#L4]]")
    assert lisbon.block_id == "f5"
    assert len(ada.facts) == 5


def test_a_dry_run_writes_nothing(vault: Vault, tmp_path: Path) -> None:
    before = _tree(vault.root)
    report = apply_import(vault.memory, _input(tmp_path / "src"), dry_run=True)
    assert report["dry_run"] and report["written"]["pages_created"] == 2
    assert report["pages"]["created"] == ["artifacts/Kestrel.md", "things/Ada Park.md"]
    assert _tree(vault.root) == before


def test_merges_into_a_kenning_page_and_writes_beside_a_persons_note(vault: Vault,
                                                                     tmp_path: Path) -> None:
    typed = "---\ntype: artifact\naliases: [K]\n---\n# Kestrel\n\nOur product.\n\nMy notes.\n"
    (vault.root / "projects").mkdir(exist_ok=True)
    (vault.root / "projects/Kestrel.md").write_text(typed)
    mine = "# Ada Park\n\nMet her at the offsite.\n"
    (vault.root / "people").mkdir(exist_ok=True)
    (vault.root / "people/Ada Park.md").write_text(mine)
    vault.index(embed=False)
    report = apply_import(vault.memory, _input(tmp_path / "src"))
    # A person's untyped note is never written: the import sits beside it and links it.
    assert (vault.root / "people/Ada Park.md").read_text() == mine
    beside = parse_page((vault.root / "things/Ada Park (rawthink).md").read_text(), "x")
    assert "[[Ada Park]]" in beside.about and len(beside.facts) == 4
    # A typed page takes the decision and timeline in its owned sections; its text stays.
    merged = (vault.root / "projects/Kestrel.md").read_text()
    assert merged.startswith("---\ntype: artifact\naliases: [K]\n---\n# Kestrel\n\nOur "
                             "product.\n\nMy notes.\n")
    page = parse_page(merged, "projects/Kestrel.md")
    assert [i.text for i in page.items] == ["Use SQLite"]
    assert report["written"]["pages_merged"] == 1 and report["written"]["pages_beside"] == 1
    uses = next(f for f in beside.facts if f.relation == "uses")
    assert uses.target == "Kestrel"      # the relation links the vault's own page


def test_a_different_document_at_the_path_is_kept(vault: Vault, tmp_path: Path) -> None:
    (vault.root / "sessions").mkdir(exist_ok=True)
    (vault.root / "sessions/2025-03-01 Refactor.md").write_text("mine\n")
    report = apply_import(vault.memory, _input(tmp_path / "src"))
    assert (vault.root / "sessions/2025-03-01 Refactor.md").read_text() == "mine\n"
    assert (vault.root / "sessions/2025-03-01 Refactor 2.md").read_text().startswith(
        "# Refactor")
    assert report["pages"]["documents"] == ["sessions/2025-03-01 Refactor 2.md"]


@pytest.mark.parametrize("kind", ["rawthink", "openclaw", "mem0"])
def test_a_body_that_begins_with_bullets_is_never_read_as_facts(vault: Vault, tmp_path: Path,
                                                                kind: str) -> None:
    """The plan guards every importer's body (none guards its own): bullets before the body's
    first heading get a ``## From <kind>`` heading, so neither the page's Facts now nor a fact
    added later takes them in."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "memory.jsonl").write_text('{"name":"Kestrel"}\n{"name":"Plain"}\n')
    o = Origin("memory.jsonl", 1, "Kestrel")
    bullets = ImportedEntity("Kestrel", "artifact", o, body="- not a fact\n- nor this\n\nprose",
                             facts=[ImportedFact("Ships in May", Origin("memory.jsonl", 1, "k1"))])
    fenced = ImportedEntity("Plain", "artifact", Origin("memory.jsonl", 2, "Plain"),
                            body="```\n- code, not a list\n```\n\n## Notes\n\n- under a heading",
                            facts=[ImportedFact("Ships in June", Origin("memory.jsonl", 2, "p1"))])
    apply_import(vault.memory, Imported(kind, src, files=["memory.jsonl"],
                                        entities=[bullets, fenced]))
    text = (vault.root / "artifacts/Kestrel.md").read_text()
    assert f"## From {kind}\n\n- not a fact\n- nor this\n\nprose\n" in text
    assert [f.text for f in parse_page(text, "artifacts/Kestrel.md").facts] == ["Ships in May"]
    vault.record(observations=[{"entity": "Kestrel", "text": "Has a logo"}])
    later = parse_page((vault.root / "artifacts/Kestrel.md").read_text(), "x")
    assert [f.text for f in later.facts] == ["Ships in May", "Has a logo"]
    plain = (vault.root / "artifacts/Plain.md").read_text()
    assert "## From" not in plain and plain.endswith("## Notes\n\n- under a heading\n")
    assert [f.text for f in parse_page(plain, "artifacts/Plain.md").facts] == ["Ships in June"]


def test_a_link_to_a_page_whose_file_name_another_page_has_goes_by_its_path(
        vault: Vault, tmp_path: Path) -> None:
    # The vault's own memory.md (written by init, not yet indexed) and an imported entity named
    # "memory": a link by file name alone would open the root memory.md (the shorter path).
    src = tmp_path / "src"
    src.mkdir()
    (src / "memory.jsonl").write_text("\n".join(LINES) + "\n")

    def o(line: int, ident: str) -> Origin:
        return Origin("memory.jsonl", line, ident, "2025-03-01")

    memory = ImportedEntity("memory", "concept", o(1, "memory"))
    ada = ImportedEntity("Ada Park", "person", o(2, "Ada Park"), facts=[
        ImportedFact("", o(3, "Ada Park>uses>memory"), relation="uses", target="memory")])
    apply_import(vault.memory, Imported("rawthink", src, files=["memory.jsonl"],
                                        entities=[memory, ada]))
    text = (vault.root / "people/Ada Park.md").read_text()
    assert "[[concepts/memory|memory]]" in text and "[[memory]]" not in text
    assert [e.other.path for e in vault.neighbors("Ada Park", rels=["uses"])] == [
        "concepts/memory.md"]
    report = vault.doctor()
    assert not [f for f in report.findings if f.check in ("dangling-links", "ambiguous-links")]
