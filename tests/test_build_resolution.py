"""Resolution quality rules of `kenning build`: signatures, organization names and domains,
people named with their organization, convergence over passes, job changes, the owner."""

from __future__ import annotations

from pathlib import Path

import pytest

# The build tests' helpers: a vault with an owner, email sources in the connector's format, a
# build through the CLI, the mention log, a parsed page.
from test_build import ALEX, OWNER, build, email, log, page, vault

from kenning.builder import names as nm


def row(root: Path, text: str, source: str | None = None) -> dict:
    hits = [r for r in log(root) if r["text"] == text and (source is None or r["source"] == source)]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def folder(root: Path, name: str) -> list[str]:
    return sorted(p.name for p in (root / name).glob("*.md"))


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "title"), [
    ("Northwind Freight GmbH", "Northwind Freight"), ("TechFlow, Inc.", "TechFlow"),
    ("Initech LLC", "Initech"), ("Sakura Robotics K.K.", "Sakura Robotics"),
    ("Ford Motor Company", "Ford Motor Company"), ("Inc", "Inc"),
    ("Horizon Ventures", "Horizon Ventures"),
])
def test_strip_legal(name: str, title: str) -> None:
    assert nm.strip_legal(name) == title


@pytest.mark.parametrize(("name", "domain", "own", "fits"), [
    ("Horizon Ventures", "horizon.vc", False, True),
    ("Ironwood Capital", "ironwoodcap.test", False, True),   # first word + start of the rest
    ("Lumen Systems", "lumensys.test", False, True),
    ("Cedar & Finch", "cedarfinch.test", False, True),
    ("Horizon Health", "horizon.vc", False, False),         # a look-alike
    ("Horizon Ventures", "horizonhealth.test", False, False),
    ("Northwind Freight", "northwind.test", False, False),  # prose alone: not enough
    ("Northwind Freight", "northwind.test", True, True),    # a sender's own signature
    ("Enron Energy Services", "enron.com", True, False),    # a unit, not the domain's owner
])
def test_org_name_fits_domain(name: str, domain: str, own: bool, fits: bool) -> None:
    assert nm.org_name_fits_domain(name, domain, own=own) is fits


# -- signatures and organizations ------------------------------------------------------------


def test_role_comma_organization_signature(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Pilot", "2026-01-05",
          [("Marisol Underwood", "marisol@globex.test", "from"), ALEX],
          signature="Marisol Underwood · Data Scientist, Globex Corporation · +1 555 1416")
    build(root)
    assert folder(root, "organizations") == ["Globex.md"]
    org = page(root, "organizations/Globex.md")
    assert org.title == "Globex" and "Globex Corporation" in org.aliases
    assert org.frontmatter["domains"] == ["globex.test"]
    person = page(root, "people/Marisol Underwood.md")
    assert person.frontmatter["role"] == "Data Scientist"
    assert person.frontmatter["organization"] == "[[Globex]]"


def test_domain_page_learns_its_name_and_joins_the_prose_page(tmp_path: Path) -> None:
    root = vault(tmp_path, OWNER + "build:\n  strictness: low\n")
    # Prose names the organization (with its legal form) before anyone writes from its domain.
    email(root, "a", "Freight", "2026-01-05",
          [("Wei Madsen", "wei@acme.test", "from"), ALEX],
          body="We met the Northwind Freight GmbH team last week.")
    email(root, "b", "Hello", "2026-01-06",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX])
    email(root, "c", "Again", "2026-01-07",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX],
          signature="Elena Varga · Head of Platform, Northwind Freight · +49 30 1234567")
    email(root, "d", "Capital", "2026-01-08",
          [("Chioma Osei", "cosei@ironwoodcap.test", "from"), ALEX],
          signature="Chioma Osei · Partner, Ironwood Capital")
    build(root)
    orgs = folder(root, "organizations")
    assert "Northwind Freight.md" in orgs and "Northwind.md" not in orgs
    assert not any(o.startswith("northwind-freight-") for o in orgs)
    nw = page(root, "organizations/Northwind Freight.md")
    assert nw.title == "Northwind Freight"
    assert "Northwind Freight GmbH" in nw.aliases
    assert nw.frontmatter["domains"] == ["northwind.test"]
    assert "Ironwood Capital.md" in orgs and "ironwoodcap.md" not in orgs
    assert page(root, "organizations/Ironwood Capital.md").frontmatter["domains"] == \
        ["ironwoodcap.test"]
    assert page(root, "people/Elena Varga.md").frontmatter["organization"] == \
        "[[Northwind Freight]]"


