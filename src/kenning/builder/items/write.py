"""The items pass of ``kenning build``: extract the items of this build's sources, merge them
with the earlier builds' (``.kenning/build/items.jsonl``), settle them all, and write them on
their pages (:mod:`.place`), where a person's edit wins (docs/vault-format.md, "Where items
live"; docs/build.md, "Items").
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.builder.items.model import DONE, Item, SourceItems
from kenning.builder.items.place import Places, meeting_pages, subject_pages, topic_pages
from kenning.builder.items.state import (
    ItemsState,
    SourceRecord,
    delivery_as_dict,
    reply_as_dict,
)

if TYPE_CHECKING:
    from kenning.builder.items.llm import ItemModel

MAX_NOTES = 200
_SECTION_RANK = {"commitments": 0, "open items": 1, "action items": 2, "decisions": 3}


@dataclass
class ItemsReport:
    found: int = 0            # items found in the sources extracted this build
    new: int = 0              # items no earlier build had
    closed: int = 0           # items this build closed (delivered, answered)
    total: int = 0            # items held, after settling
    unplaced: int = 0         # items with no page to go on (kept in the state file)
    lines_added: int = 0
    lines_updated: int = 0
    notes: list[str] = field(default_factory=list)     # one line each, naming the file
    warnings: list[str] = field(default_factory=list)  # a person's edit kept against evidence
    seconds: float = 0.0


def needed(root: Path) -> bool:
    """The items state is missing or was made by another extractor: every source is read."""
    from kenning.builder.items.state import items_path

    try:
        with items_path(root).open(encoding="utf-8", errors="replace") as fh:
            meta = json.loads(fh.readline() or "{}")
    except (OSError, ValueError):
        return True
    return not isinstance(meta, dict) or meta.get("r") != "meta" or \
        meta.get("extractor") != extractor_version()


def extractor_version() -> str:
    from kenning.builder.items import extract

    return str(getattr(extract, "VERSION", "1"))


def _title_line(text: str) -> int | None:
    """The file line of the source's ``# Title`` (where a subject's project is cited)."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    for i in range(start, len(lines)):
        if lines[i].startswith("# "):
            return i + 1
    return None


def _record(si: SourceItems, digest: str | None, title_line: int | None) -> SourceRecord:
    return SourceRecord(
        si.source, digest, title_line,
        items=[it.as_dict() for it in si.items],
        deliveries=[delivery_as_dict(d) for d in si.deliveries],
        replies=[reply_as_dict(r) for r in si.replies],
        notes=list(si.notes))


