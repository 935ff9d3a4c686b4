"""The web view's entity page and /file/: real server, real HTTP, real Chromium.

One vault for the module: a copy of the session's demo vault (the bundled sample, sources
synced, pages built, so pages have sources and items) plus planted bad input (a 5 MB page, a page
whose title and body carry scripts, raw HTML and javascript: links, embed loops, an image),
indexed lexically once; one server; the shared browser.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2 as httpx
import pytest
from web_harness import copy_vault, running

from kenning.api import Vault

REDIS = "decisions/Use Redis for replay caching.md"
INPROC = "decisions/In-process caching for the Replay API.md"
PNG = base64.b64decode(  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
EVIL = """---
title: "<script>window.pwned=1</script> Evil page"
type: note
note: "<b>bold</b> see [[Caching]]"
---
# Evil

<script>window.pwned=1</script>

<img src="x" onerror="window.pwned=1">

<a href="javascript:window.pwned=1" id="raw">raw anchor</a>

[click me](javascript:window.pwned=1) [vb](vbscript:msgbox) [tab](java\tscript:window.pwned=1)
[data](data:text/html;base64,PHNjcmlwdD53aW5kb3cucHduZWQ9MTwvc2NyaXB0Pg==)
<javascript:window.pwned=1>
![x](javascript:window.pwned=1) [safe](https://example.org/a)

Links: [[Caching]], [[Caching#Notes|the notes]], [[No Such Page]],
[[Use Redis for replay caching|the old plan]].

![[Caching]]

![[notes/evil]]

![[pic.png]]
"""
NEEDLE_LINE = 60001


def _big_page() -> str:
    lines = ["---", "title: Big page", "type: note", "---", "# Big page", ""]
    size, i = 0, 0
    while size < 5_000_000:
        i += 1
        line = f"Filler line {i} of the big page, nothing to see here at all, move on."
        lines.append(line)
        size += len(line) + 1
        if i % 20 == 0:
            lines.append("")
    lines[NEEDLE_LINE - 1] = "The NEEDLE line sits far down the page."
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def base(demo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    old = os.environ.get("KENNING_EMBEDDINGS")
    os.environ["KENNING_EMBEDDINGS"] = "none"
    # A copy of the session's demo vault (sources synced, pages built): the build's output does
    # not depend on the planted notes (checked byte for byte), so they join it afterwards.
    root = copy_vault(demo_root, tmp_path_factory.mktemp("webpage") / "sample")
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "evil.md").write_text(EVIL, encoding="utf-8")
    (notes / "pic.png").write_bytes(PNG)
    (notes / "loop-a.md").write_text("# Loop A\n\nA says hi.\n\n![[loop-b]]\n", encoding="utf-8")
    (notes / "loop-b.md").write_text("# Loop B\n\nB says hi.\n\n![[loop-a]]\n", encoding="utf-8")
    (notes / "big.md").write_text(_big_page(), encoding="utf-8")
    with Vault(root) as v:
        v.index(embed=False)
    try:
        with running(Path(root)) as url:
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


def url(path: str, query: str = "") -> str:
    return "/page/" + quote(path) + (f"?{query}" if query else "")


def get(base: str, path: str) -> httpx.Response:
    return httpx.get(base + path, timeout=60)


# -- what the page shows --------------------------------------------------------------------

def test_superseded_fact_is_struck_through_and_links_its_successor(base: str, page: Any) -> None:
    page.goto(base + url(REDIS))
    fact = page.locator("li.fact.superseded").first
    style = fact.locator(".text").evaluate("e => getComputedStyle(e).textDecorationLine")
    assert "line-through" in style
    active = page.locator("li.fact.active .text").first
    assert "line-through" not in active.evaluate("e => getComputedStyle(e).textDecorationLine")
    assert "2026-03-04 – 2026-06-02" in fact.inner_text()
    successor = fact.locator("a.successor")
    assert successor.inner_text() == "In-process caching for the Replay API"
    successor.click()
    page.wait_for_load_state("load")
    assert page.locator("article.body").get_attribute("data-path") == INPROC
    title = page.locator(".body h1.page-title").inner_text()
    assert title == "In-process caching for the Replay API"


def test_blocks_carry_file_lines_and_hl_marks_the_range(base: str) -> None:
    r = get(base, url(INPROC, "hl=22-23"))
    assert r.status_code == 200
    body = r.text
    assert ('<li data-line="22" class="hl">An LRU of 2 GB per instance' in body
            or '<li data-line="22" id="L22" class="hl">An LRU' in body)
    assert 'data-line="23" id="L23" class="hl">Entries expire' in body
    assert '<li data-line="24" id="L24">Requests are routed' in body  # outside: no hl
    assert '<h2 data-line="21" id="L21">' in body
    # the title's H1 (file line 17) heads the page, with its line
    assert '<h1 class="page-title" data-line="17" id="L17">' in body
    # frontmatter rows carry their lines too, so a citation of them is highlighted
    r = get(base, url(INPROC, "hl=3-3"))
    assert '<tr data-line="3" id="L3" class="hl"><th scope="row">aliases</th>' in r.text
    assert '<tr data-line="4" id="L4"><th scope="row">domain</th>' in r.text


def test_wikilinks_embeds_and_missing_links(base: str, page: Any) -> None:
    r = get(base, url("notes/evil.md"))
    assert r.status_code == 200
    body = r.text
    assert '<a class="wikilink" href="/page/topics/Caching.md">Caching</a>' in body
    assert '<a class="wikilink" href="/page/topics/Caching.md#h-notes">the notes</a>' in body
    assert ('<a class="wikilink" href="/page/decisions/Use%20Redis%20for%20replay%20caching.md">'
            'the old plan</a>') in body
    assert '<a class="wikilink missing" href="/search?q=No%20Such%20Page"' in body
    # ![[Caching]] shows the page inline; the page embedding itself is only a link
    assert '<div class="embed" data-embed="topics/Caching.md">' in body
    assert "Rules of thumb the team agreed on" in body
    assert 'data-embed="notes/evil.md"' not in body
    page.goto(base + url("notes/evil.md"))
    img = page.locator("img.embed-image")
    assert img.get_attribute("src") == "/file/notes/pic.png"
    page.wait_for_function("() => document.querySelector('img.embed-image').complete")
    assert img.evaluate("e => e.naturalWidth") == 1
    page.locator('a.wikilink[href="/page/topics/Caching.md#h-notes"]').first.click()
    page.wait_for_load_state("load")
    assert page.locator("article.body").get_attribute("data-path") == "topics/Caching.md"
    assert page.evaluate("location.hash") == "#h-notes"


def test_embed_loops_stop_after_one_level(base: str) -> None:
    r = get(base, url("notes/loop-a.md"))
    assert r.status_code == 200
    assert "A says hi." in r.text and "B says hi." in r.text
    assert r.text.count('class="embed"') == 1  # B inside A; A inside B is a link
    assert '<a class="wikilink" href="/page/notes/loop-a.md">loop-a</a>' in r.text


def test_sidebar_backlinks_by_type_facts_and_sources(base: str) -> None:
    body = get(base, url(REDIS)).text
    assert '<h3 class="rel-head" data-rel="supersedes">supersedes' in body
    i = body.index('data-rel="supersedes"')
    assert "In-process caching for the Replay API" in body[i:i + 600]
    assert body.index('data-rel="supersedes"') < body.index('data-rel="mentions"')
    assert '<span class="epistemic assertion" title="epistemic status">assertion</span>' in body
    assert "Sources that built it" in body
    assert "No build wrote this page" in body  # a hand-written decision
    assert f'<a class="graph-link" data-key="graph" href="/graph/{quote(REDIS)}"' in body
    peter = get(base, url("people/Peter Lindqvist.md")).text
    assert '<span class="confidence" title="confidence">70%</span>' in peter
    assert 'class="page-timeline"' in peter and "Led the caching architecture review." in peter


def test_sources_that_built_a_page_link_to_their_lines(base: str, page: Any) -> None:
    page.goto(base + url("people/Peter Lindqvist.md"))
    sources = page.locator("section.sources li.source-item")
    assert sources.count() >= 2
    item = page.locator("section.sources li.source-item", has_text="replay-cache-decision")
    cite = item.locator("a.cite")
    assert cite.inner_text().startswith(
        "sources/email/2026-10-08-replay-cache-decision-after-yesterday-s-review.md#L")
    cite.click()
    page.wait_for_load_state("load")
    assert page.locator("article.body").get_attribute("data-path", timeout=5000).startswith(
        "sources/email/2026-10-08-replay-cache-decision")
    lit = page.locator(".body .hl")
    assert lit.count() >= 1 and lit.first.is_visible()
    assert "Peter Lindqvist" in " ".join(lit.all_inner_texts())


def test_open_items_and_commitments_on_the_page(base: str) -> None:
    body = get(base, url("people/Peter Lindqvist.md")).text
    i = body.index('class="page-items"')
    section = body[i:body.index("</section>", i)]
    assert "please write it up for the team" in section
    assert 'class="item open' in section
    assert "sources/meetings/2026-10-07-replay-cache-review.md#L" in section


# -- bad input -------------------------------------------------------------------------------

def test_scripts_raw_html_and_javascript_links_are_inert(base: str, page: Any) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(base + url("notes/evil.md"))
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert "<script>window.pwned=1</script> Evil page" in page.title()
    head = page.locator(".body h1.page-title").inner_text()
    assert head == "<script>window.pwned=1</script> Evil page"
    text = page.locator("article.body").inner_text()
    assert "<script>window.pwned=1</script>" in text  # shown as text
    assert '<img src="x" onerror="window.pwned=1">' in text
    hrefs = page.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href') || '')")
    assert hrefs and not [h for h in hrefs
                          if h.replace("\t", "").lower().startswith(("javascript:", "vbscript:",
                                                                     "data:"))]
    assert page.locator("article.body script, article.body [onerror], #raw").count() == 0
    assert page.locator('a[href="https://example.org/a"]').get_attribute("rel") == (
        "noopener noreferrer nofollow")
    # clicking what looks like a link runs nothing either
    page.get_by_text("click me").first.click()
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert dialogs == []
    # the property value's HTML is text, its wikilink a link
    assert "<b>bold</b> see" in page.locator(".props-table").inner_text()
    assert page.locator(".props-table b").count() == 0


def test_a_5mb_page_renders_a_window_and_highlights_far_down(base: str, page: Any) -> None:
    r = get(base, url("notes/big.md"))
    assert r.status_code == 200
    assert "This page is large" in r.text and "showing lines 5–" in r.text
    assert len(r.content) < 1_000_000  # a window, not 5 MB of HTML
    page.goto(base + url("notes/big.md", f"hl={NEEDLE_LINE}-{NEEDLE_LINE}") + f"#L{NEEDLE_LINE}")
    lit = page.locator(".body .hl")
    assert lit.count() == 1
    assert "The NEEDLE line sits far down the page." in lit.inner_text()
    assert lit.is_visible()
    first = int(lit.get_attribute("data-line") or 0)
    assert first <= NEEDLE_LINE < first + 21
    page.locator(".window-note a", has_text="Earlier lines").click()
    page.wait_for_load_state("load")
    assert "showing lines" in page.locator(".window-note").inner_text()


@pytest.mark.parametrize("path", [
    "/page/%2e%2e/%2e%2e/etc/passwd", "/page/notes/..%2f..%2f..%2fetc%2fpasswd",
    "/page/..%5c..%5cwindows", "/file/%2e%2e/%2e%2e/etc/passwd.png",
])
def test_paths_out_of_the_vault_are_refused(base: str, path: str) -> None:
    r = get(base, path)
    assert r.status_code in (400, 404)
    assert "outside the vault" in r.text
    assert "root:" not in r.text and "Traceback" not in r.text


def test_a_missing_page_is_a_404_page_with_close_names(base: str) -> None:
    r = get(base, "/page/" + quote("Replay caching plan"))
    assert r.status_code == 404
    assert "no page named &#39;Replay caching plan&#39;" in r.text
    assert "Did you mean one of these?" in r.text
    assert 'href="/page/topics/Caching.md"' in r.text or "decisions/" in r.text


def test_a_bad_highlight_is_a_note_not_an_error(base: str) -> None:
    r = get(base, url(INPROC, "hl=banana"))
    assert r.status_code == 200
    assert "ignored ?hl=&#39;banana&#39;" in r.text
    assert 'class="hl"' not in r.text


def test_file_serves_vault_images_only(base: str) -> None:
    r = get(base, "/file/notes/pic.png")
    assert r.status_code == 200
    assert r.headers["content-type"] == "image/png"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in r.headers["content-security-policy"]
    assert r.content == PNG
    for bad in ("/file/notes/evil.md", "/file/.kenning/config.yaml", "/file/notes/none.png",
                "/file/.kenning/index.png"):
        assert get(base, bad).status_code == 404, bad
