"""Where an item goes: its parties as pages (through the build's own resolution, the mention
log) and the pages and sections it is written to (docs/vault-format.md, "Where items live").

- A commitment or an ask goes on the person page of ``who`` — or, when ``who`` is the owner,
  on the page of each ``to`` person (at most :data:`MAX_TO_PAGES`) — under ``## Commitments``
  (commitments) or ``## Open items`` (asks).
- From a meeting, a commitment also goes to the meeting page's ``## Action items`` and a
  decision to its ``## Decisions``.
- A decision goes to the ``## Decisions`` of each existing topic or project page it is
  ``about``; an email or chat decision with no meeting and no such page goes to the project or
  topic page the build made from its subject, else to the decider's person page.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kenning.builder.items.model import ASK, COMMITMENT, DECISION, DONE, Item, Party
from kenning.builder.names import fold as _fold
from kenning.builder.pages import stem
from kenning.vault.page import ItemLine

MAX_TO_PAGES = 3
OWNER = "me"

SECTION = {COMMITMENT: "commitments", ASK: "open items", DECISION: "decisions"}
_PERSON = "person"
_CITES = re.compile(r"\[\[(sources/meetings/[^\[\]#|\n]+)(?:[#|][^\[\]\n]*)?\]\]")


def wikilink(path: str) -> str:
    return f"[[{stem(path)}]]"


class Parties:
    """A source's parties as pages, from the mention-log rows (source, line, text, email, page,
    kind, rule): the address or name a row resolved in that source is that row's page; an
    address resolved in any source is that page elsewhere too (the address book made it one
    person). The owner is :data:`OWNER`, never a page; someone with no page is a plain name.
    ``sources``: the sources whose names are looked up (None: all)."""

    def __init__(self, rows: Iterable[dict[str, Any]],
                 is_owner: Callable[[Party], bool] | None = None,
                 sources: set[str] | None = None) -> None:
        self.is_owner = is_owner or (lambda p: False)
        self.by_email: dict[tuple[str, str], str] = {}
        self.by_name: dict[tuple[str, str], str] = {}
        self.people: dict[str, set[str]] = defaultdict(set)
        emails: dict[str, Counter[str]] = defaultdict(Counter)
        self.owner_emails: set[str] = set()
        for r in rows:
            if r.get("kind") != _PERSON:
                continue
            source, page = str(r.get("source") or ""), r.get("page")
            owner = r.get("rule") == "owner"
            value = OWNER if owner else page
            if not value:
                continue
            email = (r.get("email") or "").lower()
            if email:
                self.by_email.setdefault((source, email), value)
                if owner:
                    self.owner_emails.add(email)
                else:
                    emails[email][value] += 1
            if sources is not None and source not in sources:
                continue  # names are looked up only in the sources that hold items
            text = _fold(str(r.get("text") or ""))
            if text:
                self.by_name.setdefault((source, text), value)
            if not owner:
                self.people[source].add(value)
        self.email_page = {e: c.most_common(1)[0][0] for e, c in emails.items()}

    def page(self, party: Party | None, source: str) -> str | None:
        """The party's page, :data:`OWNER`, or None (no page)."""
        if party is None:
            return None
        if party.owner or self.is_owner(party):
            return OWNER
        email = (party.email or "").lower()
        if email:
            if email in self.owner_emails:
                return OWNER
            hit = self.by_email.get((source, email)) or self.email_page.get(email)
            if hit:
                return hit
        name = _fold(party.name or "")
        if not name:
            return None
        hit = self.by_name.get((source, name))
        if hit:
            return hit
        # A name the source writes shorter than the page ("Priya: benchmark …"): the one
        # person page of this source whose title starts with it, or ends with it.
        words = name.split()
        fits = sorted(p for p in self.people.get(source, ()) if _fits(words, _fold(stem(p))))
        return fits[0] if len(fits) == 1 else None

    def render(self, party: Party | None, source: str) -> str | None:
        """``[[Page]]``, ``me`` or the party's name (its address when it has no name)."""
        if party is None:
            return None
        hit = self.page(party, source)
        if hit == OWNER:
            return OWNER
        if hit:
            return wikilink(hit)
        return " ".join((party.name or party.email or "").split()) or None


def _fits(words: list[str], title: str) -> bool:
    t = title.split()
    if not words or len(words) > len(t):
        return False
    return t[:len(words)] == words or t[-len(words):] == words


