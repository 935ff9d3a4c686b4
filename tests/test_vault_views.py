"""The Vault calls the web view reads and nothing else had: ``timeline`` (what happened and
what changed in a range), ``decisions`` (decided / because / rejected, with supersession both
ways) and ``why`` (the sources that built a page), on the bundled sample vault."""

from __future__ import annotations

import pytest

from kenning.api import BadQuery, Vault
from kenning.errors import PageNotFound


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory):
    from kenning.sample import copy_sample

    v, _ = Vault.init(copy_sample(tmp_path_factory.mktemp("views") / "sample"))
    v.index(embed=False)
    yield v
    v.close()


def test_timeline_of_one_entity_holds_its_events_and_fact_changes_newest_first(
        sample: Vault) -> None:
    rows = sample.timeline(entity="Sarah Chen")
    assert {r["path"] for r in rows} == {"people/Sarah Chen.md"}
    dates = [r["date"][:10] for r in rows]
    assert dates == sorted(dates, reverse=True)
    kinds = {(r["kind"], r["date"][:7]) for r in rows}
    # the two timeline lines, the board seat that began in 2026-01, the advice that ended then
    assert {("event", "2026-07"), ("event", "2026-01"), ("began", "2026-01"),
            ("ended", "2026-01")} <= kinds
    ended = next(r for r in rows if r["kind"] == "ended")
    assert ended["status"] == "superseded" and ended["relation"] == "advises"
    assert ended["citation"] == "people/Sarah Chen.md#L18-L18"


def test_timeline_range_keeps_only_rows_inside_it(sample: Vault) -> None:
    rows = sample.timeline(since="2026-07-01", until="2026-07-31")
    assert rows and all("2026-07-01" <= r["date"][:10] <= "2026-07-31" for r in rows)
    assert any(r["path"] == "people/Sarah Chen.md" and r["kind"] == "event" for r in rows)
    assert sample.timeline(since="2031-01-01") == []


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"since": "last tuesday"}, "--since: expected a date"),
    ({"since": "2026-05-01", "until": "2026-04-01"}, "is after --until"),
    ({"limit": 0}, "--limit"),
])
def test_timeline_refuses_what_it_cannot_read(sample: Vault, kwargs: dict,
                                              message: str) -> None:
    with pytest.raises(BadQuery, match=message):
        sample.timeline(**kwargs)


def test_timeline_of_an_unknown_entity_names_it(sample: Vault) -> None:
    with pytest.raises(PageNotFound, match="--entity: no page named 'Nobody Atall'"):
        sample.timeline(entity="Nobody Atall")


def test_decisions_link_a_superseded_decision_and_its_successor_both_ways(
        sample: Vault) -> None:
    found = {d["path"]: d for d in sample.decisions() if not d.get("item")}
    old = found["decisions/Use Redis for replay caching.md"]
    new = found["decisions/In-process caching for the Replay API.md"]
    assert old["status"] == "superseded" and new["status"] == "active"
    assert new["supersedes"] == old["path"] and old["superseded_by"] == new["path"]
    assert old["decided"] == "2026-03-04" and "480 ms" in old["because"]
    assert {"option": "Memcached", "why": "same operational cost as Redis with fewer data types"
            } in new["rejected"]
    dates = [d["decided"] for d in found.values()]
    assert sorted(dates, reverse=True) == [d["decided"] for d in sample.decisions()
                                           if not d.get("item")]


def test_decisions_filter_by_status_and_domain(sample: Vault) -> None:
    superseded = sample.decisions(status="superseded")
    assert [d["path"] for d in superseded] == ["decisions/Use Redis for replay caching.md"]
    assert all(d["domain"] == "product" for d in sample.decisions(domain="product"))
    assert sample.decisions(domain="product")


def test_why_names_no_sources_for_a_page_no_build_wrote(sample: Vault) -> None:
    data = sample.why("Sarah Chen")
    assert data["page"] == "people/Sarah Chen.md" and data["sources"] == []
    assert sorted(a["value"] for a in data["aliases"]) == sample.show(
        "Sarah Chen", record=False)["aliases"]
    assert all(a["first"] is None for a in data["aliases"])  # written by hand, not from a mention
