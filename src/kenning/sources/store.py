"""The raw layer's one writer: source files under ``sources/<kind>/`` and sync state.

Every connector turns its input into :class:`SourceDoc` values — one per email thread, meeting,
chat session or calendar event — and hands them to :class:`SourceStore`. The store owns the rules
that make syncing safe to repeat:

- A source is keyed by its own id (``source_id``). Its file path is chosen once, when it is first
  written, and remembered in ``.kenning/sync/<connector>.json``.
- A source is a sequence of keyed entries (messages, turns, occurrences). New entries are appended;
  text already in the file is never rewritten. Frontmatter is updated in place (keys a person
  added are kept).
- Nothing changes when nothing is new: no byte, no mtime.
- Every write is atomic, and the state is saved after the files it describes, so a crash leaves
  whole files and the next sync finishes the work (an entry whose text is already in the file is
  recognised even when the state was not saved).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenning.errors import KenningError
from kenning.vault import frontmatter
from kenning.vault.fsio import atomic_write_text
from kenning.vault.layout import STATE_DIR

SOURCES = "sources"
SYNC_DIR = "sync"
STATE_VERSION = 1
# Frontmatter keys the store writes on every source file; connectors add their own.
FOLDERS = {"email": "email", "meeting": "meetings", "chat": "chats", "calendar": "calendar"}
OWN_KEYS = ("type", "kind", "title", "date", "connector", "source_id", "fetched", "content_hash")


class SyncError(KenningError):
    """An input that cannot be synced at all (missing path, unknown format)."""


@dataclass(frozen=True)
class Entry:
    """One unit of a source, in order: a message, a speaker turn, an event occurrence.

    ``key`` is unique within its source (a Message-ID, a turn number, an occurrence start);
    ``text`` is the Markdown written for it, without a trailing newline.
    """

    key: str
    text: str


@dataclass
class SourceDoc:
    """One source file's content as a connector produced it.

    ``kind`` is one of :data:`FOLDERS` (``email``, ``meeting``, ``chat``, ``calendar``); the file
    goes to ``sources/<folder>/``.
    ``fields`` are connector-specific frontmatter keys (participants, attendees, message_ids …);
    they are rewritten on every change of the file, so they must describe all entries so far —
    connectors merge them with :meth:`SourceStore.existing_fields` when entries arrive in parts.
    ``header`` is Markdown written once, after the H1, when the file is created.
    """

    kind: str
    source_id: str
    title: str
    date: str | None
    entries: list[Entry]
    fields: dict[str, Any] = field(default_factory=dict)
    header: str = ""
    name: str | None = None  # preferred file stem; the default is <date>-<title slug>


@dataclass
class SyncReport:
    """What one sync did; warnings name the input and the item, one line each."""

    connector: str
    created: int = 0
    appended: int = 0
    unchanged: int = 0
    entries_added: int = 0
    items_read: int = 0
    warnings: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(f"{where}: {message}")

    def as_dict(self) -> dict[str, Any]:
        return {"connector": self.connector, "created": self.created, "appended": self.appended,
                "unchanged": self.unchanged, "entries_added": self.entries_added,
                "items_read": self.items_read, "warnings": list(self.warnings)}


def slugify(text: str, limit: int = 60) -> str:
    """A file-name-safe slug: lower case, ASCII letters kept, CJK kept, runs of others → '-'."""
    folded = unicodedata.normalize("NFKD", text)
    kept = []
    for ch in folded:
        if unicodedata.combining(ch):
            continue
        kept.append(ch.lower() if ch.isalnum() else "-")
    slug = re.sub(r"-+", "-", "".join(kept)).strip("-")
    return slug[:limit].rstrip("-") or "untitled"


def content_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def now_stamp() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class SourceStore:
    """Writes one connector's source files and keeps its state file.

    Use as a context manager (the state is saved on exit, also after an error) or call
    :meth:`save`. ``state["cursors"]`` is free for the connector (IMAP UIDs, file hashes …).
    """

    def __init__(self, root: Path, connector: str) -> None:
        self.root = Path(root)
        self.connector = connector
        self.state_path = self.root / STATE_DIR / SYNC_DIR / f"{connector}.json"
        self.state = self._load_state()
        self._dirty = False

    # -- state -------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        empty: dict[str, Any] = {"version": STATE_VERSION, "connector": self.connector,
                                 "last_sync": None, "cursors": {}, "sources": {}}
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return empty
        except (OSError, ValueError) as exc:
            # The state is a cache of what the vault holds: losing it costs time, not data.
            self.load_warning = f"{self.state_path}: unreadable sync state ({exc}); starting over"
            return empty
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return empty
        for key, value in empty.items():
            data.setdefault(key, value)
        return data

    load_warning: str | None = None

    @property
    def cursors(self) -> dict[str, Any]:
        self._dirty = True
        return self.state["cursors"]

    def save(self, *, finished: bool = False) -> None:
        if finished:
            self.state["last_sync"] = now_stamp()
            self._dirty = True
        if not self._dirty:
            return
        atomic_write_text(self.state_path,
                          json.dumps(self.state, ensure_ascii=False, indent=1, sort_keys=True))
        self._dirty = False

    def __enter__(self) -> SourceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.save(finished=exc[0] is None)

    # -- sources -----------------------------------------------------------------------------

    def known(self, source_id: str) -> dict[str, Any] | None:
        """The state record of a source (path, keys, hash), if it was written before."""
        return self.state["sources"].get(source_id)

    def existing_fields(self, source_id: str) -> dict[str, Any]:
        """The frontmatter currently on disk for a source (empty when it has no file yet)."""
        record = self.known(source_id)
        if not record:
            return {}
        path = self.root / record["path"]
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return {}
        result = frontmatter.read(text)
        return frontmatter.to_plain(result.data) if result.data else {}

    def put(self, doc: SourceDoc, report: SyncReport) -> str | None:
        """Write ``doc``: create its file or append its new entries. Returns the vault path."""
        record = self.known(doc.source_id)
        if record and not (self.root / record["path"]).exists():
            record = None  # the person deleted the file: write it again
        if record is None:
            rel = self._new_path(doc)
            target = self.root / rel
            if target.exists():
                return self._append(doc, rel, report, recovered=True)
            body = _join([f"# {_one_line(doc.title) or doc.source_id}", doc.header.strip(),
                          *[e.text for e in doc.entries]])
            fm = self._frontmatter(doc, body)
            atomic_write_text(target, "---\n" + frontmatter.render(fm) + "---\n" + body)
            self._remember(doc.source_id, rel, [e.key for e in doc.entries], body)
            report.created += 1
            report.entries_added += len(doc.entries)
            report.paths.append(rel)
            return rel
        return self._append(doc, record["path"], report)

    def _append(self, doc: SourceDoc, rel: str, report: SyncReport, *,
                recovered: bool = False) -> str:
        target = self.root / rel
        text = target.read_text(encoding="utf-8")
        parsed = frontmatter.read(text)
        if parsed.error is not None:
            report.warn(rel, f"line {parsed.error[0]}: {parsed.error[1]}; fix the frontmatter — "
                             "new entries were not appended")
            return rel
        body = text[parsed.body_offset:]
        record = self.known(doc.source_id)
        seen = set(record["keys"]) if record and not recovered else set()
        if recovered or record is None:
            # No record of which entries were written (state lost in a crash): an entry whose
            # text is already in the file is not written again.
            new = [e for e in doc.entries if e.text.strip() not in body]
        else:
            new = [e for e in doc.entries if e.key not in seen]
        old_fields = parsed.data
        if new:
            body = body.rstrip("\n") + "\n\n" + _join([e.text for e in new])
        updates = self._frontmatter(doc, body, previous=old_fields if not new else None)
        changed = {k: v for k, v in updates.items() if old_fields.get(k) != v}
        if new or changed:
            head = frontmatter.set_frontmatter(text[: parsed.body_offset] or "---\n---\n",
                                               changed)
            atomic_write_text(target, head + body)
            report.appended += 1
            report.entries_added += len(new)
            report.paths.append(rel)
        else:
            report.unchanged += 1
        keys = [*(record["keys"] if record and not recovered else []),
                *[e.key for e in doc.entries if e.key not in seen]]
        self._remember(doc.source_id, rel, list(dict.fromkeys(keys)), body)
        return rel

    def _frontmatter(self, doc: SourceDoc, body: str,
                     previous: dict[str, Any] | None = None) -> dict[str, Any]:
        fm: dict[str, Any] = {"type": "source", "kind": doc.kind, "title": _one_line(doc.title)}
        if doc.date:
            fm["date"] = doc.date
        fm["connector"] = self.connector
        fm["source_id"] = doc.source_id
        # fetched moves only when the content does, so an unchanged re-sync writes nothing.
        fm["fetched"] = (previous or {}).get("fetched") or now_stamp()
        fm["content_hash"] = content_hash(body)
        for key, value in doc.fields.items():
            if key not in OWN_KEYS and value not in (None, "", [], {}):
                fm[key] = value
        return fm

    def _remember(self, source_id: str, rel: str, keys: list[str], body: str) -> None:
        self.state["sources"][source_id] = {"path": rel, "keys": keys,
                                            "hash": content_hash(body)}
        self._dirty = True

    def _new_path(self, doc: SourceDoc) -> str:
        folder = f"{SOURCES}/{FOLDERS[doc.kind]}"
        stem = doc.name or "-".join(p for p in ((doc.date or "")[:10], slugify(doc.title)) if p)
        stem = slugify(stem, limit=80)
        taken = {r["path"] for sid, r in self.state["sources"].items() if sid != doc.source_id}
        rel = f"{folder}/{stem}.md"
        if rel in taken or self._owned_by_other(rel, doc.source_id):
            rel = f"{folder}/{stem}-{hashlib.sha1(doc.source_id.encode()).hexdigest()[:8]}.md"
        return rel

    def _owned_by_other(self, rel: str, source_id: str) -> bool:
        path = self.root / rel
        if not path.exists():
            return False
        try:
            data = frontmatter.read(path.read_text(encoding="utf-8")).data or {}
        except (OSError, UnicodeDecodeError, KenningError):
            return True
        return str(data.get("source_id")) != source_id

    # -- input files ------------------------------------------------------------------------

    def input_unchanged(self, key: str, stamp: str, report: SyncReport) -> dict[str, Any] | None:
        """The record of input ``key`` if it was synced before with the same ``stamp`` and every
        source it gave is still on disk; its sources then count as unchanged and its warnings
        are repeated. None means: read the input (new, changed, or a source file was deleted).

        ``stamp`` is whatever proves the input unchanged (a content hash, size + mtime, plus any
        option that changes the output, such as a calendar window).
        """
        seen = self.state["cursors"].get("files", {}).get(key)
        if not isinstance(seen, dict) or seen.get("stamp") != stamp:
            return None
        sources = seen.get("sources", [])
        for source_id in sources:
            record = self.known(source_id)
            if not record or not (self.root / record["path"]).exists():
                return None
        report.items_read += int(seen.get("read", 0))
        report.unchanged += len(sources)
        report.warnings.extend(seen.get("warnings", []))
        return seen

    def remember_input(self, key: str, stamp: str, sources: list[str], *, read: int,
                       warnings: list[str], **extra: Any) -> None:
        """Record what input ``key`` gave, for :meth:`input_unchanged` on the next sync."""
        self.cursors.setdefault("files", {})[key] = {
            "stamp": stamp, "sources": sources, "read": read, "warnings": warnings[:50], **extra}

    def paths(self) -> Iterator[str]:
        for record in self.state["sources"].values():
            yield record["path"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _join(blocks: list[str]) -> str:
    return "\n\n".join(b.strip("\n") for b in blocks if b.strip()) + "\n"


def read_states(root: Path, connectors: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The state files of ``connectors`` (default: every connector), unreadable ones skipped."""
    folder = Path(root) / STATE_DIR / SYNC_DIR
    paths = (sorted(folder.glob("*.json")) if connectors is None
             else [folder / f"{name}.json" for name in connectors])
    out = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


# A connector reports progress as (done, total or None when unknown, what it is on).
Progress = Callable[[int, int | None, str], None]
