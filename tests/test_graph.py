"""The graph: neighbours, traversal (clamped, cycle-safe, typed, directed, as-of), paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write as put

from kenning import Vault
from kenning.cli import main
from kenning.graph.queries import MAX_DEPTH


@pytest.fixture
def chain(tmp_path: Path) -> Vault:
    """n0 → n1 → … → n14 → n0 (a cycle), plus typed facts on n0."""
    vault, _ = Vault.init(tmp_path / "v")
    n = 15
    for i in range(n):
        put(vault, f"topics/n{i}.md", f"# N{i}\n\nNext is [[N{(i + 1) % n}]].\n")
    put(vault, "people/ann.md",
        "---\ntype: person\norganization: \"[[Acme]]\"\n---\n# Ann\n\n## Facts\n"
        "- works_at:: [[Old Co]] [from:: 2020-01] [to:: 2023-12] [status:: superseded]\n"
        "- advises:: [[Acme]] [from:: 2024-06]\n"
        "- invested_in:: [[Shady]] [status:: invalidated]\n")
    put(vault, "organizations/acme.md", "---\ntype: organization\n---\n# Acme\n")
    put(vault, "organizations/Old Co.md", "---\ntype: organization\n---\n# Old Co\n")
    put(vault, "organizations/shady.md", "---\ntype: organization\n---\n# Shady\n")
    put(vault, "topics/lonely.md", "---\ntype: topic\n---\n# Lonely\n\nNo links at all.\n")
    vault.index()
    return vault


def test_traverse_is_cycle_safe_and_depth_is_clamped(chain: Vault) -> None:
    result = chain.traverse("N0", depth=3)
    assert [(n.title, n.depth) for n in result.nodes] == [("N1", 1), ("N2", 2), ("N3", 3)]
    deep = chain.traverse("N0", depth=1000)
    assert deep.depth == MAX_DEPTH
    assert max(n.depth for n in deep.nodes) == MAX_DEPTH
    assert len(deep.nodes) == MAX_DEPTH  # N1..N10, the cycle back to N0 is not re-entered
    assert all(n.title != "N0" for n in deep.nodes)


def test_traverse_direction_in_and_both(chain: Vault) -> None:
    assert [n.title for n in chain.traverse("N0", depth=1, direction="in").nodes] == ["N14"]
    assert {n.title for n in chain.traverse("N0", depth=1, direction="both").nodes} == {
        "N1", "N14"}


def test_traverse_reports_the_edges_that_reached_each_node(chain: Vault) -> None:
    result = chain.traverse("N0", depth=2)
    titles = {n.id: n.title for n in [result.start, *result.nodes]}
    assert sorted((titles[a], r, titles[b]) for a, r, b in result.edges) == [
        ("N0", "mentions", "N1"), ("N1", "mentions", "N2")]


def test_neighbors_typed_with_provenance_and_current_by_default(chain: Vault) -> None:
    edges = chain.neighbors("Ann", direction="out")
    seen = {(e.rel, e.other.title, e.kind) for e in edges}
    assert seen == {("works_at", "Acme", "frontmatter"), ("advises", "Acme", "fact")}
    fact = next(e for e in edges if e.kind == "fact")
    assert fact.origin == "people/ann.md" and fact.line == 9
    assert fact.valid_from == "2024-06-01"


def test_as_of_shows_what_held_then_and_never_invalidated_facts(chain: Vault) -> None:
    then = {(e.rel, e.other.title) for e in chain.neighbors("Ann", direction="out",
                                                              as_of="2022-05-01")}
    assert ("works_at", "Old Co") in then
    assert ("advises", "Acme") not in then
    assert all(title != "Shady" for _, title in then)
    later = {(e.rel, e.other.title) for e in chain.neighbors("Ann", direction="out",
                                                               as_of="2025-01-01")}
    assert ("advises", "Acme") in later and ("works_at", "Old Co") not in later


def test_rel_filter_and_synonyms(chain: Vault) -> None:
    only = chain.neighbors("Ann", rels=["employed_by"], direction="out")
    assert {(e.rel, e.other.title) for e in only} == {("works_at", "Acme")}
    with pytest.raises(ValueError, match="allowed"):
        chain.neighbors("Ann", rels=["likes"])


def test_path_and_no_path(chain: Vault) -> None:
    route = chain.path("N0", "N3", direction="out")
    assert [(n.title, rel) for n, rel in route] == [
        ("N0", None), ("N1", "mentions"), ("N2", "mentions"), ("N3", "mentions")]
    assert chain.path("N0", "Lonely") == []
    shortest = chain.path("N0", "N13", direction="both")
    assert len(shortest) == 3  # N0 ← N14 ← N13 the other way round the cycle


def test_backlinks_and_orphans(chain: Vault) -> None:
    back = chain.backlinks("Acme")
    assert {(e.rel, e.other.title, e.direction) for e in back} == {
        ("works_at", "Ann", "in"), ("advises", "Ann", "in")}
    assert [n.path for n in chain.orphans()] == ["topics/lonely.md"]


def test_believed_on_and_as_of_are_two_time_lines(vault: Vault) -> None:
    put(vault, "organizations/Horizon Ventures.md",
        "---\ntype: organization\n---\n# Horizon Ventures\n")
    put(vault, "organizations/techflow.md", "---\ntype: organization\n---\n# TechFlow\n")
    put(vault, "people/sarah-chen.md", "---\ntype: person\n---\n# Sarah Chen\n\n## Facts\n\n"
        "- works_at:: [[Horizon Ventures]] Partner [from:: 2024-05-01] [to:: 2026-02-28] "
        "[recorded:: 2026-01-10] [expired:: 2026-03-01] [status:: superseded] "
        "[by:: [[Sarah Chen#^f2]]] ^f1\n"
        "- works_at:: [[TechFlow]] CTO [from:: 2026-03-01] [recorded:: 2026-03-01] ^f2\n"
        # Learned late (recorded in April) about a past job: true in 2023, believed only later.
        "- works_at:: [[TechFlow]] Advisor [from:: 2023-01-01] [to:: 2023-12-31] "
        "[recorded:: 2026-04-02] ^f3\n")
    vault.index()

    def orgs(**when: str) -> list[tuple[str, str | None]]:
        edges = vault.neighbors("Sarah Chen", rels=["works_at"], direction="out", **when)
        return sorted((e.other.title, e.valid_from) for e in edges)

    assert orgs() == [("TechFlow", "2026-03-01")]
    assert orgs(believed_on="2026-02-01") == [("Horizon Ventures", "2024-05-01")]
    assert orgs(believed_on="2026-03-15") == [("TechFlow", "2026-03-01")]
    assert orgs(believed_on="2025-12-01") == []
    # What was true in 2023, by today's knowledge vs by what we knew in March 2026.
    assert orgs(as_of="2023-06-01") == [("TechFlow", "2023-01-01")]
    assert orgs(as_of="2023-06-01", believed_on="2026-03-15") == []
    assert orgs(as_of="2025-06-01", believed_on="2026-02-01") == [("Horizon Ventures",
                                                                  "2024-05-01")]
    out = CliRunner().invoke(main, ["-C", str(vault.root), "graph", "neighbors", "Sarah Chen",
                                    "--believed-on", "2026-02-01", "--json"])
    assert out.exit_code == 0 and [e["path"] for e in json.loads(out.output)] == [
        "organizations/Horizon Ventures.md"]


def test_neighbourhood_caps_breadth_first_and_counts_the_rest(chain: Vault) -> None:
    """Vault.neighbourhood (the web graph's picture): capped, nearest first, with provenance,
    the left-out pages counted, the dates its edges carry; the same on both backends."""
    hood = chain.neighbourhood("N0", depth=3, direction="both")
    assert sorted((n.title, n.depth) for n in hood.nodes) == [
        ("N1", 1), ("N12", 3), ("N13", 2), ("N14", 1), ("N2", 2), ("N3", 3)]
    assert hood.more_count == 0
    titles = {n.id: n.title for n in [hood.start, *hood.nodes]}
    assert ("N0", "mentions", "N1") in {(titles[e.src], e.rel, titles[e.dst]) for e in hood.edges}
    edge = next(e for e in hood.edges if titles[e.src] == "N0")
    assert edge.citation == "topics/n0.md#L3-L3"
    capped = chain.neighbourhood("N0", depth=3, direction="both", limit=3)
    assert [n.title for n in capped.nodes] == ["N1", "N14"]
    assert capped.more_count == 2 and {n.title for n in capped.more} == {"N2", "N13"}
    ann = chain.neighbourhood("Ann", depth=1, direction="out")
    assert {n.title for n in ann.nodes} == {"Acme"}  # current edges only by default
    assert any(f[0] == "works_at" and f[1] == "2020-01-01" for f in ann.facets)
    then = chain.neighbourhood("Ann", depth=1, direction="out", as_of="2022-05-01")
    assert {n.title for n in then.nodes} == {"Acme", "Old Co"}
