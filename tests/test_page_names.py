"""Pages Kenning creates are named the way Obsidian users name notes (`people/Hannah Berg.md`),
safe on every file system; an older Kenning's slug-named pages move on the next build with their
links; a dry run on a fresh vault reports no renames of pages that do not exist yet; a merge
recounts the summary and merges duplicate `works_at` facts."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from click.testing import CliRunner
from test_build import ALEX, SARAH, build, email, log, meeting, page, snapshot, vault

from kenning.builder.filenames import title_line
from kenning.builder.rename import Target, _key, rewrite_links
from kenning.builder.workspace import Workspace
from kenning.cli import main
from kenning.memory.common import new_page_path
from kenning.vault.layout import MAX_STEM_BYTES, entity_file_name, slug_file_name

WINDOWS_FORBIDDEN = set('/\\:*?"<>|')
LINK_BREAKING = set("#^[]|")


def pages_by_title(root: Path, folder: str) -> dict[str, str]:
    """Title (the H1 Kenning wrote) → vault path, for every page in ``folder``."""
    out = {}
    for p in sorted((root / folder).glob("*.md")):
        title = title_line(p.read_text(encoding="utf-8"))
        assert title is not None, p
        out[title] = p.relative_to(root).as_posix()
    return out


# -- the name itself ------------------------------------------------------------------------------


def test_file_names_keep_the_title_and_are_safe_everywhere() -> None:
    titles = ["Sarah Chen", "Zoë Müller", "Re: Q3/Q4 budget?", 'The "Lisbon" plan',
              "C# team [draft]", "..hidden", "trailing dots...", "CON", "lpt1.notes",
              "a | b ^ c", "日本市場" * 40,
              "word " * 60, "Tab\there\x07bell", "Zoe\u0308 decomposed", "", "   "]
    for title in titles:
        name = entity_file_name(title)
        stem = name[:-3]
        assert name.endswith(".md") and stem
        assert not (set(stem) & (WINDOWS_FORBIDDEN | LINK_BREAKING)), title
        assert not stem.startswith(".") and not stem.endswith((".", " ")), title
        assert all(unicodedata.category(c)[0] != "C" for c in stem), title
        assert unicodedata.is_normalized("NFC", stem), title
        assert len(stem.encode("utf-8")) <= MAX_STEM_BYTES, title
        assert stem.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL", "LPT1"}, title
    assert entity_file_name("Sarah Chen") == "Sarah Chen.md"
    assert entity_file_name("Zoë Müller") == "Zoë Müller.md"
    assert entity_file_name("Re: Q3/Q4 budget?") == "Re Q3-Q4 budget.md"
    assert entity_file_name("Zoe\u0308") == "Zoë.md"  # NFC, as macOS would store it anyway
    assert entity_file_name("word " * 60).endswith("word.md")  # cut at a word
    assert slug_file_name("Sarah Chen") == "sarah-chen.md"  # what an older Kenning wrote


def test_collisions_are_case_insensitive_with_obsidian_suffixes(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "people" / "sarah chen.md").write_text("a note of the same name\n")
    assert new_page_path(tmp_path, "people/Sarah Chen.md") == "people/Sarah Chen 2.md"
    (tmp_path / "people" / "SARAH CHEN 2.md").write_text("x\n")
    assert new_page_path(tmp_path, "people/Sarah Chen.md") == "people/Sarah Chen 3.md"
    assert new_page_path(tmp_path, "people/Dana Ruiz.md") == "people/Dana Ruiz.md"


def test_build_names_pages_and_meetings_by_their_titles(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hello", "2026-03-01", [("Zoë Müller", "zoe@muller.example", "from"), ALEX])
    email(root, "b", "Hi", "2026-03-02", [("Tom Baker", "tom@acme.example", "from"), ALEX])
    email(root, "c", "Hi", "2026-03-03", [("Tom Baker", "tbaker@globex.example", "from"), ALEX])
    meeting(root, "replay", "Replay cache review", "2026-10-07", ["Zoë Müller", "Alex Morgan"],
            {"Zoë Müller": "zoe@muller.example"})
    build(root)
    people = sorted(p.name for p in (root / "people").glob("*.md"))
    assert "Zoë Müller.md" in people
    # Two people of one name at two organizations: Obsidian's own suffix for the second.
    assert {"Tom Baker.md", "Tom Baker 2.md"} <= set(people)
    meetings = pages_by_title(root, "meetings")
    assert meetings == {"Replay cache review": "meetings/2026-10-07 Replay cache review.md"}
    zoe = (root / "people" / "Zoë Müller.md").read_text(encoding="utf-8")
    assert "[[2026-10-07 Replay cache review|Replay cache review]]" in zoe
    # A second build finds the meeting's page again by the source it cites.
    before = snapshot(root)
    build(root)
    assert snapshot(root) == before


def test_a_persons_note_with_the_meetings_name_is_never_edited(tmp_path: Path) -> None:
    root = vault(tmp_path)
    mine = root / "meetings" / "2026-10-07 Replay cache review.md"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text("My own notes of the review.\n", encoding="utf-8")
    meeting(root, "replay", "Replay cache review", "2026-10-07", ["Zoë Müller"])
    build(root)
    assert mine.read_text(encoding="utf-8") == "My own notes of the review.\n"
    assert (root / "meetings" / "2026-10-07 Replay cache review 2.md").exists()


# -- dry run: a page created and renamed in one run is a create --------------------------------


def test_dry_run_on_a_fresh_vault_reports_no_renames_of_pages_not_there(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-03-01", [("Sarah", "sarah@horizon.vc", "from"), ALEX])
    email(root, "b", "Hi again", "2026-03-03", [SARAH, ALEX])
    before = snapshot(root)
    planned = build(root, "--dry-run", "--batch-size", "1")
    assert snapshot(root) == before
    assert planned["renamed"] == []
    done = build(root, "--batch-size", "1")
    assert done["renamed"] == [] and planned["pages_created"] == done["pages_created"]
    titles = pages_by_title(root, "people")
    assert titles["Sarah Chen"] in done["pages_created"]
    assert not any(p.endswith("/Sarah.md") for p in done["pages_created"])


# -- migration of an older Kenning's vault -------------------------------------------------------


def _as_older_kenning(root: Path) -> dict[str, str]:
    """Turn a vault this build made into the one an older Kenning left: the pages it created
    named by slugs (``people/sarah-chen.md``, ``meetings/<source file>.md``) with every link,
    the build state and the mention log to match, and no created-page registry."""
    ws = Workspace(root)
    state = json.loads((root / ".kenning/build/state.json").read_text())
    created = json.loads((root / ".kenning/created.json").read_text())["pages"]
    moves: dict[str, str] = {}
    for path in created:
        text = ws.read(path)
        assert text is not None
        folder = path.rsplit("/", 1)[0]
        if folder == "meetings":
            source = text.split("[[sources/meetings/", 1)[1].split("#", 1)[0]
            moves[path] = f"meetings/{source}.md"
        else:
            moves[path] = f"{folder}/{slug_file_name(title_line(text) or '')}"
    targets = []
    for new, old in moves.items():
        ws.write(old, ws.read(new) or "")
        ws.delete(new)
        targets.append(Target(new, old, old.rsplit("/", 1)[1][:-3],
                              {_key(new), _key(new[:-3]), _key(new.rsplit("/", 1)[1][:-3])},
                              "", bare=True))
    rewrite_links(ws, targets)
    ws.commit()
    state["pages"] = {moves.get(k, k): v for k, v in state["pages"].items()}
    (root / ".kenning/build/state.json").write_text(json.dumps(state))
    rows = log(root)
    for r in rows:
        r["page"] = moves.get(r["page"], r["page"])
    (root / ".kenning/build/mentions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    (root / ".kenning/created.json").unlink()
    return moves


def test_an_older_vaults_slug_pages_move_with_their_links(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Seed round", "2026-03-01", [SARAH, ALEX],
          signature="Sarah Chen · Partner · Horizon Ventures")
    meeting(root, "sync", "Weekly sync", "2026-03-04", ["Sarah Chen", "Alex Morgan"],
            {"Sarah Chen": "sarah@horizon.vc"})
    build(root)
    moves = _as_older_kenning(root)
    assert (root / "people/sarah-chen.md").exists()
    assert (root / "meetings/2026-03-04-sync.md").exists()
    # A person's own notes: one slug-named like Kenning's were, one linking to Kenning's pages.
    theirs = root / "people" / "john-smith.md"
    theirs.write_text("---\ntype: person\n---\n# John Smith\n\nMy neighbour.\n")
    note = root / "memory" / "2026-03-05.md"
    note.write_text("Met [[sarah-chen]] ([[sarah-chen|Sarah]], [[people/sarah-chen]]) after the "
                    "[[2026-03-04-sync]]; [notes](../people/sarah-chen.md#Timeline). "
                    "[[john-smith]] too.\n`[[sarah-chen]]` stays.\n", encoding="utf-8")
    source = root / "sources/email/2026-03-01-a.md"
    source_bytes = source.read_bytes()
    manual = root / ".kenning" / "manual-links.jsonl"
    manual.write_text(json.dumps({"op": "add", "src": "people/john-smith.md", "rel": "knows",
                                  "dst": "people/sarah-chen.md"}) + "\n")
    theirs_bytes = theirs.read_bytes()

    before = snapshot(root)
    planned = build(root, "--dry-run")
    assert snapshot(root) == before  # a dry run moves nothing
    expected = [{"from": old, "to": new} for new, old in moves.items()]
    assert sorted(planned["renamed"], key=lambda r: r["from"]) == \
        sorted(expected, key=lambda r: r["from"])
    assert "+++ b/people/Sarah Chen.md" in planned["diff"]

    done = build(root)
    assert sorted(done["renamed"], key=lambda r: r["from"]) == \
        sorted(expected, key=lambda r: r["from"])
    assert (root / "people/Sarah Chen.md").exists() and not (root / "people/sarah-chen.md").exists()
    assert (root / "meetings/2026-03-04 Weekly sync.md").exists()
    assert note.read_text(encoding="utf-8") == (
        "Met [[Sarah Chen]] ([[Sarah Chen|Sarah]], [[people/Sarah Chen]]) after the "
        "[[2026-03-04 Weekly sync]]; [notes](../people/Sarah%20Chen.md#Timeline). "
        "[[john-smith]] too.\n`[[sarah-chen]]` stays.\n")
    sarah = (root / "people/Sarah Chen.md").read_text(encoding="utf-8")
    assert "[[Horizon Ventures]]" in sarah and "horizon-ventures" not in sarah
    assert "[[2026-03-04 Weekly sync|Weekly sync]]" in sarah
    assert theirs.read_bytes() == theirs_bytes  # a person's slug-named note never moves
    assert source.read_bytes() == source_bytes  # sources/ is append-only
    assert json.loads(manual.read_text().splitlines()[0])["dst"] == "people/Sarah Chen.md"
    registry = json.loads((root / ".kenning/created.json").read_text())["pages"]
    assert "people/Sarah Chen.md" in registry and "people/john-smith.md" not in registry
    assert {r["page"] for r in log(root) if r["email"] == "sarah@horizon.vc"} == \
        {"people/Sarah Chen.md"}
    # Idempotent: the next build moves and changes nothing.
    after = snapshot(root)
    again = build(root)
    assert again["renamed"] == [] and snapshot(root) == after


# -- merge -----------------------------------------------------------------------------------------


def test_merge_recounts_the_summary_and_merges_duplicate_works_at(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2026-03-01", [SARAH, ALEX],
          signature="Sarah Chen · Partner · Horizon Ventures")
    # Another domain, so the build keeps two pages (at one domain the address book would see
    # one person: s.chen spells S. Chen, who is Sarah Chen there).
    email(root, "b", "Two", "2026-02-01", [("S. Chen", "s.chen@hv-mail.example", "from"), ALEX],
          signature="S. Chen · Associate · Horizon Ventures")
    email(root, "c", "Three", "2026-03-05", [("S. Chen", "s.chen@hv-mail.example", "from"),
                                             ALEX])
    build(root)
    titles = pages_by_title(root, "people")
    keep, other = titles["Sarah Chen"], titles["S. Chen"]
    result = CliRunner().invoke(main, ["-C", str(root), "merge", keep, other, "--json"])
    assert result.exit_code == 0, result.output
    merged = page(root, keep)
    works = [f for f in merged.facts if f.relation == "works_at"]
    assert len(works) == 1
    assert works[0].seen == "2026-02-01"  # the earliest evidence
    assert works[0].source and "2026-03-01-a" in works[0].source  # the latest evidence
    assert works[0].status == "active"
    assert merged.summary is not None and "3 email threads" in merged.summary
    assert not (root / other).exists()


def test_the_build_reads_a_persons_untyped_note_and_never_writes_it(tmp_path: Path) -> None:
    root = vault(tmp_path)
    mine = root / "people" / "Sarah Chen.md"
    mine.write_text("Sarah, an old friend from Lisbon.\n", encoding="utf-8")
    email(root, "a", "Seed round", "2026-03-01", [SARAH, ALEX])
    build(root)
    assert mine.read_text(encoding="utf-8") == "Sarah, an old friend from Lisbon.\n"
    assert sorted(p.name for p in (root / "people").glob("*.md")) == ["Sarah Chen.md"]
    assert {r["page"] for r in log(root) if r["email"] == "sarah@horizon.vc"} == \
        {"people/Sarah Chen.md"}  # her mentions still resolve to the note
