"""Build the demo vault, serve it with ``kenning web`` and take a PNG of each view.

Run through ``scripts/screenshots [OUT_DIR]``. The demo vault is made as ``kenning demo`` makes
it (the sample vault, its email, meeting and chat synced, ``kenning build``, ``kenning index``
with the configured embeddings — the bundled model, offline) in a temporary folder; "today" is
fixed at 2026-11-15 (``KENNING_TODAY``) so the open items' overdue marks do not drift. Each view
is shot at 1280×860 in light mode:

  search.png     search "what did we decide about caching"
  page.png       the decision page a result's citation opens, the cited lines highlighted
  graph.png      the graph of Kestrel Labs
  timeline.png, decisions.png, items.png, health.png
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

VIEWPORT = {"width": 1280, "height": 860}
QUERY = "what did we decide about caching"


def build_demo(root: Path) -> None:
    """`kenning demo`'s steps, quietly."""
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
        report = v.index()
    if report.embed_error:
        print(f"note: embeddings unavailable ({report.embed_error}); search is lexical + graph",
              file=sys.stderr)


def serve(root: Path) -> tuple[subprocess.Popen[str], str]:
    """``kenning web --port 0`` for ``root`` in its own process; (process, base URL)."""
    exe = Path(sys.executable).with_name("kenning")
    proc = subprocess.Popen([str(exe), "-C", str(root), "web", "--port", "0"], text=True,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(r"at (http://\S+?)/? \(", line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("kenning web did not start")


def shoot(base: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright
    from web_harness import FLAGS, chromium_binary

    binary = chromium_binary()
    if binary is None:
        raise SystemExit("Chromium is not installed: run scripts/services (Debian's chromium)")
    taken: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=binary, headless=True, args=FLAGS)
        page = browser.new_page(viewport=VIEWPORT, color_scheme="light")

        def snap(name: str, url: str | None = None) -> None:
            if url is not None:
                page.goto(base + url)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(400)  # the graph lays itself out; the page scrolls to lines
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            taken.append(path)
            print(f"  {path}  ({page.url.removeprefix(base)})")

        snap("search", "/search?q=" + QUERY.replace(" ", "+"))
        # The decision page, opened from a citation of the results (the cited lines
        # highlighted); the first citation when none of the results cites a decision.
        cite = page.locator('a.cite[href^="/page/decisions/"]').first
        if not cite.count():
            cite = page.locator("a.cite").first
        if cite.count():
            cite.click()
            page.wait_for_url("**/page/**")
            snap("page")
        else:
            snap("page", "/page/decisions/In-process%20caching%20for%20the%20Replay%20API.md")
        snap("graph", "/graph/organizations/Kestrel%20Labs.md")
        for name in ("timeline", "decisions", "items", "health"):
            snap(name, f"/{name}")
        browser.close()
    return taken


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("KENNING_TODAY", "2026-11-15")
    os.environ.pop("KENNING_DATABASE_URL", None)
    tmp = Path(tempfile.mkdtemp(prefix="kenning-screens-"))
    try:
        root = tmp / "kenning-demo"
        print("Building the demo vault …", file=sys.stderr)
        build_demo(root)
        proc, base = serve(root)
        try:
            print(f"Screenshots of {base} into {out}/:")
            shoot(base, out)
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
