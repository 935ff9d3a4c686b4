"""Bi-temporal fact queries: what was true on a day, and what Kenning believed on a day.

Each fact carries two time lines (docs/vault-format.md, Facts):

- valid time, ``[from:: …] [to:: …]``: when it was true in the world (open ends are unbounded;
  ``2026`` means from 2026-01-01 / to 2026-12-31);
- belief time, ``[recorded:: …] [expired:: …]``: when Kenning learned it and when it retired it
  (superseded or invalidated). A fact without ``recorded`` was believed from the start.

``as_of=D`` keeps facts valid on D by today's knowledge: never invalidated ones; a superseded fact
counts inside its validity window (a revision with a ``valid_from`` closes the old window the day
before). ``believed_on=B`` keeps facts recorded on or before B and not expired by B — with the
status they had then. Given both: what we believed on B about day D — judged with the validity
window as written now (a revision that closed a window, ``[to:: …]``, is not undone).

The page is read directly (Markdown is the truth), so the answer never waits for the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kenning.index.edges import date_ceiling, date_floor
from kenning.memory.common import MemoryInputError, Problems, Resolver, cite, read_page

if TYPE_CHECKING:
    from kenning.memory.common import Context


def facts(ctx: Context, entity: str, *, as_of: str | None = None,
          believed_on: str | None = None, history: bool = False) -> dict[str, Any]:
    """The facts of one entity page, filtered by valid time and/or belief time."""
    p = Problems()
    day = p.date("as_of", as_of)
    belief = p.date("believed_on", believed_on)
    path, candidates = Resolver(ctx).find(entity) if isinstance(entity, str) else (None, [])
    if path is None:
        p.add("entity", f"{entity!r} names several pages: {', '.join(candidates)}"
              if candidates else f"no page named {entity!r}")
    p.raise_if_any()
    assert path is not None
    _, page = read_page(ctx.root, path)
    out = []
    for f in page.facts:
        status = f.status
        if belief:
            b = date_ceiling(belief) or belief
            if f.recorded and (date_floor(f.recorded) or "") > b:
                continue
            if f.expired and (date_floor(f.expired) or "") <= b:
                continue
            status = "active"  # not yet retired on that day
        elif not history and day is None and status != "active":
            continue
        if day:
            start, end = date_floor(day) or day, date_ceiling(day) or day
            if status == "invalidated":
                continue
            if f.valid_from and (date_floor(f.valid_from) or "") > end:
                continue
            if f.valid_to and (date_ceiling(f.valid_to) or "") < start:
                continue
        out.append({
            "id": f.block_id, "relation": f.relation, "target": f.target, "text": f.text,
            "valid_from": f.valid_from, "valid_to": f.valid_to, "recorded": f.recorded,
            "expired": f.expired, "status": f.status, "status_then": status,
            "successor": f.successor, "epistemic": f.epistemic, "confidence": f.confidence,
            "source": f.source, "citation": cite(path, f.line),
        })
    return {"entity": page.title, "path": path, "as_of": day, "believed_on": belief,
            "facts": out}


__all__ = ["MemoryInputError", "facts"]
