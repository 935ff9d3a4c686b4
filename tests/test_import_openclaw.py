"""The OpenClaw importer (kenning.transfer.openclaw) on a workspace in OpenClaw's layout:
what ``read`` makes of it, and the round trip — import into a fresh vault, then read the
vault's pages (not the report) for every entity, fact, timeline line and daily log."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.errors import KenningError
from kenning.transfer import openclaw
from kenning.transfer.plan import ImportFailed
from kenning.vault.page import parse_page

WORKSPACE = Path(__file__).parent / "fixtures" / "import" / "openclaw" / "workspace"

#: every bullet of the fixture's bank pages, written out by hand from the files: entity,
#: fact text (as it starts), epistemic, confidence
EXPECTED_FACTS = [
    ("people/Peter.md", "Lives in Vienna.", "unknown", None),
    ("people/Peter.md", "Peter wrote warelay. (@warelay)", "unknown", None),
    ("people/Peter.md", "Prefers replies without emoji.", "hypothesis", 0.9),
    ("people/Peter.md", "Prefers concise replies on WhatsApp.", "hypothesis", 0.95),
    ("people/Peter.md", "Confidence out of range on purpose.", "hypothesis", None),
    ("things/The Castle.md", "Runs the nightly backup at 02:00.", "unknown", None),
    ("things/The Castle.md", "Hosts the weather station dashboard.", "unknown", None),
    ("things/The Castle.md", "The home server runs Debian 12", "unknown", None),
    ("things/warelay.md", "Uses the Baileys library.", "unknown", None),
    ("things/warelay.md", "The Baileys library will break again", "hypothesis", 0.6),
    ("things/warelay.md", "warelay is the WhatsApp relay; it uses Baileys.", "unknown", None),
]
EXPECTED_EVENTS = [
    ("people/Peter.md", "2025-11-27", "Flew to Marrakech for Andy's birthday."),
    ("things/warelay.md", "2025-11-27", "Patched the connection.update handler crash"),
]
DOCUMENTS = ["memory/2025-11-27.md", "memory/2025-11-28.md", "memory/context-digest.md",
             "bank/world.md", "bank/experience.md", "bank/opinions.md"]


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.name.startswith(("index.", "write.lock", "journal"))}


def _page(root: Path, rel: str):
    return parse_page((root / rel).read_text(encoding="utf-8"), rel)


# -- read(): the model, before anything is written ---------------------------------------------


def test_read_maps_the_workspace() -> None:
    got = openclaw.read(WORKSPACE)
    assert not got.problems
    by_name = {e.name: e for e in got.entities}
    assert set(by_name) == {"Peter", "The Castle", "warelay"}
    assert by_name["Peter"].type == "person" and by_name["Peter"].aliases == ["Pete"]
    assert "The-Castle" in by_name["The Castle"].aliases   # the file slug still resolves
    # an entity type Kenning lacks is imported as thing, and the mapping is recorded
    assert by_name["warelay"].type == "thing" and by_name["warelay"].source_type == "software"
    assert got.mapped[("type", "software")] == "thing"
    assert got.mapped[("type", "(none)")] == "thing"
    relation = [f for f in by_name["warelay"].facts if f.relation]
    assert [(f.relation, f.target) for f in relation] == [("depends_on", "The Castle")]
    assert by_name["Peter"].summary.startswith("Peter is the person")
    assert "Castle wiki" in by_name["Peter"].body     # prose kept verbatim
    docs = {d.path: d for d in got.documents}
    assert set(docs) == {"memory.md", *DOCUMENTS}
    assert docs["memory.md"].origin.file == "MEMORY.md"
    assert docs["memory/2025-11-27.md"].text == \
        (WORKSPACE / "memory/2025-11-27.md").read_text(encoding="utf-8")


def test_read_reports_what_it_cannot_use() -> None:
    got = openclaw.read(WORKSPACE)
    where = {(s.origin.file, s.origin.line): s.reason for s in got.skipped}
    # the Retain bullet "Q @Peter: …" is not K: text
    assert "not 'K: text'" in where[("memory/2025-11-28.md", 7)]
    assert ("bank/opinions.md", 5) not in where          # kept, without its confidence:
    assert any(n.startswith("bank/opinions.md:5: confidence '1.7'") for n in got.notes)
    assert "bootstrap" in where[("SOUL.md", None)] and ("USER.md", None) in where
    assert "SOUL.md" not in got.files     # not copied into the vault either


def test_not_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(KenningError, match="not an OpenClaw workspace"):
        openclaw.read(tmp_path)
    (tmp_path / "f.md").write_text("x")
    with pytest.raises(KenningError, match="not a folder"):
        openclaw.read(tmp_path / "f.md")


def test_bad_bytes_and_bad_frontmatter_are_problems(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "bank" / "entities").mkdir(parents=True)
    (ws / "memory" / "2025-01-02.md").write_bytes(b"# Day\n\ncaf\xe9\n")
    (ws / "bank" / "entities" / "Ada.md").write_text("---\ntype: [person\n---\n# Ada\n")
    got = openclaw.read(ws)
    lines = sorted(str(p) for p in got.problems)
    assert lines[0].startswith("bank/entities/Ada.md:") and "frontmatter" in lines[0]
    assert lines[1].startswith("memory/2025-01-02.md:3: not UTF-8")


# -- the round trip: import, then read the vault -----------------------------------------------


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("oc") / "v"
    vault, _ = Vault.init(root)
    try:
        report = vault.import_from("openclaw", WORKSPACE)
        again = vault.import_from("openclaw", WORKSPACE)
    finally:
        vault.close()
    return root, {"first": report, "again": again}


def test_round_trip_every_fact_is_on_its_page(imported: tuple[Path, dict]) -> None:
    root, _ = imported
    for rel, start, epistemic, confidence in EXPECTED_FACTS:
        page = _page(root, rel)
        found = [f for f in page.facts if f.text.startswith(start)]
        assert len(found) == 1, (rel, start, [f.text for f in page.facts])
        fact = found[0]
        assert fact.epistemic == epistemic and fact.confidence == confidence, (rel, start)
        # the citation opens the copied original
        target = fact.source.split("]]")[0].lstrip("[").split("#")[0]
        assert (root / target).is_file() and target.startswith("sources/imports/openclaw/")
    total = sum(len(_page(root, p).facts) for p in {r for r, *_ in EXPECTED_FACTS})
    assert total == len(EXPECTED_FACTS) + 1     # + the depends_on relation
    warelay = _page(root, "things/warelay.md")
    assert [(f.relation, f.target, f.text) for f in warelay.facts if f.relation] == \
        [("depends_on", "The Castle", "Runs as a service on the home server.")]


def test_round_trip_timeline_and_types(imported: tuple[Path, dict]) -> None:
    root, _ = imported
    for rel, date, start in EXPECTED_EVENTS:
        page = _page(root, rel)
        assert any(t.date == date and t.text.startswith(start) for t in page.timeline), rel
    peter = _page(root, "people/Peter.md")
    assert peter.type == "person" and "Pete" in peter.aliases
    assert peter.frontmatter["imported_from"] == "openclaw"
    assert "Castle wiki" in peter.text
    assert _page(root, "things/warelay.md").frontmatter["imported_type"] == "software"


def test_round_trip_daily_logs_are_kept_and_read_as_retain(imported: tuple[Path, dict]
                                                           ) -> None:
    root, _ = imported
    for rel in DOCUMENTS:
        assert (root / rel).read_bytes() == (WORKSPACE / rel).read_bytes(), rel
    day = _page(root, "memory/2025-11-27.md")
    assert [(r.kind, r.entities, r.confidence) for r in day.retain] == [
        ("W", ("Peter",), None), ("B", ("warelay",), None), ("O", ("Peter",), 0.95)]
    # the bad bullet stays in the text; Kenning's own parser skips it too
    assert [r.kind for r in _page(root, "memory/2025-11-28.md").retain] == ["S", "W"]
    # every line of the core memory is in the vault's memory.md (its headings moved down)
    core = (root / "memory.md").read_text(encoding="utf-8").splitlines()
    for line in (WORKSPACE / "MEMORY.md").read_text(encoding="utf-8").splitlines()[1:]:
        assert line in core or f"##{line}" in core, line


def test_importing_twice_adds_nothing(imported: tuple[Path, dict], tmp_path: Path) -> None:
    root, reports = imported
    again = reports["again"]
    assert sum(v for k, v in again["written"].items() if k != "already") == 0
    assert again["written"]["already"] > 0
    before = _tree(root)
    vault = Vault.open(root)
    try:
        vault.import_from("openclaw", WORKSPACE)
    finally:
        vault.close()
    assert _tree(root) == before


def test_failed_import_writes_nothing(vault: Vault, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(WORKSPACE, ws)
    (ws / "bank" / "entities" / "Broken.md").write_bytes(b"# Broken\n\n\xff\xfe\n")
    before = _tree(vault.root)
    with pytest.raises(ImportFailed, match=r"bank/entities/Broken.md:3: not UTF-8"):
        vault.import_from("openclaw", ws)
    assert _tree(vault.root) == before


def test_dry_run_writes_nothing(vault: Vault) -> None:
    before = _tree(vault.root)
    report = vault.import_from("openclaw", WORKSPACE, dry_run=True)
    assert report["dry_run"] and report["written"]["pages_created"] == 3
    assert _tree(vault.root) == before


def test_core_memory_merges_into_the_untouched_template(imported: tuple[Path, dict]) -> None:
    root, reports = imported
    assert "memory.md" in reports["first"]["pages"]["documents_merged"]
    core = (root / "memory.md").read_text(encoding="utf-8")
    assert core.startswith("---\ntype: note\n---\n# Core memory")      # kept as it was
    assert "## Imported from openclaw (MEMORY.md)" in core
    assert "#### Preferences" in core and "- Use metric units." in core
    assert not (root / "memory 2.md").exists()


def test_core_memory_of_yours_is_not_written(vault: Vault) -> None:
    mine = "---\ntype: note\n---\n# Core memory\n\n- I keep this myself.\n"
    (vault.root / "memory.md").write_text(mine, encoding="utf-8")
    report = vault.import_from("openclaw", WORKSPACE)
    assert (vault.root / "memory.md").read_text(encoding="utf-8") == mine
    assert "memory 2.md" in report["pages"]["documents"]
    assert (vault.root / "memory 2.md").read_bytes() == (WORKSPACE / "MEMORY.md").read_bytes()


def test_daily_log_of_that_day_gets_the_retain_lines(vault: Vault) -> None:
    vault.retain("W", "The Castle got a new disk", entities=["The Castle"])
    today = next((vault.root / "memory").glob("*.md"))
    ws_day = f"memory/{today.stem}.md"
    mine = today.read_text(encoding="utf-8")
    import_ws = vault.root.parent / "ws"
    shutil.copytree(WORKSPACE, import_ws)
    (import_ws / ws_day).write_text((WORKSPACE / "memory/2025-11-27.md").read_text()
                                    .replace("2025-11-27", today.stem), encoding="utf-8")
    report = vault.import_from("openclaw", import_ws)
    assert ws_day in report["pages"]["documents_merged"]
    merged = today.read_text(encoding="utf-8")
    lines = iter(merged.splitlines())
    assert all(line in lines for line in mine.splitlines())    # every line of yours, in order
    page = _page(vault.root, ws_day)
    assert [r.kind for r in page.retain] == ["W", "W", "B", "O"]
    assert page.retain[0].text == "The Castle got a new disk"
    assert "## Imported from openclaw" in merged and "Marrakech for Andy" in merged
    before = _tree(vault.root)
    vault.import_from("openclaw", import_ws)
    assert _tree(vault.root) == before


def test_both_core_memory_files_become_one(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# MEMORY\n\n- Use metric units.\n")
    try:
        (ws / "memory.md").write_text("# memory\n\n- Old lower-case file.\n")
    except OSError:
        pytest.skip("case-insensitive file system")
    if len({p.name for p in ws.iterdir()}) < 2:
        pytest.skip("case-insensitive file system")
    got = openclaw.read(ws)
    core = [d for d in got.documents if d.path == "memory.md"]
    assert len(core) == 1
    assert "Use metric units" in core[0].text and "Old lower-case file" in core[0].text


def test_citations_to_markdown_originals_resolve(imported: tuple[Path, dict]) -> None:
    """``[[sources/imports/…/bank/entities/Peter.md#L10]]`` opens the copied original (kept as
    an attachment), even though the vault also has a page named Peter."""
    root, _ = imported
    vault = Vault.open(root)
    try:
        health = vault.doctor()
    finally:
        vault.close()
    dangling = [i for f in health.findings if f.check == "dangling-links" for i in f.items]
    assert not [i for i in dangling if "sources/imports/" in i], dangling[:3]


def test_entity_frontmatter_is_kept(tmp_path: Path) -> None:
    ents = tmp_path / "ws" / "bank" / "entities"
    ents.mkdir(parents=True)
    (ents / "Ada.md").write_text("---\ntype: contact\ncreated: 2024-05-01\ntags: [x]\n"
                                 "domain: software\n---\n# Ada Park\n\nAn engineer.\n")
    got = openclaw.read(tmp_path / "ws")
    ada = got.entities[0]
    assert (ada.name, ada.type, ada.created, ada.domain) == \
        ("Ada Park", "person", "2024-05-01", "software")
    assert ada.frontmatter == {"tags": ["x"]} and "Ada" in ada.aliases
    assert got.mapped[("type", "contact")] == "person"
