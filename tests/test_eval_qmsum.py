"""kenning eval qmsum: turn-to-line mapping, hand-computed hit and recall, the real val split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from kenning.evaluate import qmsum
from kenning.evaluate.budget import EvalError

VAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "meetings" / "qmsum" / "val"
if not VAL.is_dir():
    VAL = Path("/work/shared/eval/meetings/qmsum/val")


def _meeting(turns: list[tuple[str, str]], specific: list[tuple[str, list[list[str]]]],
             general: tuple[str, ...] = ()) -> dict:
    every = [["0", str(len(turns) - 1)]]
    return {"topic_list": [{"topic": "all of it", "relevant_text_span": every}],
            "general_query_list": [{"query": q, "answer": "-"} for q in general],
            "specific_query_list": [{"query": q, "answer": "-", "relevant_text_span": s}
                                    for q, s in specific],
            "meeting_transcripts": [{"speaker": a, "content": c} for a, c in turns]}


def _split(tmp_path: Path) -> Path:
    """Two meetings; words chosen so BM25 over lines ranks them in a known order."""
    folder = tmp_path / "split"
    folder.mkdir()
    alpha = _meeting(
        [("Ann", "hello all"),                      # turn 0
         ("Bob", "{disfmarker}"),                   # turn 1
         ("Ann", ""),                               # turn 2: no text, no line
         ("Bob", "the zebra budget is tight"),      # turn 3
         ("Ann", "we like zebra stripes a lot here today friends"),  # turn 4
         ("Bob", "lunch")],                         # turn 5
        [("zebra", [["2", "4"]]),                   # gold 3, 4 (2 has no line)
         ("quokka", [["0", "0"]])],                 # no line shares its term
        general=("Summarize the whole meeting.",))
    beta = _meeting(
        [("Cy", "zebra"), ("Di", "okapi okapi okapi")],
        [("okapi", [["1", "1"]])])
    (folder / "alpha.json").write_text(json.dumps(alpha), encoding="utf-8")
    (folder / "beta.json").write_text(json.dumps(beta), encoding="utf-8")
    return folder


def test_turn_lines_map_each_turn_to_its_line(tmp_path: Path) -> None:
    result = qmsum.run_qmsum(_split(tmp_path), modes=(), workdir=tmp_path / "work")
    root = tmp_path / "work" / "vault"
    sources = qmsum.meeting_sources(root)
    assert sorted(sources) == ["alpha.json", "beta.json"]
    text = (root / sources["alpha.json"]).read_text(encoding="utf-8")
    lines = text.split("\n")
    where = qmsum.turn_lines(text, json.loads(
        (tmp_path / "split" / "alpha.json").read_text())["meeting_transcripts"])
    assert sorted(where) == [0, 1, 3, 4, 5]  # turn 2 is empty: the connector wrote no line
    assert lines[where[0] - 1] == "- **Ann:** hello all"
    assert lines[where[3] - 1] == "- **Bob:** the zebra budget is tight"
    assert lines[where[5] - 1] == "- **Bob:** lunch"
    assert result["data"]["empty_gold_turns"] == 1
    # the kept vault holds both meetings: a run over fewer would score against extra meetings
    with pytest.raises(EvalError, match="holds meetings this run does not ask about"):
        qmsum.run_qmsum(tmp_path / "split", modes=(), limit_meetings=1,
                        workdir=tmp_path / "work")


def test_turn_lines_refuses_a_shifted_file() -> None:
    turns = [{"speaker": "A", "content": "one two"}, {"speaker": "B", "content": "three"}]
    text = "# M\n\n## Transcript\n\n- **A:** three\n\n- **B:** one two\n"
    with pytest.raises(EvalError, match="does not hold turn 0"):
        qmsum.turn_lines(text, turns)
    with pytest.raises(EvalError, match="1 turn lines for 2"):
        qmsum.turn_lines("## Transcript\n- **A:** one two\n", turns)


def test_hand_computed_hit_and_recall(tmp_path: Path) -> None:
    result = qmsum.run_qmsum(_split(tmp_path), modes=(), budgets=(4, 7, 20))
    base = result["scores"][qmsum.BASELINE]
    # "zebra": lines by BM25 — beta's "- **Cy:** zebra" (3 words, shortest) first, then
    # alpha turn 3 (7 words), then alpha turn 4 (12 words). Budget 4 takes Cy's line only
    # (hit 0); 7 takes Cy (3), skips turn 3 (7 > 4 left) and turn 4: hit 0; 20 takes Cy and
    # turn 3 (10 words), then turn 4 does not fit (12 > 10): 1 of 2 gold turns.
    # "quokka": nothing ranked: 0. "okapi": beta turn 1 (5 words): in at 7 and 20, not at 4.
    assert result["data"]["scored"] == 3
    assert base["hit"] == {4: 0.0, 7: pytest.approx(1 / 3), 20: pytest.approx(2 / 3)}
    assert base["recall"] == {4: 0.0, 7: pytest.approx(1 / 3), 20: pytest.approx((0.5 + 1) / 3)}
    rows = {r["query"]: r["scores"][qmsum.BASELINE] for r in result["queries"]}
    assert rows["zebra"]["recall"] == {4: 0.0, 7: 0.0, 20: 0.5}
    assert rows["zebra"]["words"] == {4: 3, 7: 3, 20: 10}
    general = result["general"][qmsum.BASELINE]
    assert general["queries"] == 1
    # "Summarize the whole meeting.": only alpha's turn 3 has a query word ("the", 7 words)
    assert general["meeting"] == {4: 0.0, 7: 1.0, 20: 1.0}
    assert general["topic_coverage"] == {4: 0.0, 7: 1.0, 20: 1.0}


def test_score_query_exact() -> None:
    results = qmsum.baseline_results([("a.md", 1), ("a.md", 2), ("b.md", 1)])
    cost = {("a.md", 1): 5, ("a.md", 2): 5, ("b.md", 1): 2}
    got = qmsum.score_query(results, {("a.md", 2), ("b.md", 1)}, (5, 9, 12),
                            lambda p, n: cost[(p, n)])
    assert got["hit"] == {5: 0, 9: 1, 12: 1}
    assert got["recall"] == {5: 0.0, 9: 0.5, 12: 1.0}  # at 9: a1 (5), a2 skipped, b1 (2)
    assert got["words"] == {5: 5, 9: 7, 12: 12}


def test_cli_lexical_json(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["eval", "qmsum", str(_split(tmp_path)), "-m", "lexical",
                                    "-g", "chunk", "-b", "20", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["settings"]["runs"] == ["lexical/chunk", qmsum.BASELINE]
    chunk = data["scores"]["lexical/chunk"]
    assert chunk["queries"] == 3
    assert chunk["hit"]["20"] >= 1 / 3  # "okapi" has one line in the whole vault
    assert data["latency_ms"]["lexical/chunk"]["queries"] == 4


def test_bad_split_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "m.json").write_text(json.dumps(_meeting([("A", "x")], [("q", [["0", "3"]])])))
    with pytest.raises(EvalError, match=r"m\.json: specific_query_list\[0\]: span \[0, 3\]"):
        qmsum.run_qmsum(folder, modes=())
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalError, match=r"no \*\.json meeting files"):
        qmsum.run_qmsum(tmp_path / "empty", modes=())


@pytest.mark.skipif(not VAL.is_dir(), reason="QMSum val split not present (../shared/eval)")
def test_real_val_two_meetings_lexical(tmp_path: Path) -> None:
    result = qmsum.run_qmsum(VAL, modes=("lexical",), limit_meetings=2,
                             workdir=tmp_path / "work")
    data = result["data"]
    assert len(data["meetings"]) == 2 and data["scored"] > 0
    for run in ("lexical/page", "lexical/chunk", qmsum.BASELINE):
        sc = result["scores"][run]
        assert sc["queries"] == data["scored"]
        hits = [sc["hit"][b] for b in qmsum.DEFAULT_BUDGETS]
        assert all(0.0 <= h <= 1.0 for h in hits)
        assert all(sc["recall"][b] <= sc["hit"][b] for b in qmsum.DEFAULT_BUDGETS)
    # every gold turn with text was mapped to a line holding that turn
    assert data["lines"] == sum(1 for m in data["meetings"] for t in json.loads(
        (VAL / f"{m}.json").read_text())["meeting_transcripts"] if " ".join(t["content"].split()))


def test_the_mcp_run_asks_with_the_tools_defaults(tmp_path: Path) -> None:
    result = qmsum.run_qmsum(_split(tmp_path), modes=("lexical",), groups=("mcp",),
                             budgets=(20, 2000))
    assert result["settings"]["runs"] == ["lexical/mcp", qmsum.BASELINE]
    mcp = result["scores"]["lexical/mcp"]
    assert mcp["queries"] == 3 and mcp["hit"][20] >= 1 / 3
    # A budgeted answer is a ceiling: the tool's 2,000 tokens never hold more than ~8,000 bytes.
    assert mcp["words"][2000] <= qmsum.MCP_BUDGET
    with pytest.raises(EvalError, match="page, chunk or mcp"):
        qmsum.run_qmsum(tmp_path / "split", modes=("lexical",), groups=("pages",))
