"""Email into ``sources/email/``: one Markdown file per thread (mbox, Maildir, .eml, IMAP).

Readers (:mod:`.files`, and :mod:`.imap` for IMAP) yield :class:`RawMessage` values;
:func:`ingest` parses them (:mod:`.message`, :mod:`.quotes`), assigns threads (:mod:`.threads`)
and writes one file per thread through :class:`~kenning.sources.store.SourceStore`
(:mod:`.render`). Messages are handled in batches of :data:`BATCH`: a batch is threaded in date
order, then each of its threads is written once.

State (``.kenning/sync/<connector>.json`` → ``cursors``): ``seen`` (sha1 of each message's raw
bytes → its key; a message already seen is not parsed again, which keeps re-syncs fast), ``ids``
(every Message-ID and referenced id → thread id), ``threads`` (subject and participants per
thread, for the subject fallback), ``merged`` (thread joined into another), ``hashes`` (message
key → content hash, to tell a copy of a message from a different message reusing its id),
``contents`` (content key → message key: the same message filed in two folders under two
Message-IDs, or without one, is kept once; see :attr:`Parsed.copy_key`). The
file connector (``email``) and IMAP (``imap``) keep separate state files but read each other's
index, so a thread met by both is one file: its id comes from the messages only, and an entry
whose text is already in the file is not written twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.sources.owner import Owner
from kenning.sources.store import (
    Entry,
    Progress,
    SourceDoc,
    SourceStore,
    SyncError,
    SyncReport,
    read_states,
)
from kenning.vault import frontmatter

CONNECTOR = "email"
THREAD_CONNECTORS = ("email", "imap")  # connectors whose threads share sources/email/
BATCH = 2000  # messages threaded together before their files are written
SAVE_EVERY = 200  # thread files written between state saves


@dataclass(frozen=True)
class RawMessage:
    """One message as a reader found it, before parsing."""

    data: bytes  # the RFC 822 bytes
    where: str  # for warnings: "path/to/mbox#message 12", "INBOX uid 42", "x.eml"
    folder: str | None = None  # mailbox folder / IMAP folder, stored as a label
    labels: tuple[str, ...] = ()  # e.g. Gmail X-GM-LABELS
    # When the mailbox received it (mbox From_ line, Maildir file name, IMAP INTERNALDATE):
    # the date used when the Date header is missing or impossible.
    internal_date: datetime | None = None


def ingest(store: SourceStore, messages: Iterable[RawMessage], report: SyncReport, *,
           owner: Owner, progress: Progress | None = None, total: int | None = None) -> None:
    """Parse, thread and write messages (thread files appended, never rewritten)."""
    _Ingest(store, report, owner).run(messages, progress, total)


def sync(root: Path, target: str, *, progress: Progress | None = None,
         folders: list[str] | None = None,
         password_env: str = "KENNING_IMAP_PASSWORD") -> SyncReport:
    """Sync an mbox file, a Maildir, a folder of .eml files, or imap://… / imaps://…

    ``folders`` and ``password_env`` apply to IMAP only.
    """
    if target.startswith(("imap://", "imaps://")):
        from kenning.sources.email import imap

        return imap.sync(root, target, progress=progress, folders=folders,
                         password_env=password_env)
    from kenning.sources.email import files

    path = Path(target).expanduser()
    if not path.exists():
        raise SyncError(f"{target}: no such file or folder")
    owner = Owner.load(root)
    report = SyncReport(CONNECTOR)
    with SourceStore(root, CONNECTOR) as store:  # which removes a killed sync's temp files
        if store.load_warning:
            report.warn(str(store.state_path), store.load_warning)
        messages, total = files.read(path, report)
        ingest(store, messages, report, owner=owner, progress=progress, total=total)
        if not report.items_read:
            report.warn(str(path), "no email messages found")
    return report


class _Ingest:
    def __init__(self, store: SourceStore, report: SyncReport, owner: Owner) -> None:
        from kenning.sources.email.threads import Threader

        self.store, self.report, self.owner = store, report, owner
        cursors = store.cursors
        self.seen: dict[str, str] = cursors.setdefault("seen", {})
        self.hashes: dict[str, str] = cursors.setdefault("hashes", {})
        # State written before content keys existed: the messages it has seen are read once
        # more (not written) so that their copies in other folders are recognised.
        self.backfill = "contents" not in cursors and bool(self.seen)
        self.contents: dict[str, str] = cursors.setdefault("contents", {})
        siblings = _sibling_states(store)
        self.sibling_contents: dict[str, str] = {
            k: v for s in siblings for k, v in ((s.get("cursors") or {}).get("contents")
                                                or {}).items()}
        self.sibling_paths = {sid: rec["path"] for s in siblings
                              for sid, rec in (s.get("sources") or {}).items()
                              if isinstance(rec, dict) and rec.get("path")}
        self.threader = Threader(cursors, [s.get("cursors") or {} for s in siblings])
        self.written = 0
        self.skipped: set[str] = set()
        self.touched: set[str] = set()
        self.replaced: set[str] = set()  # threads where a truncated copy was replaced

    def run(self, messages: Iterable[RawMessage], progress: Progress | None,
            total: int | None) -> None:
        from kenning.sources.email.message import parse

        batch: list[Any] = []
        pending_digests: set[str] = set()
        for raw in messages:
            self.report.items_read += 1
            if progress is not None:
                progress(self.report.items_read, total, raw.where)
            digest = hashlib.sha1(raw.data.rstrip(b"\r\n")).hexdigest()
            if digest in self.seen or digest in pending_digests:
                sid = self.threader.lookup(self.seen.get(digest, ""))
                if sid:
                    self.skipped.add(sid)
                if self.backfill and digest in self.seen:
                    self._note_content(raw, digest)
                continue
            pending_digests.add(digest)
            try:
                parsed = parse(raw.data, raw.where, folder=raw.folder, labels=raw.labels,
                               internal_date=raw.internal_date, digest=digest)
            except Exception as exc:  # parse() is lenient; this is the last line of defence
                self.report.warn(raw.where, f"skipped: {type(exc).__name__}: {exc}")
                continue
            for warning in parsed.warnings:
                self.report.warn(raw.where, warning)
            if parsed.truncated:
                self.report.warn(raw.where, "the MIME structure ends without its closing "
                                            "boundary (truncated?); what is there was kept")
            batch.append(parsed)
            if len(batch) >= BATCH:
                self._write(batch)
                batch, pending_digests = [], set()
        if batch:
            self._write(batch)
        # Threads whose messages were all seen before count as unchanged.
        self.report.unchanged += len(self.skipped - self.touched)
        self.store.save()

    # -- one batch -------------------------------------------------------------------------

    def _write(self, batch: list[Any]) -> None:
        from kenning.sources.email.render import entry_text, merge_fields, thread_title

        unique, copies, replaced = self._dedupe(batch)
        for m in copies:
            if m.copy_of and m.message_id:
                self.threader.copy(m.message_id, m.copy_of)
        assignments = self.threader.assign(unique)
        copies_by_sid: dict[str, list[Any]] = {}
        for m in copies:
            sid = self.threader.lookup(m.copy_of or m.key)
            if sid:
                copies_by_sid.setdefault(sid, []).append(m)
        self.report.copies += len(copies) - replaced
        for sid in copies_by_sid:
            if sid not in assignments and (self.store.known(sid) or sid in self.sibling_paths):
                from kenning.sources.email.threads import Assignment

                assignments[sid] = Assignment(sid)
        for sid, assignment in assignments.items():
            messages = assignment.messages
            old, stem = self._existing(sid)
            subject = str(old.get("subject") or thread_title(messages))
            entries = [Entry(m.key, entry_text(m, subject, assignment.notes.get(id(m))))
                       for m in messages]
            fields = merge_fields(old, messages, [m.key for m in messages], sid, self.owner)
            extra = copies_by_sid.get(sid, [])
            if extra:
                fields["folders"] = sorted({*fields["folders"], *(m.folder for m in extra
                                                                  if m.folder)})
                fields["labels"] = sorted({*fields["labels"], *(lb for m in extra
                                                                for lb in m.labels)})
            # The ids of copies kept once (the same message under another Message-ID or none).
            copy_ids = list(dict.fromkeys([*(old.get("copy_ids") or []), *(
                m.key for m in extra if m.copy_of and m.key not in fields["message_ids"])]))
            if copy_ids:
                fields["copy_ids"] = copy_ids
            if assignment.absorbed:
                fields["merged_threads"] = sorted({*(old.get("merged_threads") or []),
                                                   *assignment.absorbed})
            first = fields.get("first_date")
            title = str(old.get("title") or subject)
            date = str(old.get("date") or (first[:10] if first else "")) or None
            origins = list(dict.fromkeys(m.where for m in messages))
            doc = SourceDoc("email", sid, title, date, entries, fields, name=stem,
                            complete=False,  # a batch holds a thread's new messages only
                            origin=", ".join(origins[:3]) + (" …" if len(origins) > 3 else ""))
            if not messages and not extra and not assignment.absorbed:
                continue
            counts = self.report.appended, self.report.unchanged
            self.store.put(doc, self.report)
            if sid in self.replaced:
                # The replacement already counted this file as updated.
                self.report.appended, self.report.unchanged = counts
            self.touched.add(sid)
            for m in [*messages, *extra]:
                self.seen[m.digest] = m.copy_of or m.key
            for m in messages:
                self.hashes[m.key] = m.content_id[:16]
                if m.copy_key:
                    self.contents.setdefault(m.copy_key, m.key)
            self.threader.commit(sid, messages)
            for m in extra:
                if m.copy_of and m.message_id:
                    # Replies may quote the copy's own id: they belong to this thread too.
                    self.threader.alias(m.message_id, sid)
            for other in assignment.absorbed:
                self._mark_continued(other, sid)
            self.written += 1
            if self.written % SAVE_EVERY == 0:
                self.store.save()
        for m in copies:
            self.seen.setdefault(m.digest, m.copy_of or m.key)

    def _dedupe(self, batch: list[Any]) -> tuple[list[Any], list[Any], int]:
        """Copies of one message are kept once: the same Message-ID with the same content, or
        — under another Message-ID or none — the same content key (date, sender, recipients,
        subject, text, attachments). A truncated copy (its text a prefix of the other's) is a
        copy too: the complete one replaces it in the thread file (counted in the third
        value). A different message reusing an id gets its own key and a warning."""
        from kenning.sources.email.render import header_line

        unique, copies = [], []
        replaced = 0
        in_batch: dict[str, Any] = {}
        by_content: dict[str, str] = {}
        # Of copies met together, one with a Message-ID is the one kept (its id names the thread).
        for m in sorted(batch, key=lambda m: m.message_id is None):
            content = m.content_id[:16]
            known = self.hashes.get(m.key)
            first = in_batch.get(m.key)
            if known is None and first is None:
                key = m.copy_key
                original = (by_content.get(key) or self.contents.get(key)
                            or self.sibling_contents.get(key)) if key else None
                if original is not None and original != m.key:
                    m.copy_of = original
                    copies.append(m)
                    continue
                in_batch[m.key] = m
                if key:
                    by_content.setdefault(key, m.key)
                unique.append(m)
                continue
            if content in (known, first.content_id[:16] if first else None):
                copies.append(m)
                continue
            relation = _truncation_of(first.text, m.text) if first is not None and \
                header_line(first) == header_line(m) else None
            if first is not None and relation is not None:
                if relation == "second":
                    copies.append(m)  # the one met first is whole
                else:
                    unique[unique.index(first)] = m
                    in_batch[m.key] = m
                    copies.append(first)
                    self.report.warn(m.where, f"a truncated copy of <{m.key}> "
                                              f"({first.where}) was replaced by this one")
                continue
            if first is None:
                outcome = self._replace_truncated(m)
                if outcome is not None:
                    copies.append(m)
                    replaced += outcome
                    continue
            original = m.key
            m.alt_key = f"{original}~{content[:8]}"
            if m.alt_key in self.hashes or m.alt_key in in_batch:
                copies.append(m)
                continue
            m.references = [*m.references, original]
            self.report.warn(m.where, f"duplicate Message-ID <{original}> with different "
                                      f"content; kept both (this one as {m.alt_key})")
            in_batch[m.alt_key] = m
            unique.append(m)
        return unique, copies, replaced

    def _replace_truncated(self, m: Any) -> int | None:
        """When the message written under ``m``'s id is a truncated copy of ``m``, replace its
        entry with ``m``'s (1); when ``m`` is a truncated copy of it, 0; else None."""
        from kenning.sources.email.render import entry_text, header_line

        sid = self.threader.lookup(m.key)
        if not sid or not self.store.known(sid):
            return None
        path = self.store.root / self.store.known(sid)["path"]
        try:
            body = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        subject = str(self.store.existing_fields(sid).get("subject") or m.subject)
        new = entry_text(m, subject)
        for old in _entry_blocks(body, header_line(m)):
            relation = _truncation_of(_entry_words(old), _entry_words(new))
            if relation == "second":
                return 0  # what is written is whole; this copy is cut
            if relation == "first":
                rel = self.store.replace_entry(sid, old, new, self.report)
                if rel is None:
                    return None
                self.replaced.add(sid)
                self.hashes[m.key] = m.content_id[:16]
                self.report.warn(m.where, f"replaced the truncated copy of <{m.key}> written "
                                          f"before in {rel}")
                return 1
        return None

    def _note_content(self, raw: RawMessage, digest: str) -> None:
        from kenning.sources.email.message import parse

        try:
            key = parse(raw.data, raw.where, digest=digest).copy_key
        except Exception:  # parse() is lenient; a message it cannot read has no key
            return
        if key:
            self.contents.setdefault(key, self.seen[digest])

    def _existing(self, sid: str) -> tuple[dict[str, Any], str | None]:
        """The thread file's current frontmatter, and its stem when another connector wrote
        it (so this one appends to the same file)."""
        if self.store.known(sid):
            return self.store.existing_fields(sid), None
        rel = self.sibling_paths.get(sid)
        if not rel:
            return {}, None
        path = self.store.root / rel
        try:
            parsed = frontmatter.read(path.read_text(encoding="utf-8"))
        except OSError:
            return {}, None
        if str(parsed.data.get("source_id")) != sid:
            return {}, None
        return frontmatter.to_plain(parsed.data), Path(rel).stem

    def _mark_continued(self, other: str, into: str) -> None:
        if not self.store.known(other):
            return
        old = self.store.existing_fields(other)
        if not old or old.get("continued_in") == into:
            return
        fields = {k: v for k, v in old.items()
                  if k not in ("type", "kind", "title", "date", "connector", "source_id",
                               "fetched", "content_hash")}
        fields["continued_in"] = into
        doc = SourceDoc("email", other, str(old.get("title") or other),
                        str(old["date"]) if old.get("date") else None, [], fields,
                        complete=False)
        self.store.put(doc, SyncReport(self.report.connector))


def _entry_blocks(body: str, header: str) -> list[str]:
    """The entries of a thread file that start with ``header`` (an entry runs to the next
    ``## `` line: a body line never starts with ``#``, see :func:`render.safe_body`)."""
    lines = body.split("\n")
    blocks = []
    for i, line in enumerate(lines):
        if line != header:
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("## ")),
                   len(lines))
        blocks.append("\n".join(lines[i:end]).rstrip("\n"))
    return blocks


def _entry_words(text: str) -> str:
    """An entry's words, without its header line and the notes the renderer adds."""
    kept = [line for line in text.split("\n")[1:]
            if not line.startswith(("_(", "Attachments: "))]
    return " ".join(kept).replace("Signature: ", "").replace(" · ", " ")


def _truncation_of(first: str, second: str) -> str | None:
    """Which of two texts of one message is a truncated copy of the other ("first" or
    "second"), or None: its words, but for a last word that may be cut, begin the other's."""
    a, b = first.split(), second.split()
    if a == b:
        return None
    short, long_, which = (a, b, "first") if len(a) < len(b) else (b, a, "second")
    if len(short) == len(long_):
        return None
    head = short[:-1]
    if long_[: len(head)] != head or (short and not long_[len(head)].startswith(short[-1])):
        return None
    return which


def _sibling_states(store: SourceStore) -> list[dict[str, Any]]:
    return read_states(store.root, [n for n in THREAD_CONNECTORS if n != store.connector])
