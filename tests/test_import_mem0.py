"""The mem0 importer (kenning.transfer.mem0) on exports the real mem0 library wrote
(tests/fixtures/import/mem0/{team,personal}, made by make_fixture.py with mem0ai 2.2.1) and on
the graph-store shape (graph/, written from mem0's docs): ``read`` on its own, and the round
trip — import into a fresh vault, then find every memory and relation in the vault's pages."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.errors import KenningError
from kenning.transfer import mem0
from kenning.transfer.plan import ImportFailed
from kenning.vault.page import parse_page

FIXTURES = Path(__file__).parent / "fixtures" / "import" / "mem0"


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


def _memories(name: str) -> list[dict]:
    file = next((FIXTURES / name).glob("*.json"))
    return json.loads(file.read_text(encoding="utf-8"))["results"]


def _pages(root: Path):
    for file in sorted(root.rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        if not rel.startswith(("sources/", ".kenning/")):
            yield rel, parse_page(file.read_text(encoding="utf-8"), rel)


# -- read() -------------------------------------------------------------------------------------


def test_read_team_export_scopes_become_pages() -> None:
    got = mem0.read(FIXTURES / "team")
    assert not got.problems and not got.skipped and not got.documents
    by_name = {e.name: e for e in got.entities}
    assert {n: e.type for n, e in by_name.items()} == \
        {"alice": "person", "bob": "person", "travel-bot": "thing"}
    assert by_name["travel-bot"].source_type == "agent"
    assert got.mapped == {("type", "user"): "person", ("type", "agent"): "thing"}
    ids = {f.origin.id for e in got.entities for f in e.facts}
    assert ids == {m["id"] for m in _memories("team")}
    lines = (FIXTURES / "team" / "memories.json").read_text().splitlines()
    for fact in (f for e in got.entities for f in e.facts):
        assert fact.origin.id in lines[fact.origin.line - 1]     # the line cites the memory
        assert fact.recorded and fact.recorded == fact.origin.date
    texts = {f.text for f in by_name["alice"].facts}
    assert "I am vegetarian. (metadata: category=food)" in texts
    assert any("run: trip-2025-05" in t for t in texts)          # run_id kept readable
    assert [f.text for f in by_name["bob"].facts] == \
        ["Bob prefers window seats on long flights. (agent: travel-bot)"]


def test_read_personal_store_goes_to_daily_logs() -> None:
    got = mem0.read(FIXTURES / "personal")
    assert not got.entities and any("owner" in n for n in got.notes)
    assert [d.path for d in got.documents] == ["memory/2025-06-01.md", "memory/2025-06-03.md"]
    day = parse_page(got.documents[0].text, got.documents[0].path)
    assert not day.problems and [r.kind for r in day.retain] == ["W", "W"]
    assert day.retain[0].text.startswith("I drink my coffee black.")


def test_read_graph_relations() -> None:
    got = mem0.read(FIXTURES / "graph" / "export.json")
    by_name = {e.name: e for e in got.entities}
    rel = [(f.relation, f.target, f.text) for f in by_name["northwind"].facts if f.relation]
    assert rel == [("related_to", "seattle", "(mem0: located_in)")]
    assert got.mapped[("relation", "located_in")] == "related_to"
    assert ("relation", "works_at") not in got.mapped    # the owner's: not a relation fact
    # priya is the only user: the owner, whose relations land on the other end
    assert "priya" not in by_name
    assert any("priya" in f.text and "allergic_to" in f.text for f in by_name["peanuts"].facts)
    day = next(d for d in got.documents if d.path == "memory/2024-11-06.md")
    assert "categories: health, food" in day.text and "expires 2025-11-06" in day.text


def test_bad_json_names_file_line_column(tmp_path: Path) -> None:
    (tmp_path / "export.json").write_text('{"results": [\n  {"id": "a", "memory": "x"},\n'
                                          '  {"id": "b" "memory": "y"}\n]}\n')
    got = mem0.read(tmp_path / "export.json")
    assert [str(p) for p in got.problems] == \
        ["export.json:3: not JSON (Expecting ',' delimiter, column 14)"]
    (tmp_path / "export.json").write_text('{"answer": 42}')
    assert "not a mem0 export" in str(mem0.read(tmp_path / "export.json").problems[0])


def test_missing_text_duplicates_and_unknown_fields(tmp_path: Path) -> None:
    data = {"results": [
        {"id": "m1", "memory": "Likes tea", "user_id": "ann", "created_at": "2025-01-02T10:00:00",
         "mood": "sunny"},
        {"id": "m2", "memory": "  ", "user_id": "ann"},
        {"id": "m1", "memory": "Likes tea again", "user_id": "ann"},
        {"id": "m3", "memory": "Nobody's", "created_at": "2025-01-03"},
        {"id": "m4", "memory": "Tom likes jazz", "user_id": "tom"},
    ]}
    (tmp_path / "e.json").write_text(json.dumps(data, indent=2))
    got = mem0.read(tmp_path / "e.json")
    reasons = {s.origin.id: s.reason for s in got.skipped}
    assert reasons["m2"] == "memory has no text"
    assert "duplicate id m1" in reasons["m1"]
    assert "nobody it is about" in reasons["m3"]
    ann = next(e for e in got.entities if e.name == "ann")
    assert [f.text for f in ann.facts] == ["Likes tea (mood: sunny)"]   # kept, not dropped
    assert any("mood" in n for n in got.notes)


def test_not_a_path(tmp_path: Path) -> None:
    with pytest.raises(KenningError, match="no such file"):
        mem0.read(tmp_path / "nope.json")
    with pytest.raises(KenningError, match=r"no \*\.json"):
        mem0.read(tmp_path)


# -- the round trip -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mem0") / "v"
    vault, _ = Vault.init(root)
    try:
        for name in ("team", "personal", "graph"):
            vault.import_from("mem0", FIXTURES / name)
    finally:
        vault.close()
    return root


@pytest.mark.parametrize("name", ["team", "personal", "graph"])
def test_round_trip_every_memory_is_in_the_vault(imported: Path, name: str) -> None:
    """Each memory of the fixture, found by its id on a fact line or a Retain bullet."""
    lines: list[str] = []
    for _, page in _pages(imported):
        lines += [f"{f.text} {f.source}" for f in page.facts]
        lines += [r.text for r in page.retain]
    for memory in _memories(name):
        hits = [line for line in lines if f"mem0 id {memory['id']}" in line]
        assert len(hits) == 1, (memory["id"], hits)
        assert hits[0].startswith(memory["memory"])
    file = next((FIXTURES / name).glob("*.json"))
    edges = json.loads(file.read_text(encoding="utf-8")).get("relations", [])
    for index, edge in enumerate(edges):
        hits = [line for line in lines
                if re.search(rf"mem0 id relation/{index}(\D|$)", line)]
        assert len(hits) == 1, edge
        target = edge.get("destination", edge.get("target"))
        assert edge["relationship"] in hits[0] or target in hits[0]
    assert name != "graph" or len(edges) == 3


def test_round_trip_pages_dates_and_relations(imported: Path) -> None:
    alice = parse_page((imported / "people/alice.md").read_text(), "people/alice.md")
    assert alice.type == "person" and alice.frontmatter["imported_from"] == "mem0"
    assert {f.recorded for f in alice.facts} == {"2025-03-01", "2025-03-04", "2025-04-10"}
    northwind = parse_page((imported / "things/northwind.md").read_text(), "x.md")
    assert [(f.relation, f.target) for f in northwind.facts if f.relation] == \
        [("related_to", "seattle")]
    assert (imported / "things/seattle.md").is_file()
    assert "priya" in next(f.text for f in northwind.facts if not f.relation)
    day = parse_page((imported / "memory/2025-06-03.md").read_text(), "memory/2025-06-03.md")
    assert [r.text.split(" [")[0] for r in day.retain] == ["My sister Ines lives in Porto."]
    assert not (imported / "people/sam.md").exists()      # the owner never has a page


def test_importing_twice_adds_nothing(imported: Path) -> None:
    before = _tree(imported)
    vault = Vault.open(imported)
    try:
        for name in ("team", "personal", "graph"):
            report = vault.import_from("mem0", FIXTURES / name)
            assert report["written"]["already"] > 0
            assert sum(v for k, v in report["written"].items() if k != "already") == 0
    finally:
        vault.close()
    assert _tree(imported) == before


def test_failed_import_writes_nothing(vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.json").write_text((FIXTURES / "team" / "memories.json").read_text())
    (src / "b.json").write_text('{"results": [{"id": "x", "memory": "cut off')
    before = _tree(vault.root)
    with pytest.raises(ImportFailed, match=r"b.json:1: not JSON"):
        vault.import_from("mem0", src)
    assert _tree(vault.root) == before


def test_a_grown_export_adds_only_the_new_memories(vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "grown.json"
    data = json.loads((FIXTURES / "personal" / "memories.json").read_text(encoding="utf-8"))
    src.write_text(json.dumps(data, indent=2), encoding="utf-8")
    vault.import_from("mem0", src)
    day = vault.root / "memory/2025-06-03.md"
    first = day.read_text(encoding="utf-8")
    data["results"].append({"id": "new-1", "memory": "Ines has a cat.", "user_id": "sam",
                            "created_at": "2025-06-03T22:00:00+00:00"})
    src.write_text(json.dumps(data, indent=2), encoding="utf-8")
    report = vault.import_from("mem0", src)
    assert report["pages"]["documents_merged"] == ["memory/2025-06-03.md"]
    assert not list((vault.root / "memory").glob("* 2.md"))       # nothing written beside
    page = parse_page(day.read_text(encoding="utf-8"), "memory/2025-06-03.md")
    assert [r.text.split(" [")[0] for r in page.retain] == \
        ["My sister Ines lives in Porto.", "Ines has a cat."]
    assert day.read_text(encoding="utf-8").startswith(first.rstrip("\n"))


def test_lines_found_however_the_file_escapes(tmp_path: Path) -> None:
    data = [{"memory": "Café at noon", "user_id": "ann"},
            {"memory": "Zoë likes tea", "user_id": "bob"}]
    (tmp_path / "a.json").write_text(json.dumps(data, indent=1, ensure_ascii=False))
    (tmp_path / "b.json").write_text(json.dumps(data, indent=1))    # \u00e9 escapes
    for name in ("a.json", "b.json"):
        got = mem0.read(tmp_path / name)
        assert [f.origin.line for e in got.entities for f in e.facts] == [3, 7], name


def test_cli_import_and_its_report(vault: Vault) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    root = str(vault.root)
    vault.close()
    dry = CliRunner().invoke(main, ["-C", root, "import", "mem0", str(FIXTURES / "personal"),
                                    "--dry-run"], catch_exceptions=False)
    assert dry.exit_code == 0, dry.output
    assert "would write:" in dry.output and "owner" in dry.output
    assert not (vault.root / "memory/2025-06-01.md").exists()
    done = CliRunner().invoke(main, ["-C", root, "import", "mem0", str(FIXTURES / "personal")],
                              catch_exceptions=False)
    assert done.exit_code == 0 and "2 documents" in done.output, done.output
    bad = vault.root.parent / "bad.json"
    bad.write_text('[{"id": 1,\n "memory": }]')
    failed = CliRunner().invoke(main, ["-C", root, "import", "mem0", str(bad)])
    assert failed.exit_code != 0
    assert "bad.json:2: not JSON (Expecting value, column 12)" in failed.output
