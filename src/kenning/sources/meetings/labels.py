"""Speaker labels as people write them: what a ``label:`` at the start of a line says.

Transcripts from Zoom, Teams, Meet and people's own notes label a turn with a display name:
``Sarah Chen``, ``sam``, ``jo-smith``, ``jo_smith``, ``SARAH CHEN``, ``Dr. Kim``, ``王小明``,
``Felix (Geth)``, ``Pablo Deymo | Lambda``, ``Chris - Base``, ``dan (danceratopz)``. A label
gives a :class:`Label`: the text as written, the person's display name, the organization the
label names and the label's shape.

**The rule (precision first).** A line's prefix before a colon is a speaker only when the label
has the shape of a name *and* enough evidence says it is one; speech that contains a colon
("Note: we shipped", "The plan is: ship it", "https://…", "10:30") is never a speaker.

- *Shape.* Capitalised words (each word starts with a capital or a caseless letter, as in CJK;
  particles such as "de" or "van" allowed), all capitals, an honorific ("Dr. Kim"), a lowercase
  handle (one token of letters, digits, ``-``, ``_``, ``.``) or two or three lowercase words.
  At most 60 characters and six words; no sentence punctuation at the end; no word of a heading
  or a sentence ("Next steps", "Action items", "The plan", "My take" …, see ``_STOP``).
- *Evidence*, scored by :func:`score`: capitalised and all-capitals names are labels on their
  own (2 points). A lowercase handle has 1 point, and gains 1 when the same label starts
  another line of the file, 1 when it sits where a label must be (a caption cue's start, a
  ``Name  0:03`` line of its own) and 1 when the file has other speakers. Lowercase words
  have 0 and gain the same points. A label needs 2 points. So ``sam:`` is a speaker in a
  transcript with other speakers or when it repeats, but ``so: we ship`` in dictation is not.
- *Not a person.* "Speaker 2", "Unknown", "Q", "Zoom user" and marks nobody says ("Break",
  "Jingle", "Music", "Outro") are labels of their own turns, never attendees.
- *Display name.* Names are kept as written; a handle's words are capitalised and its
  separators become spaces (``jo-smith`` → "Jo Smith", ``sam`` → "Sam"); all-capitals names are
  capitalised word by word (short all-capitals initials such as ``RPR`` stay).
- *Organization.* ``Name | Org``, ``Name (Org)``, ``Name - Org`` and ``Name @ Org`` name an
  organization when the part after the name looks like one (capitalised or a domain, at most
  five words). Pronouns (``(she/her)``), meeting roles (``(Host)``, ``(Guest)``), given names
  (``Robert (Bob)``) and lowercase handles (``(tbenr)``) are not organizations; a handle in
  parentheses is kept as an alias.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kenning.sources.lexicon import given_names

MAX_LABEL = 60
NEEDED = 2  # points a label needs (see score)

NAME, CAPS, HANDLE, WORDS, GENERIC = "name", "caps", "handle", "words", "generic"


@dataclass(frozen=True)
class Label:
    """A speaker label: as written, the person it names, and what else the label says."""

    raw: str                 # the label as written, spaces normalised ("Felix (Geth)")
    name: str                # the person's display name ("Felix")
    shape: str               # name | caps | handle | words | generic
    org: str | None = None   # organization named in the label ("Geth")
    alias: str | None = None  # another name the label gives ("danceratopz" in "dan (danceratopz)")


# Words that start notes, headings and sentences, never a speaker's label (folded).
_STOP = frozenset("""
a about action actions add added addendum after agenda agreed ah aim all also an and answer
answers any anyway appendix approach april are as ask asks at attendees august background basically
be because before best beware blocker blockers bonus bottom btw but by caveat cc chapter check
choice clarification call comment comments conclusion conclusions conf confirmed consensus context
correction cost cost costs date day deadline dear december decided decision decisions definition
description details disclaimer discussion do done draft e.g e-mail edit edited edits email end eta
etc eg example examples excerpt fact facts faq february feedback figure final finally first fix
fixed follow for from friday fw fwd fyi gist goal goals good great hello here hey hi hint how
however
i i.e ie idea ideas if important in info input intro introduction is issue issues it item items
january july june key keywords lesson lessons link links location log march maybe meeting
memo minutes mine monday more motivation my name next nb no nope not note notes november now
objective objectives observation october of ok okay on one open option options or our outcome
outcomes output overview owner owners p.s part participants pass phase please plan plans point
points pre-read pro problem problems proposal proposals ps purpose q&a question questions quote
re re-cap reason reasons recap recommendation recommendations ref reference references related
reminder reply request requests requirement requirements response result results resolution
review risk risks role room rule rules saturday say says scope second section see september
sent session side so solution solutions source sources spoiler status step steps subject
sunday summary tbd tl;dr tldr take takeaway takeaways task tasks tbc thanks that the their then
there these they third this those thursday time tip tips title to to-do todo today tomorrow topic
topics total tuesday update updated updates url usage use warning warnings was we wednesday well
what when where which who why with wrap-up yes yesterday your
http https ftp mailto file www
""".split())
# Marks in a transcript that nobody says ("**Break:** [25:10]", "Jingle:", "Music:").
_MARKERS = frozenset("""
break jingle intro outro interlude music ad ads sponsor sponsors advertisement applause laughter
crosstalk silence inaudible transcript recording
""".split())
# Last words of a heading ("Next Steps", "Action Items", "Open Questions"), never of a name.
_HEAD_NOUNS = frozenset("""
actions agenda blockers comments decisions details examples goals ideas issues items lessons links
minutes notes options outcomes points problems proposals questions reasons recommendations
references requirements results risks solutions steps summary takeaways tasks topics updates
""".split())
# Parenthesised or piped parts that describe the speaker's part in the call, not an employer.
_NOT_ORG = frozenset("""
host co-host cohost guest guests me you moderator chair chairperson facilitator presenter
panelist panellist attendee participant organizer organiser scribe notetaker note-taker interviewer
interviewee interpreter translator external internal remote online offline phone mobile audio video
zoom teams meet iphone android ipad web browser dial-in he him his she her hers they them their
any all pronouns it its one muted late
""".split())
_PARTICLES = frozenset("de da del della der den di du la le van von ten ter bin al el y".split())
_HONORIFICS = frozenset("dr mr mrs ms mx prof sir dame rev hon".split())
_GENERIC = re.compile(r"(?i)^(?:speaker|spk|participant|guest|person|unknown|interviewer|"
                      r"interviewee|moderator|q|a|zoom user|iphone|ipad|android)(?:[ _-]?\d+)?$")
# What a meeting app adds around a name: Zoom's "Audio shared by Sam Lee", a device's name
# ("Boma’s iPhone", "Nico mobile"). The name inside is the label.
_WRAPPED = re.compile(r"(?i)^(?:audio|screen) shared by (?P<a>.+)$|^(?P<b>.+?)['’]s "
                      r"(?:iphone|ipad|android|pixel|galaxy|phone|macbook(?: \w+)?|laptop|pc)$"
                      r"|^(?P<c>.+?) (?:mobile|phone|iphone|ipad|android|\(mobile\))$")
_HANDLE = re.compile(r"^[^\W_][\w.'’-]*$")
_AFFIX = re.compile(r"^(?P<name>.+?)\s*(?:\|\s*(?P<pipe>.+)|[(\[](?P<paren>[^()\[\]]+)[)\]]|"
                    r"\s[-–—]\s(?P<dash>.+)|\s@\s?(?P<at>.+))$")


def parse(raw: str) -> Label | None:
    """The :class:`Label` a label text names, or None when it does not have a label's shape."""
    text = " ".join(raw.replace("*", " ").split()).strip("_ ")  # "_Note:_" is italics
    if not text or len(text) > MAX_LABEL:
        return None
    if _GENERIC.match(text) or is_marker(text):
        return Label(text, text, GENERIC)  # a turn, but nobody's: "Speaker 2", "Break"
    org = alias = None
    name = text
    wrapped = _WRAPPED.match(text)
    if wrapped:
        inner = next(g for g in wrapped.groups() if g is not None).strip()
        if _person(inner) is not None:
            name = inner
    m = _AFFIX.match(name)
    if m:
        extra = next(g for g in (m.group("pipe"), m.group("paren"), m.group("dash"),
                                 m.group("at")) if g is not None).strip()
        # "Jay || Silence Labs", "Tomás | Lambda | Ethrex", "mo (@mmjahanara)": the first part
        extra = re.split(r"\s*\|\s*", extra.strip("| "))[0].lstrip("@").strip()
        person = _person(m.group("name"))
        if person is not None:
            name = m.group("name")
            kind = _affix_kind(extra, piped=m.group("pipe") is not None
                               or m.group("at") is not None)
            if kind == "org":
                org = extra
            elif kind == "alias":
                alias = extra
            elif kind is None and m.group("paren") is None:
                return None  # "Budget - what we spend": not a name and an organization
    shape = _person(name)
    if shape is None:
        return None
    return Label(text, display_name(name.strip(), shape), shape, org, alias)


