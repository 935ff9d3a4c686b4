"""The deterministic item extractor (builder/items) on sources rendered by Kenning's own
connectors: mail as an mbox through ``kenning sync email``, meetings as WebVTT and plain text
through ``kenning sync meetings``, chats as generic JSON through ``kenning sync chats``.

Line numbers are never written down here: each expectation names a sentence, and the test finds
the file line that holds it in the rendered source."""

from __future__ import annotations

import json
import mailbox
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.builder.items.extract import extract_items
from kenning.builder.items.model import Delivery, Item, Party, Reply
from kenning.builder.items.settle import settle
from kenning.cli import main
from kenning.sources.owner import Owner

OWNER_YAML = ("owner:\n  names: [Alex Morgan]\n  emails: [alex@kestrel.dev]\n"
              "  domains: [kestrel.dev]\n")
OWNER = Owner(frozenset({"alex morgan"}), frozenset({"alex@kestrel.dev"}),
              frozenset({"kestrel.dev"}))
ALEX = "Alex Morgan <alex@kestrel.dev>"
SARAH = "Sarah Chen <sarah@horizon.vc>"
BO = "Bo Lindqvist <bo@northwind.example>"
EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


# -- helpers -----------------------------------------------------------------------------------


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    with (root / ".kenning" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(OWNER_YAML)
    return root


def _sync(root: Path, kind: str, target: Path) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", kind, str(target), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _msg(mid: str, subject: str, sender: str, to: str, body: str, date: str | None, *,
         refs: str = "", cc: str = "", extra: str = "") -> bytes:
    head = [f"From: {sender}", f"To: {to}", f"Subject: {subject}", f"Message-ID: <{mid}>"]
    if cc:
        head.append(f"Cc: {cc}")
    if date:
        head.append(f"Date: {date}")
    if refs:
        head += [f"In-Reply-To: <{refs.split()[-1]}>",
                 "References: " + " ".join(f"<{r}>" for r in refs.split())]
    if extra:
        head.append(extra)
    return ("\n".join(head) + "\n\n" + body.strip() + "\n").encode("utf-8")


def _mail(root: Path, tmp_path: Path, messages: list[bytes], name: str = "mail.mbox") -> None:
    path = tmp_path / name
    box = mailbox.mbox(str(path))
    for data in messages:
        box.add(data)
    box.flush()
    box.close()
    _sync(root, "email", path)


def _extract(root: Path, folder: str, contains: str) -> tuple[str, str, list[Item], object]:
    """(vault path, text, items, SourceItems) of the one source under ``folder`` whose text
    contains ``contains``."""
    found = [p for p in sorted((root / "sources" / folder).glob("*.md"))
             if contains in p.read_text(encoding="utf-8")]
    assert len(found) == 1, (contains, found)
    rel = found[0].relative_to(root).as_posix()
    text = found[0].read_text(encoding="utf-8")
    result = extract_items(rel, text, OWNER)
    return rel, text, result.items, result


def _line(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.split("\n"), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def _header(text: str, sender_address: str, nth: int = 0) -> int:
    hits = [n for n, line in enumerate(text.split("\n"), 1)
            if (line.startswith("## ") and f"· {sender_address}" in line.split("→")[0])
            or (line.startswith("## ") and f"<{sender_address}>" in line.split("→")[0])]
    return hits[nth]


def _only(items: list[Item], needle: str) -> Item:
    hits = [i for i in items if needle in i.text]
    assert len(hits) == 1, (needle, [i.text for i in items])
    return hits[0]


# -- one email thread: promise, ask, fulfilment, distractors ---------------------------------


def test_email_thread_promise_ask_fulfilment_and_distractors(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("t1@horizon.vc", "Pilot terms", SARAH, ALEX, """
Hi Alex,

Would you be able to forward the signed NDA? Should we move the kickoff to April?
We haven't decided on the venue yet. The vendor expects to ship at some point.
If we had more budget, we would hire a designer.

Sarah
""", "Mon, 02 Mar 2026 09:00:00 +0000"),
        _msg("t2@kestrel.dev", "Re: Pilot terms", ALEX, SARAH, """
Sarah,

Sure. I'll get the deck over to you by Thursday, and I will send the
pricing sheet on 14 April.

On Mon, Mar 2, 2026 at 9:00 AM Sarah Chen <sarah@horizon.vc> wrote:
> Would you be able to forward the signed NDA?
> I'll send the contract tomorrow.

Alex
""", "Mon, 02 Mar 2026 11:00:00 +0000", refs="t1@horizon.vc"),
        _msg("t3@kestrel.dev", "Re: Pilot terms", ALEX, SARAH, """
Here's the deck, as promised.

Alex
""", "Wed, 04 Mar 2026 16:00:00 +0000", refs="t1@horizon.vc t2@kestrel.dev"),
    ])
    rel, text, items, result = _extract(root, "email", "Pilot terms")
    by_kind = sorted((i.kind, i.text) for i in items)
    assert by_kind == [
        ("ask", "Would you be able to forward the signed NDA?"),
        ("commitment", "I'll get the deck over to you by Thursday, and I will send the "
                       "pricing sheet on 14 April."),
    ]
    ask = _only(items, "signed NDA")
    assert ask.who == Party("Sarah Chen", "sarah@horizon.vc", False)
    assert ask.to == (Party("Alex Morgan", "alex@kestrel.dev", True),)
    assert ask.line == ask.end == _line(text, "Would you be able to forward")
    # Answered: the owner wrote a later message in the thread.
    assert ask.status == "done"
    assert ask.closed_by == f"{rel[:-3]}#L{_header(text, 'alex@kestrel.dev', 0)}"
    promise = _only(items, "deck over")
    assert promise.who is not None and promise.who.owner
    assert promise.to == (Party("Sarah Chen", "sarah@horizon.vc", False),)
    assert (promise.date, promise.due, promise.due_text) == ("2026-03-02", "2026-03-05",
                                                             "by Thursday")
    assert (promise.line, promise.end) == (_line(text, "I'll get the deck"),
                                           _line(text, "pricing sheet on 14 April"))
    # Fulfilled by the later "Here's the deck, as promised." of the same writer.
    delivered = _line(text, "Here's the deck, as promised.")
    assert promise.status == "done"
    assert promise.closed_by == f"{rel[:-3]}#L{delivered}"
    assert promise.closed_on == "2026-03-04"
    assert [d.line for d in result.deliveries] == [delivered]
    assert [r.line for r in result.replies] == [_header(text, "sarah@horizon.vc"),
                                               _header(text, "alex@kestrel.dev", 0),
                                               _header(text, "alex@kestrel.dev", 1)]


