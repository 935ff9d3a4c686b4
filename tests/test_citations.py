"""Citations hold the evidence, in every mode: each cited range contains the query's words, or
the hit says what found it instead (``found``: its page's name, its section heading, its meaning,
or the passage next to it) — and never says so when the words are there.

Real vaults on disk, indexed with the deterministic ``FakeEmbedder`` of test_hybrid (a
bag-of-words vectoriser with a small synonym map: "vehicle" means "car"); the last test runs
the bundled model on the Japanese note of the issue.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write as put
from test_hybrid import FakeEmbedder, fake  # noqa: F401 — the fixture

from kenning.answers import result_path
from kenning.api import Vault
from kenning.cli import main
from kenning.recall.search import parse_query

JA = "notes/会議メモ.md"
EN = "notes/Meeting notes.md"
KESTREL = "notes/Kestrel.md"  # no H1: its title is its file name
HANDBOOK = "notes/handbook.md"
OWL = "notes/owl.md"
PARKING = "notes/parking.md"
HARRIER = "notes/Harrier.md"  # frontmatter, no H1
FILLER = " ".join(f"filler{i}" for i in range(40))
MODES = ("lexical", "hybrid", "dense")


def build(vault: Vault) -> Vault:
    put(vault, JA, "# 会議メモ\n\n来週の予定を確認した。\n")
    put(vault, EN, "# Meeting notes\n\nWe checked the plan for next week.\n")
    put(vault, KESTREL, "Flies low over the fields at dusk.\n")
    # Three chunks: the heading's own, then two paragraphs long enough to stand alone, so
    # the last chunk matches "deployment" through its heading column alone.
    put(vault, HANDBOOK, f"# Handbook\n\n## Deployment\n\nShip on Tuesdays. {FILLER}\n\n"
        f"Roll back from the console. {FILLER}\n\nKeep the pager on. {FILLER}\n")
    put(vault, OWL, "---\nvenue: Lisbon\n---\n# Owl\n\nHoots at night in the old tower.\n")
    put(vault, PARKING, "# Parking\n\nThe car park is full on Mondays.\n")
    put(vault, HARRIER, "---\naliases: [Grey ghost]\n---\n\nQuarters the moor in spring.\n")
    vault.index()
    return vault


@pytest.fixture
def cv(vault: Vault, fake: FakeEmbedder) -> Vault:  # noqa: F811
    return build(vault)


def cited(vault: Vault, citation: str) -> str:
    match = re.fullmatch(r"(.+)#L(\d+)-L(\d+)", citation)
    assert match, citation
    lines = (vault.root / match.group(1)).read_text(encoding="utf-8").splitlines()
    start, end = int(match.group(2)), int(match.group(3))
    assert 1 <= start <= end <= len(lines), citation
    return "\n".join(lines[start - 1 : end])


def holds_words(text: str, query: str) -> bool:
    """True when ``text`` holds a query word (Porter stems compared, as FTS5 matches)."""
    import snowballstemmer

    stem = snowballstemmer.stemmer("porter").stemWord
    q = parse_query(query)
    words = {stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}
    folded = " ".join(re.findall(r"[^\W_]+", text.casefold()))
    return (any(stem(t) in words for t in q.terms) or any(p.casefold() in folded
                                                          for p in q.phrases)
            or any(r in text for r in q.cjk))


def check_contract(vault: Vault, results: Any, query: str) -> list[dict[str, Any]]:
    """Every hit holds the query's words in its cited lines exactly when it says nothing else
    found it; returns the hits (JSON form) for further checks."""
    hits = []
    for result in results:
        data = result.to_dict()
        assert "found" not in data  # said once, on the hit it is about
        for hit in data["hits"]:
            text = cited(vault, hit["citation"])
            if "found" in hit:
                assert hit["found"] in ("name", "heading", "meaning", "context"), hit
                assert not holds_words(text, query), (hit, text)
            else:
                assert holds_words(text, query), (hit, text)
            hits.append({**hit, "path": result.path})
    return hits


QUERIES = ["会議", "meeting", "kestrel hunting", "Kestrel", "deployment", "lisbon", "vehicle",
           "car park", "night tower", "plan week", "Harrier", "grey ghost", "harrier spring"]


@pytest.mark.parametrize("group", ["page", "chunk"])
@pytest.mark.parametrize("mode", MODES)
def test_every_cited_range_holds_the_words_or_says_what_found_it(cv: Vault, mode: str,
                                                                 group: str) -> None:
    for query in QUERIES:
        results = cv.search(query, mode=mode, group=group, limit=20)
        assert results.mode == mode
        check_contract(cv, results, query)


@pytest.mark.parametrize("mode", MODES)
def test_a_title_line_match_is_cited_at_the_title_line(cv: Vault, mode: str) -> None:
    # The note: 会議 is only in the title line. Lexical mode cited it; hybrid cited
    # line 3, which does not hold it. Meaning may widen a citation, never lose the words.
    for path, query in ((JA, "会議"), (EN, "meeting")):
        top = next(r for r in cv.search(query, mode=mode, explain=True) if r.path == path)
        assert top.found is None
        assert top.hits[0].start_line == 1, (mode, top.citation)
        ranks = top.explain or {}
        if ranks.get("dense_rank", 10**6) <= ranks.get("lexical_rank", 10**6):
            # Found at least as much by meaning: the whole note, its title line included.
            assert top.citation == f"{path}#L1-L3", (mode, ranks)
        else:
            assert top.citation == f"{path}#L1-L1", (mode, ranks)
    assert any(cv.search(q, mode="hybrid", explain=True)[0].explain["dense_rank"] == 1
               for q in ("会議", "meeting"))  # the whole-note case is exercised in hybrid


@pytest.mark.parametrize("mode", MODES)
def test_a_frontmatter_match_keeps_its_line_in_the_citation(cv: Vault, mode: str) -> None:
    results = cv.search("lisbon", mode=mode, limit=20)
    owl = next(r for r in results if r.path == OWL)
    # Only a frontmatter field holds the word; the dense arm never reads frontmatter, yet
    # even in dense mode the line with the word stays inside the citation.
    assert owl.found is None and "venue: Lisbon" in cited(cv, owl.citation)
    assert ("Hoots at night" in cited(cv, owl.citation)) == (mode == "dense")


def test_a_title_only_match_says_it_was_found_by_name(cv: Vault) -> None:
    for mode in ("lexical", "hybrid"):
        kestrel = next(r for r in cv.search("kestrel hunting", mode=mode) if r.path == KESTREL)
        assert kestrel.found == "name" and kestrel.citation == f"{KESTREL}#L1-L1", mode
    # The name itself: an exact match is cited at the page's first line, found by its name.
    exact = cv.search("Kestrel", mode="lexical")[0]
    assert exact.exact and exact.path == KESTREL and exact.found == "name"
    assert exact.citation == f"{KESTREL}#L1-L1"


@pytest.mark.parametrize("mode", MODES)
def test_a_page_named_by_its_file_is_cited_at_its_first_body_line(cv: Vault, mode: str) -> None:
    # Its name is only its file name: the first line after the frontmatter is cited, never the
    # `---` fence; an alias is cited at its frontmatter line.
    name = next(r for r in cv.search("Harrier", mode=mode) if r.path == HARRIER)
    assert name.found in ("name", "meaning") and name.citation == f"{HARRIER}#L5-L5", mode
    if mode != "dense":
        alias = next(r for r in cv.search("grey ghost", mode=mode) if r.path == HARRIER)
        assert alias.found is None and "aliases: [Grey ghost]" in cited(cv, alias.citation)


def test_an_exact_title_match_cites_the_h1_that_holds_the_name(cv: Vault) -> None:
    exact = cv.search("Meeting notes", mode="lexical")[0]
    assert exact.exact and exact.path == EN and exact.found is None
    assert cited(cv, exact.citation).startswith("# Meeting notes")


def test_a_heading_only_match_says_so(cv: Vault) -> None:
    # In hybrid the dense arm keeps the section's later chunks: their lines do not hold the
    # word, their heading does.
    results = cv.search("deployment", mode="hybrid", group="chunk", limit=20)
    hits = [h for h in check_contract(cv, results, "deployment") if h["path"] == HANDBOOK]
    assert any("found" not in h and "## Deployment" in cited(cv, h["citation"]) for h in hits)
    later = [h for h in hits if h.get("found") == "heading"]
    assert later and all(h["heading"].endswith("Deployment") for h in later)


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_a_passage_only_the_dense_arm_found_says_meaning(cv: Vault, mode: str) -> None:
    results = cv.search("vehicle", mode=mode)
    parking = next(r for r in results if r.path == PARKING)
    assert parking.found == "meaning"
    assert cited(cv, parking.citation) == "The car park is full on Mondays."
    assert parking.to_dict()["hits"][0]["found"] == "meaning"
    assert cv.search("vehicle", mode="lexical") == []


def test_the_cli_shows_and_the_json_carries_what_found_a_hit(cv: Vault) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(cv.root), "search", "vehicle", "--mode", "hybrid"])
    assert out.exit_code == 0, out.output
    assert "The car park is full on Mondays.  (found by meaning)" in out.output
    raw = runner.invoke(main, ["-C", str(cv.root), "search", "vehicle", "--json"])
    data = json.loads(raw.output)
    parking = next(r for r in data["results"] if result_path(r) == PARKING)
    assert parking["hits"][0]["found"] == "meaning"
    words = runner.invoke(main, ["-C", str(cv.root), "search", "car park", "--json"])
    first = json.loads(words.output)["results"][0]
    assert result_path(first) == PARKING  # words: no marker at all
    assert all("found" not in h for h in first["hits"])


@pytest.mark.embeddings
def test_the_bundled_model_cites_the_japanese_title_line(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "ja")
    put(vault, JA, "# 会議メモ\n\n来週の予定を確認した。\n")
    put(vault, "notes/買い物.md", "# 買い物\n\n牛乳とパンを買った。\n")
    vault.index()
    for mode in MODES:
        results = vault.search("会議", mode=mode)
        top = next(r for r in results if r.path == JA)
        assert top.hits[0].start_line == 1 and "# 会議メモ" in cited(vault, top.citation), mode
        check_contract(vault, results, "会議")
    vault.close()
