"""The optional HNSW index: recall against exact search, SQL-style filtering, persistence."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("usearch", reason="optional extra not installed: pip install 'kenning[ann]'")

from kenning.index.ann import (
    AnnIndex,
    AnnIndexError,
    AnnUnavailable,
    available,
)

DIM = 384
N = 5000


def unit_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    x = rng.standard_normal((n, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, AnnIndex]:
    """5,000 random unit vectors under non-contiguous ids (like SQLite rowids), indexed."""
    rng = np.random.default_rng(20240601)
    vectors = unit_rows(rng, N)
    ids = (1000 + 3 * np.arange(N)).astype(np.int64)
    ann = AnnIndex(DIM)
    ann.build(ids, vectors)
    return ids, vectors, ann


def exact(ids: np.ndarray, vectors: np.ndarray, q: np.ndarray, k: int,
          allowed: np.ndarray | None = None) -> list[int]:
    scores = vectors @ q
    if allowed is not None:
        scores = np.where(np.isin(ids, allowed), scores, -np.inf)
    order = np.argsort(-scores, kind="stable")[:k]
    return [int(ids[i]) for i in order if np.isfinite(scores[i])]


def test_available() -> None:
    assert available()


def test_recall_at_10_against_exact_search(data) -> None:
    ids, vectors, ann = data
    assert len(ann) == N
    queries = unit_rows(np.random.default_rng(7), 100)
    all_scores = queries @ vectors.T
    truth = np.argsort(-all_scores, axis=1)[:, :10]
    hits = 0
    for q, scores, best in zip(queries, all_scores, truth, strict=True):
        found = ann.search(q, 10)
        assert len(found) == 10
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
        rows = np.searchsorted(ids, [i for i, _ in found])  # ids are sorted
        np.testing.assert_allclose([s for _, s in found], scores[rows], atol=5e-3)  # float16
        hits += len(set(rows.tolist()) & set(best.tolist()))
    assert hits / 1000 >= 0.95


def test_a_stored_vector_finds_itself(data) -> None:
    ids, vectors, ann = data
    (top, score), *_ = ann.search(vectors[123] * 5.0, 3)  # queries are normalised too
    assert top == ids[123] and score == pytest.approx(1.0, abs=2e-3)


class Spy:
    def __init__(self, ann: AnnIndex, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for name in ("_exact", "_hnsw"):
            real = getattr(ann, name)

            def wrapped(*args, _real=real, _name=name):
                self.calls.append(_name)
                return _real(*args)

            monkeypatch.setattr(ann, name, wrapped)


def test_small_allowed_sets_are_searched_exactly(data, monkeypatch) -> None:
    ids, vectors, ann = data
    spy = Spy(ann, monkeypatch)
    rng = np.random.default_rng(1)
    allowed = rng.choice(ids, 300, replace=False)
    q = unit_rows(rng, 1)[0]
    found = ann.search(q, 10, allowed)
    assert [i for i, _ in found] == exact(ids, vectors, q, 10, allowed)
    assert spy.calls == ["_exact"]
    one = ann.search(q, 10, allowed[:1])
    assert [i for i, _ in one] == [int(allowed[0])]


def test_large_allowed_sets_over_fetch_and_filter(data, monkeypatch) -> None:
    ids, vectors, ann = data
    monkeypatch.setattr(ann, "exact_below", 100)
    spy = Spy(ann, monkeypatch)
    rng = np.random.default_rng(2)
    hits = 0
    for share in (0.5, 0.1):
        allowed = rng.choice(ids, int(N * share), replace=False)
        for q in unit_rows(rng, 20):
            found = ann.search(q, 10, allowed)
            assert len(found) == 10 and set(i for i, _ in found) <= set(allowed.tolist())
            hits += len({i for i, _ in found} & set(exact(ids, vectors, q, 10, allowed)))
    assert hits / 400 >= 0.9
    assert "_hnsw" in spy.calls and "_exact" not in spy.calls


def test_rare_allowed_sets_fall_back_to_exact(data, monkeypatch) -> None:
    ids, vectors, ann = data
    monkeypatch.setattr(ann, "exact_below", 0)
    monkeypatch.setattr(ann, "max_fetch", 500)
    spy = Spy(ann, monkeypatch)
    rng = np.random.default_rng(3)
    allowed = rng.choice(ids, 40, replace=False)  # 2·k·N/40 = 2,500 > max_fetch
    q = unit_rows(rng, 1)[0]
    assert [i for i, _ in ann.search(q, 10, allowed)] == exact(ids, vectors, q, 10, allowed)
    assert spy.calls == ["_exact"]


def test_allowed_edge_cases(data) -> None:
    ids, _, ann = data
    q = unit_rows(np.random.default_rng(4), 1)[0]
    assert ann.search(q, 10, np.array([], dtype=np.int64)) == []
    assert ann.search(q, 10, np.array([7, 8, 9])) == []  # ids that are not indexed
    found = ann.search(q, 10, np.array([ids[5], ids[6], 7, ids[5]]))
    assert sorted(i for i, _ in found) == sorted([int(ids[5]), int(ids[6])])
    assert ann.search(q, 0) == []


def test_save_and_load_round_trip(data, tmp_path: Path) -> None:
    ids, _, ann = data
    path = tmp_path / "vectors" / "chunks.usearch"
    ann.save(path)
    assert [p.name for p in path.parent.iterdir()] == ["chunks.usearch"]  # no temp file left
    queries = unit_rows(np.random.default_rng(5), 5)
    allowed = ids[::7]
    for view in (False, True):
        loaded = AnnIndex.load(path, DIM, view=view)
        assert len(loaded) == N and loaded.dtype == "f16"
        for q in queries:
            assert loaded.search(q, 10) == ann.search(q, 10)
            assert loaded.search(q, 5, allowed) == ann.search(q, 5, allowed)
    ann.save(path)  # overwriting an existing file works
    with pytest.raises(AnnIndexError, match="384-d"):
        AnnIndex.load(path, 128)
    with pytest.raises(AnnIndexError, match="no vector index"):
        AnnIndex.load(tmp_path / "missing.usearch", DIM)
    garbage = tmp_path / "garbage.usearch"
    garbage.write_bytes(b"not an index" * 100)
    with pytest.raises(AnnIndexError, match="unreadable"):
        AnnIndex.load(garbage, DIM)


def test_add_remove_and_rebuild() -> None:
    rng = np.random.default_rng(6)
    vectors = unit_rows(rng, 200, 16)
    ann = AnnIndex(16)
    assert ann.search(vectors[0], 5) == []  # empty index
    ann.build(np.arange(200), vectors)
    assert ann.search(vectors[10], 1)[0][0] == 10
    ann.remove(np.array([10, 11, 9999]))
    assert len(ann) == 198 and all(i != 10 for i, _ in ann.search(vectors[10], 20))
    fresh = unit_rows(rng, 2, 16)
    ann.add(np.array([500, 12]), fresh)  # a new id, and a replaced vector
    assert len(ann) == 199
    assert ann.search(fresh[0], 1)[0][0] == 500
    assert ann.search(fresh[1], 1)[0][0] == 12
    ann.build(np.arange(3), vectors[:3])
    assert len(ann) == 3


def test_bad_input_is_rejected() -> None:
    ann = AnnIndex(8)
    x = unit_rows(np.random.default_rng(8), 4, 8)
    with pytest.raises(ValueError, match="unique"):
        ann.build(np.array([1, 1, 2, 3]), x)
    with pytest.raises(ValueError, match="ids for"):
        ann.build(np.array([1, 2, 3]), x)
    with pytest.raises(ValueError, match="dimension 8"):
        ann.build(np.arange(4), unit_rows(np.random.default_rng(8), 4, 9))
    with pytest.raises(ValueError, match="non-negative"):
        ann.build(np.array([-1, 0, 1, 2]), x)
    with pytest.raises(ValueError, match="integers"):
        ann.build(np.array([0.5, 1, 2, 3]), x)
    with pytest.raises(ValueError, match="dimension 8"):
        ann.search(np.ones(3, dtype=np.float32), 1)


def test_without_usearch_the_error_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "usearch", None)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    assert not available()
    with pytest.raises(AnnUnavailable) as info:
        AnnIndex(DIM)
    assert info.value.fix == "pip install 'kenning[ann]'"
    assert "usearch" in str(info.value)
