"""Timelines that stay readable: the build's old timeline lines folded into one line a month.

A page's ``## Timeline`` keeps its **recent window** verbatim: every line the build wrote whose
date is at most :data:`WINDOW_DAYS` days before the newest date of the build's lines on that page.
Older build lines are folded, per calendar month with at least :data:`MIN_FOLD` of them, into one
**month line** (see docs/vault-format.md, "5. Timeline")::

    - 2001-03 — 14 emails, mostly about California, power, crisis [source:: [[sources/email/a#L9]]]
      [source:: [[sources/email/b#L12]]]                       (one line on the page)

citing the month's first and last source (by date, then path); the count says how many there
are. What a month line stands for (each folded line: date, text, citation) is kept in the build
state (``pages[path]["folded"][month]``), so a new source in a folded month rewrites that
month's line exactly, and the mention log keeps every mention — nothing is lost.

Only the build's lines are folded: a top-level bullet ``- YYYY-MM-DD — text [source::
[[sources/…]]]`` with nothing indented under it, and a month line that is exactly what the build
last wrote for that month. Every other line of the section (a person's own entries, a line they
edited, a note indented under a line) stays byte for byte, in its order; the build's lines are
placed around them by date. The fold depends only on the lines, so a second build over
unchanged sources changes no byte.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from kenning.vault.page import TimelineEntry

WINDOW_DAYS = 60
MIN_FOLD = 2
WORDS_SHOWN = 3
SUBJECTS_LISTED = 3  # a month of at most this many lines names its subjects instead

_BUILD_LINE = re.compile(r"^- (?P<date>\d{4}-\d{2}-\d{2}) — (?P<text>.+?) "
                         r"\[source:: (?P<source>\[\[sources/[^\[\]]+\]\])\]$")
# How the build's own lines start (pages.py ``_timeline``, meeting lines); a line in the build's
# form saying anything else is the build's only when it wrote it (a model's line, kept in
# ``rec["model"]``), so a person's "- 2026-03-02 — Met at the offsite [source:: …]" stays.
_VERBS = ("Wrote in email ", "Received email ", "Copied on email ", "Attended ", "Chat ",
          "Organized ", "Invited to ", "Mentioned in ", "Transcript", "Calendar event")
_MONTH_LINE = re.compile(r"^- (?P<month>\d{4}-\d{2}) — ")
_DATED = re.compile(r"^[-*+] (?P<date>\d{4}(?:-\d{2}){0,2})[ ]")
_ANY_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SUBJECT = re.compile(r"“([^”]*)”|\[\[[^\]|]*\|([^\]]*)\]\]|\[\[([^\]]*)\]\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'&-]*[A-Za-z0-9]|[A-Za-z]")
_KINDS = (("email", "email", "emails"), ("meetings", "meeting", "meetings"),
          ("chats", "chat", "chats"), ("calendar", "calendar event", "calendar events"))
# Words that say nothing about what a thread is about.
_STOP = frozenset("""
a an and are as at be by for from has have in into is it its of on or our re fw fwd fyi the
per them they their there what when where which who how can could would should may might must
shall after before over under again also just only some any each other such than then too very
here his her him she he ours off one two next last let get got see our via regarding
this that to was we were will with you your i me my not no yes re: aw wg tr sv ref vs via
update updates meeting call question questions info information request follow up followup
draft final new please thanks thank hi hello today tomorrow week weekly monthly daily am pm
mail email e-mail message note notes attached attachment copy all out more about
""".split())


def _month_label(entries: list[tuple[str, str, str]]) -> str:
    counts: Counter[str] = Counter()
    for _, _, source in entries:
        folder = source[2:].split("/", 2)[1] if source.startswith("[[sources/") else ""
        counts[folder] += 1
    parts = []
    for folder, one, many in _KINDS:
        n = counts.pop(folder, 0)
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    other = sum(counts.values())
    if other:
        parts.append(f"{other} {'source' if other == 1 else 'sources'}")
    return ", ".join(parts)


def subject_of(text: str) -> str:
    """What one timeline line is about: the quoted subject (“…”) or the linked page's title."""
    m = _SUBJECT.search(text)
    if m is None:
        return text
    return next(g for g in m.groups() if g is not None)