# -- many phrasings, one message each -----------------------------------------------------------

# (sentence, kind or None, who: "me" | "them" | a name, due for a message written Mon 2 Mar 2026)
PHRASINGS: list[tuple[str, str | None, str | None, str | None]] = [
    # commitments, first person, many verbs and modals
    ("I'll get the deck over to you by Thursday.", "commitment", "them", "2026-03-05"),
    ("We will deliver the pilot report on 14 April.", "commitment", "them", "2026-04-14"),
    ("I can write up the notes by tomorrow.", "commitment", "them", "2026-03-03"),
    ("I'll circle back next week.", "commitment", "them", "2026-03-13"),
    ("I'm going to rework the onboarding flow before the end of the month.", "commitment",
     "them", "2026-03-31"),
    ("Let me dig up the contract terms and forward them by Friday.", "commitment", "them",
     "2026-03-06"),
    ("We'll have the migration plan ready by next Tuesday.", "commitment", "them",
     "2026-03-10"),
    ("I shall compile the survey results in two weeks.", "commitment", "them", "2026-03-16"),
    ("Sure, I can take a look at the failing build.", "commitment", "them", None),
    ("My team will benchmark both vendors this week.", "commitment", "them", "2026-03-06"),
    ("Happy to review the draft tonight.", "commitment", "them", "2026-03-02"),
    ("I'll try to reconcile the invoices by end of day.", "commitment", "them", "2026-03-02"),
    # asks, second person and imperative
    ("Could you send me the signed order form?", "ask", "them", None),
    ("Can you confirm the headcount by Wednesday?", "ask", "them", "2026-03-04"),
    ("Please book the meeting room for the offsite.", "ask", "them", None),
    ("Would you mind checking the numbers in tab 3?", "ask", "them", None),
    ("I need you to approve the budget before Friday.", "ask", "them", "2026-03-06"),
    ("Any chance you could introduce me to their CTO?", "ask", "them", None),
    # decisions
    ("We've settled on Postgres rather than MySQL.", "decision", "them", None),
    ("The call is to ship the beta to five customers first.", "decision", "them", None),
    ("Final answer: Lisbon.", "decision", "them", None),
    ("We decided to drop the annual plan because nobody bought it.", "decision", "them", None),
    ("We're going with the blue logo instead of the green one.", "decision", "them", None),
    # more shapes: no subject, progressive, passive, "it is"
    ("Will send the revised quote by Friday.", "commitment", "them", "2026-03-06"),
    ("Will do, sending the floor plan tomorrow.", "commitment", "them", "2026-03-03"),
    ("I'm shipping the hotfix this afternoon.", "commitment", "them", "2026-03-02"),
    ("My plan is to wrap up the audit by next Friday.", "commitment", "them", "2026-03-13"),
    ("Can I get the signed lease from you by Thursday?", "ask", "them", "2026-03-05"),
    ("Is there any way you could expedite the shipment?", "ask", "them", None),
    ("I was hoping you could proofread the brochure.", "ask", "them", None),
    ("Forward the invoice to accounting, thanks.", "ask", "them", None),
    ("Zendesk it is.", "decision", "them", None),
    ("The team has opted for quarterly billing over monthly billing.", "decision", "them",
     None),
    ("Postgres was chosen over MySQL for the ledger.", "decision", "them", None),
    ("You'll have the signed lease from me by Thursday.", "commitment", "them", "2026-03-05"),
    ("The floor plan will be with you by Wednesday.", "commitment", "them", "2026-03-04"),
    ("You need to renew the certificate by Friday.", "ask", "them", "2026-03-06"),
    ("When can I expect the audit report?", "ask", "them", None),
    ("We made the call to postpone the rebrand.", "decision", "them", None),
    ("I need to return the signed addendum by Friday.", "commitment", "them", "2026-03-06"),
    ("We're on track to finish the migration by 20 March.", "commitment", "them", "2026-03-20"),
    ("We're switching to Linear for issue tracking.", "decision", "them", None),
    ("The decision was made to freeze hiring until summer.", "decision", "them", None),
    ("Going forward, we will invoice every quarter.", "decision", "them", None),
    ("Any update on the insurance claim?", "ask", "them", None),
    ("Could I trouble you to resend the floor plan?", "ask", "them", None),
    ("I'd appreciate your feedback on the draft by Friday.", "ask", "them", "2026-03-06"),
    ("I'll be taking care of the permits by Thursday.", "commitment", "them", "2026-03-05"),
    ("Let us handle the catering for the launch.", "commitment", "them", None),
    ("I'll send the brochure — Thursday at the latest.", "commitment", "them", "2026-03-05"),
    ("Thanks Sarah I'll book the venue by Friday.", "commitment", "them", "2026-03-06"),
    ("We keep the monthly plan rather than switching to annual.", "decision", "them", None),
    ("The board voted for the Lisbon office.", "decision", "them", None),
    ("Confirmed: the offsite is in Porto.", "decision", "them", None),
    ("On it — will have the seating chart to you tomorrow.", "commitment", "them", "2026-03-03"),
    ("Don't forget to renew the domain by Friday.", "ask", "them", "2026-03-06"),
    ("Would you be so kind as to forward the brochure?", "ask", "them", None),
    ("You'll need to resubmit the expense form.", "ask", "them", None),
    ("Still waiting on your sign-off for the budget.", "ask", "them", None),
    ("Your feedback on the draft would be much appreciated.", "ask", "them", None),
    # never an item
    ("We are looking for a new office.", None, None, None),
    ("Sure, will do.", None, None, None),
    ("I will do my best.", None, None, None),
    ("I'll be going to the conference in April.", None, None, None),
    ("What is the point of a second office?", None, None, None),
    ("I need to think about the offer.", None, None, None),
    ("That is not what we agreed to in January.", None, None, None),
    ("You should see the view from the new office.", None, None, None),
    ("I'm looking forward to the offsite.", None, None, None),
    ("Under the plan, prices will be capped in May.", None, None, None),
    ("Please let me know.", None, None, None),
    ("PLEASE MARK YOUR CALENDAR for the quarterly call.", None, None, None),
    ("One example I can give you is the pilot in Lyon.", None, None, None),
    ("Should we move the offsite to May?", None, None, None),
    ("We haven't decided on the venue yet.", None, None, None),
    ("The vendor expects to ship at some point.", None, None, None),
    ("If the budget were bigger, I would hire two designers.", None, None, None),
    ("I won't be able to make the review on Thursday.", None, None, None),
    ("I'll be out of office until Monday.", None, None, None),
    ("Let me know if you have any questions.", None, None, None),
    ("Thanks for the update, it looks good.", None, None, None),
    ("I think we'd need a bigger team for that.", None, None, None),
    ("Please find attached the minutes.", None, None, None),
    ("I told him I would send it.", None, None, None),
    ("Maybe we could try the other vendor?", None, None, None),
    ("We might decide on the pricing later.", None, None, None),
    ("Perhaps I'll write a blog post about it someday.", None, None, None),
    # structure, not phrase lists (my own phrasings, in none of the corpus banks): a first
    # person, then "to / will" + a dictionary verb + an object; a later promise clause
    ("Leave the supplier contract with me, I'll redline it by Friday.", "commitment", "them",
     "2026-03-06"),
    ("Put me down to draft the onboarding guide.", "commitment", "them", None),
    ("It falls to me to renew the insurance policy by March 20th.", "commitment", "them",
     "2026-03-20"),
    ("Sarah here: my job this week is to collect the signed waivers.", "commitment", "them",
     "2026-03-06"),
    ("I've cleared my afternoon to proofread the grant application.", "commitment", "them",
     None),
    ("Might you chase the courier about the missing parcel?", "ask", "them", None),
    ("When you get a chance, could you scan the signed lease?", "ask", "them", None),
    ("In the end, the teal banner won out over the grey one.", "decision", None, None),
    ("The call on the venue is Lisbon.", "decision", None, None),
    ("She asked me to review the budget.", None, None, None),
    ("We have the ability to host the event.", None, None, None),
    ("I went to visit the new office.", None, None, None),
    ("The Lakers won over the Celtics last night.", None, None, None),
    ("Happy to clarify: the fee covers both rooms.", None, None, None),
    ("I'd love to join the hiking trip.", None, None, None),
    ("Re this: > Could you send the floor plan?", None, None, None),
    ("We'll audit the invoices and fix the ledger so it doesn't drift again.", "commitment",
     "them", None),
    ("I won't renew the lease so you can move out.", None, None, None),
    ("I didn't have to rewrite the summary this time.", None, None, None),
    # decisions by shape (a group subject + a past/perfect choosing verb by lemma, an outcome
    # noun or label, a passive choice): my own phrasings, in none of the corpus banks
    ("The steering committee elected to postpone the rebrand.", "decision", "them", None),
    ("After a long back-and-forth we went for Datadog instead of New Relic.", "decision",
     "them", None),
    ("Management has signed off on the new pricing tiers.", "decision", "them", None),
    ("The leadership team has greenlit Project Atlas.", "decision", "them", None),
    ("We've scrapped the native app in favour of a progressive web app.", "decision", "them",
     None),
    ("Resolution: the API stays on version two.", "decision", "them", None),
    ("It has been decided that we keep Slack for chat.", "decision", "them", None),
    ("The committee has reached a consensus on Kafka over RabbitMQ.", "decision", "them",
     None),
    ("Porto has been approved for the offsite.", "decision", "them", None),
    ("Stripe got the go-ahead for billing.", "decision", "them", None),
    ("We collectively opted to keep the old logo.", "decision", "them", None),
    ("We're locking in Porto for the offsite.", "decision", "them", None),
    ("The group has come down in favour of quarterly invoicing.", "decision", "them", None),
    ("That settles it: Porto for the offsite.", "decision", "them", None),
    ("Decision needed: the caterer for the launch party.", None, None, None),
    ("We're locking the office at six.", None, None, None),
    ("Once we've chosen the venue I'll book the flights.", None, None, None),
    ("The decision on the caterer is still pending.", None, None, None),
    ("We settled the invoice yesterday.", None, None, None),
    ("The vendor chose a new logo last week.", None, None, None),
    ("Most everyone agreed that a regulated market was not feasible.", None, None, None),
    ("The answer is open access, so power can flow.", None, None, None),
    # ownership and polite-condition shapes (own phrasings)
    ("You can leave the venue shortlist to me.", "commitment", "them", None),
    ("The seating plan is on me.", "commitment", "them", None),
    ("Our team is going to repaint the lobby by Friday.", "commitment", "them", "2026-03-06"),
    ("It would be a big help if you could proofread the flyer.", "ask", "them", None),
    ("It would help if we had more time.", None, None, None),
    ("I'll jump on it and redraw the floor plan by Friday.", "commitment", "them", "2026-03-06"),
    ("I'll think about it and see.", None, None, None),
    ("I'll get together the seating plan at some point next week.", "commitment", "them",
     "2026-03-13"),
    ("Leave the kids to me if the meeting runs late.", None, None, None),
]


