"""The web view's search: real server, real HTTP, real Chromium, on the bundled sample vault.

One vault (the sample, indexed lexically: the session's shared ``indexed_sample``, read only),
one server for the module, and the shared browser.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from web_harness import running

CACHING = "what did we decide about caching"
MEETING = "meetings/2026-04-15 ミナトシステムズ定例会議（第1回）.md"


@pytest.fixture(scope="module")
def base(indexed_sample: Path) -> Iterator[str]:
    old = os.environ.get("KENNING_EMBEDDINGS")
    os.environ["KENNING_EMBEDDINGS"] = "none"
    try:
        with running(indexed_sample) as url:
            yield url
    finally:
        if old is None:
            os.environ.pop("KENNING_EMBEDDINGS", None)
        else:
            os.environ["KENNING_EMBEDDINGS"] = old


@pytest.fixture
def page(web_browser: Any) -> Iterator[Any]:
    context = web_browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    yield p
    context.close()


def get(base: str, path: str, **params: Any) -> httpx.Response:
    return httpx.get(base + path, params=params, timeout=30)


def test_first_citation_opens_the_decision_highlighted(base: str, page: Any) -> None:
    """Search, click the first citation: the decision page shows the cited lines highlighted,
    in view, and they hold the answer."""
    page.goto(f"{base}/search?q={CACHING}&type=decision")
    first = page.locator("li.result a.cite").first
    citation = first.inner_text()
    assert citation.startswith("decisions/In-process caching for the Replay API.md#L")
    first.click()
    page.wait_for_load_state("load")
    assert "/page/decisions/In-process%20caching%20for%20the%20Replay%20API.md" in page.url
    assert "hl=" in page.url
    lit = page.locator(".body .hl")
    assert lit.count() >= 1
    assert lit.first.is_visible()
    page.wait_for_function("() => { const r = document.querySelector('.body .hl')"
                           ".getBoundingClientRect(); return r.top >= 0 && "
                           "r.bottom <= window.innerHeight; }")
    text = " ".join(lit.all_inner_texts()).lower()
    assert "in-process cache" in text
    start = int(citation.rsplit("#L", 1)[1].split("-")[0])
    assert lit.first.get_attribute("data-line") == str(start)


def test_results_cite_lines_and_link_to_them(base: str) -> None:
    r = get(base, "/search", q=CACHING)
    assert r.status_code == 200
    assert 'class="card result nav-item" data-path="topics/Caching.md"' in r.text
    assert ('<a class="cite" href="/page/topics/Caching.md?hl=14-14#L14">'
            'topics/Caching.md#L14-L14</a>') in r.text
    assert "searched lexically" in r.text  # the note: no vectors in this vault
    assert "Show score breakdown" in r.text
    assert r.headers["server-timing"].startswith("app;dur=")


def test_explain_shows_the_score_breakdown(base: str) -> None:
    plain = get(base, "/search", q=CACHING)
    assert 'class="explain-grid"' not in plain.text
    r = get(base, "/search", q=CACHING, explain="1")
    assert r.text.count('class="explain-grid"') >= 3
    assert "<dt>lexical</dt><dd>" in r.text
    assert "<dt>matched</dt><dd>" in r.text


def test_filters_map_onto_the_search(base: str) -> None:
    r = get(base, "/search", q="caching", type="decision")
    paths = [line.split('data-path="')[1].split('"')[0]
             for line in r.text.splitlines() if 'class="card result' in line]
    assert paths and all(p.startswith("decisions/") for p in paths)
    r = get(base, "/search", q="caching", folder="topics")
    assert 'data-path="topics/Caching.md"' in r.text
    assert 'data-path="decisions/' not in r.text
    r = get(base, "/search", q="Redis", until="2026-01-01", type="decision")
    assert "No results" in r.text and "Nothing matched" in r.text
    assert "search without them" in r.text  # the empty state offers to drop the filters


@pytest.mark.parametrize(("params", "message"), [
    ({"since": "notadate"}, "since: expected a date YYYY-MM-DD, got &#39;notadate&#39;"),
    ({"as_of": "2026-13-45"}, "as of: expected a date YYYY-MM-DD"),
    ({"type": "spaceship"}, "unknown entity type &#39;spaceship&#39;"),
    ({"mode": "psychic"}, "mode: expected one of hybrid, lexical, dense"),
    ({"entity": "Nobody At All"}, "no page named &#39;Nobody At All&#39;"),
])
def test_bad_filters_give_one_message(base: str, params: dict[str, str], message: str) -> None:
    r = get(base, "/search", q="caching", **params)
    assert r.status_code == 400
    assert r.text.count('class="error message search-error"') == 1
    assert message in r.text
    assert "Traceback" not in r.text
    assert 'name="q"' in r.text  # the form is still there to fix it


def test_empty_query_is_a_start_page(base: str) -> None:
    r = get(base, "/")
    assert r.status_code == 200
    assert "What happened lately" in r.text
    assert 'class="nav-item recent-item"' in r.text
    assert "Tips" in r.text
    assert 'class="card result' not in r.text


def test_japanese_query_finds_the_japanese_meeting(base: str, page: Any) -> None:
    page.goto(f"{base}/search?q=定例会議 第1回")
    paths = page.locator("li.result").evaluate_all("els => els.map(e => e.dataset.path)")
    assert MEETING in paths
    page.locator(f'li.result[data-path="{MEETING}"] .result-title a').first.click()
    page.wait_for_load_state("load")
    assert "ミナトシステムズ定例会議（第1回）" in page.locator(".body h1.page-title").inner_text()
    assert "パイロット" in page.locator(".body").inner_text()


def test_keyboard_moves_over_results(base: str, page: Any) -> None:
    page.goto(f"{base}/search?q=caching")
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("j")
    first = page.locator("li.result").first
    assert "selected" in (first.get_attribute("class") or "")
    path = first.get_attribute("data-path")
    page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    assert page.locator("article.body").get_attribute("data-path") == path