def about(subjects: list[str]) -> str:
    """``mostly about w1, w2, w3``: the words most of the month's subjects share (each counted
    once a subject; ties by first use); when none is shared, the subjects themselves (a few) or
    how many different ones there are."""
    seen: Counter[str] = Counter()
    first: dict[str, int] = {}
    forms: dict[str, Counter[str]] = {}
    order = 0
    for s in subjects:
        words = []
        for w in _WORD.findall(s):
            key = w.lower()
            if key in _STOP or len(key) < 3 or key.isdigit():
                continue
            if key not in words:
                words.append(key)
                forms.setdefault(key, Counter())[w] += 1
        for key in words:
            seen[key] += 1
            if key not in first:
                first[key] = order
                order += 1
    shared = sorted((k for k, n in seen.items() if n >= 2), key=lambda k: (-seen[k], first[k]))
    if shared:
        # Each word as it is written most often (ties: the form first written).
        shown = [max(forms[k].items(), key=lambda kv: kv[1])[0] for k in shared[:WORDS_SHOWN]]
        return "mostly about " + ", ".join(shown)
    distinct = list(dict.fromkeys(" ".join(s.split()) for s in subjects if s.strip()))
    if len(distinct) <= SUBJECTS_LISTED:
        return "about " + ", ".join(f"“{s}”" for s in distinct)
    return f"on {len(distinct)} subjects, first “{distinct[0]}”"


def month_line(month: str, entries: list[tuple[str, str, str]]) -> str:
    """The one line standing for ``entries`` ((date, text, citation), sorted) of ``month``."""
    cites = [entries[0][2]] if len(entries) == 1 else [entries[0][2], entries[-1][2]]
    fields = " ".join(f"[source:: {c}]" for c in cites)
    what = about([subject_of(t) for _, t, _ in entries])
    return f"- {month} — {_month_label(entries)}, {what} {fields}"


def _section(lines: list[str]) -> tuple[int, int] | None:
    """(first line after the first timeline heading, end) of the timeline section, or None:
    a heading of level 2 or deeper reading ``Timeline`` (any case), running to the next heading
    of the same or a higher level (vault-format.md, "Sections")."""
    fence = False
    start = level = None
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        m = _ANY_HEADING.match(line)
        if m is None:
            continue
        depth = len(m.group(1))
        if start is None:
            if depth >= 2 and m.group(2).strip().casefold() == "timeline":
                start, level = i + 1, depth
        elif level is not None and depth <= level:
            return start, i
    return (start, len(lines)) if start is not None else None


def _cutoff(newest: str) -> str:
    try:
        return (date.fromisoformat(newest) - timedelta(days=WINDOW_DAYS)).isoformat()
    except ValueError:
        return newest


def _path(cite: str) -> str:
    return cite[2:].split("]", 1)[0].split("#", 1)[0].split("|", 1)[0]