def run_items(root: Path, ws: Any, *, hashes: dict[str, str], infos: dict[str, Any],
              rows: list[dict[str, Any]], owner: Any, index: Callable[[], Any], owned: set[str],
              follow: Callable[[str | None], str | None], dry_run: bool,
              intend: Any = None, model: ItemModel | None = None) -> ItemsReport:
    """The items pass (see the module docstring). ``hashes``: every source the build holds →
    the hash of its bytes (``state.sources``); ``infos``: this build's parsed sources;
    ``rows``: the whole mention log; ``index``: gives the final entity index; ``owned``: the pages
    Kenning created (the rest it may write only when typed); ``model``: the configured model's
    item pass (:class:`kenning.builder.items.llm.ItemModel`), or None."""
    import time

    from kenning.builder.items.extract import extract_items
    from kenning.builder.items.settle import settle
    from kenning.vault.fsio import UnreadableFile, decode_markdown

    started = time.perf_counter()
    out = ItemsReport()
    istate = ItemsState.load(root)
    if istate.warning:
        out.notes.append(istate.warning)
    version = extractor_version()
    if istate.extractor != version:
        for rec in istate.sources.values():
            rec.hash = None
        istate.extractor = version
    before = {d["id"]: (d.get("settled") or {}).get("status", d.get("status"))
              for rec in istate.sources.values() for d in rec.items}

    # Sources gone, and sources whose bytes changed since their items were extracted.
    for source in [s for s in istate.sources if s not in hashes]:
        del istate.sources[source]
    todo = sorted(s for s, h in hashes.items()
                  if istate.sources.get(s) is None or istate.sources[s].hash != h)
    extracted: list[tuple[str, str, SourceItems]] = []
    lines_of: dict[str, int | None] = {}
    for source in todo:
        try:
            text = decode_markdown((root / source).read_bytes())
        except (OSError, UnreadableFile):
            continue  # the build reported it
        try:
            si = extract_items(source, text, owner, infos.get(source))
        except Exception as exc:  # one source's bad luck never stops the build
            out.notes.append(f"{source}: items not extracted ({type(exc).__name__}: {exc}); "
                             "its earlier items are kept")
            continue
        extracted.append((source, text, si))
        lines_of[source] = _title_line(text)
    if extracted:
        refined = _refine(model, extracted, out)
        if refined is not None:
            extracted = [(s, t, r) for (s, t, _), r in zip(extracted, refined, strict=True)]
    for source, _text, si in extracted:
        istate.sources[source] = _record(si, hashes[source], lines_of[source])
        out.found += len(si.items)
        out.notes.extend(si.notes)

    settled = _settle(settle, istate)
    by_id = {it.id: it for it in settled}
    for rec in istate.sources.values():
        for d in rec.items:
            it = by_id.get(d["id"])
            if it is not None:
                d["settled"] = {"status": it.status, "closed_by": it.closed_by,
                                "closed_on": it.closed_on}
            else:
                d.pop("settled", None)
    out.total = len(settled)
    changed: set[str] = set()
    for it in settled:
        if it.id not in before:
            out.new += 1
            changed.add(it.id)
        elif it.status == DONE and before[it.id] != DONE:
            out.closed += 1
            changed.add(it.id)

    # Pages moved by this build: their line records follow.
    for page, item_id in list(istate.lines):
        to = follow(page)
        if to and to != page:
            rec = istate.lines.pop((page, item_id))
            istate.lines.setdefault((to, item_id), rec)

    places = Places(
        parties=_parties(rows, owner, {it.source for it in settled}),
        meeting_pages=meeting_pages(ws) if any(
            it.source.startswith("sources/meetings/") for it in settled) else {},
        topics=lambda: topic_pages(index()),
        subject_pages=subject_pages(rows, {s: r.title_line for s, r in istate.sources.items()}))
    # What the evidence for each item is, without line numbers (a thread that grows is
    # rendered again and its lines move; that is no new evidence).
    said: dict[str, set[str]] = defaultdict(set)
    for rec in istate.sources.values():
        for d in rec.items:
            said[d["id"]].add(f"{d['source']}|{d.get('message') or ''}|{d.get('date') or ''}")
    sigs = {it.id: _signature(it, said.get(it.id, set())) for it in settled}
    from kenning.vault.writes import write_lock

    with write_lock(root) if not dry_run else contextlib.nullcontext():
        write_pages(ws, istate, settled, places, _may_edit(owned), out, changed, sigs)
        ws.commit()
    if not dry_run:
        istate.save(root, intend=intend)
    if len(out.notes) > MAX_NOTES:
        extra = len(out.notes) - MAX_NOTES
        out.notes = [*out.notes[:MAX_NOTES], f"… and {extra} more item note(s)"]
    out.seconds = round(time.perf_counter() - started, 3)
    return out


def _signature(it: Item, said: set[str]) -> str:
    """What the sources say of an item, as a person's kept edit is compared with: status,
    due, when and where it was closed (by file, not line), and every statement of it."""
    closed = (it.closed_by or "").split("#", 1)[0]
    return json.dumps([it.status, it.due, it.closed_on, closed, sorted(said)],
                      ensure_ascii=False)


