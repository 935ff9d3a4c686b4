"""The open-items and health views over a real server, on the demo vault (sample + its synced
sources, built and indexed, as `kenning demo` makes it), with real HTTP and real Chromium.

The demo vault is built once per session (tests/conftest.py ``demo_root``) and served once for
the module; the browser is the shared one. The tests that change the vault (a planted
commitment, a file left unindexed) each get a private copy of it and a server of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from web_harness import WEB_TODAY, copy_vault, running

from kenning.api import Vault

TODAY = "2026-11-15"
ROW = re.compile(r'<li class="item nav-item (?P<cls>[^"]*)" data-id="(?P<id>[^"]+)"')


@pytest.fixture(scope="module")
def env() -> Iterator[None]:
    """Today is fixed for overdue."""
    assert TODAY == WEB_TODAY  # the day the shared demo vault was built on
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_EMBEDDINGS", "none")
        mp.setenv("KENNING_TODAY", TODAY)
        mp.delenv("KENNING_DATABASE_URL", raising=False)
        yield


@pytest.fixture(scope="module")
def demo(env: None, demo_root: Path) -> Iterator[tuple[Path, str]]:
    """(vault root, base URL) of the module's server over the shared demo vault (read only)."""
    with running(demo_root) as base:
        yield demo_root, base