def fold(text: str, rec: dict[str, Any], new: Iterable[TimelineEntry] = (),
         refresh: Iterable[TimelineEntry] = ()) -> str:
    """``text`` with the timeline entries ``new`` added and its timeline folded (see the module
    docstring); ``rec`` is the page's build state, whose ``folded`` record is read and updated.
    A new entry that is a build line already there (same date, text and source) citing another
    line of the source replaces it (the source grew: sync added frontmatter or an occurrence);
    an entry of ``refresh`` only ever replaces one. Returns ``text`` itself when nothing
    changes."""
    from kenning.vault.page import append_timeline, render_timeline

    added: list[tuple[str, str, str]] = []
    renew: list[tuple[str, str, str]] = []
    for bucket, items in ((added, new), (renew, refresh)):
        for e in items:
            line = render_timeline(e)
            m = _BUILD_LINE.match(line)
            if m is not None:
                bucket.append((m.group("date"), m.group("text"), m.group("source")))
            elif bucket is added:
                text = append_timeline(text, e)  # not in the build's form: written as it is
    lines = text.split("\n")
    span = _section(lines)
    if span is None:
        if not added:
            return text
        first = TimelineEntry(0, added[0][0], added[0][1], added[0][2])
        text = append_timeline(text, first)
        lines = text.split("\n")
        span = _section(lines)
        if span is None:  # not a section the writer and this reader agree on: leave it
            return text
    start, end = span
    cr = "\r" if any(line.endswith("\r") for line in lines[start:end]) else ""
    known: dict[str, dict[str, Any]] = rec.get("folded") or {}
    model = set(rec.get("model") or [])
    entries: list[tuple[str, str, str]] = []
    keep: list[str] = []          # the person's lines (and blank lines), in order
    had_months: set[str] = set()  # months whose build line is on the page
    theirs: set[str] = set()      # months a person's month line stands for
    body = [line.rstrip("\r") for line in lines[start:end]]
    for i, line in enumerate(body):
        nxt = body[i + 1] if i + 1 < len(body) else ""
        child = bool(nxt.strip()) and nxt[:1] in (" ", "\t")
        m = _BUILD_LINE.match(line)
        if m and not child and (m.group("text").startswith(_VERBS) or line in model):
            entries.append((m.group("date"), m.group("text"), m.group("source")))
            continue
        mm = _MONTH_LINE.match(line)
        if mm and not child:
            rec_m = known.get(mm.group("month"))
            if rec_m and rec_m.get("line") == line:
                had_months.add(mm.group("month"))
                entries.extend(tuple(e) for e in rec_m.get("entries") or [])  # type: ignore
                continue
            if "[source:: [[sources/" in line:
                theirs.add(mm.group("month"))  # the build's month line, edited by a person
        keep.append(lines[start + i])  # as it is, line ending and all
    # The sources' current lines replace the lines they had (same date, text and source).
    where = {(e[0], e[1], _path(e[2])): e for e in entries}
    gone: set[tuple[str, str, str]] = set()
    for e in added + renew:
        old = where.get((e[0], e[1], _path(e[2])))
        if old is not None and old != e:
            gone.add(old)
    entries = [e for e in entries if e not in gone]
    entries += added + [e for e in renew if (e[0], e[1], _path(e[2])) in where]
    if not entries:
        if known:
            rec.pop("folded", None)
        return text
    entries = sorted(set(entries))
    cutoff = _cutoff(max(e[0] for e in entries))
    by_month: dict[str, list[tuple[str, str, str]]] = {}
    for e in entries:
        if e[0] < cutoff and e[0][:7] not in theirs:
            by_month.setdefault(e[0][:7], []).append(e)
    folded: dict[str, dict[str, Any]] = {}
    out: list[tuple[str, str]] = []  # (sort key, line)
    in_month: set[tuple[str, str, str]] = set()
    for month, group in by_month.items():
        if len(group) < MIN_FOLD and month not in had_months:
            continue
        line = month_line(month, group)
        folded[month] = {"line": line, "entries": [list(e) for e in group]}
        out.append((month, line))
        in_month.update(group)
    for e in entries:
        if e not in in_month:
            out.append((e[0] + " " + e[2], f"- {e[0]} — {e[1]} [source:: {e[2]}]"))
    out.sort()
    merged: list[str] = []
    pending = [line + cr for _, line in out]
    keys = [k for k, _ in out]
    j = 0
    for line in keep:
        d = _DATED.match(line)
        if d:
            while j < len(pending) and keys[j] < d.group("date"):
                merged.append(pending[j])
                j += 1
        merged.append(line)
    # What is left goes after the last non-blank line of the section (after its leading
    # blank line when it has nothing else), as the writer appends.
    tail = len(merged)
    while tail > 0 and not merged[tail - 1].strip():
        tail -= 1
    if tail == 0 and merged:
        tail = 1
    merged = merged[:tail] + pending[j:] + merged[tail:]
    if folded:
        rec["folded"] = dict(sorted(folded.items()))
    else:
        rec.pop("folded", None)
    written = sorted(line for key, line in out if len(key) > 7 and not line.split(
        " — ", 1)[1].startswith(_VERBS))
    if written:
        rec["model"] = written
    else:
        rec.pop("model", None)
    if merged == lines[start:end]:
        return text
    return "\n".join(lines[:start] + merged + lines[end:])


def folded_sources(rec: dict[str, Any]) -> set[str]:
    """The source paths (``sources/…``, no ``.md``, no line) the page's month lines stand for."""
    out = set()
    for month in (rec.get("folded") or {}).values():
        for e in month.get("entries") or []:
            out.add(str(e[2])[2:-2].split("#", 1)[0].split("|", 1)[0])
    return out


def folded_texts(rec: dict[str, Any]) -> set[str]:
    """The texts of the folded lines (a person's page lists a subject once)."""
    return {str(e[1]) for month in (rec.get("folded") or {}).values()
            for e in month.get("entries") or []}


_COUNT = re.compile(r"(\d+) (emails?|meetings?|chats?|calendar events?)\b")
_COUNT_FOLDER = {"email": "email", "emails": "email", "meeting": "meetings",
                 "meetings": "meetings", "chat": "chats", "chats": "chats",
                 "calendar event": "calendar", "calendar events": "calendar"}


def month_counts(line: str) -> dict[str, int]:
    """Sources per folder a month line counts ("14 emails, 1 meeting" → email 14, meetings 1)."""
    head = line.split(", mostly about", 1)[0].split(", about", 1)[0].split(", on ", 1)[0]
    return {_COUNT_FOLDER[k]: int(n) for n, k in _COUNT.findall(head)}
