"""What an agent just wrote is found at once: a write embeds the chunks it added (briefly, only
its own pages, only in a vault that has vectors), a write whose embedding fails landed all the
same and says so, and in hybrid a chunk with no vector yet keeps the dense arm's share.

The embedders are the deterministic ``FakeEmbedder`` (in process), the scriptable loopback
``/v1/embeddings`` server of test_embedders, and — over a real MCP client on stdio — the bundled
model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import write as put
from test_citations import cited, holds_words
from test_embedders import KEY, KEY_ENV, FakeServer
from test_hybrid import FakeEmbedder, chunks_without_vector, fake, write_config  # noqa: F401
from test_mcp import KENNING

from kenning import api
from kenning.answers import result_path
from kenning.api import Vault

DECISION = "decisions/Lease cars for the field team.md"


def competitors(vault: Vault) -> None:
    """Notes that share the decision's words and its meaning, none of them the answer."""
    for i in range(6):
        put(vault, f"notes/fleet {i}.md", f"# Fleet note {i}\n\nThe field team car pool, "
            f"week {i}: the automobile schedule and the vehicle list.\n")
    put(vault, "notes/garden.md", "# Garden\n\nTomatoes need water every morning in July.\n")


def decide(vault: Vault) -> dict[str, Any]:
    return vault.record_decision("Lease cars for the field team", "engineering",
                                 "Lease three cars for the field team",
                                 "Buying ties up cash the field team needs for tools")


def test_a_decision_is_embedded_as_it_lands(vault: Vault, fake: FakeEmbedder) -> None:  # noqa: F811
    competitors(vault)
    vault.index()
    put(vault, "notes/elsewhere.md", "# Elsewhere\n\nA note edited meanwhile, not by the write.\n")
    before = len(fake.passages)
    out = decide(vault)
    assert out["created"] and out["indexed"] and "note" not in out
    written = fake.passages[before:]
    assert written and all(t.startswith("Lease cars for the field team") for t in written)
    db = vault.store
    missing = {r[0] for r in db.rows(
        "SELECT p.path FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.text_hash IS NOT"
        " NULL AND c.text_hash NOT IN (SELECT text_hash FROM embeddings)")}
    assert missing == {"notes/elsewhere.md"}  # the write embedded its own page, nothing else
    dense = vault.search("lease cars", mode="dense")
    assert dense[0].path == DECISION
    hybrid = vault.search("lease cars", mode="hybrid", explain=True)
    assert hybrid[0].path == DECISION and "no_vector" not in hybrid[0].explain


def test_a_vault_searched_by_words_stays_so(vault: Vault, fake: FakeEmbedder) -> None:  # noqa: F811
    competitors(vault)
    vault.index(embed=False)
    out = decide(vault)
    assert out["created"] and "note" not in out
    assert fake.batches == []  # no vectors in the index: a write does not start embedding
    assert vault.search("lease cars", mode="hybrid").mode == "lexical"


def test_on_write_false_leaves_embedding_to_the_index(vault: Vault,
                                                     fake: FakeEmbedder) -> None:  # noqa: F811
    competitors(vault)
    vault.index()
    quiet = write_config(vault, "embeddings:\n  on_write: false\n")
    before = len(fake.passages)
    out = decide(quiet)
    assert out["created"] and "note" not in out and len(fake.passages) == before
    assert quiet.search("lease three cars", mode="hybrid", explain=True)[0].path == DECISION
    quiet.index()
    assert len(fake.passages) > before and chunks_without_vector(quiet.store, fake.model_id) == 0
    quiet.close()


def test_a_bad_on_write_value_names_the_field_and_the_write_still_lands(
        vault: Vault, fake: FakeEmbedder) -> None:  # noqa: F811
    from kenning.errors import KenningError

    competitors(vault)
    vault.index()
    broken = write_config(vault, "embeddings:\n  on_write: sometimes\n")
    out = decide(broken)
    assert out["created"] and (vault.root / DECISION).is_file()
    assert "embeddings.on_write" in out["note"] and "true or false" in out["note"]
    with pytest.raises(KenningError, match=r"embeddings\.on_write.*true or false"):
        broken.index()
    broken.close()


def test_a_chunk_without_a_vector_keeps_the_dense_arms_share(vault: Vault,
                                                             fake: FakeEmbedder) -> None:  # noqa: F811
    competitors(vault)
    vault.index()
    # Written outside the server and indexed lexically (as `fresh()` does): no vector yet.
    put(vault, "notes/lease.md", "# Lease\n\nWe lease cars for the field team.\n")
    vault.index(embed=False)
    results = vault.search("lease cars field team", mode="hybrid", explain=True)
    top = results[0]
    assert top.path == "notes/lease.md", [(r.path, r.explain) for r in results]
    ex = top.explain
    assert ex["no_vector"] == 1 and "dense_rank" not in ex
    lexical, dense = api.Vault(vault.root).signals.arm_weights
    assert top.hits[0].score == pytest.approx((lexical + dense) / (60 + ex["lexical_rank"]))
    embedded = [r for r in results[1:] if "dense_rank" in r.explain]
    assert embedded and all("no_vector" not in r.explain for r in embedded)
    vault.index()  # embedded now: the dense arm ranks it like any other chunk
    after = vault.search("lease cars field team", mode="hybrid", explain=True)
    lease = next(r for r in after if r.path == "notes/lease.md")
    assert "no_vector" not in lease.explain and "dense_rank" in lease.explain


