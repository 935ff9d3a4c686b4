"""Entity recall: "tell me about Sarah" answered from the page, not from a text search.

The answer is what the graph already holds about one entity, in order of usefulness and cut to a
token budget: its summary, its active facts, its latest timeline entries and its strongest
neighbours — each with a citation a person can open. Overview mode gives one line per page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store
from kenning.recall.budget import estimate_tokens
from kenning.recall.results import cite

_ASKING = re.compile(
    r"^\s*(?:please\s+)?(?:tell\s+me\s+(?:everything\s+)?about|what\s+do\s+(?:we|i|you)\s+know"
    r"\s+about|who\s+(?:is|are|was)|what\s+(?:is|are|was)|remind\s+me\s+(?:about|of)|recall|"
    r"about)\s+", re.IGNORECASE)


def entity_name(question: str) -> str:
    """The name in a question: "tell me about Horizon?" → "Horizon"."""
    name = _ASKING.sub("", question).strip().rstrip("?!.。？").strip()
    return name.strip("\"'“”‘’") or question.strip()


@dataclass
class Recall:
    """What Kenning knows about one entity, with citations, within a budget."""

    path: str
    title: str
    type: str | None
    summary: str
    summary_citation: str
    facts: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    neighbours: list[dict[str, Any]] = field(default_factory=list)
    overview: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)  # open items about the entity
    items_first: bool = False  # the question asked about items (promises, asks, decisions)
    tokens: int = 0
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, each item once: nothing empty or null, no listed page's title that
        is its file name, no epistemic status ``unknown`` (the default), no neighbour strength
        (the order says it)."""
        out: dict[str, Any] = {"path": self.path, "title": self.title}
        if self.type:
            out["type"] = self.type
        if self.summary and not self.overview:  # an overview's first line is the page's
            out["summary"], out["summary_citation"] = self.summary, self.summary_citation
        keys = ("facts", "timeline", "neighbours", "overview")
        for key in (("items", *keys) if self.items_first else ("facts", "items", *keys[1:])):
            items = [_lean(item) for item in getattr(self, key)]
            if items:
                out[key] = items
        if self.truncated:
            out["truncated"] = True
        return out


def _named(path: str, title: str | None) -> dict[str, str]:
    """``{"title": title}`` unless the title is the file name (then it says nothing new)."""
    return {} if not title or title == path.rsplit("/", 1)[-1].removesuffix(".md") else {
        "title": title}


def _lean(item: dict[str, Any]) -> dict[str, Any]:
    """An answer item without what says nothing: nulls, empty text, defaults."""
    out = {k: v for k, v in item.items() if v is not None and v != "" and v != []
           and k not in ("title", "strength") and not (k == "epistemic" and v == "unknown")}
    if "path" in item and "title" in item:
        out = {"path": item["path"], **_named(item["path"], item["title"]),
               **{k: v for k, v in out.items() if k != "path"}}
    return out