def test_look_alike_organization_is_not_joined(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "VC", "2026-01-05", [("Sarah Chen", "sarah@horizon.vc", "from"), ALEX],
          signature="Sarah Chen · Partner, Horizon Ventures")
    email(root, "b", "Health", "2026-01-06",
          [("Ravi Lindgren", "ravil@horizonhealth.test", "from"), ALEX],
          signature="Ravi Lindgren · CTO, Horizon Health")
    build(root)
    assert folder(root, "organizations") == ["Horizon Health.md", "Horizon Ventures.md"]
    assert page(root, "organizations/Horizon Health.md").frontmatter["domains"] == \
        ["horizonhealth.test"]
    assert page(root, "organizations/Horizon Ventures.md").frontmatter["domains"] == \
        ["horizon.vc"]


# -- convergence ------------------------------------------------------------------------------


def test_earlier_mentions_are_resolved_once_a_later_source_creates_the_page(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    early = email(root, "a", "Intro", "2026-01-05",
                  [("Wei Madsen", "wei@acme.test", "from"), ALEX],
                  body="Ben Mercer will join the call on Thursday.")
    email(root, "b", "Hello", "2026-02-01",
          [("Benjamin Mercer", "bmercer@cedarfinch.test", "from"), ALEX])
    report = build(root)
    assert report["sources_revisited"] == 1
    assert row(root, "Ben Mercer", early)["page"] == "people/Benjamin Mercer.md"
    ben = page(root, "people/Benjamin Mercer.md")
    # Named in the earlier thread: counted in the summary (the timeline lists what he wrote).
    assert "2 email threads (wrote 1)" in ben.summary
    assert report["unresolved"] == 0


def test_incremental_build_resolves_earlier_logged_mentions(tmp_path: Path) -> None:
    root = vault(tmp_path)
    early = email(root, "a", "Intro", "2026-01-05",
                  [("Wei Madsen", "wei@acme.test", "from"), ALEX],
                  body="Ben Mercer will join the call on Thursday.")
    build(root)
    assert row(root, "Ben Mercer", early)["page"] is None
    email(root, "b", "Hello", "2026-02-01",
          [("Benjamin Mercer", "bmercer@cedarfinch.test", "from"), ALEX])
    report = build(root)
    assert report["sources_built"] == 1 and report["sources_revisited"] == 1
    assert row(root, "Ben Mercer", early)["page"] == "people/Benjamin Mercer.md"
    # Nothing new: nothing is revisited and nothing changes.
    assert build(root)["sources_revisited"] == 0


# -- job changes --------------------------------------------------------------------------------


def _mover(root: Path, note: str | None, *, old_org: str = "Globex Corporation") -> None:
    email(root, "a", "Numbers", "2026-01-05",
          [("Elena Varga", "elena.varga@globex.test", "from"), ALEX],
          signature=f"Elena Varga · Director of Operations, {old_org}")
    email(root, "b", "Hello again", "2026-05-02",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX],
          signature="Elena Varga · Director of Operations, Northwind Freight")
    email(root, "c", "Kickoff", "2026-05-20",
          [("Elena Varga", "elena.varga@northwind.test", "from"), ALEX],
          body=note or "See you on Thursday.")


