"""`kenning eval locomo`: the chat-source writer, evidence parsing, budget packing, MRR, the run.

The unit tests write their own tiny LoCoMo-format file; only the last test reads the real data
(CC BY-NC, never in this repository), and only when it is present next to the checkout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from kenning.evaluate import locomo as L
from kenning.evaluate.locomo import (
    EvalError,
    check_modes,
    format_report,
    pack_lines,
    parse_evidence,
    parse_session_date,
    reciprocal_rank,
    run_locomo,
    score_results,
    to_json,
    write_conversation,
)
from kenning.vault.page import parse_page

REAL = Path(os.environ.get("KENNING_LOCOMO") or
            Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo" / "locomo10.json")


def _turn(dia_id: str, speaker: str, text: str, **extra: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


CONV_A = {
    "sample_id": "conv-a",
    "conversation": {
        "speaker_a": "Alice",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Alice", "Hi Bob, how was your week?"),
            _turn("D1:2", "Bob", "Great, I finally repaired the old zeppelin model in my garage."),
            _turn("D1:3", "Alice", "That sounds fun! Look at this.",
                  img_url="http://example.invalid/k.jpg", blip_caption="a photo of a red kite",
                  query="red kite"),
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            _turn("D2:1", "Bob", "I adopted a tortoise\nnamed Quill last weekend."),
            _turn("D2:2", "Alice", "Lovely! My sister flew to Lisbon in spring."),
        ],
        "session_3_date_time": "7:18 pm on 2 July, 2023",
        "session_3": [
            _turn("D3:1", "Alice", "I started learning the cello."),
            _turn("D3:2", "Bob", "Nice, music is good for the soul."),
        ],
        "session_4_date_time": "9:00 am on 3 July, 2023",  # a stamp without a session, as in LoCoMo
    },
    "qa": [
        {"question": "Which zeppelin model is in the garage?", "answer": "an old one",
         "evidence": ["D1:2"], "category": 4},
        {"question": "Where is the tortoise Quill, and who went to Lisbon?", "answer": "x",
         "evidence": ["D2:1; D2:2"], "category": 1},
        {"question": "What did Alice adopt?", "adversarial_answer": "a tortoise",
         "evidence": ["D2:1"], "category": 5},
        {"question": "When was the zeppelin model repaired?", "answer": "May 2023",
         "evidence": ["D1:2", "D9:9"], "category": 2},
        {"question": "Would Bob like music?", "answer": "yes", "evidence": [], "category": 3},
        {"question": "Which instrument: the cello?", "answer": "cello",
         "evidence": ["D3:01"], "category": 4},
    ],
}

CONV_B = {
    "sample_id": "conv-b",
    "conversation": {
        "speaker_a": "Carol",
        "speaker_b": "Dan",
        "session_1_date_time": "8:00 pm on 1 January, 2024",
        "session_1": [
            _turn("D1:1", "Carol", "I bought a sourdough starter from the bakery."),
            _turn("D1:2", "Dan", "Bread is the best."),
        ],
        "session_2_date_time": "8:00 pm on 9 January, 2024",
        "session_2": [
            _turn("D2:1", "Dan", "My marathon training starts on Monday."),
            _turn("D2:2", "Carol", "Good luck with the marathon!"),
        ],
    },
    "qa": [
        {"question": "What did Carol buy from the bakery?", "answer": "a sourdough starter",
         "evidence": ["D1:1"], "category": 4},
        {"question": "When does the marathon training start?", "answer": "Monday",
         "evidence": ["D2:1"], "category": 2},
    ],
}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-tiny.json"
    path.write_text(json.dumps([CONV_A, CONV_B]), encoding="utf-8")
    return path


# -- the chat-source writer ------------------------------------------------------------------------


def test_session_date_is_parsed_from_the_stamp():
    assert parse_session_date("1:56 pm on 8 May, 2023") == "2023-05-08"
    assert parse_session_date("10:04 am on 19 June, 2023") == "2023-06-19"
    assert parse_session_date("on 31 Sept, 2023") is None  # no such day
    assert parse_session_date("sometime") is None


def test_sessions_are_written_one_line_per_turn(tmp_path: Path):
    turns = write_conversation(CONV_A, tmp_path)
    files = sorted(p.name for p in (tmp_path / "sources" / "chats").iterdir())
    assert files == [f"locomo-conv-a-session-{n}.md" for n in (1, 2, 3)]
    assert set(turns) == {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D3:1", "D3:2"}

    rel = "sources/chats/locomo-conv-a-session-1.md"
    text = (tmp_path / rel).read_text(encoding="utf-8")
    page = parse_page(text, rel)
    assert page.frontmatter == {
        "type": "source", "kind": "chat", "source": "locomo",
        "title": "Alice and Bob — session 1 (2023-05-08)", "conversation": "conv-a",
        "session": 1, "date": "2023-05-08", "participants": ["Alice", "Bob"]}
    assert page.title == "Alice and Bob — session 1 (2023-05-08)"
    assert not page.problems
    lines = text.split("\n")
    assert lines[10] == "# Alice and Bob — session 1 (2023-05-08)"
    # The mapping points at the line that carries the turn, 1-based, frontmatter included.
    assert turns["D1:1"] == (rel, 13)
    assert lines[turns["D1:2"][1] - 1] == (
        "- **Bob** (D1:2): Great, I finally repaired the old zeppelin model in my garage.")
    assert lines[turns["D1:3"][1] - 1].endswith(
        "(D1:3): That sounds fun! Look at this. [image: a photo of a red kite]")
    assert "red kite\n" not in text.replace("[image: a photo of a red kite]", "")  # no query
    for dia_id, (path, line) in turns.items():
        body = (tmp_path / path).read_text(encoding="utf-8").split("\n")
        assert f"({dia_id}): " in body[line - 1]
    # A newline inside a turn is folded: still one line per turn.
    s2 = (tmp_path / "sources/chats/locomo-conv-a-session-2.md").read_text(encoding="utf-8")
    assert "- **Bob** (D2:1): I adopted a tortoise named Quill last weekend.\n" in s2
    assert [line for line in s2.split("\n") if line.startswith("- ")] == [
        "- **Bob** (D2:1): I adopted a tortoise named Quill last weekend.",
        "- **Alice** (D2:2): Lovely! My sister flew to Lisbon in spring."]


def test_rewriting_keeps_unchanged_files_and_drops_stale_sessions(tmp_path: Path):
    write_conversation(CONV_A, tmp_path)
    chats = tmp_path / "sources" / "chats"
    first = (chats / "locomo-conv-a-session-1.md").stat().st_mtime_ns
    shorter = json.loads(json.dumps(CONV_A))
    del shorter["conversation"]["session_3"]
    write_conversation(shorter, tmp_path)
    assert (chats / "locomo-conv-a-session-1.md").stat().st_mtime_ns == first
    assert not (chats / "locomo-conv-a-session-3.md").exists()


# -- evidence -------------------------------------------------------------------------------------


def test_evidence_ids_are_read_normalised_and_deduplicated():
    ev = parse_evidence(["D1:3", "D8:6; D9:17", "D30:05", "D:11:26", "D", "D1:3",
                         "D22:1 D22:2"])
    assert ev.ids == ("D1:3", "D8:6", "D9:17", "D30:5", "D11:26", "D22:1", "D22:2")
    assert ev.malformed == (("D8:6; D9:17", ("D8:6", "D9:17")), ("D30:05", ("D30:5",)),
                            ("D:11:26", ("D11:26",)), ("D", ()),
                            ("D22:1 D22:2", ("D22:1", "D22:2")))
    assert parse_evidence([]).ids == ()


# -- packing and scoring on a hand-made ranked list -----------------------------------------------


def _result(path: str, *ranges: tuple[int, int]) -> SimpleNamespace:
    return SimpleNamespace(path=path, hits=[SimpleNamespace(start_line=a, end_line=b)
                                            for a, b in ranges])


WORDS = {("a.md", 1): 10, ("a.md", 2): 40, ("a.md", 3): 5, ("a.md", 4): 20,
         ("b.md", 1): 30, ("b.md", 2): 8, ("c.md", 7): 12}


def _words(path: str, line: int) -> int:
    return WORDS[(path, line)]


RANKED = [
    _result("a.md", (1, 2), (2, 3)),  # line 2 cited twice: taken (and paid) once
    _result("b.md", (1, 2)),
    _result("a.md", (4, 4)),  # a page may come back; its lines still count once
    _result("c.md", (7, 7)),
]


def test_packing_takes_cited_lines_in_rank_order_within_the_budget():
    # Everything fits: 10+40+5 + 30+8 + 20 + 12 = 125 words.
    assert pack_lines(RANKED, 1000, _words) == [
        ("a.md", 1), ("a.md", 2), ("a.md", 3), ("b.md", 1), ("b.md", 2), ("a.md", 4),
        ("c.md", 7)]
    # 60 words: a1 a2 a3 (55); b1 (30) overflows and is not taken; b2 (8) would overflow too;
    # a4 (20) overflows; c7 (12) overflows: 55 words taken.
    assert pack_lines(RANKED, 60, _words) == [("a.md", 1), ("a.md", 2), ("a.md", 3)]
    # 70 words: after 55, b1 (30) does not fit, b2 (8) does (63), a4 (20) not, c7 (12) not.
    assert pack_lines(RANKED, 70, _words) == [("a.md", 1), ("a.md", 2), ("a.md", 3),
                                              ("b.md", 2)]
    # "stop" ends at the first line that does not fit.
    assert pack_lines(RANKED, 70, _words, overflow="stop") == [
        ("a.md", 1), ("a.md", 2), ("a.md", 3)]
    # A budget spent exactly stops the packing: 10 + 40 = 50.
    assert pack_lines(RANKED, 50, _words) == [("a.md", 1), ("a.md", 2)]
    # A first line larger than the budget is skipped, a later one that fits is taken.
    assert pack_lines(RANKED, 9, _words) == [("a.md", 3)]
    assert pack_lines([], 250, _words) == []


def test_recall_session_recall_and_mrr_are_exact():
    gold = {("a.md", 4), ("b.md", 2), ("c.md", 7)}
    scores = score_results(RANKED, gold, [60, 70, 1000], _words)
    assert scores["recall"] == {60: 0.0, 70: pytest.approx(1 / 3), 1000: 1.0}
    # Gold sessions are a.md, b.md and c.md; @60 only a.md lines are taken.
    assert scores["session_recall"] == {60: pytest.approx(1 / 3), 70: pytest.approx(2 / 3),
                                        1000: 1.0}
    assert scores["words"] == {60: 55, 70: 63, 1000: 125}
    # The first result citing a gold line is b.md at rank 2.
    assert scores["rr"] == 0.5
    assert reciprocal_rank(RANKED, {("c.md", 7)}) == 0.25
    assert reciprocal_rank(RANKED, {("a.md", 3)}) == 1.0
    assert reciprocal_rank(RANKED, {("c.md", 8)}) == 0.0
    with pytest.raises(ValueError):
        score_results(RANKED, set(), [250], _words)


# -- the run --------------------------------------------------------------------------------------


def test_lexical_run_on_a_tiny_file(tiny: Path, tmp_path: Path):
    calls: list[tuple[int, int, str]] = []
    result = run_locomo(tiny, modes=("lexical",), workdir=tmp_path / "work",
                        progress=lambda d, t, m: calls.append((d, t, m)))
    rows = {r["id"]: r for r in result["questions"]}
    assert len(rows) == 8 and result["data"]["scored"] == 7
    assert calls[-1][:2] == (8, 8)

    # Words only in the evidence turn: found first, its line inside the smallest budget.
    q0 = rows["locomo_0_qa0"]["scores"]["lexical"]
    assert q0["recall"] == {250: 1.0, 500: 1.0, 1000: 1.0, 2000: 1.0}
    assert q0["rr"] == 1.0 and q0["session_recall"][250] == 1.0
    # The malformed "D2:1; D2:2" gives two turns, both found.
    assert rows["locomo_0_qa1"]["evidence"] == ["D2:1", "D2:2"]
    assert rows["locomo_0_qa1"]["scores"]["lexical"]["recall"][250] == 1.0
    # D9:9 names no turn: listed as missing, left out of the denominator.
    assert rows["locomo_0_qa3"]["missing"] == ["D9:9"]
    assert rows["locomo_0_qa3"]["scores"]["lexical"]["recall"][250] == 1.0
    # D3:01 is D3:1 once normalised.
    assert rows["locomo_0_qa5"]["evidence"] == ["D3:1"]
    assert rows["locomo_0_qa5"]["scores"]["lexical"]["recall"][250] == 1.0
    # No evidence at all: not scored, listed.
    assert rows["locomo_0_qa4"]["scores"] == {}
    ev = result["evidence"]
    assert ev["without_evidence"] == ["locomo_0_qa4"]
    assert ev["missing"] == [{"question": "locomo_0_qa3", "id": "D9:9"}]
    assert [m["written"] for m in ev["malformed"]] == ["D2:1; D2:2", "D3:01"]

    sc = result["scores"]["original"]["lexical"]
    assert sc["questions"] == {"1": 1, "2": 2, "3": 0, "4": 3, "5": 1, "1-4": 6}
    assert sc["recall"]["3"][250] is None
    for group, n in sc["questions"].items():
        if n:
            assert 0.0 <= sc["recall"][group][250] <= sc["recall"][group][2000] <= 1.0
            assert 0.0 <= sc["mrr"][group] <= 1.0
    assert sc["recall"]["4"][250] == 1.0 and sc["mrr"]["4"] == 1.0
    assert "corrected" not in result["scores"]
    assert result["index"]["conversations"]["conv-a"]["turns"] == 7
    assert result["latency_ms"]["lexical"]["queries"] == 7
    # The vaults were kept under workdir and hold no recall activity from the run.
    assert (tmp_path / "work" / "conv-b" / "sources/chats/locomo-conv-b-session-2.md").exists()
    assert not (tmp_path / "work" / "conv-a" / ".kenning" / "activity.db").exists()

    report = format_report(result)
    assert "**Evidence recall, categories 1–4 (6 questions)**" in report
    assert "**Per category — lexical**" in report and "| 5 adversarial" not in report
    assert "Category 5 (adversarial" in report
    assert "1 id naming no turn (locomo_0_qa3 D9:9)" in report
    data = json.loads(to_json(result))
    assert "questions" not in data
    assert data["scores"]["original"]["lexical"]["recall"]["1-4"]["250"] == \
        sc["recall"]["1-4"][250]
    assert len(json.loads(to_json(result, questions=True))["questions"]) == 8

    # Re-running on the same workdir re-uses the vaults (incremental index).
    again = run_locomo(tiny, modes=("lexical",), workdir=tmp_path / "work",
                       conversations=["conv-b"], categories=(2,))
    assert again["index"]["conversations"]["conv-b"]["fresh"] is False
    assert [r["id"] for r in again["questions"]] == ["locomo_1_qa1"]
    assert again["scores"]["original"]["lexical"]["questions"] == {"2": 1, "1-4": 1}
    assert "| 2 temporal | 1 |" in format_report(again)
    only5 = run_locomo(tiny, modes=("lexical",), workdir=tmp_path / "work", categories=(5,))
    report5 = format_report(only5)
    assert "Per category" not in report5 and "Category 5 (adversarial" in report5


def test_audit_corrections_replace_evidence_and_drop_unsupported(tiny: Path, tmp_path: Path):
    audit = tmp_path / "audit"
    audit.mkdir()
    entries = [
        # Position and text agree: the evidence moves from D1:2 to D1:1.
        {"question_id": "locomo_0_qa0", "question": "Which zeppelin model is in the garage?",
         "category": 4, "error_type": "WRONG_CITATION", "cited_evidence": ["D1:2"],
         "correct_evidence": ["D1:1"]},
        # Wrong position, found by its text; no turn supports it: dropped.
        {"question_id": "locomo_1_qa0", "question": "When does the marathon training start?",
         "category": 2, "error_type": "TEMPORAL_ERROR", "cited_evidence": ["D2:1"],
         "correct_evidence": []},
        # An answer-level error with the same evidence changes nothing.
        {"question_id": "locomo_1_qa0", "question": "What did Carol buy from the bakery?",
         "category": 4, "error_type": "HALLUCINATION", "cited_evidence": ["D1:1"],
         "correct_evidence": ["D1:1"]},
        {"question_id": "locomo_7_qa1", "question": "Not in this file?", "category": 1,
         "error_type": "AMBIGUOUS", "cited_evidence": [], "correct_evidence": ["D1:1"]},
    ]
    (audit / "errors.json").write_text(json.dumps(entries), encoding="utf-8")
    result = run_locomo(tiny, modes=("lexical",), audit=audit)
    info = result["audit"]
    assert info["matched"] == 3 and info["unmatched"] == ["locomo_7_qa1"]
    assert info["matched_by_text"] == ["locomo_1_qa0"]
    assert info["applied"] == {"evidence_changed": 1, "evidence_unchanged": 1,
                               "dropped": ["locomo_1_qa1"]}
    rows = {r["id"]: r for r in result["questions"]}
    assert rows["locomo_0_qa0"]["corrected"]["evidence"] == ["D1:1"]
    original = result["scores"]["original"]["lexical"]
    corrected = result["scores"]["corrected"]["lexical"]
    assert original["questions"]["1-4"] == 6 and corrected["questions"]["1-4"] == 5
    assert original["questions"]["2"] == 2 and corrected["questions"]["2"] == 1
    # D1:1 holds none of the question's words: not found in the corrected numbers.
    assert rows["locomo_0_qa0"]["corrected_scores"]["lexical"]["recall"][2000] == 0.0
    assert corrected["recall"]["4"][250] < original["recall"]["4"][250]
    assert "Audit-corrected evidence" in format_report(result)


def test_bad_arguments_fail_clearly(tiny: Path, tmp_path: Path):
    with pytest.raises(EvalError, match="no conversation 'conv-z'"):
        run_locomo(tiny, modes=("lexical",), conversations=["conv-z"])
    with pytest.raises(EvalError, match="no such file"):
        run_locomo(tmp_path / "missing.json", modes=("lexical",))
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(EvalError, match="expected a list"):
        run_locomo(bad, modes=("lexical",))
    with pytest.raises(EvalError, match="budgets"):
        run_locomo(tiny, modes=("lexical",), budgets=(0,))


def test_a_vault_without_search_modes_runs_lexical_only():
    class Old:
        def __init__(self) -> None:
            self.calls: list[tuple[str, dict[str, object]]] = []

        def search(self, query: str, *, limit: int = 10) -> list[object]:
            self.calls.append((query, {"limit": limit}))
            return []

    check_modes(Old, ("lexical",))
    with pytest.raises(EvalError, match="no mode= argument"):
        check_modes(Old, ("lexical", "hybrid"))
    old = Old()
    assert L._searcher(old, "lexical")("q", 50) == []
    assert old.calls == [("q", {"limit": 50})]
    with pytest.raises(EvalError):
        L._searcher(old, "dense")


# -- the real data, when it is there ---------------------------------------------------------------


def test_one_real_conversation_lexically(tmp_path: Path):
    if not REAL.is_file():
        pytest.skip(f"LoCoMo data not present at {REAL}")
    samples = json.loads(REAL.read_text(encoding="utf-8"))
    sample = samples[0]
    sid = sample["sample_id"]
    result = run_locomo(REAL, modes=("lexical",), conversations=[sid])
    rows = result["questions"]
    assert len(rows) == len(sample["qa"])
    sc = result["scores"]["original"]["lexical"]
    assert sum(n for g, n in sc["questions"].items() if g != "1-4") == result["data"]["scored"]
    for group, n in sc["questions"].items():
        if not n:
            continue
        for budget in (250, 500, 1000, 2000):
            assert 0.0 <= sc["recall"][group][budget] <= 1.0
            assert 0.0 <= sc["session_recall"][group][budget] <= 1.0
        assert 0.0 <= sc["mrr"][group] <= 1.0
    assert 0.2 < sc["recall"]["1-4"][2000] <= 1.0  # lexical search finds a fair share
    # Every evidence id is either a turn of the conversation or reported as missing.
    turns = {t["dia_id"] for key, session in sample["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session}
    missing = {(m["question"], m["id"]) for m in result["evidence"]["missing"]}
    for row, qa in zip(rows, sample["qa"], strict=True):
        ids = parse_evidence(qa.get("evidence") or []).ids
        for i in ids:
            assert i in row["evidence"] or (row["id"], i) in missing
        assert all(i in turns for i in row["evidence"])
        assert bool(row["scores"]) == bool(row["evidence"])
    assert result["index"]["conversations"][sid]["turns"] == len(turns)


def test_cli_runs_the_evaluation_and_prints_markdown_and_json(tiny: Path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    out = CliRunner().invoke(main, ["eval", "locomo", str(tiny), "--mode", "lexical",
                                    "--budget", "250"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "lexical" in out.output and "250" in out.output and "|" in out.output
    data = CliRunner().invoke(main, ["eval", "locomo", str(tiny), "-m", "lexical", "--json"],
                              catch_exceptions=False)
    assert data.exit_code == 0, data.output
    assert json.loads(data.output)["scores"]["original"]["lexical"]["recall"]
