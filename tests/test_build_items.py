"""`kenning build` puts commitments, asks and decisions on their pages (docs/vault-format.md,
"Where items live"): real .eml and .vtt inputs, `kenning sync`, `kenning build`, the pages on
disk read back line by line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.builder import run_build
from kenning.cli import main
from kenning.vault.page import parse_page

OWNER = "owner:\n  names: [Alex Morgan]\n  emails: [alex@kestrel.dev]\n  domains: [kestrel.dev]\n"
ALEX = "Alex Morgan <alex@kestrel.dev>"
SARAH = "Sarah Chen <sarah@horizon.vc>"
THREAD = "sources/email/2026-10-05-term-sheet"
MEETING = "sources/meetings/2026-10-07-replay-cache-review"
SARAH_PAGE = "people/Sarah Chen.md"
DECK = ("- [ ] 2026-10-05 — I'll send you the revised deck by Thursday. [who:: me] "
        "[to:: [[Sarah Chen]]] [due:: 2026-10-08] [source:: [[{t}#L{n}]]] ^{id}")


def cli(root: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["-C", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def eml(folder: Path, name: str, frm: str, to: str, subject: str, date: str, body: str,
        mid: str, reply_to: str | None = None) -> None:
    head = [f"From: {frm}", f"To: {to}", f"Subject: {subject}", f"Date: {date}",
            f"Message-ID: <{mid}>"]
    if reply_to:
        head += [f"In-Reply-To: <{reply_to}>", f"References: <{reply_to}>"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.eml").write_text("\n".join(head) + "\n\n" + body + "\n", encoding="utf-8")


def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    with (root / ".kenning" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(OWNER)
    inbox = tmp_path / "inbox"
    eml(inbox, "1", ALEX, SARAH, "Term sheet", "Mon, 5 Oct 2026 09:00:00 +0000",
        "Hi Sarah,\n\nThanks for the call. I'll send you the revised deck by Thursday.\n\nAlex",
        "m1@kestrel.dev")
    eml(inbox, "2", SARAH, ALEX, "Re: Term sheet", "Tue, 6 Oct 2026 10:00:00 +0000",
        "Hi Alex,\n\nWould you be able to forward the signed NDA?\n\nSarah", "m2@horizon.vc",
        "m1@kestrel.dev")
    cli(root, "sync", "email", str(inbox))
    meet = tmp_path / "meet"
    meet.mkdir()
    (meet / "2026-10-07 Replay cache review.vtt").write_text(
        "WEBVTT\n\n00:00:01.000 --> 00:00:05.000\n<v Peter Lindqvist>Decision: we keep the "
        "in-process cache rather than Redis.\n\n00:00:06.000 --> 00:00:10.000\n<v Priya Raman>"
        "I can write up the notes by tomorrow.\n", encoding="utf-8")
    cli(root, "sync", "meetings", str(meet))
    return root


def more_mail(tmp_path: Path, root: Path, name: str, frm: str, to: str, date: str, body: str,
              reply_to: str = "m2@horizon.vc", subject: str = "Re: Term sheet") -> None:
    inbox = tmp_path / "inbox"
    eml(inbox, name, frm, to, subject, date, body, f"{name}@x.dev", reply_to)
    cli(root, "sync", "email", str(inbox))


def lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text(encoding="utf-8").split("\n")


def item_lines(root: Path, rel: str, section: str) -> list[str]:
    page = parse_page((root / rel).read_text(encoding="utf-8"), rel)
    raw = lines(root, rel)
    return [raw[i.line - 1] for i in page.items if i.section == section]


def line_of(root: Path, source: str, needle: str) -> int:
    return next(n for n, line in enumerate(lines(root, source + ".md"), 1) if needle in line)


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()
            and not p.relative_to(root).as_posix().startswith(".kenning/index")}


def items_state(root: Path) -> list[dict]:
    path = root / ".kenning" / "build" / "items.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_items_land_on_the_right_pages(tmp_path: Path) -> None:
    root = vault(tmp_path)
    planned = cli(root, "build", "--dry-run")
    assert "+- [ ] 2026-10-05 — I'll send you the revised deck by Thursday." in planned
    assert not (root / ".kenning" / "build" / "items.jsonl").exists()
    out = cli(root, "build")
    assert "Items: 4 found in this build's sources, 4 new, 0 closed; 4 held in all." in out
    deck = line_of(root, THREAD, "revised deck")
    nda = line_of(root, THREAD, "signed NDA")
    state = {r["text"]: r for r in items_state(root) if r["r"] == "item"}
    deck_id = state["I'll send you the revised deck by Thursday."]["id"]
    nda_id = state["Would you be able to forward the signed NDA?"]["id"]
    # The owner's promise goes on the page of the person it was made to; Sarah's ask to the
    # owner on hers.
    assert item_lines(root, SARAH_PAGE, "commitments") == [
        DECK.format(t=THREAD, n=deck, id=deck_id)]
    assert item_lines(root, SARAH_PAGE, "open items") == [
        f"- [ ] 2026-10-06 — Would you be able to forward the signed NDA? [who:: [[Sarah Chen]]] "
        f"[to:: me] [source:: [[{THREAD}#L{nda}]]] ^{nda_id}"]
    # Sections come before the timeline, in one order.
    text = (root / SARAH_PAGE).read_text(encoding="utf-8")
    assert text.index("## Commitments") < text.index("## Open items") < text.index("## Timeline")
    # A speaker's promise in a meeting: on the speaker's page and the meeting's action items;
    # the decision on the meeting page.
    notes = line_of(root, MEETING, "write up the notes")
    cache = line_of(root, MEETING, "in-process cache")
    notes_id = state["I can write up the notes by tomorrow."]["id"]
    promise = (f"- [ ] 2026-10-07 — I can write up the notes by tomorrow. [who:: [[Priya Raman]]] "
               f"[due:: 2026-10-08] [source:: [[{MEETING}#L{notes}]]] ^{notes_id}")
    assert item_lines(root, "people/Priya Raman.md", "commitments") == [promise]
    page = "meetings/2026-10-07 Replay cache review.md"
    assert item_lines(root, page, "action items") == [promise]
    [decision] = item_lines(root, page, "decisions")
    assert decision.startswith("- 2026-10-07 — Decision: we keep the in-process cache rather "
                               "than Redis. [who:: [[Peter Lindqvist]]]")
    assert f"[source:: [[{MEETING}#L{cache}]]] ^i-" in decision and "[ ]" not in decision
    # Nobody's page holds a line for the owner; Peter's page holds no commitment.
    assert not (root / "people" / "Alex Morgan.md").exists()
    assert item_lines(root, "people/Peter Lindqvist.md", "commitments") == []


def test_rebuild_is_byte_stable_and_a_delivery_marks_done(tmp_path: Path) -> None:
    root = vault(tmp_path)
    run_build(root)
    before = snapshot(root)
    run_build(root)
    assert snapshot(root) == before
    # A later message by the owner delivers the deck; the owner's reply answers Sarah's ask.
    more_mail(tmp_path, root, "3", ALEX, SARAH, "Thu, 8 Oct 2026 08:00:00 +0000",
              "Hi Sarah,\n\nHere's the deck, as promised. The NDA is attached too.\n\nAlex")
    report = run_build(root)
    assert report.items_closed >= 1
    [deck] = item_lines(root, SARAH_PAGE, "commitments")
    assert deck.startswith("- [x] 2026-10-05 — I'll send you the revised deck by Thursday.")
    delivered = line_of(root, THREAD, "Here's the deck")
    assert f"[completion:: 2026-10-08] [closed:: [[{THREAD}#L{delivered}]]]" in deck
    [nda] = item_lines(root, SARAH_PAGE, "open items")
    assert nda.startswith("- [x] 2026-10-06 — Would you be able to forward the signed NDA?")
    again = snapshot(root)
    run_build(root)
    assert snapshot(root) == again


def test_a_persons_edit_wins_and_a_contradiction_is_named(tmp_path: Path) -> None:
    root = vault(tmp_path)
    run_build(root)
    path = root / SARAH_PAGE
    text = path.read_text(encoding="utf-8")
    [deck] = item_lines(root, SARAH_PAGE, "commitments")
    [nda] = item_lines(root, SARAH_PAGE, "open items")
    reworded = deck.replace("I'll send you the revised deck by Thursday.",
                            "Send Sarah deck v3 (with the cap table)")
    checked = nda.replace("- [ ]", "- [x]", 1)
    path.write_text(text.replace(deck, reworded).replace(nda, checked), encoding="utf-8")
    run_build(root)  # nothing new: the person's lines stay as they are
    assert item_lines(root, SARAH_PAGE, "commitments") == [reworded]
    # The thread grows by a message that says nothing of either item: its lines move (the
    # source is rendered again), which is no new evidence and no warning.
    more_mail(tmp_path, root, "2b", SARAH, ALEX, "Wed, 7 Oct 2026 08:00:00 +0000",
              "Hi Alex,\n\nThanks, talk soon.\n\nSarah")
    report = run_build(root)
    assert report.sources_built == 1
    assert not [w for w in report.warnings if "kept your edit" in w], report.warnings
    assert item_lines(root, SARAH_PAGE, "commitments") == [reworded]
    # New evidence: the owner delivers the deck (the build would mark the reworded line done)
    # and so answers Sarah's ask in the thread (the person marked it done already).
    more_mail(tmp_path, root, "3", ALEX, SARAH, "Sat, 10 Oct 2026 08:00:00 +0000",
              "Hi Sarah,\n\nHere's the deck, as promised.\n\nAlex", reply_to="2b@x.dev")
    report = run_build(root)
    assert item_lines(root, SARAH_PAGE, "commitments") == [reworded]
    assert checked in item_lines(root, SARAH_PAGE, "open items")
    n_deck = lines(root, SARAH_PAGE).index(reworded) + 1
    delivered = line_of(root, THREAD, "Here's the deck")
    warned = [w for w in report.warnings if w.startswith(f"{SARAH_PAGE}:{n_deck}: kept your edit")]
    assert len(warned) == 1 and f"{THREAD}#L{delivered}" in warned[0], report.warnings
    # The NDA line the person marked done now agrees with the sources (answered): no warning.
    assert len([w for w in report.warnings if "kept your edit" in w]) == 1, report.warnings
    # Nothing lost: the state holds what the sources say.
    deck_id = reworded.rsplit("^", 1)[1]
    rec = next(r for r in items_state(root) if r["r"] == "line" and r["id"] == deck_id)
    assert rec["evidence"].startswith("- [x] 2026-10-05 — I'll send you the revised deck")
    # The warning is given once, not on every build.
    assert not [w for w in run_build(root).warnings if "kept your edit" in w]


def test_a_deleted_line_is_not_put_back(tmp_path: Path) -> None:
    root = vault(tmp_path)
    run_build(root)
    rel = "people/Priya Raman.md"
    [promise] = item_lines(root, rel, "commitments")
    text = (root / rel).read_text(encoding="utf-8")
    (root / rel).write_text(text.replace(promise + "\n", ""), encoding="utf-8")
    more_mail(tmp_path, root, "3", SARAH, ALEX, "Thu, 8 Oct 2026 08:00:00 +0000",
              "Hi Alex,\n\nCould you send me the pilot report?\n\nSarah")
    report = run_build(root)
    assert report.sources_built == 1
    assert item_lines(root, rel, "commitments") == []
    # Still on the meeting page (that line was not deleted).
    assert item_lines(root, "meetings/2026-10-07 Replay cache review.md",
                      "action items") == [promise]


def test_a_killed_items_pass_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.builder.items import state as istate

    root = vault(tmp_path)
    run_build(root)
    more_mail(tmp_path, root, "3", ALEX, SARAH, "Thu, 8 Oct 2026 08:00:00 +0000",
              "Hi Sarah,\n\nHere's the deck, as promised.\n\nAlex", reply_to="m1@kestrel.dev")
    before = snapshot(root)
    save = istate.ItemsState.save

    def save_then_die(self: istate.ItemsState, *a: object, **kw: object) -> bool:
        save(self, *a, **kw)  # the state file and the pages are written …
        raise RuntimeError("killed in the items pass")  # … and the build dies

    monkeypatch.setattr(istate.ItemsState, "save", save_then_die)
    with pytest.raises(RuntimeError, match="killed in the items pass"):
        run_build(root)
    after = snapshot(root)
    after.pop(".kenning/build/build.lock", None)
    before.pop(".kenning/build/build.lock", None)
    assert after == before
    monkeypatch.setattr(istate.ItemsState, "save", save)
    run_build(root)
    [deck] = item_lines(root, SARAH_PAGE, "commitments")
    assert deck.startswith("- [x] 2026-10-05")


def test_an_untyped_person_note_is_not_written(tmp_path: Path) -> None:
    root = vault(tmp_path)
    note = root / "people" / "Jonas Weber.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Jonas Weber\n\nMet him at the Berlin meetup. Runs partnerships.\n",
                    encoding="utf-8")
    original = note.read_bytes()
    eml(tmp_path / "inbox", "5", "Jonas Weber <jonas@acme.io>", ALEX, "Contract",
        "Wed, 7 Oct 2026 08:00:00 +0000",
        "Hi Alex,\n\nI'll send the contract by Friday.\n\nJonas", "m5@acme.io")
    cli(root, "sync", "email", str(tmp_path / "inbox"))
    report = run_build(root)
    assert note.read_bytes() == original
    held = [r for r in items_state(root) if r["r"] == "item"
            and r["text"] == "I'll send the contract by Friday."]
    assert len(held) == 1 and held[0]["who"]["email"] == "jonas@acme.io"
    assert any(n.startswith("people/Jonas Weber.md: a person's note") for n in report.item_notes)
