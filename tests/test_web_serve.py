"""How `kenning web` serves: tokens, the loopback Host check, security headers, live reloads,
PostgreSQL, keyboard navigation — all against real servers (tests/web_harness.running), real
HTTP (httpx2) and real Chromium (web_harness.chromium).

One demo vault (the sample with its synced sources, built and indexed: the session's shared
``demo_root``, read only) and one server for the module; the live-reload test, which writes,
serves a private copy of it; the browser is the shared one; small separate vaults for the token
servers (a vault's tokens guard every server of it). The PostgreSQL test serves a copy of the
demo vault indexed into the session's PostgreSQL.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from click.testing import CliRunner
from web_harness import WEB_TODAY, copy_vault, running

from kenning.api import Vault
from kenning.serve import tokens

TODAY = "2026-11-15"
SHARED = "s3cret-" + "x" * 40
DECISION = "decisions/In-process caching for the Replay API.md"
JA = "/search?q=%E5%AE%9A%E4%BE%8B%E4%BC%9A%E8%AD%B0"  # 定例会議
VIEWS = ["/", "/search?q=what+did+we+decide+about+caching", JA,
         "/page/" + DECISION.replace(" ", "%20") + "?hl=5-8", "/page/people/Maya%20Okafor.md",
         "/graph/organizations/Kestrel%20Labs.md", "/graph/organizations/Kestrel%20Labs.md?depth=2",
         "/timeline", "/decisions", "/items", "/items?who=me&status=open", "/items?kind=decision",
         "/health"]


def forge(secret: str) -> str:
    """The secret with its last character changed, so it is certainly a different token."""
    return secret[:-1] + ("B" if secret.endswith("A") else "A")


def small_vault(root: Path) -> Path:
    """A vault of one indexed note."""
    v, _ = Vault.init(root)
    (root / "Hello.md").write_text("# Hello\n\nA note about herons.\n", encoding="utf-8")
    v.index(embed=False)
    v.close()
    return root


@pytest.fixture(scope="module")
def env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_EMBEDDINGS", "none")
        mp.setenv("KENNING_TODAY", TODAY)
        mp.delenv("KENNING_DATABASE_URL", raising=False)
        mp.delenv("KENNING_MCP_TOKEN", raising=False)
        yield


@pytest.fixture(scope="module")
def demo(env: None, demo_root: Path) -> Iterator[tuple[Path, str]]:
    assert TODAY == WEB_TODAY  # the day the shared demo vault was built on
    with running(demo_root) as base:
        yield demo_root, base


@pytest.fixture
def own_demo(env: None, demo_root: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A private copy of the demo vault and its server, for a test that changes the vault."""
    root = copy_vault(demo_root, tmp_path / "demo")
    with running(root) as base:
        yield root, base


# -- (a) tokens -------------------------------------------------------------------------------


