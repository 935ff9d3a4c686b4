"""Property tests for the vault format: round trips, and edits that leave unowned bytes alone."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import vocabulary
from kenning.vault.frontmatter import to_plain
from kenning.vault.page import (
    Fact,
    Page,
    RetainItem,
    TimelineEntry,
    add_fact,
    append_retain,
    append_timeline,
    new_page,
    parse_page,
    render_fact,
    render_timeline,
    replace_fact,
    set_frontmatter,
)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Words from a safe alphabet (Latin, digits, CJK, a little punctuation): text that cannot be
# mistaken for Kenning syntax (no brackets, '::', '^', '@', '#', backticks).
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüß東京大阪田中健一日本語データ"
_word = st.text(_LETTERS + "0123456789", min_size=1, max_size=8).filter(lambda w: w[0] in _LETTERS)
_punct = st.sampled_from(["", "", "", ",", ".", "!", "?", "。", "'s", "(x)"])
_words = st.lists(st.tuples(_word, _punct).map("".join), min_size=1, max_size=10).map(" ".join)
_name = st.lists(_word, min_size=1, max_size=3).map(" ".join)
_text_or_empty = st.one_of(st.just(""), _words)


@st.composite
def _date(draw: st.DrawFn, *, time: bool = False) -> str:
    year = draw(st.integers(1990, 2035))
    form = draw(st.sampled_from(["y", "ym", "ymd"]))
    out = f"{year:04d}"
    if form != "y":
        out += f"-{draw(st.integers(1, 12)):02d}"
    if form == "ymd":
        out += f"-{draw(st.integers(1, 28)):02d}"
        if time and draw(st.booleans()):
            out += f" {draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}"
    return out


_link = _name.map(lambda n: f"[[{n}]]") | st.builds(
    lambda a, b: f"[[sources/{a}#L{b}]]", _word, st.integers(1, 99))
_confidence = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    relational = draw(st.booleans())
    relation = draw(st.sampled_from(vocabulary.RELATION_TYPES)) if relational else None
    target = draw(st.none() | _name) if relational else None
    text = draw(_text_or_empty if relational else _words)
    return Fact(
        line=0, relation=relation, target=target, text=text,
        valid_from=draw(st.none() | _date()), valid_to=draw(st.none() | _date()),
        status=draw(st.sampled_from(vocabulary.FACT_STATUSES)),
        successor=draw(st.none() | _link),
        epistemic=draw(st.sampled_from(vocabulary.EPISTEMIC_STATUSES)),
        confidence=draw(st.none() | _confidence), source=draw(st.none() | _link),
        block_id=draw(st.none() | st.from_regex(r"[a-z0-9][a-z0-9-]{0,6}", fullmatch=True)),
    )


timeline_entries = st.builds(lambda d, t, s: TimelineEntry(0, d, t, s), _date(time=True),
                             _text_or_empty, st.none() | _link)
retain_items = st.builds(
    lambda k, e, c, t: RetainItem(0, k, tuple(dict.fromkeys(e)), c, t),
    st.sampled_from(sorted(vocabulary.RETAIN_KINDS)), st.lists(_name, max_size=3),
    st.none() | _confidence, _text_or_empty)

# YAML values: JSON-able scalars and lists, strings with YAML-significant characters.
_yaml_str = st.text("abcXYZ 東京 :#'\"-[]{},&*!|>%@`?0123456789.", max_size=12)
_scalar = st.one_of(_yaml_str, st.integers(-10**6, 10**6), st.booleans(), st.none(),
                    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda f: f == f), _date())
_value = st.one_of(_scalar, st.lists(_scalar, max_size=3))
_unowned_key = st.sampled_from(["priority", "my key", "Custom-Field", "x_1", "cssclass",
                                "source url", "評価"])


@st.composite
def frontmatters(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if draw(st.booleans()):
        data["type"] = draw(st.sampled_from(vocabulary.ENTITY_TYPES))
    if draw(st.booleans()):
        data["aliases"] = draw(st.lists(_name, min_size=1, max_size=3, unique=True))
    if draw(st.booleans()):
        data["domain"] = draw(st.sampled_from(vocabulary.DOMAINS))
    for key in draw(st.lists(st.sampled_from(["status", "created", "updated", "role",
                                              "organization", "related"]), unique=True)):
        data[key] = draw(_value)
    for key in draw(st.lists(_unowned_key, unique=True, max_size=3)):
        data[key] = draw(_value)
    if draw(st.booleans()):  # Kenning reads tags (a bad one is a problem) but never writes them
        data["tags"] = draw(st.one_of(st.lists(_word, max_size=3), _word))
    return data


def _model(page: Page) -> dict[str, Any]:
    def strip_line(items: tuple[Any, ...]) -> list[Any]:
        return [replace(i, line=0) for i in items]

    return {"frontmatter": page.frontmatter, "title": page.title, "summary": page.summary,
            "facts": strip_line(page.facts), "timeline": strip_line(page.timeline),
            "retain": strip_line(page.retain), "aliases": page.aliases, "type": page.type,
            "domain": page.domain}


def _write(frontmatter: dict[str, Any], title: str, summary: str, fs: list[Fact],
           entries: list[TimelineEntry], items: list[RetainItem]) -> str:
    text = new_page(title=title, frontmatter=frontmatter, summary=summary, facts=fs,
                    timeline=entries)
    for item in items:
        text = append_retain(text, item)
    return text


def _canonical_fact(f: Fact) -> Fact:
    # A relation fact whose text is empty and has no target renders as "rel::" — same model.
    return replace(f, confidence=None if f.confidence is None else float(f.confidence))


@SETTINGS
@given(frontmatters(), _name, _text_or_empty, st.lists(facts(), max_size=5),
       st.lists(timeline_entries, max_size=4), st.lists(retain_items, max_size=4))
def test_write_parse_round_trip(fm: dict[str, Any], title: str, summary: str, fs: list[Fact],
                                entries: list[TimelineEntry], items: list[RetainItem]) -> None:
    text = _write(fm, title, summary, fs, entries, items)
    page = parse_page(text, f"x/{title}.md")  # a page Kenning creates is named by its title
    assert page.problems == ()
    model = _model(page)
    assert model["frontmatter"] == to_plain(fm)
    assert model["title"] == title and page.h1 == title
    assert model["summary"] == summary
    assert model["facts"] == [_canonical_fact(f) for f in fs]
    assert model["timeline"] == entries
    assert model["retain"] == items
    # Line numbers point at the rendered lines.
    lines = text.split("\n")
    for f in page.facts:
        assert lines[f.line - 1] == render_fact(f)
    for e in page.timeline:
        assert lines[e.line - 1] == render_timeline(e)
    # parse(write(parse(x))) == parse(x), line numbers included.
    again = parse_page(_write(page.frontmatter, page.title, page.summary, list(page.facts),
                              list(page.timeline), list(page.retain)), page.path)
    for name in Page.__dataclass_fields__:
        if name != "text":
            assert getattr(again, name) == getattr(page, name), name


# --- edits leave unowned bytes alone ---------------------------------------------------------

_prose_line = st.one_of(
    _words, _words.map(lambda w: f"- {w}"),
    st.builds(lambda a, b: f"{a} [[{b}]] {a}", _words, _name),
    _words.map(lambda w: f"> {w}"), _words.map(lambda w: f"*{w}*"))
_prose = st.lists(_prose_line, min_size=1, max_size=4)
_extra_heading = st.sampled_from(["## Notes", "## Background", "## 日本語メモ"])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, list[int]], int, int]:
    """A page with unowned text everywhere; returns (text, key → frontmatter line indexes,
    frontmatter end index, newline kind)."""
    fm_lines: list[str] = []
    spans: dict[str, list[int]] = {}
    keys = draw(st.lists(st.sampled_from(["type", "status", "role", "priority", "aliases",
                                          "tags", "Quoted Key", "updated"]),
                         unique=True, max_size=6))
    for key in keys:
        if draw(st.booleans()):
            fm_lines.append(draw(st.sampled_from(["# a comment", "", "# 注釈: keep", "  # x"])))
        start = len(fm_lines)
        shown = f'"{key}"' if " " in key or draw(st.booleans()) else key
        if key in ("aliases", "tags"):
            fm_lines.append(f"{shown}:")
            fm_lines += [f"  - {draw(_name)}" for _ in range(draw(st.integers(1, 3)))]
        else:
            value = draw(st.sampled_from(["person", "'quoted value'", '"dq: v"', "42",
                                          "2026-01-02", "plain text  # trailing comment"]))
            fm_lines.append(f"{shown}: {value}")
        spans[key] = list(range(start, len(fm_lines)))
    if draw(st.booleans()):
        fm_lines.append("# closing comment")
    body: list[str] = ["# " + draw(_name), "", draw(_words), ""]
    for _ in range(draw(st.integers(0, 2))):
        # A ### heading here sits under the H1; after ## Facts it would belong to Facts.
        body += [draw(_extra_heading | st.just("### Detail")), *draw(_prose), ""]
    if draw(st.booleans()):
        body += ["## Facts"]
        if draw(st.booleans()):
            body += [draw(_words), ""]
        body += [render_fact(draw(facts())) for _ in range(draw(st.integers(1, 3)))]
        body += [""]
    if draw(st.booleans()):
        body += ["## Timeline", ""] + [render_timeline(draw(timeline_entries))
                                       for _ in range(draw(st.integers(1, 3)))] + [""]
    for _ in range(draw(st.integers(0, 2))):
        body += [draw(_extra_heading), *draw(_prose), ""]
    lines = (["---", *fm_lines, "---"] if fm_lines or draw(st.booleans()) else []) + body
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    text = nl.join(lines)
    if draw(st.booleans()):
        text += nl
    fm_end = len(fm_lines) + 1 if lines and lines[0] == "---" else -1
    return text, spans, fm_end, nl == "\r\n"


def _pieces(text: str) -> list[str]:
    return text.split("\n")


def _assert_only_inserted(old: str, new: str, allowed: set[str], crlf: bool) -> None:
    a, b = _pieces(old), _pieces(new)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    inserted: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag == "insert":
            inserted += b[j1:j2]
            continue
        # A final line without a newline may be replaced by itself + more lines.
        assert tag == "replace" and i2 == len(a) and i1 == i2 - 1 and a[-1] == "", (tag, a[i1:i2])
        inserted += b[j1:j2]
    for piece in inserted:
        body = piece[:-1] if crlf and piece.endswith("\r") else piece
        assert body in allowed, piece
    if crlf:
        assert all(p.endswith("\r") for p in b[:-1])


@SETTINGS
@given(documents(), facts())
def test_add_fact_only_inserts(doc: tuple[str, dict[str, list[int]], int, bool], fact: Fact
                               ) -> None:
    text, _, _, crlf = doc
    before = parse_page(text, "p.md")
    out = add_fact(text, fact)
    _assert_only_inserted(text, out, {"", "## Facts", render_fact(fact)}, crlf)
    after = parse_page(out, "p.md")
    assert [replace(f, line=0) for f in after.facts] == (
        [replace(f, line=0) for f in before.facts] + [_canonical_fact(fact)])
    assert after.frontmatter == before.frontmatter
    assert after.summary == before.summary
    assert [replace(e, line=0) for e in after.timeline] == [
        replace(e, line=0) for e in before.timeline]


@SETTINGS
@given(documents(), timeline_entries)
def test_append_timeline_only_inserts(doc: tuple[str, dict[str, list[int]], int, bool],
                                      entry: TimelineEntry) -> None:
    text, _, _, crlf = doc
    before = parse_page(text, "p.md")
    out = append_timeline(text, entry)
    _assert_only_inserted(text, out, {"", "## Timeline", render_timeline(entry)}, crlf)
    after = parse_page(out, "p.md")
    assert [replace(e, line=0) for e in after.timeline] == (
        [replace(e, line=0) for e in before.timeline] + [entry])
    assert [f.text for f in after.facts] == [f.text for f in before.facts]


@SETTINGS
@given(documents(), facts(), st.data())
def test_replace_fact_touches_one_line(doc: tuple[str, dict[str, list[int]], int, bool],
                                       fact: Fact, data: st.DataObject) -> None:
    text, _, _, _crlf = doc
    before = parse_page(text, "p.md")
    if not before.facts:
        return
    target = data.draw(st.sampled_from(before.facts))
    out = replace_fact(text, target.line, fact)
    a, b = _pieces(text), _pieces(out)
    assert len(a) == len(b)
    changed = [i for i in range(len(a)) if a[i] != b[i]]
    assert changed in ([], [target.line - 1])
    after = parse_page(out, "p.md")
    assert [f.line for f in after.facts] == [f.line for f in before.facts]
    got = next(f for f in after.facts if f.line == target.line)
    assert replace(got, line=0) == _canonical_fact(fact)


@SETTINGS
@given(documents(), st.dictionaries(st.sampled_from(["status", "role", "aliases", "updated",
                                                      "new_key", "Quoted Key", "domain"]),
                                    _value, max_size=3),
       st.lists(st.sampled_from(["type", "priority", "tags", "missing"]), max_size=2))
def test_set_frontmatter_touches_only_its_keys(doc: tuple[str, dict[str, list[int]], int, bool],
                                               updates: dict[str, Any], remove: list[str]) -> None:
    text, spans, fm_end, crlf = doc
    before = parse_page(text, "p.md")
    out = set_frontmatter(text, updates, remove)
    after = parse_page(out, "p.md")
    assert [p.code for p in after.problems if p.code != "vocabulary"] == [
        p.code for p in before.problems if p.code != "vocabulary"]
    expected = {k: v for k, v in before.frontmatter.items() if k not in remove}
    expected.update(to_plain(updates))
    assert after.frontmatter == expected
    a, b = _pieces(text), _pieces(out)
    edited = {i + 1 for key in (*updates, *remove) for i in spans.get(key, [])}
    kept_a = [p for i, p in enumerate(a) if i not in edited]
    # Every original line not belonging to an edited key survives, in order.
    matcher = difflib.SequenceMatcher(a=kept_a, b=b, autojunk=False)
    assert sum(block.size for block in matcher.get_matching_blocks()) == len(kept_a)
    # Lines after the frontmatter are byte-identical.
    shift = len(b) - len(a)
    if fm_end >= 0:
        assert b[fm_end + 1 + shift:] == a[fm_end + 1:]
    else:
        assert b[len(b) - len(a):] == a
    if crlf:
        assert all(p.endswith("\r") for p in b[:-1])
