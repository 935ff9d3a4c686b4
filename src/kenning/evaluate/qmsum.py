"""QMSum evidence in long meeting transcripts: do the turns that answer a query fit a word budget?

QMSum (Zhong et al., NAACL 2021; MIT, never copied into this repository) holds real meetings
(AMI, ICSI, parliamentary committees) as ``{"meeting_transcripts": [{speaker, content}],
"topic_list": [{topic, relevant_text_span}], "specific_query_list": [{query, answer,
relevant_text_span}], "general_query_list": [{query, answer}]}``; a span ``["14", "22"]`` names
turns 14 to 22 of ``meeting_transcripts`` (0-based, inclusive). A split folder holds one such file
per meeting.

How a meeting becomes a vault
-----------------------------
All meetings of a split go into one fresh vault, as a user syncs a folder of transcripts. Each
meeting is written as a QMSum transcript file (``<meeting>.json`` holding its
``meeting_transcripts`` and ``topic_list`` only: queries and answers never reach the vault) and
the folder is synced with the meetings connector's own entry point
(:func:`kenning.sources.meetings.sync`, what ``kenning sync meetings DIR`` runs), so each source
file is byte for byte what a user's sync writes (``fetched:`` aside). The vault is then indexed
with the shipped defaults (vectors only when a dense or hybrid mode is measured); no build.
Every query is asked of the whole vault: the gold turns must come from the right meeting.

Turns to lines
--------------
The connector writes one line per turn that has text, in order, after the ``## Transcript``
heading (turns with empty content are dropped). :func:`turn_lines` reads the written file and
maps each turn index to its 1-based line, checking every line against the turn's text; a
mismatch is an :class:`EvalError`, never a silent shift. A gold turn with no line (empty
content) is left out of its query's denominator and counted under ``data.empty_gold_turns``.

What is measured
----------------
For each specific query and each measured way of searching (mode × grouping: ``page`` is what
``kenning search`` returns by default, ``chunk`` is ``--group chunk``, best passages first,
``mcp`` is what the MCP ``search`` tool asks by default: 10 results within 2,000 tokens), the
results are packed in rank order into a word budget exactly as the LoCoMo eval does
(:func:`kenning.evaluate.locomo.pack_lines`: a line costs ``len(line.split())`` words, a line
that would overflow is skipped). Then, per budget:

- **evidence hit**: 1 when any gold turn's line was taken, else 0;
- **evidence recall**: the share of the query's gold turns whose line was taken;
- **words taken** (the budget is a ceiling: page grouping cites two hits per page).

Means are over specific queries. **General queries** ("Summarize the whole meeting") have no
gold turns, and most are the same words for every meeting, so in a vault of many meetings they
cannot name theirs; for them the report gives, per budget, the share whose taken lines include
any line of the meeting and **topic coverage**: the share of the meeting's topics
(``topic_list`` spans) with at least one taken line.
Searches record no recall activity, so earlier queries never re-rank later ones.

Baseline: BM25 over lines
-------------------------
``bm25-lines`` ranks every turn line of every meeting (each line a document; Okapi BM25,
k1 = 1.5, b = 0.75, idf ``ln(1 + (N - n + 0.5) / (n + 0.5))``; tokens are the lower-cased
``\\w+`` runs of the whole source line, speaker label included; lines with no query term are
not ranked; ties keep file order) and is packed and scored the same way. It needs no index.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.evaluate.budget import (
    EvalError,
    Line,
    LineWords,
    check_modes,
    environment,
    fmt,
    fmt0,
    fmt_ms,
    forget_activity,
    index_vault,
    latency,
    pack_lines,
    report_fields,
    safe_name,
    searcher,
    table,
    work_base,
)
from kenning.vault.fsio import atomic_write_text

DEFAULT_MODES = ("lexical", "dense", "hybrid")
DEFAULT_GROUPS = ("page", "chunk", "mcp")
# What the MCP search tool asks for by default (serve/tools.py): the default recall path agents use.
MCP_LIMIT, MCP_BUDGET = 10, 2000
DEFAULT_BUDGETS = (250, 500, 1000, 2000)
BASELINE = "bm25-lines"
TRANSCRIPT_HEADING = "## Transcript"

Progress = Callable[[int, int, str], None]

_TOKEN = re.compile(r"\w+")
_TURN = re.compile(r"- \*\*(?:\[[0-9:]+\] )?.*?:\*\* ?(.*)")


# -- the data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One specific query of a meeting and its gold turns (indexes into the transcript)."""

    index: int
    text: str
    turns: tuple[int, ...]


