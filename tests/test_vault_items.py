"""Item lines (commitments, asks, decisions) in the vault format: parse, render, edit."""

from __future__ import annotations

import pytest

from kenning.vault.page import ItemLine, add_item, parse_page, render_item, replace_item

PAGE = """---
type: meeting
---
# Replay cache review

## Action items
- [ ] Priya: benchmark cache hit rate on a week of Copperline traffic.
- [x] 2026-10-08 — Ship the versioned key [who:: [[Priya Raman]]] [to:: [[Peter Lindqvist]]] \
[to:: me] [due:: 2026-10-11] [completion:: 2026-10-08] [closed:: [[sources/email/x#L66]]] \
[source:: [[sources/email/x#L58-L59]]] ^i-1a2b3c4d

## Decisions
- 2026-10-07 — Keep the in-process cache [because:: no second service] [rejected:: Redis] \
[rejected:: a flush on every deploy] [about:: [[Caching]]] \
[source:: [[sources/meetings/m#L30-L31]]] ^i-00aa11bb
- Ask Sarah about the NRR number [kind:: ask] [to:: [[Sarah Chen]]]
- [ ] odd [due:: Friday] [mood:: fine]

## Timeline
- 2026-10-07 — Transcript
"""


def test_item_lines_parse_with_their_section_kind_fields_and_status() -> None:
    page = parse_page(PAGE, "meetings/m.md")
    first, second, decision, ask, odd = page.items
    assert (first.kind, first.who, first.status, first.checked, first.date) == \
        ("commitment", "Priya", "open", False, None)
    assert second.who == "[[Priya Raman]]" and second.to == ("[[Peter Lindqvist]]", "me")
    assert (second.due, second.completion, second.status) == ("2026-10-11", "2026-10-08", "done")
    assert second.closed == "[[sources/email/x#L66]]" and second.block_id == "i-1a2b3c4d"
    assert second.source == "[[sources/email/x#L58-L59]]"
    assert second.text == "Ship the versioned key"
    assert decision.kind == "decision" and decision.status == "decided"
    assert decision.rejected == ("Redis", "a flush on every deploy")
    assert decision.because == "no second service" and decision.about == ("[[Caching]]",)
    assert ask.kind == "ask" and ask.to == ("[[Sarah Chen]]",) and ask.status == "open"
    # A bad date is reported with its line and field and stays in the text; others' fields too.
    assert odd.due is None and odd.text == "odd [due:: Friday] [mood:: fine]"
    assert [(p.line, p.code, p.field) for p in page.problems] == [(13, "item", "due")]
    # The timeline is still a timeline.
    assert [e.text for e in page.timeline] == ["Transcript"]


def test_rendering_reads_back_the_same_item() -> None:
    for item in parse_page(PAGE, "m.md").items:
        line = render_item(item)
        again = parse_page(f"# T\n\n## {item.section.capitalize()}\n{line}\n", "t.md").items[0]
        assert ItemLine(**{**again.__dict__, "line": item.line}) == item


def test_a_labelled_action_item_renders_without_repeating_its_owner() -> None:
    item = parse_page(PAGE, "m.md").items[0]
    assert render_item(item) == \
        "- [ ] Priya: benchmark cache hit rate on a week of Copperline traffic."


def test_add_item_creates_its_section_before_the_timeline_and_keeps_other_bytes() -> None:
    item = ItemLine(0, "commitments", "commitment", "Send the deck", False, "2026-10-09", "me",
                    ("[[Sarah Chen]]",), "2026-10-15", source="[[sources/email/y#L3]]",
                    block_id="i-99aa00bb")
    text = add_item(PAGE, item)
    head, _, tail = text.partition("## Commitments\n\n")
    assert head == PAGE.split("## Timeline")[0]
    assert tail.startswith("- [ ] 2026-10-09 — Send the deck [who:: me] [to:: [[Sarah Chen]]] "
                           "[due:: 2026-10-15] [source:: [[sources/email/y#L3]]] ^i-99aa00bb\n\n"
                           "## Timeline\n")
    # A second item goes under the first.
    more = add_item(text, ItemLine(0, "commitments", "commitment", "Call Owen", False))
    assert "^i-99aa00bb\n- [ ] Call Owen\n\n## Timeline" in more


def test_replace_item_rewrites_one_line_only() -> None:
    page = parse_page(PAGE, "m.md")
    item = page.items[1]
    done = ItemLine(**{**item.__dict__, "text": "Ship the versioned cache key (reworded)"})
    text = replace_item(PAGE, item.line, done)
    assert text.replace("Ship the versioned cache key (reworded)", "Ship the versioned key") \
        == PAGE
    with pytest.raises(ValueError, match="not an item line"):
        replace_item(PAGE, 1, done)


def test_unknown_kind_and_status_are_reported_not_guessed() -> None:
    page = parse_page("# T\n\n## Commitments\n- [ ] x [kind:: promise] [status:: maybe]\n", "t.md")
    (item,) = page.items
    assert item.kind == "commitment" and item.status == "open"
    assert {p.field for p in page.problems} == {"kind", "status"}


def test_add_fact_goes_before_the_item_sections() -> None:
    from kenning.vault.page import Fact, add_fact

    page = ("# Sarah Chen\n\nPartner.\n\n## Commitments\n- [ ] Send the deck\n\n"
            "## Timeline\n- 2026 — x\n")
    text = add_fact(page, Fact(0, None, None, "Prefers async updates"))
    assert text == ("# Sarah Chen\n\nPartner.\n\n## Facts\n\n- Prefers async updates\n\n"
                    "## Commitments\n- [ ] Send the deck\n\n## Timeline\n- 2026 — x\n")


def test_remove_item_removes_one_line() -> None:
    from kenning.vault.page import remove_item

    page = parse_page(PAGE, "m.md")
    text = remove_item(PAGE, page.items[1].line)
    assert "Ship the versioned key" not in text
    assert text.count("\n") == PAGE.count("\n") - 1 and "## Action items\n- [ ] Priya" in text
    with pytest.raises(ValueError, match="not an item line"):
        remove_item(PAGE, 2)


def test_a_persons_own_due_dates_count_as_written_in_obsidian() -> None:
    """Obsidian Tasks' 📅/✅ signifiers and "by 2026-06-15" in a person's own line give due and
    completion; a field wins over the text."""
    page = parse_page(
        "# M\n\n## Action items\n"
        "- [ ] Lena: pricing page copy by 2026-06-15\n"
        "- [x] Send the deck 📅 2026-10-15 ✅ 2026-10-14\n"
        "- [ ] Call Owen by 2026-13-40\n"
        "- [ ] Ship it by 2026-06-15 [due:: 2026-06-20]\n", "m.md")
    lena, deck, bad, field = page.items
    assert (lena.due, lena.text) == ("2026-06-15", "Lena: pricing page copy by 2026-06-15")
    assert (deck.due, deck.completion, deck.text, deck.status) == \
        ("2026-10-15", "2026-10-14", "Send the deck", "done")
    assert bad.due is None and field.due == "2026-06-20"
