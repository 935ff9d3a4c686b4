"""Items in the index and ``Vault.items``: rows from real pages on disk, one item across the
pages that carry it, done by any copy, parties resolved like links, every filter, order,
citations, incremental re-indexing and bad input. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from items_vault import MEETING, MEETING_PATH, SARAH, TODAY, make, write

from kenning.api import BadQuery, Vault
from kenning.errors import PageNotFound

DECK = "Send Sarah the revised deck"


@pytest.fixture
def v(tmp_path: Path):
    vault = make(tmp_path)
    yield vault
    vault.close()


def by_text(items: list[dict]) -> dict[str, dict]:
    return {i["text"]: i for i in items}


def test_one_item_across_pages_with_both_pages_and_its_source_citation(v: Vault) -> None:
    found = [i for i in v.items(today=TODAY) if i["text"] == DECK]
    assert len(found) == 1
    deck = found[0]
    assert deck["pages"] == [MEETING_PATH, "people/Sarah Chen.md"]
    assert deck["id"] == "i-3fa2c19d"
    assert deck["who"] == "me" and deck["to"] == ["people/Sarah Chen.md"]
    assert deck["citation"] == "sources/email/2026-10-09-deck.md#L31-L32"
    assert deck["status"] == "open" and deck["due"] == "2026-10-15"


def test_checking_the_box_on_one_copy_makes_the_item_done_after_reindex(v: Vault) -> None:
    assert by_text(v.items(status="open", today=TODAY)).get(DECK)
    path = v.root / MEETING_PATH
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("- [ ] 2026-10-09 — Send Sarah", "- [x] 2026-10-09 — Send Sarah"),
                    encoding="utf-8")
    report = v.index(embed=False)
    assert report.updated == 1
    assert DECK not in by_text(v.items(status="open", today=TODAY))
    done = by_text(v.items(status="done", today=TODAY))[DECK]
    assert done["page"] == MEETING_PATH  # the copy that is done speaks for it
    # The person page's copy still has an open box; the item is done all the same.
    assert "- [ ] 2026-10-09 — Send Sarah" in (v.root / "people/Sarah Chen.md").read_text()
    assert by_text(v.items(to="Sarah Chen", status="done", today=TODAY))[DECK]


def test_parties_resolve_like_links_first_names_owner_names_and_person_pages(v: Vault) -> None:
    items = by_text(v.items(today=TODAY))
    # A hand-written action item names Priya by her first name: her page.
    priya = items["Priya: benchmark cache hit rate on a week of Copperline traffic."]
    assert priya["who"] == "people/Priya Raman.md"
    assert priya["date"] == "2026-10-07"  # the meeting's date
    assert priya["citation"] == f"{MEETING_PATH}#L9-L9"  # no source: its own line
    # No page is named Jonas: kept as the name.
    assert items["Jonas: write the deploy runbook"]["who"] == "Jonas"
    # The owner's name from the config is "me".
    report = items["Alex Morgan: send the pilot report to Peter"]
    assert report["who"] == "me" and report["to"] == ["people/Peter Lindqvist.md"]
    # On a person's page an ask without who is that person's.
    nda = items["Can you forward the signed NDA?"]
    assert nda["kind"] == "ask" and nda["who"] == "people/Sarah Chen.md" and nda["to"] == ["me"]


def test_a_new_person_page_resolves_a_first_name_on_the_next_run(v: Vault) -> None:
    assert by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]["who"] == "Jonas"
    write(v.root, "people/Jonas Weber.md", "---\ntype: person\n---\n# Jonas Weber\n")
    v.index(embed=False)
    assert by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]["who"] == \
        "people/Jonas Weber.md"
    assert [i["text"] for i in v.items(who="Jonas Weber", today=TODAY)] == [
        "Jonas: write the deploy runbook"]
    # Two Jonases: the first name no longer says which; kept as the name.
    write(v.root, "people/Jonas Berg.md", "---\ntype: person\n---\n# Jonas Berg\n")
    v.index(embed=False)
    assert by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]["who"] == "Jonas"


def test_a_first_name_that_finds_the_owners_own_page_is_me(v: Vault) -> None:
    """The owner's meeting notes name the owner by first name ("- [ ] Alex: …"); with the
    owner's page in the vault that is the owner, found by ``--who me``."""
    write(v.root, "people/Alex Morgan.md", "---\ntype: person\n---\n# Alex Morgan\n")
    write(v.root, MEETING_PATH, MEETING.replace(
        "## Decisions", "- [ ] Alex: post the role\n\n## Decisions"))
    v.index(embed=False)
    item = by_text(v.items(today=TODAY))["Alex: post the role"]
    assert item["who"] == "me"
    assert "Alex: post the role" in [i["text"] for i in v.items(who="me", today=TODAY)]
    # Jonas, who is not the owner, stays Jonas.
    assert by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]["who"] == "Jonas"


