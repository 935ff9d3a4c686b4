"""Typed links with provenance: resolution, frontmatter mapping, inference, reconciliation."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault
from kenning.index.edges import infer_relation, self_names


def edges(vault: Vault, origin: str) -> list[tuple[str, str | None, str | None, str, str]]:
    """(rel, src path, dst path, kind, resolution) for edges a page produced."""
    return sorted(vault.store.rows(
        """SELECT l.rel, s.path, d.path, l.kind, l.resolution FROM links l
           JOIN pages o ON o.id = l.origin_id
           LEFT JOIN pages s ON s.id = l.src_id LEFT JOIN pages d ON d.id = l.dst_id
           WHERE o.path = ?""", (origin,)), key=str)


@pytest.fixture
def v(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "people/sarah-chen.md",
        "---\ntype: person\naliases: [Sarah, S. Chen]\norganization: \"[[Horizon Ventures]]\"\n"
        "---\n# Sarah Chen\n\nPartner at a fund.\n")
    put(vault, "organizations/horizon.md",
        "---\ntype: organization\ntitle: Horizon Ventures\naliases: [Horizon VC]\n"
        "key_people: [\"[[Sarah Chen]]\", \"[[Maya]]\"]\ninvestors: []\n---\n"
        "# Horizon Ventures\n\nA fund that invested in [[Kestrel Labs]].\n")
    put(vault, "organizations/kestrel.md",
        "---\ntype: organization\n---\n# Kestrel Labs\n\nMaya founded it.\n")
    put(vault, "people/maya.md",
        "---\ntype: person\n---\n# Maya Okafor\n\nMaya founded [[Kestrel Labs]] in 2024. "
        "She met [[Sarah]] and [[S. Chen]] and [[sarah-chen]] and [[people/sarah-chen|her]].\n\n"
        "```\n[[Not A Link]]\n```\n\nInline `[[Also Not]]` code.\n\n"
        "See [the fund](../organizations/horizon.md) and [web](https://example.com/x.md).\n\n"
        "## Facts\n- advises:: [[Horizon Ventures]] on hiring [from:: 2025-01] [to:: 2025-06]"
        " [status:: superseded]\n- employed_by:: [[Kestrel Labs]] CEO\n")
    put(vault, "meetings/seed.md",
        "---\ntype: meeting\ndate: 2026-01-12\nattendees: [\"[[Maya Okafor]]\", \"[[Sarah]]\"]\n"
        "related: \"[[Kestrel Labs]]\"\n---\n# Seed close\n\nTom, who advises [[Kestrel Labs]],"
        " joined late. Talked to [[Nobody Known]].\n")
    vault.index()
    return vault


def test_wikilinks_resolve_by_title_alias_stem_and_path(v: Vault) -> None:
    rows = edges(v, "people/maya.md")
    targets = [r[2] for r in rows if r[3] == "wikilink"]
    assert targets.count("people/sarah-chen.md") == 4  # alias, alias, file stem, path|alias
    assert all(r[4] == "resolved" for r in rows if r[3] == "wikilink")


def test_links_in_code_are_ignored(v: Vault) -> None:
    refs = [r[0] for r in v.store.rows("SELECT dst_ref FROM links")]
    assert "Not A Link" not in refs and "Also Not" not in refs


def test_markdown_links_to_vault_files_resolve_relative_to_the_page(v: Vault) -> None:
    rows = [r for r in edges(v, "people/maya.md") if r[3] == "markdown"]
    assert rows == [("mentions", "people/maya.md", "organizations/horizon.md", "markdown",
                     "resolved")]


def test_frontmatter_fields_become_typed_directed_edges(v: Vault) -> None:
    sarah = edges(v, "people/sarah-chen.md")
    assert ("works_at", "people/sarah-chen.md", "organizations/horizon.md", "frontmatter",
            "resolved") in sarah
    horizon = edges(v, "organizations/horizon.md")
    # key_people point *from* the person *to* the organization.
    assert ("works_at", "people/sarah-chen.md", "organizations/horizon.md", "frontmatter",
            "resolved") in horizon
    meeting = edges(v, "meetings/seed.md")
    assert ("attended", "people/maya.md", "meetings/seed.md", "frontmatter", "resolved") in meeting
    assert ("attended", "people/sarah-chen.md", "meetings/seed.md", "frontmatter",
            "resolved") in meeting
    assert ("related_to", "meetings/seed.md", "organizations/kestrel.md", "frontmatter",
            "resolved") in meeting


def test_fact_lines_are_typed_with_folded_synonyms_and_validity(v: Vault) -> None:
    rows = v.store.rows(
        "SELECT rel, valid_from, valid_to, status FROM links WHERE kind = 'fact' ORDER BY rel"
    )
    assert rows == [("advises", "2025-01-01", "2025-06-30", "superseded"),
                    ("works_at", None, None, "active")]


def test_prose_links_typed_from_their_sentence_only_when_the_page_is_the_subject(v: Vault
                                                                                   ) -> None:
    maya = edges(v, "people/maya.md")
    assert ("founded", "people/maya.md", "organizations/kestrel.md", "wikilink",
            "resolved") in maya
    horizon = edges(v, "organizations/horizon.md")
    assert ("invested_in", "organizations/horizon.md", "organizations/kestrel.md", "wikilink",
            "resolved") in horizon
    # "Tom, who advises [[Kestrel Labs]]" on a meeting page is about Tom: only a mention.
    seed = [r for r in edges(v, "meetings/seed.md") if r[3] == "wikilink"]
    assert ("mentions", "meetings/seed.md", "organizations/kestrel.md", "wikilink",
            "resolved") in seed
    assert not [r for r in seed if r[0] == "advises"]


@pytest.mark.parametrize(("sentence", "target", "names", "rel"), [
    ("Maya founded [[Kestrel]] in 2024.", "Kestrel", {"maya"}, "founded"),
    ("She co-founded [[Kestrel]].", "Kestrel", set(), "founded"),
    ("Fund that invested in [[Kestrel]].", "Kestrel", set(), "invested_in"),
    ("He works at [[Acme]] as a lead.", "Acme", set(), "works_at"),
    ("Staff Engineer at [[Acme]].", "Acme", set(), "works_at"),
    ("We depend on [[Postgres]].", "Postgres", set(), "depends_on"),
    ("Tom advises [[Acme]].", "Acme", set(), "mentions"),
    ("[[Bob]] founded [[Acme]].", "Acme", set(), "mentions"),
    ("Design partner of [[Acme]].", "Acme", set(), "mentions"),
    ("Met with [[Acme]] today.", "Acme", set(), "mentions"),
])
def test_infer_relation(sentence: str, target: str, names: set[str], rel: str) -> None:
    assert infer_relation(sentence, target, frozenset(names)) == rel


@pytest.mark.parametrize("sentence", [
    # How-to prose: a condition, the reader addressed, an instrument, not a fact about the page.
    "If you're using [[Canvas]], you can embed a web page in a card.",
    "It gets slow when using [[Canvas]] on a phone.",
    "You can also tweak themes using [[Canvas]].",
    "Changes can be viewed and restored using [[Canvas]].",
    "Using [[Canvas]], you can customize how your notes appear.",
    "Are you using a [[Canvas]] that edits the file?",
    "The storage limit depends on your [[Canvas]].",
    "It can run on [[Canvas]] too.",
    "To find notes using the [[Canvas]] plugin, use the search.",
    "Rely on [[Canvas]] for backups.",
    # Negations, generic claims, passives (the relation points the other way).
    "It is not a part of [[Canvas]].",
    "Does not work for [[Canvas]] locations.",
    "It works for any kind of [[Canvas]].",
    "Replaced by [[Canvas]].",
    "Founded by [[Canvas]] in 2019.",
    "We no longer depend on [[Canvas]].",
])
def test_instructions_conditions_negations_and_passives_give_a_mention(sentence: str) -> None:
    assert infer_relation(sentence, "Canvas", frozenset({"guide"})) == "mentions"


@pytest.mark.parametrize(("sentence", "rel"), [
    ("Kestrel is using [[Canvas]] for its boards.", "uses"),
    ("She is working at [[Canvas]] now.", "works_at"),
    ("Uses [[Canvas]] as the query language.", "uses"),
    ("Using [[Canvas]] for wide area networks.", "uses"),
    ("Caused by [[Canvas]].", "caused_by"),
    ("Blocked by [[Canvas]].", "depends_on"),
    ("He was promoted to CTO at [[Canvas]].", "works_at"),
    ("Relies on [[Canvas]] and IP for transfers.", "depends_on"),
])
def test_facts_about_the_page_keep_their_type(sentence: str, rel: str) -> None:
    assert infer_relation(sentence, "Canvas", frozenset({"kestrel"})) == rel


def test_self_names_are_lowercase_words_of_title_and_aliases() -> None:
    assert self_names("Maya Okafor", ("M.O.",)) >= {"maya", "okafor"}


def test_unresolved_and_ambiguous_links_are_reported_not_dropped(v: Vault) -> None:
    put(v, "people/sam-a.md", "---\ntype: person\naliases: [Sam]\n---\n# Sam A\n")
    put(v, "people/sam-b.md", "---\ntype: person\naliases: [Sam]\n---\n# Sam B\n")
    put(v, "memory/2026-02-01.md", "# 2026-02-01\n\nLunch with [[Sam]].\n")
    v.index()
    states = dict(v.store.rows(
        "SELECT dst_ref, resolution FROM links WHERE dst_ref IN ('Sam', 'Nobody Known')"))
    assert states == {"Sam": "ambiguous", "Nobody Known": "unresolved"}
    health = v.doctor()
    checks = {f.check: f for f in health.findings}
    assert any("Nobody Known" in item for item in checks["dangling-links"].items)
    assert any("[[Sam]]" in item for item in checks["ambiguous-links"].items)
    # One alias on two pages is normal in Obsidian: a note, and the vault stays healthy.
    assert checks["aliases"].level == "note"
    assert health.ok


def test_new_page_resolves_links_that_were_dangling(v: Vault) -> None:
    put(v, "people/nobody.md", "---\ntype: person\naliases: [Nobody Known]\n---\n# Nobody\n")
    report = v.index()
    assert report.added == 1
    row = v.store.one("SELECT resolution FROM links WHERE dst_ref = 'Nobody Known'")
    assert row == ("resolved",)
    (v.root / "people/nobody.md").unlink()
    v.index()
    row = v.store.one("SELECT resolution, dst_id FROM links WHERE dst_ref = 'Nobody Known'"
                       )
    assert row == ("unresolved", None)


def test_editing_a_page_reconciles_only_its_own_edges(v: Vault) -> None:
    before_other = edges(v, "organizations/horizon.md")
    text = (v.root / "people/maya.md").read_text()
    put(v, "people/maya.md", text.replace("Maya founded [[Kestrel Labs]] in 2024. ", ""))
    v.index()
    assert edges(v, "organizations/horizon.md") == before_other
    maya = edges(v, "people/maya.md")
    assert not [r for r in maya if r[0] == "founded"]


def test_manual_edges_survive_extraction_and_rebuild(v: Vault) -> None:
    v.link("Maya Okafor", "advises", "Horizon Ventures")
    def manual() -> list[tuple[str, ...]]:
        return v.store.rows(
            """SELECT l.rel, s.path, d.path FROM links l JOIN pages s ON s.id = l.src_id
               JOIN pages d ON d.id = l.dst_id WHERE l.kind = 'manual'""")
    expected = [("advises", "people/maya.md", "organizations/horizon.md")]
    assert manual() == expected
    put(v, "people/maya.md", "---\ntype: person\n---\n# Maya Okafor\n\nRewritten entirely.\n")
    v.index()
    assert manual() == expected
    v.rebuild()
    assert manual() == expected
    v.link("Maya Okafor", "advises", "Horizon Ventures", remove=True)
    assert manual() == []
    v.rebuild()
    assert manual() == []


def test_manual_link_rejects_unknown_relation_listing_allowed(v: Vault) -> None:
    with pytest.raises(ValueError, match=r"allowed: .*works_at"):
        v.link("Maya Okafor", "likes", "Horizon Ventures")


def test_provenance_records_origin_field_and_line(v: Vault) -> None:
    rows = v.store.rows(
        """SELECT l.kind, l.field, l.line FROM links l JOIN pages o ON o.id = l.origin_id
           WHERE o.path = 'meetings/seed.md' ORDER BY l.line""")
    assert ("frontmatter", "attendees", 4) in rows
    assert ("frontmatter", "related", 5) in rows
    assert ("wikilink", None, 9) in rows


@pytest.mark.parametrize("sentence", [
    "Tom is a Staff Engineer at [[Acme]].",
    "Tom also advises [[Acme]].",
    "Tom, who advises [[Acme]], joined late.",
])
def test_someone_else_as_subject_gives_a_mention(sentence: str) -> None:
    assert infer_relation(sentence, "Acme", frozenset({"maya"})) == "mentions"


def test_retain_mentions_resolve_to_entity_pages(v: Vault) -> None:
    put(v, "memory/2026-03-02.md", "# 2026-03-02\n\n## Retain\n"
        "- W @Maya_Okafor: moved to Berlin\n- O(c=0.8) @Horizon_VC: will lead the A round\n"
        "- B @Unknown_Person: met someone\n")
    v.index()
    rows = edges(v, "memory/2026-03-02.md")
    assert ("mentions", "memory/2026-03-02.md", "people/maya.md", "fact", "resolved") in rows
    assert ("mentions", "memory/2026-03-02.md", "organizations/horizon.md", "fact",
            "resolved") in rows
    assert ("mentions", "memory/2026-03-02.md", None, "fact", "unresolved") in rows
    retained = v.store.rows("SELECT kind, confidence, date FROM retained ORDER BY line")
    assert retained == [("W", None, "2026-03-02"), ("O", 0.8, "2026-03-02"),
                        ("B", None, "2026-03-02")]


def test_other_frontmatter_fields_link_only_through_wikilinks(v: Vault) -> None:
    put(v, "decisions/d.md",
        "---\ntype: decision\ndecided: 2026-06-02\nadvises: \"[[Kestrel Labs]]\"\n"
        "reviewer: \"[[Maya Okafor]]\"\nnote: Horizon Ventures\n---\n# D\n")
    v.index()
    rows = [(r[0], r[2]) for r in edges(v, "decisions/d.md")]
    assert sorted(rows) == [("advises", "organizations/kestrel.md"),
                            ("related_to", "people/maya.md")]


def test_names_in_source_frontmatter_without_a_page_are_not_dangling_links(v: Vault) -> None:
    put(v, "sources/chats/standup.md", "---\ntype: source\nkind: chat\n"
        "participants: [Joanna, Ana Lima]\n---\n# Standup\n\n- **Joanna** (09:00): hi\n")
    put(v, "people/ana-lima.md", "---\ntype: person\n---\n# Ana Lima\n")
    v.index()
    resolved = dict(v.store.rows(
        "SELECT COALESCE(dst_ref, src_ref), resolution FROM links WHERE kind = 'frontmatter'"
        " AND COALESCE(dst_ref, src_ref) IN ('Joanna', 'Ana Lima')"))
    assert resolved == {"Joanna": "unresolved", "Ana Lima": "resolved"}
    checks = {f.check: f for f in v.doctor().findings}
    assert "dangling-links" not in checks or not any(
        "Joanna" in item for item in checks["dangling-links"].items)
    assert checks["source-names"].level == "ok" and "1 name" in checks["source-names"].message
