"""Item lines into index rows: identity, parties, and how a party finds its page.

An item (docs/vault-format.md §6b) is one row of ``items`` per page it is written on; ``key`` is
its identity across pages (the build writes one commitment on the person's page and on the
meeting's, under one block id). Its parties (``who``, each ``to``) are rows of
``item_parties``, resolved at the end of an index run like links are (``[[wikilink]]`` by
Obsidian's rules, a plain name against titles and aliases, then a person's unique first name),
and re-resolved when a name they use changes owner.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kenning.index.links import norm_name, ref_key
from kenning.vault.page import ItemLine, Page

if TYPE_CHECKING:
    from kenning.index.store import Store

ME = "me"
PERSON_FOLDER = "people/"


@dataclass(frozen=True)
class PartyRow:
    """One party of an item as it is stored (before resolution unless ``me``/``party_id``)."""

    role: str              # who | to | about
    ord: int
    raw: str
    norm: str | None
    plain: bool = False
    me: bool = False
    party_id: int | None = None
    resolution: str | None = None


def owner_names(raw_config: dict[str, Any] | None) -> frozenset[str]:
    """The owner's names from ``owner.names`` in the config, normalised (a plain party with one
    of them is the owner)."""
    section = (raw_config or {}).get("owner") or {}
    names = section.get("names") if isinstance(section, dict) else None
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list):
        return frozenset()
    return frozenset(norm_name(str(n)) for n in names if str(n).strip())


def is_person_page(page: Page) -> bool:
    """A person's page: ``type: person`` or a page under ``people/``."""
    return page.type == "person" or page.path.startswith(PERSON_FOLDER)


def item_key(path: str, item: ItemLine) -> str:
    """An item's identity: its block id, else the page and a hash of its kind and words (so the
    line may move, and its box be checked, and stay the same item)."""
    if item.block_id:
        return item.block_id
    words = " ".join(item.text.casefold().split())
    digest = hashlib.blake2b(f"{item.kind}|{words}".encode(), digest_size=6).hexdigest()
    return f"{path}#{digest}"