def test_decisions_carry_because_rejected_and_about(v: Vault) -> None:
    (decision,) = v.items(kind="decision", today=TODAY)
    assert decision["status"] == "decided"
    assert decision["who"] == "people/Peter Lindqvist.md"
    assert decision["because"] == "a new projector version means new keys"
    assert decision["rejected"] == ["going back to Redis", "a cache-wide flush on every deploy"]
    assert decision["about"] == ["projects/Caching.md"]
    assert decision["citation"] == "sources/meetings/2026-10-07-replay-cache-review.md#L30-L31"


def test_every_filter(v: Vault) -> None:
    def texts(**kw: object) -> set[str]:
        return {i["text"] for i in v.items(today=TODAY, **kw)}  # type: ignore[arg-type]

    everything = texts()
    assert len(everything) == 9
    assert texts(kind="ask") == {"Can you forward the signed NDA?"}
    assert texts(kind=["ask", "decision"]) == {
        "Can you forward the signed NDA?",
        "Keep the in-process cache and add the projection version to the key"}
    mine = texts(who="me")
    assert mine == {DECK, "Introduce Sarah to the Copperline team", "Share the cap table",
                    "Alex Morgan: send the pilot report to Peter"}
    assert texts(who="me", to="Sarah") == mine - {"Alex Morgan: send the pilot report to Peter"}
    assert texts(to="me") == {"Can you forward the signed NDA?"}
    assert texts(who="people/Priya Raman.md") == {
        "Priya: benchmark cache hit rate on a week of Copperline traffic.",
        "Ship the versioned cache key"}
    assert texts(to="Peter Lindqvist") == {"Ship the versioned cache key",
                                           "Alex Morgan: send the pilot report to Peter"}
    assert texts(status="done") == {"Share the cap table", "Ship the versioned cache key"}
    assert "Keep the in-process cache and add the projection version to the key" not in \
        texts(status="open")
    assert texts(due_before="2026-10-15") == {
        "Introduce Sarah to the Copperline team", "Ship the versioned cache key",
        "Alex Morgan: send the pilot report to Peter"}
    assert texts(since="2026-10-09") == {DECK, "Can you forward the signed NDA?"}
    assert texts(page="Priya Raman") == {"Ship the versioned cache key"}
    assert texts(page=MEETING_PATH) >= {DECK, "Jonas: write the deploy runbook"}
    assert len(v.items(limit=2, today=TODAY)) == 2


def test_overdue_depends_on_today_and_leads_the_order(v: Vault) -> None:
    assert [i["text"] for i in v.items(overdue=True, today=TODAY)] == [
        "Introduce Sarah to the Copperline team"]
    later = [i["text"] for i in v.items(overdue=True, today="2026-10-16")]
    assert later == ["Introduce Sarah to the Copperline team",  # due 09-30, longest overdue
                     "Alex Morgan: send the pilot report to Peter", DECK]
    order = [i["text"] for i in v.items(today=TODAY)]
    # Overdue, then open by due date, then the rest newest first.
    assert order[:4] == ["Introduce Sarah to the Copperline team",
                         "Alex Morgan: send the pilot report to Peter", DECK,
                         "Jonas: write the deploy runbook"]
    assert order[4] == "Can you forward the signed NDA?"  # 2026-10-10, the newest
    assert order[-1] == "Share the cap table"  # 2026-09-01, the oldest


