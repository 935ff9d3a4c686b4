"""The timeline and decisions views over the real server (and real Chromium), on the sample
vault: one vault (the session's shared ``indexed_sample``, read only), one server for the module,
and the shared browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import httpx2 as httpx
import pytest
from bs4 import BeautifulSoup
from web_harness import running

CITATION = re.compile(r"^.+\.md#L\d+-L\d+$")
REDIS = "decisions/Use Redis for replay caching.md"
IN_PROCESS = "decisions/In-process caching for the Replay API.md"
MINATO = "organizations/Minato Systems.md"


@pytest.fixture(scope="module")
def base(indexed_sample: Path) -> Iterator[str]:
    with running(indexed_sample) as url:
        yield url


def get(base: str, path: str, **params: object) -> tuple[httpx.Response, BeautifulSoup]:
    response = httpx.get(base + path, params=params) if params else httpx.get(base + path)
    return response, BeautifulSoup(response.text, "html.parser")


def test_timeline_range_newest_first_each_row_cited(base: str) -> None:
    response, doc = get(base, "/timeline", since="2026-03-01", until="2026-06-30")
    assert response.status_code == 200
    rows = doc.select("li.event.nav-item")
    assert len(rows) >= 5
    days = [r["data-date"][:10] for r in rows]
    assert days == sorted(days, reverse=True)
    assert all("2026-03-01" <= d <= "2026-06-30" for d in days)
    for row in rows:
        cite = row.select_one("a.cite")
        assert CITATION.match(cite.get_text()), cite
        assert cite["href"].startswith("/page/") and "?hl=" in cite["href"]
        assert row.select_one(".what a")["href"].startswith("/page/")
    kinds = {c for r in rows for c in r["class"]}
    assert "began" in kinds  # facts whose from:: falls in the range are changes too
    # four months: grouped by month, newest first; a month's range: by day
    heads = [h.get_text() for h in doc.select(".timeline h2")]
    assert heads == ["2026-06", "2026-05", "2026-04", "2026-03"]
    _, doc = get(base, "/timeline", since="2026-04-01", until="2026-04-30")
    heads = [h.get_text() for h in doc.select(".timeline h2")]
    assert heads and heads == sorted(heads, reverse=True)
    assert all(h.startswith("2026-04-") and len(h) == 10 for h in heads)


def test_timeline_of_one_entity_since_its_last_meeting(base: str) -> None:
    response, doc = get(base, "/timeline", entity="Minato Systems")
    assert response.status_code == 200
    rows = doc.select("li.event")
    assert rows and {r["data-path"] for r in rows} == {MINATO}
    quick = [a for a in doc.select(".quick-ranges a") if "last meeting" in a.get_text()]
    assert quick, "an entity with meetings offers 'since the last meeting'"
    assert "2026-09-09" in quick[0].get_text()
    response, doc = get(base, quick[0]["href"])
    days = [r["data-date"][:10] for r in doc.select("li.event")]
    assert days and all(d >= "2026-09-09" for d in days)
    assert {r["data-path"] for r in doc.select("li.event")} == {MINATO}


def test_timeline_quick_ranges_and_bad_dates(base: str) -> None:
    _, doc = get(base, "/timeline")
    week = next(a for a in doc.select(".quick-ranges a") if a.get_text() == "Last 7 days")
    assert f"since={(date.today() - timedelta(days=7)).isoformat()}" in week["href"]
    response, doc = get(base, "/timeline", since="yesterday-ish")
    assert response.status_code == 400
    assert "yesterday-ish" in doc.select_one(".problem").get_text()
    assert "Traceback" not in response.text
    response, _ = get(base, "/timeline", entity="No Such Entity Anywhere")
    assert response.status_code == 404


def test_timeline_keyboard_moves_over_rows(base: str, web_browser: object) -> None:
    page = web_browser.new_page()  # type: ignore[attr-defined]
    page.goto(base + "/timeline?since=2026-01-01")
    page.keyboard.press("j")
    page.keyboard.press("j")
    selected = page.locator("li.event.selected")
    assert selected.count() == 1
    assert selected.get_attribute("data-date") == page.locator("li.event").nth(1).get_attribute(
        "data-date")
    page.close()


def test_decisions_superseded_linked_both_ways(base: str, web_browser: object) -> None:
    response, doc = get(base, "/decisions")
    assert response.status_code == 200
    cards = doc.select("article.decision")
    paths = [c["data-path"] for c in cards]
    assert REDIS in paths and IN_PROCESS in paths
    decided = [c.select_one("dd").get_text() for c in cards]
    assert decided == sorted(decided, reverse=True)  # newest decided first
    old = cards[paths.index(REDIS)]
    assert "superseded" in old["class"]
    assert old.select_one("a.superseded-by")["href"] == (
        "/page/decisions/In-process%20caching%20for%20the%20Replay%20API.md")
    new = cards[paths.index(IN_PROCESS)]
    assert new.select_one("a.supersedes")["href"].endswith(
        "Use%20Redis%20for%20replay%20caching.md")
    assert "Keep Redis and fix invalidation" in new.select_one(".rejected").get_text()
    assert new.select_one(".because").get_text().startswith("Two stale-replay incidents")
    assert CITATION.match(new.select_one("a.cite").get_text())
    # the struck-through title is real CSS in a real browser, and the link works
    page = web_browser.new_page()  # type: ignore[attr-defined]
    page.goto(base + "/decisions")
    title = page.locator(f'article.decision[data-path="{REDIS}"] h3 a.title')
    assert "line-through" in title.evaluate("el => getComputedStyle(el).textDecorationLine")
    with page.expect_navigation():
        page.click(f'article.decision[data-path="{REDIS}"] a.superseded-by')
    assert page.url.endswith("/page/decisions/In-process%20caching%20for%20the%20Replay%20API.md")
    page.close()


def test_decisions_filters(base: str) -> None:
    _, doc = get(base, "/decisions", status="superseded")
    assert [c["data-path"] for c in doc.select("article.decision")] == [REDIS]
    _, doc = get(base, "/decisions", domain="product")
    paths = [c["data-path"] for c in doc.select("article.decision")]
    assert paths == ["decisions/Usage-based pricing over per-seat.md"]
    assert "product" in [o["value"] for o in doc.select("select#domain option")]
