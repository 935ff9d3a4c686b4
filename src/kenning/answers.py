"""Answers as agents and scripts receive them: one compact JSON form for MCP tool results and
for the CLI's ``--json``.

Each item once (a result's best evidence is its first hit, not a copy beside it), nothing null or
empty, no field at its default, every piece of evidence cited ``path#Lstart-Lend``. A token
budget is a ceiling on the whole answer as sent, estimated like every budget in Kenning
(:func:`kenning.recall.search.estimate_tokens` over the compact JSON): what does not fit is cut
from the end, the least relevant first, and a note says how much was left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kenning.recall.search import estimate_tokens

# Lists that are the answer itself: kept when empty ("no results" is an answer).
ANSWER_LISTS = ("results", "edges", "nodes", "path")
# Frontmatter keys a page answer already shows as its own fields.
_SHOWN = ("type", "aliases", "alias", "domain", "status", "tags", "tag", "title", "date")


def dumps(value: Any) -> str:
    """The answer as sent: compact JSON, UTF-8 text kept as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def tokens(value: Any) -> int:
    """What the answer costs an agent's context, in estimated tokens."""
    return estimate_tokens(dumps(value))


def lean(value: Any) -> Any:
    """``value`` without null fields and without empty lists, objects or text (except the
    lists that are the answer itself, :data:`ANSWER_LISTS`)."""
    if isinstance(value, list):
        return [lean(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        item = lean(item)
        if item is None or (item in ("", [], {}) and key not in ANSWER_LISTS):
            continue
        out[key] = item
    return out


def named(path: str, title: str | None) -> dict[str, str]:
    """``{"title": title}`` unless the title is the file name (then it says nothing new)."""
    if not title or title == path.rsplit("/", 1)[-1].removesuffix(".md"):
        return {}
    return {"title": title}


def result_path(result: dict[str, Any]) -> str:
    """The page a search result (``Result.to_dict``) is: its hits' citations name it."""
    if "path" in result:
        return str(result["path"])
    return str(result["hits"][0]["citation"]).split("#", 1)[0]


# -- budgets -----------------------------------------------------------------------------------

Cut = Callable[[dict[str, Any]], bool]


def fit(answer: dict[str, Any], budget: int, cut: Cut) -> dict[str, Any]:
    """``answer`` cut until all of it fits ``budget`` tokens: ``cut`` removes the least
    relevant item (False when nothing is left to remove), a note counts what was left out;
    notes go last, when nothing else is left."""
    left_out = 0
    notes = list(answer.get("notes", ()))
    while tokens(answer) > budget:
        if cut(answer):
            left_out += 1
            answer["notes"] = [*notes, f"cut to fit the budget of {budget} tokens: "
                               f"{left_out} more item(s) left out"]
        elif answer.get("notes"):
            answer["notes"] = answer["notes"][:-1]
            if not answer["notes"]:
                del answer["notes"]
        else:
            break
    return answer


def cut_evidence(answer: dict[str, Any]) -> bool:
    """Search: drop the last hit of the last result (the result when it was its only one)."""
    results = answer.get("results") or []
    if not results:
        return False
    hits = results[-1].get("hits") or []
    if len(hits) > 1:
        hits.pop()
    else:
        results.pop()
    return True


def cut_lists(*keys: str) -> Cut:
    """Drop the last item of the first non-empty list among ``keys`` (least relevant first)."""
    def cut(answer: dict[str, Any]) -> bool:
        for key in keys:
            items = answer.get(key)
            if items:
                items.pop()
                if not items:
                    del answer[key]
                return True
        return False
    return cut


def cut_text(key: str) -> Cut:
    """Shorten the text under ``key`` by about what is over, at a line boundary."""
    def cut(answer: dict[str, Any]) -> bool:
        text = answer.get(key) or ""
        if not text:
            return False
        over = max(16, len(text.encode("utf-8")) // 8)
        shorter = text.encode("utf-8")[:-over].decode("utf-8", "ignore")
        if "\n" in shorter:
            shorter = shorter[: shorter.rindex("\n")]
        answer[key] = shorter.rstrip() + "\n…" if shorter.strip() else ""
        return True
    return cut


# -- answers -----------------------------------------------------------------------------------


def search(results: Any) -> dict[str, Any]:
    """A search answer: the mode used, its notes, and the results (``Result.to_dict``)."""
    return lean({"mode": results.mode, "notes": results.notes,
                 "results": [r.to_dict() for r in results]})


def fact(item: dict[str, Any]) -> dict[str, Any]:
    """A fact of a page: its line is in its citation; status active and epistemic status
    unknown are the defaults."""
    return lean({k: v for k, v in item.items() if k != "line"
                 and not (k == "status" and v == "active")
                 and not (k == "epistemic" and v == "unknown")})


def page(data: dict[str, Any]) -> dict[str, Any]:
    """A page answer (``Vault.show``): its fields once (frontmatter keys shown as fields are
    not repeated), facts and timeline cited by line, links flat with their provenance."""
    front = {k: v for k, v in (data.get("frontmatter") or {}).items() if k not in _SHOWN}
    out: dict[str, Any] = {"path": data["path"], "title": data.get("title")}
    for key in ("type", "domain", "status", "date", "aliases", "tags", "summary",
                "summary_citation"):
        out[key] = data.get(key)
    out["frontmatter"] = front
    out["lines"] = data.get("lines")
    for key in ("facts", "timeline"):
        out[key] = [fact(f) for f in data.get(key) or ()]
    for key in ("links_out", "links_in"):
        # The list says the direction.
        out[key] = [{k: v for k, v in e.items() if k != "direction"}
                    for e in data.get(key) or ()]
    for key in ("facts_as_of", "facts_believed_on"):
        out[key] = data.get(key)
    return lean(out)


def written(data: Any) -> Any:
    """A write's answer without the index bookkeeping (``indexed`` true, its seconds); a write
    that is not indexed yet keeps ``indexed: false`` and its note."""
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "index_seconds"
                and not (k == "indexed" and v is True)}
    return lean(data)