@pytest.fixture(scope="module")
def phrasing_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("phrasings")
    root = _vault(tmp)
    messages = [_msg(f"p{i}@horizon.vc", f"Topic number {i}", SARAH, ALEX,
                     f"Hi Alex,\n\nQuick note on item {i}.\n\n{sentence}\n\nSarah",
                     "Mon, 02 Mar 2026 10:00:00 +0000")
                for i, (sentence, *_rest) in enumerate(PHRASINGS)]
    _mail(root, tmp, messages)
    return root


@pytest.mark.parametrize(("index", "sentence", "kind", "who", "due"),
                         [(i, *row) for i, row in enumerate(PHRASINGS)],
                         ids=[row[0][:40] for row in PHRASINGS])
def test_phrasings(phrasing_vault: Path, index: int, sentence: str, kind: str | None,
                   who: str | None, due: str | None) -> None:
    _, text, items, _ = _extract(phrasing_vault, "email", f"Quick note on item {index}.")
    if kind is None:
        assert items == [], [i.text for i in items]
        return
    assert [(i.kind, i.text) for i in items] == [(kind, sentence)]
    item = items[0]
    assert item.line == _line(text, sentence)
    assert item.who == Party("Sarah Chen", "sarah@horizon.vc", False)
    assert item.due == due
    if kind == "decision":
        assert item.status == "decided" and item.to == ()
    else:
        assert item.to == (Party("Alex Morgan", "alex@kestrel.dev", True),)
        assert item.status == "open"