@dataclass(frozen=True)
class MeetingData:
    """One QMSum meeting file, read and checked."""

    name: str
    path: Path
    transcript: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    specific: tuple[Query, ...]
    general: tuple[str, ...]
    topic_turns: tuple[tuple[int, ...], ...] = field(default=())


def split_files(folder: str | Path) -> list[Path]:
    """The meeting files of a QMSum split folder (``*.json``), in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise EvalError(f"{folder}: not a folder (a QMSum split, e.g. .../qmsum/val)")
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    if not files:
        raise EvalError(f"{folder}: no *.json meeting files (a QMSum split, e.g. .../qmsum/val)")
    return files


def parse_spans(spans: Any, turns: int, where: str) -> tuple[int, ...]:
    """The turn indexes of ``[["14", "22"], …]`` (inclusive), sorted, checked against ``turns``."""
    if not isinstance(spans, list):
        raise EvalError(f"{where}: relevant_text_span must be a list of [start, end] pairs")
    out: set[int] = set()
    for span in spans:
        try:
            start, end = (int(x) for x in span)
        except (TypeError, ValueError):
            raise EvalError(f"{where}: span {span!r} is not a [start, end] pair of turn "
                            f"numbers") from None
        if not 0 <= start <= end < turns:
            raise EvalError(f"{where}: span [{start}, {end}] is outside the transcript's "
                            f"{turns} turns")
        out.update(range(start, end + 1))
    return tuple(sorted(out))


def read_meeting(path: str | Path) -> MeetingData:
    """One QMSum meeting file, with its specific queries' gold turns and its topics' turns."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalError(f"{path}: not a readable QMSum JSON file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("meeting_transcripts"), list):
        raise EvalError(f"{path}: expected an object with meeting_transcripts: "
                        f"[{{speaker, content}}]")
    transcript = data["meeting_transcripts"]
    for i, turn in enumerate(transcript):
        if not isinstance(turn, dict):
            raise EvalError(f"{path}: meeting_transcripts[{i}] is not a {{speaker, content}} "
                            f"object")
    n = len(transcript)
    specific = []
    for i, q in enumerate(data.get("specific_query_list") or []):
        where = f"{path}: specific_query_list[{i}]"
        if not isinstance(q, dict) or not str(q.get("query") or "").strip():
            raise EvalError(f"{where}: needs a query")
        specific.append(Query(i, str(q["query"]), parse_spans(q.get("relevant_text_span"), n,
                                                              where)))
    general = tuple(str(q.get("query", "")) for q in data.get("general_query_list") or []
                    if isinstance(q, dict) and str(q.get("query") or "").strip())
    topics = [t for t in data.get("topic_list") or [] if isinstance(t, dict)]
    topic_turns = tuple(parse_spans(t.get("relevant_text_span") or [], n,
                                    f"{path}: topic_list[{i}]") for i, t in enumerate(topics))
    return MeetingData(path.stem, path, transcript, topics, tuple(specific), general,
                       topic_turns)


# -- writing and reading the source file ---------------------------------------------------------


def write_transcript(meeting: MeetingData, folder: Path) -> Path:
    """The meeting as a QMSum transcript file a user would sync: turns and topics, no queries."""
    target = Path(folder) / f"{safe_name(meeting.name)}.json"
    text = json.dumps({"meeting_transcripts": meeting.transcript, "topic_list": meeting.topics},
                      ensure_ascii=False, indent=1)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        atomic_write_text(target, text)
    return target


def turn_lines(text: str, transcript: Sequence[dict[str, Any]], where: str = "source"
               ) -> dict[int, int]:
    """Turn index → 1-based line of a meeting source file the connector wrote from
    ``transcript``; every turn with text must be the next turn line, holding that text."""
    lines = text.split("\n")
    try:
        start = lines.index(TRANSCRIPT_HEADING)
    except ValueError:
        raise EvalError(f"{where}: no '{TRANSCRIPT_HEADING}' heading") from None
    turn_at = [i + 1 for i in range(start + 1, len(lines)) if _TURN.fullmatch(lines[i])]
    spoken = [i for i, t in enumerate(transcript) if " ".join(str(t.get("content") or "").split())]
    if len(turn_at) != len(spoken):
        raise EvalError(f"{where}: {len(turn_at)} turn lines for {len(spoken)} turns with text")
    out: dict[int, int] = {}
    for index, line in zip(spoken, turn_at, strict=True):
        said = " ".join(str(transcript[index].get("content") or "").split())
        m = _TURN.fullmatch(lines[line - 1])
        if m is None or not _same_start(m[1], said):
            raise EvalError(f"{where}: line {line} does not hold turn {index} ({said[:40]!r})")
        out[index] = line
    return out