def party(role: str, ord_: int, raw: str, owners: frozenset[str]) -> PartyRow:
    """A raw ``who``/``to`` value as a party row: ``me``, a wikilink, or a plain name."""
    value = raw.strip()
    if value.startswith("[[") and value.endswith("]]"):
        target = value[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
        norm = norm_name(target)
        if norm in (ME,) or norm in owners:
            return PartyRow(role, ord_, raw, None, me=True, resolution="me")
        return PartyRow(role, ord_, raw, norm)
    norm = norm_name(value.lstrip("@"))
    if norm == ME or norm in owners:
        return PartyRow(role, ord_, raw, None, me=True, resolution="me")
    return PartyRow(role, ord_, raw, norm, plain=True)


def parties_of(page: Page, page_id: int, item: ItemLine,
               owners: frozenset[str]) -> list[PartyRow]:
    """The item's parties; on a person's page a commitment or ask without ``who`` is that
    person's."""
    rows: list[PartyRow] = []
    if item.who:
        rows.append(party("who", 0, item.who, owners))
    elif item.kind in ("commitment", "ask") and is_person_page(page):
        rows.append(PartyRow("who", 0, "", None, party_id=page_id, resolution="page"))
    rows += [party("to", n, raw, owners) for n, raw in enumerate(item.to) if raw.strip()]
    # What it is about (a project, a topic) resolves the same way, so a page finds the
    # decisions about it.
    rows += [party("about", n, raw, owners) for n, raw in enumerate(item.about) if raw.strip()]
    return rows


def item_row(page_id: int, key: str, item: ItemLine) -> tuple[Any, ...]:
    """The ``items`` row of an item line (without its id)."""
    return (page_id, item.line, key, item.section, item.kind, item.text,
            None if item.checked is None else int(item.checked), item.date, item.due,
            item.completion, item.closed, item.because,
            json.dumps(list(item.rejected), ensure_ascii=False),
            json.dumps(list(item.about), ensure_ascii=False), item.status, item.by,
            item.source, item.block_id)


ITEM_COLUMNS = ("page_id, line, key, section, kind, text, checked, date, due, completion,"
                " closed, because, rejected, about, status, superseded_by, source, block_id")


def write_items(store: Store, page: Page, page_id: int, owners: frozenset[str]) -> None:
    """Insert the page's item rows and their parties (the caller deleted the old ones)."""
    if not page.items:
        return
    parties: list[tuple[Any, ...]] = []
    for item in page.items:
        item_id = store.insert(
            f"INSERT INTO items({ITEM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            item_row(page_id, item_key(page.path, item), item))
        for p in parties_of(page, page_id, item, owners):
            parties.append((item_id, page_id, p.role, p.ord, p.raw, p.norm,
                            ref_key(p.norm) if p.norm else None, int(p.plain), int(p.me),
                            p.party_id, p.resolution))
    if parties:
        store.many(
            "INSERT INTO item_parties(item_id, page_id, role, ord, raw, norm, ref_key, plain,"
            " me, party_id, resolution) VALUES (?,?,?,?,?,?,?,?,?,?,?)", parties)


def delete_items(store: Store, page_id: int) -> None:
    """Drop a page's item rows (a changed page replaces them)."""
    store.run("DELETE FROM item_parties WHERE page_id = ?", (page_id,))
    store.run("DELETE FROM items WHERE page_id = ?", (page_id,))


def pending_parties(store: Store, dirty: Iterable[str], scan_all: bool
                    ) -> list[tuple[int, str, str, str, int]]:
    """(id, origin path, norm, ref_key, plain) of the parties to resolve: those not resolved
    yet and those whose name (or file name) changed owner."""
    select = ("SELECT ip.id, p.path, ip.norm, ip.ref_key, ip.plain FROM item_parties ip"
              " JOIN pages p ON p.id = ip.page_id WHERE ip.norm IS NOT NULL")
    rows = {r[0]: r for r in store.rows(f"{select} AND ip.resolution IS NULL")}
    wanted = sorted(set(dirty))
    if wanted:
        # A first name ("Priya") is no page's name: any new or renamed page may be the one it
        # means, so one-word names that found no single page are looked at again after every
        # change (a longer name changes owner only through its own name, in dirty_names).
        for r in store.rows(f"{select} AND ip.plain = 1 AND ip.norm NOT LIKE '% %'"
                            " AND ip.resolution IN ('unresolved', 'ambiguous', 'first-name')"):
            rows[r[0]] = r
    if scan_all:
        names = set(wanted)
        for r in store.rows(f"{select} AND ip.resolution IS NOT NULL"):
            if r[2] in names or r[3] in names:
                rows[r[0]] = r
    else:
        for part, marks in store.in_batches(wanted):
            for r in store.rows(f"{select} AND (ip.norm IN ({marks}) OR ip.ref_key IN ({marks}))",
                                part * 2):
                rows[r[0]] = r
    return [tuple(r) for r in rows.values()]  # type: ignore[misc]


def first_name_pages(store: Store, names: Iterable[str]) -> dict[str, list[int]]:
    """Person pages whose title starts with each one-word name ("priya" → Priya Raman's page):
    how meeting notes name people ("- [ ] Priya: …")."""
    found: dict[str, list[int]] = {}
    for name in sorted(set(names)):
        if not name or " " in name:
            continue
        for (page_id,) in store.rows(
                "SELECT DISTINCT n.page_id FROM names n JOIN pages p ON p.id = n.page_id"
                " WHERE n.kind IN ('title', 'alias') AND n.norm LIKE ?"
                " AND (p.type = 'person' OR p.folder = 'people')",
                (name.replace("%", "").replace("_", "") + " %",)):
            found.setdefault(name, []).append(int(page_id))
    return found
