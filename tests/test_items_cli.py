"""`kenning items` through the real CLI on a vault on disk: human lines, the JSON shape, every
option, `--overdue` against a fixed today, and bad input as one line. Runs on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from items_vault import MEETING_PATH, TODAY, make

from kenning.api import Vault
from kenning.cli import main


@pytest.fixture
def v(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KENNING_TODAY", TODAY)
    vault = make(tmp_path)
    yield vault
    vault.close()


def run(vault: Vault, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["-C", str(vault.root), "items", *args])
    assert result.exit_code == code, result.output
    return result.output


def test_human_lines_box_date_parties_text_due_and_citation(v: Vault) -> None:
    lines = run(v).splitlines()
    assert len(lines) == 9
    assert lines[0] == ("[ ] 2026-09-20 me → Sarah Chen — Introduce Sarah to the Copperline team "
                        "(due 2026-09-30, OVERDUE) people/Sarah Chen.md#L11-L11")
    assert ("[ ] 2026-10-09 me → Sarah Chen — Send Sarah the revised deck (due 2026-10-15) "
            "sources/email/2026-10-09-deck.md#L31-L32") in lines
    assert ("[ ] 2026-10-07 Priya Raman — Priya: benchmark cache hit rate on a week of "
            f"Copperline traffic. {MEETING_PATH}#L9-L9") in lines
    assert any(line.startswith("[x] 2026-10-08 Priya Raman → Peter Lindqvist — Ship the "
                               "versioned cache key") for line in lines)
    assert any("decided: Keep the in-process cache" in line
               and "(rejected: going back to Redis; a cache-wide flush on every deploy)" in line
               for line in lines)


def test_json_shape(v: Vault) -> None:
    items = json.loads(run(v, "--json"))
    assert isinstance(items, list) and len(items) == 9
    for item in items:
        assert {"kind", "text", "who", "to", "due", "status", "citation", "page",
                "pages"} <= item.keys()
        assert isinstance(item["to"], list) and item["page"] in item["pages"]
        assert "#L" in item["citation"]
    decision = next(i for i in items if i["kind"] == "decision")
    assert decision["rejected"] == ["going back to Redis", "a cache-wide flush on every deploy"]
    assert decision["because"] == "a new projector version means new keys"
    deck = next(i for i in items if i["text"] == "Send Sarah the revised deck")
    assert deck["who"] == "me" and deck["to"] == ["people/Sarah Chen.md"]
    assert deck["pages"] == [MEETING_PATH, "people/Sarah Chen.md"]
    jonas = next(i for i in items if i["text"].startswith("Jonas:"))
    assert jonas["who"] == "Jonas"  # a name no page has, as written


def test_every_option(v: Vault) -> None:
    def texts(*args: str) -> list[str]:
        return [i["text"] for i in json.loads(run(v, *args, "--json"))]

    assert texts("--kind", "ask") == ["Can you forward the signed NDA?"]
    assert set(texts("--kind", "commitment", "--kind", "decision")) == set(texts()) - {
        "Can you forward the signed NDA?"}
    assert set(texts("--who", "me", "--to", "Sarah")) == {
        "Introduce Sarah to the Copperline team", "Send Sarah the revised deck",
        "Share the cap table"}
    assert texts("--to", "me") == ["Can you forward the signed NDA?"]
    assert texts("--who", "people/Priya Raman.md", "--status", "done") == [
        "Ship the versioned cache key"]
    assert texts("--due-before", "2026-10-01") == ["Introduce Sarah to the Copperline team"]
    assert texts("--overdue") == ["Introduce Sarah to the Copperline team"]
    assert texts("--overdue", "--today", "2026-10-16") == [
        "Introduce Sarah to the Copperline team", "Alex Morgan: send the pilot report to Peter",
        "Send Sarah the revised deck"]
    assert set(texts("--since", "2026-10-09")) == {"Send Sarah the revised deck",
                                                   "Can you forward the signed NDA?"}
    assert texts("--page", "Priya Raman") == ["Ship the versioned cache key"]
    assert len(texts("--limit", "3")) == 3
    assert run(v, "--kind", "ask", "--who", "me") == "No items.\n"


def test_bad_input_is_one_line_naming_the_option(v: Vault) -> None:
    for args, code, expected in (
            (("--due-before", "notadate"), 2,
             "error: --due-before: expected a date YYYY-MM-DD, got 'notadate'"),
            (("--since", "2026-13-01"), 2,
             "error: --since: expected a date YYYY-MM-DD, got '2026-13-01'"),
            (("--kind", "promise"), 2,
             "error: --kind: 'promise' is not one of commitment, ask, decision"),
            (("--who", "Priya"), 1,
             "error: --who: no page named 'Priya' (tried path, file name, title, alias); "
             "close: people/Priya Raman.md"),
            (("--page", "nowhere at all"), 1,
             "error: --page: no page named 'nowhere at all' (tried path, file name, title, "
             "alias)")):
        result = CliRunner().invoke(main, ["-C", str(v.root), "items", *args])
        assert result.exit_code == code, result.output
        assert result.output.strip() == expected
