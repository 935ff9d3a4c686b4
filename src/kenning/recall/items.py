"""Items as answers: the copies of one item merged, parties named, ordered, cited.

The index holds one row per item line (``kenning.index.queries.items``); an item the build wrote
on a person's page and on a meeting's page is one item here, listing both pages, and it is done
when any copy is (a person checked the box on one of them). Used by ``Vault.items``, recall,
``session_start`` and the MCP answers; nothing here writes SQL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kenning.recall.results import cite

KINDS = ("commitment", "ask", "decision")
STATUSES = ("open", "done")
_SOURCE = re.compile(r"^\[\[(?P<target>[^\]|#]+)(?:#(?P<anchor>[^\]|]*))?(?:\|[^\]]*)?\]\]$")
_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")


def citation(source: str | None, path: str, line: int) -> str:
    """The item's citation: its ``[source:: [[path#Lstart-Lend]]]`` as ``path.md#Lstart-Lend``,
    else its own line on the page."""
    if source:
        m = _SOURCE.match(source.strip())
        if m:
            target = m.group("target").strip()
            if not re.search(r"\.[A-Za-z0-9]{1,8}$", target):
                target += ".md"
            lines = _LINES.match((m.group("anchor") or "").strip())
            if lines:
                start = int(lines.group(1))
                end = int(lines.group(2) or start)
                return cite(target, start, max(start, end))
            return target
        return source.strip()
    return cite(path, line, line)


def _name(raw: str) -> str:
    value = raw.strip()
    if value.startswith("[[") and value.endswith("]]"):
        value = value[2:-2].split("|", 1)[-1].split("#", 1)[0].strip()
    return value


def _party(row: Sequence[Any]) -> str:
    """A party as answers show it: "me", the page's path, or the name as written."""
    _item, _role, _ord, raw, me, path, _res = row
    if me:
        return "me"
    if path:
        return str(path)
    return _name(str(raw))


def _by_key(copies: Iterable[Sequence[Any]], col: dict[str, int]) -> Iterator[
        tuple[str, list[Sequence[Any]]]]:
    """The copies of each item, by key in first-seen order; the copy a person marked done
    first, else the first page by path."""
    key, status, path, line = col["key"], col["status"], col["path"], col["line"]
    groups: dict[str, list[Sequence[Any]]] = {}
    for row in copies:
        groups.setdefault(row[key], []).append(row)
    for k, group in groups.items():
        if len(group) > 1:
            group.sort(key=lambda c: (c[status] != "done", c[path], c[line]))
        yield k, group


def _state(group: Sequence[Sequence[Any]], col: dict[str, int]
           ) -> tuple[str, str | None, str | None, list[str]]:
    """(status, due, date, pages) of one item from its copies: done when any copy is."""
    first = group[0]
    if len(group) == 1:
        return first[col["status"]], first[col["due"]], first[col["date"]], [first[col["path"]]]
    statuses = {c[col["status"]] for c in group}
    status = next(s for s in ("done", "superseded", "decided", "open")
                  if s in statuses or s == "open")
    due = next((c[col["due"]] for c in group if c[col["due"]]), None)
    day = next((c[col["date"]] for c in group if c[col["date"]]), None)
    return status, due, day, sorted({c[col["path"]] for c in group})


def heads(copies: Sequence[Sequence[Any]], today: str) -> list[dict[str, Any]]:
    """One brief answer per item key from its copies (``HEAD_COLUMNS`` rows): its key, kind,
    status, overdue, due, date, page, pages and line, as :func:`merge` gives them, which is
    all :func:`order`, :func:`status_matches` and a count by status need."""
    from kenning.index.queries.items import HEAD_COLUMNS

    col = {name: n for n, name in enumerate(HEAD_COLUMNS)}
    PATH, PDATE, LINE, KIND, DATE, DUE, STATUS = (col[c] for c in (
        "path", "page_date", "line", "kind", "date", "due", "status"))
    out = []
    for key, group in _by_key(copies, col):
        first = group[0]
        if len(group) == 1:  # most items (a few thousand of 10,000 have copies): inline
            status, due, day, pages = first[STATUS], first[DUE], first[DATE], [first[PATH]]
        else:
            status, due, day, pages = _state(group, col)
        path, line = first[PATH], first[LINE]
        out.append({"key": key, "kind": first[KIND], "date": day or first[PDATE],
                    "due": due, "status": status,
                    "overdue": bool(status == "open" and due and due < today),
                    "page": path, "pages": pages, "line": f"{path}#L{line}-L{line}"})
    return out