def _same_start(written: str, said: str) -> bool:
    """The written turn begins like the transcript's (the connector may clean or cut text)."""
    a, b = _TOKEN.findall(written.casefold())[:6], _TOKEN.findall(said.casefold())[:6]
    return a == b


# -- the baseline --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineHit:
    """One cited line (what packing needs from a hit)."""

    start_line: int
    end_line: int


@dataclass(frozen=True)
class LineResult:
    """A ranked list of lines of one file (what packing needs from a result)."""

    path: str
    hits: tuple[LineHit, ...]


def tokens(text: str) -> list[str]:
    """Lower-cased word runs: what the BM25-lines baseline matches on."""
    return _TOKEN.findall(text.casefold())


@dataclass(frozen=True)
class LineIndex:
    """Okapi BM25 over single lines (each line a document): the ``bm25-lines`` baseline."""

    lines: tuple[Line, ...]
    lengths: tuple[int, ...]
    postings: dict[str, tuple[tuple[int, int], ...]]  # term -> (line position, term frequency)
    k1: float = 1.5
    b: float = 0.75

    @classmethod
    def build(cls, docs: Sequence[tuple[str, int, str]]) -> LineIndex:
        """The index of ``docs``: (vault path, line, text) triples, in file order."""
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for pos, (_, _, text) in enumerate(docs):
            counts = Counter(tokens(text))
            lengths.append(sum(counts.values()))
            for term, f in counts.items():
                postings.setdefault(term, []).append((pos, f))
        return cls(tuple((p, n) for p, n, _ in docs), tuple(lengths),
                   {t: tuple(v) for t, v in postings.items()})

    def rank(self, query: str) -> list[Line]:
        """The lines sharing a term with ``query``, best BM25 first; ties keep file order."""
        n = len(self.lines)
        if not n:
            return []
        avg = sum(self.lengths) / n or 1.0
        scores: Counter[int] = Counter()
        for term in set(tokens(query)):
            hits = self.postings.get(term, ())
            idf = math.log(1 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            for pos, f in hits:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[pos] / avg)
                scores[pos] += idf * f * (self.k1 + 1) / (f + norm)
        return [self.lines[pos] for pos in sorted(scores, key=lambda p: (-scores[p], p))]


def baseline_results(ranked: Sequence[Line]) -> list[LineResult]:
    """Ranked lines as results packing can read: one result per line."""
    return [LineResult(path, (LineHit(n, n),)) for path, n in ranked]


# -- scoring -------------------------------------------------------------------------------------


def score_query(results: Sequence[Any], gold: set[Line], budgets: Sequence[int],
                words: Callable[[str, int], int]) -> dict[str, Any]:
    """Evidence hit, evidence recall and words taken at each budget, for one query."""
    if not gold:
        raise ValueError("a query needs at least one gold line to be scored")
    hit: dict[int, int] = {}
    recall: dict[int, float] = {}
    used: dict[int, int] = {}
    for budget in budgets:
        taken = pack_lines(results, budget, words)
        inside = len(gold & set(taken))
        hit[budget] = int(inside > 0)
        recall[budget] = inside / len(gold)
        used[budget] = sum(words(p, n) for p, n in taken)
    return {"hit": hit, "recall": recall, "words": used}


def score_general(results: Sequence[Any], source: str, topics: Sequence[set[Line]],
                  budgets: Sequence[int], words: Callable[[str, int], int]) -> dict[str, Any]:
    """Per budget: whether any taken line is the meeting's (``meeting``), topic coverage (share
    of its topics with a taken line) and words taken."""
    meeting: dict[int, int] = {}
    coverage: dict[int, float | None] = {}
    used: dict[int, int] = {}
    for budget in budgets:
        taken = set(pack_lines(results, budget, words))
        meeting[budget] = int(any(p == source for p, _ in taken))
        coverage[budget] = (sum(1 for t in topics if t & taken) / len(topics)) if topics else None
        used[budget] = sum(words(p, n) for p, n in taken)
    return {"meeting": meeting, "topic_coverage": coverage, "words": used}


