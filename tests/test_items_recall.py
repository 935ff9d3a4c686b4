"""Items in recall, session_start and the MCP answers: "what did I promise Sarah?" leads with
the owner's promises to her, cited; plain recall shows open items within the budget;
session_start lists overdue and due-soon items; MCP `recall` and `page` over a real client
carry them. Runs on both backends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from items_vault import MEETING_PATH, TODAY, make, write

from kenning import answers
from kenning.api import Vault
from kenning.cli import main

KENNING = str(Path(sys.executable).parent / "kenning")


@pytest.fixture
def v(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KENNING_TODAY", TODAY)
    vault = make(tmp_path)
    yield vault
    vault.close()


def test_what_did_i_promise_sarah_leads_with_my_promises_to_her(v: Vault) -> None:
    answer = v.recall("what did I promise Sarah?")
    assert answer.path == "people/Sarah Chen.md"
    out = answer.to_dict()
    assert list(out)[:3] == ["path", "title", "type"] and list(out)[3] in ("summary", "items")
    keys = list(out)
    assert keys.index("items") < keys.index("neighbours")
    items = out["items"]
    assert [i["text"] for i in items[:3]] == [
        "Introduce Sarah to the Copperline team", "Send Sarah the revised deck",
        "Share the cap table"]
    assert all(i["who"] == "me" and i["to"] == ["people/Sarah Chen.md"] for i in items[:3])
    assert items[0]["overdue"] is True and items[0]["due"] == "2026-09-30"
    assert items[1]["citation"] == "sources/email/2026-10-09-deck.md#L31-L32"
    assert items[1]["pages"] == [MEETING_PATH, "people/Sarah Chen.md"]
    assert items[2]["status"] == "done"  # "and is it done?": kept, after the open ones
    assert items[3]["text"] == "Can you forward the signed NDA?"  # hers, after mine


def test_plain_recall_shows_open_items_only_after_the_facts_within_the_budget(v: Vault) -> None:
    out = v.recall("Sarah").to_dict()
    texts = [i["text"] for i in out["items"]]
    assert "Share the cap table" not in texts  # done: not in a plain recall
    assert texts[0] == "Introduce Sarah to the Copperline team"
    assert "Can you forward the signed NDA?" in texts
    for budget in (60, 120, 250):
        small = v.recall("what did I promise Sarah?", budget=budget)
        assert answers.tokens(small.to_dict()) <= budget
    cut = v.recall("what did I promise Sarah?", budget=120).to_dict()
    assert cut.get("truncated") and cut["items"][0]["text"] == \
        "Introduce Sarah to the Copperline team"


def test_questions_about_decisions_and_waiting(v: Vault) -> None:
    out = v.recall("what did we decide about Peter Lindqvist?").to_dict()
    assert out["path"] == "people/Peter Lindqvist.md"
    assert out["items"][0]["kind"] == "decision"
    assert out["items"][0]["rejected"] == ["going back to Redis",
                                           "a cache-wide flush on every deploy"]
    waiting = v.recall("what is Peter waiting on?").to_dict()
    assert waiting["path"] == "people/Peter Lindqvist.md"
    assert [i["text"] for i in waiting["items"]] == [
        "Alex Morgan: send the pilot report to Peter"]  # open; the shipped key is done


def test_recall_cli_prints_the_items_block(v: Vault) -> None:
    result = CliRunner().invoke(main, ["-C", str(v.root), "recall", "what did I promise Sarah?"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("Items")
    assert lines[at + 1].startswith("  • [ ] 2026-09-20 me → Sarah Chen — Introduce Sarah")
    assert lines[at + 1].endswith("people/Sarah Chen.md#L11-L11")
    as_json = json.loads(CliRunner().invoke(
        main, ["-C", str(v.root), "recall", "what did I promise Sarah?", "--json"]).output)
    assert as_json["items"][0]["text"] == "Introduce Sarah to the Copperline team"


def test_session_start_lists_overdue_and_due_soon_items(v: Vault) -> None:
    write(v.root, "projects/Caching.md", "---\ntype: project\n---\n# Caching\n\n"
          "## Action items\n- [ ] Peter: evaluate the eviction policy [due:: 2026-11-30]\n")
    write(v.root, "people/Peter Lindqvist.md", "---\ntype: person\n---\n# Peter Lindqvist\n\n"
          "## Commitments\n- [ ] 2026-10-01 — Send the load test numbers [to:: me] "
          "[due:: 2026-10-05]\n- [ ] 2026-10-01 — Send the cost model [to:: me] "
          "[due:: 2026-10-30]\n")
    v.index(embed=False)
    text = v.session_start(budget=800)["text"]
    block = text[text.index("## Open items (overdue, due soon)"):]
    lines = block.splitlines()[1:]
    assert lines[0].startswith("- [ ] 2026-09-20 me → Sarah Chen — Introduce Sarah")
    assert "OVERDUE" in lines[0]
    assert any("send the pilot report" in line and "(due 2026-10-14)" in line for line in lines)
    assert any(line.startswith("- [ ] 2026-10-10 Sarah Chen → me — ask: Can you forward")
               for line in lines)  # waiting on the owner
    # What the owner waits on: Peter's promise, overdue; not his promise due later.
    assert any("Peter Lindqvist → me — Send the load test numbers" in line
               and "OVERDUE" in line for line in lines)
    assert not any("cost model" in line for line in lines)
    assert not any("Jonas" in line for line in lines)  # not the owner's
    assert not any("eviction" in line for line in lines)  # another project's, not due soon
    project = v.session_start("Caching", budget=800)["text"]
    assert "Peter: evaluate the eviction policy" in project
    assert answers.tokens(v.session_start(budget=200)) <= 200


def _mcp(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_TODAY": TODAY}

    async def run() -> list[Any]:
        async with Client(StdioServerParameters(
                command=KENNING, args=["-C", str(root), "serve", "--profile", "recall"],
                env=env)) as client:
            out = []
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content[0].text
                out.append(json.loads(result.content[0].text))
            return out

    return anyio.run(run)


def test_mcp_recall_and_page_carry_items(v: Vault) -> None:
    v.close()
    recall, page, meeting = _mcp(v.root, [
        ("recall", {"entity": "what did I promise Sarah?", "budget": 600}),
        ("page", {"ref": "Sarah Chen"}),
        ("page", {"ref": MEETING_PATH})])
    assert recall["items"][0]["text"] == "Introduce Sarah to the Copperline team"
    assert recall["items"][0]["citation"] == "people/Sarah Chen.md#L11-L11"
    assert {i["text"]: i["status"] for i in page["items"]} == {
        "Send Sarah the revised deck": "open", "Introduce Sarah to the Copperline team": "open",
        "Share the cap table": "done", "Can you forward the signed NDA?": "open"}
    assert all("#L" in i["citation"] for i in page["items"])
    decision = next(i for i in meeting["items"] if i["kind"] == "decision")
    assert decision["status"] == "decided" and decision["because"]
    # A box checked by hand shows after the next index, over MCP too.
    path = v.root / "people/Sarah Chen.md"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "- [ ] 2026-09-20 — Introduce", "- [x] 2026-09-20 — Introduce"), encoding="utf-8")
    CliRunner().invoke(main, ["-C", str(v.root), "index"])
    (page,) = _mcp(v.root, [("page", {"ref": "Sarah Chen"})])
    assert {i["text"]: i["status"] for i in page["items"]}[
        "Introduce Sarah to the Copperline team"] == "done"


def test_a_page_named_with_an_item_word_is_that_page(v: Vault) -> None:
    write(v.root, "notes/Decision log.md", "# Decision log\n\nWhere we keep decisions.\n")
    write(v.root, "notes/Log.md", "# Log\n\nA plain log.\n")
    v.index(embed=False)
    assert v.recall("Decision log").path == "notes/Decision log.md"
    assert v.recall("what did we decide about Caching?").path == "projects/Caching.md"
    out = v.recall("what did we decide about Caching?").to_dict()
    assert out["items"][0]["text"].startswith("Keep the in-process cache")  # [about:: [[Caching]]]


def test_item_words_are_whole_words_and_a_question_without_a_name_says_what_to_run(
        v: Vault) -> None:
    from kenning.errors import PageNotFound
    from kenning.recall.items import intent

    assert intent("who is Sarah's owner?")[0] is False  # "owner" is not "owe"
    assert intent("the committee")[0] is False
    assert intent("what do I owe Sarah Owens?")[1] == "Sarah Owens"
    with pytest.raises(PageNotFound, match=r"names no page to recall; .*kenning items --who me"):
        v.recall("what am I still waiting on?")


def test_the_name_is_found_among_other_words(v: Vault) -> None:
    assert v.recall("what is Priya going to deliver?").path == "people/Priya Raman.md"
    out = v.recall("anything Peter Lindqvist still expects from me, open items").to_dict()
    assert out["path"] == "people/Peter Lindqvist.md"
    assert out["items"][0]["text"] == "Alex Morgan: send the pilot report to Peter"