def _refine(model: ItemModel | None, extracted: list[tuple[str, str, SourceItems]],
            out: ItemsReport) -> list[SourceItems] | None:
    """The model's pass over this build's sources, when the build was given one."""
    if model is None:
        return None
    refined = list(model.refine(extracted))
    out.warnings.extend(model.warnings)
    if len(refined) != len(extracted):
        out.warnings.append(f"the item model returned {len(refined)} sources for "
                            f"{len(extracted)}; its output is not used")
        return None
    return refined


def _settle(settle: Callable[..., list[Item]], istate: ItemsState) -> list[Item]:
    items = istate.all_items()
    settled = settle(items, istate.all_deliveries(), istate.all_replies())
    out: dict[str, Item] = {}
    for it in sorted(settled, key=lambda i: (i.date or "9999", i.source, i.line, i.id)):
        out.setdefault(it.id, it)  # the same promise repeated: its first statement
    return list(out.values())


def _parties(rows: list[dict[str, Any]], owner: Any, sources: set[str]) -> Any:
    from kenning.builder.items.place import Parties
    from kenning.builder.mentions import is_owner_name

    emails = {e.lower() for e in getattr(owner, "emails", ()) or ()}

    def is_owner(party: Any) -> bool:
        return bool(party.email and party.email.lower() in emails) or \
            is_owner_name(owner, party.name)

    return Parties(rows, is_owner, sources)


def _may_edit(owned: set[str]) -> Callable[[str, str], bool]:
    """A page Kenning created, or a typed entity page (as the build's Applier decides)."""
    from kenning import vocabulary
    from kenning.errors import VocabularyError
    from kenning.vault import frontmatter as fmod
    from kenning.vault.created import may_write

    def check(path: str, text: str) -> bool:
        if path in owned:
            return True
        fm = fmod.read(text)
        if fm.error:
            return False
        raw = fm.data.get("type")
        try:
            folded = vocabulary.entity_type(raw) if isinstance(raw, str) else None
        except VocabularyError:
            folded = None
        return may_write(path, folded, owned)

    return check


def _order(it: Item) -> tuple[str, str, int, str]:
    return (it.date or "9999", it.source, it.line, it.id)