@pytest.fixture
def served(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A vault embedded by the scriptable loopback server."""
    monkeypatch.delenv("KENNING_EMBEDDINGS", raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    server = FakeServer()
    competitors(vault)
    v = write_config(vault, f"embeddings:\n  provider: openai\n  url: {server.url}\n"
                            f"  model: test-embed\n  api_key_env: {KEY_ENV}\n")
    v.index()
    yield v, server
    v.close()
    server.close()


def test_a_failing_embedding_server_leaves_the_write_lexical_with_a_note(served: Any) -> None:
    vault, server = served
    server.script = ["500", "500"]  # the request and its one retry
    asked = len(server.requests)
    out = decide(vault)
    assert out["created"] and out["indexed"] and (vault.root / DECISION).is_file()
    assert "not embedded" in out["note"] and "500" in out["note"]
    assert "kenning index" in out["note"]
    assert len(server.requests) == asked + 2
    # The server just failed: the next write does not wait for it again, and says so.
    again = vault.record([{"name": "Fleet desk", "type": "topic"}])
    assert again["created"] and "not embedded" in again["note"]
    assert len(server.requests) == asked + 2
    # Found at once all the same: by its words, with the dense arm's share kept for it.
    results = vault.search("lease three cars", mode="hybrid", explain=True)
    assert results.mode == "hybrid" and results[0].path == DECISION
    assert results[0].explain["no_vector"] == 1
    vault.index()  # `kenning index` adds the vectors the writes could not
    assert chunks_without_vector(vault.store, vault.embedder().model_id) == 0


def test_a_hanging_embedding_server_holds_a_write_seconds_not_a_minute(
        served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    vault, server = served
    monkeypatch.setattr(api, "WRITE_EMBED_TIMEOUT", 0.2)  # the server's "slow" answers in 1 s
    server.script = ["slow"]
    out = decide(vault)
    assert out["created"] and "did not answer within 0.2 s" in out["note"]
    assert vault.embedder().timeout == 60.0  # searches and `kenning index` keep the config's


@pytest.mark.embeddings
def test_a_decision_recorded_over_mcp_ranks_first_for_its_question(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    vault, _ = Vault.init(tmp_path / "v")
    for i, topic in enumerate(["the replay cache warm-up", "cache invalidation bugs",
                               "the read model cache", "Redis versus in-process caching",
                               "cache hit rates in staging", "the CDN cache for bundles"]):
        put(vault, f"notes/cache {i}.md", f"# Cache notes {i}\n\nNotes on {topic}: the team "
            "compared cache layers and their time to live for replay bundles.\n")
    vault.index()
    vault.close()
    params = StdioServerParameters(command=KENNING, args=["-C", str(vault.root), "serve",
                                                          "--profile", "record"],
                                   env={"KENNING_PROGRESS_EVERY": "0"})
    question = "how long do replay bundles stay in the cache?"

    async def run() -> dict[str, Any]:
        async with Client(params) as client:
            made = await client.call_tool("decide", {
                "name": "Bundle TTL of ten minutes", "domain": "engineering",
                "decided": "Keep replay bundles in the in-process cache for ten minutes",
                "because": "Five minutes evicted bundles still being replayed in long builds"})
            out: dict[str, Any] = {"decide": json.loads(made.content[0].text)}
            for mode in ("hybrid", "lexical", "dense"):
                found = await client.call_tool("search", {"query": question, "mode": mode})
                out[mode + "_results"] = json.loads(found.content[0].text)["results"]
                out[mode] = [result_path(r) for r in out[mode + "_results"]]
            return out

    got = anyio.run(run)
    path = got["decide"]["path"]
    assert "note" not in got["decide"], got["decide"]
    assert got["lexical"][0] == path
    assert got["hybrid"][0] == path, got["hybrid"]
    assert path in got["dense"]  # it has its vector: the dense arm can find it at all
    # Over MCP too, a cited range holds the question's words or the hit says what found it.
    marks = []
    for mode in ("hybrid", "lexical", "dense"):
        for result in got[mode + "_results"]:
            for hit in result["hits"]:
                text = cited(vault, hit["citation"])
                assert ("found" in hit) != holds_words(text, question), (mode, hit, text)
                marks.append(hit.get("found"))
    assert "meaning" in marks
    with Vault.open(vault.root) as fresh:
        assert chunks_without_vector(fresh.store, fresh.embedder().model_id) == 0
