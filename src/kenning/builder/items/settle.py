"""Closing items across sources: a commitment is done when the same person later delivers to an
overlapping audience something that matches it (its words, or an "as promised" cue with some
shared word), in another source within :data:`DELIVERY_DAYS`; an ask is answered when its
addressee writes later in the same thread.

Deterministic (inputs are sorted first), idempotent (settling settled items changes nothing) and
monotone (a done item is never reopened; a person's "done" is kept)."""

from __future__ import annotations

import re

from kenning.builder.items import cues as cu
from kenning.builder.items.extract import _same
from kenning.builder.items.model import ASK, COMMITMENT, OPEN, Delivery, Item, Party, Reply

MIN_OVERLAP = 0.34   # shared content words over the smaller side, without an "as promised" cue
_PROMISED = re.compile(r"(?i)\b(?:as promised|as (?:I|we) said|as discussed|as agreed|"
                       r"per (?:my|our) (?:email|note|promise)|following up on)\b")


def _audience_overlaps(item: Item, d: Delivery) -> bool:
    if not item.to:
        return True
    if not d.to:
        return False
    return any(_same(a, b) for a in item.to for b in d.to)


_BARE_OBJECT = re.compile(r"(?i)\b[a-z]+\s+(?:it|this|that|them|these|those)\b")
_TIME_WORDS = frozenset("""week month year quarter tonight morning afternoon evening monday
tuesday wednesday thursday friday saturday sunday""".split())
SUBJECT_DAYS = 14    # a bare promise is matched by subject only within two weeks


def _bare(item: Item, lemmas: set[str]) -> bool:
    """A commitment whose object is only a pronoun ("ships it this week")."""
    names = {w.casefold() for w in re.findall(r"\b[A-Z][a-z]+\b", item.text)}
    return bool(_BARE_OBJECT.search(item.text)) and len(lemmas - _TIME_WORDS - names) <= 1


def _subject_words(source: str) -> set[str]:
    slug = source.rsplit("/", 1)[-1].removesuffix(".md")
    slug = re.sub(r"^\d{4}-\d{2}-\d{2}-?", "", slug)
    return {w for w in slug.split("-") if len(w) > 2 and w not in cu.STOP and not w.isdigit()}


def _same_subject(item: Item, d: Delivery) -> bool:
    """The delivery's source is about the item's subject: their titles (the file names the
    connectors write) share at least two words and half of the shorter, within two weeks."""
    if item.source == d.source or not item.date or not d.date:
        return False
    from datetime import date

    if (date.fromisoformat(d.date) - date.fromisoformat(item.date)).days > SUBJECT_DAYS:
        return False
    a, b = _subject_words(item.source), _subject_words(d.source)
    shared = len(a & b)
    return shared >= 2 and shared * 2 >= min(len(a), len(b))


DELIVERY_DAYS = 90   # another source delivers within this of the promise (or of its due date)


def _in_time(item: Item, d: Delivery) -> bool:
    """A delivery in another source counts within :data:`DELIVERY_DAYS` of the promise, or of
    its due date when that is later: a year-old promise is not closed by a new mail that shares
    its words."""
    if not item.date or not d.date:
        return True
    from datetime import date, timedelta

    start = max(item.date, item.due or item.date)
    return date.fromisoformat(d.date) <= date.fromisoformat(start) + timedelta(DELIVERY_DAYS)


def _key(p: Party | None) -> str:
    return "owner" if p is not None and p.owner else (p.key if p is not None else "")


def settle(items: list[Item], deliveries: list[Delivery], replies: list[Reply]) -> list[Item]:
    """``items`` with open commitments and asks closed by later deliveries and replies (in
    the input order; only status/closed_by/closed_on change)."""
    out = list(items)
    order = sorted(range(len(out)), key=lambda i: (out[i].date or "", out[i].source,
                                                   out[i].line))
    by_who: dict[str, list[int]] = {}
    for i in order:
        it = out[i]
        if it.status == OPEN and it.kind == COMMITMENT and it.who is not None:
            by_who.setdefault(_key(it.who), []).append(i)
            if it.who.name and not it.who.owner:
                by_who.setdefault("name:" + it.who.name.casefold().split()[0], []).append(i)
    for d in sorted(deliveries, key=lambda d: (d.date or "", d.source, d.line)):
        candidates = list(dict.fromkeys(
            by_who.get(_key(d.who), [])
            + (by_who.get("name:" + d.who.name.casefold().split()[0], [])
               if d.who.name and not d.who.owner else [])))
        best, best_score = None, 0.0
        dw = cu.lemmas(d.text)
        promised = bool(_PROMISED.search(d.text))
        for i in candidates:
            it = out[i]
            if it.status != OPEN or not _same(it.who, d.who):
                continue
            if it.date and d.date and d.date < it.date:
                continue
            if it.source != d.source and not _in_time(it, d):
                continue
            if it.source == d.source and it.line >= d.line:
                continue
            if it.source == d.source and it.message and it.message == d.message:
                continue
            if not _audience_overlaps(it, d):
                continue
            iw = cu.lemmas(it.text)
            shared = len(iw & dw)
            if not shared and _bare(it, iw) and _same_subject(it, d):
                # "Priya ships it this week." names nothing to match; the next thread on the
                # same subject ("Replay cache review" → "Replay cache decision …") by the
                # same person is where its delivery is. Weakest of all matches.
                if best is None:
                    best, best_score = i, 0.001
                continue
            if not shared:
                continue
            score = shared / max(1, min(len(iw), len(dw)))
            if score < MIN_OVERLAP and not (promised and shared >= 1):
                continue
            if score > best_score:
                best, best_score = i, score
        if best is not None:
            out[best] = out[best].done(d.citation, d.date)
    by_thread: dict[str, list[Reply]] = {}
    for r in replies:
        by_thread.setdefault(r.thread or r.source, []).append(r)
    for rs in by_thread.values():
        rs.sort(key=lambda r: (r.date or "", r.source, r.line))
    for i in order:
        it = out[i]
        if it.kind != ASK or it.status != OPEN or not it.to:
            continue
        for r in by_thread.get(it.thread or it.source, []):
            if r.source == it.source and r.line <= it.line:
                continue
            if r.date and it.date and r.date < it.date:
                continue
            if _same(r.who, it.who) or not any(_same(p, r.who) for p in it.to):
                continue
            out[i] = it.done(r.citation, r.date)
            break
    return out
