"""The web view for tests: a real server on a free loopback port, and real Chromium.

``running(root)`` serves ``kenning.web`` for a vault with uvicorn in a thread (a real socket, a
real HTTP server) and yields its base URL. ``chromium()`` starts Debian's Chromium through
Playwright for Python (``executable_path``: Playwright never downloads a browser here) with the
flags this closed network needs, and yields a Playwright ``Browser``. Tests skip with a clear
reason when the ``chromium`` binary is absent (``scripts/services`` installs Debian's
``chromium`` package).

The web test modules share what is expensive to make and that they only read (tests/conftest.py
hands these out as fixtures): ``shared_chromium()`` is one Chromium for the run of consecutive
web test modules, closed when the run leaves them (Playwright's sync API holds an event loop in
the main thread, so ``asyncio.run`` would fail in a later test while it is open); the demo vault
is built once per session and copied (``copy_vault``) for every test that writes to it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


#: The "today" the shared demo vault is built on, and its tests run on (overdue counts from it).
WEB_TODAY = "2026-11-15"


def build_demo(root: Path) -> Path:
    """The demo vault (`kenning demo`'s steps, quietly), indexed without embeddings."""
    from kenning.api import Vault
    from kenning.builder import run_build
    from kenning.sample import copy_sample
    from kenning.sample import sources as sample_sources

    copy_sample(root)
    Vault.init(root)[0].close()
    sample_sources.apply_owner(root)
    sample_sources.sync_sample(root)
    run_build(root)
    with Vault(root) as v:
        v.index(embed=False)
    return root


def chromium_binary() -> str | None:
    for candidate in (os.environ.get("KENNING_CHROMIUM"), shutil.which("chromium"),
                      "/usr/bin/chromium", shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@contextmanager
def running(root: Path, *, host: str = "127.0.0.1", token: str | None = None
            ) -> Iterator[str]:
    """Serve the web view of ``root`` until the block ends; yields ``http://host:port``."""
    import uvicorn

    from kenning.serve.http import bind
    from kenning.web.app import build_app

    app = build_app(root, host=host, token=token)
    sock = bind(host, 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web view did not start")
        time.sleep(0.02)
    try:
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Debian's) driven by Playwright; skips when it is not installed."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip("Chromium is not installed (scripts/services installs Debian's chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (scripts/setup installs it)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=binary, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


_SHARED: dict[str, Any] = {}


def shared_chromium() -> Any:
    """The one Chromium the web test modules share (started on first use; skips like
    ``chromium()``). Tests open their own pages or contexts in it and close them."""
    if "browser" not in _SHARED:
        stack = ExitStack()
        try:
            browser = stack.enter_context(chromium())
        except BaseException:
            stack.close()
            raise
        _SHARED["stack"], _SHARED["browser"] = stack, browser
    return _SHARED["browser"]


def close_shared_chromium() -> None:
    """Close the shared Chromium and its Playwright, if they are running."""
    stack = _SHARED.pop("stack", None)
    _SHARED.pop("browser", None)
    if stack is not None:
        stack.close()


def copy_vault(source: Path, target: Path) -> Path:
    """A private copy of an indexed vault (files, index and build state, mtimes kept, so the
    copy's index is current): for a test that writes to a vault other tests only read."""
    shutil.copytree(source, target, symlinks=True)
    return target