def recall(store: Store, page_id: int, *, budget: int = 1500,
           overview: bool = False, today: str | None = None,
           neighbours: int = 8, timeline: int = 5,
           items: list[dict[str, Any]] | None = None, items_first: bool = False) -> Recall:
    """Summary, active facts, latest timeline and strongest neighbours of a page, in budget.

    ``items`` (the entity's open commitments, asks, decisions; ``recall.items.compact``) go after
    the facts, or right after the summary when ``items_first`` (the question asked for them)."""
    row = recall_sql.entity_page(store, page_id)
    path, title, ptype, summary, title_line, summary_start, summary_end = row
    start = summary_start or (title_line + 1 if title_line else 1)
    answer = Recall(path=path, title=title, type=ptype, summary=summary,
                    summary_citation=cite(path, start, max(start, summary_end or start)),
                    items_first=items_first and bool(items))
    strongest = _neighbours(store, page_id, neighbours)
    # The budget is a ceiling on the whole answer as sent (``to_dict`` as compact JSON, four
    # bytes a token like every estimate): counted in bytes, with room kept for "truncated".
    limit = (budget + 1) * 4 - 1 - len(',"truncated":true')
    if overview:
        spent = _size({"path": path, **_named(path, title), **({"type": ptype} if ptype else {})})
        for item in [{"path": path, "title": title, "type": ptype, "summary": summary,
                      "citation": answer.summary_citation}, *strongest]:
            line = {k: item[k] for k in ("path", "title", "type")}
            line["summary"] = _first_sentence(item.get("summary") or "")
            line["citation"] = item.get("citation") or item["path"]
            cost = _size(_lean(line)) + (1 if answer.overview else len(',"overview":[]'))
            if spent + cost > limit:
                answer.truncated = True
                break
            spent += cost
            answer.overview.append(line)
        answer.tokens = estimate_tokens(_dumps(answer.to_dict()))
        return answer

    spent = _size(answer.to_dict())
    while spent > limit and answer.summary:
        # Even the summary does not fit: cut it rather than break the budget.
        over = max(16, spent - limit)
        cut = answer.summary.encode("utf-8")[:-over - 3].decode("utf-8", "ignore").rstrip()
        answer.summary = cut + "…" if cut else ""
        answer.truncated = True
        spent = _size(answer.to_dict())
    today = today or date.today().isoformat()
    facts = [
        {"relation": r[1], "target": r[2], "text": r[3], "valid_from": r[4], "valid_to": r[5],
         "epistemic": r[6], "confidence": r[7], "source": r[8], "citation": cite(path, r[0], r[0])}
        for r in recall_sql.active_facts(store, page_id, today)]
    events = [
        {"date": r[1], "text": r[2], "source": r[3], "citation": cite(path, r[0], r[0])}
        for r in recall_sql.latest_timeline(store, page_id, timeline)]
    parts = [("facts", answer.facts, facts), ("items", answer.items, items or []),
             ("timeline", answer.timeline, events), ("neighbours", answer.neighbours, strongest)]
    if answer.items_first:
        parts.insert(0, parts.pop(1))
    for key, bucket, entries in parts:
        for item in entries:
            cost = _size(_lean(item)) + (1 if bucket else len(f',"{key}":[]'))
            if spent + cost > limit:
                answer.truncated = True
                break
            spent += cost
            bucket.append(item)
    answer.tokens = estimate_tokens(_dumps(answer.to_dict()))
    return answer


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (what an answer costs as sent)."""
    return len(_dumps(value).encode("utf-8"))


def _neighbours(store: Store, page_id: int, limit: int) -> list[dict[str, Any]]:
    """Pages most strongly tied to this one: typed edges count double, mentions once."""
    rows = recall_sql.entity_links(store, page_id)
    strength: dict[int, float] = {}
    rels: dict[int, set[str]] = {}
    where: dict[int, tuple[int | None, int | None]] = {}
    for other, rel, _kind, line, origin in rows:
        strength[other] = strength.get(other, 0.0) + (1.0 if rel == "mentions" else 2.0)
        rels.setdefault(other, set()).add(rel)
        if rel != "mentions" or other not in where:
            where[other] = (origin, line)
    top = sorted(strength, key=lambda o: -strength[o])[:limit]
    if not top:
        return []
    info = recall_sql.page_summaries(store, top)
    paths = recall_sql.page_paths(store, [o for o, _ in where.values() if o is not None])
    out = []
    for other in top:
        npath, ntitle, ntype, nsummary = info[other]
        origin, line = where[other]
        origin_path = paths.get(origin) if origin is not None else None
        typed = sorted(rels[other] - {"mentions"}) or ["mentions"]
        out.append({
            "path": npath, "title": ntitle, "type": ntype, "relations": typed,
            "strength": strength[other], "summary": _first_sentence(nsummary or ""),
            "citation": cite(origin_path, line, line) if origin_path and line else npath,
        })
    return out


def _first_sentence(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    match = re.search(r"(?<=[.!?。])\s", text)
    sentence = text[: match.start()] if match else text
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"
