#!/usr/bin/env python3
"""Generate a labelled corpus for ``kenning eval items``: a real Kenning vault whose sources hold
planted commitments, asks, decisions, fulfilments and distractors, with their labels.

    python bench/items_corpus.py OUT [--seed 7] [--split train|heldout|heldout2|heldout3]
                                 [--threads N] [--meetings N] [--chats N] [--force]

OUT becomes a Kenning vault (``kenning init``; owner Dana Okafor <dana@fernhill.test>, domain
fernhill.test, in ``.kenning/config.yaml``). The generator writes the inputs under
``OUT/.inputs/`` (``mail.mbox``, meeting transcripts as WebVTT and as plain text with notes,
chats as generic JSON) and syncs them with Kenning's own connectors (``kenning sync email``,
``… meetings``, ``… chats``), so the Markdown under ``OUT/sources/`` is exactly what Kenning
renders. Labels go to ``OUT/labels.json`` (format in :mod:`kenning.evaluate.items`).

Phrasings come from a phrase bank per split: bench/items_phrases_train.py (the extractor may be
tuned on it), bench/items_phrases_heldout.py (never tuned on; written apart, with other
verbs and constructions), bench/items_phrases_heldout2.py (a second held-out bank, written
after the first one's scores had been seen, so that one split stays unseen) and
bench/items_phrases_heldout3.py (a third, written after both held-out banks had been seen by the
people tuning the extractor, and kept unread by them until its first measurement). The world —
people, organizations, topics — is drawn per seed and split; the scenario mix is the same for
every split.

**Due-date convention** (the gold dates; computed here with a small calendar, not with the
extractor's code). Every phrase is resolved against the date the sentence was written: the
local date of the email's Date header, the meeting's date, the chat turn's (UTC) date.

- a weekday ("by Thursday", "Thursday at the latest") → its next occurrence strictly after the
  writing date ("by Thursday" written on a Monday is that week's Thursday; written on a Friday,
  the next week's); only Monday to Friday are used, never the writing day's own name;
- "tomorrow" → the next day; "today" / "by tonight" → the writing date;
- "this week" / "before the week is out" → that week's Friday (written Monday to Thursday only);
- "next week" → Friday of the next week;
- "end of month" / "by month-end" → the last day of that month (never written on that day);
- an explicit date ("14 April", "April 14th", "2025-04-14") → that date (always later in the
  same year).

What is planted (all deterministic for a seed and split):

- commitments with and without due phrases, first person singular and plural, in email, in
  meeting speech, in meeting notes (action-item lines) and in chats;
- asks to the owner and by the owner; an ask is answered (status done, closed by that message)
  exactly when its addressee writes a later message in the same thread or chat, else open;
- decisions, with the rejected alternative and the reason sometimes, about a named topic
  sometimes, in email and in meetings and chats;
- fulfilments in the same thread (same writer, later message) and in a later thread of the same
  writer to the same person; the commitment is then done, closed by that line;
- distractors that must yield no item: quoted replies (the connector removes them, so they are
  labelled ``present: false``), hypotheticals, open questions, negations, vague plans of third
  parties, bulk mail (List-Unsubscribe / Precedence: bulk), a promise repeated in a later
  message of the same writer (gold: one item; the repeat is listed in the item's ``repeats``).

After syncing, every labelled sentence is located in the rendered sources with the scorer's own
locator; the generator fails if an item is not found exactly once.
"""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import importlib.util
import json
import random
import re
import shutil
import string
import sys
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
POLICY = default_policy.clone(linesep="\n")
START = dt.date(2025, 3, 3)   # a Monday
WEEKDAYS = list(calendar.day_name)
MONTHS = list(calendar.month_name)

OWNER = ("Dana Okafor", "dana@fernhill.test")
OWNER_DOMAIN = "fernhill.test"

FIRST_LAST = [
    ("Priya", "Nair"), ("Jonas", "Weber"), ("Mei", "Lin"), ("Kwame", "Mensah"),
    ("Sofía", "Herrera"), ("Hiroshi", "Tanaka"), ("Aisha", "Bello"), ("Lars", "Berg"),
    ("Olga", "Petrova"), ("Tariq", "Haddad"), ("Ingrid", "Solberg"), ("Mateo", "Rossi"),
    ("Zoë", "Müller"), ("Siobhán", "Kelly"), ("Rahul", "Verma"), ("Fatima", "Zahra"),
    ("Chen", "Wei"), ("Amara", "Okonkwo"), ("Diego", "Fernández"), ("Yuki", "Sato"),
    ("Marta", "Kowalska"), ("Omar", "Farouk"), ("Leila", "Karimi"), ("Niamh", "Byrne"),
    ("Arjun", "Rao"), ("Elif", "Yılmaz"), ("Bruno", "Costa"), ("Hana", "Novak"),
]
ORGS = [("Acme Analytics", "acme.test"), ("Brightpath", "brightpath.test"),
        ("Corvid Health", "corvid.test"), ("Delta Freight", "deltafreight.test"),
        ("Eastwind Capital", "eastwind.test"), ("Glasshouse Media", "glasshouse.test"),
        ("Halyard Systems", "halyard.test"), ("Ivory Labs", "ivorylabs.test")]
