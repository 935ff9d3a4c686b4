"""Evidence and citations: which lines of a chunk hold the query's words, marked and clipped.

Matches are marked here in Python the way the SQLite full-text index matches (unicode61 tokens,
case and diacritics folded, Porter stems), on the chunk text the index stores; a hit cites the
line holding the most (and the rarest) query terms, widened to neighbouring lines that add
terms, and its snippet is those lines, clipped.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import replace
from typing import Any

from kenning.index.cjk import HAS_CJK
from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store
from kenning.recall.query import Query
from kenning.recall.results import Hit

SNIPPET_CHARS = 240
OPEN, CLOSE = "\x01", "\x02"


def whole_chunk(body: str, start: int, body_start: int | None,
                 keep: tuple[int, int] | None = None) -> tuple[int, int, str]:
    """Cite a chunk's own text: its non-blank lines after the frontmatter (and the lines
    ``keep``, first and last, when they hold the query's words)."""
    lines = body.split("\n")
    first_allowed = max(0, (body_start or 1) - start)
    shown = [i for i, line in enumerate(lines) if i >= first_allowed and line.strip()]
    while len(shown) > 1 and lines[shown[0]].lstrip().startswith("#"):
        shown.pop(0)  # a heading is a label, not evidence
    if not shown:
        shown = [i for i, line in enumerate(lines) if line.strip()] or [0]
    lo, hi = shown[0], shown[-1]
    if keep is not None:
        lo, hi = min(lo, keep[0] - start), max(hi, keep[1] - start)
    text = " ".join(line.strip() for line in lines[lo : hi + 1] if line.strip())
    return start + lo, start + hi, clip(text)


def highlights(store: Store, query: Query, chunk_ids: list[int]
                ) -> dict[int, tuple[str, str]]:
    """Chunk id → (body, title) with the query's matches marked, for chunks the query matches.

    Marked here in Python the way FTS5 matches (unicode61 tokens, case and diacritics folded,
    Porter stems): asking FTS5 for highlight() over a set of rowids runs the full-text query
    once per rowid, which was half the time of a search.
    """
    if not chunk_ids:
        return {}
    rows = recall_sql.chunk_texts(store, chunk_ids)
    stems = {_stem(t) for t in query.terms}
    phrases = [[_stem(w) for w in _WORD.findall(p)] for p in query.phrases]
    out = {}
    for chunk_id, title, heading, body in rows:
        body_marked, in_body = _mark(body or "", stems, phrases)
        title_marked, in_title = _mark(title or "", stems, phrases)
        matched = in_body or in_title or (heading and _mark(heading, stems, phrases)[1]) or any(
            run in (title or "") or run in (body or "") for run in query.cjk)
        if matched:
            out[chunk_id] = (body_marked, title_marked)
    return out


_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    folded = "".join(c for c in unicodedata.normalize("NFKD", token.casefold())
                     if not unicodedata.combining(c))
    return _porter().stemWord(folded)


@functools.lru_cache(maxsize=1)
def _porter() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


def _mark(text: str, stems: set[str], phrases: list[list[str]]) -> tuple[str, bool]:
    """``text`` with each token matching a term (or a phrase's run of tokens) wrapped in
    OPEN/CLOSE, and whether anything matched."""
    tokens = list(_WORD.finditer(text))
    hit = [False] * len(tokens)
    token_stems = [_stem(m.group()) for m in tokens] if (stems or phrases) else []
    for i, stem in enumerate(token_stems):
        if stem in stems:
            hit[i] = True
    for phrase in phrases:
        n = len(phrase)
        for i in range(len(tokens) - n + 1):
            if n and token_stems[i:i + n] == phrase:
                for j in range(i, i + n):
                    hit[j] = True
    if not any(hit):
        return text, False
    parts, last = [], 0
    for m, h in zip(tokens, hit, strict=True):
        if h:
            parts += [text[last:m.start()], OPEN, m.group(), CLOSE]
            last = m.end()
    parts.append(text[last:])
    return "".join(parts), True


def wanted_terms(query: Query) -> set[str]:
    return set(query.terms) | {p.casefold() for p in query.phrases} | set(query.cjk)


def marked_terms(marked: str) -> set[str]:
    out = set()
    start = marked.find(OPEN)
    while start >= 0:
        end = marked.find(CLOSE, start)
        if end < 0:
            break
        out.add(marked[start + 1 : end].casefold())
        start = marked.find(OPEN, end)
    return out


def term_rarity(store: Store, query: Query) -> dict[str, float]:
    """How telling each query term is (inverse document frequency over chunks)."""
    total = recall_sql.chunk_count(store) or 1
    wanted = wanted_terms(query)
    found = store.match_counts([t for t in wanted if t not in query.cjk],
                               [t for t in wanted if t in query.cjk])
    return {term: math.log(1 + total / (1 + found[term])) for term in wanted}


