"""Reflect: retained bullets folded into pages with citations, confidence steps, idempotence."""

from __future__ import annotations

import pytest
from conftest import write

from kenning.api import Vault
from kenning.memory.common import MemoryInputError
from kenning.vault.page import parse_page


def page(vault: Vault, rel: str):
    return parse_page((vault.root / rel).read_text(encoding="utf-8"), rel)


@pytest.fixture(autouse=True)
def _day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")


LOG = """\
# 2026-03-02

Free text the person wrote.

## Retain
- W @Peter: Peter moved to Berlin
- O(c=0.9) @Peter: an in-process cache will match Redis
- O @Peter: an in-process cache will not match Redis
- B @Peter: I benchmarked the cache with Peter
- S @[[Horizon Ventures]]: the call went well
- W @Nobody: someone unknown
- W: the owner prefers short answers
- B: I tidied the notes
"""


def _setup(vault: Vault) -> None:
    vault.record(entities=[
        {"name": "Peter", "type": "person",
         "observations": [{"text": "An in-process cache will match Redis", "confidence": 0.6}]},
        {"name": "Horizon Ventures", "type": "organization"}])
    write(vault, "memory/2026-03-02.md", LOG)
    write(vault, "memory/2026-02-01.md", "## Retain\n- W @Peter: too old to fold\n")


def test_reflect_folds_with_citations_and_moves_confidence(vault: Vault) -> None:
    _setup(vault)
    log_before = (vault.root / "memory/2026-03-02.md").read_bytes()
    result = vault.reflect("7d")
    assert result["since"] == "2026-02-26"
    assert [f["from"] for f in result["folded"]] == [
        "memory/2026-03-02.md#L6", "memory/2026-03-02.md#L7", "memory/2026-03-02.md#L8",
        "memory/2026-03-02.md#L9", "memory/2026-03-02.md#L10", "memory/2026-03-02.md#L12"]
    assert result["skipped"] == [{"from": "memory/2026-03-02.md#L11",
                                  "text": "someone unknown", "reason": "no page named Nobody"}]
    peter = page(vault, "people/Peter.md")
    facts = {f.text: f for f in peter.facts}
    moved = facts["Peter moved to Berlin"]
    assert (moved.source, moved.epistemic, moved.recorded) == (
        "[[memory/2026-03-02#L6]]", "unknown", "2026-03-05")
    # Agreeing evidence (w=0.9): 0.6 + 0.2·0.9·0.4 = 0.672 → 0.67; then a negation (w=0.5):
    # 0.67 − 0.2·0.5·0.67 = 0.603 → 0.6.
    assert [(m["old"], m["new"], m["direction"]) for m in result["confidence"]] == [
        (0.6, 0.67, "up"), (0.67, 0.6, "down")]
    assert facts["An in-process cache will match Redis"].confidence == 0.6
    lines = [t.text for t in peter.timeline]
    assert "Confidence in 'An in-process cache will match Redis' 0.60 → 0.67: supported by " \
        "'an in-process cache will match Redis'" in lines
    assert any(t.source == "[[memory/2026-03-02#L8]]" and "contradicted" in t.text
               for t in peter.timeline)
    assert any(t.date == "2026-03-02" and t.text == "Experience: I benchmarked the cache with "
               "Peter" and t.source == "[[memory/2026-03-02#L9]]" for t in peter.timeline)
    horizon = page(vault, "organizations/Horizon Ventures.md")
    assert horizon.timeline[0].text == "Summary: the call went well"
    # Summaries are refreshed deterministically from facts and timeline.
    assert peter.summary.startswith("Current: ")
    assert "Latest: 2026-03-05" in peter.summary
    # memory.md is only proposed, never changed.
    assert result["proposed"] == "memory.proposed.md"
    assert "+- the owner prefers short answers" in result["proposal_diff"]
    assert "short answers" not in (vault.root / "memory.md").read_text(encoding="utf-8")
    assert "- the owner prefers short answers" in (
        vault.root / "memory.proposed.md").read_text(encoding="utf-8")
    # The daily log is never rewritten; older logs are outside the window.
    assert (vault.root / "memory/2026-03-02.md").read_bytes() == log_before
    assert "too old" not in (vault.root / "people/Peter.md").read_text(encoding="utf-8")
    # Reflect's writes are indexed: the folded fact is found.
    assert vault.search("moved to Berlin", mode="lexical")[0].path == "people/Peter.md"


def test_reflect_twice_folds_nothing_twice(vault: Vault) -> None:
    _setup(vault)
    vault.reflect("7d")
    after_first = {p: (vault.root / p).read_bytes() for p in
                   ("people/Peter.md", "organizations/Horizon Ventures.md", "memory.proposed.md")}
    second = vault.reflect("7d")
    assert second["folded"] == [] and second["confidence"] == [] and second["proposed"] is None
    assert {p: (vault.root / p).read_bytes() for p in after_first} == after_first
    # A mention that now resolves is folded on the next run, once.
    vault.record(entities=[{"name": "Nobody", "type": "person"}])
    third = vault.reflect("7d")
    assert [f["from"] for f in third["folded"]] == ["memory/2026-03-02.md#L11"]
    assert vault.reflect("7d")["folded"] == []


def test_dry_run_writes_nothing_and_person_summaries_are_kept(vault: Vault) -> None:
    _setup(vault)
    text = (vault.root / "people/Peter.md").read_text(encoding="utf-8")
    mine = text.replace("# Peter\n", "# Peter\n\nMy own words about Peter.\n")
    write(vault, "people/Peter.md", mine)
    dry = vault.reflect("all", apply=False)
    assert dry["applied"] is False and len(dry["folded"]) == 7  # the February log too
    assert (vault.root / "people/Peter.md").read_text(encoding="utf-8") == mine
    assert not (vault.root / "memory.proposed.md").exists()
    vault.reflect("all")
    assert page(vault, "people/Peter.md").summary == "My own words about Peter."
    with pytest.raises(MemoryInputError, match="since"):
        vault.reflect("yesterday-ish")


def test_the_proposal_for_memory_md_is_never_indexed(vault) -> None:
    from kenning.vault.layout import NEVER_INDEXED

    (vault.root / "memory.proposed.md").write_text("# Proposed\n\n- zebrafish husbandry notes\n")
    vault.index()
    assert "memory.proposed.md" in NEVER_INDEXED
    assert vault.search("zebrafish husbandry", mode="lexical") == []
