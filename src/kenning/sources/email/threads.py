"""Threading: which thread (source id) each message belongs to.

1. Headers: a message joins the thread of any known id among its Message-ID, References and
   In-Reply-To (ids of messages not seen yet — "ghost" parents — are remembered too, so siblings
   meet under them).
2. Fallback, for a message with no References/In-Reply-To and a reply or forward subject
   ("Re:", "Fwd:", "AW:" …): the latest thread with the same normalised subject that shares at
   least two participants (or the sender) and whose last message is at most 90 days older.
3. Otherwise a new thread. Its id is derived from the messages only: the first id in References
   (the root), else In-Reply-To, else the message's own Message-ID (else a hash of its bytes) —
   so the same thread read from an mbox and from IMAP gets the same id.

A thread's id never changes. When a message shows that two known threads are one, it is appended
to the thread created first, with a note linking the other; the other thread's later messages go
to the first too (``merged``), and its file is never rewritten except for a ``continued_in``
field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kenning.sources.email.message import Parsed, normalize_subject

WINDOW = timedelta(days=90)
MAX_PEOPLE = 60


@dataclass
class Assignment:
    sid: str
    messages: list[Parsed] = field(default_factory=list)
    notes: dict[int, list[str]] = field(default_factory=dict)  # id(message) → notes
    absorbed: list[str] = field(default_factory=list)  # thread ids merged into this one


class Threader:
    """Assigns messages to thread ids against the persisted index (``cursors``)."""

    def __init__(self, cursors: dict[str, Any], siblings: list[dict[str, Any]]) -> None:
        self.ids: dict[str, str] = cursors.setdefault("ids", {})
        self.threads: dict[str, dict[str, Any]] = cursors.setdefault("threads", {})
        self.merged: dict[str, str] = cursors.setdefault("merged", {})
        self.order: dict[str, int] = {}
        self.sibling_ids: dict[str, str] = {}
        for cursors_other in siblings:
            for key, value in (cursors_other.get("ids") or {}).items():
                self.sibling_ids.setdefault(key, value)
            for key, value in (cursors_other.get("merged") or {}).items():
                self.merged.setdefault(key, value)
        # A batch's new ids, committed into the persistent index only once written.
        self.pending_ids: dict[str, str] = {}
        # Ids of copies kept once (another Message-ID of the same message) → the kept one's key.
        self.same: dict[str, str] = {}
        self.pending_threads: dict[str, dict[str, Any]] = {}
        self.by_subject: dict[str, list[str]] = {}
        for sid, info in self.threads.items():
            self.by_subject.setdefault(str(info.get("subject") or ""), []).append(sid)

    def find(self, sid: str) -> str:
        seen = set()
        while sid in self.merged and sid not in seen:
            seen.add(sid)
            sid = self.merged[sid]
        return sid

    def lookup(self, mid: str) -> str | None:
        mid = self.same.get(mid, mid)
        sid = self.pending_ids.get(mid) or self.ids.get(mid) or self.sibling_ids.get(mid)
        return self.find(sid) if sid else None

    def _info(self, sid: str) -> dict[str, Any] | None:
        return self.pending_threads.get(sid) or self.threads.get(sid)

    def assign(self, batch: list[Parsed]) -> dict[str, Assignment]:
        """Group ``batch`` by thread id (in date order); remember the ids as pending."""
        out: dict[str, Assignment] = {}
        ordered = sorted(enumerate(batch), key=lambda im: (
            im[1].date.timestamp() if im[1].date else float("inf"), im[0]))
        for _, m in ordered:
            ids = [m.key, *m.references]
            found = list(dict.fromkeys(s for s in (self.lookup(i) for i in ids) if s))
            notes: list[str] = []
            if not found and not m.references:
                match = self._by_subject(m)
                if match:
                    found = [match]
            if not found:
                sid = m.references[0] if m.references else m.key
                sid = self.find(self.same.get(sid, sid))
            else:
                found.sort(key=lambda s: self._rank(s))
                sid = found[0]
                for other in found[1:]:
                    self.merged[other] = sid
                    notes.append(f"This message joins this thread with thread {other}")
                    out.setdefault(sid, Assignment(sid)).absorbed.append(other)
            for i in ids:
                if self.lookup(i) is None:
                    self.pending_ids[i] = sid
            self._note_thread(sid, m)
            assignment = out.setdefault(sid, Assignment(sid))
            assignment.messages.append(m)
            if notes:
                assignment.notes[id(m)] = notes
        return out

    def _rank(self, sid: str) -> tuple[int, str]:
        info = self._info(sid)
        return (int(info.get("n", 1 << 30)) if info else 1 << 30, sid)

    def _note_thread(self, sid: str, m: Parsed) -> None:
        info = self._info(sid)
        if info is None:
            info = {"n": len(self.threads) + len(self.pending_threads),
                    "subject": normalize_subject(m.subject), "people": [], "last": None}
            self.by_subject.setdefault(info["subject"], []).append(sid)
        else:
            info = dict(info)
        people = list(info.get("people") or [])
        for p in m.people():
            ident = p.address or p.name
            if ident and ident not in people and len(people) < MAX_PEOPLE:
                people.append(ident)
        info["people"] = people
        if m.date and (not info.get("last") or m.date.isoformat() > str(info["last"])):
            info["last"] = m.date.isoformat()
        self.pending_threads[sid] = info

    def _by_subject(self, m: Parsed) -> str | None:
        if not m.is_reply:
            return None
        subject = normalize_subject(m.subject)
        if not subject:
            return None
        mine = {p.address or p.name for p in m.people()}
        sender = (m.sender.address or m.sender.name) if m.sender else None
        best: tuple[str, str] | None = None
        for sid in self.by_subject.get(subject, []):
            info = self._info(sid)
            if info is None or sid in self.merged:
                continue
            people = set(info.get("people") or [])
            if len(mine & people) < 2 and not (sender and sender in people):
                continue
            last = info.get("last")
            if last and m.date:
                try:
                    gap = m.date - datetime.fromisoformat(str(last))
                except (TypeError, ValueError):
                    gap = timedelta(0)
                if gap > WINDOW or gap < -WINDOW:
                    continue
            key = str(last or "")
            if best is None or key > best[1]:
                best = (sid, key)
        return best[0] if best else None

    def copy(self, mid: str, original: str) -> None:
        """``mid`` is another id of the message keyed ``original`` (a copy kept once): replies
        that name it join the original's thread."""
        self.same[mid] = original

    def alias(self, mid: str, sid: str) -> None:
        """Another id of a message already in thread ``sid`` (a copy's own Message-ID)."""
        if self.ids.get(mid) is None and self.sibling_ids.get(mid) is None:
            self.ids[mid] = sid

    def commit(self, sid: str, messages: list[Parsed]) -> None:
        """The thread's file is written: make its ids and info persistent."""
        for mid, target in list(self.pending_ids.items()):
            if self.find(target) == sid:
                self.ids[mid] = sid
                del self.pending_ids[mid]
        if sid in self.pending_threads:
            self.threads[sid] = self.pending_threads.pop(sid)
