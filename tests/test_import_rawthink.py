"""The RAWThink importer: read() on a vault written by RAWThink's own KnowledgeGraph
(tests/fixtures/import/rawthink, see its README), its bad-input cases, the round trip into a
real Kenning vault read back from the page files, and a RAWThink-style decision with
domain="software" through a real MCP client."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_mcp import data, stdio

from kenning.api import Vault
from kenning.transfer import rawthink
from kenning.transfer.plan import ImportFailed
from kenning.vault.page import parse_page

FIXTURE = Path(__file__).parent / "fixtures/import/rawthink"


def _items() -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (FIXTURE / "memory.jsonl").read_text(encoding="utf-8").splitlines() if line]


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


def test_read_maps_every_type_domain_and_epistemic() -> None:
    got = rawthink.read(FIXTURE)
    assert not got.problems
    # RAWThink's ranking state is all it leaves out, and it says so
    assert [s.reason.split(" (")[0] for s in got.skipped] == [
        f"entity field {k!r} not imported: RAWThink's ranking state, not memory"
        for k in ("activation", "last_accessed")]
    items = [i for i in _items() if i["type"] == "entity"]
    assert [e.name for e in got.entities] == [i["name"] for i in items]
    assert {i["entityType"] for i in items} == {
        "decision", "concept", "finding", "rule", "open-question", "artifact", "insight",
        "task", "event", "thing"}
    assert got.mapped[("domain", "software")] == "engineering"
    assert got.mapped[("domain", "neuro")] == "neuroscience"
    assert {w for (k, w) in got.mapped if k == "domain"} == {
        "software", "music", "history", "philosophy", "health", "writing", "neuro", "finance",
        "personal", "galaxy"}
    assert {e.epistemic for e in got.entities} == {"assertion", "hypothesis", "speculation",
                                                  "unknown"}
    thing = next(e for e in got.entities if e.name == "Thing 9")
    gone = next(f for f in thing.facts if f.text.startswith("Thing weighs 2 kg"))
    assert gone.status == "invalidated" and gone.expired == "2025-02-15"
    assert gone.recorded == "2025-02-14" and "Thing weighs 3 kg" in gone.text
    sqlite = next(e for e in got.entities if e.name == "Use SQLite")
    (d,) = sqlite.decisions
    assert (d.decided, d.because, d.rejected) == ("Store the index in SQLite",
                                                  "One file, no server",
                                                  ["Postgres", "Qdrant only"])
    cay = next(e for e in got.entities if e.name == "Çay Demleme")
    assert cay.facts[0].text == "Çayı 90 derecede demlemek acıyı azaltır"
    assert [(f.relation, f.target) for f in cay.facts if f.relation] == [("part_of",
                                                                          "Concept 1")]
    assert sorted(d.path for d in got.documents) == [
        "notes/caching-idea.md", "sessions/2025-02-13-handoff.md",
        "sessions/2025-02/2025-02-12-001-index-choice.md"]


def test_ids_are_stable_when_the_file_grows(tmp_path: Path) -> None:
    first = rawthink.read(FIXTURE / "memory.jsonl")
    grown = tmp_path / "memory.jsonl"
    grown.write_text('{"type":"entity","name":"New","entityType":"concept","domain":"music"}\n'
                     + (FIXTURE / "memory.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    second = rawthink.read(grown)
    keys = {f.origin.key() for e in first.entities for f in e.facts}
    assert keys <= {f.origin.key() for e in second.entities for f in e.facts}


def test_bad_input(tmp_path: Path) -> None:
    p = tmp_path / "memory.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"type":"entity","name":"A","entityType":"gizmo",'
                  b'"observations":["x"]}\n\n'
                  b'{"type":"entity","name":"A","entityType":"thing","observations":["y"]}\n'
                  b'{"type":"relation","from":"A","to":"Ghost","relationType":"blocks"}\n'
                  b'{"type":"entity","name":"B"')
    got = rawthink.read(p)
    assert [str(x).split(":")[:2] for x in got.problems] == [["memory.jsonl", "5"]]
    assert got.mapped[("type", "gizmo")] == "thing"
    (a,) = got.entities
    assert [f.text for f in a.facts if not f.relation] == ["x", "y"]
    rel = next(f for f in a.facts if f.relation)
    assert (rel.relation, rel.target, rel.text) == ("related_to", "Ghost", "(rawthink: blocks)")
    assert any("gizmo" in n for n in got.notes)
    assert any("appears again" in n for n in got.notes)
    assert any("Ghost" in n for n in got.notes)
    with pytest.raises(rawthink.RawthinkPathError, match="no such"):
        rawthink.read(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(rawthink.RawthinkPathError, match="not a RAWThink vault"):
        rawthink.read(empty)


def test_huge_line_is_a_problem(tmp_path: Path) -> None:
    p = tmp_path / "memory.jsonl"
    p.write_text('{"type":"entity","name":"A"}\n{"x":"' + "a" * (10 * 1024 * 1024) + '"}\n')
    got = rawthink.read(p)
    assert [x.origin.line for x in got.problems] == [2]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict[str, Any]]:
    root = tmp_path_factory.mktemp("rt")
    v, _ = Vault.init(root / "v")
    report = v.import_from("rawthink", FIXTURE)
    return v, report


def test_round_trip_every_entity_observation_and_relation(
        imported: tuple[Vault, dict[str, Any]]) -> None:
    vault, _ = imported
    pages = {}
    for p in vault.root.rglob("*.md"):
        rel = p.relative_to(vault.root).as_posix()
        if rel.startswith("sources/"):
            continue
        page = parse_page(p.read_text(encoding="utf-8"), rel)
        pages[p.stem] = page
    for item in _items():
        if item["type"] == "entity":
            page = pages[item["name"]]
            texts = " ".join(f.text for f in page.facts)
            for obs in item["observations"]:
                if obs.get("kind") in ("decided", "because", "rejected"):
                    continue
                assert obs["text"] in texts, (item["name"], obs["text"])
            if any(o.get("kind") == "decided" for o in item["observations"]):
                (d,) = page.items
                decided = next(o["text"] for o in item["observations"]
                               if o["kind"] == "decided")
                assert d.text == decided
                rejected = [o["text"] for o in item["observations"] if o["kind"] == "rejected"]
                assert list(d.rejected) == rejected
        else:
            page = pages[item["from"]]
            assert any(f.relation == item["relationType"] and f.target == item["to"]
                       for f in page.facts), item
    task = pages["Task 8"]
    assert next(f for f in task.facts if f.text == "First note on task").status == "invalidated"
    qnote = (FIXTURE / "qnotes/caching-idea.md").read_text(encoding="utf-8")
    assert (vault.root / "notes/caching-idea.md").read_text(encoding="utf-8") == qnote.replace(
        "type: qnote", "type: note\nrawthink_type: qnote")
    handoff = parse_page((vault.root / "sessions/2025-02-13-handoff.md").read_text(), "x")
    assert handoff.type == "session"


def test_second_import_adds_nothing(imported: tuple[Vault, dict[str, Any]]) -> None:
    vault, _ = imported
    before = _tree(vault.root)
    again = vault.import_from("rawthink", FIXTURE)
    assert _tree(vault.root) == before
    assert again["written"]["facts"] == again["written"]["pages_created"] == 0


def test_truncated_line_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    with (src / "memory.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"type":"entity","name":"Cut')
    v, _ = Vault.init(tmp_path / "v")
    before = _tree(v.root)
    got = rawthink.read(src)
    assert got.problems and "memory.jsonl:" in str(got.problems[0])
    with pytest.raises(ImportFailed) as failed:
        v.import_from("rawthink", src)
    assert "memory.jsonl:" in str(failed.value)
    assert _tree(v.root) == before
    v.close()


def test_rawthink_style_decision_with_domain_software_over_mcp(tmp_path: Path) -> None:
    v, _ = Vault.init(tmp_path / "v")
    v.index(embed=False)
    v.close()

    async def run() -> Any:
        async with stdio(v.root, "full") as client:
            # RAWThink: record_decision(name, domain, decided, because, rejected=[str]);
            # Kenning's tool is `decide`; rejected takes RAWThink's plain strings (no why) as
            # well as {option, why}.
            return data(await client.call_tool("decide", {
                "name": "Use SQLite", "domain": "software",
                "decided": "Store the index in SQLite", "because": "One file, no server",
                "rejected": ["Postgres", "Qdrant only",
                             {"option": "Redis", "why": "a server"}]}))

    out = anyio.run(run)
    assert [r["option"] for r in out["citations"]["rejected"]] == ["Postgres", "Qdrant only",
                                                                    "Redis"]
    pages = [p for p in v.root.rglob("*.md") if "Use SQLite" in p.read_text(encoding="utf-8")]
    assert pages
    page = parse_page(pages[0].read_text(encoding="utf-8"), "x")
    assert page.domain == "engineering"
    assert page.frontmatter["rejected"] == ["Postgres", "Qdrant only", "Redis — a server"]


def test_superseded_by_links_to_the_observation_that_replaced_it(tmp_path: Path) -> None:
    p = tmp_path / "memory.jsonl"
    p.write_text(json.dumps({"type": "entity", "name": "W", "entityType": "thing",
                             "observations": [
                                 {"text": "2 kg", "status": "invalidated",
                                  "superseded_by": "3 kg"},
                                 {"text": "3 kg", "status": "active"},
                                 {"text": "red", "status": "invalidated",
                                  "superseded_by": "blue"}]}) + "\n")
    (w,) = rawthink.read(p).entities
    old, new, red = w.facts
    assert old.superseded_by == new.origin.key()
    assert red.superseded_by is None and red.text == "red (superseded by: blue)"


def test_every_rawthink_domain_is_a_kenning_domain() -> None:
    from kenning import vocabulary

    got = {d: vocabulary.domain(d) for d in ("software", "music", "history", "philosophy",
                                              "health", "writing", "neuro", "finance",
                                              "personal", "galaxy")}
    assert got["software"] == "engineering" and got["neuro"] == "neuroscience"
    assert all(got[d] == d for d in got if d not in ("software", "neuro"))
