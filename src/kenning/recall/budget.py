"""Filling a token budget: passages in rank order while they fit, then widened by context.

A passage costs the tokens of the lines it cites; passages of a page that touch are merged;
tokens left over widen the kept passages with their neighbouring lines, best passages first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store
from kenning.recall.citations import (
    FIELD,
)
from kenning.recall.results import Hit, Result

BUDGET_PER_PASSAGE = 25  # tokens: with a budget, ask for about budget / this many passages
BUDGET_PASSAGES_PER_PAGE = 40  # with a budget a page may give this many passages (not 10)
HIT_FRAME, PAGE_FRAME, ANSWER_FRAME = 16, 12, 24  # tokens of JSON around a hit, a page, an answer
LEAD_CONTEXT = 2  # non-blank lines each side a passage takes with it, when they fit
CONTEXT_LINES = 12  # with budget left over, a passage grows by up to this many lines each side


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate: about four bytes of UTF-8 per token."""
    return max(1, len(text.encode("utf-8")) // 4)


def within_budget(store: Store, results: list[Result], budget: int, most: int,
                   *, by_page: bool) -> list[Result]:
    """Passages in rank order while their text fits ``budget`` tokens, then each kept passage
    widened by its neighbouring lines while tokens are left (best passages first).

    A passage costs the tokens of the lines it cites, not of its snippet: the snippet of a
    budgeted passage *is* its cited text, so the agent gets what the budget paid for. Passages
    of a page that touch are merged into one contiguous range. At most ``most`` results: pages
    when ``by_page`` (a passage of a page past the last one is skipped), else passages.
    """
    ids = _page_ids(store, {r.path for r in results})
    starts = {pid: meta[3] or 1
              for pid, meta in recall_sql.page_meta(store, sorted(set(ids.values()))).items()}
    kept: list[Result] = []
    spent = ANSWER_FRAME
    lines: dict[str, dict[int, str]] = {}
    for result in results:
        page_id = ids.get(result.path)
        if page_id is None or not result.hits:
            continue
        if by_page and len({r.path for r in kept} | {result.path}) > most:
            continue
        if not by_page and len(kept) == most:
            break
        hit = result.hits[0]
        cache = lines.setdefault(result.path, {})
        lo, hi = max(1, hit.start_line - 4 * LEAD_CONTEXT), hit.end_line + 4 * LEAD_CONTEXT
        if any(n not in cache for n in range(hit.start_line, hit.end_line + 1)):
            cache.update(_lines_of(store, page_id, lo, hi))
        text = _range_text(store, page_id, hit.start_line, hit.end_line, cache)
        passage = replace(result, hits=[replace(hit, snippet=_plain(text))])
        cost = _cost(passage)
        if spent + cost > budget:
            continue  # a shorter passage further down may still fit
        if LEAD_CONTEXT:
            wider = _with_context(store, passage, page_id, starts[page_id], cache, LEAD_CONTEXT)
            if spent + _cost(wider) <= budget:
                passage, cost = wider, _cost(wider)
        spent += cost
        kept.append(passage)
    kept = _merge_touching(kept, lines)
    _widen(store, kept, ids, lines, budget - ANSWER_FRAME - sum(map(_cost, kept)))
    return kept


def _cost(result: Result) -> int:
    """Tokens a budgeted passage costs as an answer carries it: its text, its citation and
    heading, and the JSON around them (keys, score), so the whole answer fits the budget."""
    return sum(estimate_tokens(h.snippet) + estimate_tokens(result.path) + estimate_tokens(
        h.heading) + HIT_FRAME for h in result.hits) + estimate_tokens(result.title) + PAGE_FRAME


def _with_context(store: Store, passage: Result, page_id: int, body_start: int,
                  cache: dict[int, str], lines: int) -> Result:
    """The passage with up to ``lines`` non-blank lines of its page before and after it (not
    into the frontmatter, not past a heading)."""
    hit = passage.hits[0]
    lo, hi = max(1, hit.start_line - 4 * lines), hit.end_line + 4 * lines
    if any(n not in cache for n in range(lo, hi + 1)):
        cache.update(_lines_of(store, page_id, lo, hi))
    start, end = hit.start_line, hit.end_line
    for side in (-1, 1):
        n, added = (start if side < 0 else end) + side, 0
        while added < lines and n in cache and n >= body_start:
            if cache[n].lstrip().startswith("#"):
                break
            if cache[n].strip():
                added += 1
                start, end = (n, end) if side < 0 else (start, n)
            n += side
    text = "\n".join(cache[m] for m in range(start, end + 1) if cache.get(m, "").strip())
    return replace(passage, hits=[replace(hit, start_line=start, end_line=end,
                                          snippet=_plain(text))])


def _plain(text: str) -> str:
    return " ".join(FIELD.sub("", text).split())


def _page_ids(store: Store, paths: set[str]) -> dict[str, int]:
    return recall_sql.page_ids(store, paths) if paths else {}


def _range_text(store: Store, page_id: int, start: int, end: int,
                cache: dict[int, str]) -> str:
    """The text of lines ``start..end`` of an indexed page (blank lines left out)."""
    if any(n not in cache for n in range(start, end + 1)):
        cache.update(_lines_of(store, page_id, start, end))
    return "\n".join(cache[n] for n in range(start, end + 1) if cache.get(n, "").strip())


def _lines_of(store: Store, page_id: int, start: int, end: int) -> dict[int, str]:
    """Line number → text for the lines ``start..end`` of a page, from its chunks."""
    out: dict[int, str] = {}
    for first, body in recall_sql.chunks_over(store, page_id, start, end):
        for i, line in enumerate((body or "").split("\n")):
            out.setdefault(first + i, line)
    for n in range(start, end + 1):
        out.setdefault(n, "")
    return out


def _merge_touching(kept: list[Result], lines: dict[str, dict[int, str]]) -> list[Result]:
    """Merge passages of one page whose ranges overlap or touch (only blank lines between);
    the merged passage keeps the better rank."""
    out: list[Result] = []
    for result in kept:
        hit = result.hits[0]
        cache = lines[result.path]
        for i, other in enumerate(out):
            o = other.hits[0]
            if other.path != result.path:
                continue
            lo, hi = (o, hit) if o.start_line <= hit.start_line else (hit, o)
            if all(not cache.get(n, "").strip() for n in range(lo.end_line + 1, hi.start_line)):
                start, end = min(o.start_line, hit.start_line), max(o.end_line, hit.end_line)
                text = "\n".join(cache.get(n, "") for n in range(start, end + 1)
                                 if cache.get(n, "").strip())
                out[i] = replace(other, hits=[replace(o, start_line=start, end_line=end,
                                                      snippet=_plain(text))])
                break
        else:
            out.append(result)
    return out


def _widen(store: Store, kept: list[Result], ids: dict[str, int],
           lines: dict[str, dict[int, str]], left: int) -> None:
    """Grow kept passages by neighbouring non-blank lines, one line a side in turn, best
    passages first, while ``left`` tokens last: the turns around a hit are often the rest of
    the evidence (an answer spans many turns of a meeting). Never into frontmatter or another
    passage."""
    if left <= 0 or not kept:
        return
    meta = recall_sql.page_meta(store, sorted({ids[r.path] for r in kept}))
    for result in kept:
        hit = result.hits[0]
        cache = lines[result.path]
        cache.update(_lines_of(store, ids[result.path], max(1, hit.start_line - 3 * CONTEXT_LINES),
                               hit.end_line + 3 * CONTEXT_LINES))
    taken = {(r.path, n) for r in kept for n in range(r.hits[0].start_line,
                                                      r.hits[0].end_line + 1)}
    grown = [0] * len(kept)
    for _ in range(2 * CONTEXT_LINES):
        changed = False
        for i, result in enumerate(kept):
            if grown[i] >= 2 * CONTEXT_LINES:
                continue
            hit = result.hits[0]
            cache = lines[result.path]
            body_start = meta[ids[result.path]][3] or 1
            for side in (-1, 1):
                n = hit.start_line - 1 if side < 0 else hit.end_line + 1
                while n in cache and not cache[n].strip() and (result.path, n) not in taken:
                    n += side
                if n < body_start or n not in cache or (result.path, n) in taken:
                    continue
                if cache[n].lstrip().startswith("#"):
                    continue  # a heading ends the passage's section
                start, end = (n, hit.end_line) if side < 0 else (hit.start_line, n)
                text = "\n".join(cache.get(m, "") for m in range(start, end + 1)
                                 if cache.get(m, "").strip())
                wider = replace(result, hits=[replace(hit, start_line=start, end_line=end,
                                                      snippet=_plain(text))])
                cost = _cost(wider) - _cost(result)
                if cost > left:
                    continue
                left -= cost
                taken.update((result.path, m) for m in range(start, end + 1))
                kept[i] = result = wider
                hit = result.hits[0]
                grown[i] += 1
                changed = True
        if not changed or left <= 0:
            return


def group_by_page(passages: list[Result]) -> list[Result]:
    """Passages grouped under their page: each page once, in the order of its best passage,
    its passages in rank order."""
    pages: dict[str, Result] = {}
    for passage in passages:
        page = pages.get(passage.path)
        if page is None:
            pages[passage.path] = replace(passage, hits=list(passage.hits))
        else:
            page.hits.extend(passage.hits)
            page.exact = page.exact or passage.exact
    return list(pages.values())


def inside_spans(hit: Hit, spans: Sequence[int]) -> bool:
    return bool(spans) and all(line in spans for line in range(hit.start_line, hit.end_line + 1))