# -- the run -------------------------------------------------------------------------------------


def run_names(modes: Sequence[str], groups: Sequence[str], baseline: bool) -> list[str]:
    """``lexical/page``, ``hybrid/chunk`` …, then the baseline: the columns of the report."""
    return [f"{m}/{g}" for m in modes for g in groups] + ([BASELINE] if baseline else [])


def run_qmsum(folder: str | Path, *, modes: Sequence[str] = DEFAULT_MODES,
              groups: Sequence[str] = DEFAULT_GROUPS, budgets: Sequence[int] = DEFAULT_BUDGETS,
              limit: int = 100, limit_meetings: int | None = None,
              limit_queries: int | None = None, baseline: bool = True,
              workdir: str | Path | None = None, progress: Progress | None = None
              ) -> dict[str, Any]:
    """Evaluate evidence hit and recall on a QMSum split folder; a JSON-ready dict.

    All meetings go into one vault (as a user syncs a folder of transcripts), in a temporary
    folder removed afterwards or under ``workdir/vault`` where it is kept and re-used (the index
    is then incremental). ``limit_meetings`` takes the first N meetings by file name,
    ``limit_queries`` the first N specific and general queries of each meeting.
    """
    from kenning.api import Vault
    from kenning.sources import meetings as connector

    modes = tuple(dict.fromkeys(str(m) for m in modes))
    groups = tuple(dict.fromkeys(str(g) for g in groups))
    budgets = tuple(sorted({int(b) for b in budgets}))
    if not budgets or budgets[0] <= 0:
        raise EvalError("word budgets must be positive integers")
    if limit <= 0:
        raise EvalError("limit must be positive")
    if modes and not groups:
        raise EvalError("give at least one grouping (page, chunk, mcp)")
    if not modes and not baseline:
        raise EvalError("nothing to measure: give a search mode or keep the baseline")
    for g in groups:
        if g not in DEFAULT_GROUPS:
            raise EvalError(f"grouping must be page, chunk or mcp, not {g!r}")
    check_modes(Vault, modes)
    folder = Path(folder)
    files = split_files(folder)
    if limit_meetings is not None:
        files = files[:max(0, limit_meetings)]
    meetings = [read_meeting(p) for p in files]
    runs = run_names(modes, groups, baseline)

    def queries(m: MeetingData) -> tuple[tuple[Query, ...], tuple[str, ...]]:
        if limit_queries is None:
            return m.specific, m.general
        return m.specific[:limit_queries], m.general[:limit_queries]

    total = sum(len(s) + len(g) for s, g in map(queries, meetings))
    rows: list[dict[str, Any]] = []
    general_rows: list[dict[str, Any]] = []
    times: dict[str, list[float]] = {r: [] for r in runs}
    fallback: dict[str, int] = dict.fromkeys(runs, 0)
    index_info: dict[str, Any] = {"seconds": 0.0}
    empty_gold = 0
    done = 0
    with contextlib.ExitStack() as stack:
        base = work_base(stack, workdir, "kenning-qmsum-")
        inputs = base / "transcripts"
        inputs.mkdir(exist_ok=True)
        for old in inputs.glob("*.json"):
            old.unlink()  # the folder holds exactly the meetings of this run
        written = {write_transcript(m, inputs).name: m for m in meetings}
        root = base / "vault"
        index_info["fresh"] = not (root / ".kenning" / "index.db").exists()
        vault, _ = Vault.init(root)
        stack.callback(vault.close)
        started = time.perf_counter()
        report = connector.sync(vault.root, inputs)  # what `kenning sync meetings DIR` runs
        index_info["sync_seconds"] = time.perf_counter() - started
        sources = meeting_sources(vault.root)
        extra = sorted(set(sources) - set(written))
        if extra:
            raise EvalError(f"{root} holds meetings this run does not ask about "
                            f"({', '.join(extra[:3])}{' …' if len(extra) > 3 else ''}); "
                            f"use a new --workdir or ask for at least as many meetings")
        missing = sorted(set(written) - set(sources))
        if missing:
            raise EvalError(f"the meetings connector wrote no source for {', '.join(missing)} "
                            f"({'; '.join(report.warnings[:3]) or 'no warnings'})")
        if modes:
            forget_activity(vault.root)
            started = time.perf_counter()
            indexed = index_vault(vault, embed=any(m != "lexical" for m in modes))
            index_info["seconds"] = time.perf_counter() - started
            index_info["report"] = report_fields(indexed)
            index_info["embed_error"] = getattr(indexed, "embed_error", None)
        if progress:
            progress(0, total, f"{len(meetings)} meetings synced, indexed in "
                               f"{index_info['seconds']:.1f}s")
        words = LineWords(vault.root)
        maps: dict[str, tuple[str, dict[int, int]]] = {}
        docs: list[tuple[str, int, str]] = []
        for name, meeting in written.items():
            rel = sources[name]
            source = (vault.root / rel).read_text(encoding="utf-8")
            where = turn_lines(source, meeting.transcript, f"{meeting.name}: {rel}")
            maps[meeting.name] = (rel, where)
            lines = source.split("\n")
            docs += [(rel, n, lines[n - 1]) for n in sorted(where.values())]
        lines_index = LineIndex.build(docs) if baseline else None
        search = {f"{m}/{g}": _grouped(vault, m, g) for m in modes for g in groups}
        for meeting in meetings:
            rel, where = maps[meeting.name]
            specific, general = queries(meeting)
            topics = [{(rel, where[t]) for t in turns if t in where}
                      for turns in meeting.topic_turns]
            topics = [t for t in topics if t]
            asked: list[tuple[Query | str, bool]] = [(q, False) for q in specific]
            asked += [(g, True) for g in general]
            for item, is_general in asked:
                if isinstance(item, Query):
                    text = item.text
                    gold = {(rel, where[t]) for t in item.turns if t in where}
                    empty_gold += sum(1 for t in item.turns if t not in where)
                    row: dict[str, Any] = {"meeting": meeting.name, "index": item.index,
                                           "query": text, "gold_turns": len(gold),
                                           "scores": {}}
                else:
                    text, gold = item, set()
                    row = {"meeting": meeting.name, "query": text, "scores": {}}
                for run in runs:
                    started = time.perf_counter()
                    if run == BASELINE:
                        assert lines_index is not None
                        results: Sequence[Any] = baseline_results(lines_index.rank(text))
                    else:
                        found = search[run](text, limit)
                        results = list(found)
                        if getattr(found, "mode", None) != run.split("/")[0]:
                            fallback[run] += 1
                    times[run].append((time.perf_counter() - started) * 1000.0)
                    if is_general:
                        row["scores"][run] = score_general(results, rel, topics, budgets, words)
                    elif gold:
                        row["scores"][run] = score_query(results, gold, budgets, words)
                (general_rows if is_general else rows).append(row)
                done += 1
                if progress:
                    progress(done, total, meeting.name)

    return {
        "benchmark": "qmsum",
        "data": {"folder": str(folder), "meetings": [m.name for m in meetings],
                 "specific_queries": len(rows),
                 "scored": sum(1 for r in rows if r["scores"]),
                 "general_queries": len(general_rows), "empty_gold_turns": empty_gold,
                 "turns": sum(len(m.transcript) for m in meetings), "lines": len(docs)},
        "settings": {"modes": list(modes), "groups": list(groups), "runs": runs,
                     "budgets": list(budgets), "limit": limit, "limit_meetings": limit_meetings,
                     "limit_queries": limit_queries, "baseline": baseline,
                     "cost": "words per line, len(line.split()); overflowing lines skipped"},
        "environment": environment(),
        "index": index_info,
        "latency_ms": {r: latency(v) for r, v in times.items()},
        "fallbacks": {r: n for r, n in fallback.items() if n},
        "scores": _aggregate(rows, runs, budgets),
        "general": _aggregate(general_rows, runs, budgets,
                              ("meeting", "topic_coverage", "words")),
        "queries": rows,
        "general_queries": general_rows,
    }


