"""What the item extractor produces and the build writes: :class:`Item` (a commitment, an ask
or a decision, cited to its source lines), :class:`Delivery` (a later line that delivers on a
commitment: "Here's the deck, as promised") and :class:`Reply` (a message in a thread, which
answers an ask addressed to its writer).

Parties are kept as the source names them (:class:`Party`: a display name and/or an address);
the build maps them to pages through the same resolution as every other mention.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

COMMITMENT = "commitment"
ASK = "ask"
DECISION = "decision"
KINDS = (COMMITMENT, ASK, DECISION)

OPEN = "open"
DONE = "done"          # a commitment delivered, an ask answered (or marked done by a person)
DECIDED = "decided"    # a decision's status
STATUSES = (OPEN, DONE, DECIDED)


@dataclass(frozen=True)
class Party:
    """Someone as a source names them: a display name, an address, or both."""

    name: str | None = None
    email: str | None = None      # lower-cased
    owner: bool = False           # the vault's owner ("me")

    @property
    def key(self) -> str:
        return self.email or (self.name or "").casefold()

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "email": self.email, "owner": self.owner}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Party:
        return cls(d.get("name"), d.get("email"), bool(d.get("owner")))


def span(source: str, line: int, end: int | None = None) -> str:
    """``path#Lstart-Lend`` (``path#Lstart`` for one line), the citation form used everywhere."""
    path = source[:-3] if source.endswith(".md") else source
    if end is None or end == line:
        return f"{path}#L{line}"
    return f"{path}#L{line}-L{end}"


@dataclass(frozen=True)
class Item:
    """One commitment, ask or decision, as a source states it."""

    kind: str                      # commitment | ask | decision
    text: str                      # what was promised / asked / decided, one line, as written
    source: str                    # vault path of the source (sources/email/….md)
    line: int                      # 1-based first file line of the statement
    end: int                       # last file line (== line for one line)
    date: str | None               # YYYY-MM-DD the message / meeting / chat turn was written
    who: Party | None              # who promised / asked / decided
    to: tuple[Party, ...] = ()     # to whom (the addressee(s); for a decision: empty)
    due: str | None = None         # YYYY-MM-DD, resolved against ``date``
    due_text: str | None = None    # the phrase the due date came from ("by Thursday")
    status: str = OPEN             # open | done (commitment, ask) · decided (decision)
    closed_by: str | None = None   # citation of the delivery / answer (path#Lx-Ly)
    closed_on: str | None = None   # YYYY-MM-DD of it
    because: str | None = None     # decisions: the reason when stated
    rejected: tuple[str, ...] = () # decisions: the alternatives turned down, when stated
    about: tuple[str, ...] = ()    # topic / project names the item is about, when named
    message: str | None = None     # message id (email) or turn number (meeting, chat)
    thread: str | None = None      # the thread / meeting / chat it belongs to (the source path
                                   # unless a connector splits a thread over several sources)
    origin: str = "rule"           # rule | model | person
    note: str | None = None        # why the extractor decided what it did (debugging, eval)

    @property
    def citation(self) -> str:
        return span(self.source, self.line, self.end)

    @property
    def id(self) -> str:
        """Stable across builds and re-renders: kind, source, who and the text's words."""
        words = " ".join("".join(c for c in self.text.casefold() if c.isalnum() or c.isspace())
                         .split())
        who = self.who.key if self.who else ""
        raw = f"{self.kind}\x00{self.thread or self.source}\x00{who}\x00{words}"
        return "i-" + hashlib.sha256(raw.encode()).hexdigest()[:8]

    def done(self, citation: str, on: str | None) -> Item:
        return replace(self, status=DONE, closed_by=citation, closed_on=on)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "text": self.text, "source": self.source,
            "line": self.line, "end": self.end, "citation": self.citation, "date": self.date,
            "who": self.who.as_dict() if self.who else None,
            "to": [p.as_dict() for p in self.to], "due": self.due, "due_text": self.due_text,
            "status": self.status, "closed_by": self.closed_by, "closed_on": self.closed_on,
            "because": self.because, "rejected": list(self.rejected), "about": list(self.about),
            "message": self.message, "thread": self.thread, "origin": self.origin,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Item:
        return cls(
            kind=d["kind"], text=d["text"], source=d["source"], line=int(d["line"]),
            end=int(d.get("end") or d["line"]), date=d.get("date"),
            who=Party.from_dict(d["who"]) if d.get("who") else None,
            to=tuple(Party.from_dict(p) for p in d.get("to") or ()),
            due=d.get("due"), due_text=d.get("due_text"), status=d.get("status") or OPEN,
            closed_by=d.get("closed_by"), closed_on=d.get("closed_on"),
            because=d.get("because"), rejected=tuple(d.get("rejected") or ()),
            about=tuple(d.get("about") or ()), message=d.get("message"),
            thread=d.get("thread"), origin=d.get("origin") or "rule", note=d.get("note"))


@dataclass(frozen=True)
class Delivery:
    """A line that delivers on an earlier commitment ("Here's the deck, as promised", "Sent.")."""

    who: Party
    to: tuple[Party, ...]
    text: str
    source: str
    line: int
    end: int
    date: str | None
    thread: str | None = None
    message: str | None = None

    @property
    def citation(self) -> str:
        return span(self.source, self.line, self.end)


@dataclass(frozen=True)
class Reply:
    """A message in a thread: it answers the open asks addressed to its writer before it."""

    who: Party
    source: str
    line: int
    date: str | None
    thread: str | None = None
    message: str | None = None

    @property
    def citation(self) -> str:
        return span(self.source, self.line)


@dataclass
class SourceItems:
    """Everything one source yields: items, deliveries, replies, and notes for the build report
    (one line each, naming the source: "sources/email/x.md: no Date header; 'Friday' left
    unresolved")."""

    source: str
    items: list[Item] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
