"""Due dates stated in words, resolved against the day they were written.

``resolve_due("I'll send it by Thursday", date(2026, 10, 5))`` → ``("2026-10-08", "by Thursday")``.

Read (case-insensitive, first match in the sentence wins, most specific first):

- ISO dates (``2026-11-03``), day + month (``14 April``, ``14th of April``, ``April 14``,
  ``Apr 14, 2027``), numeric ``11/3`` is NOT read (month/day order is a guess);
- ``today``, ``tonight``, ``EOD`` / ``end of (the) day`` / ``COB`` / ``close of business``
  (the day written), ``tomorrow`` (+1), ``the day after tomorrow`` (+2);
- weekdays: ``(by|on|before|until|this) Thursday`` is the first such day after the day written
  (written on a Thursday: a week later); ``next Thursday`` the Thursday of the following week;
- ``this week`` / ``end of (the) week`` / ``EOW`` (that week's Friday), ``next week`` (Friday of
  the next week), ``end of next week``, ``(early|mid) next week`` (Monday / Wednesday);
- ``end of (the) month`` / ``EOM`` / ``this month`` / ``before the month is out`` / ``within
  the month`` (the month's last day; the same shapes for the week), ``next month``
  (its last day), ``in <Month>`` / ``by <Month>`` / ``end of <Month>`` (that month's last day,
  the next one on or after the day written);
- ``in / within N days|weeks|months`` (numbers as digits or words up to twenty, "a couple of");
- ``end of (the) quarter`` / ``Q3`` (the quarter's last day), ``end of (the) year``.

A day-and-month without a year is the next such date on or after the day written, unless it lies
less than 60 days before it (then it is the written year's, i.e. a date in the past: the
extractor keeps it with a note). Nothing here raises.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD = {name: i for i, name in enumerate(WEEKDAYS)}
_WD.update({name[:3]: i for i, name in enumerate(WEEKDAYS)})
_WD.update({"tues": 1, "weds": 2, "thur": 3, "thurs": 3})
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MON = {name: i + 1 for i, name in enumerate(MONTHS)}
_MON.update({name[:3]: i + 1 for i, name in enumerate(MONTHS)})
_MON["sept"] = 9
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
        "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
        "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
        "eighteen": 18, "nineteen": 19, "twenty": 20, "a couple of": 2, "a few": 3,
        "couple of": 2, "few": 3}

_WD_RE = (r"(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|urday|"
          r"rsday)?")
_MON_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
           r"aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_NUM_RE = r"(?:\d{1,3}|a couple of|couple of|a few|few|an?|" + "|".join(
    k for k in _NUM if " " not in k and len(k) > 2) + ")"
_LEAD = r"(?:(?:by|on|before|until|till|through|for|due|no later than|latest|at the latest)\s+)?"
_PAST_WINDOW = 60  # days: a year-less date this close before the writing day stays in the past

_RAW: list[tuple[str, str]] = [
    ("iso", rf"\b{_LEAD}(?P<y>\d{{4}})-(?P<m>\d{{2}})-(?P<d>\d{{2}})\b"),
    ("dmy", rf"\b{_LEAD}(?:(?:the\s+)?{_WD_RE},?\s+)?(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?"
            rf"(?:\s+of)?\s+(?P<mon>{_MON_RE})\.?(?:,?\s+(?P<y>\d{{4}}))?\b"),
    ("mdy", rf"\b{_LEAD}(?:{_WD_RE},?\s+)?(?P<mon>{_MON_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?"
            rf"\b(?:,?\s+(?P<y>\d{{4}}))?"),
    ("eod", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+(?:the\s+)?(?:business\s+)?day|eod|cob|"
            r"close\s+of\s+business|end\s+of\s+play|tonight|today|this\s+(?:afternoon|evening|"
            r"morning))\b(?!\s+(?:week|month|(?:on\s+|this\s+|next\s+)?(?:mon|tue|wed|thu|fri|"
            r"sat|sun|tomorrow|\d)))"),
    ("dat", r"\b(?:by\s+)?the\s+day\s+after\s+tomorrow\b"),
    ("tomorrow", r"\b(?:by\s+)?tomorrow\b"),
    ("next_eow", r"\b(?:by\s+)?(?:the\s+)?end\s+of\s+next\s+week\b"),
    ("early_next", r"\b(?:early|beginning\s+of|start\s+of)\s+next\s+week\b"),
    ("mid_next", r"\bmid-?\s*next\s+week\b"),
    ("next_wd", rf"\b{_LEAD}next\s+(?P<wd>{_WD_RE})\b"),
    ("wd", rf"\b{_LEAD}(?:this\s+(?:coming\s+)?|coming\s+)?(?P<wd>{_WD_RE})\b"),
    ("next_week", r"\b(?:by\s+|during\s+|sometime\s+|some\s+time\s+)?next\s+week\b"),
    ("eow", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?week|eow|this\s+week|"
            r"later\s+this\s+week|the\s+week's\s+end|before\s+the\s+week\s+is\s+(?:out|over|done)|"
            r"within\s+the\s+week)\b"),
    ("next_month", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+)?next\s+month\b"),
    ("eom", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?month|eom|month[- ]end|"
            r"this\s+month|later\s+this\s+month|before\s+the\s+month\s+is\s+(?:out|over|done)|"
            r"within\s+the\s+month|the\s+month's\s+end)\b"),
    ("in_n", rf"\b(?:in|within)\s+(?:the\s+next\s+)?(?P<n>{_NUM_RE})\s+(?P<unit>"
             r"(?:business\s+|working\s+)?days?|weeks?|months?)\b"),
    ("in_mon", rf"\b(?:(?:by|in|during|before|until)\s+(?:(?:the\s+)?(?:end|middle)\s+of\s+)?|"
               rf"(?:the\s+)?end\s+of\s+|(?:early|late|mid-?)\s*)(?P<mon>{_MON_RE})\b"
               r"(?!\s+\d)(?:\s+(?P<y>\d{4}))?"),
    ("eoq", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?quarter|eoq|"
            r"(?:(?:by|in|before|until|during|end\s+of)\s+(?:the\s+)?(?:end\s+of\s+)?)"
            r"q(?P<q>[1-4])(?:\s+(?P<y>\d{4}))?)\b(?!\s+(?:forecast|results|report|numbers|"
            r"plan|budget|review|earnings|figures|deck|targets?|goals?|okrs?))"),
    ("eoy", r"\b(?:by\s+)?(?:(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?year|eoy|year[- ]end)\b"),
]
_PATTERNS = [(name, re.compile(rx, re.IGNORECASE)) for name, rx in _RAW]
# Words that make a month name something else ("May I ask", "march on").
_MAY_VERB = re.compile(r"\bmay\s+(?:i|we|you|be|have|not|also|need|want|well|take|help|ask)\b",
                       re.IGNORECASE)


def _friday(d: date) -> date:
    return d + timedelta(days=(4 - d.weekday()) % 7) if d.weekday() <= 4 else d


def _month_end(year: int, month: int) -> date:
    while month > 12:
        month -= 12
        year += 1
    return date(year, month, calendar.monthrange(year, month)[1])


def _year_less(written: date, month: int, day: int) -> date | None:
    try:
        this = date(written.year, month, day)
    except ValueError:
        return None
    if this >= written or (written - this).days < _PAST_WINDOW:
        return this
    try:
        return date(written.year + 1, month, day)
    except ValueError:
        return None


def _num(text: str) -> int | None:
    text = " ".join(text.lower().split())
    if text.isdigit():
        return int(text)
    return _NUM.get(text)


def resolve_due(phrase_or_sentence: str, written: date | None) -> tuple[str | None, str | None]:
    """(ISO due date, the phrase it came from) for the first due phrase in the text; (None, the
    phrase) when a phrase needs the writing day and there is none; (None, None) when the text
    states no due date."""
    try:
        return _resolve(phrase_or_sentence or "", written)
    except (ValueError, OverflowError, TypeError):
        return None, None


def find_phrase(text: str) -> str | None:
    """The due phrase in ``text`` (as written), whatever the writing day."""
    return _resolve(text, None)[1]


# Every pattern needs one of these: most sentences are turned away by one search.
_ANY = re.compile(r"\d|\b(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
                  r"nov|dec|tomorrow|today|tonight|eod|cob|eow|eom|eoq|eoy|close|end|week|"
                  r"month|quarter|year|day|days|morning|afternoon|evening|q[1-4])",
                  re.IGNORECASE)


def _resolve(text: str, written: date | None) -> tuple[str | None, str | None]:
    if not _ANY.search(text):
        return None, None
    hits: list[tuple[int, int, str, re.Match[str]]] = []
    for order, (name, rx) in enumerate(_PATTERNS):
        for m in rx.finditer(text):
            if name in ("in_mon", "dmy", "mdy") and m.group("mon").lower().startswith("may") \
                    and _MAY_VERB.match(text, m.start("mon")):
                continue
            if name == "in_mon" and m.group("mon").lower() in ("mar", "may", "jun", "jul",
                                                                "aug", "dec") \
                    and not m.group("mon")[0].isupper():
                continue  # "in march" as a verb / "may" as a modal: months are capitalised
            if name == "wd" and m.group("wd").lower() in ("sat", "sun", "wed", "mon") \
                    and not m.group("wd")[0].isupper():
                continue
            if name == "wd" and m.group("wd").lower() not in _WD and \
                    m.group("wd").lower()[:3] not in _WD:
                continue
            hits.append((order, m.start(), name, m))
            break
    if not hits:
        return None, None
    # The first phrase in the text; a bare weekday or date ("our call Friday") only when no
    # phrase with a lead word ("by", "on", "before" …) or of another shape is there.
    def weak(name: str, m: re.Match[str]) -> int:
        return int(name in ("wd", "dmy", "mdy") and not re.match(
            r"(?i)(?:by|on|before|until|till|through|due|no later than|this|coming)\b",
            m.group(0)))

    hits.sort(key=lambda h: (weak(h[2], h[3]), h[1], h[0]))
    _, _, name, m = hits[0]
    phrase = " ".join(m.group(0).split())
    if written is None:
        if name == "iso":
            return _iso_of(m), phrase
        if name in ("dmy", "mdy") and m.group("y"):
            return _dm(m, None), phrase
        return None, phrase
    return _value(name, m, written), phrase


def _iso_of(m: re.Match[str]) -> str | None:
    try:
        return date(int(m.group("y")), int(m.group("m")), int(m.group("d"))).isoformat()
    except ValueError:
        return None


def _dm(m: re.Match[str], written: date | None) -> str | None:
    month = _MON.get(m.group("mon").lower().rstrip("."))
    if month is None:
        month = _MON.get(m.group("mon").lower()[:3])
    day = int(m.group("d"))
    if month is None or not 1 <= day <= 31:
        return None
    if m.group("y"):
        try:
            return date(int(m.group("y")), month, day).isoformat()
        except ValueError:
            return None
    if written is None:
        return None
    found = _year_less(written, month, day)
    return found.isoformat() if found else None


def _value(name: str, m: re.Match[str], written: date) -> str | None:
    if name == "iso":
        return _iso_of(m)
    if name in ("dmy", "mdy"):
        return _dm(m, written)
    if name == "eod":
        return written.isoformat()
    if name == "tomorrow":
        return (written + timedelta(days=1)).isoformat()
    if name == "dat":
        return (written + timedelta(days=2)).isoformat()
    monday = written - timedelta(days=written.weekday())
    if name == "next_eow" or name == "next_week":
        return (monday + timedelta(days=11)).isoformat()
    if name == "early_next":
        return (monday + timedelta(days=7)).isoformat()
    if name == "mid_next":
        return (monday + timedelta(days=9)).isoformat()
    if name == "next_wd":
        wd = _WD.get(m.group("wd").lower()) if m.group("wd").lower() in _WD else \
            _WD[m.group("wd").lower()[:3]]
        return (monday + timedelta(days=7 + wd)).isoformat()
    if name == "wd":
        key = m.group("wd").lower()
        wd = _WD[key] if key in _WD else _WD[key[:3]]
        ahead = (wd - written.weekday()) % 7 or 7
        return (written + timedelta(days=ahead)).isoformat()
    if name == "eow":
        return _friday(written).isoformat()
    if name == "eom":
        return _month_end(written.year, written.month).isoformat()
    if name == "next_month":
        return _month_end(written.year, written.month + 1).isoformat()
    if name == "in_n":
        n = _num(m.group("n"))
        if n is None or n > 400:
            return None
        unit = m.group("unit").lower()
        if "month" in unit:
            month = written.month + n
            year = written.year + (month - 1) // 12
            month = (month - 1) % 12 + 1
            day = min(written.day, calendar.monthrange(year, month)[1])
            return date(year, month, day).isoformat()
        if "week" in unit:
            return (written + timedelta(weeks=n)).isoformat()
        if "business" in unit or "working" in unit:
            d, left = written, n
            while left:
                d += timedelta(days=1)
                if d.weekday() < 5:
                    left -= 1
            return d.isoformat()
        return (written + timedelta(days=n)).isoformat()
    if name == "in_mon":
        month = _MON.get(m.group("mon").lower()) or _MON.get(m.group("mon").lower()[:3])
        if month is None:
            return None
        year = int(m.group("y")) if m.group("y") else written.year
        if not m.group("y") and month < written.month:
            year += 1
        return _month_end(year, month).isoformat()
    if name == "eoq":
        q = int(m.group("q")) if m.group("q") else (written.month - 1) // 3 + 1
        year = int(m.group("y")) if m.group("y") else written.year
        if not m.group("y") and m.group("q") and q < (written.month - 1) // 3 + 1:
            year += 1
        return _month_end(year, q * 3).isoformat()
    if name == "eoy":
        return date(written.year, 12, 31).isoformat()
    return None