def test_job_change_merges_on_the_senders_own_word_and_supersedes(tmp_path: Path) -> None:
    root = vault(tmp_path)
    _mover(root, "Quick note: I have moved from Globex to Northwind Freight, so please use "
                 "this address from now on.")
    report = build(root)
    assert folder(root, "people") == ["Elena Varga.md"]
    # The new address's page was created and merged in this run: no rename to report.
    assert report["renamed"] == []
    assert "people/Elena Varga.md" in report["pages_created"]
    assert "people/Elena Varga 2.md" not in report["pages_created"]
    p = page(root, "people/Elena Varga.md")
    assert p.frontmatter["emails"] == ["elena.varga@globex.test", "elena.varga@northwind.test"]
    assert p.frontmatter["organization"] == "[[Northwind Freight]]"
    assert "Merged from" not in (root / "people/Elena Varga.md").read_text()
    old, new = sorted((f for f in p.facts if f.relation == "works_at"),
                      key=lambda f: f.valid_from or "")
    assert (old.target, old.status, old.valid_to, old.expired) == \
        ("Globex", "superseded", "2026-05-01", "2026-05-02")
    assert old.successor == "[[Elena Varga#^works-northwind-freight]]"
    assert (new.target, new.status, new.block_id) == \
        ("Northwind Freight", "active", "works-northwind-freight")
    assert {r["page"] for r in log(root) if r["email"] and "varga" in r["email"]} == \
        {"people/Elena Varga.md"}
    # A second build changes nothing.
    before = {p.name: p.read_bytes() for p in (root / "people").glob("*.md")}
    build(root)
    assert before == {p.name: p.read_bytes() for p in (root / "people").glob("*.md")}


def test_same_name_at_a_new_domain_without_a_word_stays_apart(tmp_path: Path) -> None:
    root = vault(tmp_path)
    _mover(root, None)
    build(root)
    assert folder(root, "people") == ["Elena Varga 2.md", "Elena Varga.md"]


