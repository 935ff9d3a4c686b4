"""The items state file, ``.kenning/build/items.jsonl``: one JSON object a line, sorted.

Records (``"r"`` names the kind of record):

- ``meta``: ``{"r": "meta", "version": …, "extractor": …}`` — a different extractor version
  re-extracts every source;
- ``source``: a source whose items are held here, the hash of its bytes when they were
  extracted, the line of its title (a project/topic made from the subject is cited there) and
  the extractor's notes;
- ``item`` / ``delivery`` / ``reply``: what extraction (and the model pass) found in a source,
  before settling; ``item`` records also carry ``settled`` (status, closed_by, closed_on after
  the last settling), so a build can tell which items it closed;
- ``line``: per (page, item id), the exact line the build last wrote there (``wrote``) and,
  when a person's edit kept the build from writing, the line the evidence asks for now
  (``evidence``), and ``sig``, what the sources say of the item without line numbers (a
  change of it against a person's kept line is a warning): a line whose text is no longer
  ``wrote`` is the person's; a ``line`` record whose id is not on its page any more is a line
  the person deleted.

Written through the build's journal (``intend``) like ``state.json``: a killed build rolls it
back with the pages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.builder.items.model import Delivery, Item, Party, Reply

ITEMS_NAME = "items.jsonl"
ITEMS_VERSION = 1
Intend = Callable[[Mapping[str, "str | None"]], None]

_ORDER = {"meta": 0, "source": 1, "item": 2, "delivery": 3, "reply": 4, "line": 5}


def items_path(root: Path) -> Path:
    from kenning.builder.state import build_dir

    return build_dir(root) / ITEMS_NAME


@dataclass
class SourceRecord:
    """What the state holds for one source."""

    source: str
    hash: str | None
    title_line: int | None = None
    items: list[dict[str, Any]] = field(default_factory=list)       # Item.as_dict() (+settled)
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class ItemsState:
    extractor: str | None = None
    sources: dict[str, SourceRecord] = field(default_factory=dict)
    lines: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (page, id)
    warning: str | None = None
    exists: bool = False

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, root: Path) -> ItemsState:
        path = items_path(root)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            return cls(warning=f"{path}: unreadable items state ({exc.strerror}); "
                               "items are extracted again from every source")
        out = cls(exists=True)
        bad = 0
        for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
                out._take(rec)
            except (ValueError, KeyError, TypeError):
                bad += 1
                if out.warning is None:
                    out.warning = (f"{path}:{n}: damaged items record; its source's items are "
                                   "extracted again")
        if bad:
            # A damaged record costs its source a re-extraction, never an item: the source's
            # hash no longer matches, so it is extracted again.
            for rec in out.sources.values():
                rec.hash = None
        return out

    def _take(self, rec: dict[str, Any]) -> None:
        kind = rec["r"]
        if kind == "meta":
            self.extractor = rec.get("extractor")
            return
        if kind == "line":
            self.lines[(str(rec["page"]), str(rec["id"]))] = {
                k: v for k, v in rec.items() if k in ("wrote", "evidence", "sig")}
            return
        source = str(rec["source"])
        src = self.sources.get(source)
        if src is None:
            src = self.sources[source] = SourceRecord(source, None)
        body = {k: v for k, v in rec.items() if k != "r"}
        if kind == "source":
            src.hash = rec.get("hash")
            src.title_line = rec.get("title_line")
            src.notes = list(rec.get("notes") or [])
        elif kind == "item":
            Item.from_dict(body)  # validates
            src.items.append(body)
        elif kind == "delivery":
            src.deliveries.append(body)
        elif kind == "reply":
            src.replies.append(body)
        else:
            raise ValueError(f"unknown record {kind!r}")

    # -- the model ---------------------------------------------------------------------------

    def all_items(self) -> list[Item]:
        return [Item.from_dict(d) for s in sorted(self.sources)
                for d in self.sources[s].items]

    def all_deliveries(self) -> list[Delivery]:
        return [delivery_from_dict(d) for s in sorted(self.sources)
                for d in self.sources[s].deliveries]

    def all_replies(self) -> list[Reply]:
        return [reply_from_dict(d) for s in sorted(self.sources) for d in self.sources[s].replies]

    # -- writing ---------------------------------------------------------------------------

    def to_text(self) -> str:
        recs: list[dict[str, Any]] = [{"r": "meta", "version": ITEMS_VERSION,
                                       "extractor": self.extractor}]
        for source in sorted(self.sources):
            s = self.sources[source]
            recs.append({"r": "source", "source": source, "hash": s.hash,
                         "title_line": s.title_line, "notes": list(s.notes)})
            recs.extend({"r": "item", **d} for d in sorted(
                s.items, key=lambda d: (d["line"], d["end"], d["kind"], d["text"])))
            recs.extend({"r": "delivery", **d} for d in sorted(
                s.deliveries, key=lambda d: (d["line"], d["end"], d["text"])))
            recs.extend({"r": "reply", **d} for d in sorted(
                s.replies, key=lambda d: (d["line"], d.get("message") or "")))
        for (page, item_id) in sorted(self.lines):
            recs.append({"r": "line", "page": page, "id": item_id, **self.lines[(page, item_id)]})
        encode = json.JSONEncoder(ensure_ascii=False, sort_keys=False).encode  # = json.dumps(…)
        return "".join(encode(r) + "\n" for r in recs)

    def save(self, root: Path, *, intend: Intend | None = None) -> bool:
        """Write the file when its text changed (``intend``, the journal, is told first)."""
        from kenning.vault.fsio import atomic_write_text

        path = items_path(root)
        if not self.sources and not self.lines and not path.exists():
            return False  # a vault with nothing to hold gets no file
        text = self.to_text()
        try:
            if path.read_bytes() == text.encode("utf-8"):
                return False
        except OSError:
            pass
        if intend is not None:
            intend({path.relative_to(root).as_posix(): text})
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return True


def delivery_as_dict(d: Delivery) -> dict[str, Any]:
    return {"who": d.who.as_dict(), "to": [p.as_dict() for p in d.to], "text": d.text,
            "source": d.source, "line": d.line, "end": d.end, "date": d.date,
            "thread": d.thread, "message": d.message}


def delivery_from_dict(d: dict[str, Any]) -> Delivery:
    return Delivery(who=Party.from_dict(d["who"]),
                    to=tuple(Party.from_dict(p) for p in d.get("to") or ()), text=d["text"],
                    source=d["source"], line=int(d["line"]), end=int(d.get("end") or d["line"]),
                    date=d.get("date"), thread=d.get("thread"), message=d.get("message"))


def reply_as_dict(r: Reply) -> dict[str, Any]:
    return {"who": r.who.as_dict(), "source": r.source, "line": r.line, "date": r.date,
            "thread": r.thread, "message": r.message}


def reply_from_dict(d: dict[str, Any]) -> Reply:
    return Reply(who=Party.from_dict(d["who"]), source=d["source"], line=int(d["line"]),
                 date=d.get("date"), thread=d.get("thread"), message=d.get("message"))
