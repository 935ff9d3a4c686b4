"""The search view: hybrid results with snippets, citations, filters and ``explain``.

``/search?q=…&type=…&domain=…&folder=…&entity=…&since=…&until=…&as_of=…&tag=…&mode=…&explain=1``
maps one to one onto ``Vault.search``; a filter that cannot be read (not a date, an unknown
type) is one message above the form, never an error page. With no query the page is a start
page: what happened lately (``Vault.timeline``), the vault's tags and a few tips.
"""

from __future__ import annotations

import contextlib
from datetime import date
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.errors import KenningError
from kenning.vocabulary import DOMAINS, ENTITY_TYPES
from kenning.web import markdown
from kenning.web.render import html, vault

MODES = ("hybrid", "lexical", "dense")
LIMITS = (10, 20, 50)


def _date(value: str, name: str) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ValueError(f"{name}: expected a date YYYY-MM-DD, got {value!r}") from None


def _form(request: Request) -> dict[str, Any]:
    """The query parameters as the form shows them (lists for the repeatable ones)."""
    qp = request.query_params
    multi = {k: [v.strip() for v in qp.getlist(k) if v.strip()]
             for k in ("type", "domain", "folder", "tag")}
    one = {k: (qp.get(k) or "").strip() for k in ("q", "entity", "since", "until", "as_of",
                                                   "mode", "n")}
    return {**multi, **one, "explain": qp.get("explain") in ("1", "on", "true", "yes")}


def _arguments(form: dict[str, Any]) -> dict[str, Any]:
    """``Vault.search`` keyword arguments from the form; raises ValueError naming a bad one."""
    mode = form["mode"] or "hybrid"
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    limit = 10
    if form["n"]:
        try:
            limit = max(1, min(200, int(form["n"])))
        except ValueError:
            raise ValueError(f"n: expected a number of results, got {form['n']!r}") from None
    return {"mode": mode, "types": form["type"], "domains": form["domain"],
            "folders": form["folder"], "tags": form["tag"], "entity": form["entity"] or None,
            "since": _date(form["since"], "since"), "until": _date(form["until"], "until"),
            "as_of": _date(form["as_of"], "as of"), "limit": limit,
            "explain": form["explain"]}


def _hits(result: Any) -> list[dict[str, Any]]:
    """A result's evidence as the template shows it (heading once, snippet marked)."""
    out = []
    shown = result.title
    for hit in result.hits:
        top, _, rest = hit.heading.partition(" > ")
        heading = rest if top and top in result.title else hit.heading
        out.append({"citation": f"{result.path}#L{hit.start_line}-L{hit.end_line}",
                    "heading": heading if heading and heading != shown else None,
                    "snippet": markdown.marked(markdown.plain_snippet(hit.snippet),
                                               list(result.matched)),
                    "found": hit.found, "score": hit.score})
        shown = heading or shown
    return out


def search(request: Request) -> Response:
    """``/`` and ``/search``: the results of a query, or the start page."""
    v = vault(request)
    form = _form(request)
    error = None
    results = None
    rows: list[dict[str, Any]] = []
    try:
        args = _arguments(form)
        if form["q"]:
            results = v.search(form["q"], **args)
            rows = [{"r": r, "hits": _hits(r)} for r in results]
    except (KenningError, ValueError) as exc:
        error = exc.message if isinstance(exc, KenningError) else str(exc)
    start: dict[str, Any] = {}
    if not form["q"]:
        with contextlib.suppress(KenningError, ValueError):
            start["recent"] = v.timeline(limit=12)
        with contextlib.suppress(KenningError, ValueError):
            start["tags"] = list(v.tags().items())[:30]
    filtered = any(form[k] for k in ("type", "domain", "folder", "tag", "entity", "since",
                                     "until", "as_of")) or form["mode"] not in ("", "hybrid")
    return html(request, "search.html", status=400 if error else 200, active="search",
                title=form["q"] or "Search", q=form["q"], form=form, error=error,
                results=results, rows=rows, start=start, filtered=filtered, modes=MODES,
                types=ENTITY_TYPES, domains=DOMAINS, limits=LIMITS)


ROUTES = [Route("/", search), Route("/search", search)]