def merge(copies: Sequence[Sequence[Any]], parties: Iterable[Sequence[Any]],
          today: str) -> list[dict[str, Any]]:
    """One answer per item key from its copies (``COPY_COLUMNS`` rows, grouped by key)."""
    from kenning.index.queries.items import COPY_COLUMNS

    col = {name: n for n, name in enumerate(COPY_COLUMNS)}
    ID, PATH, PDATE, LINE, KIND, TEXT, COMPLETION, CLOSED, BECAUSE, REJECTED, BY, SOURCE, \
        BLOCK = (col[c] for c in (
            "id", "path", "page_date", "line", "kind", "text", "completion", "closed",
            "because", "rejected", "superseded_by", "source", "block_id"))
    by_item: dict[int, list[Sequence[Any]]] = {}
    for p in parties:
        by_item.setdefault(p[0], []).append(p)
    out = []
    for key, group in _by_key(copies, col):
        first = group[0]
        who: str | None = None
        to: list[str] = []
        about: list[str] = []
        for c in group:
            for p in by_item.get(c[ID], ()):
                role = p[1]
                name = _party(p)
                if role == "who":
                    if who is None:
                        who = name
                elif role == "to":
                    if name not in to:
                        to.append(name)
                elif name not in about:
                    about.append(name)
        status, due, day, pages = _state(group, col)
        source = first[SOURCE] if len(group) == 1 else next(
            (c[SOURCE] for c in group if c[SOURCE]), None)
        path, line = first[PATH], first[LINE]
        item: dict[str, Any] = {
            "id": key if first[BLOCK] else None,
            "kind": first[KIND], "text": first[TEXT], "who": who, "to": to,
            "date": day or first[PDATE], "due": due, "status": status,
            "overdue": bool(status == "open" and due and due < today),
            "citation": citation(source, path, line),
            "page": path, "pages": pages, "line": f"{path}#L{line}-L{line}",
        }
        if status == "done":
            item["completion"] = next((c[COMPLETION] for c in group if c[COMPLETION]), None)
            item["closed"] = next((c[CLOSED] for c in group if c[CLOSED]), None)
        if first[KIND] == "decision":
            item["because"] = first[BECAUSE]
            item["rejected"] = json.loads(first[REJECTED])
            if first[BY]:
                item["by"] = first[BY]
        if about:
            item["about"] = about  # page paths where they resolve, else names
        out.append(item)
    return out


def order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Overdue first (longest overdue first), then open items by due date, then newest."""
    overdue, due, rest = [], [], []
    for item in items:
        (overdue if item["overdue"] else due if item["status"] == "open" and item["due"]
         else rest).append(item)
    overdue.sort(key=lambda i: (i["due"], i["page"], i["line"]))
    due.sort(key=lambda i: (i["due"], i["page"], i["line"]))
    rest.sort(key=lambda i: (i["page"], i["line"]))
    rest.sort(key=lambda i: i["date"] or "", reverse=True)  # stable: newest first, undated last
    return overdue + due + rest


def status_matches(item: dict[str, Any], status: str | None) -> bool:
    """``--status open``: open (not done, not a decision); ``done``: done."""
    if status is None:
        return True
    if status == "open":
        return item["status"] == "open"
    return item["status"] == "done"


def line(item: dict[str, Any], *, cited: bool = True) -> str:
    """One line for people: box, date, who → to, text, due, citation (unless not ``cited``)."""
    box = {"done": "[x]", "open": "[ ]"}.get(item["status"], "[d]" if item["kind"] == "decision"
                                                 else "[-]")
    parts = [box]
    if item.get("date"):
        parts.append(item["date"])
    who = _short(item.get("who"))
    to = ", ".join(_short(t) for t in item.get("to") or ())
    if who or to:
        parts.append(f"{who or '?'} → {to}" if to else str(who))
    text = item["text"]
    if item["kind"] == "decision":
        text = f"decided: {text}"
        if item.get("rejected"):
            text += f" (rejected: {'; '.join(item['rejected'])})"
    elif item["kind"] == "ask":
        text = f"ask: {text}"
    parts.append(f"— {text}")
    if item.get("due"):
        parts.append(f"(due {item['due']}{', OVERDUE' if item.get('overdue') else ''})")
    if cited:
        parts.append(item["citation"])
    return " ".join(parts)


def _short(party: str | None) -> str:
    """A party for a line of text: a page's file name, "me", or the name."""
    if not party:
        return ""
    return party.rsplit("/", 1)[-1].removesuffix(".md")