def test_move_from_an_organization_the_namesake_never_worked_at_is_not_merged(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    _mover(root, "I have moved from Initech to Northwind Freight; this is my new address.")
    build(root)
    assert folder(root, "people") == ["Elena Varga 2.md", "Elena Varga.md"]


def test_organization_change_supersedes_the_old_works_at(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2026-01-05", [("Sam Okafor", "sam@globex.test", "from"), ALEX],
          signature="Sam Okafor CTO, Globex")
    build(root)
    # The same address, a new organization in the signature (a freemail address, say).
    email(root, "b", "Two", "2026-03-01", [("Sam Okafor", "sam@globex.test", "from"), ALEX],
          signature="Sam Okafor CTO, Initech")
    build(root)
    p = page(root, "people/Sam Okafor.md")
    facts = {f.target: f for f in p.facts if f.relation == "works_at"}
    assert set(facts) == {"Globex", "Initech"}
    assert facts["Globex"].status == "superseded" and facts["Globex"].valid_to == "2026-02-28"
    assert facts["Globex"].successor == "[[Sam Okafor#^works-initech]]"
    assert facts["Initech"].status == "active"
    assert p.frontmatter["organization"] == "[[Initech]]"
    assert [e.date for e in p.timeline] == ["2026-01-05", "2026-03-01"]  # a fact citing a
    # source does not hide that source's timeline entry
    # Older evidence arriving later does not move the organization back.
    email(root, "c", "Zero", "2026-02-01", [("Sam Okafor", "sam@globex.test", "from"), ALEX],
          signature="Sam Okafor CTO, Globex")
    build(root)
    assert page(root, "people/Sam Okafor.md").frontmatter["organization"] == \
        "[[Initech]]"


def test_a_unit_of_the_same_company_does_not_supersede() -> None:
    from kenning.builder.moves import supersede_works_at

    text = ("---\ntype: person\n---\n# Steven Kean\n\n## Facts\n\n"
            "- works_at:: [[Enron]] [from:: 2000-01-05]\n"
            "- works_at:: [[Enron Energy Services]] [from:: 2000-08-06]\n")
    assert supersede_works_at(text, "people/steven-kean.md") == text


# -- the owner, personal and webmail domains ----------------------------------------------------


def test_owner_is_never_a_page_nor_added_to(tmp_path: Path) -> None:
    root = vault(tmp_path)
    own = root / "people" / "Alex Morgan.md"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text("---\ntype: person\n---\n# Alex Morgan\n\nMy own notes.\n", encoding="utf-8")
    before = own.read_bytes()
    chat = root / "sources" / "chats" / "2026-01-05-chat.md"
    chat.parent.mkdir(parents=True, exist_ok=True)
    chat.write_text("---\ntype: source\nkind: chat\ntitle: Chat with Sarah\ndate: 2026-01-05\n"
                    "participants:\n  - Alex Morgan\n  - Alex\n  - Sarah Chen\n---\n"
                    "# Chat with Sarah\n\n- **Alex**: Any update?\n- **Sarah Chen**: Alex Morgan "
                    "will get the deck from Maya Okafor (Globex).\n", encoding="utf-8")
    email(root, "a", "Deck", "2026-01-06", [("Sarah Chen", "sarah@horizon.vc", "from"), ALEX],
          body="Alex Morgan (Larkspur) asked for the deck.")
    build(root)
    assert own.read_bytes() == before
    assert folder(root, "people") == ["Alex Morgan.md", "Sarah Chen.md"]
    owner_rows = [r for r in log(root) if "Alex" in r["text"]]
    assert owner_rows and all(r["page"] is None and r["rule"] == "owner" for r in owner_rows)


def test_personal_and_webmail_domains_are_not_organizations(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Intro", "2026-01-05", [("Tom Alvarez", "tom@alvarez.example", "from"), ALEX])
    email(root, "b", "Offer", "2026-01-06",
          [("Marta Nowak", "marta.nowak@fastmail.example", "from"), ALEX])
    email(root, "c", "Hi", "2026-01-07", [("Ana Ruiz", "ana@gmx.at", "from"), ALEX])
    build(root)
    assert not (root / "organizations").exists() or folder(root, "organizations") == []
    assert folder(root, "people") == ["Ana Ruiz.md", "Marta Nowak.md", "Tom Alvarez.md"]
    assert nm.is_freemail("fastmail.fm") and not nm.is_freemail("livenation.com")


def test_shouted_display_name_gives_a_title_case_page(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-01-05",
          [("BENJAMIN MERCER", "bmercer@cedarfinch.test", "from"), ALEX])
    build(root)
    assert page(root, "people/Benjamin Mercer.md").title == "Benjamin Mercer"


def meeting(root: Path, name: str, title: str, day: str, speakers: list[str]) -> str:
    lines = ["---", "type: source", "kind: meeting", f"title: {title}", f"date: {day}",
             "owner_attended: true", "attendees:", *[f"  - {s}" for s in speakers],
             "speakers:", *[f"  - {s}" for s in speakers], "---", f"# {title}", "",
             "## Transcript", ""]
    lines += [f"- **[00:00:0{i}] {s}:** hello" for i, s in enumerate(speakers)]
    rel = f"sources/meetings/{day}-{name}.md"
    (root / "sources" / "meetings").mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def test_names_with_apostrophes_and_extended_latin_in_prose(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-01-05",
          [("Emeka O'Brien", "emeka@northwind.test", "from"), ALEX])
    src = email(root, "b", "Later", "2026-01-06", [("Wei Madsen", "wei@acme.test", "from"), ALEX],
                body="E. O'Brien and Dr. O'Brien will join.")
    build(root)
    assert row(root, "E. O'Brien", src)["page"] == "people/Emeka O'Brien.md"
    # A surname alone, outside the conversation of its one candidate: recorded, not guessed.
    r = row(root, "Dr. O'Brien", src)
    assert r["page"] is None and r["rule"] == "ambiguous-surname"


def test_name_only_page_claims_an_address_under_a_nickname(tmp_path: Path) -> None:
    root = vault(tmp_path)
    meeting(root, "m", "Sakura sync", "2026-01-05", ["Alex Morgan", "Joseph Osei"])
    build(root)
    email(root, "a", "Hi", "2026-02-01",
          [("Joe Osei", "joseph@sakura-robotics.test", "from"), ALEX])
    build(root)
    assert folder(root, "people") == ["Joseph Osei.md"]
    assert page(root, "people/Joseph Osei.md").frontmatter["emails"] == \
        ["joseph@sakura-robotics.test"]


def test_first_name_speaker_resolves_by_the_organization_the_meeting_names(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-01-05", [("Fatima Varga", "fatima@nordlicht.test", "from"), ALEX],
          signature="Fatima Varga CTO, Nordlicht Energie")
    src = meeting(root, "m", "Nordlicht sync 3", "2026-02-01",
                  ["Alex Morgan", "Fatima", "Dmitri Weiss"])
    build(root)
    assert row(root, "Fatima", src)["page"] == "people/Fatima Varga.md"
    # Two people of that name: no guess.
    email(root, "b", "Hi", "2026-01-06", [("Fatima Abbott", "fa@quarry.test", "from"), ALEX])
    src2 = meeting(root, "m2", "Nordlicht sync 4", "2026-02-08", ["Alex Morgan", "Fatima"])
    build(root)
    assert row(root, "Fatima", src2)["page"] is None