def test_decision_shapes_rejected_and_because(phrasing_vault: Path) -> None:
    _, _, items, _ = _extract(phrasing_vault, "email", "settled on Postgres")
    assert items[0].rejected == ("MySQL",)
    _, _, items, _ = _extract(phrasing_vault, "email", "drop the annual plan")
    assert items[0].because == "nobody bought it"
    _, _, items, _ = _extract(phrasing_vault, "email", "the blue logo")
    assert items[0].rejected == ("the green one",)
    _, _, items, _ = _extract(phrasing_vault, "email", "chosen over MySQL")
    assert (items[0].rejected, items[0].about) == (("MySQL",), ("the ledger",))
    _, _, items, _ = _extract(phrasing_vault, "email", "opted for quarterly")
    assert items[0].rejected == ("monthly billing",)
    _, _, items, _ = _extract(phrasing_vault, "email", "went for Datadog")
    assert items[0].rejected == ("New Relic",)
    _, _, items, _ = _extract(phrasing_vault, "email", "scrapped the native app")
    assert items[0].rejected == ("the native app",)
    _, _, items, _ = _extract(phrasing_vault, "email", "consensus on Kafka")
    assert items[0].rejected == ("RabbitMQ",)


def test_the_sentences_after_a_decision_name_what_was_dropped_and_why(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [_msg("k1@kestrel.dev", "Offsite venue", ALEX, SARAH, """
Sarah,

We've decided to hold the offsite in Lisbon. We dropped Porto. The reason is the flights.

Alex
""", "Tue, 03 Mar 2026 10:00:00 +0000")])
    _, text, items, _ = _extract(root, "email", "Offsite venue")
    [decision] = items
    assert (decision.kind, decision.rejected, decision.because) == ("decision", ("Porto",),
                                                                    "the flights")
    assert decision.line == _line(text, "We've decided")


def test_decided_and_rejected_lines_and_third_party_plans_in_a_summary(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [_msg("s1@kestrel.dev", "Cache review summary", ALEX,
                                f"{SARAH}, {BO}", """
Sarah, Bo,

- Decided: we keep the in-process cache for Project Perch and version the cache key.
- Rejected: going back to Redis (a second service to run) and a flush on every deploy.
- Bo ships the versioned key this week.

Sarah will present the results in April.
""", "Tue, 03 Mar 2026 10:00:00 +0000")])
    _, _, items, _ = _extract(root, "email", "Cache review summary")
    decision = _only(items, "Decided:")
    assert decision.kind == "decision" and decision.who is not None and decision.who.owner
    assert decision.rejected == ("going back to Redis", "a flush on every deploy")
    assert decision.because is None  # the parenthesis is why Redis lost, not why
    assert decision.about == ("Perch",)
    bo = _only(items, "Bo ships")
    assert (bo.kind, bo.who, bo.due) == ("commitment", Party("Bo Lindqvist",
                                                             "bo@northwind.example"),
                                         "2026-03-06")
    sarah = _only(items, "Sarah will present")
    assert (sarah.kind, sarah.who and sarah.who.email, sarah.due) == (
        "commitment", "sarah@horizon.vc", "2026-04-30")
    assert len(items) == 3


@pytest.mark.parametrize("delivery", ["Just sent it over.", "It's in your inbox.",
                                      "That's done.", "Took care of it this morning.",
                                      "Shared the floor plan with you."])
def test_short_deliveries_close_the_writer_s_promise(tmp_path: Path, delivery: str) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("f1@kestrel.dev", "Floor plan", ALEX, SARAH,
             "I'll send you the floor plan by Friday.", "Mon, 02 Mar 2026 10:00:00 +0000"),
        _msg("f2@horizon.vc", "Re: Floor plan", SARAH, ALEX, "Great, thanks.",
             "Mon, 02 Mar 2026 11:00:00 +0000", refs="f1@kestrel.dev"),
        _msg("f3@kestrel.dev", "Re: Floor plan", ALEX, SARAH, delivery,
             "Wed, 04 Mar 2026 10:00:00 +0000", refs="f1@kestrel.dev f2@horizon.vc"),
    ])
    rel, text, items, _ = _extract(root, "email", "Floor plan")
    [promise] = items
    assert promise.status == "done"
    assert promise.closed_by == f"{rel[:-3]}#L{_line(text, delivery)}"