# Decision material: (topic, choice, rejected alternative, reason).
FACETS = [
    ("billing", "Stripe", "Adyen", "the fees are lower"),
    ("the database", "Postgres", "MongoDB", "we need transactions"),
    ("hosting", "AWS", "Azure", "the team already knows it"),
    ("the CRM", "HubSpot", "Salesforce", "the licence is simpler"),
    ("the offsite", "Porto", "Madrid", "the flights are shorter"),
    ("support tooling", "Zendesk", "Intercom", "it plugs into the CRM"),
    ("the pilot length", "six weeks", "three months", "the customer wants results before Q3"),
    ("the analytics stack", "dbt", "hand-written SQL", "it is easier to test"),
    ("pricing", "per-seat pricing", "usage-based pricing", "customers want predictable bills"),
    ("the mobile app", "React Native", "native Swift", "we share code with the web app"),
    ("the design agency", "Studio North", "Pixelworks", "their portfolio fits better"),
    ("the launch date", "the 2nd of June", "mid-May", "QA needs two more weeks"),
    ("Project Heron", "a phased rollout", "a big-bang launch", "support can absorb it slowly"),
    ("Project Kestrel", "the managed Kafka", "a self-hosted queue", "nobody wants the pager"),
    ("Project Juniper", "two regions", "a single region", "the contract asks for failover"),
]
MEETING_TITLES = ["Weekly sync", "Pilot kickoff", "Pricing review", "Hiring debrief",
                  "Launch retro", "Roadmap planning", "Partner check-in", "Budget review"]
TZS = [0, 60, -300, 330, 540, 120, -420]   # minutes east of UTC
TRAPS = ("quoted", "hypothetical", "open_question", "negation", "third_party", "bulk",
         "repeat")


def load_bank(split: str) -> ModuleType:
    name = {"train": "items_phrases_train", "heldout": "items_phrases_heldout",
            "heldout2": "items_phrases_heldout2", "heldout3": "items_phrases_heldout3"}[split]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- calendar ----------------------------------------------------------------------------------


def next_weekday(written: dt.date, weekday: int) -> dt.date:
    """The next ``weekday`` (0 = Monday) strictly after ``written``."""
    return written + dt.timedelta(days=(weekday - written.weekday() - 1) % 7 + 1)


def friday_of(day: dt.date, weeks_ahead: int = 0) -> dt.date:
    return day - dt.timedelta(days=day.weekday()) + dt.timedelta(days=4 + 7 * weeks_ahead)


def month_end(day: dt.date) -> dt.date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def resolve_due(kind: str, written: dt.date, rng: random.Random) -> tuple[dt.date, dict[str, str]]:
    """A due date of ``kind`` for text written on ``written``, and the slot values to say it."""
    if kind == "weekday":
        choices = [w for w in range(5) if w != written.weekday()]
        wd = rng.choice(choices)
        return next_weekday(written, wd), {"wd": WEEKDAYS[wd]}
    if kind == "tomorrow":
        return written + dt.timedelta(days=1), {}
    if kind == "today":
        return written, {}
    if kind == "this_week":
        return friday_of(written), {}
    if kind == "next_week":
        return friday_of(written, 1), {}
    if kind == "end_month":
        return month_end(written), {}
    if kind == "date":
        day = min(written + dt.timedelta(days=rng.randint(4, 40)), dt.date(written.year, 12, 31))
        return day, {"d": str(day.day), "d_th": _ordinal(day.day), "month": MONTHS[day.month],
                     "iso": day.isoformat(), "mon": calendar.month_abbr[day.month],
                     "dow": WEEKDAYS[day.weekday()]}
    raise ValueError(kind)


def due_kinds(written: dt.date) -> list[str]:
    kinds = ["weekday", "weekday", "tomorrow", "today", "next_week", "end_month", "date", "date"]
    if written.weekday() <= 3:
        kinds.append("this_week")
    if written == month_end(written):
        kinds.remove("end_month")
    if written.month == 12 and written.day == 31:
        kinds = [k for k in kinds if k != "date"]
    return kinds


# -- world -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    org: str
    owner: bool = False

    @property
    def first(self) -> str:
        return self.name.split()[0]

    @property
    def internal(self) -> bool:
        return self.email.endswith("@" + OWNER_DOMAIN)

    def party(self) -> dict[str, Any]:
        return {"name": self.name, "email": self.email, "owner": self.owner}


