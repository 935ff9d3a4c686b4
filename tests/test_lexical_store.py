"""The lexical half of the storage seam: Store.match_chunks and Store.match_counts take a
structured TextQuery (never engine syntax) and keep the semantics base.py documents; recall
above the seam holds no SQL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault
from kenning.index.store.base import TextQuery
from kenning.recall.search import parse_query


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "notes/cache.md", "# Cache layer\n\nWe cached the read model in process.\n")
    put(vault, "notes/model.md", "# Models\n\nThe read path is slow; the model is fine.\n")
    put(vault, "notes/pricing.md", "---\ntype: decision\n---\n# Pricing\n\nCaching was "
        "rejected for pricing.\n")
    put(vault, "notes/ja.md", "# 定例\n\n第3回定例会議を会議室Bで開いた。\n")
    vault.index()
    return vault


def paths(v: Vault, rows: list[tuple[int, int, int, str, float]]) -> set[str]:
    ids = {r[1] for r in rows}
    return {p for i, p in v.store.rows("SELECT id, path FROM pages") if i in ids}


def test_any_term_or_every_term(v: Vault) -> None:
    both = TextQuery(terms=("read", "model"))
    assert paths(v, v.store.match_chunks(both)) == {"notes/cache.md", "notes/model.md"}
    every = TextQuery(terms=("read", "cached"), all_terms=True)
    assert paths(v, v.store.match_chunks(every)) == {"notes/cache.md"}


def test_terms_match_their_stem_and_phrases_match_in_order(v: Vault) -> None:
    # "caching" finds "cached" (one stem); the phrase "read model" only where the words touch.
    assert paths(v, v.store.match_chunks(TextQuery(terms=("caching",)))) == {
        "notes/cache.md", "notes/pricing.md"}
    assert paths(v, v.store.match_chunks(TextQuery(phrases=("read model",)))) == {
        "notes/cache.md"}


def test_cjk_words_match_as_bigrams_and_one_character_as_a_prefix(v: Vault) -> None:
    assert paths(v, v.store.match_chunks(TextQuery(cjk=("会議",)))) == {"notes/ja.md"}
    assert paths(v, v.store.match_chunks(TextQuery(cjk=("定例会議",)))) == {"notes/ja.md"}
    assert v.store.match_chunks(TextQuery(cjk=("会例",))) == []  # not consecutive bigrams
    # 議 starts the bigrams 議を and 議室; 室 only ends one, so it matches nothing.
    assert paths(v, v.store.match_chunks(TextQuery(cjk=("議",)))) == {"notes/ja.md"}
    assert v.store.match_chunks(TextQuery(cjk=("室",))) == []


def test_rows_are_best_first_with_the_documented_shape_and_limit(v: Vault) -> None:
    rows = v.store.match_chunks(TextQuery(terms=("pricing",)))
    assert rows and all(len(r) == 5 for r in rows)
    scores = [r[4] for r in rows]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    chunk_id, page_id, start, heading, _ = rows[0]
    assert v.store.one("SELECT page_id, start_line, heading FROM chunks WHERE id = ?",
                       (chunk_id,)) == (page_id, start, heading)
    # A title match outweighs a body match (title weight 5, body 1): Pricing's own page leads.
    assert paths(v, rows[:1]) == {"notes/pricing.md"}
    assert len(v.store.match_chunks(TextQuery(terms=("the", "read")), limit=1)) == 1


def test_where_fragment_restricts_what_is_ranked(v: Vault) -> None:
    query = TextQuery(terms=("caching",))
    kept = v.store.match_chunks(query, where=" AND p.type = ?", params=("decision",))
    assert paths(v, kept) == {"notes/pricing.md"}


def test_an_empty_query_matches_nothing(v: Vault) -> None:
    assert TextQuery().empty and v.store.match_chunks(TextQuery()) == []


def test_match_counts_counts_chunks_per_item(v: Vault) -> None:
    counts = v.store.match_counts(["read", "pricing", "read model", "zebra"], ["会議"])
    assert counts == {"read": 2, "pricing": 1, "read model": 1, "zebra": 0, "会議": 1}
    assert v.store.match_counts([]) == {}


def test_parsed_queries_become_text_queries(v: Vault) -> None:
    parsed = parse_query('What did we decide about "read model" caching 会議の議事録?')
    assert parsed.text_query() == TextQuery(("decide", "caching"), ("read model",),
                                            ("会議", "議事録"), False)
    assert parsed.text_query(all_terms=True).all_terms


def test_recall_holds_no_sql_and_no_sqlite() -> None:
    recall = Path(__file__).resolve().parents[1] / "src" / "kenning" / "recall"
    sql = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b.*\b(FROM|INTO|SET|WHERE)\b"
                     r"|\bMATCH\b|\bPRAGMA\b|bm25\(")
    for path in sorted(recall.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "sqlite3" not in text, path.name
        assert not sql.search(text), (path.name, sql.search(text))
