"""Recall: lexical (BM25), dense or hybrid search over chunks, grouped by page, cited by line.

The query is parsed (:mod:`kenning.recall.query`) into a structured full-text query the store
matches and ranks (``Store.match_chunks``: every term first, any term when that finds too
little); the dense arm (:mod:`kenning.recall.dense`) ranks by meaning; hybrid fuses both by
rank. Chunk scores are grouped by page and weighed by how many query terms the page covers
(and a date the query names); the page signals (backlinks, recency, type, folder) then add a
bonus scaled to the query's own spread of evidence, so that they break near-ties and never
overturn a clear lead (see :func:`signal_bonus`). A page whose title or alias *is* the query
ranks first. Evidence lines, highlights and snippets come from :mod:`kenning.recall.citations`;
filling a token budget is :mod:`kenning.recall.budget`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from kenning.index.chunking import heading_at
from kenning.index.indexer import norm_name
from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store, TextQuery
from kenning.recall import dense as dense_arm
from kenning.recall import when
from kenning.recall.budget import (
    BUDGET_PASSAGES_PER_PAGE,
    BUDGET_PER_PASSAGE,
    estimate_tokens,
    group_by_page,
    inside_spans,
    within_budget,
)
from kenning.recall.citations import (
    CLOSE,
    OPEN,
    clip,
    evidence_lines,
    highlights,
    holds_words,
    how_found,
    marked_terms,
    term_rarity,
    trim_overlapping,
    wanted_terms,
    whole_chunk,
)
from kenning.recall.dense import DenseArm
from kenning.recall.query import Query, parse_query
from kenning.recall.results import Hit, Result, Results, cite
from kenning.recall.signals import (
    Signals,
    backlink_counts,
    evidence_spread,
    page_factors,
    signal_bonus,
    type_hints,
)

# The search's vocabulary lives in its own modules; callers import it from here too.
__all__ = ["DenseArm", "Filters", "Hit", "Query", "Result", "Results", "Signals", "cite",
           "estimate_tokens", "evidence_spread", "parse_query", "search", "signal_bonus",
           "type_hints"]

CANDIDATE_CHUNKS = 200
POOL_PAGES = 30  # pages whose evidence is read first; more when the ranking needs them
ALL_TERMS_ENOUGH = 10  # pages matching every term below which any term may match
CONTEXT_SOURCES = 50  # the best lexical chunks whose neighbours get lexical context (hybrid)
EXACT_TITLE_BOOST = 1000.0
_DEFAULT_SIGNALS = Signals()


@dataclass(frozen=True)


class Filters:
    """Restrictions on which pages may match."""

    types: Sequence[str] = ()
    domains: Sequence[str] = ()
    folders: Sequence[str] = ()
    since: str | None = None
    until: str | None = None
    entity: int | None = None  # page id: only pages that link to it or mention it (or itself)
    as_of: str | None = None   # only pages that existed then; facts judged as of then
    tags: Sequence[str] = ()   # only pages with every one of these tags (or a tag nested in it)
    mounts: Sequence[str] | None = None  # only pages of these mounts ('' the vault); None: all


def search(store: Store, text: str, *, filters: Filters = Filters(), limit: int = 10,
           mode: str = "lexical", dense: DenseArm | None = None,
           signals: Signals = _DEFAULT_SIGNALS,
           activity: dict[str, str] | None = None, today: str | None = None,
           explain: bool = False, budget: int | None = None, group: str = "page",
           reranker: Any = None, near: dict[int, int] | None = None) -> Results:
    """Search chunks lexically, densely or both (RRF), apply signals, cite lines.

    ``near`` (chunk id -> distance in the code graph, from ``--near-symbol``) raises the
    chunks structurally close to a symbol and adds those no arm found, below what matched.

    ``reranker`` (see :mod:`kenning.recall.rerank`) re-orders the top of the fused order.

    ``group="page"`` returns one result per page with its best chunks (for reading);
    ``group="chunk"`` one result per chunk, best passages first, at most ``passages_per_page``
    from a page (for filling a context window: the budget goes to the best evidence first).

    The stages: parse the query; rank candidate chunks in each arm; fuse the arms (then weigh
    speakers, rerank); score the pages (coverage, signals, citations and highlights) in a pool
    that grows until the ranking is settled; fill the budget.
    """
    if group not in ("page", "chunk"):
        raise ValueError(f"group must be page or chunk, not {group!r}")
    if mode not in ("lexical", "dense", "hybrid"):
        raise ValueError(f"search mode must be lexical, dense or hybrid, not {mode!r}")
    shown, wanted_results = group, limit
    group, limit, per_page = _result_shape(group, limit, budget, signals)
    out = Results()
    out.notes, out.mode = [], mode
    query = parse_query(text)
    if mode != "lexical" and dense is None:
        out.notes.append("no vectors available: searched lexically")
        mode = out.mode = "lexical"
    if query.empty and mode == "lexical":
        return out
    where, params = _filter_sql(filters)

    arms = _candidates(store, query, mode, dense, where, params, signals)
    if arms.failure is not None:  # the embedding server went away between two searches
        out.notes.append(f"{arms.failure}: searched lexically")
        mode = out.mode = "lexical"
        if query.empty:
            return out
    fused, info = _fuse(store, arms, mode, dense, signals)
    if near:
        _add_near(store, fused, info, near, where, params)
    if signals.speaker_factor != 1.0 and query.terms and fused:
        _weigh_speakers(store, fused, query, signals.speaker_factor)
    if reranker is not None:  # the fused order is final here; reranking re-orders its top
        from kenning.recall.rerank import rerank_fused

        out.notes.extend(rerank_fused(store, text, fused, reranker))

    ranked = _rank_pages(store, text, query, fused, info, where, params, filters=filters,
                         mode=mode, group=group, limit=limit, per_page=per_page,
                         signals=signals, activity=activity, today=today, explain=explain)
    if budget:
        ranked = within_budget(store, ranked, budget, wanted_results, by_page=shown == "page")
        if shown == "page":
            ranked = group_by_page(ranked)
    out.extend(ranked)
    return out


def _result_shape(group: str, limit: int, budget: int | None, signals: Signals
                  ) -> tuple[str, int, int]:
    """(grouping ranked, how many results, passages a page may give) for a search.

    A budget is filled with passages, best first, whatever the grouping: one page result with
    two hits left most of a long transcript's evidence out (docs/decisions.md). The passages are
    ranked as with -g chunk, more of them than results shown, and grouped under their page
    afterwards when results are pages.
    """
    if budget:
        group = "chunk"
        limit = max(limit, min(CANDIDATE_CHUNKS, budget // BUDGET_PER_PASSAGE))
    per_page = max(3, signals.chunks_per_page if group == "page" else signals.passages_per_page)
    if budget:
        per_page = max(per_page, BUDGET_PASSAGES_PER_PAGE)
    return group, limit, per_page


Rows = list[tuple[int, int, int, str, float]]  # (chunk id, page id, first line, heading, score)


@dataclass


class _Arms:
    """What each arm ranked: chunk rows best first, the lexical neighbour context, and why the
    dense arm failed (None when it did not)."""

    lexical: Rows
    dense: Rows
    context: dict[int, float]
    failure: str | None = None


def _candidates(store: Store, query: Query, mode: str, dense: DenseArm | None, where: str,
                params: list[object], signals: Signals) -> _Arms:
    """Each arm's candidate chunks, best first.

    The dense arm (wait for the query vector, then a matrix product) runs on a worker thread
    while this one runs the lexical SQL: numpy and SQLite both release the GIL, so on two cores
    a hybrid search costs about the slower arm, not the sum. The store stays on this thread
    (the worker touches only numpy arrays).
    """
    found: Future[list[tuple[int, float]]] | None = None
    if mode != "lexical" and dense is not None:
        allowed = dense_arm.allowed_chunks(store, where, params) if where else None
        found = dense_arm.worker().submit(dense_arm.candidates, dense, allowed)
    lexical: Rows = []
    if mode != "dense" and not query.empty:
        if query.size > 1:  # AND first, OR only when AND finds too little
            lexical = _rank_chunks(store, query.text_query(all_terms=True), where, params)
        # A fixed threshold, not the limit: which pass ranks must not depend on how many
        # results were asked for, or the first result would.
        if len({r[1] for r in lexical}) < ALL_TERMS_ENOUGH:
            lexical = _rank_chunks(store, query.text_query(), where, params)
    context: dict[int, float] = {}
    if mode == "hybrid" and signals.lexical_context_weight:
        lexical, context = _with_neighbours(store, lexical, signals.lexical_context_weight)
    arms = _Arms(lexical, [], context)
    if found is not None:
        from kenning.errors import KenningError

        try:
            arms.dense = _chunk_rows(store, found.result())
        except KenningError as exc:
            arms.failure = exc.message
    return arms


def _fuse(store: Store, arms: _Arms, mode: str, dense: DenseArm | None, signals: Signals
          ) -> tuple[dict[int, dict[str, float]], dict[int, tuple[int, int, str]]]:
    """Chunk id → its parts (each arm's score and rank, context, ``score``) and chunk id →
    (page id, first line, heading). Hybrid fuses the arms' ranks (weighted RRF); one arm keeps
    its own scores."""
    fused: dict[int, dict[str, float]] = {}
    info: dict[int, tuple[int, int, str]] = {}
    for arm, rows in (("lexical", arms.lexical), ("dense", arms.dense)):
        for rank, (chunk_id, page_id, start, heading, score) in enumerate(rows, 1):
            parts = fused.setdefault(chunk_id, {})
            parts[arm] = score
            parts[arm + "_rank"] = rank
            info[chunk_id] = (page_id, start, heading)
    for chunk_id, near in arms.context.items():
        fused[chunk_id]["lexical_context"] = near
    if mode == "hybrid" and dense is not None:
        for chunk_id in dense_arm.not_embedded(store, dense, [r[0] for r in arms.lexical]):
            fused[chunk_id]["no_vector"] = 1.0
    for parts in fused.values():
        if mode == "hybrid":
            parts["score"] = sum(weight / (signals.rrf_k + parts[a + "_rank"])
                                 for a, weight in zip(("lexical", "dense"), signals.arm_weights,
                                                      strict=True) if a + "_rank" in parts)
            if "no_vector" in parts:
                # Not embedded yet (written a moment ago, or the embedder was down): the dense
                # arm cannot have ranked it, so its words count for that arm too, rather than
                # the chunk losing the dense arm's share for lack of a vector.
                parts["score"] += signals.arm_weights[1] / (signals.rrf_k
                                                            + parts["lexical_rank"])
        else:
            parts["score"] = parts.get(mode, 0.0)
    return fused, info


def _rank_pages(store: Store, text: str, query: Query, fused: dict[int, dict[str, float]],
                info: dict[int, tuple[int, int, str]], where: str, params: list[object], *,
                filters: Filters, mode: str, group: str, limit: int, per_page: int,
                signals: Signals, activity: dict[str, str] | None, today: str | None,
                explain: bool) -> list[Result]:
    """The ranked results: pages (or their passages) scored, signalled and cited.

    The costly part (evidence lines, highlights) runs only on a pool of pages, but the ranking
    must be the one over every candidate, whatever the limit: pages are pooled in the order of
    a bound on their final score, and the pool grows until no page left out could still reach
    the last result kept (the threshold algorithm).
    """
    best: dict[int, list[int]] = {}
    for chunk_id in sorted(fused, key=lambda c: -fused[c]["score"]):
        best.setdefault(info[chunk_id][0], []).append(chunk_id)
    spread = evidence_spread([fused[chunks[0]]["score"] for chunks in best.values()], signals)
    if group == "chunk":  # a passage's evidence also counts its page's best passage
        spread *= 1.0 + max(0.0, signals.page_weight)
    ceiling = _score_ceilings(store, best, fused, mode, group, signals, activity, today, text,
                              spread)
    exact = _exact_matches(store, text, where, params)
    for page_id, _ in exact:  # always read in full: outside the pool it would cite its title
        if page_id in ceiling:
            ceiling[page_id] += EXACT_TITLE_BOOST
    order = sorted(best, key=lambda pid: (-ceiling[pid], pid))
    pool = max(limit * 3, POOL_PAGES, sum(1 for pid, _ in exact if pid in ceiling))
    scored: dict[int, Result] = {}
    read = 0
    while True:
        # A page's score depends on that page alone, so a second round reads only new pages.
        scored.update(_score_pages(
            store, text, query, order[read:pool], best, fused, info, exact if not read else [],
            filters=filters, mode=mode, group=group, per_page=per_page, signals=signals,
            activity=activity, today=today, explain=explain, spread=spread))
        read = pool
        ranked = _distinct([replace(r) for r in _ranked(scored.values(), fused, group,
                                                         signals.page_weight)], limit)
        if pool >= len(order) or (len(ranked) == limit
                                  and ranked[-1].score > ceiling[order[pool]]):
            return ranked
        # Every page that could still reach the last result kept, in one more round.
        floor = ranked[-1].score if len(ranked) == limit else -math.inf
        pool = max(pool + 1, sum(1 for pid in order if ceiling[pid] >= floor))


def _ranked(pages: Iterable[Result], fused: dict[int, dict[str, float]], group: str,
            page_weight: float) -> list[Result]:
    """Scored pages in rank order, or their passages when results are chunks."""
    if group == "chunk":
        return sorted((passage for r in pages for passage in _passages(r, fused, page_weight)),
                      key=lambda r: (-r.score, r.path, r.hits[0].start_line))
    return sorted(pages, key=lambda r: (-r.score, r.path))


def _score_ceilings(store: Store, best: dict[int, list[int]],
                    fused: dict[int, dict[str, float]], mode: str, group: str,
                    signals: Signals, activity: dict[str, str] | None, today: str | None,
                    text: str, spread: float) -> dict[int, float]:
    """Per candidate page, a score its results cannot exceed (the exact-title boost aside).

    The page's best chunk (plus what more chunks or the page prior add), plus the signal
    bonus, which is known without reading the chunks; the evidence factors (coverage, stale
    facts) never raise a score above 1×.
    """
    pids = list(best)
    meta = _page_meta(store, pids)
    backlinks = backlink_counts(store, pids)
    named, hinted = when.spans(text), type_hints(text)
    out: dict[int, float] = {}
    for pid in pids:
        scores = [fused[c]["score"] for c in best[pid]]
        top = scores[0]
        if group == "chunk":
            top *= 1.0 + max(0.0, signals.page_weight)
        elif mode == "lexical":
            top += 0.1 * sum(scores[1:3])
        factors = page_factors(meta[pid], backlinks.get(pid, 0), signals, activity, today,
                                named, hinted)
        named_date = factors.pop("date", 1.0)
        out[pid] = (top * named_date * max(1.0, signals.superseded_factor)
                    + signal_bonus(factors, spread, signals))
    return out


def _score_pages(store: Store, text: str, query: Query, shortlist: list[int],
               best: dict[int, list[int]], fused: dict[int, dict[str, float]],
               info: dict[int, tuple[int, int, str]],
               exact: list[tuple[int, tuple[str, str, str | None]]], *, filters: Filters,
               mode: str, group: str, per_page: int, signals: Signals,
               activity: dict[str, str] | None, today: str | None, explain: bool,
               spread: float) -> dict[int, Result]:
    """Score the pages of ``shortlist`` (and exact title matches) on their evidence, plus the
    bonus of their signals (scaled to ``spread``)."""

    # Mark the matches only in the chunks that can still make the answer.
    rarity = term_rarity(store, query) if query.size > 1 else {}
    chunk_ids = [c for pid in shortlist for c in best[pid][:per_page]]
    marked = highlights(store, query, chunk_ids) if not query.empty else {}
    plain = _plain_bodies(store, [c for c in chunk_ids if c not in marked])
    meta = _page_meta(store, shortlist)
    pages: dict[int, Result] = {}
    page_chunks: dict[int, list[Hit]] = {}
    covered: dict[int, set[str]] = {}
    title_only: set[int] = set()
    texts: dict[int, dict[int, str]] = {}  # chunk id → its cited lines' text
    why: dict[int, str] = {}  # chunk id → what found it when its cited lines hold no words
    wanted = wanted_terms(query)
    for page_id in shortlist:
        path, title, ptype = meta[page_id][:3]
        pages[page_id] = Result(path=path, title=title, type=ptype, score=0.0)
        page_chunks[page_id] = []
        covered[page_id] = set()
        for chunk_id in best[page_id][:per_page]:
            _, start, heading = info[chunk_id]
            score = fused[chunk_id]["score"]
            parts = fused[chunk_id]
            if chunk_id in marked:
                body, title_marks = marked[chunk_id]
                first, last, snippet, found = evidence_lines(body, start, query, rarity,
                                                        meta[page_id][3])
                covered[page_id] |= found | marked_terms(title_marks)
                if not found and "dense" not in parts:
                    title_only.add(chunk_id)  # matched by the page title alone: no evidence
                if not found:
                    in_title = OPEN in title_marks or any(r in title_marks for r in query.cjk)
                    why[chunk_id] = "name" if in_title else "heading"
                # Found at least as much by meaning as by words: the whole chunk is the
                # evidence — widened to the lines that hold the query's words when it has none
                # of them (they sat in a title or heading line, or a frontmatter field).
                if "dense" in parts and (not found or parts["dense_rank"] <= parts.get(
                        "lexical_rank", parts["dense_rank"])):
                    words = (first, last)
                    first, last, snippet = whole_chunk(body, start, meta[page_id][3])
                    lines = body.split("\n")
                    if found and not any(holds_words(lines[n - start], query)
                                         for n in range(first, last + 1)):
                        first, last, snippet = whole_chunk(body, start, meta[page_id][3],
                                                            keep=words)
            else:
                # Found by meaning alone (or next to a match): the evidence is the chunk's text
                # (frontmatter left out).
                first, last, snippet = whole_chunk(plain.get(chunk_id, ""), start,
                                                    meta[page_id][3])
            why.setdefault(chunk_id, "meaning" if "dense" in parts else "context")
            body_lines = (marked[chunk_id][0] if chunk_id in marked
                          else plain.get(chunk_id, "")).split("\n")
            cited = body_lines[last - start] if 0 <= last - start < len(body_lines) else ""
            answer = ""
            if _QUESTION.search(cited.replace(OPEN, "").replace(CLOSE, "")):
                # A question is evidence only with its answer: cite the line that follows.
                answer = _line_at(store, page_id, last + 1)
                if answer:
                    last += 1
                    snippet = clip(f"{snippet} {answer}")
            texts[chunk_id] = {n: body_lines[n - start] if n - start < len(body_lines) else answer
                               for n in range(first, last + 1)}  # for trim_overlapping
            page_chunks[page_id].append(Hit(chunk_id, first, last, heading, score, snippet))

    by_name: set[int] = set()  # pages cited by their name alone (their hits say how found)
    for page_id, exact_title in exact:
        if page_id not in pages:
            pages[page_id] = Result(path=exact_title[0], title=exact_title[1],
                                    type=exact_title[2], score=0.0)
            page_chunks[page_id] = _title_hit(store, page_id, text)
            by_name.add(page_id)
            covered[page_id] = set(wanted)
            meta[page_id] = (*exact_title, 1, None, None, None)
        pages[page_id].exact = True

    sections = _chunk_sections(store, [h.chunk_id for hs in page_chunks.values() for h in hs])
    backlinks = backlink_counts(store, list(pages))
    named = when.spans(text)
    hinted = type_hints(text)
    stale = _stale_fact_lines(store, list(pages), filters.as_of or today)
    for page_id, result in pages.items():
        hits = sorted(page_chunks[page_id], key=lambda h: -h.score)
        # A chunk matched through the page title alone is no evidence when others are.
        with_evidence = [h for h in hits if h.chunk_id not in title_only]
        hits = _name_sections(trim_overlapping(with_evidence or hits, texts), sections)
        if page_id not in by_name:
            hits = [how_found(h, texts.get(h.chunk_id, {}), why, query) for h in hits]
        best_score = hits[0].score if hits else 0.0
        # More matching chunks help a page a little, but only chunks that matched the words:
        # the dense arm scores every chunk, which would favour long pages.
        extra = sum(h.score for h in hits[1:3] if "lexical" in fused.get(h.chunk_id, {})) * 0.1
        if mode == "hybrid":
            extra = 0.0
        # What the evidence is worth (coverage, stale facts, the date the query names)
        # multiplies it; the page signals add a bonus in the evidence's own units.
        held: dict[str, float] = {}
        if wanted and mode == "lexical":
            held["coverage"] = 0.5 + 0.5 * len(covered[page_id] & wanted) / len(wanted)
        if meta[page_id][4] in ("superseded", "invalidated") or (
                hits and all(inside_spans(h, stale.get(page_id, ())) for h in hits[:1])):
            held["superseded"] = signals.superseded_factor
        n = backlinks.get(page_id, 0)
        factors = page_factors(meta[page_id], n, signals, activity, today, named, hinted)
        if "date" in factors:  # the query named the page's date: evidence, not a prior
            held["date"] = factors.pop("date")
        result.backlinks = n
        result.matched = sorted(covered[page_id] & wanted)
        result.hits = hits[: signals.chunks_per_page if group == "page" else per_page]
        result.factor = math.prod(held.values())
        result.bonus = signal_bonus(factors, spread, signals)
        result.score = (best_score + extra) * result.factor + result.bonus
        if result.exact:
            result.score += EXACT_TITLE_BOOST
        if explain:
            top = result.hits[0].chunk_id if result.hits else None
            result.explain = {"mode": mode, **_arms(fused, top), "chunk": round(best_score, 4),
                              "more_chunks": round(extra, 4),
                              **{k: round(v, 4) for k, v in {**held, **factors}.items()},
                              "spread": float(f"{spread:.6g}"),
                              "signals": float(f"{result.bonus:.6g}"),
                              "exact_title": result.exact, "score": round(result.score, 4)}
    return pages


# A transcript turn: "- **Name** (time): text", "- **[00:01:02] Name:** text", "**Name:** text".


_TURN = re.compile(r"^\s*(?:[-*]\s+)?\*\*(?:\[[^\]]*\]\s*)?([^*\n:\]]{1,60}?):?\*\*", re.M)


def _weigh_speakers(store: Store, fused: dict[int, dict[str, float]], query: Query,
                    factor: float) -> None:
    """Turns spoken by someone the query does not name count ``factor``, when it names one.

    "What did Sarah say about pricing?" asks for Sarah's turns: in a transcript, the other
    people's turns that use the same words are weaker evidence. Nothing changes when the query
    names no speaker of the candidates, or names them all.
    """
    # Turns live in transcripts (source pages): only their chunks are read.
    in_sources = recall_sql.source_chunks(store, list(fused))
    if not in_sources:
        return
    bodies = _plain_bodies(store, in_sources)
    speakers: dict[int, set[str]] = {}
    everyone: set[str] = set()
    terms = set(query.terms)
    for chunk_id, body in bodies.items():
        names = {m.casefold().strip() for m in _TURN.findall(body)}
        if names:
            speakers[chunk_id] = names
            everyone |= names
    named = {n for n in everyone if n in terms or n.split()[0] in terms}
    if not named or named == everyone:
        return
    for chunk_id, names in speakers.items():
        if not names & named:
            parts = fused[chunk_id]
            parts["speaker"] = factor
            parts["score"] *= factor


_QUESTION = re.compile(r"\?\s*(?:\[[^\]]*\]\s*)?$")


def _line_at(store: Store, page_id: int, line: int) -> str:
    """The text of one line of an indexed page ("" when blank, a heading, or past the end)."""
    row = recall_sql.chunk_at_line(store, page_id, line)
    if row is None:
        return ""
    lines = row[1].split("\n")
    text = lines[line - row[0]].strip() if line - row[0] < len(lines) else ""
    return "" if text.startswith("#") else text


_NOT_WORD = re.compile(r"\W+")


def _distinct(ranked: list[Result], limit: int) -> list[Result]:
    """Drop hits whose evidence repeats a better hit's (the same text pasted in two notes)."""
    seen: set[str] = set()
    out: list[Result] = []
    for result in ranked:
        hits = []
        for hit in result.hits:
            key = _NOT_WORD.sub(" ", hit.snippet.casefold()).strip()
            if key and key in seen:
                continue
            seen.add(key)
            hits.append(hit)
        if not hits:
            continue
        result.hits = hits
        out.append(result)
        if len(out) == limit:
            break
    return out


def _arms(fused: dict[int, dict[str, float]], chunk_id: int | None) -> dict[str, float]:
    """A chunk's part of an explanation: each arm's score and rank, and its own factors."""
    return {k: round(v, 4) for k, v in fused.get(chunk_id, {}).items()  # type: ignore[arg-type]
            if k != "score"}


def _passages(result: Result, fused: dict[int, dict[str, float]], page_weight: float
              ) -> list[Result]:
    """One result per hit of a page result, each scored by its own chunk, plus its page's best
    chunk × ``page_weight``, times the page signals.

    The page term is a hierarchical prior: a passage from a page (a session, a thread) that holds
    strong evidence is likelier evidence too than an equally scored passage from a page that
    does not (LoCoMo: +0.02 @1000, decisions.md).
    """
    if not result.hits:
        return [result]
    out = []
    page = max(h.score for h in result.hits) * page_weight
    for index, hit in enumerate(result.hits):
        score = (hit.score + page) * result.factor + result.bonus
        if result.exact and index == 0:
            score += EXACT_TITLE_BOOST
        explain = None
        if result.explain:
            page_part = {k: v for k, v in result.explain.items()
                         if k not in _arms(fused, result.hits[0].chunk_id)}
            explain = {**page_part, **_arms(fused, hit.chunk_id),
                       "chunk": round(hit.score, 4), "page": round(page, 4),
                       "score": round(score, 4)}
        out.append(Result(path=result.path, title=result.title, type=result.type, score=score,
                          hits=[hit], exact=result.exact and index == 0,
                          backlinks=result.backlinks, matched=result.matched, explain=explain,
                          factor=result.factor, bonus=result.bonus))
    return out


def _stale_fact_lines(store: Store, page_ids: list[int], as_of: str | None
                      ) -> dict[int, set[int]]:
    """Lines of facts that do not hold on ``as_of`` (today when searching the present).

    Today, a fact superseded or invalidated does not hold; on a past date a superseded fact may
    have (its validity dates decide), an invalidated one never did.
    """
    if not page_ids:
        return {}
    today = date.today().isoformat()
    return recall_sql.stale_fact_lines(store, page_ids, as_of or today, today)


NEAR_BOOST = 1.0  # a chunk at graph distance d scores × (1 + NEAR_BOOST / (1 + d))


def _add_near(store: Store, fused: dict[int, dict[str, float]],
              info: dict[int, tuple[int, int, str]], near: dict[int, int], where: str,
              params: list[object]) -> None:
    """Fold the code graph's near chunks into the fused order (see :func:`search`)."""
    floor = min((p["score"] for p in fused.values()), default=1.0)
    allowed = set(near)
    if where:
        allowed = set(recall_sql.chunks_matching(store, sorted(near), where, params))
    missing = [(c, 0.0) for c in near if c not in fused and c in allowed]
    for chunk_id, page_id, start, heading, _score in _chunk_rows(store, missing):
        info[chunk_id] = (page_id, start, heading)
        fused[chunk_id] = {"score": floor * 0.5 / (1 + near[chunk_id])}
    for chunk_id, distance in near.items():
        parts = fused.get(chunk_id)
        if parts is not None and chunk_id in allowed:
            parts["near_symbol"] = float(distance)
            parts["score"] *= 1 + NEAR_BOOST / (1 + distance)


def _chunk_rows(store: Store, found: list[tuple[int, float]]
                ) -> list[tuple[int, int, int, str, float]]:
    if not found:
        return []
    info = recall_sql.chunk_rows(store, [c for c, _ in found])
    return [(c, *info[c], score) for c, score in found if c in info]


def _plain_bodies(store: Store, chunk_ids: list[int]) -> dict[int, str]:
    if not chunk_ids:
        return {}
    return recall_sql.chunk_bodies(store, chunk_ids)


def _rank_chunks(store: Store, query: TextQuery, where: str, params: list[object]
                 ) -> list[tuple[int, int, int, str, float]]:
    return store.match_chunks(query, where=where, params=params, limit=CANDIDATE_CHUNKS)


def _with_neighbours(store: Store, rows: list[tuple[int, int, int, str, float]],
                     weight: float) -> tuple[list[tuple[int, int, int, str, float]],
                                             dict[int, float]]:
    """The lexical arm with context: a chunk also scores its best neighbour's BM25 × ``weight``
    (the chunks just before and after it on its page, among the ``CONTEXT_SOURCES`` best
    matches), and a chunk next to a match joins the ranking on that alone. Returns the
    re-ranked rows and each chunk's neighbour part.

    The words of a question often sit in the turn before the answer ("what did you paint?" —
    "here's the one I did last week"); the dense arm gets the same context from its vectors.
    """
    if not rows:
        return rows, {}
    own = {r[0]: r[4] for r in rows}
    info = {r[0]: r[1:4] for r in rows}
    lead = {r[0]: r[4] for r in rows[:CONTEXT_SOURCES]}  # weaker matches lend too little
    # A page's chunks are numbered in order when it is indexed, so a neighbour is id ± 1; the
    # page and place are checked, never assumed.
    wanted = sorted({c + d for c in lead for d in (-1, 0, 1)})
    found = recall_sql.chunk_places(store, wanted)
    near: dict[tuple[int, int], float] = {}
    for chunk_id, page_id, place, _, _ in found:
        if chunk_id in lead:
            for key in ((page_id, place - 1), (page_id, place + 1)):
                near[key] = max(near.get(key, 0.0), lead[chunk_id])
    context: dict[int, float] = {}
    for chunk_id, page_id, place, start, heading in found:
        if (page_id, place) in near:
            context[chunk_id] = near[page_id, place] * weight
            info.setdefault(chunk_id, (page_id, start, heading))
    scored = sorted(info, key=lambda c: (-(own.get(c, 0.0) + context.get(c, 0.0)), c))
    kept = scored[:CANDIDATE_CHUNKS]
    return ([(c, *info[c], own.get(c, 0.0) + context.get(c, 0.0)) for c in kept],
            {c: context[c] for c in kept if c in context})


def _page_meta(store: Store, page_ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """path, title, type, body_start, status, last change, date per page."""
    if not page_ids:
        return {}
    return recall_sql.page_meta(store, page_ids)


def _filter_sql(filters: Filters) -> tuple[str, list[object]]:
    return recall_sql.filter_sql(filters)


def _exact_matches(store: Store, text: str, where: str, params: list[object]
                   ) -> list[tuple[int, tuple[str, str, str | None]]]:
    norm = norm_name(text)
    if not norm:
        return []
    rows = recall_sql.exact_names(store, norm, where, params)
    return [(r[0], (r[1], r[2], r[3])) for r in rows]


def _title_hit(store: Store, page_id: int, name: str) -> list[Hit]:
    """Cite the H1 and summary (else the first line of the body) of a page found by its name
    alone; the hit says ``found="name"`` when no cited line holds the name (a file name, an
    alias)."""
    row = recall_sql.title_lines(store, page_id)
    assert row is not None
    start = row[3] or row[4] or 1  # the H1 names the page; the summary under it says what it is
    end = max(start, row[1] or start)
    chunk = recall_sql.chunk_before(store, page_id, start)
    if chunk is None:
        return [Hit(0, start, end, "", 0.0, clip(row[2] or ""), "name")]
    body = chunk[4].split("\n")
    lines = body[start - chunk[3] : (end if row[0] else len(body) + chunk[3]) - chunk[3] + 1]
    if not row[0]:  # no summary: the H1 alone, or the body's first non-blank line
        first = next((i for i, line in enumerate(lines) if line.strip()), 0)
        lines = lines[first : first + 1]
        start = end = start + first
    # A summary running past the chunk is still cited whole; its own text fills the snippet.
    text = " ".join(line.strip() for line in lines if line.strip())
    if row[0] and row[1] and row[1] >= chunk[3] + len(body):
        text = f"{lines[0].strip() if lines else ''} {row[2] or ''}".strip()
    heading = heading_at(chunk[1], json.loads(chunk[2] or "[]"), start)
    found = None if norm_name(name) in norm_name(text) else "name"
    return [Hit(chunk[0], start, end, heading, 0.0, clip(text or row[2] or ""), found)]


def _chunk_sections(store: Store, chunk_ids: list[int]
                    ) -> dict[int, tuple[str, list[Any]]]:
    """Chunk id → (heading at its first line, the headings that start inside it)."""
    if not chunk_ids:
        return {}
    return recall_sql.chunk_sections(store, chunk_ids)


def _name_sections(hits: list[Hit], sections: dict[int, tuple[str, list[Any]]]) -> list[Hit]:
    """Name each hit by the section of its first cited line, not its chunk's first line."""
    out = []
    for hit in hits:
        known = sections.get(hit.chunk_id)
        if known is not None:
            hit = replace(hit, heading=heading_at(known[0], known[1], hit.start_line))
        out.append(hit)
    return out

