"""Typed, directed edges from a parsed page, each with its provenance.

Four origins, one shape: frontmatter fields (a person's ``organization`` → works_at …), typed fact
lines, Markdown links, and wikilinks in prose, whose type is read from the words just before the
link in its sentence ("founded [[X]]" → founded). When nothing says what a link means it is a
plain ``mentions`` edge: a wrong type is worse than a weak one.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kenning import vocabulary
from kenning.errors import VocabularyError

# Frontmatter key → (relation, reverse). reverse=True means the edge points from the referenced
# page to this page (an organization's key_people work at the organization).
FIELD_RELATIONS: dict[str, tuple[str, bool]] = {
    "organization": ("works_at", False),
    "company": ("works_at", False),
    "employer": ("works_at", False),
    "key_people": ("works_at", True),
    "employees": ("works_at", True),
    "founders": ("founded", True),
    "investors": ("invested_in", True),
    "advisors": ("advises", True),
    "attendees": ("attended", True),
    "participants": ("attended", True),
    "members": ("member_of", True),
    "owner": ("owns", True),
    "owners": ("owns", True),
    "related": ("related_to", False),
    "see_also": ("related_to", False),
    "supersedes": ("supersedes", False),
    "superseded_by": ("supersedes", True),
    "parent": ("part_of", False),
    "project": ("part_of", False),
    "projects": ("related_to", False),
    "topics": ("related_to", False),
}

_W = r"(?:[\w'’-]+[\s,]+)"
# Words right before a link that say what the link means: (relation, pattern ending the text).
_CUES: list[tuple[str, re.Pattern[str]]] = [
    (rel, re.compile(rf"(?:{pattern})[\s:,]+{_W}{{0,3}}$", re.IGNORECASE))
    for rel, pattern in [
        ("founded", r"\bco-?founded|\bfounded|\bco-?founder\s+of|\bfounder\s+of|\bstarted"),
        ("invested_in", r"\binvest(?:ed|s|ing)?\s+in|\binvestor\s+in|\bbacked|\bbacks"
                        r"|\bled\s+(?:the\s+)?[\w\s-]{0,20}round\s+(?:in|for|of)"),
        ("advises", r"\badvis(?:es|ed|ing|or\s+to|er\s+to|or\s+for)"),
        ("works_at", r"\bwork(?:s|ed|ing)?\s+(?:at|for)|\bjoined|\bemployed\s+(?:by|at)"
                     r"|\b(?:CEO|CTO|COO|CFO|VP|head|lead|engineer|manager|partner|director"
                     r"|designer|analyst|scientist|recruiter|intern|principal|associate"
                     r"|founder)(?:\s+[\w-]+){0,2}\s+at|\b(?:CEO|CTO|COO|CFO)\s+of"),
        ("member_of", r"\bmember\s+of|\bon\s+the\s+board\s+of"),
        ("reports_to", r"\breports?\s+to|\breporting\s+to"),
        ("part_of", r"\bpart\s+of|\bbelongs?\s+to|\bcomponent\s+of"),
        ("depends_on", r"\bdepends?\s+on|\brel(?:y|ies)\s+on|\bblocked\s+by|\brequires"),
        ("supersedes", r"\bsupersedes|\breplaces|\breplaced"),
        ("contradicts", r"\bcontradicts|\bconflicts\s+with"),
        ("supports", r"\bsupports|\bconfirms"),
        ("caused_by", r"\bcaused\s+by|\bbecause\s+of|\bdue\s+to"),
        ("evolved_into", r"\bevolved\s+into|\bbecame|\bgrew\s+into"),
        ("enables", r"\benables|\bunblocks|\bmakes\s+possible"),
        ("exemplifies", r"\bexample\s+of|\binstance\s+of|\bexemplifies"),
        ("informs", r"\binforms|\binformed"),
        ("investigates", r"\binvestigat(?:es|ing|ed)|\bresearch(?:es|ing)"),
        ("attended", r"\battended|\battending|\bpresent\s+at"),
        ("uses", r"\buses|\busing|\bbuilt\s+(?:on|with)|\brun(?:s|ning)?\s+on"),
        ("owns", r"\bowns|\bowner\s+of|\bresponsible\s+for"),
    ]
]


@dataclass(frozen=True)
class Edge:
    """One extracted edge. ``ref`` is the link text of the other endpoint."""

    rel: str
    ref: str
    kind: str
    reverse: bool = False
    field: str | None = None
    line: int | None = None
    heading: str | None = None
    alias: str | None = None
    embed: bool = False
    plain: bool = False  # a bare name (frontmatter value, @mention): no link to Obsidian
    valid_from: str | None = None
    valid_to: str | None = None
    status: str = "active"
    recorded: str | None = None  # belief time: when Kenning learned it …
    expired: str | None = None   # … and when it retired it


_WIKI = re.compile(r"!?\[\[([^\]\|#]*)(?:#([^\]\|]*))?(?:\|([^\]]*))?\]\]")


def split_ref(value: str) -> tuple[str, str | None, str | None] | None:
    """``"[[folder/page#Heading|Alias]]"`` or a bare name → (target, heading, alias)."""
    value = value.strip()
    if not value:
        return None
    match = _WIKI.fullmatch(value)
    if match:
        target = match.group(1).strip()
        if not target:
            return None
        return target, (match.group(2) or None), (match.group(3) or None)
    if "[[" in value or "://" in value or "\n" in value or len(value) > 200:
        return None
    return value, None, None


def _field_values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        # A string may hold several wikilinks ("[[A]], [[B]]").
        found = _WIKI.findall(value)
        if len(found) > 1:
            for match in _WIKI.finditer(value):
                yield match.group(0)
        else:
            yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                # e.g. rejected: [{option: "[[X]]", because: ...}] — take link-looking strings.
                for v in item.values():
                    if isinstance(v, str) and _WIKI.fullmatch(v.strip()):
                        yield v


def frontmatter_edges(frontmatter: dict[str, Any], lines: dict[str, int]) -> list[Edge]:
    """Edges from frontmatter fields; ``lines`` maps a key to its line in the file."""
    edges: list[Edge] = []
    for key, value in frontmatter.items():
        norm_key = str(key).strip().lower()
        if norm_key in FIELD_RELATIONS:
            rel, reverse = FIELD_RELATIONS[norm_key]
            plain_ok = True
        else:
            # Any other field links only where its value is written as a wikilink; a field named
            # after a relation ("advises: [[X]]") gets that type.
            rel = fold_relation(norm_key) or "related_to"
            reverse, plain_ok = False, False
        for raw in _field_values(value):
            written = bool(_WIKI.fullmatch(raw.strip()))
            if not plain_ok and not written:
                continue
            parts = split_ref(raw)
            if parts is None:
                continue
            target, heading, alias = parts
            edges.append(Edge(rel=rel, ref=target, kind="frontmatter", reverse=reverse,
                              field=str(key), line=lines.get(str(key)), heading=heading,
                              alias=alias, plain=not written))
    return edges


PRONOUNS = frozenset("i we he she they it who which that this our their its".split())


def infer_relation(sentence: str, target: str, self_names: frozenset[str] = frozenset()) -> str:
    """The relation a sentence gives a link to ``target``, or ``mentions``.

    A cue ("founded", "invested in", "works at" …) just before the link types the edge only when
    the page itself is the sentence's subject: nothing, a pronoun, the page's own name, or a
    lower-case description ("Seed fund that invested in [[X]]") stands before the cue. "Tom, who
    advises [[X]]" written on a meeting page says something about Tom, not about the meeting.
    """
    position = _link_position(sentence, target)
    if position <= 0:
        return "mentions"
    before = sentence[:position]
    # Only the words since the previous link count: "[[A]] founded [[B]] and met [[C]]".
    previous = max(before.rfind("]]"), before.rfind(")"))
    if previous >= 0:
        before = before[previous + 2 :]
    for rel, cue in _CUES:
        match = cue.search(before[-120:])
        if match:
            subject = before[: len(before) - len(before[-120:]) + match.start()]
            role_cue = match.group(0).split()[0].casefold() in ROLE_WORDS
            if _asserted(sentence[position:], before, subject, match.group(0), role_cue) \
                    and _page_is_subject(subject, previous >= 0, self_names, role_cue):
                return rel
            return "mentions"
    return "mentions"


# Words that make a sentence something other than a fact about the page (see _asserted).
_CONDITIONAL = frozenset("if when whenever unless once while until whether".split())
_SECOND_PERSON = frozenset("you you're you've you'll you'd your yours yourself yourselves"
                           .split())
_NEGATION = frozenset("not never no cannot neither nor without".split())
_GENERIC = frozenset("any every whichever whatever".split())
_MODAL = frozenset("can could should would may might must shall will to".split())
_BE = frozenset("is are was were am been".split())
_ADVERBS = frozenset("also now still currently already then often usually typically always"
                     " only just even easily mainly mostly primarily actively".split())
# Cues in their base form: with nothing before them, an instruction ("Rely on [[X]] for …").
_BASE_CUES = frozenset("invest work depend rely report belong run".split())
# Cues that read "… by [[X]]" themselves; any other cue followed by "by" is passive.
_BY_CUES = re.compile(r"\b(?:caused|blocked|employed)\s+by\b", re.IGNORECASE)


def _asserted(rest: str, before: str, subject: str, cue: str, role_cue: bool) -> bool:
    """False when the words around a cue say something other than a fact: a question, a
    condition ("If you're using [[X]]", "when using [[X]]"), the reader addressed ("you can run on
    [[X]]", "depends on your [[plan]]"), a negation ("is not part of [[X]]"), a generic claim
    ("works for any [[X]]"), a modal or an infinitive ("can run on [[X]]"), an instruction ("Rely
    on [[X]]"), a passive ("Founded by [[X]]": the other way round), or a gerund that is not a
    progressive verb ("built using [[X]]", "Using [[X]], you can …"; "she is using [[X]]" and a
    note that is one phrase, "Using [[Ethernet]] for WANs.", stay). ``rest`` is the sentence from
    the link on, ``before`` the words before it, ``subject`` those before the cue."""
    if rest.rstrip().endswith(("?", "？")):
        return False
    words = [w.casefold().replace("’", "'") for w in _WORD.findall(before)]
    for word in words:
        if word in _CONDITIONAL or word in _SECOND_PERSON or word in _NEGATION \
                or word in _GENERIC or word.endswith("n't"):
            return False
    if re.search(r"\bby\b", cue, re.IGNORECASE) and not _BY_CUES.search(cue):
        return False
    if role_cue:
        return True  # "promoted to CTO at [[X]]": a title, not a verb that "to" or "can" bends
    lead = [w.casefold().replace("’", "'") for w in _WORD.findall(subject)]
    while lead and lead[-1] in _ADVERBS:
        lead.pop()
    previous = lead[-1] if lead else None
    if previous in _MODAL:
        return False
    verb = cue.split()[0].casefold()
    if verb.endswith("ing"):
        if previous is None:
            # A gerund opening the sentence: a note's own phrase unless a clause follows it.
            after = rest.split("]]", 1)[-1] if rest.startswith("[[") else rest
            return "," not in after and not any(
                w.casefold().replace("’", "'") in _SECOND_PERSON for w in _WORD.findall(after))
        return previous in _BE or previous.endswith(("'s", "'re"))
    return not (previous is None and verb in _BASE_CUES)


_WORD = re.compile(r"[\w'’-]+")


AUX = frozenset("is was are were has had have will would also then and who now later recently"
                " previously still became becomes".split())
ROLE_WORDS = frozenset("ceo cto coo cfo vp head lead engineer manager partner director designer"
                       " analyst scientist recruiter intern principal associate founder".split())


def _page_is_subject(subject: str, after_link: bool, self_names: frozenset[str],
                     role_cue: bool) -> bool:
    if after_link:
        # "[[A]] founded [[B]]": the subject is another page, not this one.
        return False
    if "," in subject or ";" in subject:
        return False
    words = _WORD.findall(subject)
    for index, word in enumerate(words):
        low = word.casefold()
        if low in PRONOUNS or low in self_names or not word[:1].isupper():
            continue
        following = words[index + 1] if index + 1 < len(words) else None
        if index == 0 and following is not None and following.casefold() not in AUX:
            continue  # the capitalised first word of a description: "Seed fund that invested"
        if role_cue and (following is None or following[:1].isupper()):
            continue  # part of a title-case role: "Staff Engineer at"
        return False  # a name as the subject: "Tom advises", "Tom is a partner at"
    return True


def self_names(title: str, aliases: tuple[str, ...] = ()) -> frozenset[str]:
    """Lower-case words by which a page may refer to itself."""
    return frozenset(w.casefold() for name in (title, *aliases) for w in _WORD.findall(name))


def _link_position(sentence: str, target: str) -> int:
    for needle in (f"[[{target}", f"({target}", target):
        found = sentence.find(needle)
        if found >= 0:
            return found
    return -1


def date_floor(value: str | None) -> str | None:
    """``2024`` → ``2024-01-01``, ``2024-05`` → ``2024-05-01``; full dates unchanged."""
    if not value:
        return None
    value = str(value)[:10]
    if len(value) == 4:
        return f"{value}-01-01"
    if len(value) == 7:
        return f"{value}-01"
    return value


def date_ceiling(value: str | None) -> str | None:
    """``2024`` → ``2024-12-31``, ``2024-02`` → ``2024-02-29``; full dates unchanged."""
    if not value:
        return None
    value = str(value)[:10]
    if len(value) == 4:
        return f"{value}-12-31"
    if len(value) == 7:
        try:
            year, month = int(value[:4]), int(value[5:7])
            return f"{value}-{calendar.monthrange(year, month)[1]:02d}"
        except ValueError:
            return f"{value}-31"
    return value


def fold_relation(value: str) -> str | None:
    """Canonical relation or None when outside the vocabulary."""
    try:
        return vocabulary.relation(value)
    except VocabularyError:
        return None
