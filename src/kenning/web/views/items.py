"""The open-items view: commitments and asks (and decisions) grouped by status, overdue first.

``/items?kind=&status=&who=&to=&overdue=1`` is a thin layer over :meth:`Vault.items` (which
already orders overdue first, longest overdue first, then by due date, then newest): the view
only groups the rows by status for display, so the order inside each group is Kenning's own.
``kind`` defaults to commitments and asks; ``kind=decision`` (or ``all``) shows decisions.
A bad filter (a ``who`` that names no page, an unknown status) is said above the form, which
keeps what was typed.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date
from pathlib import PurePosixPath
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.errors import KenningError
from kenning.web.render import html, vault

KINDS = (("", "commitments and asks"), ("commitment", "commitments"), ("ask", "asks"),
         ("decision", "decisions"), ("all", "everything"))
STATUSES = (("", "any status"), ("open", "open"), ("done", "done"))
# Display groups, in this order; each item falls in the first that takes it.
GROUPS = (("overdue", "Overdue"), ("open", "Open"), ("done", "Done"),
          ("decided", "Decided"), ("superseded", "Superseded"))
QUICK = (("Mine", {"who": "me", "status": "open"}),
         ("Waiting on others", {"to": "me", "status": "open"}),
         ("Overdue", {"overdue": "1"}), ("Done", {"status": "done"}),
         ("Decisions", {"kind": "decision"}), ("All", {}))
SHOW = 200  # rows shown before "show all"


def _today() -> str:
    """The day overdue is measured against: Vault.items' own (KENNING_TODAY or today)."""
    import os

    override = os.environ.get("KENNING_TODAY", "").strip()
    try:
        return date.fromisoformat(override).isoformat() if override else date.today().isoformat()
    except ValueError:
        return date.today().isoformat()


def _days(a: str, b: str) -> int | None:
    """Whole days from ``a`` to ``b`` (dates as YYYY-MM-DD), or None if either is not a date."""
    try:
        return (date.fromisoformat(b) - date.fromisoformat(a)).days
    except (TypeError, ValueError):
        return None


def party(value: str | None) -> dict[str, Any] | None:
    """A who/to as shown: ``me``, a page (path → its name, linked) or a name as written."""
    if not value:
        return None
    if value == "me":
        return {"name": "me", "path": None, "me": True}
    if value.endswith(".md"):
        return {"name": PurePosixPath(value).stem, "path": value, "me": False}
    return {"name": value, "path": None, "me": False}


def wikilink_citation(value: str | None) -> str | None:
    """``[[path#L5-L6]]`` (how a ``closed::`` field is written) as ``path.md#L5-L6``."""
    if not value:
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].strip()
    target, _, anchor = text.partition("#")
    if target and not re.search(r"\.[A-Za-z0-9]{1,8}$", target):
        target += ".md"
    return f"{target}#{anchor}" if anchor else target


def row(item: dict[str, Any], today: str) -> dict[str, Any]:
    """One item ready for the template (the API's fields plus display ones)."""
    out = dict(item)
    out["dom_id"] = item.get("id") or "i-" + hashlib.blake2b(
        str(item.get("line")).encode(), digest_size=4).hexdigest()
    out["closed_cite"] = wikilink_citation(item.get("closed"))
    out["who_party"] = party(item.get("who"))
    out["to_parties"] = [p for p in (party(t) for t in item.get("to") or ()) if p]
    out["on_pages"] = [{"path": p, "name": PurePosixPath(p).stem} for p in item.get("pages") or ()]
    late = _days(item["due"], today) if item.get("due") else None
    out["late_by"] = late if item.get("overdue") else None
    out["due_in"] = -late if late is not None and not item.get("overdue") else None
    out["group"] = group_of(item)
    return out


def group_of(item: dict[str, Any]) -> str:
    """The display group an item falls in (one of GROUPS)."""
    if item.get("overdue"):
        return "overdue"
    status = item.get("status")
    return status if status in ("open", "done", "decided", "superseded") else "open"


def items(request: Request) -> Response:
    """``/items``: the filtered items, grouped by status, with quick links and a GET form."""
    q = request.query_params
    form = {key: q.get(key, "").strip() for key in ("kind", "status", "who", "to")}
    overdue = q.get("overdue", "") not in ("", "0")
    try:
        show = max(1, int(q.get("limit") or SHOW))
    except ValueError:
        show = SHOW
    kind = form["kind"]
    kinds: tuple[str, ...] | None
    if kind == "":
        kinds = ("commitment", "ask")
    elif kind == "all":
        kinds = None
    else:
        kinds = (kind,)
    today = _today()
    error = None
    found: list[dict[str, Any]] = []
    v = vault(request)
    try:
        # Every matching item briefly (enough to count them by group), in full only those shown
        found = v.items(kind=kinds, who=form["who"] or None, to=form["to"] or None,
                        status=form["status"] or None, overdue=overdue, today=today, brief=True)
    except KenningError as exc:
        error = exc.message.removeprefix("--")  # "who: no page named …", not the CLI's flag
    counts = {key: 0 for key, _ in GROUPS}
    for item in found:
        counts[group_of(item)] += 1
    shown = [row(i, today) for i in v.item_details(found[:show], today=today)]
    groups = [(key, label, counts[key], [r for r in shown if r["group"] == key])
              for key, label in GROUPS if counts[key]]
    current = {k: v for k, v in {**form, "overdue": "1" if overdue else ""}.items() if v}
    quick = [(label, params, params == current) for label, params in QUICK]
    return html(request, "items.html", status=400 if error else 200, active="items",
                title="Open items", form=form, overdue=overdue, kinds=KINDS, statuses=STATUSES,
                groups=groups, total=len(found), hidden=max(0, len(found) - show), quick=quick,
                error=error, today=today,
                intro=dict(KINDS).get(kind, "items").capitalize())


ROUTES = [Route("/items", items)]
