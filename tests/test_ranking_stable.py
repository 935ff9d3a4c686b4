"""Rankings that hold still: asking again, or for more results, never changes what comes first.

Searching records no recall activity (only deliberate use does: opening or recalling a page), and
the ranking for ``limit=k`` is exactly the first ``k`` of the ranking for any larger limit, in
every mode and grouping. Real vaults on disk: the bundled sample and a generated one.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from kenning.answers import result_path
from kenning.api import Vault
from kenning.cli import main
from kenning.recall import activity
from kenning.sample import copy_sample

LIMITS = (1, 2, 3, 5, 10, 20, 40)
SAMPLE_QUERIES = [
    "pricing", "Sarah", "what did we decide about pricing", "investor meeting", "Horizon Ventures",
    "hiring plan", "launch date", "who is the CTO", "budget", "customer feedback", "roadmap",
    "security review", "contract renewal", "onboarding", "demo", "Kestrel", "board meeting",
    "latency", "funding round", "partnership",
]
WORDS = ("cache", "index", "query", "latency", "budget", "invoice", "garden", "tomato", "sailing",
         "harbour", "release", "review", "migration", "schema", "vector", "ranking", "meeting",
         "pricing", "customer", "roadmap", "kernel", "thread", "lock", "deadline", "travel")


def _keys(results: Any) -> list[tuple[str, int, float]]:
    return [(r.path, r.hits[0].start_line if r.hits else 0, round(r.score, 9)) for r in results]


def _assert_prefixes(vault: Vault, queries: list[str], mode: str) -> int:
    """Every limit's results are the first ones of the largest limit's; returns the checks run."""
    checks = 0
    for group in ("page", "chunk"):
        for query in queries:
            full = _keys(vault.search(query, mode=mode, group=group, limit=max(LIMITS)))
            for k in LIMITS[:-1]:
                got = _keys(vault.search(query, mode=mode, group=group, limit=k))
                assert got == full[:k], (mode, group, query, k, got, full[:k])
                checks += 1
    return checks


def generated_vault(root: Path, notes: int = 80, seed: int = 13) -> Vault:
    """A vault of notes sharing words, with hub pages (many backlinks) and spread dates, so that
    page signals differ from the text scores they multiply."""
    rng = random.Random(seed)
    vault, _ = Vault.init(root)
    hubs = [f"Hub {w}" for w in WORDS[:4]]
    for title in hubs:
        (root / "notes" / f"{title}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / "notes" / f"{title}.md").write_text(
            f"# {title}\n\nAn index of notes about {' '.join(rng.sample(WORDS, 4))}.\n",
            encoding="utf-8")
    today = date.today()
    for n in range(notes):
        title = f"Note {n} {rng.choice(WORDS)}"
        links = " ".join(f"[[{h}]]" for h in rng.sample(hubs, rng.randint(0, 3)))
        paragraphs = "\n\n".join(" ".join(rng.choices(WORDS, k=rng.randint(6, 30))) + "."
                                 for _ in range(rng.randint(1, 6)))
        when = (today - timedelta(days=rng.randint(0, 400))).isoformat()
        (root / "notes" / f"{title}.md").write_text(
            f"---\ndate: {when}\n---\n# {title}\n\n{paragraphs}\n\nSee {links}\n", encoding="utf-8")
    vault.index(embed=False)
    return vault


def generated_queries(count: int = 40, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(count)]


# -- the limit ---------------------------------------------------------------------------------


def test_lexical_results_are_prefixes_of_larger_limits_on_the_sample(sample_vault: Vault
                                                                      ) -> None:
    sample_vault.index(embed=False)
    assert _assert_prefixes(sample_vault, SAMPLE_QUERIES, "lexical") == 2 * 20 * 6


def test_lexical_results_are_prefixes_of_larger_limits_on_a_generated_vault(tmp_path: Path
                                                                           ) -> None:
    vault = generated_vault(tmp_path / "gen")
    queries = generated_queries()
    # The vault is big enough that the pool of pages read in full (30) is exceeded.
    assert len(vault.search("cache", mode="lexical", limit=40)) == 40
    _assert_prefixes(vault, queries, "lexical")
    vault.close()


@pytest.fixture(scope="module")
def embedded_sample(tmp_path_factory: pytest.TempPathFactory) -> Any:
    vault, _ = Vault.init(copy_sample(tmp_path_factory.mktemp("emb") / "sample"))
    vault.index()
    yield vault
    vault.close()


@pytest.mark.embeddings
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_dense_and_hybrid_results_are_prefixes_of_larger_limits(embedded_sample: Vault,
                                                                mode: str) -> None:
    found = embedded_sample.search("pricing", mode=mode)
    assert found.mode == mode
    _assert_prefixes(embedded_sample, SAMPLE_QUERIES[:8], mode)


# -- asking twice ------------------------------------------------------------------------------


def test_searching_twice_gives_the_same_scores_and_records_nothing(sample_vault: Vault) -> None:
    sample_vault.index(embed=False)
    for query in SAMPLE_QUERIES[:6]:
        first = _keys(sample_vault.search(query, mode="lexical"))
        assert _keys(sample_vault.search(query, mode="lexical")) == first
    assert activity.last_recalled(sample_vault.root) == {}
    assert not (sample_vault.root / ".kenning" / "activity.db").exists()


def _cli_search(root: Path, query: str) -> dict[str, Any]:
    done = CliRunner().invoke(main, ["-C", str(root), "search", query, "--json", "--limit", "5",
                                     "--explain"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_cli_search_twice_is_identical_while_show_moves_recency(sample_vault: Vault) -> None:
    sample_vault.index(embed=False)
    root = sample_vault.root
    first = _cli_search(root, "pricing decision")
    assert first["results"] and _cli_search(root, "pricing decision") == first
    assert activity.last_recalled(root) == {}
    # A person opening a page is deliberate use: it is recorded and may re-rank.
    shown = result_path(first["results"][-1])
    done = CliRunner().invoke(main, ["-C", str(root), "show", shown])
    assert done.exit_code == 0, done.output
    assert activity.last_recalled(root) == {shown: date.today().isoformat()}
    after = _cli_search(root, "pricing decision")["results"]
    score = {result_path(r): r["explain"]["score"] for r in after}
    assert score[shown] > {result_path(r): r["explain"]["score"]
                           for r in first["results"]}[shown]


def test_mcp_search_twice_is_identical_while_page_moves_recency(sample_vault: Vault) -> None:
    from mcp import Client, StdioServerParameters

    from tests.test_mcp import ENV, KENNING, data

    sample_vault.index(embed=False)
    root = sample_vault.root
    sample_vault.close()

    async def run() -> tuple[Any, Any, Any]:
        params = StdioServerParameters(command=KENNING, args=["-C", str(root), "serve"], env=ENV)
        async with Client(params) as client:
            args = {"query": "pricing decision", "mode": "lexical"}
            one = data(await client.call_tool("search", args))
            two = data(await client.call_tool("search", args))
            before = dict(activity.last_recalled(root))
            data(await client.call_tool("page", {"ref": result_path(one["results"][0])}))
            return one, two, before

    one, two, before = anyio.run(run)
    assert one["results"] and one == two
    assert before == {}
    opened = result_path(one["results"][0])
    assert activity.last_recalled(root) == {opened: date.today().isoformat()}