@pytest.fixture
def own_demo(env: None, demo_root: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(vault root, base URL) of a private copy of the demo vault, for a test that changes it."""
    root = copy_vault(demo_root, tmp_path / "demo")
    with running(root) as base:
        yield root, base


def rows(body: str) -> list[tuple[str, list[str]]]:
    """(data-id, classes) of every item row, in page order."""
    return [(m["id"], m["cls"].split()) for m in ROW.finditer(body)]


def test_items_are_grouped_overdue_first_with_who_to_due_and_a_citation(demo) -> None:
    _, base = demo
    r = httpx.get(base + "/items")
    assert r.status_code == 200
    body = r.text
    found = rows(body)
    assert len(found) >= 10
    flags = ["overdue" in cls for _, cls in found]
    # Every overdue row comes before every other row, and the groups are labelled.
    assert flags[0] and flags == sorted(flags, reverse=True)
    assert body.index(">Overdue <") < body.index(">Open <") < body.index(">Done <")
    # The seed-close commitment: its due date, how late it is, its citation link.
    assert "due 2026-01-16" in body and "days overdue" in body
    assert ('<a class="cite" href="/page/meetings/2026-01-12%20Seed%20close%20with%20Horizon'
            '%20Ventures.md?hl=27-27#L27">meetings/2026-01-12 Seed close with Horizon '
            'Ventures.md#L27-L27</a>') in body
    # A commitment with a block id keeps it as its data-id; who → to link to their pages.
    assert 'data-id="i-5bc159ee"' in body
    assert '<a href="/page/people/Diego%20Santos.md">Diego Santos</a> → ' in body
    # Decisions are a kind of their own: not in the default list.
    assert "kind-decision" not in body


def test_filters_and_quick_links(demo) -> None:
    _, base = demo
    mine = httpx.get(base + "/items", params={"who": "me", "status": "open"}).text
    assert 'aria-current="true">Mine</a>' in mine
    assert rows(mine) and all("open" in cls for _, cls in rows(mine))
    assert '<span class="me">me</span>' in mine
    waiting = httpx.get(base + "/items", params={"to": "me", "status": "open"}).text
    assert 'aria-current="true">Waiting on others</a>' in waiting
    assert "Marta Nowak" in waiting and rows(waiting) != rows(mine)
    overdue = httpx.get(base + "/items?overdue=1").text
    assert rows(overdue) and all("overdue" in cls for _, cls in rows(overdue))
    assert len(rows(overdue)) < len(rows(httpx.get(base + "/items").text))
    decisions = httpx.get(base + "/items?kind=decision").text
    assert rows(decisions) and all("decided" in cls or "superseded" in cls
                                   for _, cls in rows(decisions))
    assert "rejected: " in decisions
    done = httpx.get(base + "/items?status=done").text
    assert rows(done) and all("done" in cls for _, cls in rows(done))
    assert "closed by <a class=\"cite\"" in done


def test_a_bad_filter_is_said_above_the_form_not_a_traceback(demo) -> None:
    _, base = demo
    r = httpx.get(base + "/items", params={"who": "Nobody At All"})
    assert r.status_code == 400
    assert "no page named &#39;Nobody At All&#39;" in r.text
    assert 'value="Nobody At All"' in r.text  # the form keeps what was typed
    r = httpx.get(base + "/items", params={"status": "sideways"})
    assert r.status_code == 400 and "is not one of open, done" in r.text
    r = httpx.get(base + "/items", params={"kind": "<script>"})
    assert r.status_code == 400 and "<script>" not in r.text


def test_health_shows_findings_with_fixes_coverage_and_embedding_state(demo) -> None:
    root, base = demo
    r = httpx.get(base + "/health")
    assert r.status_code == 200
    body = r.text
    with Vault(root) as v:
        report = v.doctor()
    # Every finding of the doctor is on the page, with its level; errors and warnings first.
    levels = re.findall(r'<li class="finding nav-item (\w+)" data-check="([^"]+)"', body)
    assert sorted(levels) == sorted((f.level, f.check) for f in report.findings)
    order = ["error", "warn", "note", "ok"]
    assert [order.index(lv) for lv, _ in levels] == sorted(order.index(lv) for lv, _ in levels)
    warn = next(f for f in report.findings if f.level == "warn")
    assert warn.fix and f"fix: <code>{warn.fix}</code>" in body
    # The dangling link's place links to that line of the page.
    assert '<a href="/page/memory/2026-11-03.md?hl=9-9#L9"><code>memory/2026-11-03.md:9' in body
    stats = report.stats
    assert f'<p class="big">{stats["indexed"]} <span class="of">of {stats["files"]} files' in body
    assert "embeddings are switched off" in body
    assert "Healthy, with warnings" in body


def test_items_view_in_chromium_overdue_is_red_and_keys_move_over_rows(demo, web_browser) -> None:
    _, base = demo
    page = web_browser.new_page()
    page.goto(base + "/items")
    first = page.locator("li.item").first
    assert "overdue" in (first.get_attribute("class") or "")
    red = first.locator(".due.overdue").evaluate("e => getComputedStyle(e).color")
    plain = page.locator("li.item:not(.overdue) .due").first.evaluate(
        "e => getComputedStyle(e).color")
    assert red != plain
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert "selected" in (page.locator("li.item").nth(1).get_attribute("class") or "")
    page.keyboard.press("k")
    assert "selected" in (first.get_attribute("class") or "")
    href = first.locator("a").first.get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url("**/page/**")
    assert href.split("#")[0] in page.url
    # The kind filter submits its form on change (data-submit), as a bookmarkable GET URL.
    page.goto(base + "/items")
    page.select_option("#f-kind", "decision")
    page.wait_for_url("**kind=decision**")
    assert page.locator("li.item.decided").count() >= 1
    page.close()


def test_a_planted_overdue_commitment_is_listed_first(own_demo) -> None:
    """Changes the vault: a person page gets a commitment due long before any other."""
    root, base = own_demo
    person = root / "people" / "Owen Hart.md"
    text = person.read_text(encoding="utf-8").rstrip("\n")
    text += ("\n\n## Commitments\n- [ ] 2025-05-02 — Send Owen the signed pilot terms "
             "[who:: me] [to:: [[Owen Hart]]] [due:: 2025-05-09] ^i-0badc0de\n")
    person.write_text(text, encoding="utf-8")
    with Vault(root) as v:
        v.index(embed=False)
    body = httpx.get(base + "/items").text  # the same server: a reload shows it
    first_id, first_cls = rows(body)[0]
    assert first_id == "i-0badc0de"
    assert "overdue" in first_cls and "open" in first_cls
    assert "Send Owen the signed pilot terms" in body.split("</li>", 1)[0]
    assert "due 2025-05-09 · 555 days overdue" in body


def test_health_turns_to_an_error_with_its_fix_when_a_file_is_not_indexed(own_demo) -> None:
    """Changes the vault: a note is written and not indexed."""
    root, base = own_demo
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "Unindexed.md").write_text("# Unindexed\n\nNot yet.\n", encoding="utf-8")
    body = httpx.get(base + "/health").text
    assert "Unhealthy" in body
    assert re.search(r'<li class="finding nav-item error" data-check="coverage">', body)
    assert "index is not current: 1 not indexed" in body
    assert "fix: <code>kenning index</code>" in body
    assert "<code>notes/Unindexed.md</code>" in body