def _ascii_local(text: str) -> str:
    import unicodedata
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z]", "", folded.lower())


def make_world(rng: random.Random) -> tuple[Person, list[Person], list[Person], list[str]]:
    owner = Person(OWNER[0], OWNER[1], "Fernhill", owner=True)
    names = rng.sample(FIRST_LAST, 14)
    orgs = rng.sample(ORGS, 5)
    colleagues = [Person(f"{f} {ln}", f"{_ascii_local(f)}@{OWNER_DOMAIN}", "Fernhill")
                  for f, ln in names[:4]]
    externals = []
    for i, (f, ln) in enumerate(names[4:]):
        org, domain = orgs[i % len(orgs)]
        externals.append(Person(f"{f} {ln}", f"{_ascii_local(f)}.{_ascii_local(ln)}@{domain}",
                                org))
    return owner, colleagues, externals, [o for o, _ in orgs]


# -- text --------------------------------------------------------------------------------------


class _Fmt(string.Formatter):
    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        if key not in kwargs:
            raise KeyError(f"template slot {{{key}}} has no value")
        return kwargs[key]


FMT = _Fmt()


def fill(template: str, **slots: Any) -> str:
    text = FMT.format(template, **slots)
    text = re.sub(r"\s+([.,?!;])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
    return text[:1].upper() + text[1:]


def slots_in(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


@dataclass
class Msg:
    sender: Person
    to: list[Person]
    cc: list[Person]
    subject: str
    when: dt.datetime
    msgid: str
    refs: list[str]
    lines: list[str]
    bulk: dict[str, str] = field(default_factory=dict)

    @property
    def header(self) -> str:
        off = self.when.utcoffset() or dt.timedelta(0)
        minutes = int(off.total_seconds() // 60)
        sign = "+" if minutes >= 0 else "-"
        return (f"{self.when:%Y-%m-%d %H:%M} {sign}{abs(minutes) // 60:02d}:"
                f"{abs(minutes) % 60:02d}")


def _addr(p: Person) -> Address:
    local, _, domain = p.email.partition("@")
    return Address(display_name=p.name, username=local, domain=domain)


def render_message(m: Msg) -> bytes:
    msg = EmailMessage(policy=POLICY)
    msg["From"] = _addr(m.sender)
    msg["To"] = [_addr(t) for t in m.to]
    if m.cc:
        msg["Cc"] = [_addr(c) for c in m.cc]
    msg["Subject"] = m.subject
    msg["Date"] = format_datetime(m.when)
    msg["Message-ID"] = f"<{m.msgid}>"
    if m.refs:
        msg["In-Reply-To"] = f"<{m.refs[-1]}>"
        msg["References"] = " ".join(f"<{r}>" for r in m.refs)
    for key, value in m.bulk.items():
        msg[key] = value
    msg.set_content("\n".join(m.lines) + "\n", cte="8bit")
    data = msg.as_bytes(policy=POLICY)
    data = re.sub(rb"(?m)^(>*From )", rb">\1", data)
    stamp = m.when.astimezone(dt.UTC).strftime("%a %b %d %H:%M:%S %Y")
    return f"From {m.sender.email} {stamp}\n".encode() + data.rstrip(b"\n") + b"\n\n"


# -- generator ---------------------------------------------------------------------------------


class Generator:
    def __init__(self, seed: int, split: str, threads: int, meetings: int, chats: int) -> None:
        self.seed, self.split = seed, split
        self.rng = random.Random(f"items:{seed}:{split}")
        self.bank = load_bank(split)
        self.owner, self.colleagues, self.externals, self.orgs = make_world(self.rng)
        self.n_threads, self.n_meetings, self.n_chats = threads, meetings, chats
        self.items: list[dict[str, Any]] = []
        self.distractors: list[dict[str, Any]] = []
        self.messages: dict[str, dict[str, str]] = {}
        self.mail: list[Msg] = []
        self.meeting_files: dict[str, str] = {}
        self.chat_files: dict[str, Any] = {}
        self.pending: list[dict[str, Any]] = []   # commitments to deliver in a later thread
        self.day = START
        self.last: dt.datetime | None = None
        self.promised: dict[tuple[str, str], set[str]] = {}
        self._n = 0

    # -- helpers
    def pick(self, seq: list[Any]) -> Any:
        return self.rng.choice(seq)

    def next_id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}-{self.seed}-{self.split}-{self._n:04d}"

    def advance(self, lo: int = 1, hi: int = 3) -> dt.date:
        self.day += dt.timedelta(days=self.rng.randint(lo, hi))
        while self.day.weekday() >= 5:
            self.day += dt.timedelta(days=1)
        return self.day

    def task(self, used: set[str], avoid: set[str] | None = None) -> tuple[str, str]:
        for _ in range(50):
            verb, obj = self.pick(self.bank.TASKS)
            if obj not in used and obj not in (avoid or ()):
                used.add(obj)
                return verb.format(obj=obj), obj
        verb, obj = self.pick(self.bank.TASKS)
        return verb.format(obj=obj), obj

    def due(self, written: dt.date, *, optional: bool = True) -> tuple[str | None, str | None]:
        """(due phrase, ISO date) or (None, None)."""
        if optional and self.rng.random() < 0.2:
            return None, None
        kind = self.pick(due_kinds(written))
        day, values = resolve_due(kind, written, self.rng)
        if kind == "date":
            values["date"] = self.pick(self.bank.DATE_FORMATS).format(**values)
        return self.pick(self.bank.DUE[kind]).format(**values), day.isoformat()

    def commitment_text(self, written: dt.date, used: set[str], *, spoken: bool = False,
                        nodue_ok: bool = True, who: Person | None = None,
                        to: Person | None = None) -> tuple[str, str, str | None]:
        """(sentence, object, due ISO). One writer never promises one reader the same object
        twice in the corpus: a delivery naming it ("Here's the deck") closes exactly one."""
        pair = (who.email if who else "", to.email if to else "")
        task, obj = self.task(used, self.promised.setdefault(pair, set()))
        self.promised[pair].add(obj)
        phrase, due = self.due(written, optional=False)
        if nodue_ok and self.rng.random() < 0.25:
            template = self.pick(self.bank.SPOKEN_COMMIT if spoken else self.bank.COMMIT_NODUE)
            if "{due}" in template:
                template = template.replace(" {due}", "")
            return fill(template, task=task, obj=obj, obj_cap=obj), obj, None
        template = self.pick(self.bank.SPOKEN_COMMIT if spoken else self.bank.COMMIT_DUE)
        if "{due}" not in template:
            due = None
        return fill(template, task=task, obj=obj, obj_cap=obj, due=phrase), obj, due

    def gold(self, kind: str, ref: str, text: str, who: Person | dict[str, Any], *,
             to: list[Person] | None = None, due: str | None = None, status: str = "open",
             rejected: list[str] | None = None, about: list[str] | None = None,
             because: str | None = None, date: str | None = None,
             channel: str = "email") -> dict[str, Any]:
        item = {"id": f"g{len(self.items) + 1:04d}", "kind": kind, "source": ref, "text": text,
                "who": who.party() if isinstance(who, Person) else who,
                "to": [p.party() for p in to or []], "due": due, "status": status,
                "closed_by": None, "rejected": rejected or [], "about": about or [],
                "because": because,
                "date": date, "channel": channel, "repeats": []}
        self.items.append(item)
        return item

    def trap(self, trap: str, ref: str, text: str) -> None:
        assert trap in TRAPS
        self.distractors.append({"id": f"d{len(self.distractors) + 1:04d}", "trap": trap,
                                 "source": ref, "text": text})

    def decision(self, used_facets: set[int]) -> tuple[str, dict[str, Any]]:
        """(sentence, the gold's rejected / about / because)."""
        idx = self.pick([i for i in range(len(FACETS)) if i not in used_facets] or [0])
        used_facets.add(idx)
        topic, choice, alt, reason = FACETS[idx]
        template = self.pick(self.bank.DECISION)
        text = fill(template, topic=topic, choice=choice, alt=alt, reason=reason)
        names = slots_in(template)
        # "about" is labelled for named projects only ("Project Heron"); "billing" is a word in
        # the text, not a page a decision could be filed on without a topic vocabulary
        named = "topic" in names and topic.startswith("Project ")
        return text, {"rejected": [alt] if "alt" in names else [],
                      "about": [topic] if named else [],
                      "because": reason if "reason" in names else None}

    def distractor(self, written: dt.date, used: set[str]) -> tuple[str, str]:
        trap = self.pick(["hypothetical", "open_question", "negation", "third_party"])
        bank = {"hypothetical": self.bank.HYPOTHETICAL, "open_question": self.bank.OPEN_QUESTION,
                "negation": self.bank.NEGATION, "third_party": self.bank.THIRD_PARTY}[trap]
        task, obj = self.task(used)
        topic, _, alt, _ = self.pick(FACETS)
        return trap, fill(self.pick(bank), task=task, obj=obj, topic=topic, alt=alt,
                          org=self.pick(self.orgs))

    def when(self, day: dt.date) -> dt.datetime:
        """A time on ``day`` (or the next weekday that allows it) later than every message
        written so far: mail is rendered in time order, so a reply must come after its parent
        in absolute time, whatever the two writers' time zones."""
        while True:
            tz = dt.timezone(dt.timedelta(minutes=self.pick(TZS)))
            at = dt.datetime(day.year, day.month, day.day, self.rng.randint(8, 17),
                             self.rng.choice([0, 5, 12, 20, 30, 41, 47, 55]), tzinfo=tz)
            if self.last is None or at > self.last + dt.timedelta(minutes=5):
                self.last = at
                self.day = max(self.day, day)
                return at
            day += dt.timedelta(days=1)
            while day.weekday() >= 5:
                day += dt.timedelta(days=1)

    # -- email
    def body(self, sender: Person, to: Person, sentences: list[str]) -> list[str]:
        lines = [fill(self.pick(self.bank.GREETING), name=to.first), ""]
        fillers = list(self.bank.FILLER)
        self.rng.shuffle(fillers)
        if self.rng.random() < 0.6 or not sentences:
            lines.append(fillers.pop())
        for s in sentences:
            if self.rng.random() < 0.35 and fillers:
                lines.append(f"{fillers.pop()} {s}" if self.rng.random() < 0.5
                             else f"{s} {fillers.pop()}")
            else:
                lines.append(s)
            if self.rng.random() < 0.5:
                lines.append("")
        lines += ["", self.pick(self.bank.SIGNOFF), sender.first]
        return lines

    def thread(self, t: int) -> None:
        rng = self.rng
        if self.pending and rng.random() < 0.5:
            self.followup(self.pending.pop(0))
            return
        other = self.pick(self.externals if rng.random() < 0.7 else self.colleagues)
        first = self.owner if rng.random() < 0.5 else other
        second = other if first is self.owner else self.owner
        cc = [self.pick([c for c in self.colleagues if c is not other])] \
            if rng.random() < 0.35 else []
        n = self.pick([1, 2, 2, 3, 3, 3, 4, 4])
        senders = [first if k % 2 == 0 else second for k in range(n)]
        if cc and n >= 3 and rng.random() < 0.4:
            senders[2] = cc[0]
        topic, *_ = self.pick(FACETS)
        subject = self.pick([f"{topic[:1].upper()}{topic[1:]}", f"Follow-up: {topic}",
                             f"Quick question about {topic}", f"Next steps on {topic}"])
        subject = f"{subject} #{t + 1}"
        used: set[str] = set()
        facets: set[int] = set()
        refs: list[str] = []
        commits: list[tuple[dict[str, Any], Person, str]] = []   # open, by sender
        asks: list[tuple[dict[str, Any], list[Person], int]] = []
        prev: Msg | None = None
        for k, sender in enumerate(senders):
            day = self.advance(0, 2) if k else self.advance(1, 2)
            when = self.when(day)
            written = when.date()
            to_person = prev.sender if prev else (second if sender is first else first)
            if to_person is sender:
                to_person = first if sender is not first else second
            participants = [first, second, *cc]
            ccs = [p for p in participants if p is not sender and p is not to_person]
            mid = f"{self.next_id('m')}@{sender.email.split('@')[1]}"
            ref = f"email:{mid}"
            sentences: list[str] = []
            plants: list[str] = []
            if k == 0:
                plants = rng.sample(["commit", "ask", "decision", "distractor", "commit"],
                                    self.pick([1, 2, 2, 3]))
            else:
                for item, who, obj in list(commits):
                    if who is not sender:
                        continue
                    r = rng.random()
                    if r < 0.5:
                        # "Sent." only when it can close nothing else of this writer's
                        # and never where it could answer an ask made of this writer
                        mine = sum(1 for _, w, _ in commits if w is sender)
                        asked = any(sender in a for _, a, _ in asks)
                        templates = [t for t in self.bank.DELIVERY_SAME
                                     if (mine == 1 and not asked) or "{obj" in t]
                        text = fill(self.pick(templates), obj=obj, obj_cap=obj)
                        sentences.append(text)
                        item["status"] = "done"
                        item["closed_by"] = {"source": ref, "text": text}
                        commits.remove((item, who, obj))
                    elif r < 0.75:
                        commit = item["text"]
                        if rng.random() < 0.5:
                            text = commit      # verbatim repeat
                        else:
                            lower = commit if re.match(r"I\b", commit) else (
                                commit[:1].lower() + commit[1:])
                            text = fill(self.pick(self.bank.REPEAT), commit_lower=lower)
                        sentences.append(text)
                        item["repeats"].append({"source": ref, "text": text})
                        self.trap("repeat", ref, text)
                if any(sender in addressees and item["status"] == "open"
                       and item["source"] == f"email:{refs[-1]}" for item, addressees, _ in asks):
                    sentences.append(self.pick(self.bank.ANSWER))
                if rng.random() < 0.45:
                    plants = [self.pick(["commit", "ask", "decision", "distractor"])]
            for plant in plants:
                if plant == "commit":
                    text, obj, due = self.commitment_text(written, used, who=sender,
                                                          to=to_person)
                    item = self.gold("commitment", ref, text, sender, to=[to_person], due=due,
                                     date=written.isoformat())
                    commits.append((item, sender, obj))
                elif plant == "ask":
                    task, obj = self.task(used)
                    template = self.pick(self.bank.ASK)
                    phrase, due = self.due(written, optional=False)
                    if "{due}" not in template:
                        due = None
                    text = fill(template, task=task, obj=obj, due=phrase, name=to_person.first)
                    item = self.gold("ask", ref, text, sender, to=[to_person], due=due,
                                     date=written.isoformat())
                    asks.append((item, [to_person], k))
                elif plant == "decision":
                    text, parts = self.decision(facets)
                    self.gold("decision", ref, text, sender, status="decided",
                              date=written.isoformat(), **parts)
                else:
                    trap, text = self.distractor(written, used)
                    self.trap(trap, ref, text)
                sentences.append(text)
            lines = self.body(sender, to_person, sentences)
            if prev is not None and rng.random() < 0.6:
                lines += ["", f"On {prev.when:%a, %d %b %Y at %H:%M}, {prev.sender.name} "
                              f"<{prev.sender.email}> wrote:"]
                lines += [f"> {line}" if line else ">" for line in prev.lines]
                for item in self.items:
                    if (item["source"] == f"email:{prev.msgid}"
                            and item["text"] in "\n".join(prev.lines)
                            and item["text"] not in "\n".join(lines[:-len(prev.lines)])):
                        self.trap("quoted", ref, item["text"])
            msg = Msg(sender, [to_person], ccs, subject if k == 0 else f"Re: {subject}", when,
                      mid, list(refs), lines)
            self.mail.append(msg)
            self.messages[mid] = {"header": msg.header, "from": sender.email}
            refs.append(mid)
            prev = msg
        msgs = self.mail[-n:]
        for item, addressees, k in asks:
            for later in msgs[k + 1:]:
                if later.sender in addressees:
                    item["status"] = "done"
                    item["closed_by"] = {"source": f"email:{later.msgid}", "text": None}
                    break
        for item, who, obj in commits:
            if self.rng.random() < 0.4:
                self.pending.append({"item": item, "who": who, "obj": obj,
                                     "to": next(p for p in [first, second] if p is not who)})

    def followup(self, p: dict[str, Any]) -> None:
        sender, to_person, obj, item = p["who"], p["to"], p["obj"], p["item"]
        when = self.when(self.advance(1, 3))
        mid = f"{self.next_id('m')}@{sender.email.split('@')[1]}"
        ref = f"email:{mid}"
        text = fill(self.pick(self.bank.DELIVERY_LATER), obj=obj, obj_cap=obj)
        item["status"] = "done"
        item["closed_by"] = {"source": ref, "text": text}
        lines = self.body(sender, to_person, [text])
        subject = f"{obj[:1].upper()}{obj[1:]} ({mid.split('@')[0]})"
        msg = Msg(sender, [to_person], [], subject, when, mid, [], lines)
        self.mail.append(msg)
        self.messages[mid] = {"header": msg.header, "from": sender.email}

    def newsletter(self, i: int) -> None:
        org, domain = self.pick(ORGS)
        when = self.when(self.advance(0, 1))
        mid = f"{self.next_id('n')}@{domain}"
        ref = f"email:{mid}"
        lines = [f"{org} monthly update", ""]
        for text in self.rng.sample(self.bank.NEWSLETTER, 2):
            lines += [text, ""]
            self.trap("bulk", ref, text)
        lines += ["Unsubscribe: https://" + domain + "/unsubscribe"]
        sender = Person(f"{org} News", f"news@{domain}", org)
        msg = Msg(sender, [self.owner], [], f"{org} news, issue {i + 1}", when, mid, [], lines,
                  bulk={"List-Unsubscribe": f"<mailto:unsubscribe@{domain}>",
                        "Precedence": "bulk"})
        self.mail.append(msg)
        self.messages[mid] = {"header": msg.header, "from": sender.email}

    # -- meetings
    def meeting(self, i: int) -> None:
        rng = self.rng
        day = self.advance(0, 2)
        title = f"{self.pick(MEETING_TITLES)} {i + 1}"   # unique: date + title is the id
        people = [self.owner, *rng.sample(self.colleagues + self.externals, rng.randint(2, 3))]
        vtt = i % 2 == 0
        name = f"{day.isoformat()}-{title.lower().replace(' ', '-')}." + ("vtt" if vtt else "txt")
        ref = f"meeting:{name}"
        used: set[str] = set()
        facets: set[int] = set()
        turns: list[tuple[Person, str]] = []
        plan = (["filler"] * rng.randint(5, 8) + ["commit"] * rng.randint(1, 2)
                + ["decision"] * rng.randint(0, 1) + ["distractor"] * rng.randint(1, 2))
        rng.shuffle(plan)
        fillers = list(self.bank.SPOKEN_FILLER)
        for what in ["filler", *plan]:
            speaker = self.pick(people)
            if what == "filler":
                turns.append((speaker, self.pick(fillers)))
                continue
            at = f"{ref}#{_clock(5 + len(turns) * 17)}"
            if what == "commit":
                text, _, due = self.commitment_text(day, used, spoken=True)
                self.gold("commitment", at, text, speaker, due=due, date=day.isoformat(),
                          channel="meeting")
            elif what == "decision":
                text, parts = self.decision(facets)
                self.gold("decision", at, text, speaker, status="decided", date=day.isoformat(),
                          channel="meeting", **parts)
            else:
                trap, text = self.distractor(day, used)
                self.trap(trap, at, text)
            if rng.random() < 0.3:
                text = f"{self.pick(fillers)} {text}"
            turns.append((speaker, text))
        if vtt:
            out = ["WEBVTT", ""]
            for n, (speaker, text) in enumerate(turns):
                start = 5 + n * 17
                out += [f"{_vtt(start)} --> {_vtt(start + 15)}", f"<v {speaker.name}>{text}", ""]
        else:
            out = ["---", f"title: {title}", f"date: {day.isoformat()}",
                   "attendees: [" + ", ".join(p.name for p in people) + "]", "---", "",
                   "## Action items", ""]
            for _ in range(rng.randint(1, 3)):
                who = self.pick(people)
                task, _ = self.task(used)
                phrase, due = self.due(day)
                template = self.pick(self.bank.ACTION_LINES)
                if phrase is None:
                    template = template.replace(" {due}", "")
                if "{due}" not in template:
                    due = None
                written_as = who.name if rng.random() < 0.5 else who.first
                text = fill(template, who=written_as, task=task, due=phrase)
                out.append(text)
                who_party = who.party() | {"as_written": written_as}
                self.gold("commitment", ref, text, who_party, due=due, date=day.isoformat(),
                          channel="meeting-notes")
            out += ["", "## Transcript", ""]
            for n, (speaker, text) in enumerate(turns):
                out.append(f"[{_clock(5 + n * 17)}] {speaker.name}: {text}")
        self.meeting_files[name] = "\n".join(out) + "\n"

    # -- chats
    def chat(self, i: int) -> None:
        rng = self.rng
        mate = self.pick(self.colleagues)
        day = self.advance(0, 2)
        cid = self.next_id("chat")
        ref = f"chat:{cid}"
        used: set[str] = set()
        facets: set[int] = set()
        messages: list[dict[str, Any]] = []
        asks: list[tuple[dict[str, Any], Person, int]] = []
        commits: list[tuple[dict[str, Any], Person, str]] = []
        n = rng.randint(6, 9)
        minute = 0
        for k in range(n):
            speaker = self.owner if (k % 2 == 0) == (rng.random() < 0.8) else mate
            other = mate if speaker is self.owner else self.owner
            minute += rng.randint(1, 9)
            clock = f"{10 + minute // 60:02d}:{minute % 60:02d}"
            at = f"{ref}#{clock}"
            what = self.pick(["filler", "filler", "commit", "ask", "decision", "deliver"])
            text = self.pick(self.bank.FILLER)
            last = messages[-1] if messages else None
            if (what == "filler" and last is not None and last["speaker"] != speaker.name
                    and last.get("item") and rng.random() < 0.7):
                # a reply quoting the other's item: the chat connector keeps it as written
                text = f"Re this:\n> {last['text']}\n{text}"
                self.trap("quoted", at, last["text"])
            elif what == "deliver":
                mine = [c for c in commits if c[1] is speaker]
                if mine:
                    item, _, obj = mine[0]
                    commits.remove(mine[0])
                    asked = any(a is speaker for _, a, _ in asks)
                    templates = [t for t in self.bank.DELIVERY_SAME
                                 if (len(mine) == 1 and not asked) or "{obj" in t]
                    text = fill(self.pick(templates), obj=obj, obj_cap=obj)
                    item["status"] = "done"
                    item["closed_by"] = {"source": at, "text": text}
            elif what == "commit":
                text, obj, due = self.commitment_text(day, used, who=speaker, to=other)
                item = self.gold("commitment", at, text, speaker, to=[other], due=due,
                                 date=day.isoformat(), channel="chat")
                commits.append((item, speaker, obj))
            elif what == "ask":
                task, obj = self.task(used)
                template = self.pick(self.bank.ASK)
                phrase, due = self.due(day, optional=False)
                if "{due}" not in template:
                    due = None
                text = fill(template, task=task, obj=obj, due=phrase, name=other.first)
                item = self.gold("ask", at, text, speaker, to=[other], due=due,
                                 date=day.isoformat(), channel="chat")
                asks.append((item, other, k))
            elif what == "decision":
                text, parts = self.decision(facets)
                self.gold("decision", at, text, speaker, status="decided", date=day.isoformat(),
                          channel="chat", **parts)
            messages.append({"id": str(k + 1), "speaker": speaker.name, "text": text,
                             "timestamp": f"{day.isoformat()}T{clock}:00Z", "at": at,
                             "item": what in ("commit", "ask", "decision")})
        for item, addressee, k in asks:
            for later in messages[k + 1:]:
                if later["speaker"] == addressee.name:
                    item["status"] = "done"
                    item["closed_by"] = {"source": later["at"], "text": None}
                    break
        for m in messages:
            del m["at"], m["item"]
        self.chat_files[f"{cid}.json"] = {
            "id": cid, "title": f"Chat with {mate.first} {i + 1}",
            "participants": [self.owner.name, mate.name], "messages": messages}

    def run(self) -> None:
        for t in range(self.n_threads):
            self.thread(t)
            if t % 10 == 9:
                self.newsletter(t // 10)
        for p in self.pending:
            self.followup(p)
        self.pending = []
        for i in range(self.n_meetings):
            self.meeting(i)
        for i in range(self.n_chats):
            self.chat(i)

    def labels(self) -> dict[str, Any]:
        return {"format": 1, "seed": self.seed, "split": self.split,
                "owner": self.owner.party(), "messages": self.messages,
                "items": self.items, "distractors": self.distractors}


def _vtt(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


OWNER_CONFIG = f"""owner:
  names: [{OWNER[0]}]
  emails: [{OWNER[1]}]
  domains: [{OWNER_DOMAIN}]
"""


def generate(out: Path, *, seed: int = 7, split: str = "train", threads: int = 60,
             meetings: int | None = None, chats: int | None = None,
             force: bool = False) -> dict[str, Any]:
    """Write the inputs, a vault synced from them and ``labels.json``; return the labels."""
    from kenning.evaluate.items import locate_all
    from kenning.sources import chats as chat_connector
    from kenning.sources import email as email_connector
    from kenning.sources import meetings as meeting_connector
    from kenning.vault.fsio import atomic_write_text
    from kenning.vault.layout import init_vault

    if out.exists() and any(out.iterdir()):
        if not force:
            raise SystemExit(f"{out}: not empty (use --force to replace it)")
        shutil.rmtree(out)
    gen = Generator(seed, split, threads,
                    meetings if meetings is not None else max(2, threads // 5),
                    chats if chats is not None else max(1, threads // 15))
    gen.run()
    root, _ = init_vault(out)
    config = root / ".kenning" / "config.yaml"
    atomic_write_text(config, config.read_text(encoding="utf-8").rstrip("\n") + "\n"
                      + OWNER_CONFIG)
    inputs = root / ".inputs"
    (inputs / "meetings").mkdir(parents=True)
    (inputs / "chats").mkdir()
    (inputs / "mail.mbox").write_bytes(b"".join(render_message(m) for m in gen.mail))
    for name, text in gen.meeting_files.items():
        (inputs / "meetings" / name).write_text(text, encoding="utf-8")
    for name, data in gen.chat_files.items():
        (inputs / "chats" / name).write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
    warnings: list[str] = []
    warnings += email_connector.sync(root, str(inputs / "mail.mbox")).warnings
    if gen.meeting_files:
        warnings += meeting_connector.sync(root, inputs / "meetings").warnings
    if gen.chat_files:
        warnings += chat_connector.sync(root, inputs / "chats").warnings
    labels = gen.labels()
    located = locate_all(root, labels)
    problems = [f"{k}: {v}" for k, v in located.problems.items()]
    for d in labels["distractors"]:
        d["present"] = d["id"] in located.spans
    if problems:
        raise SystemExit("labels not found exactly once in the rendered sources:\n"
                         + "\n".join(problems[:20]))
    (root / "labels.json").write_text(json.dumps(labels, ensure_ascii=False, indent=1) + "\n",
                                      encoding="utf-8")
    if warnings:
        print("\n".join(f"warning: {w}" for w in warnings), file=sys.stderr)
    return labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--split", choices=("train", "heldout", "heldout2", "heldout3"),
                    default="train")
    ap.add_argument("--threads", type=int, default=60)
    ap.add_argument("--meetings", type=int)
    ap.add_argument("--chats", type=int)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    labels = generate(args.out, seed=args.seed, split=args.split, threads=args.threads,
                      meetings=args.meetings, chats=args.chats, force=args.force)
    kinds: dict[str, int] = {}
    for item in labels["items"]:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    traps: dict[str, int] = {}
    for d in labels["distractors"]:
        traps[d["trap"]] = traps.get(d["trap"], 0) + 1
    print(f"{args.out}: {args.split} seed {args.seed}: "
          + ", ".join(f"{v} {k}s" for k, v in sorted(kinds.items()))
          + f"; {len(labels['distractors'])} distractors ("
          + ", ".join(f"{k} {v}" for k, v in sorted(traps.items())) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