@dataclass
class Places:
    """What the build knows about the vault's pages for placing items."""

    parties: Parties
    meeting_pages: dict[str, str]        # meeting source → its page
    topics: Callable[[], dict[str, str]]  # folded name or alias → topic/project page (unique)
    subject_pages: dict[str, list[str]]  # source → project/topic pages made from its subject
    _topics: dict[str, str] | None = None

    @property
    def topic_pages(self) -> dict[str, str]:
        if self._topics is None:
            self._topics = self.topics()  # read only when an item names a topic
        return self._topics

    def about_page(self, name: str) -> str | None:
        """The topic/project page a name (``CRM``, ``the CRM``, ``[[CRM]]``, ``#crm``) is."""
        key = _fold(name.strip("[]").split("|")[0].lstrip("#"))
        hit = self.topic_pages.get(key)
        if hit is None and key.startswith("the "):
            hit = self.topic_pages.get(key[4:])
        return hit

    def about_pages(self, item: Item) -> list[str]:
        out: list[str] = []
        for name in item.about:
            page = self.about_page(name)
            if page and page not in out:
                out.append(page)
        return out

    def targets(self, item: Item) -> list[tuple[str, str]]:
        """(page, section) for each place the item is written, in order, once each."""
        out: list[tuple[str, str]] = []

        def add(page: str | None, section: str) -> None:
            if page and page != OWNER and (page, section) not in out:
                out.append((page, section))

        meeting = self.meeting_pages.get(item.source)
        if item.kind in (COMMITMENT, ASK):
            who = self.parties.page(item.who, item.source)
            if who == OWNER:
                to = [p for p in (self.parties.page(t, item.source) for t in item.to)
                      if p and p != OWNER]
                for page in list(dict.fromkeys(to))[:MAX_TO_PAGES]:
                    add(page, SECTION[item.kind])
            else:
                add(who, SECTION[item.kind])
            if item.kind == COMMITMENT and meeting:
                add(meeting, "action items")
            return out
        if item.kind != DECISION:
            return out
        if meeting:
            add(meeting, "decisions")
        about = self.about_pages(item)
        for page in about:
            add(page, "decisions")
        if not meeting and not about:
            subject = self.subject_pages.get(item.source) or []
            if subject:
                for page in subject:
                    add(page, "decisions")
            else:
                add(self.parties.page(item.who, item.source), "decisions")
        return out

    def line(self, item: Item, section: str) -> ItemLine:
        """The item as a line of ``section`` (see docs/vault-format.md, "Items")."""
        s = item.source
        to = tuple(t for t in (self.parties.render(p, s) for p in item.to) if t)
        about = []
        for name in item.about:
            page = self.about_page(name)
            about.append(wikilink(page) if page else name)
        decision = item.kind == DECISION
        done = item.status == DONE
        return ItemLine(
            line=0, section=section, kind=item.kind, text=item.text,
            checked=None if decision else done, date=item.date,
            who=self.parties.render(item.who, s), to=to, due=item.due,
            completion=item.closed_on if done and not decision else None,
            closed=f"[[{item.closed_by}]]" if done and item.closed_by and not decision
            else None,
            because=item.because, rejected=tuple(item.rejected), about=tuple(about),
            status=item.status, source=f"[[{item.citation}]]", block_id=item.id)


def meeting_pages(ws: Any) -> dict[str, str]:
    """Meeting source → the meeting page that cites it (the build's transcript line)."""
    out: dict[str, str] = {}
    for page in ws.listdir("meetings"):
        text = ws.read(page)
        if not text:
            continue
        for m in _CITES.finditer(text):
            out.setdefault(m.group(1) + ".md", page)
    return out


def topic_pages(index: Any) -> dict[str, str]:
    """Folded name or alias → the one topic or project page of that name."""
    seen: dict[str, set[str]] = defaultdict(set)
    for e in index.entities:
        if e.type not in ("topic", "project"):
            continue
        for name in (e.name, *e.aliases):
            key = _fold(str(name).lstrip("#"))
            if key:
                seen[key].add(e.page)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def subject_pages(rows: Iterable[dict[str, Any]],
                  title_lines: dict[str, int | None]) -> dict[str, list[str]]:
    """Source → the project/topic pages its subject line resolved to."""
    out: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        source, page = r.get("source"), r.get("page")
        if r.get("kind") not in ("project", "topic") or not page or source not in title_lines:
            continue
        if r.get("line") == title_lines[str(source)] and page not in out[str(source)]:
            out[str(source)].append(page)
    return {k: sorted(v) for k, v in out.items()}
