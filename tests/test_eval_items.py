"""`kenning eval items`: the scorer's matching math on a known small case.

The sources are real (a hand-written mbox synced by Kenning's own email connector into a real
vault); the *predictions* are written by hand here — a test double of the extractor's output,
used only in this, the scorer's own unit test, to check the matching and the counts on inputs
whose right answer is known. The real extractor (kenning.builder.items) is run by
``kenning eval items`` on corpora from bench/items_corpus.py; its numbers are in
docs/benchmarks.md, not asserted here.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.builder.items.model import Item, Party
from kenning.cli import main
from kenning.evaluate import items as ev
from kenning.sources import email as email_connector
from kenning.vault.layout import init_vault

DANA = Party("Dana Okafor", "dana@fernhill.test", owner=True)
PRIYA = Party("Priya Nair", "priya@acme.test")

MBOX = """\
From dana@fernhill.test Mon Mar 03 09:00:00 2025
From: Dana Okafor <dana@fernhill.test>
To: Priya Nair <priya@acme.test>
Subject: Pricing
Date: Mon, 03 Mar 2025 09:00:00 +0100
Message-ID: <m1@fernhill.test>
Content-Type: text/plain; charset=utf-8

Hi Priya,

Thanks for the call. I'll send the pricing sheet by Thursday.
Could you forward the signed NDA?
If the budget gets approved, I would draft the plan.

Best,
Dana

From priya@acme.test Tue Mar 04 10:00:00 2025
From: Priya Nair <priya@acme.test>
To: Dana Okafor <dana@fernhill.test>
Subject: Re: Pricing
Date: Tue, 04 Mar 2025 10:00:00 +0000
Message-ID: <m2@acme.test>
In-Reply-To: <m1@fernhill.test>
References: <m1@fernhill.test>
Content-Type: text/plain; charset=utf-8

We've settled on Stripe rather than Adyen.
Should we move billing to Adyen?

On Mon, 3 Mar 2025, Dana Okafor <dana@fernhill.test> wrote:
> I'll send the pricing sheet by Thursday.

From dana@fernhill.test Wed Mar 05 11:00:00 2025
From: Dana Okafor <dana@fernhill.test>
To: Priya Nair <priya@acme.test>
Subject: Re: Pricing
Date: Wed, 05 Mar 2025 11:00:00 +0100
Message-ID: <m3@fernhill.test>
In-Reply-To: <m2@acme.test>
References: <m1@fernhill.test> <m2@acme.test>
Content-Type: text/plain; charset=utf-8

Here's the pricing sheet, as promised.

