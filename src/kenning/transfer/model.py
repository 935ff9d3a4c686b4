"""What an importer reads out of another tool's memory, before anything is written.

Every importer (``kenning.transfer.<kind>``) turns its input into one :class:`Imported`: the
entities with their facts, timelines and decisions, documents kept whole (sessions, daily
logs), what it skipped and why, and the errors that stop the import. The plan
(:mod:`kenning.transfer.plan`) then decides, against the vault as it is, what becomes a new
page, what merges into an existing one and what is already there; nothing is written until the
whole input has been read without an error.

Every item carries an :class:`Origin` — the input file, its line, the tool's own id and date —
which becomes its citation in the vault and its key for idempotency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Origin:
    """Where one item came from.

    ``file`` is relative to the import's PATH (``memory.jsonl``, ``notes/Coffee.md``); ``line``
    is 1-based, the line the item starts on; ``id`` is the source tool's own identifier when it
    has one (a mem0 memory id, a basic-memory permalink, a RAWThink entity name + observation
    index); ``date`` is the item's own date in ISO form (``2025-03-01`` or
    ``2025-03-01T09:30:00``) when the tool recorded one.
    """

    file: str
    line: int | None = None
    id: str | None = None
    date: str | None = None

    def key(self) -> str:
        """The identity of the item across imports: the tool's id when it has one, else the
        file and line."""
        return f"{self.file}#{self.id}" if self.id else f"{self.file}#L{self.line}"


@dataclass
class ImportedFact:
    """One observation or relation, as a line of the entity's ``## Facts``.

    A relation fact has ``relation`` (a Kenning relation type, already folded with
    ``kenning.vocabulary.relation``) and ``target`` (the *name* of the entity it points to, as
    the input writes it; the plan turns it into a link, a dangling one when the input has no
    such entity, which the report counts). ``recorded`` is when the tool learned it (belief
    time); ``valid_from``/``valid_to`` when it was true in the world. ``superseded_by`` is the
    ``Origin.key()`` of the fact (on the same entity) that replaced this one."""

    text: str
    origin: Origin
    relation: str | None = None
    target: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    recorded: str | None = None
    expired: str | None = None
    status: str = "active"          # active | superseded | invalidated
    superseded_by: str | None = None
    epistemic: str | None = None    # assertion | hypothesis | speculation | unknown
    confidence: float | None = None


@dataclass
class ImportedEvent:
    """One dated line of the entity's ``## Timeline``."""

    date: str                       # YYYY, YYYY-MM, YYYY-MM-DD or "YYYY-MM-DD HH:MM"
    text: str
    origin: Origin


@dataclass
class ImportedDecision:
    """A decision: what was decided, because, what was rejected (a line of ``## Decisions``)."""

    decided: str
    origin: Origin
    because: str | None = None
    rejected: list[str] = field(default_factory=list)
    date: str | None = None
    who: str | None = None          # a name; the plan links it when the page exists
    about: list[str] = field(default_factory=list)   # names of topics/projects
    superseded_by: str | None = None  # Origin.key() of the decision that replaced it


#: Frontmatter keys Kenning writes itself on an imported page: an importer's own key of that name
#: is not kept under it (the plan skips it; an importer that keeps everything renames it).
KENNING_KEYS = frozenset({"type", "domain", "aliases", "created", "updated", "status", "decided",
                          "because", "rejected", "title"})


@dataclass
class ImportedEntity:
    """An entity page to create, or to merge into the page of that name.

    ``type`` is a Kenning entity type (``kenning.vocabulary.ENTITY_TYPES``) — the importer maps
    the tool's own type and records the mapping it used in ``Imported.mapped``; an input type
    with no mapping becomes ``thing`` and is reported, never dropped. ``source_type`` is the
    tool's own word, kept in the page's frontmatter (``imported_type``). ``body`` is text of
    the source note to keep verbatim under the page's Kenning parts (a basic-memory note's
    prose); ``frontmatter`` holds the tool's other keys, kept as they were (``permalink``,
    ``tags``…) except those Kenning owns."""

    name: str
    type: str
    origin: Origin
    source_type: str | None = None
    domain: str | None = None
    epistemic: str | None = None
    aliases: list[str] = field(default_factory=list)
    summary: str | None = None
    facts: list[ImportedFact] = field(default_factory=list)
    timeline: list[ImportedEvent] = field(default_factory=list)
    decisions: list[ImportedDecision] = field(default_factory=list)
    body: str | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    created: str | None = None      # the tool's creation date of the entity, ISO


@dataclass
class ImportedDocument:
    """A document that becomes a page as it is: a session log, a handoff, a daily log.

    ``path`` is the vault path it should have (``sessions/2025-03-01 Refactor.md``,
    ``memory/2025-03-01.md``); ``text`` its whole Markdown. An existing file there is never
    overwritten: the plan writes beside it (``… 2.md``) unless its text is already the same,
    or it merges: a daily log gets the Retain lines it lacks and the rest once, and
    ``memory.md`` still as ``kenning init`` wrote it gets the imported core memory appended
    (``_Plan._merged``; the report's ``pages.documents_merged``)."""

    path: str
    text: str
    origin: Origin


@dataclass(frozen=True)
class Skipped:
    """Something of the input that was not imported, and why (it is in the report)."""

    origin: Origin
    reason: str


@dataclass(frozen=True)
class InputProblem:
    """A problem that stops the import: nothing is written. ``str()`` is one line naming the
    file and line."""

    origin: Origin
    message: str

    def __str__(self) -> str:
        where = self.origin.file + (f":{self.origin.line}" if self.origin.line else "")
        return f"{where}: {self.message}"


@dataclass
class Imported:
    """Everything one importer read from PATH."""

    kind: str                       # rawthink | basic-memory | gbrain | openclaw | mem0
    root: Path                      # the PATH given (a folder, or the file itself)
    files: list[str] = field(default_factory=list)   # input files read, relative to root
    entities: list[ImportedEntity] = field(default_factory=list)
    documents: list[ImportedDocument] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    #: the vocabulary mapping used: ("type", "person") → "person", ("domain", "software") →
    #: "engineering", ("relation", "used_by") → "uses"; shown in the report
    mapped: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)   # anything else the report should say