@pytest.mark.parametrize("filters", [
    {}, {"kind": ["commitment", "ask"]}, {"who": "me"}, {"to": "Sarah"}, {"status": "done"},
    {"status": "open"}, {"overdue": True, "today": "2026-10-16"}, {"kind": "decision"},
    {"page": MEETING_PATH}, {"due_before": "2026-10-15"}, {"since": "2026-10-09"}],
    ids=lambda f: ",".join(f) or "all")
def test_brief_items_and_their_details_are_the_full_answers(v: Vault,
                                                            filters: dict[str, object]) -> None:
    """The web view's way (every item briefly, then details for those shown) and a limit
    give exactly what the full answer gives: the same items, order and fields."""
    kw: dict[str, object] = {"today": TODAY, **filters}
    full = v.items(**kw)  # type: ignore[arg-type]
    brief = v.items(brief=True, **kw)  # type: ignore[arg-type]
    assert full, filters
    assert [b["line"] for b in brief] == [i["line"] for i in full]
    for b, i in zip(brief, full, strict=True):
        assert {k: b[k] for k in b if k != "key"} == {k: i[k] for k in b if k != "key"}
    assert v.item_details(brief, today=str(kw["today"])) == full
    assert v.item_details(brief[1:3], today=str(kw["today"])) == full[1:3]
    assert v.items(limit=2, **kw) == full[:2]  # type: ignore[arg-type]


def test_removing_a_line_or_a_page_removes_its_copy_only(v: Vault) -> None:
    write(v.root, "people/Sarah Chen.md", SARAH.replace(
        "- [ ] 2026-10-09 — Send Sarah the revised deck", "- [ ] 2026-10-09 — Send Sarah").split(
        "\n- [ ] 2026-10-09 — Send Sarah")[0] + "\n")
    v.index(embed=False)
    deck = by_text(v.items(today=TODAY))[DECK]
    assert deck["pages"] == [MEETING_PATH]
    (v.root / MEETING_PATH).unlink()
    v.index(embed=False)
    assert DECK not in by_text(v.items(today=TODAY))
    assert v.items(kind="decision", today=TODAY) == []


def test_an_item_without_block_id_keeps_its_identity_when_its_line_moves(v: Vault) -> None:
    before = by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]
    write(v.root, MEETING_PATH, MEETING.replace("## Action items\n", "## Action items\n\n- [ ] "
                                                "Peter: book the review room\n"))
    v.index(embed=False)
    after = by_text(v.items(today=TODAY))["Jonas: write the deploy runbook"]
    assert after["line"] != before["line"] and after["who"] == before["who"]
    assert len([i for i in v.items(today=TODAY)
                if i["text"] == "Jonas: write the deploy runbook"]) == 1


def test_bad_input_is_one_line_naming_the_option(v: Vault) -> None:
    with pytest.raises(BadQuery, match=r"^--due-before: expected a date YYYY-MM-DD, got "
                                       r"'notadate'$"):
        v.items(due_before="notadate")
    with pytest.raises(BadQuery, match=r"^--since: "):
        v.items(since="last week")
    with pytest.raises(BadQuery, match=r"^--kind: 'promise' is not one of"):
        v.items(kind="promise")
    with pytest.raises(BadQuery, match=r"^--status: "):
        v.items(status="closed")
    with pytest.raises(PageNotFound, match=r"^--who: no page named 'Priya'.*close: "
                                           r"people/Priya Raman\.md"):
        v.items(who="Priya")
    with pytest.raises(PageNotFound, match=r"^--to: no page named 'Sarha'.*people/Sarah Chen"):
        v.items(to="Sarha")
