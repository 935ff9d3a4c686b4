"""Entity recall ("tell me about X"): resolving the name in a question, then the page's summary,
active facts, latest timeline and strongest neighbours — each cited — within a token budget.

Recall reads the graph, not vectors, so these tests index lexically (the conftest default).
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write as put

from kenning.api import Vault
from kenning.cli import main
from kenning.errors import AmbiguousPage, PageNotFound
from kenning.recall import activity
from kenning.recall.entity import entity_name
from kenning.recall.search import estimate_tokens

SARAH = "people/sarah-chen.md"

# Line numbers matter: citations are checked against the file's own lines.
SARAH_TEXT = """\
---
type: person
aliases: [Sarah, S. Chen]
organization: "[[Horizon Ventures]]"
created: 2025-01-10
---
# Sarah Chen

Partner at Horizon Ventures who led the Kestrel seed round. She prefers written updates.

## Facts
- works_at:: [[Horizon Ventures]] Partner on the seed team [from:: 2024-05] [epistemic:: assertion]
- works_at:: [[Acme Capital]] Associate on growth [status:: superseded] [by:: [[Sarah Chen]]]
- Prefers async updates over meetings [epistemic:: hypothesis]
- Chaired the millennium gala committee [to:: 2001-01]
- Mentors first-time founders on pricing

## Timeline
- 2024-01-05 — First intro call.
- 2026-03-02 — Met at the offsite; agreed a pilot.
- 2025-06 — Led the Kestrel seed round.
- 2023 — Joined the angel network.
- 2026-01-15 — Quarterly review with the board.
- 2025-11-20 — Sent the term sheet.
- 2024-09-01 — Second meeting in Lisbon.

