"""Retries write once, `record` is linear in its items, and a long write stalls no one.

Real vaults on disk, the real index, real `kenning serve` over HTTP; no mocks.
"""

from __future__ import annotations

import contextlib
import cProfile
import json
import os
import pstats
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from test_robustness import holds_open

from kenning.api import Vault
from kenning.memory.common import MAX_ITEMS, MemoryInputError
from kenning.vault.page import parse_page
from kenning.vault.writes import write_lock

KENNING = str(Path(sys.executable).parent / "kenning")


@pytest.fixture
def ada(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("KENNING_TODAY", "2026-03-04")
    vault.record([{"name": "Ada Park", "type": "person"}])
    return vault


def _facts(vault: Vault, title: str = "Ada Park") -> list[str]:
    path = next(vault.root.glob(f"*/{title}.md"))
    return [f.text for f in parse_page(path.read_text(encoding="utf-8"), str(path)).facts]


def _obs(n: int) -> list[dict[str, str]]:
    return [{"entity": "Ada Park", "text": f"Reviewed budget line {i} with the board"}
            for i in range(n)]


# -- a retry writes once ---------------------------------------------------------------------


def test_a_retried_record_without_a_key_adds_no_second_bullet(ada: Vault) -> None:
    first = ada.record(None, None, _obs(23))
    again = ada.record(None, None, _obs(23))
    assert len(_facts(ada)) == 23
    assert [f["id"] for f in again["facts"]] == [f["id"] for f in first["facts"]]
    assert all(f.get("existing") for f in again["facts"])
    assert again["updated"] == []
    # Twice in one call is once too; the same text on another day is a new observation.
    ada.record(None, None, [{"entity": "ada park", "text": "Runs the harbour board"}] * 2)
    assert _facts(ada).count("Runs the harbour board") == 1


def test_an_idempotency_key_replays_the_first_result(ada: Vault,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = ada.record(None, None, _obs(3), key="call-1")
    monkeypatch.setenv("KENNING_TODAY", "2026-03-05")  # the retry comes the next day
    again = ada.record(None, None, _obs(3), key="call-1")
    assert again["replayed"] is True and again["facts"] == first["facts"]
    assert len(_facts(ada)) == 3
    with pytest.raises(MemoryInputError, match="'call-1' was already used by an earlier "
                       "record call with other arguments"):
        ada.record(None, None, _obs(4), key="call-1")
    assert len(_facts(ada)) == 3
    # Another key is another call: on a new day the same text is a new observation.
    ada.record(None, None, _obs(3), key="call-2")
    assert len(_facts(ada)) == 6


def test_every_write_tool_is_safe_to_retry(ada: Vault) -> None:
    ada.record(None, None, [{"entity": "Ada Park", "text": "Likes tea"},
                            {"entity": "Ada Park", "text": "Runs the board"}])
    for _ in range(2):
        ada.retain("W", "The harbour opens at six", ["Ada Park"])
        note = ada.note("Call the harbour master about the lease", title="Harbour lease")
        decided = ada.record_decision("Use SQLite", "engineering", "SQLite for the index",
                                      "One file, no server")
        closed = ada.session_close("user: hello\nREMEMBER: the lease ends in May\n",
                                   project="harbour")
        revised = ada.revise("Ada Park", "Likes tea", "Likes green tea", key="rev-1")
        plain = ada.revise("Ada Park", "Runs the board", "Chairs the board")
    log = next(ada.root.glob("memory/*.md")).read_text(encoding="utf-8")
    assert log.count("The harbour opens at six") == 1
    assert log.count("the lease ends in May") == 1
    assert [p.name for p in ada.root.glob("notes/*.md")] == [Path(note["path"]).name]
    assert decided.get("existing") is True
    assert len(list(ada.root.glob("decisions/*.md"))) == 1
    assert closed.get("replayed") is True
    assert len(list(ada.root.glob("sessions/harbour/*-transcript.md"))) == 1
    assert revised.get("replayed") is True
    assert plain.get("existing") is True and plain["new"]["text"] == "Chairs the board"
    assert _facts(ada) == ["Likes tea", "Runs the board", "Likes green tea", "Chairs the board"]


def test_cli_record_takes_a_key(ada: Vault) -> None:
    env = {**os.environ, "KENNING_TODAY": "2026-03-04"}
    args = [KENNING, "-C", str(ada.root), "record", "--entity", "Ada Park", "--obs",
            "Chairs the board", "--key", "k"]
    first = subprocess.run(args, capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    env["KENNING_TODAY"] = "2026-03-09"
    again = subprocess.run([*args, "--json"], capture_output=True, text=True, env=env)
    assert json.loads(again.stdout)["replayed"] is True
    said = subprocess.run(args, capture_output=True, text=True, env=env).stdout
    assert said.startswith("Nothing written: a call with this key was already made"), said
    env["KENNING_TODAY"] = "2026-03-04"
    unkeyed = subprocess.run(args[:-2], capture_output=True, text=True, env=env).stdout
    assert unkeyed.startswith("Nothing new: already recorded today"), unkeyed
    assert "Chairs the board" in unkeyed and "(already there)" in unkeyed
    other = subprocess.run([*args[:-4], "--obs", "Other", "--key", "k"], capture_output=True,
                           text=True, env=env)
    assert other.returncode != 0 and "'k' was already used" in other.stderr
    assert _facts(ada) == ["Chairs the board"]


# -- bounded, linear work --------------------------------------------------------------------


def test_observations_inside_entities_count_toward_the_item_limit(ada: Vault) -> None:
    with pytest.raises(MemoryInputError, match=f"at most {MAX_ITEMS}"):
        ada.record([{"name": "Ben Ode", "type": "person",
                     "observations": [f"fact {i}" for i in range(MAX_ITEMS + 1)]}])
    assert not list(ada.root.glob("people/Ben Ode.md"))


def _markdown_blocks(vault: Vault, name: str, n: int) -> int:
    """How many Markdown list blocks one record of ``n`` observations on a new page parses (a
    count of work, not a time): quadratic when each observation re-parses the growing page."""
    profile = cProfile.Profile()
    profile.enable()
    vault.record([{"name": name, "type": "person",
                   "observations": [f"line {i} of the budget" for i in range(n)]}])
    profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return sum(calls for (file, _, fn), (_primitive, calls, *_rest) in stats.items()
               if fn == "list_block" and "markdown_it" in file)


def test_record_work_grows_linearly_with_its_observations(ada: Vault) -> None:
    small, large = _markdown_blocks(ada, "Cy Dee", 50), _markdown_blocks(ada, "Di Eck", 400)
    assert large < 16 * small, (small, large)  # 8× the items: linear ≈ 8×, quadratic ≈ 64×


# -- one client cannot stall the others ------------------------------------------------------


def test_a_write_that_waits_does_not_hold_up_another_clients_read(ada: Vault) -> None:
    from test_mcp import http_client, http_server

    ada.index(embed=False)
    token = "t" * 32
    lock = ada.root / ".kenning" / "write.lock"
    with http_server(ada.root, "--profile", "record",
                     env={"KENNING_MCP_TOKEN": token}) as (url, proc):
        async def run() -> tuple[bool, bool]:
            state = {"write_done": False}

            async def writer() -> None:
                async with http_client(url, token) as client:
                    await client.call_tool("record", {"observations": _obs(2)})
                state["write_done"] = True

            held = contextlib.ExitStack()
            held.enter_context(write_lock(ada.root))  # another writer: the server's waits
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(writer)
                    while not holds_open(proc.pid, lock):
                        await anyio.sleep(0.01)
                    async with http_client(url, token) as client:
                        result = await client.call_tool("search", {"query": "Ada"})
                    read_while_writing = not state["write_done"]
                    held.close()  # now the write may go on
                    assert not result.is_error, result.content[0].text
            finally:
                held.close()
            return read_while_writing, state["write_done"]

        read_while_writing, write_done = anyio.run(run)
    assert read_while_writing, "the read waited for the write to finish"
    assert write_done
    assert len(_facts(ada)) == 2
