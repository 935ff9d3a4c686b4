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
- The one exception to "never rewritten": an entry that was a *truncated copy* (an mbox cut in
  the middle of its last message) is replaced by the complete message when it arrives
  (:meth:`SourceStore.replace_entry`), so the thread holds the message once, whole.
- Every write is atomic, and the state is saved after the files it describes, so a crash leaves
  whole files and the next sync finishes the work (an entry whose text is already in the file is
  recognised even when the state was not saved).
- **Every byte written is text the index reads.** A NUL or other control character, a lone
  surrogate (from a JSON ``"\\ud800"`` escape) or a C1 control in anything a connector hands over
  — entry text, titles, headers, frontmatter fields, keys — is replaced with U+FFFD before it is
  written (a lone carriage return becomes a space), with one warning per source file naming the
  entries: a source file never holds a byte that makes the index skip it as binary or not UTF-8.
- **Re-rendering is a repair, not an edit of history.** Each connector has a renderer version
  (``renderer`` argument; 1 when it never changed). The version that wrote a file is kept in its
  state record and in the file's frontmatter (``renderer:``; absent means 1). When a connector's
  parser changes, it raises its version; the next sync of an input re-renders that input's
  files from it — whole, atomically — even when the input itself is unchanged. A file whose
  re-rendering would drop a word it holds (an older input is gone, a person wrote in it) is kept
  as it is and frozen (nothing is appended to it), with a warning. Every repair, done or not,
  is counted in the :class:`SyncReport` and logged in the state's ``repairs``. A re-rendering
  that gives the same body changes no byte; the state notes the version that checked it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenning.errors import KenningError
from kenning.vault import frontmatter
from kenning.vault.fsio import atomic_write_text, too_large, utf8_data, utf8_text
from kenning.vault.layout import STATE_DIR, slug

SOURCES = "sources"
SYNC_DIR = "sync"
STATE_VERSION = 1
MAX_REPAIRS = 1000  # repair lines kept in a state file
# Frontmatter keys the store writes on every source file; connectors add their own.
FOLDERS = {"email": "email", "meeting": "meetings", "chat": "chats", "calendar": "calendar"}
OWN_KEYS = ("type", "kind", "title", "date", "connector", "source_id", "fetched", "content_hash",
            "renderer")


# Characters never written into a source file: C0 controls but tab and line feed, DEL, C1
# controls, lone surrogates, and the line and paragraph separators (str.splitlines would see a
# line break there that the vault's "\n" line model does not).
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with every character a source file must not hold replaced (see the module
    docstring), and how many were replaced (carriage returns do not count)."""
    if not _UNSAFE_CHARS.search(text):
        return text, 0
    # A lone CR becomes a space, not a line break: connectors have already laid out their
    # lines (a turn's continuation lines are indented), and a new one would break that.
    text = text.replace("\r\n", "\n").replace("\r", " ")
    count = len(_UNSAFE_CHARS.findall(text))
    return _UNSAFE_CHARS.sub(REPLACEMENT, text), count


def _clean_value(value: Any, counter: list[int]) -> Any:
    if isinstance(value, str):
        text, n = clean_text(value)
        counter[0] += n
        return text
    if isinstance(value, dict):
        return {_clean_value(k, counter): _clean_value(v, counter) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_value(v, counter) for v in value]
    return value


def clean_doc(doc: SourceDoc) -> tuple[SourceDoc, list[str]]:
    """``doc`` with :func:`clean_text` applied to every string in it, and the entries (or
    parts: ``title``, ``header``, ``fields``) where something was replaced."""
    where: list[str] = []

    def clean(value: Any, label: str) -> Any:
        counter = [0]
        out = _clean_value(value, counter)
        if not counter[0]:
            return value  # untouched, with its own types (tuples stay tuples)
        where.append(f"{label} ({counter[0]})")
        return out

    entries = []
    for entry in doc.entries:
        key = clean(entry.key, "an entry key")
        entries.append(Entry(key, clean(entry.text, f"entry {key}")))
    cleaned = SourceDoc(doc.kind, clean(doc.source_id, "source id"), clean(doc.title, "title"),
                        doc.date, entries, clean(doc.fields, "frontmatter"),
                        clean(doc.header, "header"),
                        clean(doc.name, "file name") if doc.name else doc.name, doc.complete,
                        doc.origin)
    return cleaned, where


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
    # The doc holds every entry of the source (not only new ones): it can replace a file written
    # by an older renderer. Email batches, which hold a thread's new messages, say False.
    complete: bool = True
    origin: str = ""  # the input it came from ("chats/s1.jsonl"), for warnings


@dataclass
class SyncReport:
    """What one sync did; warnings name the input and the item, one line each."""

    connector: str
    created: int = 0
    appended: int = 0
    unchanged: int = 0
    entries_added: int = 0
    items_read: int = 0
    copies: int = 0  # items that were copies of items already written (kept once)
    rerendered: int = 0  # files written again, whole, by a newer renderer
    kept: int = 0  # files a newer renderer could not re-render without losing text
    warnings: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)  # one line per re-rendered or kept file

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(utf8_text(f"{where}: {message}"))

    def as_dict(self) -> dict[str, Any]:
        return {"connector": self.connector, "created": self.created, "appended": self.appended,
                "unchanged": self.unchanged, "entries_added": self.entries_added,
                "items_read": self.items_read, "copies": self.copies,
                "rerendered": self.rerendered,
                "kept": self.kept, "repairs": list(self.repairs),
                "warnings": list(self.warnings)}


def slugify(text: str, limit: int = 60) -> str:
    """A file-name-safe slug of a source's title (:func:`kenning.vault.layout.slug`)."""
    return slug(text, limit)