def test_a_promise_repeated_in_a_reply_is_one_item(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("r1@horizon.vc", "Numbers", SARAH, ALEX, "I'll send the churn numbers by Friday.",
             "Mon, 02 Mar 2026 10:00:00 +0000"),
        _msg("r2@horizon.vc", "Re: Numbers", SARAH, ALEX,
             "As I said, I will send the churn numbers by Friday.",
             "Tue, 03 Mar 2026 10:00:00 +0000", refs="r1@horizon.vc"),
    ])
    _, text, items, _ = _extract(root, "email", "churn numbers")
    assert [(i.kind, i.line) for i in items] == [("commitment",
                                                 _line(text, "I'll send the churn"))]


# -- bad input -----------------------------------------------------------------------------------


def test_all_quoted_message_undated_friday_and_past_due(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("q1@horizon.vc", "Quotes only", SARAH, ALEX,
             "Can you send the report?", "Mon, 02 Mar 2026 10:00:00 +0000"),
        _msg("q2@kestrel.dev", "Re: Quotes only", ALEX, SARAH,
             "> Can you send the report?\n> I'll review it by Friday.",
             "Mon, 02 Mar 2026 12:00:00 +0000", refs="q1@horizon.vc"),
        _msg("u1@horizon.vc", "No date at all", SARAH, ALEX,
             "I'll send the signed copy on Friday.", None),
        _msg("d1@horizon.vc", "Late already", SARAH, ALEX,
             "I will file the claim by 20 February.", "Mon, 02 Mar 2026 10:00:00 +0000"),
    ])
    rel, text, items, result = _extract(root, "email", "Quotes only")
    assert [i.text for i in items] == ["Can you send the report?"]
    assert any("all quoted text" in n and f":{_header(text, 'alex@kestrel.dev')}:" in n
               for n in result.notes), result.notes
    rel, text, items, result = _extract(root, "email", "signed copy")
    [item] = items
    assert (item.date, item.due, item.due_text) == (None, None, "on Friday")
    assert "no date" in (item.note or "")
    assert any(n.startswith(f"{rel}:{item.line}: no date") for n in result.notes)
    rel, text, items, result = _extract(root, "email", "file the claim")
    [item] = items
    assert (item.date, item.due) == ("2026-03-02", "2026-02-20")
    assert "before the day it was written" in (item.note or "")
    assert any("2026-02-20" in n and n.startswith(rel) for n in result.notes)


def test_quoted_conversation_in_other_client_shapes_yields_nothing(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("w1@kestrel.dev", "Lease", ALEX, SARAH, """Noted, thanks.

Sarah Chen wrote:
I will review the lease by Friday.
Could you send the floor plan?
""", "Mon, 02 Mar 2026 10:00:00 +0000"),
        _msg("w2@kestrel.dev", "Lease again", ALEX, SARAH, """Noted.

________________________________
From: Sarah Chen
Sent: Monday, March 2, 2026 9:00 AM
To: Alex Morgan
Subject: Lease again

I will review the lease by Friday.
""", "Mon, 02 Mar 2026 11:00:00 +0000"),
    ])
    for subject in ("# Lease\n", "# Lease again\n"):
        _, _, items, _ = _extract(root, "email", subject)
        assert items == [], [i.text for i in items]


def test_bulk_mail_yields_nothing(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [_msg("b1@news.example", "Weekly digest",
                                "Digest <news@news.example>", ALEX,
                                "We will ship dark mode next week. Please update your app.",
                                "Mon, 02 Mar 2026 10:00:00 +0000",
                                extra="List-Unsubscribe: <mailto:u@news.example>\n"
                                      "Precedence: bulk")])
    _, _, items, result = _extract(root, "email", "Weekly digest")
    assert items == [] and result.deliveries == [] and result.replies == []


