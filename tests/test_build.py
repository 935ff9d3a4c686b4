"""`kenning build`: sources → entity pages, the mention log, idempotence, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.builder import run_build
from kenning.builder.mentions import Mention
from kenning.builder.resolve import Decision, EntityIndex, ResolveContext, resolve_batch
from kenning.cli import main
from kenning.vault.page import parse_page

OWNER = "owner:\n  names: [Alex Morgan]\n  emails: [alex@kestrel.dev]\n  domains: [kestrel.dev]\n"


def vault(tmp_path: Path, config: str = OWNER) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    with (root / ".kenning" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(config)
    return root


def email(root: Path, name: str, subject: str, day: str, people: list[tuple[str, str, str]],
          body: str = "Hello.", *, sender: int = 0, category: str = "personal",
          signature: str | None = None, direction: str = "received") -> str:
    """Write an email source in the connector's format: people are (name, address, role)."""
    lines = ["---", "type: source", "kind: email", f"title: {json.dumps(subject)}",
             f"date: {day}", f"subject: {json.dumps(subject)}", "participants:"]
    for n, a, role in people:
        if n:
            lines.append(f"  - name: {json.dumps(n)}")
            lines.append(f"    address: {a}")
        else:
            lines.append(f"  - address: {a}")
        lines.append(f"    roles: [{role}]")
    if not people:
        lines[-1] = "participants: []"
    lines += [f"category: {category}", f"direction: {direction}", "---", f"# {subject}", ""]
    s_name, s_addr, _ = people[sender] if people else ("", "", "")
    to = ", ".join(f"{n} <{a}>" if n else a for n, a, r in people if r != "from")
    frm = f"{s_name} <{s_addr}>" if s_name else (s_addr or "(no sender)")
    lines += [f"## {day} 09:00 +00:00 · {frm}" + (f" → {to}" if to else ""), "", body]
    if signature:
        lines += ["", f"Signature: {signature}"]
    rel = f"sources/email/{day}-{name}.md"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def meeting(root: Path, name: str, title: str, day: str, speakers: list[str],
            emails: dict[str, str] | None = None) -> str:
    lines = ["---", "type: source", "kind: meeting", f"title: {title}", f"date: {day}",
             "attendees:"] + [f"  - {s}" for s in speakers]
    if emails:
        lines.append("attendee_emails:")
        lines += [f"  {k}: {v}" for k, v in emails.items()]
    lines += ["speakers:"] + [f"  - {s}" for s in speakers] + ["---", f"# {title}", "",
                                                                "## Transcript", ""]
    lines += [f"- **[00:00:0{i}] {s}:** hello from {s}" for i, s in enumerate(speakers)]
    rel = f"sources/meetings/{day}-{name}.md"
    (root / "sources" / "meetings").mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def build(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "build", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def log(root: Path) -> list[dict]:
    path = root / ".kenning" / "build" / "mentions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def page(root: Path, rel: str):
    return parse_page((root / rel).read_text(encoding="utf-8"), rel)


SARAH = ("Sarah Chen", "sarah@horizon.vc", "from")
ALEX = ("Alex Morgan", "alex@kestrel.dev", "to")


def test_build_creates_pages_with_citations_and_log(tmp_path: Path) -> None:
    root = vault(tmp_path)
    src = email(root, "seed", "Seed round", "2026-03-01", [SARAH, ALEX],
                body="Kenning #fundraising. Project Kestrel is on track.",
                signature="Sarah Chen · Partner · Horizon Ventures · +1 415 555 0100")
    report = build(root)
    assert "people/Sarah Chen.md" in report["pages_created"]
    assert not any("alex" in p for p in report["pages_created"])  # the owner is "I"
    sarah = page(root, "people/Sarah Chen.md")
    assert sarah.type == "person" and sarah.title == "Sarah Chen"
    assert sarah.frontmatter["emails"] == ["sarah@horizon.vc"]
    assert sarah.frontmatter["role"] == "Partner"
    assert sarah.frontmatter["organization"] == "[[Horizon Ventures]]"
    assert sarah.frontmatter["first_seen"] == "2026-03-01"
    assert sarah.summary == ("Sarah Chen — Partner at Horizon Ventures; 1 email thread "
                             "(wrote 1), last seen 2026-03-01.")
    header = (root / src).read_text().split("\n").index(
        next(line for line in (root / src).read_text().split("\n") if line.startswith("## "))) + 1
    cite = f"[[sources/email/2026-03-01-seed#L{header}]]"
    assert [f.relation for f in sarah.facts] == ["works_at"]
    # The date is when the evidence first shows the job (seen::), not a start date (from::).
    assert sarah.facts[0].source == cite and sarah.facts[0].seen == "2026-03-01"
    assert sarah.facts[0].valid_from is None
    assert sarah.timeline[0].source == cite
    org = page(root, "organizations/Horizon Ventures.md")
    assert org.frontmatter["domains"] == ["horizon.vc"]
    assert page(root, "topics/fundraising.md").type == "topic"
    assert page(root, "projects/Kestrel.md").type == "project"
    rows = log(root)
    assert {r["source"] for r in rows} == {src}
    for r in rows:
        assert set(r) >= {"source", "line", "text", "kind", "email", "page", "confidence",
                          "rule"}
        assert 0.0 <= r["confidence"] <= 1.0
    sarah_row = next(r for r in rows if r["email"] == "sarah@horizon.vc")
    assert sarah_row["page"] == "people/Sarah Chen.md" and sarah_row["line"] == header
    assert next(r for r in rows if r["email"] == "alex@kestrel.dev")["rule"] == "owner"


def test_rerun_is_byte_identical_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Pilot", "2026-03-01", [SARAH, ALEX])
    before = snapshot(root)
    result = CliRunner().invoke(main, ["-C", str(root), "build", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "+++ b/people/Sarah Chen.md" in result.output
    assert "+# Sarah Chen" in result.output
    assert snapshot(root) == before
    build(root)
    once = snapshot(root)
    again = build(root)
    assert again["sources_built"] == 0
    assert snapshot(root) == once
    # A new source is built alone; the earlier one is not read again.
    email(root, "b", "Pilot follow-up", "2026-03-05", [SARAH, ALEX])
    assert build(root)["sources_built"] == 1
    assert len(page(root, "people/Sarah Chen.md").timeline) == 2


def test_full_rebuild_from_scratch_is_deterministic(tmp_path: Path) -> None:
    texts = []
    for n in (1, 2):
        root = vault(tmp_path / str(n))
        email(root, "a", "Pilot", "2026-03-01", [SARAH, ALEX, ("Bob Smith", "bob@tf.io", "cc")])
        email(root, "b", "Terms", "2026-03-02", [("Robert Smith", "bob@tf.io", "from"), ALEX])
        run_build(root, batch_size=1)
        texts.append({k: v for k, v in snapshot(root).items() if not k.startswith(".kenning/c")})
    assert texts[0] == texts[1]


def test_first_name_resolves_only_with_one_fitting_candidate(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Intro", "2026-03-01", [SARAH, ALEX])
    email(root, "b", "Other", "2026-03-01", [("Sarah Park", "sarah@techflow.io", "from"), ALEX])
    build(root)
    # Sarah Chen is a participant of this thread: "Sarah" is her. The "Sarah from TechFlow"
    # line is someone else (Sarah Park works at TechFlow), "Sarah" in a thread without either
    # is ambiguous.
    src = email(root, "c", "Catch-up", "2026-03-03", [SARAH, ALEX],
                body="Thanks Sarah Chen.\nAsk Sarah from Techflow about it.")
    src2 = email(root, "d", "News", "2026-03-04", [("Tom Hart", "tom@x.org", "from"), ALEX],
                 body="Dr. Chen and Sarah from Acme Corp said hi.")
    build(root)
    rows = {(r["source"], r["text"]): r for r in log(root)}
    assert rows[(src, "Sarah Chen")]["page"] == "people/Sarah Chen.md"
    assert rows[(src, "Sarah from Techflow")]["page"] == "people/Sarah Park.md"
    acme = rows[(src2, "Sarah from Acme Corp")]
    assert acme["page"] is None  # no Sarah at Acme: not merged into either
    chen = rows[(src2, "Dr. Chen")]
    assert chen["page"] is None and chen["rule"].startswith("ambiguous")
    assert chen["candidates"] == ["people/Sarah Chen.md"]


def test_name_variants_join_one_page(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2026-03-01", [("Kean, Steven J", "steven.kean@enron.com", "from"),
                                           ALEX])
    email(root, "b", "Two", "2026-03-02", [("Robert Smith", "robert@acme.com", "from"), ALEX])
    src = email(root, "c", "Three", "2026-03-03",
                [("Steve Kean", "steven.kean@enron.com", "from"), ALEX],
                body="Bob Smith agreed. S. Kean will call.")
    build(root)
    kean = page(root, "people/Steven J Kean.md")
    assert kean.title == "Steven J Kean"
    assert "Steve Kean" in kean.aliases
    rows = {r["text"]: r for r in log(root) if r["source"] == src}
    assert rows["Bob Smith"]["page"] == "people/Robert Smith.md"
    assert rows["Bob Smith"]["rule"] == "nickname"
    assert rows["S. Kean"]["page"] == "people/Steven J Kean.md"
    assert len(list((root / "people").glob("*.md"))) == 2


def test_fuller_name_renames_and_rewrites_links(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-03-01", [("Sarah", "sarah@horizon.vc", "from"), ALEX])
    build(root)
    assert (root / "people/Sarah.md").exists()
    note = root / "memory" / "2026-03-02.md"
    note.write_text("Met [[sarah]] and [[Sarah|her]]; see [notes](../people/Sarah.md#Timeline)."
                    "\n`[[sarah]]` stays.\n", encoding="utf-8")
    email(root, "b", "Hi again", "2026-03-03", [SARAH, ALEX])
    report = build(root)
    assert report["renamed"] == [{"from": "people/Sarah.md", "to": "people/Sarah Chen.md"}]
    assert not (root / "people/Sarah.md").exists()
    sarah = page(root, "people/Sarah Chen.md")
    assert sarah.title == "Sarah Chen" and "Sarah" in sarah.aliases
    assert len(sarah.timeline) == 2
    assert note.read_text() == ("Met [[Sarah Chen]] and [[Sarah Chen|her]]; see "
                                "[notes](../people/Sarah%20Chen.md#Timeline).\n"
                                "`[[sarah]]` stays.\n")
    assert {r["page"] for r in log(root) if r["email"] == "sarah@horizon.vc"} == \
        {"people/Sarah Chen.md"}


def test_hand_edits_are_kept(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "Hi", "2026-03-01", [SARAH, ALEX])
    build(root)
    path = root / "people/Sarah Chen.md"
    text = path.read_text()
    text = text.replace("Sarah Chen — ", "My own summary. Sarah Chen — ", 1)
    text = text.replace("first_seen:", "# my comment\nmood: good\nfirst_seen:")
    text += "\n## Notes\nShe prefers calls.\n"
    path.write_text(text)
    email(root, "b", "Again", "2026-03-04", [SARAH, ALEX])
    build(root)
    after = path.read_text()
    assert "My own summary. Sarah Chen — " in after
    assert "# my comment\nmood: good\n" in after
    assert after.endswith("## Notes\nShe prefers calls.\n")
    assert len(parse_page(after, "people/Sarah Chen.md").timeline) == 2
    assert "last_seen: 2026-03-04" in after


def test_a_section_h1_never_names_a_person_page(tmp_path: Path) -> None:
    # A person's own page with no H1 on its first line is named by its file name; the "# Notes"
    # further down is a section (it used to become the entity's name, so the meeting made a
    # second Priya page).
    root = vault(tmp_path)
    (root / "people").mkdir(exist_ok=True)
    (root / "people/Priya Raman.md").write_text(
        "---\ntype: person\n---\nMet her at the offsite.\n\n# Notes\nLikes tea.\n",
        encoding="utf-8")
    meeting(root, "sync", "Weekly sync", "2026-03-04", ["Priya Raman", "Dana Fox"])
    build(root)
    assert sorted(p.name for p in (root / "people").glob("Priya*")) == ["Priya Raman.md"]
    m = next((root / "meetings").glob("*.md"))
    assert "[[Priya Raman]]" in page(root, f"meetings/{m.name}").frontmatter["attendees"]


def test_every_speaker_is_an_attendee_even_when_no_page_is_sure(tmp_path: Path) -> None:
    # "Stokes" alone in a second call may be the Stokes of the first or another: no guessed
    # link, but an attendee all the same, by name; so is the owner (no page of her own).
    root = vault(tmp_path)
    meeting(root, "a", "Core call 1", "2026-03-04", ["Stokes", "Dana Fox"])
    meeting(root, "b", "Core call 2", "2026-03-11", ["Stokes", "Lena Park", "Alex Morgan"])
    build(root)
    second = next(p for p in (root / "meetings").glob("*.md") if "Core call 2" in p.name)
    assert page(root, f"meetings/{second.name}").frontmatter["attendees"] == \
        ["Stokes", "[[Lena Park]]", "Alex Morgan"]
    assert next(r for r in log(root) if r["text"] == "Stokes" and r["source"].endswith(
        "-b.md"))["page"] is None
    assert not (root / "people" / "Alex Morgan.md").exists()


def test_deleted_page_is_not_resurrected_without_new_evidence(tmp_path: Path) -> None:
    root = vault(tmp_path)
    src = email(root, "a", "Hi", "2026-03-01", [SARAH, ALEX, ("Tom Hart", "tom@x.org", "cc")])
    build(root)
    (root / "people/Sarah Chen.md").unlink()
    # The thread changes (Tom's name is fixed): it is built again, Sarah's page stays deleted.
    (root / src).write_text((root / src).read_text().replace("Tom Hart", "Tom H. Hart"))
    build(root)
    assert not (root / "people/Sarah Chen.md").exists()
    row = next(r for r in log(root) if r["email"] == "sarah@horizon.vc")
    assert row["page"] is None and row["rule"] == "not-created:deleted-by-hand"
    email(root, "b", "New", "2026-04-01", [SARAH, ALEX])
    build(root)
    assert (root / "people/Sarah Chen.md").exists()


def test_bad_participants(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "empty", "Nobody", "2026-03-01", [])
    email(root, "addr", "Address only", "2026-03-02",
          [("jeff.dasovich@enron.com", "jeff.dasovich@enron.com", "from"), ALEX,
           ("", "bhansen@lhom.com", "cc")])
    # A display name that is someone else's address is not a name.
    email(root, "other", "Spoof", "2026-03-03",
          [("sarah@horizon.vc", "mallory@evil.example", "from"), ALEX])
    report = build(root)
    assert report["sources_built"] == 3
    assert (root / "people/Jeff Dasovich.md").exists()
    # An address never named that never wrote makes no page (it would say nothing else).
    assert not any("bhansen@lhom.com" in (page(root, f"people/{p.name}").frontmatter.get("emails")
                                          or []) for p in (root / "people").glob("*.md"))
    assert next(r for r in log(root) if r["email"] == "bhansen@lhom.com")["rule"] == \
        "not-created:nameless"
    mallory = next(p for p in (root / "people").glob("*.md") if "mallory" in p.read_text())
    assert page(root, f"people/{mallory.name}").frontmatter["emails"] == ["mallory@evil.example"]
    assert "sarah" not in mallory.name
    assert not (root / "people/Sarah Chen.md").exists()


def test_huge_recipient_list_creates_pages_for_the_sender_only(tmp_path: Path) -> None:
    root = vault(tmp_path)
    people = [("Big Sender", "boss@corp.com", "from")] + [
        (f"Person {i:03d}", f"p{i}@corp.com", "to") for i in range(300)]
    src = email(root, "all", "All hands", "2026-03-01", people)
    build(root)
    assert [p.name for p in (root / "people").glob("*.md")] == ["Big Sender.md"]
    rows = [r for r in log(root) if r["source"] == src and r["kind"] == "person"]
    assert len(rows) == 301  # every recipient is still a logged mention
    assert sum(1 for r in rows if r["rule"] == "not-created:strictness") == 300


def test_strictness_high_and_bulk(tmp_path: Path) -> None:
    root = vault(tmp_path, OWNER + "build:\n  strictness: high\n")
    email(root, "news", "Newsletter", "2026-03-01",
          [("News Bot", "news@letters.example", "from"), ALEX], category="bulk")
    email(root, "recv", "Cold email", "2026-03-02",
          [("Cold Caller", "cold@sales.example", "from"), ALEX])
    email(root, "sent", "Reply", "2026-03-03",
          [("Alex Morgan", "alex@kestrel.dev", "from"), ("Pat Lee", "pat@partner.example", "to")],
          direction="sent")
    meeting(root, "sync", "Weekly sync", "2026-03-04", ["Alex Morgan", "Dana Fox"])
    report = build(root)
    assert report["strictness"] == "high"
    names = sorted(p.name for p in (root / "people").glob("*.md"))
    assert names == ["Dana Fox.md", "Pat Lee.md"]
    assert not list((root / "organizations").glob("letters*"))
    # Received-only mail still updates a page that exists.
    email(root, "recv2", "Follow-up", "2026-03-05",
          [("Pat Lee", "pat@partner.example", "from"), ALEX])
    build(root)
    # The timeline lists the thread Pat wrote; the summary counts both.
    pat = page(root, "people/Pat Lee.md")
    assert [e.text for e in pat.timeline] == ["Wrote in email “Follow-up”"]
    assert "2 email threads (wrote 1)" in pat.summary
    m = page(root, "meetings/2026-03-04 Weekly sync.md")
    assert m.frontmatter["attendees"] == ["Alex Morgan", "[[Dana Fox]]"]  # the owner, by name
    assert "Attended [[2026-03-04 Weekly sync|Weekly sync]]" in page(root, "people/Dana Fox.md") \
        .timeline[0].text


def test_merge_split_and_why(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2026-03-01", [SARAH, ALEX])
    email(root, "b", "Two", "2026-03-02", [("S Chen", "schen@gmail.com", "from"), ALEX])
    build(root)
    other = next(p for p in (root / "people").glob("*.md") if p.name != "Sarah Chen.md")
    (root / "memory" / "n.md").write_text(f"Talked to [[{other.stem}]].\n")
    runner = CliRunner()
    res = runner.invoke(main, ["-C", str(root), "merge", "Sarah Chen", other.stem, "--json"])
    assert res.exit_code == 0, res.output
    assert not other.exists()
    merged = page(root, "people/Sarah Chen.md")
    assert merged.frontmatter["emails"] == ["sarah@horizon.vc", "schen@gmail.com"]
    assert len(merged.timeline) == 2
    assert (root / "memory" / "n.md").read_text().startswith("Talked to [[Sarah Chen]]")
    res = runner.invoke(main, ["-C", str(root), "why", "Sarah Chen", "--json"])
    assert res.exit_code == 0, res.output
    why = json.loads(res.output)
    assert {s["source"] for s in why["sources"]} == {"sources/email/2026-03-01-a.md",
                                                     "sources/email/2026-03-02-b.md"}
    assert {e["value"]: e["first"]["rule"] for e in why["emails"]} == {
        "sarah@horizon.vc": "new-email-address", "schen@gmail.com": "new-email-address"}
    line = next(e.line for e in merged.timeline if "Two" in e.text)
    res = runner.invoke(main, ["-C", str(root), "split", "Sarah Chen", "--name", "Sam Chen",
                               "--email", "schen@gmail.com", "--line", str(line), "--json"])
    assert res.exit_code == 0, res.output
    sam = page(root, "people/Sam Chen.md")
    back = page(root, "people/Sarah Chen.md")
    assert sam.frontmatter["emails"] == ["schen@gmail.com"] and len(sam.timeline) == 1
    assert back.frontmatter["emails"] == ["sarah@horizon.vc"] and len(back.timeline) == 1
    res = runner.invoke(main, ["-C", str(root), "split", "Sarah Chen", "--name", "X",
                               "--line", "1"])
    assert res.exit_code != 0 and "not a fact or timeline line" in res.output


def test_resolver_seam_is_pluggable(tmp_path: Path) -> None:
    root = vault(tmp_path)
    email(root, "a", "One", "2026-03-01", [SARAH, ALEX])
    seen: list[tuple[int, int]] = []

    def nothing(mentions: list[Mention], index: EntityIndex,
                context: ResolveContext) -> list[Decision]:
        seen.append((len(mentions), len(index.entities)))
        return [Decision("unresolved", rule="llm") for _ in mentions]

    report = run_build(root, resolver=nothing)
    assert seen and report.pages_created == []
    assert {r["rule"] for r in log(root)} == {"llm"}


def test_resolve_batch_plain_data() -> None:
    mentions = [Mention("sources/email/x.md", 3, "Sarah Chen", "person", "participant",
                        email="sarah@horizon.vc", name="Sarah Chen", roles=("from",),
                        date="2026-01-01"),
                Mention("sources/email/x.md", 9, "Sarah", "person", "text", name="Sarah",
                        date="2026-01-01")]
    out = resolve_batch(mentions, EntityIndex(), ResolveContext([True, False]))
    assert out[0].action == "create" and out[0].name == "Sarah Chen"
    assert out[1].action == "create" and out[1].new_key == out[0].new_key
    assert out[1].rule == "first-name-context"


@pytest.mark.parametrize("value", ["extreme"])
def test_bad_strictness_is_one_clear_error(tmp_path: Path, value: str) -> None:
    root = vault(tmp_path, f"build:\n  strictness: {value}\n")
    email(root, "a", "One", "2026-03-01", [SARAH])
    res = CliRunner().invoke(main, ["-C", str(root), "build"])
    assert res.exit_code != 0
    assert "build.strictness" in res.output and "low, medium, high" in res.output


@pytest.mark.parametrize("label", ["e-mail", "E-Mail", "Email", "Fax"])
def test_a_display_name_that_is_a_label_is_not_a_name(tmp_path: Path, label: str) -> None:
    root = vault(tmp_path)
    email(root, "label", "SRP settlement", "2001-07-30",
          [("Joel Greene", "jlgreene@energyadvocates.com", "from"), ALEX,
           (label, "pat@enron.com", "to")])
    build(root)
    titles = [page(root, f"people/{p.name}").title for p in (root / "people").glob("*.md")]
    assert label not in titles and "Joel Greene" in titles
    # pat@ was never named and never wrote: no page, and no page is called by the label.
    assert not any(page(root, f"people/{p.name}").frontmatter.get("emails") == ["pat@enron.com"]
                   for p in (root / "people").glob("*.md"))
    assert next(r for r in log(root) if r["email"] == "pat@enron.com")["rule"] == \
        "not-created:nameless"


def test_a_summary_a_person_wrote_survives_every_later_build(tmp_path: Path) -> None:
    root = vault(tmp_path)
    mine = "Partner at [[Horizon Ventures]] who led our seed round."
    (root / "people").mkdir(exist_ok=True)
    (root / "people/Sarah Chen.md").write_text(
        "---\ntype: person\nemails: [sarah@horizon.vc]\n---\n# Sarah Chen\n\n" + mine + "\n")
    email(root, "one", "Board deck", "2026-03-01",
          [("Sarah Chen", "sarah@horizon.vc", "from"), ALEX])
    build(root)
    email(root, "two", "Monthly update", "2026-04-01",
          [("Sarah Chen", "sarah@horizon.vc", "from"), ALEX])
    build(root)
    text = (root / "people/Sarah Chen.md").read_text()
    assert mine in text and "Monthly update" in text  # updated, and the summary untouched