def is_marker(label: str) -> bool:
    """A mark in a transcript that nobody says: "Break", "Jingle", "Music", "Outro"."""
    words = label.split()
    return 0 < len(words) <= 3 and _fold(words[0]) in _MARKERS


def _person(name: str) -> str | None:
    """The shape of a person's name, or None when ``name`` is not one."""
    name = name.strip()
    if not name or not any(ch.isalpha() for ch in name):
        return None
    if name.endswith((".", ",", "?", "!", ";")) and not _honorific_only(name) and \
            not re.search(r"\s[^\W\d_]\.$", name):  # "Karim T." ends with an initial
        return None
    words = name.split()
    if len(words) > 6:
        return None
    first, last = _fold(re.split(r"[-_.]", words[0])[0] or words[0]), _fold(words[-1])
    if (first in _STOP or first in _MARKERS or _fold(words[0]) in _STOP) and \
            first not in given_names():
        return None  # "Note", "The plan", "Next steps", "So", "e.g"
    if re.fullmatch(r"(?:[^\W\d_]\.)+[^\W\d_]?\.?", name):
        return None  # "e.g.", "i.e", "a.m.": abbreviations
    if len(words) > 1 and last in _HEAD_NOUNS:
        return None
    if _cjk(name):
        return NAME  # "王小明", "田中さん": no letter cases to go by
    if len(words) == 1 and _HANDLE.match(name) and not _capitalised(name):
        # "sam", "jo-smith", "ethDreamer", "0xBonk"
        return HANDLE if sum(ch.isalpha() for ch in name) >= 2 else None
    letters = [ch for ch in name if ch.isalpha()]
    if len(letters) >= 2 and all(ch.isupper() or not ch.islower() for ch in letters) and \
            any(ch.isupper() for ch in letters):
        return CAPS
    if all(_capitalised(w) or w.lower() in _PARTICLES or w.rstrip(".").lower() in _HONORIFICS
           for w in words) and _capitalised(words[-1]):
        return NAME
    if 2 <= len(words) <= 3 and all(re.fullmatch(r"[^\W\d_][\w'’.-]*", w) for w in words):
        return WORDS  # "jo smith", "Lion dapplion", "ivo Georgiev": weighed by score
    return None


