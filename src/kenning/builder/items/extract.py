"""Commitments, asks and decisions from one source file, deterministically.

``extract_items(path, text, owner, info)`` reads a rendered source (sources/email, meetings,
chats) as the units people wrote (:mod:`._units`: messages, turns, notes, quoted and forwarded
text left out), splits each into sentences that keep their file lines, and reads each sentence's
structure (:mod:`.cues`). Within the source it then applies fulfilment (a later delivery by the
same person whose words overlap the commitment closes it) and answers (an ask is answered when
its addressee writes a later message in the thread), and returns the source's deliveries and
replies so :func:`kenning.builder.items.settle.settle` can close items across sources.

Linear in the size of the source; never raises on content (a source it cannot read yields no
items and a note).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from kenning.builder.items import cues as cu
from kenning.builder.items._units import Parsed, Unit, parse
from kenning.builder.items.dates import resolve_due
from kenning.builder.items.model import (
    ASK,
    COMMITMENT,
    DECIDED,
    DECISION,
    DONE,
    Delivery,
    Item,
    Party,
    Reply,
    SourceItems,
    span,
)
from kenning.sources.owner import Owner

MAX_TEXT = 300           # characters of an item's text
MAX_ITEMS = 400          # per source (a pasted log is not a to-do list)
REPEAT_OVERLAP = 0.6     # Jaccard of content words: the same promise said again

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[(?P<x>[ xX])\]\s+")
# An action label with its owner by shape: "AI:", "Action Jonas:", "Owner Mei:", "Next step
# (Lars):", "Action on me:", "Assigned to Ana:".
_ACTION_LINE = re.compile(r"^\s*(?:[-*+•]\s+)?(?:\*\*)?(?:(?:so|ok|okay|right),?\s+)?"
                          r"(?:AI|A/I|Action(?: item)?|TODO|To-?do|Owner|Assignee|Assigned to|"
                          r"Next step|Follow-?up)"
                          r"(?:\*\*)?(?:\s+@?(?-i:[A-Z])[\w'’.-]+(?:\s+(?-i:[A-Z])[\w'’-]+)?|"
                          r"\s*\(@?(?-i:[A-Z])[\w'’.-]+(?:\s+(?-i:[A-Z])[\w'’-]+)?\)|"
                          r"\s+(?:on|for)\s+(?:me|us))?"
                          r"\s*[:—–](?:\*\*)?\s+\S", re.IGNORECASE)
_ACTION_WORDS = (r"(?:(?:open\s+)?action\s*(?:items?|points?)|next\s+steps|follow[- ]?ups?|"
                 r"to-?dos?|tasks|owners|assignments|actions|takeaways|deliverables|commitments|"
                 r"ais|assigned\s+tasks|who\s+does\s+what|owners?\s+(?:&|and)\s+tasks)"
                 r"(?:\s*\([^)]*\))?")
# A heading (Markdown, bold) or a line ending in a colon: "Action items:", "**Next steps**".
_ACTION_SECTION = re.compile(
    rf"^\s*(?:#{{1,6}}\s+{_ACTION_WORDS}\s*:?|(?:\*\*|__){_ACTION_WORDS}\s*:?\s*(?:\*\*|__)\s*:?|"
    rf"{_ACTION_WORDS}\s*:)\s*$", re.IGNORECASE)
_DECISION_SECTION = re.compile(r"^\s*(?:#{1,6}\s+|\*\*|__)?(?:key\s+)?decisions?(?:\s+made)?"
                               r"\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*$", re.IGNORECASE)
_OTHER_SECTION = re.compile(r"^\s*(?:#{1,6}\s+\S|\*\*[^*]{2,60}:?\*\*\s*:?\s*$|"
                            r"__[^_]{2,60}__\s*$|[A-Z][\w ]{2,40}:\s*$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9@])|;\s+(?=[A-Z]?[a-z]*"
                           r"\b)")
_ABBREV = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|No|vs|etc|e\.g|i\.e|Inc|Corp|Ltd|Co|"
                     r"approx|a\.m|p\.m|U\.S|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
                     r"|\b[A-Z])\.$")
_PROJECT = re.compile(r"\bProject ([A-Z][\w-]+(?: [A-Z][\w-]+)?)")
_TAG = re.compile(r"(?<![\w&#/])#([A-Za-z][\w-]{2,40})\b")
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")


def extract_items(path: str, text: str, owner: Owner, info: object | None = None) -> SourceItems:
    """Items, deliveries and replies of one source file (see the module doc)."""
    out = SourceItems(path)
    try:
        parsed = parse(path, text, owner)
    except Exception as exc:  # content never stops a build
        out.notes.append(f"{path}: could not be read for items ({type(exc).__name__}); none taken")
        return out
    bulk = parsed.bulk or bool(getattr(info, "bulk", False))
    if bulk:
        return out
    if parsed.kind not in ("email", "meeting", "chat"):
        return out
    _Extractor(path, parsed, out).run()
    return out


class _Extractor:
    def __init__(self, path: str, parsed: Parsed, out: SourceItems) -> None:
        self.path = path
        self.p = parsed
        self.out = out
        self.names = _names(parsed.people)
        self.by_name = _by_name(parsed.people)
        self.no_date_noted = False
        self.requested = False
        # A chat with an assistant (an agent session): what the person asks of it is no item.
        self.agent_session = parsed.kind == "chat" and any(u.kind == "machine"
                                                           for u in parsed.units)
        # (line, message, due, due_text) of the last named-subject commitment with a date, so
        # "Priya ships X this week; Diego adds Y" gives Diego the same week.
        self.last_due: tuple[int, str | None, str | None, str | None] | None = None

    def run(self) -> None:
        p = self.p
        if p.no_speakers:
            self.out.notes.append(f"{self.path}: the transcript names no speakers; its "
                                  "commitments and asks are kept without who")
        for unit in p.units:
            if unit.kind == "machine":
                continue
            if unit.kind in ("message", "chat") and unit.who is not None:
                self.out.replies.append(Reply(unit.who, self.path, unit.line,
                                              _iso(unit.date), self.path, unit.message))
            own = [t for _, t in unit.lines if t.strip()]
            if unit.kind == "message" and not own and unit.quoted:
                if not unit.forwarded:  # a bare forward is common and says nothing new
                    self.out.notes.append(f"{self.path}:{unit.line}: the message is all quoted "
                                          "text; no items taken from it")
                continue
            self._unit(unit)
            # A turn that asks for something ("Can someone send the deck?", "Who can take
            # the pricing sheet?") lets the next speaker's "I'll take that one" promise it.
            self.requested = unit.kind == "turn" and bool(re.search(
                r"(?i)\b(?:can|could|would)\s+(?:someone|somebody|anyone|anybody|you|one\s+of\s+you)\b|"
                r"\bwho\s+(?:can|could|will|wants\s+to)\b|\b(?:someone|somebody)\s+(?:needs|has)\s+to\b|"
                r"\bany\s+takers\b|\bvolunteers?\b", " ".join(t for _, t in unit.lines)))
            if len(self.out.items) >= MAX_ITEMS:
                self.out.notes.append(f"{self.path}: more than {MAX_ITEMS} items; the rest "
                                      "were not read")
                break
        self._close()

    # -- one unit --------------------------------------------------------------------------

    def _unit(self, unit: Unit) -> None:
        section: str | None = None
        last_decision: int | None = None
        for kind, lines, sentence, flags in _sentences(unit):
            if kind == "section":
                section = flags
                continue
            in_actions = section == "actions" and flags.get("bullet", False)
            in_decisions = section == "decisions" and flags.get("bullet", False)
            checkbox = flags.get("checkbox")
            if checkbox is not None or flags.get("action"):
                in_actions = True
            alts = cu.rejected_line(sentence)
            if alts is None and last_decision is not None and \
                    self.out.items[last_decision].message == unit.message:
                alts = cu.rejected_sentence(sentence)
                why = cu.because_sentence(sentence)
                if why and not self.out.items[last_decision].because:
                    d = self.out.items[last_decision]
                    self.out.items[last_decision] = replace(d, because=why)
                    continue
            if alts is not None:
                if last_decision is not None:
                    d = self.out.items[last_decision]
                    # A parenthesis on a "Rejected:" line says why *that* was turned down:
                    # it is not the decision's reason.
                    self.out.items[last_decision] = replace(
                        d, rejected=tuple(dict.fromkeys([*d.rejected, *alts])))
                continue
            row = flags.get("row") if isinstance(flags, dict) else None
            if row is not None:
                head = [c.casefold() for c in row]
                if in_actions and not any(h in ("owner", "who", "task", "action", "due",
                                                "assignee", "item", "what", "when")
                                          for h in head):
                    owner = next((c for c in row if c.casefold() in self.names), None)
                    if owner is not None or len([c for c in row if c]) >= 2:
                        cue = cu.Cue("commitment", cu.clean(sentence), subject=owner)
                        self._cue(unit, cue, lines, False)
                continue
            if in_decisions:
                found = [cu.Cue("decision", cu.clean(sentence))]
                rd = cu.read(sentence)
                if rd and rd[0].kind == "decision":
                    found = rd[:1]
            else:
                found = cu.read(sentence, in_actions=in_actions, names=self.names,
                                spoken=unit.kind == "turn", after_request=self.requested)
            for cue in found:
                index = self._cue(unit, cue, lines, checkbox == "x")
                if cue.kind == DECISION and index is not None:
                    last_decision = index

    def _cue(self, unit: Unit, cue: cu.Cue, lines: tuple[int, int], checked: bool
             ) -> int | None:
        line, end = lines
        text = cue.text if len(cue.text) <= MAX_TEXT else cue.text[: MAX_TEXT - 1].rstrip() + "…"
        when = unit.date
        if cue.kind == "delivery":
            if unit.who is not None:
                self.out.deliveries.append(Delivery(unit.who, unit.to + unit.cc, text,
                                                    self.path, line, end, _iso(when), self.path,
                                                    unit.message))
            return None
        if cue.kind == ASK and self.agent_session and not cue.vocative:
            return None
        who = unit.who
        note = None
        if cue.subject:
            who = self._person(cue.subject)
        elif unit.kind == "notes":
            who = None
        if who is None and cue.kind != DECISION:
            if self.p.no_speakers or (unit.kind == "turn"):
                note = "no speaker label: who is unknown"
            elif unit.kind == "notes":
                note = "action item names no owner"
        to: tuple[Party, ...] = ()
        if cue.kind in (COMMITMENT, ASK):
            if cue.vocative:
                addressed = self._person(cue.vocative)
                to = (addressed,) if addressed is not None else ()
            if not to:
                to = tuple(p for p in (unit.to or unit.cc)
                           if who is None or p.key != who.key)
        due = due_text = None
        if cue.kind in (COMMITMENT, ASK):
            due, due_text = resolve_due(text, when)
            if due_text and when is None:
                note = _join(note, f"'{due_text}' left unresolved: the message has no date")
                if not self.no_date_noted:
                    self.no_date_noted = True
                    self.out.notes.append(f"{self.path}:{line}: no date on the message; "
                                          f"'{due_text}' left unresolved")
            elif due and when and due < when.isoformat():
                note = _join(note, f"due {due} is before the day it was written "
                                   f"({when.isoformat()})")
                self.out.notes.append(f"{self.path}:{line}: due date {due} ('{due_text}') is "
                                      f"before the message date {when.isoformat()}; kept")
        if cue.kind == COMMITMENT and cue.subject and not due_text and self.last_due \
                and self.last_due[0] == line and self.last_due[1] == unit.message:
            due, due_text = self.last_due[2], self.last_due[3]
        if cue.kind == COMMITMENT and cue.subject and due_text:
            self.last_due = (end, unit.message, due, due_text)
        if cue.kind == COMMITMENT and cue.needs_due and not due_text:
            return None
        about = tuple(dict.fromkeys(
            [re.sub(r"^Project\s+", "", a) for a in cue.about]
            + [m.group(1).strip() for m in _PROJECT.finditer(text)]
            + [m.group(1) for m in _TAG.finditer(text)]
            + [m.group(1).strip() for m in _WIKILINK.finditer(text)]))
        item = Item(
            kind=cue.kind, text=text, source=self.path, line=line, end=end,
            date=_iso(when), who=who, to=to, due=due, due_text=due_text,
            status=DECIDED if cue.kind == DECISION else (DONE if checked else "open"),
            closed_by=span(self.path, line, end) if checked else None,
            closed_on=_iso(when) if checked else None,
            because=cue.because, rejected=cue.rejected, about=about,
            message=unit.message, thread=self.path, note=_join(cue.note, note))
        if self._repeated(item):
            return None
        self.out.items.append(item)
        return len(self.out.items) - 1

    def _person(self, name: str) -> Party | None:
        key = name.casefold()
        found = self.by_name.get(key) or self.by_name.get(key.split()[0])
        return found or Party(name, None, False)

    def _repeated(self, item: Item) -> bool:
        mine = cu.words(item.text)
        if not mine:
            return False
        for other in reversed(self.out.items[-60:]):
            if other.kind != item.kind or not _same(other.who, item.who):
                continue
            theirs = cu.words(other.text)
            if theirs and len(mine & theirs) / len(mine | theirs) >= REPEAT_OVERLAP:
                return True
        return False

    # -- closing within the source ---------------------------------------------------------

    def _close(self) -> None:
        items = self.out.items
        for d in self.out.deliveries:
            best = best_match(items, d)
            if best is not None:
                items[best] = items[best].done(d.citation, d.date)
        for r in self.out.replies:
            for i, item in enumerate(items):
                if item.kind == ASK and item.status == "open" and item.line < r.line \
                        and any(_same(p, r.who) for p in item.to) \
                        and not _same(item.who, r.who):
                    items[i] = item.done(r.citation, r.date)


def best_match(items: list[Item], d: Delivery, *, same_source: bool = True) -> int | None:
    """The open commitment a delivery closes: the same person, earlier, and their words
    overlap (an "as promised" / "Sent." delivery with no overlap closes the person's latest
    open commitment in the same thread)."""
    dw = cu.lemmas(d.text)
    cue = bool(re.search(r"(?i)\bas promised\b|^(?:(?:all|just|already|now|ok)\s+)*(?:done|sent|"
                         r"shipped|submitted|uploaded|shared|posted|forwarded|delivered|"
                         r"emailed|took\s+care)\b|^here(?:['’]s| is| are) (?:it|that|those|them)"
                         r"\b|in\s+your\s+inbox|you\s+should\s+(?:now\s+)?have\s+it|"
                         r"^(?:that|it)(?:['’]s|\s+is)\s+(?:now\s+)?done|^all\s+sorted",
                         d.text))
    best, best_score = None, 0.0
    latest = None
    for i, item in enumerate(items):
        if item.kind != COMMITMENT or item.status != "open" or not _same(item.who, d.who):
            continue
        if item.source == d.source and item.line >= d.line:
            continue
        if item.date and d.date and d.date < item.date:
            continue
        if item.source == d.source and item.message is not None and item.message == d.message:
            continue  # a promise and its delivery in one message is a recap, not fulfilment
        iw = cu.lemmas(item.text)
        shared = len(iw & dw)
        score = shared / max(1, min(len(iw), len(dw)))
        if shared >= 1 and (score > best_score):
            best, best_score = i, score
        if item.thread == d.thread:
            latest = i
    if best is not None and (best_score >= 0.2 or cue):
        return best
    if cue and latest is not None and same_source:
        return latest
    return None


def _same(a: Party | None, b: Party | None) -> bool:
    if a is None or b is None:
        return False
    if a.owner and b.owner:
        return True
    if a.email and b.email:
        return a.email == b.email
    if a.name and b.name:
        x, y = a.name.casefold(), b.name.casefold()
        return x == y or (" " not in x and y.split()[0] == x) or (" " not in y and
                                                                  x.split()[0] == y)
    return False


def _join(a: str | None, b: str | None) -> str | None:
    return "; ".join(x for x in (a, b) if x) or None


def _iso(d: date | None) -> str | None:
    return d.isoformat() if d else None


def _first_name(name: str) -> str | None:
    """The given name a text may call someone by ("Priya" for Priya Raman); None for labels
    such as "The Chair", "Hon. Bill Morneau" or "Project Manager"."""
    from kenning.builder import names as nm

    words = name.split()
    if len(words) < 2 or not words[0][:1].isupper() or not words[1][:1].isupper() \
            or "." in words[0]:
        return None
    first = words[0].casefold()
    if len(first) < 2 or first in _TITLES:
        return None
    return first if nm.fold(first) in nm.given_names() or first.isalpha() else None


# Words that open a label, not a name ("The Chair", "Project Manager", "Hon Bill Morneau").
_TITLES = frozenset("""the a an mr mrs ms miss mx dr hon honourable honorable right madam mister
sir dame lord lady prof professor project user industrial marketing grad phd postdoc speaker
chair vice deputy senior junior chief head team product sales account customer support
engineering design""".split())


def _names(people: list[Party]) -> frozenset[str]:
    out: set[str] = set()
    for p in people:
        if p.name:
            out.add(p.name.casefold())
            first = _first_name(p.name)
            if first:
                out.add(first)
    return frozenset(out)


def _by_name(people: list[Party]) -> dict[str, Party]:
    out: dict[str, Party] = {}
    for p in people:
        if p.name:
            out.setdefault(p.name.casefold(), p)
            first = _first_name(p.name)
            if first:
                out.setdefault(first, p)
    return out


def _sentences(unit: Unit):  # type: ignore[no-untyped-def]
    """Yield ("section", name, …) for section headings and ("sentence", (line, end), text,
    flags) for every sentence of the unit, in order."""
    blocks: list[tuple[list[tuple[int, str]], dict]] = []
    current: list[tuple[int, str]] = []
    flags: dict = {}

    def flush() -> None:
        nonlocal current, flags
        if current:
            blocks.append((current, flags))
        current, flags = [], {}

    for n, raw in unit.lines:
        if not raw.strip():
            flush()
            continue
        stripped = raw.strip()
        if _ACTION_SECTION.match(stripped):
            flush()
            blocks.append(([], {"section": "actions"}))
            continue
        if _DECISION_SECTION.match(stripped):
            flush()
            blocks.append(([], {"section": "decisions"}))
            continue
        if stripped.startswith("|") and stripped.endswith("|"):
            # A table row: one block of its own ("| Jonas | send the deck | Friday |"); the
            # header and separator rows are no items.
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            blocks.append(([(n, " — ".join(c for c in cells if c))],
                           {"bullet": True, "checkbox": None, "action": False, "row": cells}))
            continue
        bullet = bool(_BULLET.match(raw)) or bool(_CHECKBOX.match(raw))
        action = bool(_ACTION_LINE.match(raw))
        if bullet or action or (unit.kind == "notes" and _OTHER_SECTION.match(stripped)):
            flush()
            if not bullet and not action and _OTHER_SECTION.match(stripped):
                blocks.append(([], {"section": "other"}))
                if re.sub(r"[*_]", "", stripped).strip().endswith(":") \
                        or re.match(r"^#{1,6}\s", stripped):
                    continue
                # "**Overview:** text": a heading with its text
            cb = _CHECKBOX.match(raw)
            flags = {"bullet": bullet, "checkbox": cb.group("x").lower() if cb else None,
                     "action": action}
        elif not current:
            flags = {"bullet": False, "checkbox": None, "action": bool(_ACTION_LINE.match(raw))}
        current.append((n, raw))
    flush()
    for lines, fl in blocks:
        if "section" in fl:
            yield "section", (0, 0), "", fl["section"]
            continue
        # Join the block's lines, keeping where each starts.
        text = ""
        starts: list[tuple[int, int]] = []
        for n, raw in lines:
            piece = raw.strip()
            if text:
                text += " "
            starts.append((len(text), n))
            text += piece
        if fl.get("checkbox") is not None or fl.get("action") or fl.get("row"):
            yield "sentence", (lines[0][0], lines[-1][0]), text, fl
            continue
        pos = 0
        for m in _SENTENCE_END.finditer(text):
            if _ABBREV.search(text[pos: m.start()]):
                continue
            piece = text[pos: m.start()]
            if piece.strip():
                yield "sentence", _span(starts, pos, m.start()), piece, fl
            pos = m.end()
        if text[pos:].strip():
            yield "sentence", _span(starts, pos, len(text)), text[pos:], fl


def _span(starts: list[tuple[int, int]], a: int, b: int) -> tuple[int, int]:
    first = last = starts[0][1]
    for offset, n in starts:
        if offset <= a:
            first = n
        if offset < b:
            last = n
    return first, last