_ORIGINAL = re.compile(r"^original_file: ['\"]?(.+?)['\"]?$", re.MULTILINE)


def meeting_sources(root: Path) -> dict[str, str]:
    """Input file name → vault path of the meeting source the connector wrote from it (read
    from each source's ``original_file`` field)."""
    out: dict[str, str] = {}
    for path in sorted((root / "sources" / "meetings").rglob("*.md")):
        head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
        m = _ORIGINAL.search(head)
        if m:
            out[m[1]] = path.relative_to(root).as_posix()
    return out


def _grouped(vault: Any, mode: str, group: str) -> Callable[[str, int], Any]:
    """``search(query, limit)`` in one mode and grouping, recording no recall activity."""
    plain = searcher(vault, mode)  # sets mode= (and group="chunk")
    if group == "chunk":
        return plain
    if group == "mcp":  # the MCP tool's defaults; the eval's --limit does not apply
        return lambda q, n: vault.search(q, limit=MCP_LIMIT, mode=mode, group="page",
                                         budget=MCP_BUDGET)
    return lambda q, n: vault.search(q, limit=n, mode=mode, group="page")


def _aggregate(rows: list[dict[str, Any]], runs: Sequence[str], budgets: Sequence[int],
               metrics: Sequence[str] = ("hit", "recall", "words")) -> dict[str, Any]:
    """Each run's mean of each metric per budget (a query with no value for one is left out)."""
    out: dict[str, Any] = {}
    for run in runs:
        picked = [r["scores"][run] for r in rows if run in r["scores"]]
        out[run] = {"queries": len(picked), **{
            metric: {b: _mean([s[metric][b] for s in picked if s[metric][b] is not None])
                     for b in budgets}
            for metric in metrics}}
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# -- output --------------------------------------------------------------------------------------


