"""Sessions: start within a budget, close with markers and a handoff, and the full round trip."""

from __future__ import annotations

import json

import pytest

from kenning.api import Vault
from kenning.memory.common import MemoryInputError
from kenning.memory.sessions import extract_markers, parse_decision, tokens
from kenning.vault.page import parse_page


@pytest.fixture(autouse=True)
def _day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")


def test_round_trip_start_record_decide_revise_close_start(vault: Vault) -> None:
    first = vault.session_start("Kestrel")
    assert "handoff" not in first and first["project"] == "kestrel"
    assert "Core memory" in first["text"]
    vault.record(entities=[{"name": "Sarah Chen", "type": "person",
                            "observations": ["Prefers monthly calls"]}])
    decided = vault.record_decision(
        "Cache replays in process", "engineering", "Use an in-process LRU",
        "Redis caused stale replays", [{"option": "Memcached", "why": "same cost as Redis"}])
    vault.revise("Sarah Chen", "monthly calls", "Prefers a monthly written update")
    closed = vault.session_close(
        [{"role": "user", "content": "Sarah now wants written updates."},
         {"role": "assistant", "content": "Noted.\nTODO: send Sarah the March update\n"
                                          "REMEMBER: updates go out on the first Monday"}],
        project="Kestrel")
    assert closed["handoff"].startswith("sessions/kestrel/2026-03-05-")
    assert closed["handoff"].endswith("-handoff.md")
    assert [t["text"] for t in closed["todos"]] == ["send Sarah the March update"]
    assert closed["errors"] == []
    # The decision recorded during the session is the session's: in the answer, in the handoff.
    assert [(d["path"], d["decided"], d["citation"]) for d in closed["decisions"]] == [
        (decided["path"], "Use an in-process LRU", decided["citations"]["decided"])]
    handoff = (vault.root / closed["handoff"]).read_text(encoding="utf-8")
    assert "## Decisions" in handoff and "Use an in-process LRU" in handoff
    assert "1 decision(s)" in handoff
    again = vault.session_start("Kestrel")
    assert again["handoff"] == closed["handoff"]
    text = again["text"]
    # The next session sees the handoff: the revision (old and new belief), the open TODO.
    assert "Revised people/Sarah Chen.md: 'Prefers monthly calls' → " \
        "'Prefers a monthly written update'" in text
    assert "send Sarah the March update" in text
    assert tokens(json.dumps(again, ensure_ascii=False, separators=(",", ":"))) <= 2000
    # The superseded belief is still visible in history, the revision is current.
    history = vault.facts("Sarah Chen", history=True)["facts"]
    assert [(f["text"], f["status"]) for f in history] == [
        ("Prefers monthly calls", "superseded"), ("Prefers a monthly written update", "active")]
    assert [f["text"] for f in vault.facts("Sarah Chen")["facts"]] == [
        "Prefers a monthly written update"]
    # The transcript was exported and is searchable; the REMEMBER line went to the daily log.
    transcript = (vault.root / closed["transcript"]).read_text(encoding="utf-8")
    assert "> Sarah now wants written updates." in transcript
    log = parse_page((vault.root / "memory/2026-03-05.md").read_text(encoding="utf-8"), "m.md")
    assert ("W", "updates go out on the first Monday") in [(r.kind, r.text) for r in log.retain]
    assert vault.search("first Monday", mode="lexical")


def test_changed_since_lists_pages_edited_after_the_close(vault: Vault) -> None:
    vault.record(entities=[{"name": "Acme", "type": "organization"}])
    vault.session_close("nothing much", project="p")
    assert "(nothing changed)" in vault.session_start("p")["text"]
    vault.record(entities=[{"name": "Globex", "type": "organization"}])
    text = vault.session_start("p")["text"]
    changed = text.split("## Changed since the last session", 1)[1]
    # Listed once, in the text (not again beside it).
    assert [line.split(" — ")[0] for line in changed.splitlines() if line.startswith("- ")] \
        == ["- organizations/Globex.md"]
    assert text.count("organizations/Globex.md") == 1


def test_start_fits_the_budget(vault: Vault) -> None:
    core = vault.root / "memory.md"
    core.write_text("# Core memory\n\n" + "\n".join(f"- fact number {i} about the world"
                                                    for i in range(2000)) + "\n")
    vault.session_close("DECISION: Ship weekly because customers asked", project="p",
                        summary="A long session. " * 300)
    for budget in (100, 500, 2000):
        out = vault.session_start("p", budget=budget)
        # The whole answer as sent, not only its text, fits.
        assert tokens(json.dumps(out, ensure_ascii=False, separators=(",", ":"))) <= budget
        assert tokens(out["text"]) > budget // 2  # and it is used, not left empty
    small = vault.session_start("p", budget=500)["text"]
    assert "cut to fit the budget" in small
    with pytest.raises(MemoryInputError, match="budget"):
        vault.session_start("p", budget=10)


