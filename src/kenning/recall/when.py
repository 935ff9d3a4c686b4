"""Dates named in a query: "what did we decide on 4 March 2026?" should prefer that day's pages.

Recognised: ISO dates (2026-03-04), day-month-year and month-day-year in English
("4 March 2026", "4th of March, 2026", "March 4, 2026", "Mar 4 2026"), and a month with its year
("March 2026", "in May, 2023"). A bare year is too broad to mean anything. Each date becomes a span
of days; a page dated inside the span is "when the query says", and one a few days off is close.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_PATTERNS = [
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
# How far from a named day a page still counts as close (people write "last week").
NEAR_DAYS = 10


@dataclass(frozen=True)
class Span:
    """A period the query names: one day or one month."""

    start: date
    end: date

    def closeness(self, when: date) -> float:
        """1.0 inside the span, falling linearly to 0 at NEAR_DAYS outside it."""
        if self.start <= when <= self.end:
            return 1.0
        gap = (self.start - when).days if when < self.start else (when - self.end).days
        return max(0.0, 1.0 - gap / NEAR_DAYS)


def spans(query: str) -> list[Span]:
    """Every day or month the query names (overlapping mentions are read once)."""
    found: list[Span] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            span = _span(match)
            if span is not None:
                found.append(span)
                taken.append((match.start(), match.end()))
    return found


def _span(match: re.Match[str]) -> Span | None:
    groups = match.groupdict()
    try:
        year = int(groups["year"])
        month = int(groups["mnum"]) if groups.get("mnum") else _MONTHS[
            groups["month"].lower().rstrip(".")]
        if groups.get("day"):
            day = date(year, month, int(groups["day"]))
            return Span(day, day)
        first = date(year, month, 1)
        return Span(first, first + timedelta(days=calendar.monthrange(year, month)[1] - 1))
    except (KeyError, ValueError):
        return None


def closeness(named: list[Span], page_date: str | None) -> float:
    """How well a page's date fits the dates a query names (0 when it names none)."""
    if not named or not page_date:
        return 0.0
    try:
        when = date.fromisoformat(page_date[:10])
    except ValueError:
        return 0.0
    return max(span.closeness(when) for span in named)
