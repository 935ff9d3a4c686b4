"""Lexical recall: ranking, citations to the exact lines, filters, CJK, rebuild equivalence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault
from kenning.recall.search import parse_query

FILLER = " ".join(f"word{i}" for i in range(60))


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "decisions/cache.md",
        "---\ntype: decision\ndomain: engineering\ndate: 2026-03-04\n---\n# Cache layer\n\n"
        "We chose a read-through layer.\n\n## Context\n\n" + "\n".join([FILLER] * 8)
        + "\n\nThe latency budget forced an in-process cache in front of the read model.\n\n"
        + "\n".join([FILLER] * 8) + "\n")
    put(vault, "people/pat.md",
        "---\ntype: person\ndomain: sales\naliases: [Patty]\nupdated: 2026-01-05\n---\n"
        "# Pat Lee\n\nSells to logistics customers.\n\nShe dislikes latency in demos.\n")
    put(vault, "projects/latency.md",
        "---\ntype: project\ndomain: engineering\ncreated: 2025-11-01\n---\n# Latency\n\n"
        "Project to cut p95 latency. Owner: [[Pat Lee]].\n")
    put(vault, "notes/ja.md",
        "# 定例\n\n第3回定例会議を会議室Bで開いた。ミナト社は出資した。\n\n別の行です。\n")
    put(vault, "notes/other.md", "# Other\n\nNothing about that here. [[Pat Lee]] [[Latency]]\n")
    vault.index()
    return vault


def lines_of(vault: Vault, citation: str) -> list[str]:
    match = re.fullmatch(r"(.+)#L(\d+)-L(\d+)", citation)
    assert match, citation
    path, start, end = match.group(1), int(match.group(2)), int(match.group(3))
    text = (vault.root / path).read_text(encoding="utf-8").splitlines()
    assert 1 <= start <= end <= len(text)
    return text[start - 1 : end]


def test_citation_covers_exactly_the_lines_with_the_matched_terms(v: Vault) -> None:
    results = v.search("in-process read model")
    assert results[0].path == "decisions/cache.md"
    cited = lines_of(v, results[0].citation)
    assert len(cited) == 1
    assert "in-process" in cited[0] and "read model" in cited[0]


@pytest.mark.parametrize("query", ["latency", "read-through", "customers logistics", "p95"])
def test_every_hit_cites_lines_containing_a_query_term(v: Vault, query: str) -> None:
    results = v.search(query)
    assert results
    terms = parse_query(query).terms
    for result in results:
        for hit in result.to_dict()["hits"]:
            text = " ".join(lines_of(v, hit["citation"])).casefold()  # type: ignore[index]
            assert any(t in text for t in terms), (hit, terms)


def test_exact_title_or_alias_match_ranks_first(v: Vault) -> None:
    results = v.search("Latency")
    assert results[0].path == "projects/latency.md" and results[0].exact
    patty = v.search("patty")
    assert patty[0].path == "people/pat.md" and patty[0].exact


def test_backlinks_are_a_mild_boost(v: Vault) -> None:
    # Two pages with the same text; only one is linked to.
    put(v, "topics/a.md", "# Alpha\n\nzebra crossing notes, first set\n")
    put(v, "topics/b.md", "# Beta\n\nzebra crossing notes, other set\n")
    put(v, "topics/c.md", "# Gamma\n\n[[Beta]] and [[Beta]] again, see [[Beta]].\n")
    v.index()
    results = v.search("zebra crossing")
    assert [r.path for r in results[:2]] == ["topics/b.md", "topics/a.md"]
    assert results[0].backlinks == 1 and results[1].backlinks == 0
    # The same evidence: the backlink adds reach × spread × log2(its strength), nothing else.
    math = __import__("math")
    explained = v.search("zebra crossing", explain=True)
    boost = 1 + 0.05 * math.log(2)
    assert explained[0].explain["backlinks"] == pytest.approx(boost, abs=1e-4)
    bonus = 0.25 * explained[0].explain["spread"] * math.log2(boost)
    assert explained[0].explain["signals"] == pytest.approx(bonus, rel=1e-4)
    assert results[0].score - results[1].score == pytest.approx(bonus, rel=1e-3)



def test_backlink_counts_follow_new_links_from_this_and_other_connections(v: Vault) -> None:
    # Counts are kept between searches: a link indexed by this vault, or committed by another
    # process's vault on the same index, must show in the next search.
    put(v, "topics/a.md", "# Alpha\n\nzebra crossing notes\n")
    v.index()
    assert v.search("zebra crossing")[0].backlinks == 0
    put(v, "topics/c.md", "# Gamma\n\nsee [[Alpha]]\n")
    v.index()
    assert v.search("zebra crossing")[0].backlinks == 1
    other = Vault.open(v.root)
    try:
        put(other, "topics/d.md", "# Delta\n\nalso [[Alpha]]\n")
        other.index()
    finally:
        other.close()
    assert v.search("zebra crossing")[0].backlinks == 2
    (v.root / "topics/c.md").unlink()
    v.index()
    assert v.search("zebra crossing")[0].backlinks == 1

def test_filters_type_domain_folder_dates_limit(v: Vault) -> None:
    assert {r.path for r in v.search("latency", types=["person"])} == {"people/pat.md"}
    assert {r.path for r in v.search("latency", domains=["engineering"])} == {
        "decisions/cache.md", "projects/latency.md"}
    assert {r.path for r in v.search("latency", folders=["projects"])} == {"projects/latency.md"}
    assert {r.path for r in v.search("latency", since="2026-01-01")} == {
        "decisions/cache.md", "people/pat.md"}
    assert {r.path for r in v.search("latency", until="2025-12-31")} == {"projects/latency.md"}
    assert len(v.search("latency", limit=1)) == 1


def test_type_filter_folds_synonyms_and_rejects_unknown(v: Vault) -> None:
    assert {r.path for r in v.search("latency", types=["people"])} == {"people/pat.md"}
    with pytest.raises(ValueError, match="allowed"):
        v.search("latency", types=["robot"])


@pytest.mark.parametrize(("query", "expected_line"), [
    ("会議", "第3回定例会議を会議室Bで開いた。ミナト社は出資した。"),
    ("会議室", "第3回定例会議を会議室Bで開いた。ミナト社は出資した。"),
    ("定例会議", "第3回定例会議を会議室Bで開いた。ミナト社は出資した。"),
    ("出資", "第3回定例会議を会議室Bで開いた。ミナト社は出資した。"),
])
def test_cjk_two_character_words_are_found_and_cited(v: Vault, query: str,
                                                     expected_line: str) -> None:
    results = v.search(query)
    assert results and results[0].path == "notes/ja.md"
    assert lines_of(v, results[0].citation) == [expected_line]


def test_cjk_query_does_not_match_unrelated_text(v: Vault) -> None:
    assert v.search("資金") == []


JA_LINE = "第3回定例会議を会議室Bで開いた。ミナト社は出資した。"


@pytest.mark.parametrize(("question", "expected_line"), [
    # Natural questions, not keywords: hiragana particles and verb endings between the words.
    ("会議室で定例会議を開いたのはいつですか", JA_LINE),
    ("ミナト社は出資しましたか", JA_LINE),
])
def test_a_japanese_question_finds_the_words_it_asks_about(v: Vault, question: str,
                                                          expected_line: str) -> None:
    results = v.search(question, mode="lexical")
    assert results and results[0].path == "notes/ja.md"
    assert lines_of(v, results[0].citation) == [expected_line]
    assert v.search("資金はありましたか", mode="lexical") == []  # its words are nowhere


def test_a_run_of_one_script_stays_one_phrase() -> None:
    from kenning.index.cjk import query_words

    assert query_words("会議の議事録を共有する方法") == ["会議", "議事録", "共有", "方法"]
    assert query_words("定例会議") == ["定例会議"]          # Chinese or kanji-only: a phrase
    assert query_words("ありがとう") == ["ありがとう"]       # all hiragana: kept whole
    assert query_words("送る") == ["送"]                    # only a single kanji is left


def test_stopword_only_query_still_searches(v: Vault) -> None:
    put(v, "notes/the.md", "# The Who\n\nwho what\n")
    v.index()
    assert any(r.path == "notes/the.md" for r in v.search("the who"))


def test_rebuild_gives_identical_results(v: Vault) -> None:
    queries = ["latency", "read model", "会議", "Pat", "customers"]
    before = [[r.to_dict() for r in v.search(q)] for q in queries]
    v.rebuild()
    after = [[r.to_dict() for r in v.search(q)] for q in queries]
    assert after == before


def test_results_are_grouped_one_entry_per_page(v: Vault) -> None:
    results = v.search("word1 word2 latency")
    paths = [r.path for r in results]
    assert len(paths) == len(set(paths))


def test_citations_count_lines_like_the_parser_with_odd_separators(v: Vault) -> None:
    # U+2028 and form feed are not line breaks in a Markdown file; CRLF is one break.
    put(v, "notes/odd.md", "# Odd\r\n\r\nfirst\u2028still first\x0c line\r\nsecond quokka\r\n")
    v.index()
    result = v.search("quokka")[0]
    assert result.citation == "notes/odd.md#L4-L4"


def test_opened_pages_gain_recency_and_rebuild_keeps_that_history(v: Vault) -> None:
    first = v.search("latency", explain=True)
    top = first[0].path
    v.show(top)  # opening a page is deliberate use: it is recorded as recalled today
    again = v.search("latency", explain=True)
    before = next(r for r in first if r.path == top)
    after = next(r for r in again if r.path == top)
    assert after.explain["recency"] == pytest.approx(1.2)
    assert after.score > before.score
    v.rebuild()
    assert next(r for r in v.search("latency") if r.path == top).score == \
        pytest.approx(after.score)


def test_the_same_text_in_two_notes_is_returned_once(v: Vault) -> None:
    text = "The quarterly okapi review moved to Thursdays after the retro."
    put(v, "notes/original.md", f"# Original\n\n{text}\n")
    put(v, "notes/copy.md", f"# Copy of the notes\n\n{text}\n")
    v.index()
    results = v.search("okapi review Thursdays")
    assert len([r for r in results if r.path in ("notes/original.md", "notes/copy.md")]) == 1
    passages = v.search("okapi review Thursdays", group="chunk")
    assert len([r for r in passages if "okapi" in r.snippet]) == 1


def test_scores_do_not_depend_on_the_hash_seed(v: Vault) -> None:
    import subprocess
    import sys

    code = ("import sys; from kenning import Vault; v = Vault(sys.argv[1]);"
            "print([(r.path, round(r.score, 9), [(h.start_line, h.end_line) for h in r.hits])"
            " for r in v.search('latency read model customers sightings')])")
    runs = {subprocess.run([sys.executable, "-c", code, str(v.root)], capture_output=True,
                           text=True, check=True, env={**__import__("os").environ,
                                                       "PYTHONHASHSEED": seed}).stdout
            for seed in ("0", "1", "2", "3")}
    assert len(runs) == 1


def test_turns_of_the_person_the_query_names_outrank_the_others(vault: Vault) -> None:
    filler = "we went through the quarterly numbers line by line and talked it over at length " * 2
    put(vault, "sources/chats/standup.md",
        "---\ntype: source\nkind: chat\n---\n# Standup\n\n"
        f"- **Bo** (09:00): the budget for the offsite is too small, {filler}\n"
        f"- **Ana** (09:01): the budget for the offsite should double, {filler}\n"
        f"- **Bo** (09:02): weather looks fine for the trip, {filler}\n")
    vault.index()
    said = vault.search("What did Ana say about the budget?", group="chunk", explain=True)
    assert said[0].snippet.startswith("- **Ana**"), [r.snippet for r in said]
    bo = next(r for r in said if r.snippet.startswith("- **Bo**") and "budget" in r.snippet)
    assert bo.explain["speaker"] == 0.75 and "speaker" not in said[0].explain
    # Naming nobody (or everybody) changes nothing: Bo's earlier line is as good as Ana's.
    plain = vault.search("the budget for the offsite", group="chunk", explain=True)
    assert all("speaker" not in r.explain for r in plain)
    both = vault.search("What did Ana and Bo say about the budget?", group="chunk",
                        explain=True)
    assert all("speaker" not in r.explain for r in both)


@pytest.mark.parametrize("query", ["caching decisions", "investors invested", "the pricing",
                                   "\"seed round\"", "定例会議", "Horizon Ventures partner",
                                   "résumé naïve café", "hired engineers"])
def test_local_highlighting_matches_what_fts_matches(v: Vault, query: str) -> None:
    from kenning.recall.citations import OPEN, highlights

    parsed = parse_query(query)
    ids = [r[0] for r in v.store.rows("SELECT id FROM chunks")]
    fts = {r[0] for r in v.store.match_chunks(parsed.text_query(), limit=len(ids))}
    marked = highlights(v.store, parsed, ids)
    assert set(marked) == fts  # the same chunks as FTS5 itself matches
    if fts and not parsed.cjk:
        assert any(OPEN in body for body, _ in marked.values())


def test_snippets_leave_out_inline_fields_and_block_ids(vault: Vault) -> None:
    put(vault, "people/sarah.md", "---\ntype: person\n---\n# Sarah\n\n## Facts\n\n"
        "- works_at:: [[Horizon]] Partner on the seed team [from:: 2024-05-01] "
        "[source:: [[sources/email/abc#L4]]] [epistemic:: assertion] ^f1\n")
    vault.index()
    (result,) = vault.search("partner seed team", mode="lexical")
    assert result.snippet == "- works_at:: [[Horizon]] Partner on the seed team"
    assert result.citation == "people/sarah.md#L8-L8"  # the citation still has the whole line


def test_a_passage_counts_its_pages_best_passage(vault: Vault) -> None:
    filler = " ".join(f"filler{i}" for i in range(40))
    # Both pages hold one passage with "budget"; only the standup page also holds a passage
    # with every word of the query, so its other passage ranks above the retro's equal one.
    put(vault, "notes/standup.md", f"# Standup\n\nthe offsite budget review is due {filler}\n\n"
        f"we agreed on the budget {filler}\n")
    put(vault, "notes/retro.md", f"# Retro\n\nthey agreed on the budget {filler}\n")
    vault.index()
    results = vault.search("offsite budget review", mode="lexical", group="chunk",
                           explain=True)
    agreed = [r for r in results if "agreed on the budget" in r.snippet]
    assert [r.path for r in agreed] == ["notes/standup.md", "notes/retro.md"]
    standup, retro = agreed
    assert standup.explain["chunk"] == pytest.approx(retro.explain["chunk"], rel=0.05)
    assert standup.explain["page"] > retro.explain["page"]
    assert standup.explain["score"] == pytest.approx(
        (standup.explain["chunk"] + standup.explain["page"]) * standup.factor, abs=1e-3)


def test_lines_two_passages_share_are_cited_once_and_neither_is_lost(vault: Vault) -> None:
    # The question closes one chunk and its answer opens the next: the question's passage cites
    # the answer too, the answer's passage cites it again. The weaker keeps its own line.
    words = " ".join(f"w{i}" for i in range(26))
    put(vault, "sources/chats/trip.md",
        "---\ntype: source\nkind: chat\n---\n# Trip\n\n"
        f"- **Ana** (D1:1): {words} where did you camp with the kids?\n"
        f"- **Bo** (D1:2): we camped by the lake with the kids {words}\n"
        f"- **Ana** (D1:3): {words} sounds lovely\n")
    vault.index()
    results = vault.search("camp kids lake", mode="lexical", group="chunk")
    cited = [(h.start_line, h.end_line) for r in results if r.path == "sources/chats/trip.md"
             for h in r.hits]
    lines = sorted(n for a, b in cited for n in range(a, b + 1))
    assert lines == sorted(set(lines))  # no line cited twice
    assert {7, 8} <= set(lines)         # both turns are still evidence
    question = next(r for r in results if r.hits[0].start_line == 7)
    assert question.snippet.startswith("- **Ana** (D1:1)") and "lake" not in question.snippet


def test_a_possessive_asks_about_the_person(vault: Vault) -> None:
    assert parse_query("What are Melanie's pets' names?").terms == ("melanie", "pets", "names")
    filler = " ".join(f"filler{i}" for i in range(30))
    put(vault, "sources/chats/pets.md",
        "---\ntype: source\nkind: chat\n---\n# Pets\n\n"
        f"- **Melanie** (D1:1): our dog is called Luna {filler}\n"
        f"- **Caroline** (D1:2): my dog is called Oscar {filler}\n")
    vault.index()
    results = vault.search("Melanie's dog", mode="lexical", group="chunk", explain=True)
    assert results[0].snippet.startswith("- **Melanie**")
    assert results[1].explain["speaker"] == 0.75  # Caroline's turn: not the person asked about
