"""The decisions view: decided / because / rejected, and what replaced what.

``/decisions?status=&domain=`` shows ``Vault.decisions``: decision pages newest first, each with
its summary, reasons and rejected options (with why), a superseded one struck through with a
link to the decision that replaced it (and the replacing one marked "supersedes"); then the
decisions recorded as items in meetings, mail and chats, each cited.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.web.render import html, vault

WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")


def plain(text: str | None) -> str:
    """Summary text with ``[[target|label]]`` shown as its label (or target's name)."""
    if not text:
        return ""
    return WIKILINK.sub(lambda m: m[2] or m[1].rsplit("/", 1)[-1], str(text))


def decisions(request: Request) -> Response:
    """Decision pages then decision items; filters by status and domain."""
    status = (request.query_params.get("status") or "").strip() or None
    domain = (request.query_params.get("domain") or "").strip() or None
    v = vault(request)
    found = v.decisions(status=status, domain=domain)
    pages = [d for d in found if not d.get("item")]
    items = [d for d in found if d.get("item")]
    titles = {d["path"]: d["title"] for d in pages}
    everything = pages if not (status or domain) else [
        d for d in v.decisions() if not d.get("item")]
    for d in everything:
        titles.setdefault(d["path"], d["title"])
    domains = sorted({d["domain"] for d in everything if d.get("domain")})
    statuses = sorted({d["status"] for d in everything} | {"active", "superseded"})
    for d in pages:
        d["summary_text"] = plain(d.get("summary"))
    return html(request, "decisions.html", active="decisions", title="decisions",
                decisions=pages, items=items, titles=titles, wanted_status=status or "",
                domain=domain or "", domains=domains, statuses=statuses, plain=plain,
                name=lambda p: titles.get(p) or (p or "").rsplit("/", 1)[-1].removesuffix(".md"))




ROUTES = [Route("/decisions", decisions)]
