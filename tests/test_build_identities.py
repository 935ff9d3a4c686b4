"""One person, one page: the address book (names from any header, several addresses of one
person, the owner's addresses, addresses that name no one), organization names from how people
write them, and person pages a person reads. Pages are found by title, never by file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.builder import names as nm
from kenning.builder.mentions import _role_and_org
from kenning.sources.email.message import parse
from kenning.vault.page import Fact, parse_page, render_fact
from tests.test_build import OWNER, build, email, log, vault


def people(root: Path, folder: str = "people") -> dict[str, object]:
    """Title → parsed page, for every page of a folder."""
    out = {}
    for path in sorted((root / folder).glob("*.md")):
        page = parse_page(path.read_text(encoding="utf-8"), f"{folder}/{path.name}")
        out[page.title] = page
    return out


def with_email(root: Path, address: str) -> list[str]:
    return [t for t, p in people(root).items() if address in (p.frontmatter.get("emails") or [])]


ALEX = ("Alex Morgan", "alex@kestrel.dev", "to")


# -- names -----------------------------------------------------------------------------------


def test_public_suffix_list_gives_the_registrable_domain_offline() -> None:
    assert nm.org_domain("bchydro.bc.ca") == "bchydro.bc.ca"
    assert nm.registrable_label("bchydro.bc.ca") == "bchydro"   # not "bc"
    assert nm.org_domain("gen.pge.com") == "pge.com"
    assert nm.org_domain("mail.acme.co.jp") == "acme.co.jp"
    assert nm.org_domain("mail.horizon.test") == "horizon.test"  # reserved test domains
    assert not nm.valid_domain("enron")
    assert nm.valid_domain("kestrel.dev")


@pytest.mark.parametrize("domain", ["gmail.com", "earthlink.net", "houston.rr.com", "aol.com",
                                    "mysite.blogspot.com", "yahoo.es", "starband.net"])
def test_providers_are_no_organization(domain: str) -> None:
    assert nm.is_freemail(domain)


@pytest.mark.parametrize("domain", ["enron.com", "horizon.vc", "bchydro.bc.ca", "rice.edu"])
def test_organizations_are_not_providers(domain: str) -> None:
    assert not nm.is_freemail(domain)


@pytest.mark.parametrize("address,problem", [
    ("info@acme.com", "role"), ("noreply@acme.com", "role"), ("energy-l@lists.acme.com", "role"),
    ("ferc-request@acme.com", "role"), ("customerservice@shop.com", "role"),
    ("cmrcoreteam@caiso.com", "role"), ("mailer-daemon@acme.com", "role"),
    ("jane@acme", "malformed"), ("no-domain", "malformed"), ("40enron@enron.com", "malformed"),
    ("ebe4476b-2d94882a-86256a14-75ff3b@enron.com", "malformed"),
    (".dan@enron.com", "malformed"), ("'.'gary@enron.com", "malformed"),
    ("jane.doe@acme.com", None), ("skean@enron.com", None), ("nicholas.o'day@enron.com", None),
])
def test_addresses_that_name_no_person(address: str, problem: str | None) -> None:
    assert nm.address_problem(nm.clean_address(address)) == problem


def test_a_display_name_that_names_a_group_is_a_role_account() -> None:
    assert nm.address_problem("participants@caiso.com", "ISO Market Participants") == "role"
    assert nm.address_problem("tsales@acme.com", "Tom Sales") is None


def test_a_role_word_as_display_name_is_no_name() -> None:
    # Charlotte sending as "Webmaster" is not a person called Webmaster.
    assert nm.clean_display_name("Webmaster", "charlotte@wptf.org") is None
    assert nm.clean_display_name("Sales") is None
    assert nm.clean_display_name("Tom Sales") == "Tom Sales"
    # A name written as a handle is the name.
    assert nm.clean_display_name("Ann.Cohn", "ann.cohn@sce.com") == "Ann Cohn"
    assert nm.clean_display_name("Jane_Doe") == "Jane Doe"


@pytest.mark.parametrize(("domain", "name"), [
    ("caithnessenergy.com", "Caithness Energy"), ("bluefincapital.com", "Bluefin Capital"),
    ("northwindlabs.io", "Northwind Labs"), ("duke-energy.com", "Duke Energy"),
    ("pjm.com", "PJM"),
    # The rest would not be a word of its own: no guessed syllables.
    ("calwind.com", "Calwind"), ("velaw.com", "Velaw"), ("newpower.com", "Newpower"),
    ("energy.com", "Energy"),
])
def test_a_run_together_domain_reads_as_a_name(domain: str, name: str) -> None:
    assert nm.name_from_domain(domain) == name


def test_exchange_encapsulations_are_decoded() -> None:
    assert nm.clean_address("IMCEANOTES-james+2Edoty+40bakerbotts+2Ecom+40ENRON@ENRON.com") \
        == "james.doty@bakerbotts.com"
    assert nm.clean_address(
        "IMCEANOTES-Paul+20Joskow+20+3Cpjoskow+40MIT+2EEDU+3E+40ENRON@ENRON.com") \
        == "pjoskow@mit.edu"
    assert nm.clean_address('deborah".\'"greenwood@enron.com') == "deborah.greenwood@enron.com"


@pytest.mark.parametrize("local,name,fits", [
    ("skean", "Steven J Kean", "full"), ("steven.kean", "Steven J Kean", "full"),
    ("kean.steve", "Steven J Kean", "full"), ("j..kean", "Steven J Kean", "full"),
    ("steven.j.kean", "Steven J Kean", "full"), ("jdasovic", "Jeff Dasovich", "full"),
    ("kean", "Steven J Kean", "surname"), ("skeane", "Steven J Kean", None),
    ("jdasovic", "Steven J Kean", None), ("mike.roan", "Michael Roan", "full"),
    ("a..roberts", "Audrey Robertson", None), ("bill.williams", "Robert C Williams", None),
])
def test_local_parts_that_spell_a_name(local: str, name: str, fits: str | None) -> None:
    q = nm.parse_person(name)
    assert q is not None and nm.local_part_fits(local, q) == fits


def test_german_transliteration_and_undecomposed_letters() -> None:
    assert nm.fold("Jürgen Weiß") == "jurgen weiss" and nm.fold("Søren Yılmaz") == "soren yilmaz"
    q = nm.parse_person("Jürgen Weiß")
    assert q is not None and q.alt is not None and q.alt.key == "juergen weiss"


def test_cjk_names_keep_their_order() -> None:
    q = nm.parse_person("山田 花子")
    assert q is not None and q.display == "山田 花子" and q.last == "山田" and q.first == "花子"
    assert nm.parse_person("山田花子").key == q.key  # type: ignore[union-attr]


@pytest.mark.parametrize("part,split", [
    ("Director / Acme Corp", ("Director", "Acme Corp")),
    ("Director | Acme Corp", ("Director", "Acme Corp")),
    ("Head of Platform – Kitebird Corp", ("Head of Platform", "Kitebird Corp")),
    ("Partner at Horizon Ventures", ("Partner", "Horizon Ventures")),
    ("Data Scientist, Globex Corporation", ("Data Scientist", "Globex Corporation")),
    ("Jane Doe", None),
])
def test_signature_role_and_organization(part: str, split: tuple[str, str] | None) -> None:
    assert _role_and_org(part) == split


def test_x_to_names_pair_with_their_addresses() -> None:
    raw = (b"From: steven@iepa.com\nTo: nam@powersrc.com, abb@eslawfirm.com\n"
           b'X-To: "Nam Nguyen" <nam@powersrc.com>, "Andy Brown" <abb@eslawfirm.com>\n'
           b"Subject: x\nDate: Wed, 20 Sep 2000 07:36:00 -0700\n\nbody\n")
    msg = parse(raw, "m")
    assert {p.address: p.name for p in msg.to} == {"nam@powersrc.com": "Nam Nguyen",
                                                   "abb@eslawfirm.com": "Andy Brown"}


# -- one person, one page ----------------------------------------------------------------------


def test_a_name_from_any_source_names_the_address(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Tariffs", "2001-01-02",
          [("Jeff Dasovich", "jeff.dasovich@enron.com", "from"), ("", "abb@eslawfirm.com", "to")])
    email(root, "b", "Tariffs 2", "2001-01-03",
          [("Jeff Dasovich", "jeff.dasovich@enron.com", "from"),
           ("Andy Brown (E-mail)", "abb@eslawfirm.com", "cc")])
    build(root)
    assert with_email(root, "abb@eslawfirm.com") == ["Andy Brown"]


def test_one_person_several_addresses_at_one_organization(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02",
          [("Steven J Kean", "steven.kean@enron.com", "from"), ALEX])
    email(root, "b", "Two", "2001-01-03", [("Steve Kean", "skean@enron.com", "from"), ALEX])
    email(root, "c", "Three", "2001-01-04", [("", "steven.j.kean@enron.com", "from"), ALEX])
    email(root, "d", "Four", "2001-01-05", [("Kean, Steven J.", "j..kean@enron.com", "from"),
                                            ALEX])
    email(root, "e", "Five", "2001-01-06", [("Steve Keane", "skeane@enron.com", "from"), ALEX])
    build(root)
    pages = people(root)
    [title] = with_email(root, "steven.kean@enron.com")
    assert title in ("Steven J Kean", "Steven J. Kean")
    kean = pages[title]
    assert sorted(kean.frontmatter["emails"]) == ["j..kean@enron.com", "skean@enron.com",
                                                  "steven.j.kean@enron.com",
                                                  "steven.kean@enron.com"]
    assert "Steve Kean" in kean.aliases
    # Another surname is another person, however close.
    assert pages["Steve Keane"].frontmatter["emails"] == ["skeane@enron.com"]


def test_a_nameless_address_joins_by_any_name_of_the_person(tmp_path: Path) -> None:
    # One of Mark's addresses shows "Mark Haedicke", another "Mark E Haedicke": e..haedicke@
    # (a Notes form: middle initial and surname) spells the second, and is Mark too.
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02",
          [("Mark Haedicke", "mark.e.haedicke@enron.com", "from"), ALEX])
    email(root, "b", "Two", "2001-01-03",
          [("Mark E Haedicke", "mark.haedicke@enron.com", "from"), ALEX])
    email(root, "c", "Three", "2001-01-04", [("Jeff Dasovich", "jeff.dasovich@enron.com", "from"),
                                             ("", "e..haedicke@enron.com", "to")])
    build(root)
    [title] = with_email(root, "mark.haedicke@enron.com")
    assert sorted(people(root)[title].frontmatter["emails"]) == [
        "e..haedicke@enron.com", "mark.e.haedicke@enron.com", "mark.haedicke@enron.com"]


def test_the_same_name_at_two_organizations_is_two_people(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02", [("David Parker", "dparker@acme.com", "from"), ALEX])
    email(root, "b", "Two", "2001-01-03", [("David Parker", "david@globex.com", "from"), ALEX])
    email(root, "c", "Three", "2001-01-04", [("Dave Parker", "dave.parker@gmail.com", "from"),
                                             ALEX])
    build(root)
    found = sorted(tuple(parse_page(p.read_text(encoding="utf-8"), p.name).frontmatter["emails"])
                   for p in (root / "people").glob("*.md"))
    assert found == [("dave.parker@gmail.com",), ("david@globex.com",), ("dparker@acme.com",)]


@pytest.mark.parametrize("other,joins", [("smara@enron.com", True),
                                          ("legal7@enron.com", False)])
def test_a_nickname_joins_only_with_a_local_part_that_spells_it(tmp_path: Path, other: str,
                                                                joins: bool) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02", [("Susan J Mara", "susan.mara@enron.com", "from"), ALEX])
    email(root, "b", "Two", "2001-01-03", [("Sue Mara", other, "from"), ALEX])
    build(root)
    assert len(people(root)) == (1 if joins else 2)


def test_roles_lists_and_malformed_addresses_make_no_person_page(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Notice", "2001-01-02",
          [("Jeff Dasovich", "jeff.dasovich@enron.com", "from"),
           ("ISO Market Participants", "20participants@caiso.com", "to"),
           ("Energy list", "energy-l@lists.example.org", "cc"), ("", "info@calpx.com", "cc"),
           ("Mark Whitt/DEN/ECT@ENRON", "40enron@enron.com", "cc")])
    build(root)
    assert list(people(root)) == ["Jeff Dasovich"]
    rules = {r["email"]: r["rule"] for r in log(root) if r["kind"] == "person"}
    assert rules["20participants@caiso.com"].startswith("not-a-person:")
    assert rules["info@calpx.com"] == "not-a-person:role"


def test_the_owner_is_every_address_and_name_of_the_owner(tmp_path: Path) -> None:
    root = vault(tmp_path, "owner:\n  names: [Kenneth Lay]\n  emails: [kenneth.lay@enron.com]\n"
                 "  domains: [enron.com]\n")
    email(root, "a", "One", "2001-01-02", [("Ken Lay", "ken_lay@enron.net", "from"),
                                           ("Jeff Skilling", "jeff.skilling@enron.com", "to")])
    email(root, "b", "Two", "2001-01-03", [("", "kenneth_lay@enron.net", "from"),
                                           ("Jeff Skilling", "jeff.skilling@enron.com", "to")])
    email(root, "c", "Three", "2001-01-04", [("Lay, Kenneth", "klay@enron.com", "from"),
                                             ("Jeff Skilling", "jeff.skilling@enron.com", "to")])
    email(root, "d", "Four", "2001-01-05", [("Mark Lay", "mark.lay@enron.com", "from"),
                                            ("Jeff Skilling", "jeff.skilling@enron.com", "to")])
    build(root)
    assert sorted(people(root)) == ["Jeff Skilling", "Mark Lay"]


def test_an_address_never_named_that_wrote_keeps_a_bare_title(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02", [("", "rbutts@enron.com", "from"), ALEX])
    build(root)
    assert list(people(root)) == ["rbutts@enron.com"]


# -- organizations ---------------------------------------------------------------------------


def test_organization_names_come_from_the_text(tmp_path: Path) -> None:
    root = vault(tmp_path)
    for i, who in enumerate(["john.boudreaux", "mary.ellis"]):
        email(root, f"a{i}", "Audit", f"2001-01-0{i + 2}",
              [("John Boudreaux" if i == 0 else "Mary Ellis", f"{who}@arthurandersen.com",
                "from"), ALEX], body="The Arthur Andersen team will send the audit plan.")
    build(root)
    orgs = people(root, "organizations")
    assert "Arthur Andersen" in orgs and "Arthurandersen" not in orgs
    assert orgs["Arthur Andersen"].frontmatter["domains"] == ["arthurandersen.com"]


def test_one_organization_per_name_and_a_unit_is_not_its_parent(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02", [("Jeff Skilling", "jeff.skilling@enron.com", "from"),
                                           ("Mark Lay", "mark.lay@enron.com", "to"), ALEX],
          body="Enron and Enron North America Corp. will file.",
          signature="Jeff Skilling · CEO, Enron Americas")
    email(root, "b", "Two", "2001-01-03", [("Ken Rice", "ken_rice@enron.net", "from"),
                                           ("Jo Ray", "jo_ray@enron.net", "to"), ALEX])
    build(root, )
    orgs = people(root, "organizations")
    assert sorted(orgs["Enron"].frontmatter["domains"]) == ["enron.com", "enron.net"]
    assert "Enron Americas" in orgs and not orgs["Enron Americas"].frontmatter.get("domains")


def test_a_provider_or_an_unnamed_one_person_domain_makes_no_organization(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2001-01-02", [("Bill Ross", "bross@earthlink.net", "from"), ALEX])
    email(root, "b", "Two", "2001-01-03", [("Ann Oboe", "boughton@maui.net", "from"), ALEX])
    build(root)
    assert people(root, "organizations") == {}
    rules = {r["text"]: r["rule"] for r in log(root) if r["kind"] == "organization"}
    assert rules == {"maui.net": "not-an-organization:one-address"}


# -- pages a person reads ----------------------------------------------------------------------


def test_works_at_says_when_it_was_seen_and_round_trips() -> None:
    fact = Fact(0, "works_at", "enron", "[[enron|Enron]]", seen="2001-01-02",
                source="[[sources/email/x#L3]]")
    line = render_fact(fact)
    assert "[seen:: 2001-01-02]" in line and "[from::" not in line
    text = f"# X\n\n## Facts\n{line}\n"
    parsed = parse_page(text, "people/x.md").facts[0]
    assert parsed.seen == "2001-01-02" and parsed.valid_from is None
    assert render_fact(parsed) == line
    old = parse_page("# X\n\n## Facts\n- works_at:: [[enron]] [from:: 2001-01-02]\n",
                     "people/x.md").facts[0]
    assert old.valid_from == "2001-01-02" and old.seen is None  # old pages keep reading


def test_a_timeline_lists_what_the_person_wrote_and_the_summary_the_rest(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    pat = ("Pat Lee", "pat@partner.example", "from")
    for i in range(5):
        email(root, f"w{i}", "Weekly status", f"2026-03-0{i + 1}", [pat, ALEX])
    email(root, "x", "Other", "2026-03-07", [pat, ALEX])
    email(root, "y", "Copied", "2026-03-08", [("Dana Fox", "dana@partner.example", "from"),
                                              ("Pat Lee", "pat@partner.example", "cc"), ALEX])
    build(root)
    page = people(root)["Pat Lee"]
    texts = [e.text for e in page.timeline]
    # One line per subject, two a month at most; being copied is counted, not listed.
    assert texts == ["Wrote in email “Weekly status”", "Wrote in email “Other”"]
    assert "7 email threads (wrote 6)" in page.summary
    assert "most with [[" in page.summary and "Dana Fox" in page.summary


def test_owner_config_helper_is_the_owner_of_the_other_tests() -> None:
    assert "Alex Morgan" in OWNER


def test_a_page_the_owner_keeps_under_another_address_stays_theirs(tmp_path: Path) -> None:
    root = vault(tmp_path, "owner:\n  names: [Kenneth Lay]\n  emails: [kenneth.lay@enron.com]\n"
                 "  domains: [enron.com]\n")
    (root / "people").mkdir(exist_ok=True)
    mine = ("---\ntype: person\naliases: [Ken Lay]\nemails: [ken_lay@enron.net]\n---\n# Ken\n"
            "\nMy own page.\n")
    (root / "people" / "me.md").write_text(mine, encoding="utf-8")
    email(root, "a", "One", "2001-01-02", [("Ken Lay", "ken_lay@enron.net", "from"),
                                           ("Jeff Skilling", "jeff.skilling@enron.com", "to")])
    email(root, "b", "Two", "2001-01-03", [("Jeff Skilling", "jeff.skilling@enron.com", "from"),
                                           ("Mark Lay", "mark.lay@enron.com", "to")],
          body="Ken Lay will speak first.")
    build(root)
    assert (root / "people" / "me.md").read_text(encoding="utf-8") == mine
    # Titled "me" by its file name (its H1 "Ken" is a heading alias); no page for the owner.
    assert sorted(people(root)) == ["Jeff Skilling", "Mark Lay", "me"]


def test_a_mailing_list_address_makes_no_person_page(tmp_path: Path) -> None:
    # A discussion list is a conversation (not bulk mail), but its own address (List-Post),
    # even with a display name, and its owner address are nobody.
    import mailbox

    from click.testing import CliRunner

    from kenning.cli import main

    root = vault(tmp_path)
    box = mailbox.mbox(str(tmp_path / "list.mbox"))
    for i, (sender, to) in enumerate([
            ("Carl Worth <cworth@cworth.org>",
             '"Discussion about notmuch" <notmuch@notmuchmail.org>'),
            ("Keith Packard <keithp@keithp.com>", "notmuch@notmuchmail.org"),
            ("Keith Packard <keithp@keithp.com>", "hackers+owner@freebsd.org")]):
        box.add((f"From: {sender}\nTo: {to}\nSubject: Tags {i}\nMessage-ID: <m{i}@x>\n"
                 "Date: Mon, 02 Mar 2026 10:00:00 +0100\n"
                 "List-Post: <mailto:notmuch@notmuchmail.org>\n\nHello.\n").encode())
    box.flush()
    box.close()
    result = CliRunner().invoke(main, ["-C", str(root), "sync", "email",
                                       str(tmp_path / "list.mbox")])
    assert result.exit_code == 0, result.output
    threads = [p.read_text(encoding="utf-8") for p in (root / "sources/email").glob("*.md")]
    assert all("lists:\n  - notmuch@notmuchmail.org" in t for t in threads)
    build(root)
    addresses = {a for p in people(root).values() for a in p.frontmatter.get("emails") or []}
    assert addresses == {"cworth@cworth.org", "keithp@keithp.com"}
    assert {r["rule"] for r in log(root) if r["email"] == "notmuch@notmuchmail.org"} == \
        {"not-a-person:list"}


def test_a_list_tag_in_the_subject_and_a_spelled_out_address_name_nobody(tmp_path: Path) -> None:
    # No List-Post header, but "[aur-general]" in the subject is the list aur-general@ is; and
    # a signature "keith.packard at intel.com" is an address, not an organization.
    root = vault(tmp_path)
    email(root, "a", "Re: [aur-general] Guidelines", "2010-12-29",
          [("Francois Boulogne", "boulogne.f@gmail.com", "from"),
           ("Discussion about the Arch User Repository (AUR)", "aur-general@archlinux.org", "to"),
           ALEX])
    email(root, "b", "[notmuch] archive", "2009-11-17",
          [("Keith Packard", "keithp@keithp.com", "from"), ("", "notmuch@notmuchmail.org", "to"),
           ALEX], signature="keith.packard at intel.com")
    build(root)
    addresses = {a for p in people(root).values() for a in p.frontmatter.get("emails") or []}
    assert addresses == {"boulogne.f@gmail.com", "keithp@keithp.com"}
    assert not any("at intel" in t for t in people(root, "organizations"))