def content_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def now_stamp() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class SourceStore:
    """Writes one connector's source files and keeps its state file.

    Use as a context manager (the state is saved on exit, also after an error) or call
    :meth:`save`. ``state["cursors"]`` is free for the connector (IMAP UIDs, file hashes …).
    """

    def __init__(self, root: Path, connector: str, *, renderer: int = 1) -> None:
        from kenning.vault.writes import check_format

        check_format(Path(root))  # a vault of a newer format is not written
        self.root = Path(root)
        self.connector = connector
        self.renderer = renderer
        self.state_path = self.root / STATE_DIR / SYNC_DIR / f"{connector}.json"
        self.state = self._load_state()
        self._dirty = False
        self._owners: dict[str, set[str]] | None = None  # path → source ids (see _path_owners)

    # -- state -------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        empty: dict[str, Any] = {"version": STATE_VERSION, "connector": self.connector,
                                 "last_sync": None, "cursors": {}, "sources": {},
                                 "repairs": []}
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
                          json.dumps(utf8_data(self.state), ensure_ascii=False, indent=1,
                                     sort_keys=True))
        self._dirty = False

    def __enter__(self) -> SourceStore:
        self.remove_stale_temps()
        return self

    def remove_stale_temps(self) -> None:
        """Remove the temporary files a sync of this connector left when it was killed
        mid-write (its source files, its state): hidden, but never cleaned up otherwise."""
        folder = {"imap": "email"}.get(self.connector, self.connector)
        places = [(self.state_path.parent, f".{self.state_path.name}.*.tmp")]
        if folder in FOLDERS.values():
            places.append((self.root / SOURCES / folder, ".*.md.*.tmp"))
        for base, pattern in places:
            if base.is_dir():
                for tmp in base.glob(pattern):
                    with contextlib.suppress(OSError):
                        tmp.unlink()

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

    def rendered_by(self, source_id: str) -> int:
        """The renderer version that last wrote (or checked) a source's file (1 when unknown)."""
        return _version((self.known(source_id) or {}).get("renderer"))

    def stale(self, source_id: str) -> bool:
        """Whether the source's file was written by an older renderer and may be re-rendered
        (connectors then build the doc afresh instead of merging the file's fields)."""
        record = self.known(source_id)
        return bool(record) and self.rendered_by(source_id) < self.renderer and \
            not record.get("kept") and (self.root / record["path"]).exists()

    def put(self, doc: SourceDoc, report: SyncReport) -> str | None:
        """Write ``doc``: create its file, append its new entries, or — when the file was written
        by an older renderer and ``doc`` is complete — re-render it. Returns the vault path."""
        # An input whose name is not UTF-8 (its path is provenance): written escaped, so the
        # file is UTF-8 and its YAML reads back; any other unsafe character is replaced below.
        doc = replace(doc, **utf8_data({k: getattr(doc, k) for k in (
            "source_id", "title", "date", "fields", "header", "name")}))
        doc, replaced = clean_doc(doc)
        rel = self._put(doc, report)
        if replaced:
            shown = "; ".join(replaced[:3]) + (f"; … {len(replaced) - 3} more"
                                               if len(replaced) > 3 else "")
            written = f" (written to {rel})" if rel and doc.origin else ""
            report.warn(doc.origin or rel or doc.source_id, "control characters (NUL …) or "
                        f"invalid characters replaced with U+FFFD in {shown}{written}")
        if rel and doc.entries:
            with contextlib.suppress(OSError):
                reason = too_large((self.root / rel).stat().st_size)
                if reason:
                    report.warn(rel, f"{reason}: the index skips it, so it is not searchable")
        return rel

    def _put(self, doc: SourceDoc, report: SyncReport) -> str | None:
        record = self.known(doc.source_id)
        if record and not (self.root / record["path"]).exists():
            record = None  # the person deleted the file: write it again
        if record is None:
            rel = self._new_path(doc)
            target = self.root / rel
            if target.exists():
                return self._append(doc, rel, report, recovered=True)
            body = self._body(doc)
            fm = self._frontmatter(doc, body, renderer=self.renderer)
            atomic_write_text(target, "---\n" + frontmatter.render(fm) + "---\n" + body)
            self._remember(doc.source_id, rel, [e.key for e in doc.entries], body)
            report.created += 1
            report.entries_added += len(doc.entries)
            report.paths.append(rel)
            return rel
        rel = record["path"]
        if record.get("kept") and doc.complete:
            # A newer renderer could not replace this file without losing text: it stays as
            # the older one wrote it, and nothing is appended in another renderer's form.
            report.unchanged += 1
            report.warn(rel, f"kept as renderer {self.rendered_by(doc.source_id)} wrote it "
                             "(see the earlier repair); not updated — move the file away to "
                             "have it written afresh")
            return rel
        if doc.complete and self.stale(doc.source_id):
            return self._rerender(doc, rel, report)
        return self._append(doc, rel, report)

    def replace_entry(self, source_id: str, old: str, new: str, report: SyncReport) -> str | None:
        """Replace the text ``old`` of one entry of a source's file with ``new`` (a truncated
        copy by the complete message). Returns the vault path, or None when ``old`` is not in
        the file exactly once (then nothing is written)."""
        record = self.known(source_id)
        if not record:
            return None
        rel = record["path"]
        target = self.root / rel
        try:
            text = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        parsed = frontmatter.read(text)
        if parsed.error is not None:
            return None
        body = text[parsed.body_offset:]
        if not old.strip() or body.count(old) != 1:
            return None
        body = body.replace(old, clean_text(new)[0])
        head = frontmatter.set_frontmatter(text[: parsed.body_offset],
                                           {"content_hash": content_hash(body)})
        atomic_write_text(target, head + body)
        record["hash"] = content_hash(body)
        self._dirty = True
        report.appended += 1
        report.paths.append(rel)
        return rel

    def _body(self, doc: SourceDoc) -> str:
        return _join([f"# {_title(doc)}", doc.header.strip(), *[e.text for e in doc.entries]])

    def _rerender(self, doc: SourceDoc, rel: str, report: SyncReport) -> str:
        """Replace a file written by an older renderer with ``doc``, unless that drops text."""
        old_version = self.rendered_by(doc.source_id)
        target = self.root / rel
        text = target.read_text(encoding="utf-8")
        parsed = frontmatter.read(text)
        body = self._body(doc)
        old_body = text[parsed.body_offset:] if parsed.error is None else text
        lost = sorted(_words(old_body) - _words(body))
        what = f"renderer {old_version} → {self.renderer}"
        if parsed.error is not None or lost:
            why = (f"its frontmatter does not parse (line {parsed.error[0]})"
                   if parsed.error is not None else
                   f"{len(lost)} word(s) it holds are not in what the input gives now (e.g. "
                   + ", ".join(repr(w) for w in lost[:5]) + "; an older input is gone or "
                   "someone wrote in the file)")
            report.warn(rel, f"not re-rendered ({what}): {why}; kept as it is")
            report.kept += 1
            self._repair(report, doc.source_id, rel, old_version, "kept")
            self.state["sources"][doc.source_id]["kept"] = self.renderer
            self._dirty = True
            return rel
        if sorted(old_body.splitlines()) == sorted(body.splitlines()):
            # The newer renderer gives the same lines (perhaps in another order, as when an
            # entry arrived in a later sync): no byte moves, so no citation of the file moves,
            # unless its frontmatter fields differ (a title the older one did not write).
            appended = report.appended
            self._append(doc, rel, report, recovered=True)
            if report.appended > appended:
                report.appended -= 1
                report.rerendered += 1
                self._repair(report, doc.source_id, rel, old_version, "re-rendered")
        else:
            old_count = len(self.state["sources"][doc.source_id]["keys"])
            fm = self._frontmatter(doc, body, renderer=self.renderer)
            remove = [k for k, v in doc.fields.items() if v in (None, "", [], {})]
            head = frontmatter.set_frontmatter(text[: parsed.body_offset] or "---\n---\n", fm,
                                               remove)
            atomic_write_text(target, head + body)
            self._remember(doc.source_id, rel, [e.key for e in doc.entries], body)
            report.rerendered += 1
            report.entries_added += max(0, len(doc.entries) - old_count)
            report.paths.append(rel)
            self._repair(report, doc.source_id, rel, old_version, "re-rendered")
        self.state["sources"][doc.source_id]["renderer"] = self.renderer
        self._dirty = True
        return rel

    def _repair(self, report: SyncReport, source_id: str, rel: str, old: int,
                result: str) -> None:
        report.repairs.append(f"{rel}: {result} (renderer {old} → {self.renderer})")
        repairs = self.state.setdefault("repairs", [])
        repairs.append({"at": now_stamp(), "source_id": source_id, "path": rel, "from": old,
                        "to": self.renderer, "result": result})
        del repairs[:-MAX_REPAIRS]
        self._dirty = True

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
        # Appended entries do not change which renderer wrote the file.
        version = (_version(old_fields.get("renderer")) if recovered or record is None
                   else self.rendered_by(doc.source_id))
        updates = self._frontmatter(doc, body, previous=old_fields if not new else None,
                                    renderer=version)
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
        self.state["sources"][doc.source_id]["renderer"] = version
        return rel

    def _frontmatter(self, doc: SourceDoc, body: str, previous: dict[str, Any] | None = None,
                     *, renderer: int) -> dict[str, Any]:
        # The title is always set: a note's title is its frontmatter title, else its file name,
        # and source files are named by date and slug, not by what they are about.
        fm: dict[str, Any] = {"type": "source", "kind": doc.kind, "title": _title(doc)}
        if doc.date:
            fm["date"] = doc.date
        fm["connector"] = self.connector
        fm["source_id"] = doc.source_id
        # fetched moves only when the content does, so an unchanged re-sync writes nothing.
        fm["fetched"] = (previous or {}).get("fetched") or now_stamp()
        fm["content_hash"] = content_hash(body)
        if previous is None or "renderer" in previous:
            fm["renderer"] = renderer  # which renderer wrote the text (1 when absent)
        for key, value in doc.fields.items():
            if key not in OWN_KEYS and value not in (None, "", [], {}):
                fm[key] = value
        return fm

    def _remember(self, source_id: str, rel: str, keys: list[str], body: str) -> None:
        if self._owners is not None:
            old = self.state["sources"].get(source_id)
            if old is not None:
                self._owners[old["path"]].discard(source_id)
            self._owners.setdefault(rel, set()).add(source_id)
        self.state["sources"][source_id] = {"path": rel, "keys": keys, "hash": content_hash(body),
                                            "renderer": self.renderer}
        self._dirty = True

    def _new_path(self, doc: SourceDoc) -> str:
        folder = f"{SOURCES}/{FOLDERS[doc.kind]}"
        stem = doc.name or "-".join(p for p in ((doc.date or "")[:10], slugify(doc.title)) if p)
        stem = slugify(stem, limit=80)
        rel = f"{folder}/{stem}.md"
        taken = bool(self._path_owners().get(rel, set()) - {doc.source_id})
        if taken or self._owned_by_other(rel, doc.source_id):
            rel = f"{folder}/{stem}-{hashlib.sha1(doc.source_id.encode()).hexdigest()[:8]}.md"
        return rel

    def _path_owners(self) -> dict[str, set[str]]:
        """Vault path → ids of the sources written there: built once per sync and kept by
        :meth:`_remember`, so naming a new file does not scan every source (10,000 events)."""
        if self._owners is None:
            self._owners = {}
            for sid, record in self.state["sources"].items():
                self._owners.setdefault(record["path"], set()).add(sid)
        return self._owners

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
        seen = self.state["cursors"].get("files", {}).get(utf8_text(key))
        if not isinstance(seen, dict) or seen.get("stamp") != stamp:
            return None
        sources = seen.get("sources", [])
        for source_id in sources:
            record = self.known(source_id)
            if not record or not (self.root / record["path"]).exists() or self.stale(source_id):
                return None  # gone, or written by an older renderer: read the input again
        report.items_read += int(seen.get("read", 0))
        report.unchanged += len(sources)
        report.warnings.extend(seen.get("warnings", []))
        return seen

    def remember_input(self, key: str, stamp: str, sources: list[str], *, read: int,
                       warnings: list[str], **extra: Any) -> None:
        """Record what input ``key`` gave, for :meth:`input_unchanged` on the next sync."""
        self.cursors.setdefault("files", {})[utf8_text(key)] = {
            "stamp": stamp, "sources": sources, "read": read, "warnings": warnings[:50], **extra}

    def paths(self) -> Iterator[str]:
        for record in self.state["sources"].values():
            yield record["path"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _title(doc: SourceDoc) -> str:
    return _one_line(doc.title) or doc.source_id


def _version(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _words(text: str) -> set[str]:
    """The words of a text, folded: what a re-rendering must keep."""
    return set(re.findall(r"\w+", text.casefold()))


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