## Notes
She first met [[Maya Okafor]] at a conference.
The [[Kestrel Labs]] round was her first lead; [[Kestrel Labs]] reports monthly.
She keeps a folder on [[Kestrel Labs]] pricing.
"""

TIMELINE_DATES = ["2024-01-05", "2026-03-02", "2025-06", "2023", "2026-01-15", "2025-11-20",
                  "2024-09-01"]


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, SARAH, SARAH_TEXT)
    put(vault, "people/david-chen.md",
        "---\ntype: person\n---\n# David Chen\n\nBackend engineer on the payments team.\n")
    put(vault, "people/maya-okafor.md",
        "---\ntype: person\n---\n# Maya Okafor\n\nCEO of Kestrel Labs. Runs the weekly sync.\n")
    # One typed edge into Sarah's page (a fact on Tom's page): strength 2, against Maya's
    # single mention (strength 1) that comes first in Sarah's own text.
    put(vault, "people/tom-reyes.md",
        "---\ntype: person\n---\n# Tom Reyes\n\nOperating partner.\n\n## Facts\n"
        "- advises:: [[Sarah Chen]] on portfolio hiring\n")
    put(vault, "organizations/horizon-ventures.md",
        "---\ntype: organization\n---\n# Horizon Ventures\n\nSeed fund in Lisbon. Small team.\n")
    put(vault, "organizations/kestrel-labs.md",
        "---\ntype: organization\n---\n# Kestrel Labs\n\nBuilds route planning for fleets.\n")
    put(vault, "organizations/acme-capital.md",
        "---\ntype: organization\n---\n# Acme Capital\n\nGrowth investor.\n")
    vault.index()
    return vault


def lines_of(vault: Vault, citation: str) -> list[str]:
    match = re.fullmatch(r"(.+)#L(\d+)-L(\d+)", citation)
    assert match, f"not a path#Lstart-Lend citation: {citation!r}"
    path, start, end = match.group(1), int(match.group(2)), int(match.group(3))
    text = (vault.root / path).read_text(encoding="utf-8").splitlines()
    assert 1 <= start <= end <= len(text), citation
    return text[start - 1 : end]


# -- resolving the name in a question ----------------------------------------------------------


@pytest.mark.parametrize(("question", "name"), [
    ("tell me about Horizon", "Horizon"),
    ("Tell me everything about Horizon Ventures?", "Horizon Ventures"),
    ("who is S. Chen?", "S. Chen"),
    ("what do we know about 'Kestrel Labs'", "Kestrel Labs"),
    ("Sarah", "Sarah"),
])
def test_entity_name_strips_the_question(question: str, name: str) -> None:
    assert entity_name(question) == name


@pytest.mark.parametrize(("question", "path"), [
    ("tell me about Horizon", "organizations/horizon-ventures.md"),  # a unique word of a title
    ("Sarah", SARAH),                                                  # an alias
    ("who is S. Chen?", SARAH),                                        # an alias with a dot
    ("what do we know about sarah chen", SARAH),                       # the title, any case
    ("people/sarah-chen.md", SARAH),                                   # the path
    ("tell me about Sarha Chen", SARAH),                               # a misspelling
    ("Maya Okafr", "people/maya-okafor.md"),                           # a misspelling
])
def test_recall_resolves_the_entity(v: Vault, question: str, path: str) -> None:
    assert v.resolve_entity(question).path == path
    assert v.recall(question).path == path


def test_an_ambiguous_word_lists_every_candidate(v: Vault) -> None:
    with pytest.raises(AmbiguousPage) as caught:
        v.recall("tell me about Chen")
    assert caught.value.candidates == ["people/david-chen.md", SARAH]
    assert "people/david-chen.md" in str(caught.value) and SARAH in str(caught.value)


@pytest.mark.parametrize("question", ["tell me about Zorblax", "who is Qwerty Uiop?",
                                      "Sxrxh Cxxn"])
def test_an_unknown_name_is_page_not_found(v: Vault, question: str) -> None:
    with pytest.raises(PageNotFound, match="no page named"):
        v.recall(question)


# -- the answer --------------------------------------------------------------------------------


def test_summary_is_cited_by_the_lines_that_hold_it(v: Vault) -> None:
    answer = v.recall("Sarah")
    assert answer.title == "Sarah Chen" and answer.type == "person"
    assert answer.summary.startswith("Partner at Horizon Ventures who led")
    cited = " ".join(line.strip() for line in lines_of(v, answer.summary_citation) if line.strip())
    assert cited == answer.summary
    assert not answer.truncated


def test_only_active_facts_that_still_hold(v: Vault) -> None:
    answer = v.recall("Sarah")
    texts = [f["text"] for f in answer.facts]
    assert texts == ["Partner on the seed team", "Prefers async updates over meetings",
                     "Mentors first-time founders on pricing"]
    # The superseded fact and the one that ended in 2001 are not current knowledge.
    assert not any("Associate" in t or "millennium" in t for t in texts)
    assert answer.facts[0]["relation"] == "works_at"
    assert answer.facts[0]["target"] == "Horizon Ventures"
    assert answer.facts[0]["epistemic"] == "assertion"
    for fact in answer.facts:
        (line,) = lines_of(v, fact["citation"])
        assert line.startswith("- ") and fact["text"] in line, (fact, line)


def test_a_fact_that_is_not_valid_yet_is_not_current(v: Vault) -> None:
    put(v, "people/zoe-park.md",
        "---\ntype: person\n---\n# Zoe Park\n\nDesigner.\n\n## Facts\n"
        "- Lives in Porto\n"
        "- works_at:: [[Acme Capital]] Joins as an analyst [from:: 2999-01]\n")
    v.index()
    texts = [f["text"] for f in v.recall("Zoe Park").facts]
    assert texts == ["Lives in Porto"], (
        f"recall lists {texts}: a fact valid only from 2999 does not hold today. "
        "kenning/recall/entity.py recall() checks valid_to but not valid_from; add "
        "`AND (valid_from IS NULL OR valid_from <= ?)` (search already treats a fact whose "
        "valid_from is after the as-of date as not holding)")


def test_timeline_is_newest_first_and_at_most_five(v: Vault) -> None:
    answer = v.recall("Sarah")
    newest = sorted(TIMELINE_DATES, reverse=True)[:5]
    assert [t["date"] for t in answer.timeline] == newest
    assert newest[0] == "2026-03-02" and "2023" not in newest
    for event in answer.timeline:
        (line,) = lines_of(v, event["citation"])
        assert line.startswith(f"- {event['date']} ") and event["text"] in line


def test_neighbours_by_strength_typed_edges_count_double(v: Vault) -> None:
    answer = v.recall("Sarah")
    order = [(n["title"], n["strength"]) for n in answer.neighbours]
    # Horizon: frontmatter organization + works_at fact (typed, 2 + 2); Kestrel: three prose
    # mentions (1 + 1 + 1); Tom: one typed `advises` edge into Sarah (2); Maya: one mention (1).
    # Tom outranks Maya only because typed edges count double: both have one edge, and
    # Maya's comes first in the index.
    assert order == [("Horizon Ventures", 4.0), ("Kestrel Labs", 3.0), ("Tom Reyes", 2.0),
                     ("Maya Okafor", 1.0)]
    by_title = {n["title"]: n for n in answer.neighbours}
    assert by_title["Horizon Ventures"]["relations"] == ["works_at"]
    assert by_title["Tom Reyes"]["relations"] == ["advises"]
    assert by_title["Maya Okafor"]["relations"] == ["mentions"]
    # The superseded works_at fact is not a current tie: Acme Capital is not a neighbour.
    assert "Acme Capital" not in by_title
    assert by_title["Kestrel Labs"]["summary"] == "Builds route planning for fleets."


def test_neighbour_citations_point_at_the_line_with_the_link(v: Vault) -> None:
    answer = v.recall("Sarah")
    assert answer.neighbours
    for n in answer.neighbours:
        (line,) = lines_of(v, n["citation"])
        assert f"[[{n['title']}]]" in line or "[[Sarah Chen]]" in line, (n, line)
    assert answer.neighbours[2]["citation"].startswith("people/tom-reyes.md#L")


def test_neighbour_citation_of_a_frontmatter_list_item_points_at_the_item_line(
        v: Vault) -> None:
    put(v, "meetings/board.md",
        "---\ntype: meeting\ndate: 2026-02-01\nattendees:\n  - \"[[Sarah Chen]]\"\n"
        "  - \"[[Maya Okafor]]\"\n---\n# Board meeting\n\nQuarterly numbers.\n")
    v.index()
    board = next(n for n in v.recall("Sarah").neighbours if n["path"] == "meetings/board.md")
    (line,) = lines_of(v, board["citation"])
    assert "[[Sarah Chen]]" in line, (
        f"the attended edge from a block-list `attendees:` item cites {board['citation']} = "
        f"{line!r}, the key line, not the item line holding the link: frontmatter edges get "
        "the key's line (kenning/index/indexer.py frontmatter_key_lines → "
        "index/edges.py frontmatter_edges); give each list item its own line")


def test_budget_truncates_and_is_respected(v: Vault) -> None:
    full = v.recall("Sarah")
    assert not full.truncated
    # The budget counts the whole answer as sent: its JSON, four bytes a token.
    assert full.tokens == _sent(full.to_dict())
    small = v.recall("Sarah", budget=full.tokens - 1)
    assert small.truncated and small.tokens == _sent(small.to_dict()) <= full.tokens - 1
    skeleton = {k: v for k, v in full.to_dict().items()
                if k not in ("facts", "timeline", "neighbours")}
    tiny = v.recall("Sarah", budget=_sent(skeleton) + 5)
    assert tiny.truncated and _sent(tiny.to_dict()) <= _sent(skeleton) + 5
    assert (tiny.facts, tiny.timeline, tiny.neighbours) == ([], [], [])
    assert tiny.summary == full.summary  # the summary always comes first
    for budget in (60, 120, 250, 500):
        assert _sent(v.recall("Sarah", budget=budget).to_dict()) <= budget
    # What is kept is a prefix of each full section, in the same order.
    for part in ("facts", "timeline", "neighbours"):
        kept, whole = getattr(small, part), getattr(full, part)
        assert kept == whole[: len(kept)]


def _sent(answer: dict[str, Any]) -> int:
    return estimate_tokens(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))


def test_a_long_summary_does_not_blow_the_budget(v: Vault) -> None:
    long_summary = " ".join(f"Sentence {i} about the fund's early history." for i in range(60))
    put(v, "people/zed-long.md", f"---\ntype: person\n---\n# Zed Long\n\n{long_summary}\n")
    v.index()
    answer = v.recall("Zed Long", budget=100)
    assert answer.tokens <= 100 and answer.truncated, (
        f"recall(budget=100) spent {answer.tokens} tokens: kenning/recall/entity.py recall() "
        "adds the whole summary before checking the budget; clip the summary to the budget "
        "(and set truncated) instead")


def test_overview_is_one_line_per_page_entity_first(v: Vault) -> None:
    full = v.recall("Sarah")
    answer = v.recall("Sarah", overview=True)
    paths = [line["path"] for line in answer.overview]
    assert paths == [SARAH, *(n["path"] for n in full.neighbours)]
    assert len(set(paths)) == len(paths)
    assert answer.facts == answer.timeline == answer.neighbours == []
    first = answer.overview[0]
    assert first["summary"] == "Partner at Horizon Ventures who led the Kestrel seed round."
    assert first["citation"] == full.summary_citation
    assert all(set(line) == {"path", "title", "type", "summary", "citation"}
               for line in answer.overview)
    cut = v.recall("Sarah", overview=True, budget=answer.tokens - 1)
    assert cut.truncated and cut.tokens <= answer.tokens - 1
    assert cut.overview == answer.overview[: len(cut.overview)]


def test_overview_of_a_page_with_a_long_summary_still_lists_the_entity(v: Vault) -> None:
    long_summary = " ".join(f"Sentence {i} about the fund's early history." for i in range(60))
    put(v, "people/zed-long.md",
        f"---\ntype: person\n---\n# Zed Long\n\n{long_summary}\n\nKnows [[Sarah Chen]].\n")
    v.index()
    answer = v.recall("Zed Long", overview=True, budget=300)
    assert [line["path"] for line in answer.overview][:1] == ["people/zed-long.md"], (
        "overview lines are one sentence each, but kenning/recall/entity.py recall() first "
        f"charges the whole summary ({estimate_tokens(long_summary)} tokens) to the budget, "
        "so the overview comes back empty; start `spent` at 0 in overview mode")


# -- CLI and activity --------------------------------------------------------------------------


def test_cli_recall_json_and_plain(v: Vault) -> None:
    runner = CliRunner()
    api = v.recall("Sarah").to_dict()
    done = runner.invoke(main, ["-C", str(v.root), "recall", "tell", "me", "about", "Sarah",
                                "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data == json.loads(json.dumps(api))
    assert data["path"] == SARAH and data["facts"] and data["timeline"] and data["neighbours"]

    done = runner.invoke(main, ["-C", str(v.root), "recall", "Sarah"])
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert out.splitlines()[0].startswith("Sarah Chen (person) people/sarah-chen.md")
    assert f"She prefers written updates. {api['summary_citation']}" in " ".join(out.split())
    for label in ("Facts", "Latest", "Connected"):
        assert f"\n{label}\n" in out
    assert "works_at → Horizon Ventures Partner on the seed team" in out
    assert "2026-03-02  Met at the offsite; agreed a pilot." in out
    assert "advises Tom Reyes" in out
    assert "Associate on growth" not in out

    done = runner.invoke(main, ["-C", str(v.root), "recall", "Sarah", "--overview"])
    assert done.exit_code == 0, done.output
    assert len(done.stdout.strip().splitlines()) == 1 + len(api["neighbours"])

    done = runner.invoke(main, ["-C", str(v.root), "recall", "Sarah", "--budget", "60"])
    assert done.exit_code == 0 and "(cut at the 60-token budget)" in done.stdout


@pytest.mark.parametrize(("args", "code", "words"), [
    (["recall", "Zorblax"], 1, ["no page named 'Zorblax'"]),
    (["recall", "Chen"], 1, ["people/david-chen.md", SARAH]),
    (["recall", "Sarah", "--budget", "10"], 2, ["--budget"]),
])
def test_cli_recall_errors_are_one_clear_line(v: Vault, args: list[str], code: int,
                                              words: list[str]) -> None:
    done = CliRunner().invoke(main, ["-C", str(v.root), *args])
    assert done.exit_code == code, done.output
    assert "Traceback" not in done.output
    for word in words:
        assert word in done.stderr


def test_recall_records_the_page_in_activity(v: Vault) -> None:
    assert SARAH not in activity.last_recalled(v.root)
    v.recall("who is S. Chen?")
    seen = activity.last_recalled(v.root)
    assert seen == {SARAH: date.today().isoformat()}
    assert (v.root / ".kenning" / "activity.db").exists()
    v.recall("Horizon")
    assert set(activity.last_recalled(v.root)) == {SARAH, "organizations/horizon-ventures.md"}
    # A failed recall records nothing.
    with pytest.raises(PageNotFound):
        v.recall("Zorblax")
    assert len(activity.last_recalled(v.root)) == 2
