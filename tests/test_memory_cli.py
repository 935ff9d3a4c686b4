"""The memory commands through the real CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main


@pytest.fixture(autouse=True)
def _day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")


def run(vault: Vault, *args: str, input: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["-C", str(vault.root), *args], input=input)
    assert result.exit_code == code, result.output
    return result.output


def test_cli_record_decide_revise_facts_reflect_sessions(vault: Vault) -> None:
    batch = {"entities": [{"name": "Sarah Chen", "type": "person",
                           "observations": [{"text": "Lives in Berlin", "valid_from": "2025"}]},
                          {"name": "Horizon Ventures", "type": "org"}],
             "relations": [{"from": "Sarah Chen", "rel": "works_for", "to": "Horizon Ventures"}]}
    out = json.loads(run(vault, "record", "--batch", "-", "--json", input=json.dumps(batch)))
    assert out["created"] == ["people/Sarah Chen.md", "organizations/Horizon Ventures.md"]
    assert "Updated people/Sarah Chen.md" in run(vault, "record", "--entity", "Sarah Chen",
                                                 "--obs", "Likes tea")
    out = json.loads(run(vault, "decide", "Cache in process", "--domain", "eng", "--decided",
                         "Use an LRU", "--because", "Redis was stale", "--rejected",
                         "Memcached: same cost", "--rejected", "Varnish", "--json"))
    assert [(r["option"], r["why"]) for r in out["citations"]["rejected"]] == [
        ("Memcached", "same cost"), ("Varnish", None)]
    text = run(vault, "revise", "Sarah Chen", "Lives in Berlin", "Lives in Munich",
               "--valid-from", "2026-03-01")
    assert "Superseded f1" in text and "by f4: Lives in Munich" in text
    facts = json.loads(run(vault, "facts", "Sarah Chen", "--as-of", "2025-06-01", "--json"))
    assert [f["text"] for f in facts["facts"]] == ["Lives in Berlin", "", "Likes tea"]
    assert "[superseded]" in run(vault, "facts", "Sarah Chen", "--history")
    run(vault, "invalidate", "Sarah Chen", "tea", "--reason", "it was coffee")
    assert "Retained in memory/2026-03-05.md#L" in run(vault, "retain", "W", "Sarah is in Rome",
                                                       "--entity", "Sarah Chen")
    out = json.loads(run(vault, "reflect", "--json"))
    assert out["folded"][0]["to"] == ["people/Sarah Chen.md"]
    assert "Would fold 0" in run(vault, "reflect", "--dry-run")
    closed = json.loads(run(vault, "session", "close", "--project", "k", "--json",
                            input=json.dumps([{"role": "user", "content": "TODO: call Sarah"}])))
    assert closed["todos"][0]["text"] == "call Sarah"
    assert "call Sarah" in run(vault, "session", "start", "--project", "k", "--budget", "400")
    out = json.loads(run(vault, "note", "A quick thought", "--json"))
    assert json.loads(run(vault, "delete", out["path"], "--json"))["deleted"] == out["path"]


def test_cli_bad_input_is_one_clear_line_and_exit_2(vault: Vault) -> None:
    result = CliRunner().invoke(main, ["-C", str(vault.root), "record", "--entity", "../x",
                                       "--type", "robot"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: 2 problems, nothing written")
    assert "unknown entity type 'robot'; allowed:" in lines[0]
    result = CliRunner().invoke(main, ["-C", str(vault.root), "record", "--batch", "-"],
                                input="{not json")
    assert result.exit_code == 2 and "-:1: invalid JSON" in result.output
    assert not any((vault.root / "people").iterdir())