def compact(item: dict[str, Any]) -> dict[str, Any]:
    """An item as recall and the MCP answers carry it: nothing empty, no derived duplicates."""
    keep = ("kind", "text", "who", "to", "due", "status", "overdue", "date", "citation",
            "because", "rejected", "completion")
    out = {k: item[k] for k in keep if item.get(k) not in (None, "", [], False)}
    if len(item.get("pages") or ()) > 1:
        out["pages"] = item["pages"]
    return out


# -- what a question asks about items ----------------------------------------------------------

_INTENT = re.compile(
    r"\b(promis\w*|owe[sd]?\b|owing|waiting\s+(?:on|for)|asked|ask(?:s|ing)?\b|request\w*|"
    r"decid\w*|decision\w*|open\s+items?|follow(?:ing)?[\s-]?ups?|"
    r"commit(?:s|ted|ments?)?\b|to-?dos?|"
    r"action\s+items?|outstanding|overdue|deliver\w*)", re.IGNORECASE)
_FILLER = re.compile(
    r"\b(what|whats|what's|which|who|is|are|am|was|were|be|been|did|do|does|have|has|had|"
    r"i|i'm|im|we|me|my|our|can|could|should|will|would|need|needs|"
    r"you|still|yet|the|a|an|to|for|from|with|about|on|of|by|and|or|any|all|anything|"
    r"things?|done|open|items?|there|that|it|make|made|us|please|list|show|tell|"
    r"since|so|far|now|ever|not|than|"
    r"promis\w*|owe[sd]?|owing|waiting|wait|asked|ask|asks|asking|request\w*|decid\w*|"
    r"decision\w*|follow(?:ing)?[\s-]?ups?|follow|up|commit(?:s|ted|ments?)?|to-?dos?|action|"
    r"outstanding|overdue|"
    r"deliver\w*|pending)\b", re.IGNORECASE)


def intent(question: str) -> tuple[bool, str, str | None]:
    """(asks about items, the name left when the item words are taken out, the kind asked
    about): "what did I promise Sarah?" → (True, "Sarah", "commitment")."""
    m = _INTENT.search(question)
    if not m:
        return False, question, None
    word = m.group(1).lower()
    kind = ("decision" if word.startswith("decid") or word.startswith("decision") else
            "commitment" if word.startswith(("promis", "owe", "commit", "deliver")) else
            "ask" if word.startswith(("ask", "request")) else None)
    rest = _FILLER.sub(" ", question.replace("’", "'"))
    rest = re.sub(r"'s\b", " ", rest)
    rest = " ".join(re.sub(r"[?!.,;:\"“”]+", " ", rest).split())
    return True, rest, kind


def name_candidates(rest: str) -> list[str]:
    """What in the words left may name the entity, most likely first: all of them, then each
    run of capitalised words ("Priya going to deliver" → "Priya"), then each word."""
    out = [rest] if rest else []
    words = rest.split()
    run: list[str] = []
    for word in [*words, ""]:
        if word[:1].isupper():
            run.append(word)
            continue
        if run:
            out.append(" ".join(run))
        run = []
    out += [w for w in words if len(w) > 2]
    return list(dict.fromkeys(out))


def mine_first(question: str) -> bool:
    """"What did *I* promise X" / "what do I owe X": the owner's own promises lead."""
    return bool(re.search(r"\b(i|we)\b[^?]*\b(promis|owe|commit|deliver|said)", question,
                          re.IGNORECASE))


def open_only(question: str) -> bool:
    """"What is X waiting on?", "open items", "outstanding", "still", "follow up": only what is
    not done yet."""
    return bool(re.search(r"\b(waiting|open|outstanding|overdue|pending|still|follow|yet)\b",
                          question, re.IGNORECASE))
