"""A note's title is what Obsidian shows, a note says what it is about, and tags.

A small Obsidian-style vault on disk: section H1s ("# Todo" on the first line of several notes,
"# Installation" further down), a frontmatter title with wiki syntax, a first-line H1 that differs
from the file name, an old Kenning slug page, descriptions, first paragraphs, tags in every form
and tags in code that must not count. Then the same rules on the real zettelkasten when present.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write as put
from ruamel.yaml import YAML

from kenning.answers import result_path
from kenning.api import Vault
from kenning.cli import main
from kenning.errors import AmbiguousPage
from kenning.index.chunking import chunk_lines, heading_at
from kenning.sources.owner import Owner
from kenning.vault.layout import DEFAULT_CONFIG, FORMAT
from kenning.vault.page import ABOUT_CHARS, page_title, parse_page, set_summary

ZETTELKASTEN = Path(__file__).resolve().parents[2] / "shared" / "eval" / "vaults" / "zettelkasten"

TAGS_EVERYWHERE = """\
---
tags: "project/kenning, #Work"
tag: single
---
Intro mentions #inline-tag, C# and foo#bar, #123 and #y2024.
## Notes #heading_tag
- list item #ListTag
> quote #quotetag

`#notatag` in code, [a link](#anchor), [[Page#Heading]], https://example.com/#frag
<!-- #commented -->

```python
# comment
#include <stdio.h>
x = "#codetag"
```

    #indentedcode
"""

LONG = ("This first sentence explains the idea in plain words. "
        "A second sentence adds detail about [[Dr. No]] and more context for the reader.\n"
        "The third sentence is on the next line and keeps going with several more words. "
        "The fourth sentence is there to push the paragraph well past the limit of characters "
        "that a summary may hold, and it does not end before the limit is reached at all.\n"
        "A fifth line follows.\n")

NOTES = {
    # A first paragraph, then section H1s: titled by its file name, never "Installation".
    "AALpy.md": "---\ntags:\n  - verification\n---\nA tool for [[Automata Learning]].\n"
                "# Installation\n```\npip install aalpy\n```\nAlso install [[GraphViz]]\n"
                "# Process\n1. Find a system\n",
    "Utilitarianism.md": "---\ntags: [philosophy, ethics]\n---\nMaking ethical decisions that "
                         "maximize total happiness for the most people.\n"
                         "# [[Ethics]] Formal Doctrine\n1. Consequences decide.\n",
    # "# Todo" on the first line of two notes; a third has "Todo" as a real alias.
    "spike.md": "---\ntags: [security]\n---\n# Todo\n- [ ] write the harness\n\n"
                "A fuzzer for network protocols.\n",
    "Lattice Joining.md": "# Todo\n- [ ] prove it\n",
    "Chores.md": "---\naliases: [Todo]\n---\nHouse chores for the week.\n",
    # A unique first-line H1: a heading alias a link can use.
    "BSides Talk.md": "---\ntags: [meta]\n---\n# Project Ideas\n### High\n- a smart fuzzer\n",
    # Several H1s are sections, the first one too: no alias.
    "Integrals.md": "# Basic\nSubstitution.\n# Advanced\nContours.\n",
    "Index.md": "See [[Todo]], [[Project Ideas]], [[Formal Methods overview]] and [[Basic]].\n",
    "notes/with-title.md": "---\ntitle: \"Formal [[Methods]] overview\"\n---\n# Something else\n\n"
                           "Under the heading.\n",
    # A page written by an older Kenning: file named by the slug of its H1.
    "people/sarah-chen.md": "---\ntype: person\n---\n# Sarah Chen\n\nPartner at Horizon.\n",
    "Lattice.md": "---\ndescription: >-\n  A partially ordered set in which every pair\n"
                  "  has a join and a meet.\ntags: math\n---\nBody text about lattices.\n",
    "Long.md": LONG,
    "Embeds.md": "![[diagram.png]]\n\n#tagonly #other\n\n| a | b |\n|---|---|\n\n"
                 "The real first paragraph.\n",
    "Tags everywhere.md": TAGS_EVERYWHERE,
    "Bad tags.md": "---\ntags: [ok, \"AT&T\", 2024]\n---\nText.\n",
    # A chunk that runs past a heading: a hit after it is named by it.
    "Chunks.md": "---\ntags: [x]\n---\nShort intro line here.\n# Installation\n"
                 "Run the zebrafish installer with care and patience today.\n",
    "animals/Python.md": "---\ntags: [animal]\n---\nA large snake.\n",
    "code/Python.md": "---\ntags: [programming, lang/dynamic]\n---\nA programming language.\n",
}


@pytest.fixture
def notes(vault: Vault) -> Vault:
    for rel, text in NOTES.items():
        put(vault, rel, text)
    vault.index()
    return vault


def page(rel: str):
    return parse_page(NOTES[rel], rel)


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


# --- the title rule ------------------------------------------------------------------------


def test_title_is_the_file_name_unless_frontmatter_sets_title() -> None:
    assert page("AALpy.md").title == "AALpy"  # not "Installation"
    assert page("spike.md").title == "spike"  # not "Todo"
    assert page("BSides Talk.md").title == "BSides Talk"
    # A title never carries wiki syntax, from a heading or from title:.
    assert page("Utilitarianism.md").title == "Utilitarianism"
    assert page("notes/with-title.md").title == "Formal Methods overview"
    assert page_title({"title": "[[a|Shown]] and [[b#Part]]"}, "x.md") == "Shown and b > Part"
    # An older Kenning page named by the slug of its H1 keeps its name.
    assert page("people/sarah-chen.md").title == "Sarah Chen"
    assert page_title({}, "people/sarah-chen.md", "Sarah Chen") == "Sarah Chen"
    assert page_title({}, "people/sarah.md", "Sarah Chen") == "sarah"


def test_first_line_h1_heads_the_summary_and_is_a_heading_alias() -> None:
    spike = page("spike.md")
    assert (spike.title_line, spike.h1, spike.heading_alias) == (4, "Todo", "Todo")
    # An H1 further down is a section: no first-line H1 at all.
    aalpy = page("AALpy.md")
    assert (aalpy.title_line, aalpy.h1, aalpy.heading_alias) == (None, None, None)
    # The same name as the title is no alias; one the aliases hold is none either.
    assert page("people/sarah-chen.md").heading_alias is None
    assert parse_page("---\naliases: [Todo]\n---\n# Todo\n", "x.md").heading_alias is None
    integrals = page("Integrals.md")
    assert (integrals.h1, integrals.title_line, integrals.heading_alias) == ("Basic", 1, None)
    # A blank line after the frontmatter still leaves the H1 on the first line of text.
    blank = parse_page("---\ntype: note\n---\n\n# Header\n\nText.\n", "n.md")
    assert (blank.title_line, blank.h1, blank.summary) == (5, "Header", "Text.")
    # set_summary edits under the first-line H1, whatever the title.
    assert "# Todo\n\nNew.\n" in set_summary(NOTES["spike.md"], "New.")
    with pytest.raises(ValueError):
        set_summary(NOTES["AALpy.md"], "x")  # "# Installation" is a section, not the page's H1


# --- what a note says it is about --------------------------------------------------------------


def lines_of(rel: str, span: tuple[int, int]) -> str:
    return "\n".join(NOTES[rel].split("\n")[span[0] - 1 : span[1]])


def test_about_description_then_kenning_summary_then_first_paragraph() -> None:
    lattice = page("Lattice.md")
    assert lattice.about == "A partially ordered set in which every pair has a join and a meet."
    assert lattice.about_lines == (2, 4)  # the key and its folded lines
    assert page("people/sarah-chen.md").about == "Partner at Horizon."
    aalpy = page("AALpy.md")
    assert (aalpy.about, aalpy.about_lines) == ("A tool for [[Automata Learning]].", (5, 5))
    assert lines_of("AALpy.md", aalpy.about_lines) == aalpy.about
    # Under a section-label H1 ("# Todo") the to-do list is not what the note is about.
    spike = page("spike.md")
    assert spike.summary == "- [ ] write the harness\n\nA fuzzer for network protocols."
    assert spike.about == "A fuzzer for network protocols."
    assert page("Lattice Joining.md").about == ""
    # Embeds-only, tags-only and table paragraphs are skipped.
    assert page("Embeds.md").about == "The real first paragraph."


def test_a_long_first_paragraph_is_cut_at_a_sentence_with_its_lines() -> None:
    long = page("Long.md")
    assert len(long.about) <= ABOUT_CHARS
    assert long.about.endswith("several more words.")
    assert "[[Dr. No]]" in long.about
    assert long.about_lines == (1, 2)
    words = " ".join(["word"] * 100)
    cut = parse_page(words + "\n", "w.md")
    assert cut.about.endswith("…") and len(cut.about) <= ABOUT_CHARS + 1


# --- tags ----------------------------------------------------------------------------------


def test_tags_in_every_form_and_never_in_code_links_or_urls() -> None:
    tags = page("Tags everywhere.md").tags
    assert [t.name for t in tags] == ["project/kenning", "Work", "single", "inline-tag", "y2024",
                                      "heading_tag", "ListTag", "quotetag"]
    assert {t.name: t.line for t in tags}["ListTag"] == 7
    assert {t.name: t.line for t in tags}["Work"] == 2
    assert [t.name for t in page("Embeds.md").tags] == ["tagonly", "other"]
    assert [t.name for t in page("Lattice.md").tags] == ["math"]
    # Case-insensitive: one tag, first spelling kept.
    assert [t.name for t in parse_page("---\ntags: [Work]\n---\n#work #WORK\n", "x.md").tags] \
        == ["Work"]


def test_a_value_that_is_not_a_tag_is_a_problem_and_stays_in_the_frontmatter() -> None:
    bad = page("Bad tags.md")
    assert [t.name for t in bad.tags] == ["ok"]
    assert [(p.code, p.field, p.line) for p in bad.problems] == [("tag", "tags", 2)] * 2
    assert "'AT&T' is not a tag" in bad.problems[0].message
    assert bad.frontmatter["tags"] == ["ok", "AT&T", 2024]


def test_doctor_warns_of_a_value_that_is_not_a_tag_and_stays_healthy(notes: Vault) -> None:
    health = notes.doctor()
    tag = {f.check: f for f in health.findings}["tag"]
    assert tag.level == "warn"
    assert tag.items[0].startswith("Bad tags.md:2: 'AT&T' is not a tag")
    assert not any(f.level == "error" for f in health.findings)


# --- the index, search, recall, show -----------------------------------------------------------


def test_links_resolve_by_heading_alias_after_every_other_name(notes: Vault) -> None:
    rows = dict(notes.store.rows(
        "SELECT l.dst_ref, p.path FROM links l JOIN pages o ON o.id = l.origin_id"
        " LEFT JOIN pages p ON p.id = l.dst_id WHERE o.path = 'Index.md'"))
    # "Todo" is two notes' first-line H1 and one note's alias: the alias wins, no ambiguity.
    assert rows == {"Todo": "Chores.md", "Project Ideas": "BSides Talk.md",
                    "Formal Methods overview": "notes/with-title.md", "Basic": None}
    assert notes.find("Project Ideas").path == "BSides Talk.md"
    assert notes.find("people/sarah-chen").title == "Sarah Chen"
    # Searched like an alias: in the title column of the page's chunks.
    [title] = {r[0] for r in notes.store.rows(
        "SELECT f.title FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN pages p"
        " ON p.id = c.page_id WHERE p.path = 'BSides Talk.md'")}
    assert title == "BSides Talk Project Ideas"


def test_search_shows_file_names_and_heading_aliases_are_no_exact_match(notes: Vault) -> None:
    results = notes.search("todo", mode="lexical")
    assert {r.path: r.title for r in results}["Lattice Joining.md"] == "Lattice Joining"
    assert [r.path for r in results if r.exact] == ["Chores.md"]  # the alias, not the H1s
    titles = {r.title for r in notes.search("installation", mode="lexical")}
    assert titles == {"AALpy", "Chunks"}


def test_a_hit_is_named_by_the_section_of_its_cited_line(notes: Vault) -> None:
    result = notes.search("zebrafish installer", mode="lexical")[0]
    hit = result.hits[0]
    assert result.path == "Chunks.md"
    assert (hit.start_line, hit.end_line) == (6, 6)
    assert hit.heading == "Installation"  # the chunk starts in the frontmatter, above it
    assert result.to_dict()["hits"][0]["heading"] == "Installation"


def test_a_chunk_lists_the_sections_that_start_inside_it() -> None:
    lines = ["---", "t: 1", "---", "", "# Title", "short", "## Facts", "- a fact here"]
    headings = [(5, 1, "Title"), (7, 2, "Facts")]
    [chunk] = chunk_lines(lines, headings, body_start=4)
    assert chunk.heading == ""  # indexed and embedded under the heading of its first line
    assert chunk.sections == ((5, "Title"), (7, "Title > Facts"))
    assert [heading_at(chunk.heading, chunk.sections, n) for n in (2, 5, 6, 7, 8)] == [
        "", "Title", "Title", "Title > Facts", "Title > Facts"]


def test_show_and_recall_give_summary_with_citation_and_tags(notes: Vault) -> None:
    shown = notes.show("AALpy")
    assert shown["title"] == "AALpy" and shown["summary"] == "A tool for [[Automata Learning]]."
    assert shown["summary_citation"] == "AALpy.md#L5-L5"
    assert shown["tags"] == ["verification"]
    answer = notes.recall("Lattice")
    assert answer.summary.startswith("A partially ordered set")
    assert answer.summary_citation == "Lattice.md#L2-L4"
    data = json.loads(cli("-C", str(notes.root), "show", "Tags everywhere", "--json").stdout)
    assert sorted(data["tags"], key=str.casefold) == sorted(
        ["heading_tag", "inline-tag", "ListTag", "project/kenning", "quotetag", "single", "Work",
         "y2024"], key=str.casefold)
    plain = cli("-C", str(notes.root), "show", "AALpy").stdout
    assert "tags: #verification" in plain and "AALpy.md#L5-L5" in plain


def test_tag_filters_are_anded_nested_and_case_insensitive(notes: Vault) -> None:
    def paths(*tags: str) -> list[str]:
        found = notes.search("snake language", mode="lexical", tags=tags)
        return sorted(r.path for r in found)

    assert paths() == ["animals/Python.md", "code/Python.md"]
    assert paths("programming") == ["code/Python.md"]
    assert paths("#Programming") == ["code/Python.md"]
    assert paths("lang") == ["code/Python.md"]            # lang matches lang/dynamic
    assert paths("lang/dyn") == []                          # a prefix of a name is no parent
    assert paths("programming", "animal") == []             # every tag must be on the page
    assert paths("animal", "ANIMAL") == ["animals/Python.md"]
    with pytest.raises(ValueError, match="is not a tag"):
        notes.search("python", tags=["12"])
    done = cli("-C", str(notes.root), "search", "python", "--tag", "animal", "--json")
    assert [result_path(r) for r in json.loads(done.stdout)["results"]] == ["animals/Python.md"]
    assert cli("-C", str(notes.root), "search", "python", "--tag", "a b").exit_code == 2
    # Tags in code never became tags.
    counts = notes.tags()
    assert counts["programming"] == 1 and counts["math"] == 1
    assert not {"codetag", "include", "notatag", "anchor", "frag", "commented", "123"} & set(
        map(str.casefold, counts))


def test_recall_tag_picks_the_page_a_name_means(notes: Vault) -> None:
    with pytest.raises(AmbiguousPage):
        notes.recall("Python")
    assert notes.recall("Python", tags=["programming"]).path == "code/Python.md"
    done = cli("-C", str(notes.root), "recall", "Python", "--tag", "animal", "--json")
    assert json.loads(done.stdout)["path"] == "animals/Python.md"
    gone = cli("-C", str(notes.root), "recall", "Python", "--tag", "botany")
    assert gone.exit_code == 1 and "tagged #botany" in gone.output


def test_mcp_search_and_recall_take_tags(notes: Vault) -> None:
    from kenning.serve.tools import Runtime, build_tools
    from kenning.serve.trust import Caller

    tools = {t.name: t for t in build_tools()}
    assert "tags" in tools["search"].schema["properties"]
    assert "tags" in tools["recall"].schema["properties"]
    rt = Runtime(notes, Caller("stdio", True))
    found = tools["search"].handler(rt, {"query": "python", "tags": ["programming"]})
    assert [result_path(r) for r in found["results"]] == ["code/Python.md"]
    answer = tools["recall"].handler(rt, {"entity": "Python", "tags": ["animal"]})
    assert answer["path"] == "animals/Python.md"
    shown = tools["page"].handler(rt, {"ref": "Lattice"})
    assert shown["tags"] == ["math"] and shown["summary_citation"] == "Lattice.md#L2-L4"


def test_one_note_for_one_cause_when_there_are_no_vectors(notes: Vault) -> None:
    # The test environment switches embeddings off: hybrid falls back to lexical, said once.
    results = notes.search("zebrafish")
    assert results.mode == "lexical"
    assert results.notes == ["embeddings are switched off in the config; searched lexically"]


# --- init and the config template -----------------------------------------------------------


def test_init_suggests_sync_on_an_empty_folder_and_index_on_notes(tmp_path: Path) -> None:
    empty = cli("init", str(tmp_path / "new"))
    assert empty.exit_code == 0, empty.output
    assert "sync email" in empty.output and "owner:" in empty.output
    assert " index" not in empty.output.split("Next:")[1].split("\n")[0]
    adopted_dir = tmp_path / "notes"
    adopted_dir.mkdir()
    (adopted_dir / "a.md").write_text("A note.\n", encoding="utf-8")
    adopted = cli("init", str(adopted_dir))
    assert f"Next: kenning -C {adopted_dir.resolve()} index" in adopted.output
    assert json.loads(cli("init", str(adopted_dir), "--json").stdout)["next"] == "index"
    assert json.loads(cli("init", str(tmp_path / "new"), "--json").stdout)["next"] == "sync"


def test_config_template_has_an_owner_block_that_changes_nothing_until_filled_in() -> None:
    data = YAML(typ="safe").load(DEFAULT_CONFIG)
    assert "owner" not in data and data["format"] == FORMAT and "version" not in data
    assert Owner.from_config(data) == Owner()
    filled = "\n".join(line.replace("# ", "", 1) if line.startswith(("# owner:", "#   "))
                       else line for line in DEFAULT_CONFIG.splitlines())
    owner = Owner.from_config(YAML(typ="safe").load(filled))
    assert owner.names == {"alex morgan"} and "example.com" in owner.domains
    assert "alex@example.com" in owner.emails


# --- the real zettelkasten (skipped when absent) -----------------------------------------------


@pytest.mark.skipif(not ZETTELKASTEN.is_dir(), reason="no zettelkasten in ../shared/eval")
def test_zettelkasten_notes_are_titled_by_their_file_names() -> None:
    wrong = []
    total = 0
    for path in ZETTELKASTEN.rglob("*.md"):
        rel = path.relative_to(ZETTELKASTEN).as_posix()
        parsed = parse_page(path.read_text(encoding="utf-8", errors="replace"), rel)
        total += 1
        if "title" not in parsed.frontmatter and parsed.title != path.stem:
            wrong.append((rel, parsed.title))
        assert "[[" not in parsed.title, rel
    assert total > 10_000 and wrong == []
    aalpy = parse_page((ZETTELKASTEN / "AALpy.md").read_text(encoding="utf-8"), "AALpy.md")
    assert aalpy.about == "A tool for [[Automata Learning]]."
    assert os.path.basename("AALpy.md") == "AALpy.md"