def _honorific_only(name: str) -> bool:
    return name.rstrip(".").lower() in _HONORIFICS


def _capitalised(word: str) -> bool:
    first = next((ch for ch in word if ch.isalnum()), "")
    return bool(first) and (first.isupper() or (first.isalpha() and not first.islower()))


def _cjk(name: str) -> bool:
    return all(not ch.isalpha() or not (ch.isupper() or ch.islower()) for ch in name)


def _affix_kind(extra: str, *, piped: bool) -> str | None:
    """``org``, ``alias``, ``drop`` (a pronoun, a role) or None (not a label's affix)."""
    words = extra.split()
    folded = _fold(extra)
    if not words or len(words) > 5 or len(extra) > 40 or re.fullmatch(r"[\d:.,]+", extra):
        return None
    if "/" in extra or folded in _NOT_ORG or all(_fold(w) in _NOT_ORG for w in words):
        return "drop"
    if re.fullmatch(r"[A-Z]{2,6}[- ]?\d+", extra):
        return "drop"  # "EIP-8182", "RFC 9110": what the speaker works on, not where
    if len(extra) <= 2:
        return "alias"  # "(M)", "(JS)": initials
    if len(words) == 1 and extra.islower() and not piped:
        return "alias"  # "dan (danceratopz)": a handle
    if len(words) == 1 and folded in given_names():
        return "alias"  # "Robert (Bob)"
    if _fold(words[0]) in _STOP or _fold(words[-1]) in _HEAD_NOUNS:
        return None
    # After "|" anything but a role is the organization ("Tullio | Erigon", "Jo | acme");
    # after "(", "-" or "@" it must look like a name or a domain ("Felix (Geth)", "Tectonic.xyz").
    if piped or extra[0].isupper() or extra[0].isdigit() or re.search(r"\w\.\w{2,}$", extra):
        return "org"
    return None


def display_name(name: str, shape: str) -> str:
    """How a label's person is named: handles and all-capitals names get capital letters."""
    name = " ".join(name.split())
    if shape == HANDLE:
        parts = [p for p in re.split(r"[-_.]+", name) if p]
        if any(ch.isdigit() or ch.isupper() for ch in name) or not parts:
            return name  # "0xBonk", "ethDreamer": written as their owner chose
        return " ".join(p.capitalize() + ("." if len(p) == 1 else "") for p in parts)
    if shape == WORDS:
        if not name.islower():
            return name  # "Lion dapplion": mixed case is the owner's choice
        return " ".join(w if w in _PARTICLES else w.capitalize() for w in name.split())
    if shape == CAPS:
        words = name.split()
        if len(words) == 1 and len(name) <= 4:
            return name  # initials: "RPR", "KG"
        return " ".join(_cap_word(w) for w in words)
    return name


def _cap_word(word: str) -> str:
    def one(part: str) -> str:
        i = next((k for k, ch in enumerate(part) if ch.isalpha()), 0)  # "$STDOUT" → "$Stdout"
        return part[:i] + part[i:i + 1].upper() + part[i + 1:].lower()

    return "-".join(one(p) for p in word.split("-"))


def score(label: Label, *, repeats: bool, placed: bool, others: bool) -> int:
    """The evidence that ``label`` is a speaker (see the module docstring; 2 is enough)."""
    base = {NAME: 2, CAPS: 2, GENERIC: 2, HANDLE: 1, WORDS: 0}[label.shape]
    if base >= NEEDED:
        return base
    return base + int(repeats) + int(placed) + int(others)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower().strip("'’\"()")