def test_markers_are_extracted_deterministically(vault: Vault) -> None:
    transcript = "\n".join([
        "Some talk.",
        "DECISION: Use Postgres for the queue because fewer services; rejected: Kafka (ops "
        "cost); SQS — lock-in",
        "  - W @Acme: Acme moved to Berlin",
        "O(c=0.8) @Acme: they will renew",
        "```",
        "TODO: this is code, not a marker",
        "```",
        "TODO: write the migration",
        "not a marker: W: in the middle",
    ])
    vault.record(entities=[{"name": "Acme", "type": "organization"}])
    out = vault.session_close(transcript, project="p")
    assert [d["title"] for d in out["decisions"]] == ["Use Postgres for the queue"]
    decision = parse_page((vault.root / "decisions/Use Postgres for the queue.md")
                          .read_text(encoding="utf-8"), "d.md")
    assert decision.frontmatter["rejected"] == ["Kafka — ops cost", "SQS — lock-in"]
    assert decision.frontmatter["because"] == "fewer services."
    # The decision cites the transcript line it came from.
    line = out["decisions"][0]["from"].split("#L")[1].split("-")[0]
    assert decision.timeline[0].source == f"[[{out['transcript'][:-3]}#L{line}]]"
    assert [(r["kind"], r["text"]) for r in out["retained"]] == [
        ("W", "Acme moved to Berlin"), ("O", "they will renew"),
        ("B", "TODO: write the migration")]
    assert [t["text"] for t in out["todos"]] == ["write the migration"]
    log = parse_page((vault.root / "memory/2026-03-05.md").read_text(encoding="utf-8"), "m.md")
    assert [(r.kind, r.entities, r.confidence) for r in log.retain][:2] == [
        ("W", ("Acme",), None), ("O", ("Acme",), 0.8)]
    # The transcript page itself holds no facts, sections or markers of its own.
    page = parse_page((vault.root / out["transcript"]).read_text(encoding="utf-8"), "t.md")
    assert page.facts == () and page.retain == ()


def test_parse_decision_and_extract_markers() -> None:
    assert parse_decision("Ship Friday") == {
        "name": "Ship Friday", "decided": "Ship Friday",
        "because": "Not stated in the session; see the transcript.", "rejected": []}
    assert extract_markers([(1, "> DECISION: x"), (2, "* REMEMBER: y"), (3, "S: z")]) == [
        (1, "DECISION", "x"), (2, "REMEMBER", "y"), (3, "S", "z")]


def test_bad_transcripts_write_nothing(vault: Vault) -> None:
    before = sorted(p.name for p in vault.root.rglob("*") if ".kenning" not in p.parts)
    with pytest.raises(MemoryInputError) as err:
        vault.session_close([{"role": "user"}, "oops", {"content": "a\x00b"}], project="../x")
    assert len(err.value.problems) == 4
    assert sorted(p.name for p in vault.root.rglob("*") if ".kenning" not in p.parts) == before


def test_a_remote_callers_transcript_adds_no_links(sample_vault: Vault) -> None:
    v = sample_vault
    v.index(embed=False)
    transcript = ("We should trust [[Kestrel Labs]] and [this](people/x.md).\n"
                  "REMEMBER: the pilot starts in May\n"
                  "W: see [[Horizon Ventures]] for the terms\n")
    out = v.session_close(transcript, project="remote", trusted=False)
    text = (v.root / out["transcript"]).read_text()
    assert "```text" in text and "[[Kestrel Labs]]" in text  # kept as text, fenced
    v.index(embed=False)
    page = v.store.one("SELECT id FROM pages WHERE path = ?", (out["transcript"],))
    assert page is not None
    assert v.store.scalar("SELECT count(*) FROM links WHERE origin_id = ? AND kind IN"
                          " ('wikilink', 'markdown')", page) == 0
    # The plain marker is kept; the one carrying a link is refused, as for remote retain calls.
    assert [r["text"] for r in out["retained"]] == ["the pilot starts in May"]
    assert len(out["errors"]) == 1 and "link" in out["errors"][0].lower()