"""

PRIYA_GOLD = {"name": "Priya Nair", "email": "priya@acme.test", "owner": False}
DANA_GOLD = {"name": "Dana Okafor", "email": "dana@fernhill.test", "owner": True}
LABELS = {
    "format": 1, "seed": 0, "split": "unit",
    "messages": {"m1@fernhill.test": {"header": "2025-03-03 09:00 +01:00",
                                      "from": "dana@fernhill.test"},
                 "m2@acme.test": {"header": "2025-03-04 10:00 +00:00", "from": "priya@acme.test"},
                 "m3@fernhill.test": {"header": "2025-03-05 11:00 +01:00",
                                      "from": "dana@fernhill.test"}},
    "items": [
        {"id": "g1", "kind": "commitment", "source": "email:m1@fernhill.test",
         "text": "I'll send the pricing sheet by Thursday.", "who": DANA_GOLD,
         "to": [PRIYA_GOLD], "due": "2025-03-06", "status": "done",
         "closed_by": {"source": "email:m3@fernhill.test",
                       "text": "Here's the pricing sheet, as promised."},
         "rejected": [], "repeats": []},
        {"id": "g2", "kind": "ask", "source": "email:m1@fernhill.test",
         "text": "Could you forward the signed NDA?", "who": DANA_GOLD, "to": [PRIYA_GOLD],
         "due": None, "status": "done",
         "closed_by": {"source": "email:m2@acme.test", "text": None}, "repeats": []},
        {"id": "g3", "kind": "decision", "source": "email:m2@acme.test",
         "text": "We've settled on Stripe rather than Adyen.", "who": PRIYA_GOLD, "to": [],
         "due": None, "status": "decided", "rejected": ["Adyen"], "repeats": []},
    ],
    "distractors": [
        {"id": "d1", "trap": "hypothetical", "source": "email:m1@fernhill.test",
         "text": "If the budget gets approved, I would draft the plan."},
        {"id": "d2", "trap": "open_question", "source": "email:m2@acme.test",
         "text": "Should we move billing to Adyen?"},
        {"id": "d3", "trap": "quoted", "source": "email:m2@acme.test",
         "text": "I'll send the pricing sheet by Thursday."},
    ],
}


@pytest.fixture()
def vault(tmp_path):
    root, _ = init_vault(tmp_path / "v")
    (tmp_path / "mail.mbox").write_text(MBOX, encoding="utf-8")
    email_connector.sync(root, str(tmp_path / "mail.mbox"))
    (root / "labels.json").write_text(json.dumps(LABELS), encoding="utf-8")
    return root


def _item(kind, span, who, **kw):
    return Item(kind=kind, text=kw.pop("text", "x"), source=span.path, line=span.line,
                end=span.end, date=None, who=who, **kw)


def test_locator_finds_each_sentence_in_its_message(vault):
    located = ev.locate_all(vault, LABELS)
    assert located.problems == {}
    path = located.spans["g1"].path
    lines = (vault / path).read_text(encoding="utf-8").splitlines()
    for key, text in (("g1", "I'll send the pricing sheet by Thursday."),
                      ("g3", "We've settled on Stripe rather than Adyen."),
                      ("g1:closed", "Here's the pricing sheet, as promised."),
                      ("d1", "If the budget gets approved")):
        assert text in lines[located.spans[key].line - 1]
    # the ask's answer is the whole of Priya's message, header line included
    closed = located.spans["g2:closed"]
    assert lines[closed.line - 1].startswith("## 2025-03-04 10:00 +00:00 · Priya Nair")
    assert closed.end < located.spans["g1:closed"].line
    assert "d3" not in located.spans          # the quoted reply is not rendered


def test_scores_on_a_known_case(vault):
    located = ev.locate_all(vault, LABELS)
    s = located.spans
    closed = s["g1:closed"]
    predicted = [
        _item("commitment", s["g1"], DANA, to=(PRIYA,), due="2025-03-06", status="done",
              closed_by=f"{closed.path[:-3]}#L{closed.line}"),          # all right
        _item("ask", s["g2"], DANA, to=(PRIYA,)),                      # status wrong (open)
        _item("commitment", s["d1"], DANA),                            # a distractor
        _item("decision", s["g3"], Party("Priya"), status="decided"),  # rejected missing
        _item("decision", s["g3"], PRIYA, status="decided", rejected=("Adyen",)),
    ]
    r = ev.score(LABELS, located, predicted, sources=1)
    k = r.kinds
    assert (k["commitment"].gold, k["commitment"].predicted, k["commitment"].matched) == (1, 2, 1)
    assert (k["commitment"].precision, k["commitment"].recall) == (0.5, 1.0)
    assert (k["ask"].precision, k["ask"].recall) == (1.0, 1.0)
    assert (k["decision"].predicted, k["decision"].matched) == (2, 1)
    assert abs(k["decision"].f1 - 2 / 3) < 1e-9
    assert r.attributes["who"] == [3, 3]          # "Priya" alone names Priya Nair
    assert r.attributes["due"] == [3, 3]
    assert r.attributes["status"] == [2, 3]
    assert r.attributes["to"] == [2, 2]
    assert r.attributes["closed_by"] == [1, 1]
    # the two decisions on one line: the one matched is the first by distance, then order
    assert r.attributes["rejected"] == [0, 1]
    assert r.distractors == {"hypothetical": [1, 1], "open_question": [0, 1]}
    assert r.absent_distractors == 1
    assert r.kind_confusions == 0
    report = ev.format_report(r)
    assert "commitment" in report and "0.500" in report
    assert "hypothetical 1/1" in report


def test_nothing_predicted_and_wrong_kind(vault):
    located = ev.locate_all(vault, LABELS)
    r = ev.score(LABELS, located, [])
    assert all(k.recall == 0.0 and k.precision == 1.0 for k in r.kinds.values())
    r = ev.score(LABELS, located, [_item("commitment", located.spans["g2"], DANA)])
    assert r.kinds["ask"].matched == 0 and r.kinds["commitment"].matched == 0
    assert r.kind_confusions == 1


def test_party_and_rejected_rules():
    gold = {"name": "Zoë Müller", "email": "zoe@acme.test", "owner": False,
            "as_written": "Zoë"}
    assert ev.party_matches(Party(None, "zoe@acme.test"), gold)
    assert ev.party_matches(Party("Zoe Muller"), gold)
    assert ev.party_matches(Party("zoë"), gold)
    assert not ev.party_matches(Party("Zoë Weber"), gold)
    assert not ev.party_matches(None, gold)
    assert ev.party_matches(Party("me", owner=True), DANA_GOLD)
    assert ev.rejected_match(["going with Adyen"], ["Adyen"])
    assert not ev.rejected_match(["Adyen", "Mollie"], ["Adyen"])
    assert ev.rejected_match([], [])


def _gen():
    path = Path(__file__).resolve().parents[1] / "bench" / "items_corpus.py"
    spec = importlib.util.spec_from_file_location("items_corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["items_corpus"] = module
    spec.loader.exec_module(module)
    return module


def test_cli_on_a_generated_corpus_with_gold_as_predictions(tmp_path, monkeypatch):
    """Predictions made from the gold itself (the test double) must score 1.0 everywhere; the
    real extractor is not involved."""
    root = tmp_path / "c"
    labels = _gen().generate(root, seed=3, split="train", threads=6, meetings=1, chats=1)
    located = ev.locate_all(root, labels)

    def party(p):
        return Party(p["name"], p.get("email"), bool(p.get("owner")))

    def perfect(path, progress=None):
        out = []
        for g in labels["items"]:
            span = located.spans[g["id"]]
            closed = located.spans.get(f"{g['id']}:closed")
            out.append(Item(
                kind=g["kind"], text=g["text"], source=span.path, line=span.line, end=span.end,
                date=g["date"], who=party(g["who"]), to=tuple(party(t) for t in g["to"]),
                due=g["due"], status=g["status"], rejected=tuple(g["rejected"]),
                about=tuple(g["about"]), because=g.get("because"),
                closed_by=(f"{closed.path[:-3]}#L{closed.line}-L{closed.end}"
                           if closed else None)))
        return out, 1, []

    monkeypatch.setattr(ev, "extract_vault", perfect)
    result = CliRunner().invoke(main, ["eval", "items", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["all"]["precision"] == 1.0 and data["all"]["recall"] == 1.0
    assert data["all"]["gold"] == len(labels["items"])
    assert all(a["accuracy"] in (1.0, None) for a in data["attributes"].values())
    assert sum(d["produced_item"] for d in data["distractors"].values()) == 0
    text = CliRunner().invoke(main, ["eval", "items", str(root)]).output
    assert "Items: split train, seed 3" in text


def test_cli_names_a_folder_without_labels(tmp_path):
    result = CliRunner().invoke(main, ["eval", "items", str(tmp_path)])
    assert result.exit_code != 0
    assert "labels.json" in result.output


def test_about_is_scored_only_where_the_gold_names_a_topic(vault):
    located = ev.locate_all(vault, LABELS)
    span = located.spans["g3"]
    r = ev.score(LABELS, located, [_item("decision", span, PRIYA, status="decided",
                                         rejected=("Adyen",))])
    assert r.attributes["about"] == [0, 0]
    labels = json.loads(json.dumps(LABELS))
    labels["items"][2]["about"] = ["the Project Heron"]
    right = _item("decision", span, PRIYA, status="decided", about=("Project Heron",))
    assert ev.score(labels, located, [right]).attributes["about"] == [1, 1]
    wrong = _item("decision", span, PRIYA, status="decided", about=("billing",))
    assert ev.score(labels, located, [wrong]).attributes["about"] == [0, 1]


def test_because_and_channels(vault):
    located = ev.locate_all(vault, LABELS)
    labels = json.loads(json.dumps(LABELS))
    labels["items"][2]["because"] = "the fees are lower"
    labels["items"][2]["channel"] = "email"
    span = located.spans["g3"]
    right = _item("decision", span, PRIYA, status="decided", because="The fees are lower.")
    r = ev.score(labels, located, [right])
    assert r.attributes["because"] == [1, 1]
    assert r.channels == {"?": [0, 2], "email": [1, 1]}
    wrong = _item("decision", span, PRIYA, status="decided", because="fees")
    assert ev.score(labels, located, [wrong]).attributes["because"] == [0, 1]


def test_the_real_extractor_runs_through_the_cli(tmp_path):
    """No thresholds: the real extractor on a small corpus gives a well-formed report whose
    counts add up (its numbers are in docs/benchmarks.md)."""
    pytest.importorskip("kenning.builder.items.extract")
    root = tmp_path / "c"
    labels = _gen().generate(root, seed=5, split="train", threads=6, meetings=2, chats=1)
    result = CliRunner().invoke(main, ["eval", "items", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["all"]["gold"] == len(labels["items"])
    assert data["sources"] == len(list((root / "sources").rglob("*.md")))
    for k in data["kinds"].values():
        assert k["matched"] <= min(k["gold"], k["predicted"])
    assert sum(c["gold"] for c in data["recall_by_channel"].values()) == data["all"]["gold"]
