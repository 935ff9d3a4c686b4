"""Long documents recalled as well as short ones: a 1,000-turn meeting, a page with many hits,
a transcript with no speaker labels. Real vaults on disk, synced with the meetings connector."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.recall.search import estimate_tokens

FILLER = ("budget roadmap design review launch customer pricing hiring metrics latency storage "
          "backup onboarding release schedule vendor").split()
EVIDENCE = "The osprey firmware ships on the ninth of June, after the heron audit."


def _filler(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(n)) + "."


def _sync(root: Path, folder: Path) -> dict:
    done = CliRunner().invoke(main, ["-C", str(root), "sync", "meetings", str(folder), "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _cost(results: list) -> int:
    return sum(estimate_tokens(h.snippet) + estimate_tokens(r.path) + 4
               for r in results for h in r.hits)


def _lines(vault: Vault, path: str) -> list[str]:
    return (vault.root / path).read_text(encoding="utf-8").split("\n")


def test_evidence_deep_in_a_1000_turn_meeting_comes_back_within_a_budget(
        vault: Vault, tmp_path: Path) -> None:
    rng = random.Random(13)
    folder = tmp_path / "in"
    folder.mkdir()
    turns = [f"{['Ana', 'Ben', 'Caro'][i % 3]}: {_filler(rng)}" for i in range(1000)]
    turns[812] = f"Ben: {EVIDENCE}"
    (folder / "2026-03-02 planning.txt").write_text("\n\n".join(turns) + "\n", encoding="utf-8")
    for i in range(5):  # short notes that share the filler words, not the evidence
        (vault.root / "notes").mkdir(exist_ok=True)
        (vault.root / "notes" / f"n{i}.md").write_text(f"# n{i}\n\n{_filler(rng)}\n")
    _sync(vault.root, folder)
    vault.index()
    for budget in (120, 500, 2000):
        results = vault.search("when does the osprey firmware ship", mode="lexical",
                               budget=budget)
        assert results and _cost(results) <= budget
        top = results[0]
        assert top.path.startswith("sources/meetings/")
        lines = _lines(vault, top.path)
        hit = top.hits[0]
        cited = lines[hit.start_line - 1:hit.end_line]
        assert any(EVIDENCE in line for line in cited)  # the evidence, at turn 813 of 1,000
        assert " ".join(" ".join(cited).split()) == hit.snippet  # its text, not a 240-char clip
        if budget >= 500:  # room left: the turns around the evidence come with it
            assert hit.end_line - hit.start_line >= 4


def test_a_page_with_many_hits_gets_more_of_the_budget(vault: Vault, tmp_path: Path) -> None:
    rng = random.Random(5)
    folder = tmp_path / "in"
    folder.mkdir()
    turns = [f"{['Ana', 'Ben'][i % 2]}: {_filler(rng)}" for i in range(400)]
    deep = [37, 121, 188, 250, 301, 377]
    for i in deep:  # the kestrel contract is discussed all through the meeting
        turns[i] = f"Ana: the kestrel contract renewal {_filler(rng, 6)}"
    (folder / "2026-04-01 contracts.txt").write_text("\n\n".join(turns) + "\n", encoding="utf-8")
    for i in range(6):
        (vault.root / "notes").mkdir(exist_ok=True)
        (vault.root / "notes" / f"k{i}.md").write_text(
            f"# k{i}\n\n{_filler(rng)} kestrel contract mentioned once.\n")
    _sync(vault.root, folder)
    vault.index()
    query = "kestrel contract renewal"
    plain = vault.search(query, mode="lexical")
    meeting = next(r for r in plain if r.path.startswith("sources/meetings/"))
    assert len(meeting.hits) == 2  # without a budget a page shows its two best hits
    budgeted = vault.search(query, mode="lexical", budget=2500)
    assert len({r.path for r in budgeted}) == len(budgeted)  # each page once
    meeting = next(r for r in budgeted if r.path.startswith("sources/meetings/"))
    lines = _lines(vault, meeting.path)
    found = {n for h in meeting.hits for n in range(h.start_line, h.end_line + 1)
             if "kestrel contract renewal" in lines[n - 1]}
    assert len(found) == len(deep)  # every turn that holds the evidence, not two of them
    assert {r.path for r in budgeted} >= {r.path for r in plain if r.path.startswith("notes/")}


def test_a_1000_turn_transcript_without_speaker_labels(vault: Vault, tmp_path: Path) -> None:
    rng = random.Random(29)
    folder = tmp_path / "in"
    folder.mkdir()
    lines = [_filler(rng, 12) for _ in range(1000)]
    lines[733] = EVIDENCE
    (folder / "standup.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = _sync(vault.root, folder)
    warnings = " ".join(report.get("warnings", []))
    assert "standup.txt" in warnings and "no speaker names" in warnings
    (source,) = (vault.root / "sources" / "meetings").glob("*.md")
    text = source.read_text(encoding="utf-8")
    assert "turns: 1000" in text and "turn cut" not in text  # one turn a line, none cut
    assert EVIDENCE in text
    vault.index()
    done = CliRunner().invoke(main, ["-C", str(vault.root), "search", "-m", "lexical",
                                     "osprey firmware heron", "--budget", "300", "--json"])
    assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    results = json.loads(done.stdout)["results"]
    hit = results[0]["hits"][0]
    assert hit["citation"].split("#")[0] == source.relative_to(vault.root).as_posix()
    assert EVIDENCE in hit["snippet"]
