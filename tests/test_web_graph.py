"""The graph view over the real server and real Chromium, on the sample vault.

One vault and one server for the module, and the shared browser. The vault is the bundled
sample plus a planted hub (``topics/Hub.md``, linked from 520 small pages) for the 500-node cap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2 as httpx
import pytest
from bs4 import BeautifulSoup
from web_harness import running

from kenning.api import Vault
from kenning.sample import copy_sample

PERCH = "projects/Perch.md"
KESTREL = "organizations/Kestrel Labs.md"
REPLAY = "projects/Replay Engine.md"
SELF_HOSTED = "projects/Self-Hosted Edition.md"
HUB_LINKS = 520


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault_dir = copy_sample(tmp_path_factory.mktemp("graph") / "vault")
    spokes = vault_dir / "hubbed"
    spokes.mkdir()
    (vault_dir / "topics" / "Hub.md").write_text(
        "---\ntype: topic\n---\n# Hub\n\nA page everything links to.\n", encoding="utf-8")
    for i in range(HUB_LINKS):
        (spokes / f"Spoke {i:03d}.md").write_text(
            f"---\ntype: project\n---\n# Spoke {i:03d}\n\nPart of [[Hub]].\n", encoding="utf-8")
    vault, _ = Vault.init(vault_dir)
    vault.index(embed=False)
    vault.close()
    return vault_dir


@pytest.fixture(scope="module")
def base(root: Path) -> Iterator[str]:
    with running(root) as url:
        yield url


def soup(base: str, path: str, **params: object) -> tuple[httpx.Response, BeautifulSoup]:
    response = httpx.get(base + "/graph/" + quote(path), params=params)
    return response, BeautifulSoup(response.text, "html.parser")


def edges(doc: BeautifulSoup, **attrs: str) -> list[object]:
    wanted = {f"data-{k.rstrip('_')}": v for k, v in attrs.items()}
    return [
        e for e in doc.select("svg#graph g.edge")
        if all(e.get(k) == v for k, v in wanted.items())]


def test_known_neighbours_and_typed_edges(base: str) -> None:
    response, doc = soup(base, PERCH)
    assert response.status_code == 200
    nodes = {g["data-path"]: g["data-type"] for g in doc.select("svg#graph g.node")}
    assert nodes[PERCH] == "project"
    assert nodes[KESTREL] == "organization"
    assert nodes[REPLAY] == "project"
    assert "organizations/Copperline Logistics.md" in nodes
    # Perch's own facts: depends_on Replay Engine, part_of Kestrel Labs (out), and edges in.
    depends = edges(doc, rel="depends_on", from_=PERCH, to=REPLAY)
    assert len(depends) == 1
    title = depends[0].find("title").get_text()
    assert "projects/Perch.md#L16-L16" in title and "valid 2025-01-01" in title
    assert depends[0].select_one("path")["marker-end"] == "url(#arrow)"
    assert depends[0].select_one("text").get_text() == "depends_on"
    assert edges(doc, rel="part_of", from_=PERCH, to=KESTREL)
    assert edges(doc, rel="owns", from_=KESTREL, to=PERCH)
    assert edges(doc, rel="uses", from_="organizations/Minato Systems.md", to=PERCH)
    # colour by type, with a legend naming each type drawn
    assert "t-organization" in doc.select_one(f'g.node[data-path="{KESTREL}"]')["class"]
    legend = doc.select_one("ul.legend").get_text(" ")
    assert "organization" in legend and "project" in legend
    # a link to the node's page, and to re-centre on it
    assert doc.select_one(f'g.node[data-path="{KESTREL}"] a')["href"].startswith(
        "/graph/organizations/Kestrel%20Labs.md")


def test_rel_toggle_and_direction(base: str) -> None:
    _, doc = soup(base, PERCH, rel="part_of")
    rels = {e["data-rel"] for e in doc.select("svg#graph g.edge")}
    assert rels == {"part_of"}
    checked = [i["value"] for i in doc.select('input[name=rel][checked]')]
    assert checked == ["part_of"]
    assert "mentions" in [i["value"] for i in doc.select("input[name=rel]")]
    _, doc = soup(base, PERCH, dir="out", rel="part_of")
    assert {(e["data-from"], e["data-to"]) for e in doc.select("svg#graph g.edge")} == {
        (PERCH, KESTREL)}


def test_as_of_hides_edge_before_its_from_date(base: str) -> None:
    # Self-Hosted Edition is part_of Perch from 2026-04: not yet on 2026-03-31.
    _, doc = soup(base, PERCH, as_of="2026-03-31")
    assert not edges(doc, rel="part_of", from_=SELF_HOSTED, to=PERCH)
    assert edges(doc, rel="part_of", from_=PERCH, to=KESTREL)  # from 2024-06
    _, doc = soup(base, PERCH, as_of="2026-04-01")
    assert edges(doc, rel="part_of", from_=SELF_HOSTED, to=PERCH)


def test_slider_in_chromium(base: str, web_browser: object) -> None:
    page = web_browser.new_page()  # type: ignore[attr-defined]
    selector = f'g.edge[data-rel="part_of"][data-from="{SELF_HOSTED}"][data-to="{PERCH}"]'
    page.goto(base + "/graph/" + quote(PERCH))
    assert page.locator(selector).count() == 1
    stops = page.eval_on_selector("#asof", "el => JSON.parse(el.dataset.stops)")
    assert "2026-04-01" in stops
    before = stops.index("2026-04-01") - 1
    with page.expect_navigation():
        page.eval_on_selector("#asof", """(el, v) => { el.value = v;
            el.dispatchEvent(new Event('input', {bubbles: true}));
            el.dispatchEvent(new Event('change', {bubbles: true})); }""", before)
    assert f"as_of={stops[before]}" in page.url
    assert page.locator(selector).count() == 0
    assert page.locator(f'g.edge[data-rel="part_of"][data-from="{PERCH}"]').count() == 1
    assert page.input_value("#as_of") == stops[before]
    # one step right with the keyboard: 2026-04-01, and the edge is back
    page.focus("#asof")
    with page.expect_navigation():
        page.keyboard.press("ArrowRight")
    assert "as_of=2026-04-01" in page.url
    assert page.locator(selector).count() == 1
    # Home: the day before the first dated edge — no dated edge holds yet
    page.focus("#asof")
    with page.expect_navigation():
        page.keyboard.press("Home")
    assert page.locator(f'g.edge[data-rel="part_of"][data-from="{PERCH}"]').count() == 0
    assert page.locator('g.edge[data-rel="mentions"]').count() > 0  # undated edges stay
    page.close()


def test_click_node_recentres_keeping_params(base: str, web_browser: object) -> None:
    page = web_browser.new_page()  # type: ignore[attr-defined]
    page.goto(base + "/graph/" + quote(PERCH) + "?depth=2&dir=both")
    assert page.get_attribute("svg#graph", "data-centre") == PERCH
    with page.expect_navigation():
        page.click(f'g.node[data-path="{KESTREL}"] circle')
    assert page.get_attribute("svg#graph", "data-centre") == KESTREL
    assert "/graph/organizations/Kestrel%20Labs.md" in page.url and "depth=2" in page.url
    assert page.locator(f'g.node.centre[data-path="{KESTREL}"]').count() == 1
    assert page.locator(f'g.node[data-path="{PERCH}"][data-depth="1"]').count() == 1
    page.close()


def test_hub_is_capped_with_and_n_more(base: str, web_browser: object) -> None:
    response, doc = soup(base, "topics/Hub.md")
    assert response.status_code == 200
    assert len(doc.select("svg#graph g.node")) == 60
    assert doc.select_one("section.more h2").get_text(strip=True) == f"and {HUB_LINKS - 59} more"
    more = doc.select(".more-list a[href^='/graph/hubbed/']")
    assert more and "Spoke" in more[0].get_text()
    assert re.search(r"neighbourhood;dur=[\d.]+", response.headers["server-timing"])
    page = web_browser.new_page()  # type: ignore[attr-defined]
    page.goto(base + "/graph/topics/Hub.md?limit=500")
    assert page.locator("svg#graph g.node").count() == 500
    assert page.locator("section.more h2").inner_text() == f"and {HUB_LINKS - 499} more"
    assert page.locator('g.edge[data-to="topics/Hub.md"]').count() == 499
    page.close()


def test_same_input_same_picture(base: str) -> None:
    first = httpx.get(base + "/graph/" + quote(PERCH) + "?depth=2").text
    second = httpx.get(base + "/graph/" + quote(PERCH) + "?depth=2").text
    picture = re.compile(r'<svg id="graph".*?</svg>', re.S)
    assert picture.search(first)[0] == picture.search(second)[0]


def test_bad_input(base: str) -> None:
    response, doc = soup(base, PERCH, as_of="last tuesday")
    assert response.status_code == 400
    assert "is not a date" in doc.select_one(".problem").get_text()
    assert "Traceback" not in response.text
    response, doc = soup(base, PERCH, depth="deep")
    assert response.status_code == 400 and "not a whole number" in response.text
    response, _ = soup(base, "people/Nobody At All.md")
    assert response.status_code == 404


def test_tiny_cap_still_lists_what_is_left_out(base: str) -> None:
    _, doc = soup(base, PERCH, limit=1)
    assert [g["data-path"] for g in doc.select("svg#graph g.node")] == [PERCH]
    count = int(doc.select_one("section.more h2").get_text().split()[1])
    listed = doc.select(".more-list li.nav-item")
    assert count > 10 and len(listed) == count
    assert {a["href"] for li in listed for a in li.select("a")} >= {
        "/graph/organizations/Kestrel%20Labs.md?limit=1"}


def test_superseded_edge_shows_only_while_it_held(base: str) -> None:
    redis = "decisions/Use Redis for replay caching.md"
    _, doc = soup(base, REPLAY)
    assert not edges(doc, rel="informs", from_=redis, to=REPLAY)
    _, doc = soup(base, REPLAY, as_of="2026-04-01")
    (edge,) = edges(doc, rel="informs", from_=redis, to=REPLAY)
    assert "superseded" in edge["class"]
    title = edge.find("title").get_text()
    assert "valid 2026-03-04 to 2026-06-02" in title and "superseded" in title
    # the slider stands on the day after the edge ended: there it is gone
    stops = json.loads(doc.select_one("#asof")["data-stops"])
    assert "2026-06-03" in stops and "2026-03-04" in stops
    _, doc = soup(base, REPLAY, as_of="2026-06-03")
    assert not edges(doc, rel="informs", from_=redis, to=REPLAY)


def test_zoom_and_pan_and_no_console_errors(base: str, web_browser: object) -> None:
    page = web_browser.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and "favicon" not in m.text
            and errors.append(m.text))
    page.goto(base + "/graph/" + quote(PERCH))
    home = page.get_attribute("#graph", "viewBox")
    box = page.locator("#graph").bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.wheel(0, -400)
    page.wait_for_function(
        f"document.getElementById('graph').getAttribute('viewBox') != '{home}'")
    zoomed = [float(v) for v in page.get_attribute("#graph", "viewBox").split()]
    assert zoomed[2] < float(home.split()[2])  # zoomed in: a narrower view
    page.dblclick("#graph", position={"x": 5, "y": 5})
    restored = [float(v) for v in page.get_attribute("#graph", "viewBox").split()]
    assert restored == [float(v) for v in home.split()]
    assert not [e for e in errors if "404" not in e], errors
    page.close()
