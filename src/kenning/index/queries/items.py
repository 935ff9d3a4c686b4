"""Items (commitments, asks, decisions) as the index holds them: portable SQL through a
:class:`Store`.

A query picks the *items* (keys) any copy of which matches the filters, then reads every copy of
them, so the caller can merge the copies of one item (the same block id on a person's page and
on a meeting's) and call it done when any copy is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.index.store.base import Store

Row = tuple[Any, ...]

#: The columns of an item copy as :func:`item_copies` returns them, in order.
COPY_COLUMNS = ("id", "key", "page_id", "path", "page_date", "page_type", "line", "section",
                "kind", "text", "checked", "date", "due", "completion", "closed", "because",
                "rejected", "about", "status", "superseded_by", "source", "block_id")

#: The item copies (:data:`COPY_COLUMNS`), a WHERE clause to follow.
COPY_SELECT = (
    "SELECT i.id, i.key, i.page_id, p.path, p.date, p.type, i.line, i.section, i.kind,"
    " i.text, i.checked, i.date, i.due, i.completion, i.closed, i.because, i.rejected,"
    " i.about, i.status, i.superseded_by, i.source, i.block_id"
    " FROM items i JOIN pages p ON p.id = i.page_id")
#: Their parties: (item id, role, ord, raw, me, party page path or None, resolution).
PARTY_SELECT = ("SELECT ip.item_id, ip.role, ip.ord, ip.raw, ip.me, pp.path, ip.resolution"
                " FROM item_parties ip LEFT JOIN pages pp ON pp.id = ip.party_id")


@dataclass(frozen=True)
class ItemFilter:
    """What to select: every field narrows (an empty one does not)."""

    kinds: tuple[str, ...] = ()
    who_pages: tuple[int, ...] = ()   # who is one of these pages ...
    who_me: bool = False              # ... or the owner
    to_pages: tuple[int, ...] = ()
    to_me: bool = False
    about_pages: tuple[int, ...] = ()  # about one of these pages
    since: str | None = None          # said on or after (the item's date, else its page's)
    due_before: str | None = None     # due strictly before
    page_id: int | None = None        # written on this page
    keys: tuple[str, ...] = field(default=())  # only these items


def _party_cond(role: str, pages: Sequence[int], me: bool, params: list[Any]) -> str:
    ors = []
    params.append(role)
    if pages:
        ors.append(f"party_id IN ({','.join('?' * len(pages))})")
        params.extend(pages)
    if me:
        ors.append("me = 1")
    # From the parties' side: the party index finds the few rows, not a probe per item.
    return (f"i.id IN (SELECT item_id FROM item_parties WHERE role = ?"
            f" AND ({' OR '.join(ors)}))")


def _where(f: ItemFilter) -> tuple[str, list[Any]]:
    conds: list[str] = []
    params: list[Any] = []
    if f.kinds:
        conds.append(f"i.kind IN ({','.join('?' * len(f.kinds))})")
        params.extend(f.kinds)
    if f.who_pages or f.who_me:
        conds.append(_party_cond("who", f.who_pages, f.who_me, params))
    if f.to_pages or f.to_me:
        conds.append(_party_cond("to", f.to_pages, f.to_me, params))
    if f.about_pages:
        conds.append(_party_cond("about", f.about_pages, False, params))
    if f.since:
        conds.append("COALESCE(i.date, p.date) >= ?")
        params.append(f.since)
    if f.due_before:
        conds.append("i.due IS NOT NULL AND i.due < ?")
        params.append(f.due_before)
    if f.page_id is not None:
        conds.append("i.page_id = ?")
        params.append(f.page_id)
    if f.keys:
        conds.append(f"i.key IN ({','.join('?' * len(f.keys))})")
        params.extend(f.keys)
    return (" WHERE " + " AND ".join(conds)) if conds else "", params


#: The columns of an item copy as :func:`item_heads` returns them: what picking, ordering and
#: counting the items needs (status, dates, where), not their text or parties.
HEAD_COLUMNS = ("id", "key", "path", "page_date", "line", "kind", "date", "due", "status")

_HEAD_SELECT = ("SELECT i.id, i.key, p.path, p.date, i.line, i.kind, i.date, i.due, i.status"
                " FROM items i JOIN pages p ON p.id = i.page_id")


def _of_matching(select: str, f: ItemFilter) -> tuple[str, list[Any]]:
    """``select`` narrowed to every copy of the items one copy of which matches ``f``: the
    database keeps the matching keys (at 10,000 notes most of them), no list of thousands of
    parameters goes back and forth."""
    where, params = _where(f)
    if not where:
        return select, params
    return (f"{select} WHERE i.key IN (SELECT i.key FROM items i JOIN pages p"
            f" ON p.id = i.page_id{where})"), params


def item_copies(store: Store, f: ItemFilter) -> tuple[list[Row], list[Row]]:
    """Every copy of every item one copy of which matches ``f`` (:data:`COPY_COLUMNS`), and
    their parties: (item id, role, ord, raw, me, party page path or None, resolution)."""
    sql, params = _of_matching(COPY_SELECT, f)
    copies = store.rows(sql, params)
    if sql == COPY_SELECT:  # no filter: every party
        return copies, store.rows(f"{PARTY_SELECT} ORDER BY ip.item_id, ip.role, ip.ord")
    return copies, _parties(store, [r[0] for r in copies])


def item_heads(store: Store, f: ItemFilter) -> list[Row]:
    """:data:`HEAD_COLUMNS` of every copy of every item one copy of which matches ``f``."""
    sql, params = _of_matching(_HEAD_SELECT, f)
    return store.rows(sql, params)


def copies_of(store: Store, keys: Sequence[str]) -> tuple[list[Row], list[Row]]:
    """:func:`item_copies` of the items with these keys (in batches of the store's limit)."""
    copies: list[Row] = []
    for part, marks in store.in_batches(sorted(set(keys))):
        copies += store.rows(f"{COPY_SELECT} WHERE i.key IN ({marks})", part)
    return copies, _parties(store, [r[0] for r in copies])


def _parties(store: Store, ids: Sequence[int]) -> list[Row]:
    parties: list[Row] = []
    for part, marks in store.in_batches(sorted(ids)):
        parties += store.rows(f"{PARTY_SELECT} WHERE ip.item_id IN ({marks})", part)
    parties.sort(key=lambda r: (r[0], r[1], r[2]))
    return parties


def item_count(store: Store) -> int:
    """How many item lines the index holds (copies counted)."""
    return int(store.scalar("SELECT count(*) FROM items", default=0))


def party_names(store: Store) -> list[str]:
    """Every plain party name written on item lines (for "did you mean")."""
    return [r[0] for r in store.rows(
        "SELECT DISTINCT raw FROM item_parties WHERE plain = 1 ORDER BY raw")]