def test_a_500_message_thread(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    rng = random.Random(15)
    messages = []
    people = [SARAH, ALEX, BO]
    for i in range(500):
        sender = people[i % 3]
        to = people[(i + 1) % 3]
        body = rng.choice(["Sounds good.", "Thanks, noted.", f"I'll send the draft number {i} "
                           "by Friday.", f"Could you review section {i}?", "Sent."])
        refs = " ".join(f"m{j}@x.example" for j in range(max(0, i - 3), i))
        messages.append(_msg(f"m{i}@x.example", "Long thread" if i == 0 else "Re: Long thread",
                             sender, to, body,
                             f"Mon, 02 Mar 2026 {i // 60 % 24:02d}:{i % 60:02d}:00 +0000",
                             refs=refs))
    _mail(root, tmp_path, messages)
    paths = [p for p in (root / "sources" / "email").glob("*.md")]
    total = 0
    for p in paths:
        text = p.read_text(encoding="utf-8")
        result = extract_items(p.relative_to(root).as_posix(), text, OWNER)
        lines = text.split("\n")
        for item in result.items:
            # Every item cites a line that holds its first words.
            assert item.text.split()[0] in lines[item.line - 1], item
            total += 1
    promised = sum(1 for m in messages if b"I'll send the draft" in m)
    asked = sum(1 for m in messages if b"Could you review" in m)
    assert total == promised + asked


def test_invalid_and_odd_text_never_raises() -> None:
    odd = [
        "", "---\n", "---\ntitle: [unclosed\n---\n## 2026-01-01 · x\nI'll send it by Friday.",
        "---\nkind: email\n---\n## \n\x00\x01 I'll", "## undated · \n> quoted\n",
        "- **[00:00:01] :** I'll do it", "\ufffd" * 5000,
        "## 2026-99-99 10:00 · a → b\nPlease send",
        "I will " * 3000,
    ]
    for text in odd:
        for path in ("sources/email/x.md", "sources/meetings/x.md", "sources/chats/x.md",
                     "sources/other/x.md", "x.md"):
            result = extract_items(path, text, OWNER)
            assert result.source == path


# -- meetings -----------------------------------------------------------------------------------


def test_webvtt_meeting_speakers_commitments_asks_decisions(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "meetings"
    folder.mkdir()
    (folder / "2026-03-02 Replay cache review.vtt").write_text("""WEBVTT

00:00:01.000 --> 00:00:09.000
<v Peter Lindqvist>Thanks for joining. One topic: the stale replays.

00:00:10.000 --> 00:00:19.000
<v Priya Raman>I can write up the notes by tomorrow.

00:00:20.000 --> 00:00:29.000
<v Diego Santos>Should we bring Redis back? I'm against a flush on every deploy.

00:00:30.000 --> 00:00:39.000
<v Peter Lindqvist>Agreed. Decision: keep the cache, add the version to the key, no flush on deploy.

00:00:40.000 --> 00:00:49.000
<v Alex Morgan>Peter, please write it up for the team so it is on record.

00:00:50.000 --> 00:00:55.000
<v Priya Raman>Let me just check the numbers. I'll now go through the last slide.

00:00:56.000 --> 00:00:59.000
<v Diego Santos>I'll take that one.

00:01:00.000 --> 00:01:05.000
<v Peter Lindqvist>Can someone send the hit-rate chart to Copperline?

00:01:06.000 --> 00:01:09.000
<v Diego Santos>I'll take that one.
""", encoding="utf-8")
    _sync(root, "meetings", folder)
    _, text, items, result = _extract(root, "meetings", "stale replays")
    # Talk about the talk ("let me just check", "I'll now go through") promises nothing; "I'll
    # take that one" promises only after someone asked for something.
    assert sorted(i.kind for i in items) == ["ask", "commitment", "commitment", "decision"]
    taken = [i for i in items if i.text == "I'll take that one."]
    assert len(taken) == 1 and taken[0].who is not None and taken[0].who.name == "Diego Santos"
    assert taken[0].line > _line(text, "Can someone send the hit-rate chart")
    notes = _only(items, "write up the notes")
    assert notes.who is not None and notes.who.name == "Priya Raman"
    assert (notes.date, notes.due, notes.line) == ("2026-03-02", "2026-03-03",
                                                   _line(text, "write up the notes"))
    decision = _only(items, "Decision:")
    assert decision.who is not None and decision.who.name == "Peter Lindqvist"
    assert decision.rejected == ("flush on deploy",)
    ask = _only(items, "please write it up")
    assert ask.who is not None and ask.who.owner
    assert [p.name for p in ask.to] == ["Peter Lindqvist"]
    assert ask.status == "open"  # a meeting turn answers nothing
    assert result.replies == []


def test_notes_export_action_items_and_a_transcript_without_speakers(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "meetings"
    folder.mkdir()
    (folder / "2026-03-04 Weekly sync.txt").write_text("""# Weekly sync

## Action items

- [ ] Jonas: send the amended order form by Friday
- [x] Marta: book the venue
- AI: Priya to draft the launch memo
- Update the pricing page (Jonas)

## Transcript

Jonas Weber: Good morning everyone.
Marta Nowak: Morning. The venue is booked.
Priya Raman: I'll draft the launch memo.
""", encoding="utf-8")
    (folder / "2026-03-05 Hallway chat.txt").write_text(
        "We talked about the roadmap.\n\nI will send the summary by Friday.\n\n"
        "Can you check the budget?\n", encoding="utf-8")
    _sync(root, "meetings", folder)
    _, text, items, result = _extract(root, "meetings", "Weekly sync")
    got = {(i.text, i.who.name if i.who else None, i.due, i.status) for i in items
           if i.kind == "commitment"}
    assert got == {
        ("Jonas: send the amended order form by Friday", "Jonas Weber", "2026-03-06", "open"),
        ("Marta: book the venue", "Marta Nowak", None, "done"),
        ("AI: Priya to draft the launch memo", "Priya Raman", None, "open"),
        ("Update the pricing page (Jonas)", "Jonas Weber", None, "open"),
    }  # "I'll draft the launch memo" in the talk is the same promise as the action item
    assert _only(items, "Jonas: send").line == _line(text, "Jonas: send the amended")
    _, text, items, result = _extract(root, "meetings", "Hallway chat")
    assert sorted((i.kind, i.who) for i in items) == [("ask", None), ("commitment", None)]
    assert _only(items, "send the summary").due == "2026-03-06"
    assert all(i.note and "no speaker" in i.note for i in items)
    assert any("names no speakers" in n for n in result.notes)


def test_notes_with_action_points_and_a_table_of_owners(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "meetings"
    folder.mkdir()
    (folder / "2026-03-09 Launch retro.txt").write_text("""# Launch retro

## Action points

| Owner | Task | Due |
|---|---|---|
| Marta Nowak | book the retro room | Friday |
| Jonas Weber | update the runbook | |

## Transcript

Jonas Weber: The launch went fine.
Marta Nowak: Agreed, no incidents.
""", encoding="utf-8")
    _sync(root, "meetings", folder)
    _, text, items, _ = _extract(root, "meetings", "Launch retro")
    got = sorted((i.who.name if i.who else None, i.due, i.line) for i in items)
    assert got == [("Jonas Weber", None, _line(text, "update the runbook")),
                   ("Marta Nowak", "2026-03-13", _line(text, "book the retro room"))]
    assert all(i.kind == "commitment" for i in items)


# -- chats --------------------------------------------------------------------------------------


def test_generic_chat_turns(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "launch.json").write_text(json.dumps({
        "id": "launch-7", "title": "Launch prep", "participants": ["Alex Morgan", "Ana Ruiz"],
        "messages": [
            {"speaker": "Ana Ruiz", "text": "Alex, can you sign off on the press release?",
             "timestamp": "2026-03-02T09:00:00Z"},
            {"speaker": "Alex Morgan", "text": "Yes. I'll push the landing page tonight.",
             "timestamp": "2026-03-02T09:05:00Z"},
            {"speaker": "assistant", "text": "I will draft a summary tomorrow.",
             "timestamp": "2026-03-02T09:06:00Z"},
            {"speaker": "Alex Morgan", "text": "Done, the landing page is live.",
             "timestamp": "2026-03-02T22:00:00Z"},
        ]}), encoding="utf-8")
    _sync(root, "chats", folder)
    rel, text, items, _ = _extract(root, "chats", "Launch prep")
    assert sorted(i.kind for i in items) == ["ask", "commitment"]
    ask = _only(items, "sign off")
    assert ask.who == Party("Ana Ruiz", None, False)
    assert ask.to and ask.to[0].owner
    assert ask.status == "done" and ask.closed_by == f"{rel[:-3]}#L{_line(text, 'push the')}"
    push = _only(items, "landing page tonight")
    assert push.who is not None and push.who.owner and push.due == "2026-03-02"
    assert push.status == "done"
    assert push.closed_by == f"{rel[:-3]}#L{_line(text, 'is live')}"


# -- settle: across sources ------------------------------------------------------------------------


def test_settle_across_threads_same_person_audience_and_object(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    _mail(root, tmp_path, [
        _msg("a1@kestrel.dev", "Pilot report", ALEX, SARAH,
             "I'll send you the pilot report by Friday.\n\nCould you share the usage export?",
             "Mon, 02 Mar 2026 10:00:00 +0000"),
        _msg("b1@kestrel.dev", "Invoice", ALEX, SARAH, "Here's the invoice for March.",
             "Tue, 03 Mar 2026 10:00:00 +0000"),
        _msg("c1@kestrel.dev", "For Bo", ALEX, BO, "Here is the pilot report.",
             "Wed, 04 Mar 2026 10:00:00 +0000"),
        _msg("d1@horizon.vc", "Other topic", SARAH, ALEX, "Thanks for lunch!",
             "Wed, 04 Mar 2026 11:00:00 +0000"),
        _msg("e1@kestrel.dev", "Pilot report, final", ALEX, SARAH,
             "Attached is the pilot report, as promised.", "Thu, 05 Mar 2026 10:00:00 +0000"),
    ])
    items: list[Item] = []
    deliveries: list[Delivery] = []
    replies: list[Reply] = []
    texts = {}
    for p in sorted((root / "sources" / "email").glob("*.md")):
        rel = p.relative_to(root).as_posix()
        texts[rel] = p.read_text(encoding="utf-8")
        r = extract_items(rel, texts[rel], OWNER)
        items += r.items
        deliveries += r.deliveries
        replies += r.replies
    assert {i.kind for i in items} == {"commitment", "ask"}
    assert all(i.status == "open" for i in items)
    settled = settle(items, deliveries, replies)
    report = _only(settled, "pilot report by Friday")
    final = next(r for r in texts if "final" in r)
    assert report.status == "done"
    assert report.closed_by == f"{final[:-3]}#L{_line(texts[final], 'as promised')}"
    # Sarah wrote again, but in another thread: the ask stays open.
    assert _only(settled, "usage export").status == "open"
    # Idempotent, order-independent, never reopens.
    assert settle(settled, deliveries, replies) == settled
    assert settle(settled, [], []) == settled
    shuffled = list(reversed(items))
    again = settle(shuffled, list(reversed(deliveries)), list(reversed(replies)))
    assert sorted(again, key=lambda i: i.id) == sorted(settled, key=lambda i: i.id)


def test_a_delivery_months_after_the_promise_in_another_source_does_not_close_it() -> None:
    """Within 90 days of the promise (or of its due date) another source's delivery closes
    it; a year later, a mail that shares its words does not."""
    from kenning.builder.items.model import Party

    steve, sue = Party("Steve Kean", "steve@enron.com"), Party("Sue Mara", "sue@enron.com")
    promise = Item("commitment", "I'll read the comments on the price caps", "sources/email/a.md",
                   10, 10, "2000-08-14", steve, (sue,))
    late = Delivery(steve, (sue,), "I read the comments on the price caps", "sources/email/b.md",
                    5, 5, "2001-07-10")
    soon = Delivery(steve, (sue,), "I read the comments on the price caps", "sources/email/c.md",
                    5, 5, "2000-09-01")
    assert settle([promise], [late], [])[0].status == "open"
    (done,) = settle([promise], [late, soon], [])
    assert done.status == "done" and done.closed_by == "sources/email/c#L5"
    # A promise due later counts its window from the due date.
    due = Item("commitment", "I'll read the comments on the price caps", "sources/email/a.md",
               10, 10, "2000-08-14", steve, (sue,), due="2001-06-01")
    assert settle([due], [late], [])[0].status == "done"


def test_the_sample_vault(tmp_path: Path) -> None:
    """The bundled sample: the decision and its rejected options, the promises and who
    delivered them."""
    root = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", str(root)])
    assert result.exit_code == 0, result.output
    owner = Owner.load(root)
    found: list[Item] = []
    for p in sorted((root / "sources").rglob("*.md")):
        found += extract_items(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"),
                               owner).items
    decided = [i for i in found if i.kind == "decision" and "email" in i.source]
    assert len(decided) == 1
    assert decided[0].rejected == ("going back to Redis", "a cache-wide flush on every deploy")
    priya = next(i for i in found if i.text.startswith("Priya ships the versioned key"))
    assert priya.status == "done" and "#L" in (priya.closed_by or "")
    marta = next(i for i in found if "signed offer" in i.text)
    assert (marta.who and marta.who.name, marta.due) == ("Marta Nowak", "2026-11-03")
    # The monthly investor update and the CI newsletter are no to-do list.
    assert not any("driftwood" in i.source for i in found)
    # A promise with a purpose clause ("so X can …") is still a promise, said in the meeting
    # and in the organiser's summary (which gives it the week of its sibling clause).
    diego = [i for i in found if "perch cache stats" in i.text]
    assert {i.source.split("/")[1] for i in diego} == {"meetings", "email"}
    assert all(i.who and i.who.name == "Diego Santos" for i in diego)
    assert next(i for i in diego if "email" in i.source).due == "2026-10-09"
    # What the person asks an assistant in an agent session is not an item they track.
    assert not any(i.kind == "ask" and "chats" in i.source for i in found)


def test_a_bare_promise_is_closed_by_the_next_thread_on_its_subject(tmp_path: Path) -> None:
    """"Priya ships it this week." names no object; Priya's delivery in the next day's thread
    on the same subject closes it; a delivery on another subject does not."""
    root = tmp_path / "demo"
    assert CliRunner().invoke(main, ["demo", str(root)]).exit_code == 0
    owner = Owner.load(root)
    items: list[Item] = []
    deliveries: list[Delivery] = []
    replies: list[Reply] = []
    for p in sorted((root / "sources").rglob("*.md")):
        got = extract_items(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"),
                            owner)
        items += got.items
        deliveries += got.deliveries
        replies += got.replies
    bare = next(i for i in items if i.text == "Priya ships it this week.")
    assert bare.status == "open"
    settled = settle(items, deliveries, replies)
    closed = next(i for i in settled if i.text == "Priya ships it this week.")
    assert closed.status == "done"
    assert "replay-cache-decision" in (closed.closed_by or "")
    unrelated = [d for d in deliveries if "replay-cache" not in d.source]
    assert next(i for i in settle(items, unrelated, replies)
                if i.text == "Priya ships it this week.").status == "open"


# -- real data ------------------------------------------------------------------------------------

QMSUM = EVAL / "meetings" / "qmsum" / "transcripts"


@pytest.mark.skipif(not QMSUM.exists(), reason="shared eval data absent")
def test_qmsum_transcripts_cite_real_lines(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "q"
    folder.mkdir()
    for src in sorted(QMSUM.glob("*.json"))[:3]:
        (folder / src.name).write_bytes(src.read_bytes())
    _sync(root, "meetings", folder)
    total = 0
    for p in sorted((root / "sources" / "meetings").glob("*.md")):
        text = p.read_text(encoding="utf-8")
        lines = text.split("\n")
        for item in extract_items(p.relative_to(root).as_posix(), text, OWNER).items:
            assert lines[item.line - 1].startswith("- **"), item
            assert item.who is not None
            total += 1
    assert total > 0


# -- spoken meetings: only explicit items ----------------------------------------------------


_COUNCIL_VTT = """WEBVTT

00:00:01.000 --> 00:00:06.000
<v Ines Duarte>Madam Speaker, I'll be dividing my time with the councillor for Riverside.

00:00:07.000 --> 00:00:12.000
<v Ines Duarte>We will always defend this borough and every family let down by City Hall.

00:00:13.000 --> 00:00:18.000
<v Ines Duarte>Let me remind the mayor what he said in March.

00:00:19.000 --> 00:00:24.000
<v Tomas Reyes>I'm tabling a motion today on the harbour levy.

00:00:25.000 --> 00:00:30.000
<v Tomas Reyes>I'll walk you through the figures first.

00:00:31.000 --> 00:00:36.000
<v Tomas Reyes>We expect to see the levy revenue recover over the coming years.

00:00:37.000 --> 00:00:42.000
<v Ines Duarte>Are we going for the cheaper dredging contract or not?

00:00:43.000 --> 00:00:48.000
<v Ines Duarte>What else could you even do with a harbour that size?

00:00:49.000 --> 00:00:54.000
<v Tomas Reyes>Because we decided that last year, the levy stays.

00:00:55.000 --> 00:01:00.000
<v Tomas Reyes>I'll mail you the audited levy accounts by Thursday.

00:01:01.000 --> 00:01:06.000
<v Ines Duarte>Tomas, please circulate the dredging tender to the committee.

00:01:07.000 --> 00:01:12.000
<v Tomas Reyes>So we've agreed to postpone the harbour levy rather than cut it.
"""

_WORKSHOP_TXT = """Anouk Visser: Okay, I'll grab a marker.
Bram Hol: I'm gonna explain the wireframe now.
Anouk Visser: I'll put this sketch aside so you can see the board.
Bram Hol: Can you make a remote out of rubber?
Anouk Visser: I'll write up the usability findings for Lotte.
Bram Hol: Let me put together the component list.
Anouk Visser: Can you check the battery quote?
Bram Hol: We're going with the curved case rather than the flat one.
"""


def test_spoken_meeting_keeps_only_explicit_items(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    folder = tmp_path / "meetings"
    folder.mkdir()
    (folder / "2026-05-04 Council session.vtt").write_text(_COUNCIL_VTT, encoding="utf-8")
    (folder / "2026-05-05 Remote workshop.txt").write_text(_WORKSHOP_TXT, encoding="utf-8")
    _sync(root, "meetings", folder)

    _, text, items, _ = _extract(root, "meetings", "harbour levy")
    got = sorted((i.kind, i.who.name if i.who else None, i.text) for i in items)
    assert got == [
        ("ask", "Ines Duarte",
         "Tomas, please circulate the dredging tender to the committee."),
        ("commitment", "Tomas Reyes",
         "I'll mail you the audited levy accounts by Thursday."),
        ("decision", "Tomas Reyes",
         "So we've agreed to postpone the harbour levy rather than cut it."),
    ]  # procedure, rhetoric, the talk, hopes, a question and a reason yield nothing
    promise = _only(items, "audited levy")
    assert promise.due == "2026-05-07" and promise.line == _line(text, "audited levy")
    assert [p.name for p in _only(items, "dredging tender").to] == ["Tomas Reyes"]
    assert _only(items, "postpone").rejected

    _, text, items, _ = _extract(root, "meetings", "usability findings")
    got = sorted((i.kind, i.who.name if i.who else None, i.text) for i in items)
    assert got == [
        ("ask", "Anouk Visser", "Can you check the battery quote?"),
        ("commitment", "Anouk Visser", "I'll write up the usability findings for Lotte."),
        ("commitment", "Bram Hol", "Let me put together the component list."),
        ("decision", "Bram Hol",
         "We're going with the curved case rather than the flat one."),
    ]  # "I'll grab a marker", "put this sketch aside", "explain … now", a generic-"you"
    #    question: moves in the room, not action items