def test_per_person_tokens_401_then_token_once_sets_a_cookie_and_redirects(
        env: None, tmp_path: Path) -> None:
    root = small_vault(tmp_path / "people-tokens")
    secret, _ = tokens.add(root, "alice", ["read"])
    with running(root) as base:
        bare = httpx.get(base + "/items")
        assert bare.status_code == 401 and "needs a token" in bare.text
        assert "Traceback" not in bare.text and "content-security-policy" in bare.headers
        wrong = httpx.get(base + "/items", params={"token": "kn_" + "0" * 43},
                          follow_redirects=False)
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        once = httpx.get(base + "/search", params={"q": "herons", "token": secret},
                         follow_redirects=False)
        assert once.status_code == 303
        assert once.headers["location"] == "/search?q=herons"
        assert secret not in once.headers["location"]
        cookie = once.headers["set-cookie"]
        assert cookie.startswith(f"kenning_token={secret};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        with httpx.Client(base_url=base, cookies={"kenning_token": secret}) as client:
            page = client.get("/page/Hello.md")
            assert page.status_code == 200 and "Hello" in page.text
            health = client.get("/health")
            assert health.status_code == 200 and "Markdown files indexed and current" in health.text
        forged = httpx.get(base + "/items", cookies={"kenning_token": forge(secret)})
        assert forged.status_code == 401
        bearer = httpx.get(base + "/items", headers={"Authorization": f"Bearer {secret}"})
        assert bearer.status_code == 200


def test_a_shared_token_guards_a_non_loopback_bind_and_a_browser_keeps_it(
        env: None, tmp_path: Path, web_browser: Any) -> None:
    root = small_vault(tmp_path / "shared-token")
    with running(root, host="0.0.0.0", token=SHARED) as base:
        base = base.replace("0.0.0.0", "127.0.0.1")
        assert httpx.get(base + "/").status_code == 401
        assert httpx.get(base + "/", params={"token": SHARED[:-1]}).status_code == 401
        # Off loopback any Host is answered (the token is the guard), never without it.
        assert httpx.get(base + "/", headers={"Host": "kenning.example"}).status_code == 401
        page = web_browser.new_page()
        page.goto(f"{base}/items?kind=all&token={SHARED}")
        assert page.url == f"{base}/items?kind=all"  # the secret left the address bar
        assert page.locator("h1").inner_text() == "Open items"
        page.goto(base + "/health")  # the cookie carries on
        assert page.locator("h1").inner_text() == "Health"
        assert page.context.cookies()[0]["httpOnly"] is True
        page.close()


def test_the_cli_refuses_a_non_loopback_bind_without_a_token(env: None, tmp_path: Path) -> None:
    from kenning.cli import main

    root = small_vault(tmp_path / "cli")
    runner = CliRunner()
    refused = runner.invoke(main, ["-C", str(root), "web", "--host", "0.0.0.0", "--port", "0"],
                            env={"KENNING_MCP_TOKEN": None})
    assert refused.exit_code == 2
    assert "refusing to serve the web view on 0.0.0.0 without a token" in refused.output
    weak = runner.invoke(main, ["-C", str(root), "web", "--host", "0.0.0.0", "--port", "0"],
                         env={"KENNING_MCP_TOKEN": "short"})
    assert weak.exit_code == 2 and "at least" in weak.output
    unset = runner.invoke(main, ["-C", str(root), "web", "--token-env", "NO_SUCH_VAR_HERE"],
                          env={"NO_SUCH_VAR_HERE": None})
    assert unset.exit_code == 2 and "NO_SUCH_VAR_HERE" in unset.output


def test_the_listening_socket_says_tcp_so_connections_get_nodelay() -> None:
    """asyncio sets TCP_NODELAY on accepted connections only when the socket's proto is TCP;
    without it every kept-alive response after the first waited ~40 ms for a delayed ACK."""
    import socket

    from kenning.serve.http import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        with socket.create_connection(sock.getsockname()) as client:
            accepted, _ = sock.accept()
            with accepted:
                assert accepted.proto == socket.IPPROTO_TCP
                assert client.fileno() > 0
    finally:
        sock.close()


# -- (b) Host header, (c) security headers ------------------------------------------------------


def test_loopback_answers_only_loopback_host_names(demo) -> None:
    _, base = demo
    assert httpx.get(base + "/health", headers={"Host": "evil.example"}).status_code == 400
    assert httpx.get(base + "/health", headers={"Host": "evil.example:80"}).status_code == 400
    port = base.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(base + "/health", headers={"Host": host}).status_code == 200


def test_security_headers_on_pages_errors_and_static_files(demo) -> None:
    _, base = demo
    for path in ("/items", "/page/no/such/page.md", "/static/kenning.css"):
        r = httpx.get(base + path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "style-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "'unsafe-inline'" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert re.fullmatch(r"app;dur=\d+(\.\d+)?", r.headers["server-timing"])


# -- (h) every view answers -------------------------------------------------------------------


def test_every_view_answers_200_without_traceback_or_inline_script_or_style(demo) -> None:
    _, base = demo
    for path in VIEWS:
        r = httpx.get(base + path)
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
        body = r.text
        assert "Traceback" not in body and "Something went wrong" not in body, path
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", body), path
        assert not re.search(r"\sstyle\s*=", body), path
        assert "text/html" in r.headers["content-type"]
    missing = httpx.get(base + "/page/people/Nobody%20Here.md")
    assert missing.status_code == 404 and "Traceback" not in missing.text


# -- (d) live --------------------------------------------------------------------------------


def test_a_reload_shows_an_index_run_and_an_agent_write_without_restart(own_demo) -> None:
    root, base = own_demo
    before = httpx.get(base + "/search", params={"q": "quokkafish"}).text
    assert "Live reload check" not in before
    note = root / "notes" / "Live reload check.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("# Live reload check\n\nThe quokkafish review moved to Friday.\n\n"
                    "## Commitments\n- [ ] 2026-11-14 — Book the quokkafish room [who:: me] "
                    "[due:: 2026-11-20] ^i-1a2b3c4d\n", encoding="utf-8")
    with Vault(root) as v:
        v.index(embed=False)
    assert 'data-id="i-1a2b3c4d"' in httpx.get(base + "/items").text
    shown = httpx.get(base + "/page/notes/Live%20reload%20check.md")
    assert shown.status_code == 200 and "Live reload check" in shown.text
    found = httpx.get(base + "/search", params={"q": "quokkafish"}).text
    assert 'data-path="notes/Live reload check.md"' in found
    # An agent's write (what MCP's note tool calls) shows on the next reload too.
    with Vault(root) as v:
        written = v.note("Narwhalite pricing is settled at the list price.",
                         title="Narwhalite pricing")
    path = written["path"]
    found = httpx.get(base + "/search", params={"q": "narwhalite"}).text
    assert f'data-path="{path}"' in found
    shown = httpx.get(base + "/page/" + path)
    assert shown.status_code == 200 and "Narwhalite pricing" in shown.text


# -- (f) keyboard ----------------------------------------------------------------------------


def test_keyboard_slash_focuses_search_j_k_move_and_enter_opens(demo, web_browser) -> None:
    _, base = demo
    page = web_browser.new_page()
    page.goto(base + "/search?q=what+did+we+decide+about+caching")
    results = page.locator("li.result.nav-item")
    assert results.count() >= 2
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "q"
    page.keyboard.press("j")
    assert "selected" in results.nth(0).get_attribute("class")
    page.keyboard.press("j")
    assert "selected" in results.nth(1).get_attribute("class")
    assert "selected" not in results.nth(0).get_attribute("class")
    page.keyboard.press("k")
    assert "selected" in results.nth(0).get_attribute("class")
    href = results.nth(0).locator("a").first.get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url("**/page/**")
    assert page.url.startswith(base + href.split("#")[0])
    # Typing in the search box is typing, not navigation.
    page.keyboard.press("/")
    page.keyboard.type("jk")
    assert page.locator("#q").input_value() == "jk"
    page.close()


# -- (e) PostgreSQL --------------------------------------------------------------------------


def _shape(body: str) -> dict[str, list[str]]:
    """What a view shows, independent of the backend: result paths, item ids, cited lines."""
    return {"results": re.findall(r'<li class="[^"]*\bresult\b[^"]*" data-path="([^"]+)"', body),
            "items": re.findall(r'<li class="item nav-item [^"]*" data-id="([^"]+)"', body),
            "cites": re.findall(r'<a class="cite" href="([^"]+)"', body),
            "lines": re.findall(r'data-line="(\d+)"', body),
            "facts": re.findall(r'<li class="fact ([^"]+)"', body)}


def test_the_views_render_the_same_over_postgresql(demo, request: pytest.FixtureRequest,
                                                   tmp_path: Path) -> None:
    root, base = demo
    pg = request.getfixturevalue("pg_server")  # skips only when opted out locally
    schema = pg.new_schema()
    copy = tmp_path / "pg-demo"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("index.db*"))
    config = copy / ".kenning" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").split("\ndatabase:")[0]
                      + f"\ndatabase:\n  url: {pg.url(schema=schema)}\n", encoding="utf-8")
    try:
        with Vault(copy) as v:
            v.index(embed=False)
        with Vault(root) as v:  # the SQLite side is current with the files copied
            v.index(embed=False)
        with running(copy) as pg_base:
            health = httpx.get(pg_base + "/health").text
            assert "postgresql" in health.lower() and "Unhealthy" not in health
            for path in ("/search?q=what+did+we+decide+about+caching",
                         JA,
                         "/page/" + DECISION.replace(" ", "%20") + "?hl=5-8",
                         "/items", "/items?who=me", "/items?kind=decision", "/timeline",
                         "/decisions"):
                on_pg = httpx.get(pg_base + path)
                on_sqlite = httpx.get(base + path)
                assert on_pg.status_code == on_sqlite.status_code == 200, path
                assert _shape(on_pg.text) == _shape(on_sqlite.text), path
            assert _shape(httpx.get(pg_base + "/items").text)["items"]
            assert _shape(httpx.get(
                pg_base + "/search?q=what+did+we+decide+about+caching").text)["results"]
    finally:
        pg.drop_schema(schema)
