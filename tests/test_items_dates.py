"""Due dates in words, resolved against the day they were written (items/dates.py)."""

from __future__ import annotations

from datetime import date

import pytest

from kenning.builder.items.dates import find_phrase, resolve_due

MONDAY = date(2026, 3, 2)     # a Monday
FRIDAY = date(2026, 3, 6)


@pytest.mark.parametrize(("text", "written", "due", "phrase"), [
    ("I'll get the deck over to you by Thursday", MONDAY, "2026-03-05", "by Thursday"),
    ("by Thursday", FRIDAY, "2026-03-12", "by Thursday"),          # the next one, not today's
    ("on Monday", MONDAY, "2026-03-09", "on Monday"),               # never the writing day
    ("Thursday at the latest", MONDAY, "2026-03-05", "Thursday"),
    ("next Tuesday", MONDAY, "2026-03-10", "next Tuesday"),
    ("we will deliver the pilot report on 14 April", MONDAY, "2026-04-14", "on 14 April"),
    ("April 14th", MONDAY, "2026-04-14", "April 14th"),
    ("the 3rd of March", MONDAY, "2026-03-03", "the 3rd of March"),
    ("by 2026-05-01", MONDAY, "2026-05-01", "by 2026-05-01"),
    ("I can write up the notes by tomorrow", MONDAY, "2026-03-03", "by tomorrow"),
    ("the day after tomorrow", MONDAY, "2026-03-04", "the day after tomorrow"),
    ("before EOD", MONDAY, "2026-03-02", "EOD"),
    ("by end of day", FRIDAY, "2026-03-06", "by end of day"),
    ("by COB Friday", MONDAY, "2026-03-06", "Friday"),               # the day wins over COB
    ("tonight", MONDAY, "2026-03-02", "tonight"),
    ("before the month is out", MONDAY, "2026-03-31", "before the month is out"),
    ("within the week", MONDAY, "2026-03-06", "within the week"),
    ("this week", MONDAY, "2026-03-06", "this week"),
    ("before the week is out", MONDAY, "2026-03-06", "before the week is out"),
    ("I'll circle back next week", MONDAY, "2026-03-13", "next week"),
    ("by the end of next week", MONDAY, "2026-03-13", "by the end of next week"),
    ("early next week", FRIDAY, "2026-03-09", "early next week"),
    ("end of month", MONDAY, "2026-03-31", "end of month"),
    ("by month-end", date(2026, 2, 10), "2026-02-28", "by month-end"),
    ("next month", MONDAY, "2026-04-30", "next month"),
    ("in two weeks", MONDAY, "2026-03-16", "in two weeks"),
    ("within 3 days", MONDAY, "2026-03-05", "within 3 days"),
    ("within five business days", FRIDAY, "2026-03-13", "within five business days"),
    ("in a couple of weeks", MONDAY, "2026-03-16", "in a couple of weeks"),
    ("in November", MONDAY, "2026-11-30", "in November"),
    ("by end of Q2", MONDAY, "2026-06-30", "by end of Q2"),
    ("end of the year", MONDAY, "2026-12-31", "end of the year"),
])
def test_phrases_resolve_against_the_writing_day(text: str, written: date, due: str,
                                                 phrase: str) -> None:
    assert resolve_due(text, written) == (due, phrase)


@pytest.mark.parametrize("text", [
    "Thanks for the update.", "May I ask a question?", "the Q3 forecast looks fine",
    "we march on", "I saw it on the news", "",
])
def test_no_due_phrase(text: str) -> None:
    assert resolve_due(text, MONDAY) == (None, None)


def test_a_past_date_stays_in_the_past_when_close_before_the_writing_day() -> None:
    # Written on 2 March: "by 20 February" is a date already gone (kept, the extractor notes
    # it); written in June, "by 5 January" is too far back to be meant: it is next year's.
    assert resolve_due("by 20 February", MONDAY) == ("2026-02-20", "by 20 February")
    assert resolve_due("by 5 January", date(2026, 6, 1)) == ("2027-01-05", "by 5 January")
    assert resolve_due("by 2026-02-01", MONDAY)[0] == "2026-02-01"


def test_without_a_writing_day_only_absolute_dates_resolve() -> None:
    assert resolve_due("send it Friday", None) == (None, "Friday")
    assert resolve_due("by 2026-05-01", None) == ("2026-05-01", "by 2026-05-01")
    assert resolve_due("on 14 April 2027", None) == ("2027-04-14", "on 14 April 2027")
    assert find_phrase("can you do it by next week?") == "by next week"


@pytest.mark.parametrize("text", ["by 31 February", "on 99 March", "in 10000 days",
                                  "2026-13-45", "\x00\ufffd by Thursday\x00"])
def test_odd_text_never_raises(text: str) -> None:
    due, _ = resolve_due(text, MONDAY)
    assert due is None or len(due) == 10