def evidence_lines(marked: str, start_line: int, query: Query, rarity: dict[str, float],
              body_start: int | None = None) -> tuple[int, int, str, set[str]]:
    """Narrow a chunk to the lines holding matches: (first, last, snippet, terms found)."""
    lines = marked.split("\n")
    per_line: list[set[str]] = []
    for line in lines:
        found = marked_terms(line) if OPEN in line else set()
        if query.cjk and HAS_CJK.search(line):
            found |= {run for run in query.cjk if run in line}
        per_line.append(_normalize_found(found, query))
    scored = [i for i, f in enumerate(per_line) if f]
    prose = [i for i in scored if not lines[i].lstrip().startswith("#")]
    if prose:
        scored = prose  # a heading names the subject; the lines under it are the evidence
    if not scored:
        # Matched through the title column only: cite the chunk's first non-empty line after
        # the frontmatter (a `---` fence is no evidence of anything).
        skip = max(0, (body_start or 1) - start_line)
        first = next((i for i, line in enumerate(lines) if i >= skip and line.strip()),
                     next((i for i, line in enumerate(lines) if line.strip()), 0))
        return (start_line + first, start_line + first, clip(lines[first]), set())
    # The line holding the most (and the rarest) query terms is the evidence.
    best = max(scored, key=lambda i: (sum(rarity.get(t, 1.0) for t in per_line[i]), -i))
    lo = hi = best
    have = set(per_line[best])
    # Widen to neighbouring lines (within 3) that add terms the best line lacks.
    for i in scored:
        if abs(i - best) <= 3 and not per_line[i] <= have:
            lo, hi = min(lo, i), max(hi, i)
            have |= per_line[i]
    text = " ".join(line.strip() for line in lines[lo : hi + 1] if line.strip())
    all_found = set().union(*per_line)
    return start_line + lo, start_line + hi, clip(text), all_found


def how_found(hit: Hit, lines: dict[int, str], why: dict[int, str], query: Query) -> Hit:
    """``hit`` saying what found it when none of its cited lines holds the query's words."""
    if any(holds_words(lines.get(n, ""), query)
           for n in range(hit.start_line, hit.end_line + 1)):
        return hit
    return replace(hit, found=why.get(hit.chunk_id, "meaning"))


def holds_words(line: str, query: Query) -> bool:
    """True when a (marked) line holds one of the query's words."""
    return OPEN in line or any(run in line for run in query.cjk)


def _normalize_found(found: set[str], query: Query) -> set[str]:
    """Map highlighted tokens back to the query terms they matched (porter stems differ)."""
    if not found:
        return found
    out = set()
    wanted = wanted_terms(query)
    for token in found:
        if token in wanted:
            out.add(token)
            continue
        # The term sharing the longest prefix wins, ties alphabetically: a set's order would
        # make "chat" map to "changes" in one process and "challenges" in the next.
        matches = [t for t in wanted if _same_stem(token, t)]
        if matches:
            out.add(min(matches, key=lambda t: (-_shared_prefix(token, t), t)))
        else:
            out.add(token)
    return out


def _shared_prefix(a: str, b: str) -> int:
    """How many leading characters two words share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _same_stem(a: str, b: str) -> bool:
    n = min(len(a), len(b))
    k = max(3, n - 3)
    return n >= 3 and a[:k] == b[:k]


# Inline fields and block ids are for the index, not for a person reading a snippet (the
# citation points at the full line).
FIELD = re.compile(r"\s*\[[A-Za-z_][\w-]*::\s*(?:\[\[[^\]]*\]\]|[^\]\[])*\](?!\])"
                    r"|\s+\^[A-Za-z0-9-]+(?=\s|$)")


def clip(text: str) -> str:
    text = " ".join(FIELD.sub("", text).split())
    at = text.find(OPEN)
    if len(text) > SNIPPET_CHARS:
        begin = max(0, at - SNIPPET_CHARS // 3) if at > 0 else 0
        text = ("…" if begin else "") + text[begin : begin + SNIPPET_CHARS].rstrip() + "…"
    return text.replace(OPEN, "").replace(CLOSE, "")


def trim_overlapping(hits: list[Hit], texts: dict[int, dict[int, str]]) -> list[Hit]:
    """Cite each line once per page: a hit keeps the lines no better hit cites (its first run of
    them, with its snippet cut to match) and goes only when none are left.

    Hits overlap when chunks do, or when a question's answer is cited from the next chunk.
    """
    kept: list[Hit] = []
    taken: set[int] = set()
    for hit in hits:
        free = [n for n in range(hit.start_line, hit.end_line + 1) if n not in taken]
        if not free:
            continue
        if len(free) <= hit.end_line - hit.start_line:
            end = free[0]
            while end + 1 in free:
                end += 1
            own = texts.get(hit.chunk_id, {})
            hit = replace(hit, start_line=free[0], end_line=end, snippet=clip(
                " ".join(own.get(n, "").strip() for n in range(free[0], end + 1))))
        taken.update(range(hit.start_line, hit.end_line + 1))
        kept.append(hit)
    return kept
