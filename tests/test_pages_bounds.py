"""Bounded reading and readable writes for hostile pages (issue 12): YAML bombs, quadratic lines,
pages that end inside a code fence or comment, lone carriage returns in frontmatter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kenning.errors import NotAVault
from kenning.memory.common import next_fact_id
from kenning.vault import frontmatter as fm
from kenning.vault.layout import load_config
from kenning.vault.markdown import SENTENCE_CHARS
from kenning.vault.page import (
    Fact,
    RetainItem,
    TimelineEntry,
    add_fact,
    append_retain,
    append_timeline,
    parse_page,
)


def _bomb(levels: int = 7, width: int = 9) -> str:
    """Nested anchors, each a list of ``width`` aliases of the previous: width**levels values."""
    lines = ["l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


# -- YAML bounds ---------------------------------------------------------------------------------


def test_alias_bomb_is_a_problem_on_its_line_not_a_value() -> None:
    page = parse_page("---\ntitle: Bomb\n" + _bomb() + "---\n# Bomb\n\nbody text\n", "n/Bomb.md")
    problems = [p for p in page.problems if p.code == "frontmatter"]
    assert len(problems) == 1
    assert "alias" in problems[0].message and "100,000" in problems[0].message
    assert 3 <= problems[0].line <= 9  # on a line of the bomb
    assert page.frontmatter == {}
    assert page.summary == "body text"  # the body is still read


def test_recursive_alias_is_a_problem() -> None:
    page = parse_page("---\nloop: &x [1, *x]\n---\n# Loop\n", "n/Loop.md")
    assert [(p.line, "recursive alias" in p.message) for p in page.problems] == [(2, True)]


def test_deep_nesting_neither_crashes_nor_recurses() -> None:
    # 100,000 '[' overflow the C composer's stack (a segfault), so this runs in its own process.
    code = ("from kenning.vault.page import parse_page\n"
            "p = parse_page('---\\nd: ' + '[' * 100000 + '\\n---\\n# D\\n', 'D.md')\n"
            "print([(x.line, x.message) for x in p.problems])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert "nested more than 64 levels" in done.stdout


def test_moderately_deep_nesting_is_a_problem_not_a_recursion_error() -> None:
    page = parse_page("---\nd: " + "[" * 2000 + "]" * 2000 + "\n---\n# D\n", "D.md")
    assert any("nested more than" in p.message for p in page.problems)


def test_oversized_frontmatter_is_a_problem() -> None:
    many = "".join(f"  - item {i}\n" for i in range(30_000))
    page = parse_page("---\nlist:\n" + many + "---\n# Big\n", "Big.md")
    assert any("KB of YAML" in p.message for p in page.problems)


def test_ordinary_anchors_still_read() -> None:
    page = parse_page("---\nbase: &b [a, b]\nmore: *b\ntype: person\n---\n# P\n", "people/P.md")
    assert page.problems == ()
    assert page.frontmatter["more"] == ["a", "b"] and page.type == "person"


def test_editor_refuses_what_the_reader_refuses() -> None:
    for text in ("---\ntitle: x\n" + _bomb() + "---\n# T\n", "---\nloop: &x [*x]\n---\n",
                 "---\nd: " + "[" * 300 + "]" * 300 + "\n---\n"):
        assert fm.read(text).error is not None
        with pytest.raises(fm.FrontmatterError):
            fm.set_frontmatter(text, {"updated": "2024-01-01"})


def test_alias_bomb_in_the_config_names_the_config(tmp_path: Path) -> None:
    (tmp_path / ".kenning").mkdir()
    (tmp_path / ".kenning" / "config.yaml").write_text(_bomb(9) + "exclude: *l8\n")
    with pytest.raises(NotAVault) as err:
        load_config(tmp_path)
    assert "config.yaml" in str(err.value) and "alias" in str(err.value)


# -- per-line syntax -----------------------------------------------------------------------------


def test_link_context_is_bounded_on_a_line_of_links() -> None:
    line = " ".join(f"[[Note {i}]]" for i in range(3000))
    page = parse_page("# T\n\n" + line + ".\n", "T.md")
    assert len(page.links) == 3000
    # Each link keeps its neighbourhood, not a copy of the whole 40 KB line.
    assert max(len(link.sentence) for link in page.links) <= SENTENCE_CHARS
    assert "[[Note 1500]]" in page.links[1500].sentence


def test_link_sentences_split_at_sentence_ends_outside_links() -> None:
    page = parse_page("# T\n\n- First [[A. B]] here. Then [[C]] and [[D]]! Last [[E]]\n", "T.md")
    assert [link.sentence for link in page.links] == [
        "First [[A. B]] here.", "Then [[C]] and [[D]]!", "Then [[C]] and [[D]]!", "Last [[E]]"]


def test_frontmatter_key_lines_on_long_and_spaced_keys() -> None:
    block = fm.locate("---\na b : 1\n\"q\": 2\n-x: 3\nz" + " " * 5000 + "y\nk:\n---\n")
    assert [fm.key_line(block, k) for k in ("a b", "q", "-x", "k", "zy")] == [2, 3, 4, 6, None]


def test_nested_and_repeated_sections_own_their_items() -> None:
    text = ("# T\n\n## Facts\n\n- a\n\n### Timeline\n\n- 2020 — x\n\n## Other\n\n- b\n\n"
            "## Facts\n\n- c\n\n#### Sub\n\n- d\n\n# Top\n\n- e\n")
    page = parse_page(text, "T.md")
    assert [f.text for f in page.facts] == ["a", "c", "d"]
    assert [e.text for e in page.timeline] == ["x"]


# -- appended sections land where they are read --------------------------------------------------

_PERSON = "---\ntype: person\n---\n# Hannah Berg\n\nSummary.\n\n"
_OPEN_ENDINGS = {
    "backtick fence": "```python\nprint(1)\n",
    "tilde fence": "~~~~\ncode\n~~~\n",
    "fence opened by a longer run": "`````\n```\n",
    "html comment": "<!-- draft\nhidden\n",
    "pre": "<pre>\nraw\n",
    "cdata": "<![CDATA[ x\n",
    "processing instruction": "<?php echo 1;\n",
    "fence, then a blank line without newline": "```\ncode\n    ",
}


@pytest.mark.parametrize("ending", list(_OPEN_ENDINGS), ids=list(_OPEN_ENDINGS))
def test_appends_after_an_unclosed_block_read_back(ending: str) -> None:
    text = _PERSON + "Notes:\n\n" + _OPEN_ENDINGS[ending]
    once = add_fact(text, Fact(0, None, None, "Plays chess", block_id="f1"))
    assert once.startswith(text.rstrip())  # the person's text kept, in place
    twice = add_fact(once, Fact(0, None, None, "Runs marathons", block_id="f2"))
    page = parse_page(twice, "people/Hannah Berg.md")
    assert [f.text for f in page.facts] == ["Plays chess", "Runs marathons"]
    assert twice.count("## Facts") == 1
    timeline = append_timeline(twice, TimelineEntry(0, "2024-05-01", "Met"))
    retain = append_retain(timeline, RetainItem(0, "W", ("Hannah Berg",), None, "Likes tea"))
    page = parse_page(retain, "people/Hannah Berg.md")
    assert [e.text for e in page.timeline] == ["Met"]
    assert [r.text for r in page.retain] == ["Likes tea"]


def test_fact_appended_to_a_section_that_ends_inside_a_fence() -> None:
    text = _PERSON + "## Facts\n\n- Likes tea ^f1\n\n```\ncode\n"
    page = parse_page(add_fact(text, Fact(0, None, None, "Plays chess", block_id="f2")), "p.md")
    assert [f.text for f in page.facts] == ["Likes tea", "Plays chess"]


def test_fact_ids_are_unique_over_the_whole_page() -> None:
    text = _PERSON + "## Facts\n\n- Likes tea ^f1\n\n```\n- quoted ^f7\n```\n\nSee ^f3\n"
    assert next_fact_id(parse_page(text, "p.md")) == "f8"


# -- one line model for frontmatter --------------------------------------------------------------


def test_lone_cr_in_frontmatter_is_a_problem_and_no_edit_deletes_a_key() -> None:
    text = "---\ntype: person\rrole: engineer\nemails: [a@b.c]\n---\n# Ada\n"
    result = fm.read(text)
    assert result.error is not None and result.error[0] == 2 and "lone CR" in result.error[1]
    with pytest.raises(fm.FrontmatterError):
        fm.set_frontmatter(text, {"role": "analyst"})
    # CRLF files are not affected.
    crlf = text.replace("\r", "\r\n").replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    assert fm.read(crlf).error is None
    edited = fm.set_frontmatter(crlf, {"role": "analyst"})
    assert fm.read(edited).data == {"type": "person", "role": "analyst", "emails": ["a@b.c"]}


def test_a_lone_surrogate_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from kenning.api import Vault
    from kenning.memory.common import MemoryInputError
    from kenning.vault.layout import init_vault

    init_vault(tmp_path)
    vault = Vault(tmp_path)
    with pytest.raises(MemoryInputError, match="lone surrogate"):
        vault.record([{"name": "Sur", "type": "person"}], None,
                     [{"entity": "Sur", "text": "bad \ud800 text"}])
    assert not list(tmp_path.glob("people/*.md"))
