"""Agent writes never edit a person's note. Three real pages on disk: a hand-written untyped
note (a zettelkasten note), a hand-written typed page in Kenning's format, and a page Kenning
created. Kenning writes the one it created and the owned sections of the typed one; the plain
note is read, never written: a relation to it lives on Kenning's page, a relation from it in the
manual-link log, an observation on it (or a revision of its facts, or deleting it) is refused."""

from __future__ import annotations

import json

import pytest

from kenning.api import Vault
from kenning.memory.common import MemoryInputError

ZETTEL = "Hannah Berg.md"
ZETTEL_TEXT = ("Hannah Berg works on category theory.\n\n## Facts\n"
               "- Lives in Oslo\n\nSee [[Monoids]].\n")
TYPED = "people/Sarah Chen.md"
TYPED_TEXT = "---\ntype: person\nupdated: 2026-01-01\n---\n# Sarah Chen\n\nPartner.\n"


@pytest.fixture
def world(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")
    (vault.root / ZETTEL).write_text(ZETTEL_TEXT, encoding="utf-8")
    (vault.root / "people").mkdir(exist_ok=True)
    (vault.root / TYPED).write_text(TYPED_TEXT, encoding="utf-8")
    vault.index(embed=False)
    vault.record(entities=[{"name": "Dana Ruiz", "type": "person"}])
    return vault


def created_path(vault: Vault, title: str) -> str:
    """The page Kenning created for ``title`` (found by its title, not by a guessed name)."""
    registry = json.loads((vault.root / ".kenning" / "created.json").read_text())["pages"]
    found = [p for p in registry if (vault.root / p).read_text(encoding="utf-8")
             .split("\n# ", 1)[-1].split("\n", 1)[0] == title]
    assert len(found) == 1, registry
    return found[0]


def persons(vault: Vault) -> dict[str, bytes]:
    return {rel: (vault.root / rel).read_bytes() for rel in (ZETTEL, TYPED)}


def test_relations_to_either_kind_of_note_are_written_on_kennings_page(world: Vault) -> None:
    before = persons(world)
    out = world.record(relations=[{"from": "Dana Ruiz", "rel": "advises", "to": "Hannah Berg"},
                                  {"from": "Dana Ruiz", "rel": "advises", "to": "Sarah Chen"}])
    assert persons(world) == before  # no `updated:`, nothing at all on either target
    dana = created_path(world, "Dana Ruiz")
    assert out["updated"] == [dana]
    text = (world.root / dana).read_text(encoding="utf-8")
    assert "advises:: [[Hannah Berg]]" in text and "advises:: [[Sarah Chen]]" in text


def test_a_relation_from_a_plain_note_goes_to_the_manual_link_log(world: Vault) -> None:
    before = persons(world)
    out = world.record(relations=[{"from": "Hannah Berg", "rel": "advises", "to": "Dana Ruiz",
                                   "valid_from": "2025-01", "source": "a call"}])
    assert persons(world) == before
    dana = created_path(world, "Dana Ruiz")
    assert out["links"] == [{"from": ZETTEL, "rel": "advises", "to": dana,
                             "stored": ".kenning/manual-links.jsonl"}]
    entry = json.loads((world.root / ".kenning/manual-links.jsonl").read_text().splitlines()[-1])
    assert (entry["src"], entry["dst"], entry["valid_from"], entry["source"]) == \
        (ZETTEL, dana, "2025-01", "a call")
    assert any(e.other.path == dana for e in world.neighbors("Hannah Berg", direction="out"))
    with pytest.raises(MemoryInputError, match="remote callers cannot add a relation from it"):
        world.record(relations=[{"from": "Hannah Berg", "rel": "advises", "to": "Dana Ruiz"}],
                     trusted=False)


def test_observations_revisions_and_new_names_on_a_plain_note_are_refused(world: Vault) -> None:
    before = persons(world)
    cases = [
        lambda: world.record(observations=[{"entity": "Hannah Berg", "text": "Moved to Bergen"}]),
        lambda: world.record(entities=[{"name": "Hannah Berg", "type": "person",
                                        "aliases": ["H. Berg"]}]),
        lambda: world.revise("Hannah Berg", "Lives in Oslo", "Lives in Bergen"),
        lambda: world.invalidate("Hannah Berg", "Lives in Oslo", reason="wrong"),
        lambda: world.revise("Dana Ruiz", "x", "y", superseding_entity="Hannah Berg"),
    ]
    for call in cases:
        with pytest.raises(MemoryInputError, match=r"Hannah Berg\.md is a note of yours"):
            call()
    assert persons(world) == before
    # Naming the note only to point at it writes nothing on it.
    world.record(entities=[{"name": "Hannah Berg", "type": "person"}],
                 relations=[{"from": "Dana Ruiz", "rel": "advises", "to": "Hannah Berg"}])
    assert persons(world) == before


def test_the_typed_page_accepts_kennings_sections(world: Vault) -> None:
    world.record(observations=[{"entity": "Sarah Chen", "text": "Prefers async updates"}])
    text = (world.root / TYPED).read_text(encoding="utf-8")
    assert "- Prefers async updates" in text and "updated: 2026-03-05" in text
    assert text.startswith("---\ntype: person\n") and "\n# Sarah Chen\n\nPartner.\n" in text


def test_delete_only_reaches_pages_kenning_created(world: Vault) -> None:
    before = persons(world)
    for ref in ("Hannah Berg", "Sarah Chen"):
        with pytest.raises(MemoryInputError, match="never deletes a person's note"):
            world.delete(ref)
    assert persons(world) == before
    dana = created_path(world, "Dana Ruiz")
    gone = world.delete("Dana Ruiz")
    assert gone["deleted"] == dana and (world.root / gone["trash"]).exists()
    registry = json.loads((world.root / ".kenning/created.json").read_text())["pages"]
    assert dana not in registry


def test_reflect_leaves_a_plain_note_alone_and_says_why(world: Vault) -> None:
    world.retain("W", "Hannah gives the keynote", ["Hannah Berg"])
    before = persons(world)
    out = world.reflect("7d")
    assert persons(world) == before
    assert out["skipped"] and "is a note of yours" in out["skipped"][0]["reason"]


def test_a_lost_registry_fails_safe(world: Vault) -> None:
    (world.root / ".kenning" / "created.json").unlink()
    # Kenning's own page is typed, so its owned sections still take writes …
    world.record(observations=[{"entity": "Dana Ruiz", "text": "Leads the SDK team"}])
    # … but nothing is treated as Kenning's to delete any more.
    with pytest.raises(MemoryInputError, match="never deletes"):
        world.delete("Dana Ruiz")


def test_a_note_typed_note_by_a_person_is_a_plain_note(world: Vault) -> None:
    mine = world.root / "Reading list.md"
    mine.write_text("---\ntype: note\n---\n# Reading list\n", encoding="utf-8")
    world.index(embed=False)
    with pytest.raises(MemoryInputError, match="is a note of yours"):
        world.record(observations=[{"entity": "Reading list", "text": "Add Mac Lane"}])
    assert mine.read_text(encoding="utf-8") == "---\ntype: note\n---\n# Reading list\n"
    # A note Kenning itself wrote is Kenning's.
    note = world.note("Check the cache", title="Cache check")
    world.delete(note["path"])