def to_json(result: dict[str, Any], *, queries: bool = False, indent: int | None = 2) -> str:
    """The result as JSON (budget keys become strings); per-query rows only if asked."""
    data = result if queries else {k: v for k, v in result.items()
                                   if k not in ("queries", "general_queries")}
    return json.dumps(data, indent=indent, ensure_ascii=False)


def format_report(result: dict[str, Any]) -> str:
    """Markdown tables for docs/benchmarks.md: hit and recall per run, general queries, timing."""
    s, d = result["settings"], result["data"]
    budgets: list[int] = s["budgets"]
    runs: list[str] = s["runs"]
    heads = [f"@{b}" for b in budgets]
    sc, gen = result["scores"], result["general"]
    n = len(d["meetings"])
    out = [f"QMSum evidence — {n} meeting{'s' if n != 1 else ''} ({d['turns']:,} turns) of "
           f"`{d['folder']}` in one vault, {d['scored']:,} specific queries scored; word budgets "
           f"{', '.join(map(str, budgets))}; top {s['limit']} results; page = `kenning search` "
           f"default grouping, chunk = `--group chunk`, mcp = the MCP search tool's defaults (10 "
           f"results within {MCP_BUDGET:,} tokens).", ""]
    for key, title in (("hit", "Evidence hit (any gold turn inside the budget)"),
                       ("recall", "Evidence recall (share of gold turns inside the budget)")):
        out += [f"**{title}**", ""]
        out += table(["run", "queries", *heads],
                      [[r, f"{sc[r]['queries']:,}", *[fmt(sc[r][key][b]) for b in budgets]]
                       for r in runs])
        out.append("")
    out += ["**Words taken (mean per specific query; the budget is a ceiling)**", ""]
    out += table(["run", *heads], [[r, *[fmt0(sc[r]["words"][b]) for b in budgets]]
                                    for r in runs])
    out.append("")
    if d["general_queries"]:
        out += [f"**General queries ({d['general_queries']:,}; no gold turns, and most are the "
                f"same words, \"Summarize the whole meeting.\"): share with a line of the "
                f"meeting taken / topic coverage, the share of its topics with a taken line**", ""]
        out += table(["run", *heads], [[r, *[
            f"{fmt(gen[r]['meeting'][b])} / {fmt(gen[r]['topic_coverage'][b])}"
            for b in budgets]] for r in runs])
        out.append("")
    idx = result["index"]
    out.append(f"**Timing** — sync {idx['sync_seconds']:.1f} s, index {idx['seconds']:.1f} s "
               f"({'fresh' if idx.get('fresh') else 're-used vault, incremental'}; "
               f"{d['lines']:,} turn lines); {result['environment']['machine']}")
    out.append("")
    out += table(["run", "queries", "p50 ms", "p95 ms", "mean ms"],
                  [[r, f"{v['queries']:,}", fmt_ms(v["p50"]), fmt_ms(v["p95"]), fmt_ms(v["mean"])]
                   for r, v in result["latency_ms"].items()])
    for run, count in result.get("fallbacks", {}).items():
        out += ["", f"**Warning**: {run} searched in another mode on {count:,} queries (no "
                    f"vectors?)."]
    if idx.get("embed_error"):
        out += ["", f"**Warning**: embedding failed: {idx['embed_error']}"]
    if d["empty_gold_turns"]:
        out += ["", f"{d['empty_gold_turns']:,} gold turns have no text (no line in the source "
                    f"file) and are left out of their queries' denominators."]
    return "\n".join(out) + "\n"
