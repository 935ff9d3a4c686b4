"""The page signals: what a page's backlinks, recency, type, named date and folder add.

They add a bonus in the units of the evidence they adjust, scaled to the query's own spread of
evidence (:func:`evidence_spread`, :func:`signal_bonus`), so that they break near-ties and
never overturn a clear lead. Every weight is a :class:`Signals` field, set in the config's
``search`` section and shown by ``--explain``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store
from kenning.recall import when

BACKLINK_WEIGHT = 0.05


@dataclass(frozen=True)
class Signals:
    """How much each ranking signal counts; every one is configurable and shown by --explain."""

    rrf_k: int = 60
    arm_weights: tuple[float, float] = (1.5, 1.0)  # lexical, dense, in the fusion
    backlink_weight: float = BACKLINK_WEIGHT
    recency_weight: float = 0.2
    half_life_days: float = 23.0
    superseded_factor: float = 0.5
    date_weight: float = 1.0     # pages dated when the query says ("on 4 March 2026") count ×2
    type_weight: float = 0.3     # "what did we decide …" favours decision pages ×1.3
    folder_weights: dict[str, float] = field(default_factory=dict)
    speaker_factor: float = 0.75  # turns by someone other than the person the query names
    chunks_per_page: int = 2     # hits shown per page when results are pages
    page_weight: float = 1.0     # a passage also counts its page's best passage × this (-g chunk)
    lexical_context_weight: float = 0.3  # hybrid: a chunk also scores its neighbours' BM25 × this
    passages_per_page: int = 10  # at most this many results from one page when results are chunks
    # The page signals add a bonus in the units of the evidence they adjust: a signal of ×2
    # adds ``signal_reach`` × the query's spread (its best page's evidence minus its
    # ``spread_depth``-th page's), whatever the scale of the mode's scores (BM25, cosine, RRF,
    # reranker). A near-tie is broken; a clear lead stands.
    signal_reach: float = 0.25
    spread_depth: int = 10


def evidence_spread(page_scores: Sequence[float], signals: Signals) -> float:
    """The query's own scale of evidence: its best page's score minus its
    ``spread_depth``-th page's (the last one's when there are fewer).

    Computed from every candidate before any page is read, so it does not depend on the limit.
    Scores all equal leave a tiny spread, so that the signals still break exact ties.
    """
    if not page_scores:
        return 0.0
    top = sorted(page_scores, reverse=True)
    depth = max(2, signals.spread_depth)
    gap = top[0] - top[min(depth, len(top)) - 1]
    return max(gap, 1e-6 * abs(top[0]), 1e-12)


def signal_bonus(factors: dict[str, float], spread: float, signals: Signals) -> float:
    """What the page signals add to a page's evidence: ``signal_reach`` × ``spread`` per
    doubling of their product (a signal below 1× takes away as much).

    Multiplying the evidence instead would let a signal count for more than the evidence
    itself wherever scores sit in a narrow band: e5 cosines of 0.82–0.89, RRF sums of
    1/61 vs 1/62, reranker scores mapped onto the fused range.
    """
    if not signals.signal_reach:
        return 0.0
    # A weight of 0 (a folder weighed 0) counts as eight halvings: below the query's spread.
    product = max(math.prod(factors.values()), 2.0 ** -8)
    return signals.signal_reach * spread * math.log2(product)


def page_factors(meta: tuple[Any, ...], backlinks: int, signals: Signals,
                  activity: dict[str, str] | None, today: str | None, named: Any,
                  hinted: set[str]) -> dict[str, float]:
    """The page signals known from the page alone: backlinks, recency, type, date, folder.

    All but ``date`` are priors that add :func:`signal_bonus`; ``date`` (the page is dated when
    the query says) multiplies the evidence, as coverage does: it is what the query asked for.
    """
    path, ptype, page_when = meta[0], meta[2], meta[5]
    factors: dict[str, float] = {}
    factors["backlinks"] = 1.0 + signals.backlink_weight * math.log1p(backlinks)
    seen = max(filter(None, (page_when, (activity or {}).get(path))), default=None)
    if seen and today and signals.recency_weight:
        age = max(0.0, _days_between(seen, today))
        factors["recency"] = 1.0 + signals.recency_weight * 0.5 ** (age / signals.half_life_days)
    if hinted and ptype in hinted and signals.type_weight:
        factors["type"] = 1.0 + signals.type_weight
    fit = when.closeness(named, meta[6])
    if fit and signals.date_weight:
        factors["date"] = 1.0 + signals.date_weight * fit
    folder = path.split("/", 1)[0] if "/" in path else ""
    if folder in signals.folder_weights:
        factors["folder"] = signals.folder_weights[folder]
    return factors


_TYPE_HINTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:decid\w*|decision\w*|chose|choose|rejected)\b", re.I), "decision"),
    (re.compile(r"\b(?:meeting|meetings|met|call|calls)\b", re.I), "meeting"),
    (re.compile(r"\b(?:who|whom|person|people)\b", re.I), "person"),
    (re.compile(r"\b(?:project|projects)\b", re.I), "project"),
    (re.compile(r"\b(?:compan(?:y|ies)|organi[sz]ations?|investors?|customers?)\b", re.I),
     "organization"),
]


def type_hints(text: str) -> set[str]:
    """Entity types a question asks about: "what did we decide" → decision, "who" → person."""
    return {kind for pattern, kind in _TYPE_HINTS if pattern.search(text)}


def _days_between(earlier: str, later: str) -> float:
    try:
        a = date.fromisoformat(earlier[:10])
        b = date.fromisoformat(later[:10])
    except ValueError:
        return 0.0
    return float((b - a).days)


def backlink_counts(store: Store, page_ids: list[int]) -> dict[int, int]:
    """Pages linking to each page (resolved links, self-links left out).

    Every search needs them for a few hundred candidate pages, and counting a hub's thousands
    of links each time cost ~17 ms a query at 10k notes; so the whole table is counted once per
    store and kept until :meth:`Store.change_token` says the database changed (a commit by
    this or any other connection)."""
    if not page_ids:
        return {}
    version = store.change_token()
    cached = _BACKLINKS.get(id(store))
    if cached is None or cached[0] is not store or cached[1] != version:
        counts = recall_sql.backlink_counts(store)
        if len(_BACKLINKS) >= 8:  # a server holds one or two stores; tests open many
            _BACKLINKS.pop(next(iter(_BACKLINKS)))
        cached = _BACKLINKS[id(store)] = (store, version, counts)
    counts = cached[2]
    return {pid: counts[pid] for pid in page_ids if pid in counts}


# id(store) -> (store, its change token when counted, {page id: backlinks}); the store is kept
# so a reused id is never mistaken for it.
_BACKLINKS: dict[int, tuple[Store, Any, dict[int, int]]] = {}