def write_pages(ws: Any, istate: ItemsState, settled: list[Item], places: Places,
                may_edit: Callable[[str, str], bool], out: ItemsReport, changed: set[str],
                sigs: dict[str, str]) -> None:
    """Put each item's line on its pages; a line a person changed or deleted is theirs."""
    from kenning.vault.page import add_item, parse_page, render_item, replace_item

    wanted: dict[str, dict[str, Any]] = defaultdict(dict)   # page → id → ItemLine
    for it in sorted(settled, key=_order):
        targets = places.targets(it)
        if not targets:
            out.unplaced += 1
        for page, section in targets:
            wanted[page].setdefault(it.id, places.line(it, section))
    recs_of: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (page, item_id), rec in istate.lines.items():
        recs_of[page][item_id] = rec
    for page in sorted(set(wanted) | set(recs_of)):
        want = wanted.get(page, {})
        recs = recs_of.get(page, {})
        rendered = {i: render_item(line) for i, line in want.items()}
        if set(recs) == set(want) and all(
                recs[i].get("evidence", recs[i].get("wrote")) == r
                and recs[i].get("sig") == sigs.get(i) for i, r in rendered.items()):
            continue  # nothing changed since the last build wrote this page
        text = ws.read(page)
        if text is None:
            continue  # a page deleted by hand is not made again for its items
        if not may_edit(page, text):
            fresh = [i for i in want if i in changed]
            if fresh:
                out.notes.append(f"{page}: a person's note (not typed), not written; "
                                 f"{len(fresh)} item(s) kept in .kenning/build/items.jsonl")
            continue
        parsed = parse_page(text, page)
        raw = text.split("\n")
        on_page = {}
        for line in parsed.items:
            if line.block_id and line.block_id not in on_page:
                on_page[line.block_id] = line
        adds = []
        removals = []
        for item_id, line in want.items():
            r = rendered[item_id]
            rec = recs.get(item_id)
            cur = on_page.get(item_id)
            new_rec: dict[str, Any] = {"wrote": r, "sig": sigs.get(item_id)}
            if cur is None:
                if rec is not None:
                    # The person deleted the line: it is not put back (the state keeps it).
                    gone = {k: v for k, v in rec.items() if k == "wrote"}
                    if r != rec.get("wrote"):
                        gone["evidence"] = r
                    istate.lines[(page, item_id)] = {**gone, "sig": new_rec["sig"]}
                    continue
                adds.append(line)
                istate.lines[(page, item_id)] = new_rec
                continue
            now = raw[cur.line - 1].rstrip("\r")
            if now == r or (rec is not None and now == rec.get("wrote")):
                if now != r:
                    text = replace_item(text, cur.line, line)
                    raw = text.split("\n")
                    out.lines_updated += 1
                istate.lines[(page, item_id)] = new_rec
                continue
            # The person's line: kept as it is; new evidence is named in a warning.
            prev = rec.get("sig") if rec else None
            if prev is not None and prev != new_rec["sig"] and _disagree(cur, line):
                out.warnings.append(_contradiction(page, cur, want[item_id]))
            kept: dict[str, Any] = {"evidence": r, "sig": new_rec["sig"]}
            if rec is not None and rec.get("wrote"):
                kept = {"wrote": rec["wrote"], **kept}
            istate.lines[(page, item_id)] = kept
        for item_id, rec in recs.items():
            if item_id in want:
                continue
            # The item is gone (its source removed or changed): the build's own line goes with
            # it; a line the person changed stays theirs.
            cur = on_page.get(item_id)
            if cur is not None and raw[cur.line - 1].rstrip("\r") == rec.get("wrote"):
                removals.append(cur.line)
            istate.lines.pop((page, item_id), None)
        if removals:
            keep = text.split("\n")
            for n in sorted(removals, reverse=True):
                del keep[n - 1]
            text = "\n".join(keep)
        # New sections in one order on every page: Commitments, Open items, Action items,
        # Decisions (a section that exists takes its lines at its end).
        # add_item reads the whole page; a section's further new lines follow the one it
        # added (where add_item would put them too: at the section's end).
        last: dict[str, str] = {}
        for line in sorted(adds, key=lambda x: _SECTION_RANK.get(x.section, 9)):
            after = last.get(line.section)
            fast = _insert_after(text, after, render_item(line)) if after else None
            text = fast if fast is not None else add_item(text, line)
            last[line.section] = render_item(line)
            out.lines_added += 1
        ws.write(page, text)


def _insert_after(text: str, after: str, rendered: str) -> str | None:
    """``text`` with ``rendered`` as the line after the (last) line ``after``; None when
    there is no such line."""
    lines = text.split("\n")
    for n in range(len(lines) - 1, -1, -1):
        if lines[n].rstrip("\r") == after:
            if n == len(lines) - 1:
                return None  # the page's last line, with no line ending: add_item's case
            lines.insert(n + 1, rendered + ("\r" if lines[n].endswith("\r") else ""))
            return "\n".join(lines)
    return None


def _disagree(mine: Any, theirs: Any) -> bool:
    """The person's line and the sources' differ on what matters: done or not, the due date."""
    return mine.status != theirs.status or bool(theirs.due and mine.due != theirs.due)


def _contradiction(page: str, cur: Any, line: Any) -> str:
    """One line: the page and line kept, what the sources say now, with the citation."""
    what = "done" if line.status == DONE else line.status
    cite = line.source or ""
    if line.status == DONE and line.closed:
        what += f" on {line.completion}" if line.completion else ""
        cite = line.closed
    if line.due:
        what += f", due {line.due}"
    mine = "marked done" if cur.checked else "open" if cur.checked is False else cur.status
    return (f"{page}:{cur.line}: kept your edit of item ^{line.block_id} ({mine}); the "
            f"sources now say {what} — {cite.strip('[]')}")
