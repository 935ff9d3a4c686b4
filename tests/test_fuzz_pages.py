"""Fuzzing the page parser and writer (issue 12), time-boxed and reproducible for CI.

Texts are built from the pieces that have broken pages before (delimiters, fences, comments,
lone CRs, BOMs, NULs, anchors and aliases, Kenning's own line syntax) mixed with arbitrary
characters, lone surrogates included. The properties:

- parsing never raises, whatever the text;
- an edit (a frontmatter key set, a section append, a fact append) changes only what it owns:
  every byte of the original text is still there, in order, and only whole lines are added
  (a frontmatter edit keeps the body and every other key);
- every appended item parses back as an item of its section;
- the reader and the round-trip editor accept exactly the same frontmatter.

``derandomize=True`` makes every run draw the same examples (no example database is written), so a
failure in CI is a failure on every machine; the example counts keep the file to seconds.
``KENNING_FUZZ_SCALE=20 KENNING_FUZZ_RANDOM=1`` runs twenty times as many fresh examples.
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.vault import frontmatter as fm
from kenning.vault.page import (
    Fact,
    RetainItem,
    TimelineEntry,
    add_fact,
    append_retain,
    append_timeline,
    parse_page,
)

# KENNING_FUZZ_SCALE=20 (and KENNING_FUZZ_RANDOM=1 for new examples) hunts longer, by hand;
# the default counts take about 5 s.
_SCALE = int(os.environ.get("KENNING_FUZZ_SCALE", "1"))
FUZZ = settings(max_examples=1000 * _SCALE, deadline=None, database=None,
                derandomize=not os.environ.get("KENNING_FUZZ_RANDOM"),
                suppress_health_check=list(HealthCheck))
EDITS = settings(FUZZ, max_examples=400 * _SCALE)

_PIECES = [
    "---\n", "---", "...\n", "\n", "\r\n", "\r", "\n\n", "\ufeff", "\x00", "\t", " ", "    ",
    "```", "```python\n", "~~~", "````\n", "<!--", "-->", "<pre>", "</pre>", "<?", "<![CDATA[",
    "<div>\n", "%%", "$$", "$", "`", "# Title\n", "## Facts\n", "## Timeline\n", "## Retain\n",
    "### Sub\n", "- ", "* ", "1. ", "> ", "[[", "]]", "[[Ann]]", "![[img.png]]", "[a](b.md)",
    "](", "^f1", " ^f2", "[from:: 2020]", "[source:: x]", "works_at:: [[Acme]]", "@Ann", "#tag",
    "2024-01-02 — met", "W @Ann: likes tea", "type: person\n", "aliases: [a, b]\n", "key: &a [1]\n",
    "other: *a\n", "*a", "&a", "{", "}", "[", "]", ": ", "'", '"', "\\", "|", "\u2028", "\x85",
    "\ud800", "\udfff", "東京", "é",
]
_piece = st.sampled_from(_PIECES) | st.text(st.characters(codec=None), max_size=6)
hostile_text = st.lists(_piece, max_size=40).map("".join)

_YAML_PIECES = [
    "a: 1\n", "b: [x, y]\n", "c:\n  - 1\n  - 2\n", "d: |\n  text\n  more\n", "e: >\n  folded\n",
    "# comment\n", "\n", "f: &x {k: v}\n", "g: *x\n", "h: 'quoted: yes'\n", 'i: "esc \\" q"\n',
    "j: 2024-01-02\n", "k: !tag x\n", "? complex\n: value\n", "- item\n", "a: dup\n", "{a: 1}\n",
    "l: [\n", "m: }\n", "\r", "\r\n", "\t", "n: @x\n", "o: `x`\n", "p: %x\n", "q:\n", "  r: 1\n",
    "s: 1 # c\n", "t: null\n", "<<: *x\n", "u: .inf\n", "v: 0x1f\n", "w: ~\n", "x: \x00\n",
    "y: \ud800\n", "z: \u2028\n", "--- \n", "...\n", "%YAML 1.2\n",
]
yaml_text = st.lists(st.sampled_from(_YAML_PIECES) | st.text(max_size=5), max_size=12).map(
    "".join)
_words = st.text("abcdefghij klmnopqrstuvwxyzÄé東京", min_size=1, max_size=30).map(str.strip) \
    .filter(bool)


def _kept_in_order(old: str, new: str) -> bool:
    """``new`` is ``old`` with whole lines added (the last line may gain a newline when ``old``
    had none and lines were added after it)."""
    nl = "\r\n" if "\r\n" in old else "\n"
    olds, news = _lines(old), _lines(new)
    i = 0
    for line in news:
        if i < len(olds) and (line == olds[i] or (i == len(olds) - 1
                                                 and not olds[i].endswith("\n")
                                                 and line == olds[i] + nl)):
            i += 1
    return i == len(olds)


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


@FUZZ
@given(hostile_text)
def test_parse_never_raises(text: str) -> None:
    page = parse_page(text, "notes/Fuzz.md")
    assert page.text == text
    for problem in page.problems:
        assert problem.line >= 1 and "\n" not in problem.message


@FUZZ
@given(yaml_text, st.sampled_from(["\n", "\r\n"]))
def test_reader_and_editor_accept_the_same_frontmatter(yaml: str, nl: str) -> None:
    text = "---" + nl + yaml.replace("\n", nl) + ("" if yaml.endswith("\n") or not yaml
                                                  else nl) + "---" + nl + "# Body" + nl
    result = fm.read(text)
    try:
        edited = fm.set_frontmatter(text, {"updated": "2024-05-06"})
    except fm.FrontmatterError:
        edited = None
    if result.block is None or result.block.close_line is None:
        return  # not frontmatter as Kenning reads it: nothing to agree on
    assert (result.error is None) == (edited is not None), (result.error, text)
    if edited is None:
        return
    after = fm.read(edited)
    assert after.error is None, (after.error, edited)
    expected = dict(result.data)
    expected["updated"] = "2024-05-06"
    assert after.data == expected
    assert edited[after.body_offset:] == text[result.body_offset:]  # the body, byte for byte


_VALUE = st.one_of(_words, st.lists(_words, max_size=3), st.integers(0, 10**6),
                   st.dates(_dt.date(1990, 1, 1), _dt.date(2035, 1, 1)).map(_dt.date.isoformat))


@EDITS
@given(st.lists(st.tuples(st.sampled_from(["role", "aliases", "emails", "organization", "x y",
                                           "note", "list"]), _VALUE), max_size=5),
       st.sampled_from(["role", "aliases", "status", "new_key", "x y"]), _VALUE,
       st.sampled_from(["", "# a comment\n", "\n"]), hostile_text)
def test_frontmatter_edit_changes_only_its_key(pairs: list[tuple[str, Any]], key: str,
                                               value: Any, extra: str, body: str) -> None:
    data = {"type": "person", **dict(pairs)}
    text = "---\n" + fm.render(data) + extra + "---\n" + body
    before = fm.read(text)
    if before.error is not None:
        return
    edited = fm.set_frontmatter(text, {key: value})
    after = fm.read(edited)
    assert after.error is None
    assert after.data[key] == fm.to_plain(value)
    assert {k: v for k, v in after.data.items() if k != key} == \
        {k: v for k, v in before.data.items() if k != key}
    assert edited[after.body_offset:] == text[before.body_offset:]
    if extra.startswith("#"):
        assert extra in edited  # a person's comment survives


_PAGE_HEAD = st.sampled_from(["", "---\ntype: person\n---\n", "---\ntype: person\n---\n# Ann\n\n",
                              "# Ann\n\nSummary.\n\n## Facts\n\n- Likes tea ^f1\n\n"])


@EDITS
@given(_PAGE_HEAD, hostile_text, _words)
def test_appended_items_read_back_and_keep_every_byte(head: str, rest: str, words: str) -> None:
    text = head + rest
    appends = [
        ("facts", lambda t: add_fact(t, Fact(0, None, None, words, block_id="f99"))),
        ("timeline", lambda t: append_timeline(t, TimelineEntry(0, "2024-03-04", words))),
        ("retain", lambda t: append_retain(t, RetainItem(0, "W", ("Ann",), None, words))),
    ]
    for name, append in appends:
        new = append(text)  # PageEditError (a refusal) would fail too: none is expected
        assert _kept_in_order(text, new), (name, text, new)
        page = parse_page(new, "people/Ann.md")
        items = {"facts": page.facts, "timeline": page.timeline, "retain": page.retain}[name]
        assert any(item.text == words for item in items), (name, new)
