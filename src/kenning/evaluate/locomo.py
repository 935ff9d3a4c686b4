"""LoCoMo evidence recall: does recall put the turns that answer a question inside a word budget?

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0, never copied into this repository) holds ten long
two-person chats, each with question/answer pairs whose ``evidence`` names the turns (``D3:7`` =
session 3, turn 7) that hold the answer. For every conversation this module writes the sessions
into a fresh vault as chat sources, indexes it, asks every question in each search mode and
measures how much of the gold evidence the ranked, cited lines contain within a word budget.

Chat sources (the format)
-------------------------
One file per session at ``sources/chats/locomo-<sample_id>-session-<n>.md``; the same shape is the
chat-source format the sources connector writes (with its own ``source`` and file name)::

    ---
    type: source
    kind: chat
    source: locomo
    conversation: conv-26
    session: 1
    date: 2023-05-08
    participants: [Caroline, Melanie]
    ---
    # Caroline and Melanie — session 1 (2023-05-08)

    - **Caroline** (D1:1): Hey Mel! Good to see you! How have you been?
    - **Melanie** (D1:2): Hey Caroline! Good to see you! I'm swamped with the kids & work.
    - **Caroline** (D1:5): The transgender stories were so inspiring! [image: a photo of a flag]

- ``date`` is the session's calendar date in ISO form (``1:56 pm on 8 May, 2023`` → 2023-05-08);
  it is left out when the time stamp cannot be read, and the title then shows the raw stamp.
- One line per turn, nothing else: ``- **<speaker>** (<turn id>): <text>``. Whitespace in the
  text, newlines included, collapses to single spaces, so a turn is exactly one line and
  ``grep -n '(D1:3)'`` finds it. A turn that carried an image ends with ``[image: <caption>]``
  (the dataset's BLIP caption; the image search query is not written, it is not what was said).
- Lines are numbered from the top of the file (frontmatter included), like every citation:
  with the seven-key frontmatter above, the title is line 10 and turn ``k`` of the session is
  line ``11 + k``.

What is measured
----------------
- **Evidence recall @ budget**: take the results in rank order and, within each result, its hits
  in order; add each hit's cited lines (``start_line..end_line``), skipping lines already taken.
  A line costs its word count (``len(line.split())``). A line that would overflow the budget is
  not added — packing goes on with the next lines, which may be shorter — and stops as soon as the
  budget is spent exactly (``overflow="stop"`` instead stops at the first line that does not fit,
  which makes the taken lines a prefix of the ranked lines). A question's recall is the share of
  its gold evidence turns whose line was taken. With ``skip`` a larger budget almost always takes
  a superset, but not always: a short line that filled the end of a small budget may not fit
  once earlier, longer lines are taken.
- **Session recall @ budget**: the share of the gold evidence sessions (files) with at least one
  taken line.
- **Words taken @ budget**: how much of the budget the cited lines filled (recall cites a few
  hits per page, so a large budget is often not filled).
- **MRR**: 1 / rank of the first result one of whose hits cites a gold evidence line; 0 when no
  result within ``limit`` does (budget-free).
- Searches record no recall activity (only opening a page does, so earlier questions cannot
  re-rank later ones) and a re-used vault's activity is cleared first; vectors are
  built (``index(embed=True)``) only when a dense or hybrid mode is measured. A query the Vault
  answered in another mode than asked (no vectors: it falls back to lexical) is counted under
  ``fallbacks`` and flagged in the report.
- Means are over questions; "1-4" (the headline) pools categories 1–4; category 5 (adversarial)
  is reported apart. Query latency is wall time of ``Vault.search`` per question.

Gold evidence
-------------
Evidence ids are read with ``D:?\\d+:\\d+`` from every evidence string, which also reads the
malformed strings in the file (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``, ``"D:11:26"``), and are
normalised (``D30:05`` → ``D30:5``); every string that was not exactly one canonical id is
listed under ``evidence.malformed``. Ids that name no turn of the conversation are listed under
``evidence.missing`` and left out of the question's denominator. A question with no usable
evidence (four category-3 questions have an empty list) is not scored and is listed under
``evidence.without_evidence``.

Audit (``audit=``)
------------------
``errors.json`` of the LoCoMo audit (a list of ``{question_id, question, category, error_type,
cited_evidence, correct_evidence, ...}``; ``question_id`` is ``locomo_<i>_qa<j>``: conversation
``i`` and question ``j`` of the file, both 0-based — each entry is checked against its question
text, and matched by text when the position disagrees). Applied: the question's gold evidence
becomes ``correct_evidence`` (WRONG_CITATION entries and some others change it); an entry whose
``correct_evidence`` is empty says no turn supports the question, and the question is dropped
from the corrected numbers. The answer-level error types (HALLUCINATION, TEMPORAL_ERROR,
ATTRIBUTION_ERROR, AMBIGUOUS, INCOMPLETE) judge the golden *answer*, which evidence recall does
not use; those questions stay. Original and corrected numbers are both reported.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.evaluate.budget import (
    EvalError,
    Line,
    ResultLike,
    check_modes,
    pack_lines,
    work_base,
)
from kenning.evaluate.budget import LineWords as _LineWords
from kenning.evaluate.budget import environment as _environment
from kenning.evaluate.budget import fmt as _f
from kenning.evaluate.budget import fmt0 as _f1
from kenning.evaluate.budget import fmt_ms as _ms
from kenning.evaluate.budget import forget_activity as _forget_activity
from kenning.evaluate.budget import index_vault as _index
from kenning.evaluate.budget import latency as _latency
from kenning.evaluate.budget import report_fields as _report_fields
from kenning.evaluate.budget import safe_name as _safe_name
from kenning.evaluate.budget import searcher as _searcher
from kenning.evaluate.budget import table as _table
from kenning.vault.fsio import atomic_write_text

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                  5: "adversarial"}
HEADLINE_CATEGORIES = (1, 2, 3, 4)
HEADLINE = "1-4"
DEFAULT_MODES = ("lexical", "dense", "hybrid")
DEFAULT_BUDGETS = (250, 500, 1000, 2000)
CHATS_FOLDER = "sources/chats"

Progress = Callable[[int, int, str], None]

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")
_STAMP = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})")
_MONTHS = {m: i for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_PLAIN = re.compile(r"[A-Za-z][\w.'-]*(?: [\w.'-]+)*")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}
_QUESTION_ID = re.compile(r"locomo_(\d+)_qa(\d+)")


# -- evidence ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """The gold evidence of one question, read from its evidence strings."""

    ids: tuple[str, ...]  # normalised, de-duplicated, in order
    malformed: tuple[tuple[str, tuple[str, ...]], ...]  # (as written, ids read) when not canonical


def normalise_id(text: str) -> str | None:
    """``D30:05`` → ``D30:5``, ``D:11:26`` → ``D11:26``; None when ``text`` holds no id."""
    m = _EVIDENCE.search(text)
    return f"D{int(m[1])}:{int(m[2])}" if m else None


def parse_evidence(strings: Iterable[object]) -> Evidence:
    """Every turn id in ``strings`` (``"D8:6; D9:17"`` gives two), normalised, without repeats."""
    ids: dict[str, None] = {}
    malformed = []
    for raw in strings:
        text = str(raw)
        found = tuple(f"D{int(m[1])}:{int(m[2])}" for m in _EVIDENCE.finditer(text))
        ids.update(dict.fromkeys(found))
        if found != (text,):
            malformed.append((text, found))
    return Evidence(tuple(ids), tuple(malformed))


# -- writing a conversation as chat sources ------------------------------------------------------


def parse_session_date(stamp: object) -> str | None:
    """``"1:56 pm on 8 May, 2023"`` → ``"2023-05-08"``; None when there is no readable date."""
    m = _STAMP.search(str(stamp or ""))
    if not m:
        return None
    month = _MONTHS.get(m[2][:3].casefold())
    if month is None:
        return None
    try:
        from datetime import date

        return date(int(m[3]), month, int(m[1])).isoformat()
    except ValueError:
        return None


def session_numbers(conversation: dict[str, Any]) -> list[int]:
    """The session numbers that have turns (``session_<n>`` lists), in order."""
    return sorted(int(m[1]) for key, value in conversation.items()
                  if (m := _SESSION_KEY.fullmatch(key)) and isinstance(value, list))


def session_path(sample_id: str, n: int) -> str:
    """Vault path of one session: ``sources/chats/locomo-<sample_id>-session-<n>.md``."""
    return f"{CHATS_FOLDER}/locomo-{_safe_name(sample_id)}-session-{n}.md"


def render_session(sample_id: str, conversation: dict[str, Any], n: int
                   ) -> tuple[str, dict[str, int]]:
    """The Markdown of session ``n`` and the line of each turn, by its dia_id as written."""
    a = _one_line(conversation.get("speaker_a", ""))
    b = _one_line(conversation.get("speaker_b", ""))
    stamp = _one_line(conversation.get(f"session_{n}_date_time", ""))
    day = parse_session_date(stamp)
    # title: like every source file (a note's title is its title: or its file name).
    lines = ["---", "type: source", "kind: chat", "source: locomo",
             f"title: {_yaml_scalar(session_title(conversation, n))}",
             f"conversation: {_yaml_scalar(sample_id)}", f"session: {n}"]
    if day:
        lines.append(f"date: {day}")
    lines += [f"participants: [{_yaml_scalar(a)}, {_yaml_scalar(b)}]", "---",
              f"# {session_title(conversation, n)}", ""]
    where: dict[str, int] = {}
    for turn in conversation.get(f"session_{n}") or []:
        if not isinstance(turn, dict):
            continue
        dia_id, line = turn_line(turn)
        lines.append(line)
        if dia_id:
            where.setdefault(dia_id, len(lines))
    return "\n".join(lines) + "\n", where


def session_title(conversation: dict[str, Any], n: int) -> str:
    """``Caroline and Melanie — session 1 (2023-05-08)``: the H1 of a session's chat source
    (shared with the chats connector, :mod:`kenning.sources.chats`)."""
    a = _one_line(conversation.get("speaker_a", ""))
    b = _one_line(conversation.get("speaker_b", ""))
    stamp = _one_line(conversation.get(f"session_{n}_date_time", ""))
    return f"{a} and {b} — session {n} ({parse_session_date(stamp) or stamp or 'undated'})"


def turn_line(turn: dict[str, Any]) -> tuple[str, str]:
    """(dia_id, ``- **<speaker>** (<dia_id>): <text> [image: <caption>]``) for one turn, on one
    line (shared with the chats connector)."""
    dia_id = _one_line(turn.get("dia_id", ""))
    text = _one_line(turn.get("text", ""))
    caption = _one_line(turn.get("blip_caption", ""))
    line = f"- **{_one_line(turn.get('speaker', ''))}** ({dia_id}): {text}"
    if caption:
        line += f" [image: {caption}]"
    return dia_id, line.rstrip()


def write_conversation(sample: dict[str, Any], root: Path) -> dict[str, tuple[str, int]]:
    """Write every session of one LoCoMo sample into the vault at ``root`` as chat sources.

    Returns dia_id → (vault path, 1-based line) for every turn. Files whose text is unchanged
    are not rewritten (an incremental index skips them); session files of this conversation that
    are no longer produced are removed, so the folder holds exactly this conversation.
    """
    sample_id = str(sample.get("sample_id", ""))
    conversation = sample.get("conversation")
    if not sample_id or not isinstance(conversation, dict):
        raise EvalError("a LoCoMo sample needs a sample_id and a conversation mapping")
    root = Path(root)
    turns: dict[str, tuple[str, int]] = {}
    written = set()
    for n in session_numbers(conversation):
        rel = session_path(sample_id, n)
        text, where = render_session(sample_id, conversation, n)
        target = root / rel
        if not target.exists() or target.read_bytes() != text.encode("utf-8"):
            atomic_write_text(target, text)
        written.add(target.name)
        for dia_id, line in where.items():
            turns.setdefault(dia_id, (rel, line))
    folder = root / CHATS_FOLDER
    for old in folder.glob(f"locomo-{_safe_name(sample_id)}-session-*.md"):
        if old.name not in written and re.fullmatch(r".*-session-\d+\.md", old.name):
            old.unlink()
    return turns


# -- packing and scoring -------------------------------------------------------------------------


def reciprocal_rank(results: Iterable[ResultLike], gold: set[Line]) -> float:
    """1 / rank of the first result with a hit citing a gold line; 0.0 when none does."""
    for rank, result in enumerate(results, 1):
        for hit in result.hits:
            if any((result.path, line) in gold
                   for line in range(hit.start_line, hit.end_line + 1)):
                return 1.0 / rank
    return 0.0


def score_results(results: Sequence[ResultLike], gold: set[Line], budgets: Sequence[int],
                  words: Callable[[str, int], int], *, overflow: str = "skip"
                  ) -> dict[str, Any]:
    """Recall and session recall at each budget, and the reciprocal rank, for one question."""
    if not gold:
        raise ValueError("a question needs at least one gold evidence line to be scored")
    gold_files = {path for path, _ in gold}
    recall: dict[int, float] = {}
    sessions: dict[int, float] = {}
    used: dict[int, int] = {}
    for budget in budgets:
        lines = pack_lines(results, budget, words, overflow=overflow)
        taken = set(lines)
        recall[budget] = len(gold & taken) / len(gold)
        sessions[budget] = len(gold_files & {path for path, _ in taken}) / len(gold_files)
        used[budget] = sum(words(path, line) for path, line in lines)
    return {"recall": recall, "session_recall": sessions, "words": used,
            "rr": reciprocal_rank(results, gold)}


# -- the data and the audit ----------------------------------------------------------------------


def load_locomo(path: str | Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo file (``locomo10.json``), checked for the fields used here."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalError(f"{path}: no such file (the LoCoMo data, e.g. locomo10.json)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalError(f"{path}: not a readable LoCoMo JSON file: {exc}") from None
    if not isinstance(data, list) or not all(
            isinstance(s, dict) and isinstance(s.get("conversation"), dict)
            and isinstance(s.get("qa"), list) and s.get("sample_id") for s in data):
        raise EvalError(f"{path}: expected a list of samples with sample_id, conversation, qa")
    return data


def default_audit_path(data_path: str | Path) -> Path | None:
    """``<folder of the data>/audit/errors.json`` when it exists (what ``--audit`` uses)."""
    path = Path(data_path).parent / "audit" / "errors.json"
    return path if path.is_file() else None


@dataclass(frozen=True)
class Correction:
    """One audit entry matched to its question."""

    question_id: str
    error_type: str
    evidence: Evidence


def load_audit(audit: str | Path, samples: Sequence[dict[str, Any]]
               ) -> tuple[dict[tuple[int, int], Correction], dict[str, Any]]:
    """Audit entries by (conversation index, question index), and what was (not) matched."""
    path = Path(audit)
    if path.is_dir():
        path = path / "errors.json"
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalError(f"{path}: cannot read the LoCoMo audit: {exc}") from None
    if not isinstance(entries, list):
        raise EvalError(f"{path}: expected a list of audit entries")
    by_text: dict[str, list[tuple[int, int]]] = {}
    for ci, sample in enumerate(samples):
        for qi, qa in enumerate(sample["qa"]):
            by_text.setdefault(_norm_text(qa.get("question", "")), []).append((ci, qi))
    found: dict[tuple[int, int], Correction] = {}
    unmatched: list[str] = []
    moved: list[str] = []
    types: dict[str, int] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        qid = str(entry.get("question_id", ""))
        text = _norm_text(entry.get("question", ""))
        key = None
        m = _QUESTION_ID.fullmatch(qid)
        if m:
            ci, qi = int(m[1]), int(m[2])
            if (ci < len(samples) and qi < len(samples[ci]["qa"])
                    and _norm_text(samples[ci]["qa"][qi].get("question", "")) == text):
                key = (ci, qi)
        if key is None:
            candidates = by_text.get(text, [])
            same = [c for c in candidates if m and c[0] == int(m[1])]
            pick = same or candidates
            if len(pick) == 1:
                key = pick[0]
                moved.append(qid)
        if key is None:
            unmatched.append(qid)
            continue
        etype = str(entry.get("error_type", ""))
        types[etype] = types.get(etype, 0) + 1
        found[key] = Correction(qid, etype, parse_evidence(entry.get("correct_evidence") or []))
    info = {"path": str(path), "entries": len(entries), "matched": len(found),
            "matched_by_text": moved, "unmatched": unmatched, "error_types": types}
    return found, info


# -- the run -------------------------------------------------------------------------------------


def run_locomo(path: str | Path, *, modes: Sequence[str] = DEFAULT_MODES,
               budgets: Sequence[int] = DEFAULT_BUDGETS,
               categories: Sequence[int] = (1, 2, 3, 4, 5),
               conversations: Sequence[str] | None = None, audit: str | Path | None = None,
               workdir: str | Path | None = None, limit: int = 100,
               progress: Progress | None = None, overflow: str = "skip") -> dict[str, Any]:
    """Evaluate evidence recall on a LoCoMo file; returns a JSON-ready dict (see ``to_json``).

    One vault per conversation: in a temporary folder removed afterwards, or under
    ``workdir/<sample_id>`` where it is kept and re-used (the index is then incremental:
    unchanged session files are not re-parsed or re-embedded, and ``index.fresh`` says so).
    ``progress(done, total, message)`` is called as questions are answered.
    """
    from kenning.api import Vault

    path = Path(path)
    modes = tuple(dict.fromkeys(str(m) for m in modes))
    budgets = tuple(sorted({int(b) for b in budgets}))
    categories = tuple(sorted({int(c) for c in categories}))
    if not modes:
        raise EvalError("give at least one search mode")
    if not budgets or budgets[0] <= 0:
        raise EvalError("word budgets must be positive integers")
    if not categories:
        raise EvalError("give at least one question category")
    if limit <= 0:
        raise EvalError("limit must be positive")
    if overflow not in ("skip", "stop"):
        raise EvalError(f"overflow must be 'skip' or 'stop', not {overflow!r}")
    check_modes(Vault, modes)
    samples = load_locomo(path)
    chosen = _choose(samples, conversations)
    corrections, audit_info = load_audit(audit, samples) if audit is not None else ({}, None)

    total = sum(1 for _, s in chosen for qa in s["qa"] if _category(qa) in categories)
    rows: list[dict[str, Any]] = []
    latency: dict[str, list[float]] = {m: [] for m in modes}
    fallback: dict[str, int] = dict.fromkeys(modes, 0)
    notes: dict[str, dict[str, int]] = {m: {} for m in modes}
    index_info: dict[str, Any] = {}
    evidence_info: dict[str, Any] = {"ids": 0, "malformed": [], "missing": [],
                                     "without_evidence": []}
    applied: dict[str, Any] = {"evidence_changed": [], "dropped": [], "unchanged": 0}
    done = 0
    with contextlib.ExitStack() as stack:
        base = work_base(stack, workdir, "kenning-locomo-")
        for ci, sample in chosen:
            sid = str(sample["sample_id"])
            root = base / _safe_name(sid)
            fresh = not (root / ".kenning" / "index.db").exists()
            vault, _ = Vault.init(root)
            try:
                turns = write_conversation(sample, vault.root)
                lookup = {normalise_id(k) or k: v for k, v in turns.items()}
                _forget_activity(vault.root)
                started = time.perf_counter()
                report = _index(vault, embed=any(m != "lexical" for m in modes))
                seconds = time.perf_counter() - started
                embedding = getattr(report, "embedding", None)
                index_info[sid] = {
                    "seconds": seconds, "fresh": fresh,
                    "sessions": len(session_numbers(sample["conversation"])),
                    "turns": len(turns), "report": _report_fields(report),
                    "embedded": getattr(embedding, "embedded",
                                        getattr(report, "embedded", None)),
                    "embed_error": getattr(report, "embed_error", None)
                    or getattr(embedding, "error", None)}
                if progress:
                    progress(done, total, f"{sid}: indexed {len(turns)} turns in {seconds:.2f}s")
                words = _LineWords(vault.root)
                search = {m: _searcher(vault, m) for m in modes}
                for qi, qa in enumerate(sample["qa"]):
                    category = _category(qa)
                    if category not in categories:
                        continue
                    row = _question_row(ci, qi, sid, qa, category, lookup, evidence_info,
                                        corrections.get((ci, qi)), applied)
                    gold = {lookup[i] for i in row["evidence"]}
                    fixed = row.get("corrected")
                    fixed_gold = ({lookup[i] for i in fixed["evidence"]}
                                  if fixed and fixed["changed"] else None)
                    if gold or fixed_gold:
                        for mode in modes:
                            started = time.perf_counter()
                            found = search[mode](str(qa.get("question", "")), limit)
                            ms = (time.perf_counter() - started) * 1000.0
                            results = list(found)
                            latency[mode].append(ms)
                            used = getattr(found, "mode", mode)
                            if used != mode:
                                fallback[mode] += 1
                                for note in getattr(found, "notes", None) or []:
                                    notes[mode][str(note)] = notes[mode].get(str(note), 0) + 1
                            if gold:
                                row["scores"][mode] = {
                                    **score_results(results, gold, budgets, words,
                                                    overflow=overflow), "ms": ms}
                            if fixed_gold:
                                row["corrected_scores"][mode] = score_results(
                                    results, fixed_gold, budgets, words, overflow=overflow)
                    rows.append(row)
                    done += 1
                    if progress:
                        progress(done, total, sid)
            finally:
                vault.close()

    scores = {"original": _aggregate(rows, modes, budgets, categories, corrected=False)}
    if audit_info is not None:
        scores["corrected"] = _aggregate(rows, modes, budgets, categories, corrected=True)
        audit_info["applied"] = {
            "evidence_changed": len(applied["evidence_changed"]),
            "evidence_unchanged": applied["unchanged"], "dropped": applied["dropped"]}
    index_total = sum(i["seconds"] for i in index_info.values())
    return {
        "benchmark": "locomo",
        "data": {"path": str(path), "sha256": _sha256(path),
                 "conversations": [str(s["sample_id"]) for _, s in chosen],
                 "questions": len(rows), "scored": sum(1 for r in rows if r["evidence"])},
        "settings": {"modes": list(modes), "budgets": list(budgets),
                     "categories": list(categories), "limit": limit, "overflow": overflow,
                     "cost": "words per line, len(line.split())", "audit": audit is not None},
        "environment": _environment(),
        "evidence": evidence_info,
        "audit": audit_info,
        "index": {"seconds": index_total, "conversations": index_info},
        "latency_ms": {m: _latency(v) for m, v in latency.items()},
        "fallbacks": {m: {"queries": fallback[m], "notes": notes[m]} for m in modes
                      if fallback[m]},
        "scores": scores,
        "questions": rows,
    }


def _question_row(ci: int, qi: int, sid: str, qa: dict[str, Any], category: int,
                  lookup: dict[str, Line], info: dict[str, Any], fix: Correction | None,
                  applied: dict[str, Any]) -> dict[str, Any]:
    qid = f"locomo_{ci}_qa{qi}"
    raw = qa.get("evidence") or []
    ev = parse_evidence(raw if isinstance(raw, list) else [raw])
    info["ids"] += len(ev.ids)
    info["malformed"] += [{"question": qid, "written": w, "ids": list(ids)}
                          for w, ids in ev.malformed]
    missing = [i for i in ev.ids if i not in lookup]
    info["missing"] += [{"question": qid, "id": i} for i in missing]
    present = [i for i in ev.ids if i in lookup]
    if not present:
        info["without_evidence"].append(qid)
    row: dict[str, Any] = {
        "id": qid, "conversation": sid, "index": qi, "category": category,
        "question": str(qa.get("question", "")), "evidence": present, "missing": missing,
        "scores": {}, "corrected_scores": {}}
    if fix is not None:
        fixed = [i for i in fix.evidence.ids if i in lookup]
        changed = set(fixed) != set(present)
        dropped = not fixed
        row["corrected"] = {"error_type": fix.error_type, "evidence": fixed,
                            "missing": [i for i in fix.evidence.ids if i not in lookup],
                            "changed": changed and not dropped, "dropped": dropped}
        if dropped:
            applied["dropped"].append(qid)
        elif changed:
            applied["evidence_changed"].append(qid)
        else:
            applied["unchanged"] += 1
    return row


def _aggregate(rows: list[dict[str, Any]], modes: Sequence[str], budgets: Sequence[int],
               categories: Sequence[int], *, corrected: bool) -> dict[str, Any]:
    groups = [str(c) for c in categories]
    if any(c in HEADLINE_CATEGORIES for c in categories):
        groups.append(HEADLINE)
    out: dict[str, Any] = {}
    for mode in modes:
        picked: dict[str, list[dict[str, Any]]] = {g: [] for g in groups}
        for row in rows:
            score = row["scores"].get(mode)
            fix = row.get("corrected")
            if corrected and fix:
                if fix["dropped"]:
                    continue
                if fix["changed"]:
                    score = row["corrected_scores"].get(mode)
            if score is None:
                continue
            picked[str(row["category"])].append(score)
            if row["category"] in HEADLINE_CATEGORIES:
                picked[HEADLINE].append(score)
        out[mode] = {
            "questions": {g: len(s) for g, s in picked.items()},
            "recall": {g: {b: _mean(x["recall"][b] for x in s) for b in budgets}
                       for g, s in picked.items()},
            "session_recall": {g: {b: _mean(x["session_recall"][b] for x in s)
                                   for b in budgets} for g, s in picked.items()},
            "mrr": {g: _mean(x["rr"] for x in s) for g, s in picked.items()},
            "words": {g: {b: _mean(x["words"][b] for x in s) for b in budgets}
                      for g, s in picked.items()},
        }
    return out


# -- output --------------------------------------------------------------------------------------


def to_json(result: dict[str, Any], *, questions: bool = False, indent: int | None = 2) -> str:
    """The result as JSON (budget keys become strings); per-question rows only if asked."""
    data = result if questions else {k: v for k, v in result.items() if k != "questions"}
    return json.dumps(data, indent=indent, ensure_ascii=False)


def format_report(result: dict[str, Any]) -> str:
    """Markdown tables for docs/benchmarks.md: headline, per category, sessions, MRR, timing."""
    s = result["settings"]
    budgets: list[int] = s["budgets"]
    modes: list[str] = s["modes"]
    data = result["data"]
    out: list[str] = []
    heads = [f"@{b}" for b in budgets]
    original = result["scores"]["original"]
    corrected = result["scores"].get("corrected")
    first = original[modes[0]]
    n_head = first["questions"].get(HEADLINE)
    convs = data["conversations"]
    out.append(f"LoCoMo evidence recall — {len(convs)} conversation"
               f"{'s' if len(convs) != 1 else ''}, {data['scored']:,} scored questions of "
               f"{data['questions']:,}; word budgets {', '.join(map(str, budgets))}; "
               f"top {s['limit']} results; packing `{s['overflow']}`.")
    out.append("")
    if n_head:
        out.append(f"**Evidence recall, categories 1–4 ({n_head:,} questions)**")
        out.append("")
        rows = [[m, *[_f(original[m]["recall"][HEADLINE][b]) for b in budgets],
                 _f(original[m]["mrr"][HEADLINE])] for m in modes]
        out += _table(["mode", *heads, "MRR"], rows)
        out.append("")
    per_category = [str(c) for c in s["categories"] if c != 5]
    for mode in modes if per_category else ():
        sc = original[mode]
        out.append(f"**Per category — {mode}**")
        out.append("")
        rows = []
        for g in per_category + ([HEADLINE] if n_head is not None else []):
            label = f"{g} {CATEGORY_NAMES.get(int(g), '')}".strip() if g != HEADLINE else "1–4"
            rows.append([label, f"{sc['questions'][g]:,}",
                         *[_f(sc["recall"][g][b]) for b in budgets], _f(sc["mrr"][g])])
        out += _table(["category", "n", *heads, "MRR"], rows)
        out.append("")
    if "5" in first["questions"]:
        out.append(f"**Category 5 (adversarial: the premise is false; evidence is the turn that "
                   f"contradicts it) — {first['questions']['5']:,} questions**")
        out.append("")
        rows = [[m, *[_f(original[m]["recall"]["5"][b]) for b in budgets],
                 _f(original[m]["mrr"]["5"])] for m in modes]
        out += _table(["mode", *heads, "MRR"], rows)
        out.append("")
    group = HEADLINE if n_head else str(s["categories"][0])
    out.append(f"**Session recall (share of gold evidence sessions with a taken line), "
               f"categories {'1–4' if group == HEADLINE else group}**")
    out.append("")
    rows = [[m, *[_f(original[m]["session_recall"][group][b]) for b in budgets]] for m in modes]
    out += _table(["mode", *heads], rows)
    out.append("")
    out.append(f"**Words taken (mean per question; the budget is a ceiling: recall returns at "
               f"most {s['limit']} pages and a few cited hits per page)**")
    out.append("")
    rows = [[m, *[_f1(original[m]["words"][group][b]) for b in budgets]] for m in modes]
    out += _table(["mode", *heads], rows)
    out.append("")
    groups = [str(c) for c in s["categories"]] + ([HEADLINE] if n_head is not None else [])
    out.append("**MRR (first result citing a gold line) by category**")
    out.append("")
    rows = [[m, *[_f(original[m]["mrr"][g]) for g in groups]] for m in modes]
    out += _table(["mode", *[g.replace("-", "–") for g in groups]], rows)
    out.append("")
    if corrected is not None and n_head:
        a = result["audit"]
        applied = a.get("applied", {})
        out.append(f"**Audit-corrected evidence, categories 1–4 "
                   f"({corrected[modes[0]]['questions'][HEADLINE]:,} questions; "
                   f"{applied.get('evidence_changed', 0)} evidence lists replaced, "
                   f"{len(applied.get('dropped', []))} dropped)**")
        out.append("")
        rows = []
        for m in modes:
            new, old = corrected[m]["recall"][HEADLINE], original[m]["recall"][HEADLINE]
            rows.append([m, *[f"{_f(new[b])} ({_delta(new[b], old[b])})" for b in budgets],
                         _f(corrected[m]["mrr"][HEADLINE])])
        out += _table(["mode", *heads, "MRR"], rows)
        out.append("")
    idx = result["index"]
    n_conv = max(1, len(idx["conversations"]))
    fresh = all(c.get("fresh") for c in idx["conversations"].values())
    out.append(f"**Timing** — index {idx['seconds']:.2f} s for {len(idx['conversations'])} "
               f"vault{'s' if n_conv != 1 else ''} ({idx['seconds'] / n_conv:.2f} s each"
               f"{'' if fresh else '; some re-used, incremental'}); "
               f"{result['environment']['machine']}")
    out.append("")
    rows = [[m, f"{v['queries']:,}", _ms(v["p50"]), _ms(v["p95"]), _ms(v["mean"])]
            for m, v in result["latency_ms"].items()]
    out += _table(["mode", "queries", "p50 ms", "p95 ms", "mean ms"], rows)
    for mode, fb in (result.get("fallbacks") or {}).items():
        why = "; ".join(f"{n}× {note}" for note, n in fb["notes"].items()) or "no reason given"
        out.append("")
        out.append(f"**Warning**: {mode} searched lexically on {fb['queries']:,} queries ({why}).")
    errors = {c: i["embed_error"] for c, i in idx["conversations"].items() if i.get("embed_error")}
    if errors:
        out.append("")
        out.append("**Warning**: embedding failed for " + "; ".join(
            f"{c}: {e}" for c, e in errors.items()))
    ev = result["evidence"]
    out.append("")
    out.append(f"Data: {_n(ev['ids'], 'evidence id')}; "
               f"{_n(len(ev['malformed']), 'malformed evidence string')} read leniently; "
               f"{_n(len(ev['missing']), 'id')} naming no turn ({_missing_list(ev['missing'])}); "
               f"{_n(len(ev['without_evidence']), 'question')} without evidence (not scored).")
    return "\n".join(out) + "\n"


# -- helpers -------------------------------------------------------------------------------------


def _choose(samples: list[dict[str, Any]], wanted: Sequence[str] | None
            ) -> list[tuple[int, dict[str, Any]]]:
    indexed = list(enumerate(samples))
    if wanted is None:
        return indexed
    names = {str(s["sample_id"]) for s in samples}
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise EvalError(f"no conversation {', '.join(map(repr, unknown))} in the file; it has "
                        f"{', '.join(sorted(names))}")
    keep = set(wanted)
    return [(i, s) for i, s in indexed if str(s["sample_id"]) in keep]


def _category(qa: dict[str, Any]) -> int | None:
    try:
        return int(qa.get("category"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return statistics.fmean(items) if items else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def _norm_text(value: object) -> str:
    return " ".join(str(value or "").split()).casefold()


def _yaml_scalar(value: str) -> str:
    if _PLAIN.fullmatch(value) and value.casefold() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _missing_list(missing: list[dict[str, str]]) -> str:
    shown = ", ".join(f"{m['question']} {m['id']}" for m in missing[:5])
    return (shown + (", …" if len(missing) > 5 else "")) or "—"


def _delta(new: float | None, old: float | None) -> str:
    if new is None or old is None:
        return "—"
    return f"{new - old:+.3f}"
