"""The health view: ``kenning doctor``'s findings with their fixes, coverage, embedding progress.

``/health`` renders :meth:`Vault.doctor` as it is — every finding with its level and the command
or edit that fixes it, and the items it found (the first few shown, the rest one click away) —
plus the index's coverage (files indexed of files on disk) and how many chunks have vectors.
Errors first, then warnings, notes and what is fine, so the page reads top-down as a to-do list.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html, page_url, vault

WHERE = re.compile(r"^(?P<path>[^:\n]+?\.md)(?::(?P<line>\d+))?(?=[: ]|$)")
ORDER = {"error": 0, "warn": 1, "note": 2, "ok": 3}
LABELS = {"error": "error", "warn": "warning", "note": "note", "ok": "ok"}
SHOW_ITEMS = 8  # items shown open under a finding; the rest in a <details>
LIST_AT_MOST = 200  # beyond this, `kenning doctor --json` lists them (the page stays small)
STAT_LABELS = (("files", "Markdown files"), ("indexed", "indexed"), ("pages", "pages"),
               ("chunks", "chunks"), ("vectors", "vectors"), ("links", "links"),
               ("facts", "facts"), ("attachments", "attachments"))


def item_url(item: str) -> str | None:
    """A finding's item that starts with ``path.md:LINE`` (or ``path.md``) links to that line
    of the page; anything else is shown as text."""
    m = WHERE.match(item)
    if not m:
        return None
    line = int(m["line"]) if m["line"] else None
    return page_url(m["path"], (line, line) if line else None)


def _percent(part: int | None, whole: int | None) -> int | None:
    if part is None or not whole:
        return None
    return min(100, round(100 * part / whole))


def summary(findings: list[dict[str, Any]]) -> tuple[str, dict[str, int]]:
    """The overall state (error | warn | ok) and how many findings of each level."""
    counts = {level: 0 for level in ORDER}
    for f in findings:
        counts[f["level"]] = counts.get(f["level"], 0) + 1
    state = "error" if counts["error"] else "warn" if counts["warn"] else "ok"
    return state, counts


def health(request: Request) -> Response:
    """``/health``: the doctor's report as a page."""
    report = vault(request).doctor()
    data = report.to_dict()
    findings = sorted(data["findings"], key=lambda f: ORDER.get(f["level"], 9))
    for f in findings:
        f["label"] = LABELS.get(f["level"], f["level"])
        linked = [(item, item_url(item)) for item in f["items"][:LIST_AT_MOST]]
        f["shown"], f["rest"] = linked[:SHOW_ITEMS], linked[SHOW_ITEMS:]
        f["unlisted"] = max(0, len(f["items"]) - LIST_AT_MOST)
    stats = data["stats"]
    state, counts = summary(findings)
    vectors = next((f for f in findings if f["check"] == "vectors"), None)
    coverage = next((f for f in findings if f["check"] == "coverage"), None)
    embed = {"done": stats.get("vectors"), "total": stats.get("chunks"),
             "percent": _percent(stats.get("vectors"), stats.get("chunks")),
             "finding": vectors}
    cover = {"done": stats.get("indexed"), "total": stats.get("files"),
             "percent": _percent(stats.get("indexed"), stats.get("files")),
             "finding": coverage}
    shown_stats = [(label, stats[key]) for key, label in STAT_LABELS if key in stats]
    return html(request, "health.html", active="health", title="Health", state=state,
                counts=counts, findings=findings, stats=shown_stats, embed=embed,
                cover=cover, ok=data["ok"])


ROUTES = [Route("/health", health)]
