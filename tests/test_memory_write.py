"""The agent write path on real files: record, decide, revise, invalidate, retain, note, delete."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.memory.common import MemoryInputError
from kenning.memory.write import NotAllowed
from kenning.vault.page import parse_page


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside .kenning, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".kenning" not in p.parts}


def page(vault: Vault, rel: str):
    return parse_page((vault.root / rel).read_text(encoding="utf-8"), rel)


@pytest.fixture(autouse=True)
def _day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")


def test_record_creates_pages_facts_relations_and_indexes_at_once(vault: Vault) -> None:
    result = vault.record(
        entities=[{"name": "Sarah Chen", "type": "human", "domain": "money",
                   "aliases": ["Sarah"], "summary": "Partner at Horizon.",
                   "observations": ["Prefers async updates",
                                    {"text": "Based in Berlin", "valid_from": "2025-01",
                                     "epistemic": "fact", "source": "email of 2026-03-01"}]},
                  {"name": "Horizon Ventures", "type": "company"}],
        relations=[{"from": "Sarah", "rel": "employed_by", "to": "Horizon Ventures",
                    "valid_from": "2024-05-01", "text": "Partner"}])
    assert result["created"] == ["people/Sarah Chen.md", "organizations/Horizon Ventures.md"]
    assert result["indexed"] is True
    sarah = page(vault, "people/Sarah Chen.md")
    assert sarah.type == "person" and sarah.domain == "finance" and sarah.aliases == ("Sarah",)
    f1, f2, f3 = sarah.facts
    assert (f1.text, f1.epistemic, f1.recorded, f1.block_id) == (
        "Prefers async updates", "unknown", "2026-03-05", "f1")
    assert "[epistemic::" not in sarah.text.splitlines()[f1.line - 1]  # default not written
    assert (f2.valid_from, f2.epistemic, f2.source) == ("2025-01", "assertion",
                                                         "email of 2026-03-01")
    assert (f3.relation, f3.target, f3.valid_from) == ("works_at", "Horizon Ventures",
                                                       "2024-05-01")
    assert "[[Horizon Ventures]] Partner" in sarah.text
    # Citations point at the fact lines; the index already knows the page and the edge.
    assert result["facts"][0]["citation"] == f"people/Sarah Chen.md#L{f1.line}-L{f1.line}"
    assert vault.find("Sarah").path == "people/Sarah Chen.md"
    edges = vault.neighbors("Sarah Chen", direction="out")
    assert any(e.rel == "works_at" and e.other.path == "organizations/Horizon Ventures.md"
               for e in edges)
    hits = vault.search("async updates", mode="lexical")
    assert hits and hits[0].path == "people/Sarah Chen.md"


def test_bad_batch_names_every_problem_and_writes_nothing(vault: Vault) -> None:
    vault.record(entities=[{"name": "Acme", "type": "organization"}])
    before = snapshot(vault.root)
    with pytest.raises(MemoryInputError) as err:
        vault.record(
            entities=[{"name": "../etc/passwd", "type": "person"},
                      {"name": "Nul\x00Byte", "type": "person"},
                      {"name": "   ", "type": "person"},
                      {"name": "Robo", "type": "robot"},
                      {"name": "Big", "type": "person", "observations": ["x" * 5_000_000]},
                      {"name": "Fine Person", "type": "person", "colour": "red"}],
            relations=[{"from": "Fine Person", "rel": "likes", "to": "Acme"},
                       {"from": "Fine Person", "rel": "works_at", "to": "Nobody Inc"}],
            observations=[{"entity": "Ghost", "text": "boo"}])
    problems = err.value.problems
    text = str(err.value)
    assert len(problems) == 9, problems
    assert "nothing written" in text
    for needle in ("entities[0].name", "'..'", "entities[1].name: 'Nul\\x00Byte' contains NUL",
                   "entities[2].name: is empty or only whitespace",
                   "unknown entity type 'robot'; allowed: person, organization",
                   "5,000,000 characters", "unknown field 'colour'",
                   "unknown relation type 'likes'; allowed: works_at",
                   "relations[1].to: no entity named 'Nobody Inc'",
                   "observations[0].entity: no entity named 'Ghost'"):
        assert needle in text, needle
    assert snapshot(vault.root) == before


def test_existing_page_keeps_every_byte_and_type_must_match(sample_vault: Vault) -> None:
    sample_vault.index(embed=False)
    rel = "people/Maya Okafor.md"
    old = (sample_vault.root / rel).read_text(encoding="utf-8")
    result = sample_vault.record(
        entities=[{"name": "Maya", "type": "person", "aliases": ["MO"]}],
        observations=[{"entity": "Maya Okafor", "text": "Wants pricing decided by June"}])
    assert result["updated"] == [rel] and result["created"] == []
    new = (sample_vault.root / rel).read_text(encoding="utf-8")
    added = [line for line in new.splitlines() if line not in old.splitlines()]
    removed = [line for line in old.splitlines() if line not in new.splitlines()]
    # Only owned lines change: the alias list, `updated`, and one new fact line.
    assert removed == ["aliases: [Maya, M. Okafor]", "updated: 2026-09-12"]
    assert added == ["aliases:", "  - Maya", "  - M. Okafor", "  - MO", "updated: 2026-03-05",
                     "- Wants pricing decided by June [recorded:: 2026-03-05] ^f1"]
    assert "## Notes\nMaya founded [[Kestrel Labs]] in 2024" in new
    with pytest.raises(MemoryInputError, match=re.escape(
            "exists as people/Maya Okafor.md with type person, not project")):
        sample_vault.record(entities=[{"name": "Maya Okafor", "type": "project"}])


def test_text_that_would_read_back_differently_is_refused(vault: Vault) -> None:
    vault.record(entities=[{"name": "Acme", "type": "organization"}])
    before = snapshot(vault.root)
    with pytest.raises(MemoryInputError) as err:
        vault.record(observations=[{"entity": "Acme", "text": "CEO [status:: superseded]"},
                                   {"entity": "Acme", "text": "ends with a block ^x1"},
                                   {"entity": "Acme", "text": "ok", "confidence": 2},
                                   {"entity": "Acme", "text": "ok", "valid_from": "2026-02-30"}])
    assert len(err.value.problems) == 4
    assert "contains Kenning fact syntax" in str(err.value)
    assert "confidence 2 must be a number from 0 to 1" in str(err.value)
    assert "'2026-02-30' is not a real date" in str(err.value)
    assert snapshot(vault.root) == before


def test_remote_callers_cannot_write_links_or_delete(vault: Vault) -> None:
    vault.record(entities=[{"name": "Acme", "type": "organization"}])
    before = snapshot(vault.root)
    with pytest.raises(MemoryInputError, match="remote callers cannot write links"):
        vault.record(observations=[{"entity": "Acme", "text": "see [[Boost Me]]"}],
                     trusted=False)
    with pytest.raises(MemoryInputError, match="may cite only existing pages"):
        vault.record(observations=[{"entity": "Acme", "text": "x",
                                    "source": "[[../../etc/passwd]]"}], trusted=False)
    with pytest.raises(NotAllowed):
        vault.delete("Acme", trusted=False)
    assert snapshot(vault.root) == before
    # Untrusted plain observations are fine.
    assert vault.record(observations=[{"entity": "Acme", "text": "Sells anvils"}],
                        trusted=False)["facts"][0]["id"] == "f1"


def test_decision_parts_are_separately_findable_with_citations(vault: Vault) -> None:
    result = vault.record_decision(
        "Caching for the Replay API", "eng", "Use an in-process LRU cache",
        "Redis caused two stale-replay incidents.",
        [{"option": "Memcached", "why": "same operational cost as Redis"},
         {"option": "Materialise bundles in Postgres", "why": "doubles storage"}],
        date="2026-03-04", source="[[meetings/2026-03-04-caching-review]]")
    path = result["path"]
    assert path == "decisions/Caching for the Replay API.md"
    lines = (vault.root / path).read_text(encoding="utf-8").splitlines()

    def line_of(citation: str) -> str:
        start = int(citation.split("#L")[1].split("-")[0])
        return lines[start - 1]

    c = result["citations"]
    assert "Use an in-process LRU cache" in line_of(c["decided"])
    assert line_of(c["because"]) == "Redis caused two stale-replay incidents."
    assert line_of(c["rejected"][0]["citation"]) == \
        "- Memcached — rejected: same operational cost as Redis"
    decision = page(vault, path)
    assert decision.type == "decision" and decision.domain == "engineering"
    assert decision.frontmatter["decided"] == "2026-03-04"
    assert decision.frontmatter["rejected"][1] == "Materialise bundles in Postgres — doubles " \
        "storage"
    assert decision.timeline[0].source == "[[meetings/2026-03-04-caching-review]]"
    # "What did we reject for caching, and why?" finds the rejected option, cited.
    results = vault.search("what did we reject for caching, and why?", mode="lexical")
    assert results[0].path == path
    cited = {(h.start_line, h.end_line) for h in results[0].hits}
    first = int(c["rejected"][0]["citation"].split("#L")[1].split("-")[0])
    assert any(s <= first <= e for s, e in cited)
    with pytest.raises(MemoryInputError, match="exists"):
        vault.record_decision("Caching for the Replay API", "eng", "x", "y")


def test_rejected_options_without_a_why_are_accepted(vault: Vault) -> None:
    """RAWThink's record_decision gives rejected options as plain strings, without a why:
    each is a rejected option of its own, citable, whose reason is not known."""
    result = vault.record_decision(
        "Index store", "software", "Store the index in SQLite", "One file, no server",
        ["Postgres", "Qdrant only: no lexical search", {"option": "Redis"},
         {"option": "Elastic", "why": ""}], date="2025-02-12")
    text = (vault.root / result["path"]).read_text(encoding="utf-8")
    lines = text.splitlines()
    decision = page(vault, result["path"])
    assert decision.frontmatter["rejected"] == [
        "Postgres", "Qdrant only — no lexical search", "Redis", "Elastic"]
    cited = result["citations"]["rejected"]
    assert [(r["option"], r["why"]) for r in cited] == [
        ("Postgres", None), ("Qdrant only", "no lexical search"), ("Redis", None),
        ("Elastic", None)]
    assert [lines[int(r["citation"].split("#L")[1].split("-")[0]) - 1] for r in cited] == [
        "- Postgres — rejected", "- Qdrant only — rejected: no lexical search",
        "- Redis — rejected", "- Elastic — rejected"]
    vault.index(embed=False)
    (shown,) = vault.decisions()
    assert shown["rejected"] == [{"option": "Postgres", "why": None},
                                 {"option": "Qdrant only", "why": "no lexical search"},
                                 {"option": "Redis", "why": None},
                                 {"option": "Elastic", "why": None}]
    before = snapshot(vault.root)
    for bad, field in (([{"why": "no option"}], "rejected[0].option"), ([" "], "rejected[0]"),
                       ([3], "rejected[0]")):
        with pytest.raises(MemoryInputError, match=re.escape(field)):
            vault.record_decision("Other", "software", "x", "y", bad)
    assert snapshot(vault.root) == before


def test_revise_keeps_the_old_fact_superseded_with_a_link(vault: Vault) -> None:
    vault.record(entities=[{"name": "Sarah Chen", "type": "person",
                            "observations": [{"text": "Based in Berlin",
                                              "valid_from": "2025-01"}]}])
    result = vault.revise("Sarah Chen", "berlin", "Based in Munich", valid_from="2026-03-01",
                          source="call on 2026-03-05")
    assert result["old"]["id"] == "f1" and result["new"]["id"] == "f2"
    old, new = page(vault, "people/Sarah Chen.md").facts
    assert (old.status, old.successor, old.expired, old.valid_to) == (
        "superseded", "[[Sarah Chen#^f2]]", "2026-03-05", "2026-02-28")
    assert (new.text, new.valid_from, new.status, new.source) == (
        "Based in Munich", "2026-03-01", "active", "call on 2026-03-05")
    timeline = page(vault, "people/Sarah Chen.md").timeline
    assert timeline[-1].text == "Revised 'Based in Berlin' → 'Based in Munich'"
    # The index sees the revision at once: the old line is marked superseded.
    shown = vault.show("Sarah Chen")["facts"]
    assert [f["status"] for f in shown] == ["superseded", "active"]
    before = snapshot(vault.root)
    missing = re.escape("no fact of people/Sarah Chen.md matches")
    with pytest.raises(MemoryInputError, match=missing):
        vault.revise("Sarah Chen", "Lives in Paris", "x")
    with pytest.raises(MemoryInputError, match="already superseded"):
        vault.revise("Sarah Chen", "^f1", "x")
    with pytest.raises(MemoryInputError, match="no page named 'Nobody'"):
        vault.revise("Nobody", "x", "y")
    assert snapshot(vault.root) == before


def test_revise_onto_another_entity_and_by_an_existing_fact(vault: Vault) -> None:
    vault.record(entities=[{"name": "Old Plan", "type": "project", "observations": ["Use Redis"]},
                           {"name": "New Plan", "type": "project",
                            "observations": ["Use an LRU"]}])
    result = vault.revise("Old Plan", "^f1", superseded_by="New Plan#^f1")
    assert result["new"]["citation"].startswith("projects/New Plan.md#L")
    old = page(vault, "projects/Old Plan.md").facts[0]
    assert old.successor == "[[New Plan#^f1]]" and old.status == "superseded"
    vault.record(observations=[{"entity": "New Plan", "text": "Owner is Peter"}])
    moved = vault.revise("New Plan", "Owner is Peter", "Owner is Priya",
                         superseding_entity="Old Plan")
    assert moved["new"]["path"] == "projects/Old Plan.md"
    assert page(vault, "projects/New Plan.md").facts[1].successor == "[[Old Plan#^f2]]"


def test_invalidate_marks_the_fact_and_says_why(vault: Vault) -> None:
    vault.record(entities=[{"name": "Acme", "type": "organization",
                            "observations": ["Has 500 staff"]}])
    result = vault.invalidate("Acme", "500 staff", reason="misread the deck")
    fact = page(vault, "organizations/Acme.md").facts[0]
    assert (fact.status, fact.expired, fact.text) == ("invalidated", "2026-03-05",
                                                      "Has 500 staff")
    assert result["citation"] == f"organizations/Acme.md#L{fact.line}-L{fact.line}"
    assert page(vault, "organizations/Acme.md").timeline[-1].text == \
        "Invalidated 'Has 500 staff': misread the deck"


def test_bitemporal_as_of_and_believed_on(vault: Vault, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.setenv("KENNING_TODAY", "2026-01-10")
    vault.record(entities=[{"name": "Sarah Chen", "type": "person",
                            "observations": [{"text": "Lives in Berlin",
                                              "valid_from": "2025-01"},
                                             "Likes tea"]}])
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")
    vault.revise("Sarah Chen", "Lives in Berlin", "Lives in Munich", valid_from="2026-03-01")
    vault.invalidate("Sarah Chen", "Likes tea", reason="it was coffee")

    def texts(**kw: str) -> list[str]:
        return [f["text"] for f in vault.facts("Sarah Chen", **kw)["facts"]]

    # What was true on a day (by what we know now).
    assert texts(as_of="2025-06-01") == ["Lives in Berlin"]
    assert texts(as_of="2026-03-02") == ["Lives in Munich"]
    assert texts(as_of="2024-06-01") == []
    # What we believed on a day.
    assert texts(believed_on="2026-01-01") == []
    assert texts(believed_on="2026-02-01") == ["Lives in Berlin", "Likes tea"]
    assert texts(believed_on="2026-03-05") == ["Lives in Munich"]
    then = vault.facts("Sarah Chen", believed_on="2026-02-01")["facts"]
    assert [f["status_then"] for f in then] == ["active", "active"]
    assert [f["status"] for f in then] == ["superseded", "invalidated"]
    # Both: what we believed in February about last summer.
    assert texts(believed_on="2026-02-01", as_of="2025-07-01") == ["Lives in Berlin",
                                                                  "Likes tea"]
    # Now, and the whole history.
    assert texts() == ["Lives in Munich"]
    assert texts(history="1") == ["Lives in Berlin", "Likes tea", "Lives in Munich"]  # type: ignore[arg-type]


def test_retain_appends_to_todays_log(vault: Vault) -> None:
    first = vault.retain("w", "Peter moved to Berlin", ["Peter Lindqvist"])
    second = vault.retain("O", "They will lead the A", ["Horizon Ventures"], confidence=0.8)
    assert first["path"] == second["path"] == "memory/2026-03-05.md"
    log = page(vault, "memory/2026-03-05.md")
    assert log.type == "daily"
    assert [(r.kind, r.entities, r.confidence, r.text) for r in log.retain] == [
        ("W", ("Peter Lindqvist",), None, "Peter moved to Berlin"),
        ("O", ("Horizon Ventures",), 0.8, "They will lead the A")]
    assert second["citation"] == f"memory/2026-03-05.md#L{log.retain[1].line}-L" \
        f"{log.retain[1].line}"
    before = snapshot(vault.root)
    with pytest.raises(MemoryInputError) as err:
        vault.retain("X", "  ", ["a/b"], confidence=-1)
    assert len(err.value.problems) == 4
    assert "allowed: W (world fact), B (experience), O (opinion), S (summary)" in str(err.value)
    assert snapshot(vault.root) == before


def test_note_and_delete(vault: Vault) -> None:
    result = vault.note("Check the cache hit rate\n\n# Details\nIt was 71 percent.")
    assert result["path"] == "notes/2026-03-05 Check the cache hit rate.md"
    text = (vault.root / result["path"]).read_text(encoding="utf-8")
    assert text.endswith("Check the cache hit rate\n\n# Details\nIt was 71 percent.\n")
    again = vault.note("Check the cache hit rate")
    assert again["path"] == "notes/2026-03-05 Check the cache hit rate 2.md"
    assert vault.search("hit rate", mode="lexical")
    gone = vault.delete(result["path"])
    assert gone["trash"] == ".trash/notes/2026-03-05 Check the cache hit rate.md"
    assert not (vault.root / result["path"]).exists()
    assert (vault.root / gone["trash"]).read_text(encoding="utf-8") == text
    assert [r.path for r in vault.search("71 percent", mode="lexical")] == []
    with pytest.raises(MemoryInputError, match="no page named"):
        vault.delete("nothing-here")


def test_memory_runs_on_a_context_without_the_facade(tmp_path: Path) -> None:
    """memory/ needs only what its Context carries: a root, a store, a config and the write's
    follow-ups; here built by hand over a real store, with no Vault in the call."""
    from kenning.index.indexer import Indexer
    from kenning.index.store import open_store
    from kenning.memory import write
    from kenning.memory.common import Context
    from kenning.vault.layout import init_vault, load_config
    from kenning.vault.writes import track_landed

    root, _ = init_vault(tmp_path / "v")
    config = load_config(root)
    store = open_store(root)
    indexed: list[object] = []

    def index() -> object:
        report = Indexer(root, store, config).run(None)
        indexed.append(report)
        return report

    embedded: list[list[str]] = []
    ctx = Context(root=root, open_store=lambda: store, load_config=lambda: config,
                  index=index, embed_written=lambda paths: embedded.append(list(paths)) or None)
    try:
        with track_landed():  # as the facade's write wrapper does: which files landed
            out = write.record(ctx, entities=[{"name": "Ada Park", "type": "person",
                                               "observations": ["Leads the pilot"]}])
        assert out["created"] == ["people/Ada Park.md"] and out["indexed"] is True
        assert len(indexed) == 1 and "people/Ada Park.md" in embedded[0]
        assert (root / "people" / "Ada Park.md").read_text().count("Leads the pilot") == 1
        # The index the context's store holds has the page and its fact at once.
        assert store.scalar("SELECT count(*) FROM facts f JOIN pages p ON p.id = f.page_id"
                            " WHERE p.path = ?", ("people/Ada Park.md",)) == 1
        # A second write resolves the name through the store (no new page).
        again = write.record(ctx, observations=[{"entity": "Ada Park", "text": "Met in May"}])
        assert again["created"] == [] and again["updated"] == ["people/Ada Park.md"]
    finally:
        store.close()
