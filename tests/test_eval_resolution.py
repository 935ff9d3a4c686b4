"""`kenning eval resolution`: scores on hand-computed examples, the gold matching rules, the corpus
run through the real CLI (with a scripted build), the synthetic generator's gold, the Enron
silver checks, and the bundled sample sources with `kenning demo`."""

from __future__ import annotations

import email
import hashlib
import importlib.util
import json
import mailbox
import sys
from email.policy import default as default_policy
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from kenning.evaluate import resolution as res
from kenning.evaluate.resolution import Gold, Mention

GEN = Path(__file__).resolve().parents[1] / "bench" / "gen_resolution.py"
_spec = importlib.util.spec_from_file_location("gen_resolution", GEN)
gen = importlib.util.module_from_spec(_spec)
sys.modules["gen_resolution"] = gen
_spec.loader.exec_module(gen)

ENRON = Path(__file__).resolve().parents[2] / "shared" / "eval" / "enron"


def mention(source: str, text: str, page: str | None, *, email: str | None = None,
            kind: str = "person", rule: str = "test", index: int = 0) -> Mention:
    return Mention(source, 1, text, kind, email, page, 1.0, rule, index)


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# -- scores --------------------------------------------------------------------------------------


def test_b_cubed_and_pairwise_on_a_hand_computed_example() -> None:
    # Gold A = {a1, a2, a3}, B = {b1, b2}; predicted P = {a1, a2}, Q = {a3, b1}, b2 unresolved.
    s = res.score_clusters([("A", "P"), ("A", "P"), ("A", "Q"), ("B", "Q"), ("B", "u#5")])
    # B³ precision: (1 + 1 + 1/2 + 1/2 + 1) / 5; recall: (2/3 + 2/3 + 1/3 + 1/2 + 1/2) / 5.
    assert s.b3_precision == pytest.approx(0.8)
    assert s.b3_recall == pytest.approx(8 / 15)
    assert s.b3_f1 == pytest.approx(2 * 0.8 * (8 / 15) / (0.8 + 8 / 15))
    # Pairs: same predicted {a1a2, a3b1} = 2, same gold {a1a2, a1a3, a2a3, b1b2} = 4, both = 1.
    assert s.pairwise_precision == pytest.approx(0.5)
    assert s.pairwise_recall == pytest.approx(0.25)
    assert (s.mentions, s.gold_entities, s.predicted_clusters) == (5, 2, 3)


def test_perfect_over_merged_and_singleton_clusterings() -> None:
    perfect = res.score_clusters([("A", "p"), ("A", "p"), ("B", "q")])
    assert perfect.b3_f1 == pytest.approx(1.0) and perfect.pairwise_precision == 1.0
    merged = res.score_clusters([("A", "p"), ("A", "p"), ("B", "p"), ("B", "p")])
    assert merged.b3_recall == pytest.approx(1.0) and merged.b3_precision == pytest.approx(0.5)
    assert merged.pairwise_precision == pytest.approx(2 / 6) and merged.pairwise_recall == 1.0
    singles = res.score_clusters([("A", "u1"), ("A", "u2"), ("A", "u3")])
    assert singles.b3_precision == 1.0 and singles.b3_recall == pytest.approx(1 / 3)
    assert singles.pairwise_recall == 0.0 and singles.pairwise_precision == 1.0


def test_unresolved_mentions_are_singletons_in_evaluate() -> None:
    gold = [Gold("t1", "Sarah", "sarah-chen", "person", 1),
            Gold("t1", "sarah@horizon.vc", "sarah-chen", "person", 2)]
    mentions = [mention("sources/email/t1.md", "Sarah", None, index=0),
                mention("sources/email/t1.md", "Sarah", None, index=1),
                mention("sources/email/t1.md", "Sarah Chen", "people/sarah-chen.md",
                        email="sarah@horizon.vc", index=2)]
    result = res.evaluate(gold, mentions, lambda s: {"sources/email/t1.md"})
    assert result.scores.predicted_clusters == 3
    assert result.scores.b3_precision == 1.0
    assert result.scores.b3_recall == pytest.approx(1 / 3)
    assert result.resolved == 1 and result.splits[0].counts["(unresolved)"] == 2


# -- matching ------------------------------------------------------------------------------------


def test_matching_rules_conflicts_and_unmatched_gold() -> None:
    f1, f2 = "sources/email/a.md", "sources/meetings/b.md"
    files = {"<m1@x>": {f1}, "sources/meetings/b.vtt": {f2}}
    gold = [
        Gold("<m1@x>", "robert.smith@globex.test", "bob", "person", 1),
        Gold("<m1@x>", "Smith, Robert", "bob", "person", 2),
        Gold("<m1@x>", "Dr. Kim", "grace", "person", 3),
        Gold("<m1@x>", "Sarah from TechFlow", "sarah-park", "person", 4),
        Gold("<m1@x>", "TechFlow", "techflow", "organization", 5),
        Gold("sources/meetings/b.vtt", "Daniel Kim", "daniel", "person", 6),
        Gold("sources/meetings/b.vtt", "Grace Kim", "grace", "person", 7),
        Gold("sources/meetings/b.vtt", "Never Said", "nobody", "person", 8),
        Gold("<missing@x>", "Ghost", "ghost", None, 9),
    ]
    mentions = [
        # display name is someone else's address: the address rule decides
        mention(f1, "jane@globex.test", "people/robert-smith.md", email="ROBERT.SMITH@globex.test",
                index=0),
        mention(f1, "Robert Smith", "people/robert-smith.md", index=1),  # words: = Smith, Robert
        mention(f1, "kim", "people/grace-kim.md", index=2),  # text, honorific folded
        mention(f1, "Sarah", "people/sarah-park.md", index=3),  # words ⊂ "Sarah from TechFlow"
        mention(f1, "TechFlow", "organizations/techflow.md", kind="organization", index=4),
        mention(f2, "Kim", "people/kim.md", index=5),  # words of two identities: conflict
        mention(f2, "Somebody Else", None, index=6),  # unlabelled
        mention("sources/email/zzz.md", "Sarah", None, index=7),  # a file without gold
    ]
    matching = res.match_mentions(gold, mentions, lambda s: files.get(s, set()))
    labels = {m.index: ident for m, ident in matching.items}
    assert labels == {0: "bob", 1: "bob", 2: "grace", 3: "sarah-park", 4: "techflow"}
    assert matching.rules == {"address": 1, "words": 2, "text": 2}
    assert [(m.index, ids) for m, ids in matching.conflicts] == [(5, ["daniel", "grace"])]
    assert matching.unlabelled == 2
    assert [g.line for g in matching.unmatched] == [6, 7, 8]
    assert [g.line for g in matching.unmapped] == [9]


def test_fold_keeps_diacritics_and_drops_honorifics_and_quotes() -> None:
    assert res.fold("  'Dr.  José   García' ") == "josé garcía"
    assert res.fold("José") != res.fold("Jose")
    assert res.fold("SMITH, Robert.") == "smith, robert"


def test_bad_gold_line_names_the_file_and_line(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / "sources" / "email").mkdir(parents=True)
    (corpus / "gold.jsonl").write_text('{"source": "a", "match": "B", "identity": "x"}\n'
                                       '{"source": "a", "match": 3, "identity": "x"}\n')
    result = CliRunner().invoke(main, ["eval", "resolution", str(corpus)])
    assert result.exit_code == 1
    assert f"{corpus / 'gold.jsonl'}:2: field 'match' must be a non-empty string" in result.output
    result = CliRunner().invoke(main, ["eval", "resolution", str(tmp_path)])
    assert result.exit_code == 2 and "no gold.jsonl" in result.output


def test_bad_mention_log_line_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "mentions.jsonl"
    log.write_text('{"source": "sources/a.md", "text": "A"}\n{oops\n')
    with pytest.raises(res.ResolutionEvalError, match=r"mentions.jsonl:2: invalid JSON"):
        res.read_mentions(log)


# -- a corpus through the real CLI, with a scripted build ------------------------------------------

MBOX = """\
From sarah@horizon.vc Mon Mar 02 09:00:00 2026
From: Sarah Chen <sarah@horizon.vc>
To: Alex Morgan <alex@larkspur.test>
Subject: Term sheet
Date: Mon, 02 Mar 2026 09:00:00 +0000
Message-ID: <ts-1@horizon.vc>

Hi Alex, the term sheet is attached. Bob Smith from Globex will call you.

Sarah

From sarah.park@techflow.io Tue Mar 03 09:00:00 2026
From: "Park, Sarah" <sarah.park@techflow.io>
To: Alex Morgan <alex@larkspur.test>
Subject: Pilot
Date: Tue, 03 Mar 2026 09:00:00 +0000
Message-ID: <pilot-1@techflow.io>

Hi Alex, the pilot starts Monday.

Sarah

"""
RAW = """\
---
type: source
kind: chat
title: Standup
source_id: raw:standup-1
---
# Standup

- **Bob** (10:00): I talked to Sarah Chen about the round.
"""


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    (corpus / "sources" / "email").mkdir(parents=True)
    (corpus / "sources" / "email" / "box.mbox").write_text(MBOX)
    (corpus / "sources" / "raw" / "chats").mkdir(parents=True)
    (corpus / "sources" / "raw" / "chats" / "standup.md").write_text(RAW)
    (corpus / "config.yaml").write_text("owner:\n  emails: [alex@larkspur.test]\n")
    gold = [
        {"source": "<ts-1@horizon.vc>", "match": "sarah@horizon.vc", "identity": "sarah-chen"},
        {"source": "ts-1@horizon.vc", "match": "Sarah", "identity": "sarah-chen"},
        {"source": "<ts-1@horizon.vc>", "match": "Bob Smith", "identity": "bob"},
        {"source": "<pilot-1@techflow.io>", "match": "sarah.park@techflow.io",
         "identity": "sarah-park"},
        {"source": "<pilot-1@techflow.io>", "match": "Sarah", "identity": "sarah-park"},
        {"source": "sources/raw/chats/standup.md", "match": "Bob", "identity": "bob"},
        {"source": "raw:standup-1", "match": "Sarah Chen", "identity": "sarah-chen"},
        {"source": "<pilot-1@techflow.io>", "match": "Nobody", "identity": "nobody"},
    ]
    (corpus / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    return corpus


def _scripted_build(root: Path, batch_size: int = 50) -> None:
    """Stands in for kenning.builder: a log where the first-name "Sarah" of the TechFlow thread is
    wrongly put on Sarah Chen's page and "Bob" in the chat stays unresolved."""
    emails = {p.read_text().split("title: ", 1)[1].split("\n", 1)[0]: p.relative_to(root)
              .as_posix() for p in (root / "sources" / "email").glob("*.md")}
    assert (root / ".kenning" / "config.yaml").read_text().count("alex@larkspur.test") == 1
    term, pilot = emails["Term sheet"], emails["Pilot"]
    chat = "sources/chats/standup.md"
    assert (root / chat).is_file()
    chen, park, bob = "people/sarah-chen.md", "people/sarah-park.md", "people/bob-smith.md"
    rows = [
        (term, "Sarah Chen", "sarah@horizon.vc", chen), (term, "Sarah", None, chen),
        (term, "Bob Smith", None, bob), (pilot, "Park, Sarah", "sarah.park@techflow.io", park),
        (pilot, "Sarah", None, chen), (chat, "Bob", None, None), (chat, "Sarah Chen", None, chen),
        (term, "Globex", None, "organizations/globex.md"),
    ]
    log = root / ".kenning" / "build" / "mentions.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps({"source": s, "line": 1, "text": t, "kind": "person",
                                       "email": e, "page": p, "confidence": 0.9,
                                       "rule": "scripted", "candidates": []}) + "\n"
                           for s, t, e, p in rows))


def test_eval_resolution_cli_on_a_small_corpus(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(res, "_import_build", lambda: _scripted_build)
    corpus = _corpus(tmp_path)
    before = snapshot(corpus)
    result = CliRunner().invoke(main, ["eval", "resolution", str(corpus), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # Labelled: 7 mentions (Globex is unlabelled); gold sarah-chen ×4 (one of them the Park
    # "Sarah"… no: that one is labelled sarah-park), clusters chen {4 chen + 1 park}, park {1},
    # bob {1}, unresolved {1}.
    s = data["scores"]
    assert s["mentions"] == 7 and s["gold_entities"] == 3 and s["predicted_clusters"] == 4
    # B³ precision: chen page holds 3 chen + 1 park → 3 × 3/4 + 1/4; park 1; bob 1; unres 1.
    assert s["b3_precision"] == pytest.approx((3 * 0.75 + 0.25 + 1 + 1 + 1) / 7)
    # B³ recall: chen 3/3 ×3; park: each of 2 park mentions sees 1 of 2; bob: 1/2 ×2.
    assert s["b3_recall"] == pytest.approx((3 * 1 + 0.5 + 0.5 + 0.5 + 0.5) / 7)
    assert s["pairwise_precision"] == pytest.approx(3 / 6)
    assert s["pairwise_recall"] == pytest.approx(3 / 5)
    assert data["unmatched_gold"] == 1 and data["unlabelled"] == 1
    assert data["merges"][0]["name"] == "people/sarah-chen.md"
    assert data["merges"][0]["counts"] == {"sarah-chen": 3, "sarah-park": 1}
    assert snapshot(corpus) == before  # nothing written in the corpus
    text = CliRunner().invoke(main, ["eval", "resolution", str(corpus)]).output
    assert "B-cubed" in text and "wrong merges" in text and "people/sarah-chen.md" in text


def test_workdir_keeps_the_vault_and_must_be_empty(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(res, "_import_build", lambda: _scripted_build)
    corpus, work = _corpus(tmp_path), tmp_path / "work"
    result = res.run_resolution(corpus, workdir=work)
    assert result.vault == str(work) and (work / res.MENTIONS).is_file()
    with pytest.raises(res.ResolutionEvalError, match="must be empty"):
        res.run_resolution(corpus, workdir=work)


# -- the synthetic generator ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "corpus"
    gen.generate(out, seed=12, people=30)
    return out


def _decoded_email_sources(mbox_path: Path) -> dict[str, str]:
    """Thread root Message-ID → every address, display name and body text of the thread."""
    texts: dict[str, list[str]] = {}
    for raw in mailbox.mbox(str(mbox_path)):
        msg = email.message_from_bytes(raw.as_bytes(), policy=default_policy)
        refs = (msg["References"] or "").split()
        root = refs[0] if refs else msg["Message-ID"]
        parts = texts.setdefault(root, [])
        for key in ("From", "To", "Cc"):
            if msg[key] is None:
                continue
            for addr in msg[key].addresses:
                parts += [addr.addr_spec, addr.display_name]
        parts.append(msg.get_content())
    return {k: "\n".join(v) for k, v in texts.items()}


def test_generator_gold_appears_in_the_inputs(synthetic: Path) -> None:
    emails = _decoded_email_sources(synthetic / "sources" / "email" / "mail.mbox")
    gold = res.load_gold(synthetic / "gold.jsonl")
    assert len(gold) > 300
    for g in gold:
        if g.source.startswith("<"):
            text = emails[g.source]
        else:
            text = (synthetic / g.source).read_text(encoding="utf-8")
            if g.source.endswith(".json"):
                data = json.loads(text)
                text = "\n".join([*data["participants"],
                                  *(f"{m['speaker']}\n{m['text']}" for m in data["messages"])])
        assert g.match in text, f"gold.jsonl:{g.line}: {g.match!r} not in {g.source}"
    # Per source, one folded form names one identity.
    seen: dict[tuple[str, str], str] = {}
    for g in gold:
        key = (g.source, res.fold(g.match))
        assert seen.setdefault(key, g.identity) == g.identity, g


def test_generator_plants_the_hard_cases(synthetic: Path) -> None:
    gold = res.load_gold(synthetic / "gold.jsonl")
    by_ident: dict[str, set[str]] = {}
    for g in gold:
        by_ident.setdefault(g.identity, set()).add(g.match)
    # One first name, two people, each called just "Sarah" somewhere.
    assert "Sarah" in by_ident["person:sarah-chen"] and "Sarah" in by_ident["person:sarah-park"]
    # Robert Smith moves from Globex to Initech: two addresses, one identity.
    bob = by_ident["person:robert-smith"]
    assert {"robert.smith@globex.test", "bob@initech.test"} <= bob
    assert bob & {"Bob Smith", "R. Smith", "Bob", "Robert Smith (Globex Corporation)",
                  "Robert from Globex"}
    # Organization aliases and a look-alike that is never called "Horizon" alone.
    assert len(by_ident["org:horizon-ventures"]) >= 2
    assert "Horizon" not in by_ident.get("org:horizon-health", set())
    mbox = (synthetic / "sources" / "email" / "mail.mbox").read_text(encoding="utf-8")
    assert "List-Unsubscribe:" in mbox and "Precedence: bulk" in mbox
    assert '"Smith, Robert"' in mbox or '"Garcia, José"' in mbox or ', ' in mbox
    assert any(i.startswith("noise:") for i in by_ident)
    # German transliteration, a family-name-first name, a domain that is not the name, and
    # "Role | Organization" signature lines.
    weiss = by_ident["person:jurgen-weiss"]
    assert "Juergen Weiss" in weiss and any("Jürgen Weiß" in f for f in weiss)
    assert "山田 花子" in by_ident["person:yamada-hanako"]
    assert "Kitebird Corp" in by_ident["org:kitebird"]
    assert any(f" | {o}" in mbox or f" / {o}" in mbox for o in ("Globex Corporation",
                                                               "Kitebird Corp", "TechFlow"))
    manifest = json.loads((synthetic / "manifest.json").read_text())
    assert "Sarah" in manifest["shared_first_names"] and "Kim" in manifest["shared_last_names"]
    assert manifest["gold_lines"] == len(gold)


def test_generator_is_deterministic_for_a_seed(tmp_path: Path, synthetic: Path) -> None:
    again = tmp_path / "again"
    gen.generate(again, seed=12, people=30)
    assert snapshot(again) == snapshot(synthetic)
    other = tmp_path / "other"
    gen.generate(other, seed=11, people=30)
    assert snapshot(other)["gold.jsonl"] != snapshot(synthetic)["gold.jsonl"]


def test_every_generated_gold_source_maps_to_one_synced_file(tmp_path: Path,
                                                             synthetic: Path) -> None:
    root = tmp_path / "v"
    res._new_vault(root, synthetic / "config.yaml")
    produced, warnings = res.sync_inputs(synthetic, root)
    assert warnings == []
    files_of = res.file_resolver(produced, res.source_keys(root))
    gold = res.load_gold(synthetic / "gold.jsonl")
    assert {len(files_of(g.source)) for g in gold} == {1}


# -- Enron silver ----------------------------------------------------------------------------------


def test_silver_names_normalise_enron_display_forms() -> None:
    assert res.silver_names(["Kean, Steven J"]) == {"steven kean"}
    assert res.silver_names(["'Andy Brown (E-mail)'"]) == {"andy brown"}
    assert res.silver_names(["Mark Whitt/DEN/ECT@ENRON"]) == {"mark whitt"}
    assert res.silver_names(["bhansen@lhom.com", "'Black"]) == set()


def test_silver_checks_on_a_hand_written_log() -> None:
    silver = {
        "alan.comnes@enron.com": {"Alan Comnes": 32, "Comnes, Alan": 10},
        "benjamin.rogers@enron.com": {"Benjamin Rogers": 3, "'Ben Rogers'": 1},
        "ben.rogers@gmail.com": {"Ben Rogers": 1},
        "jeff.dasovich@enron.com": {"Jeff Dasovich": 5, "Dasovich, Jeff": 2},
        "sue.mara@enron.com": {"Susan J Mara": 4},
        "list@caiso.com": {"list@caiso.com": 3},
    }
    rows = [("alan.comnes@enron.com", "people/alan-comnes.md"),
            ("alan.comnes@enron.com", "people/alan-comnes.md"),
            ("benjamin.rogers@enron.com", "people/ben-rogers.md"),
            ("ben.rogers@gmail.com", "people/ben-rogers.md"),  # same person: no violation
            ("jeff.dasovich@enron.com", "people/jeff-dasovich.md"),
            ("jeff.dasovich@enron.com", "people/jeff.md"),  # scattered
            ("sue.mara@enron.com", "people/jeff-dasovich.md"),  # two people on one page
            ("list@caiso.com", "people/jeff-dasovich.md")]  # no name: not compared
    mentions = [mention("sources/email/x.md", a, p, email=a, index=i)
                for i, (a, p) in enumerate(rows)]
    result = res.check_silver(silver, mentions)
    assert (result.multi_form, result.multi_form_logged, result.consistent) == (3, 3, 2)
    assert result.consistent_share == pytest.approx(2 / 3)
    assert [s["address"] for s in result.scattered] == ["jeff.dasovich@enron.com"]
    assert result.violation_count == 1 and result.multi_address_pages == 2
    assert result.violations[0]["page"] == "people/jeff-dasovich.md"
    assert result.violations[0]["pairs"] == [["jeff.dasovich@enron.com", "sue.mara@enron.com"]]


def test_the_enron_folder_is_recognised_as_a_silver_set(tmp_path: Path) -> None:
    # The full Enron run is a benchmark (bench/build_enron.py), not a unit test.
    if not ENRON.is_dir():
        pytest.skip("../shared/eval/enron is absent")
    assert res.is_silver(ENRON) and not res.is_corpus(ENRON)


# -- sample sources and the demo -------------------------------------------------------------------


def test_sample_sources_are_well_formed() -> None:
    from kenning.sample.sources import sample_sources_path

    base = sample_sources_path()
    box = mailbox.mbox(str(base / "email" / "kestrel.mbox"))
    messages = [email.message_from_bytes(m.as_bytes(), policy=default_policy) for m in box]
    assert len(messages) == 13
    assert len({m["Message-ID"] for m in messages}) == 13
    bulk = [m for m in messages if m["List-Unsubscribe"]]
    assert len(bulk) == 1 and bulk[0]["Precedence"] == "bulk"
    hannah = next(m for m in messages if m["From"].addresses[0].display_name == "Hannah Berg")
    assert "Head of Developer Productivity\nNorthwind Freight GmbH" in hannah.get_content()
    chat = json.loads((base / "chats" / "2026-10-20-board-prep.json").read_text())
    assert {"id", "title", "messages"} <= chat.keys()
    assert all({"speaker", "text", "timestamp"} <= m.keys() for m in chat["messages"])
    assert (base / "meetings" / "2026-10-07 Replay cache review.vtt").read_text().startswith(
        "WEBVTT")


def test_demo_runs_the_pipeline_and_prints_cited_answers(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", str(target)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Set the vault owner to Maya Okafor" in out
    assert "email: read 13; 6 new source file(s)" in out
    assert "meetings: read 1; 1 new source file(s)" in out
    assert "chats: read 5; 1 new source file(s)" in out
    assert "$ kenning recall 'who is Sarah?'" in out and "Sarah Chen (person)" in out
    assert "people/Sarah Chen.md#L" in out
    assert "$ kenning search 'what did we decide about caching?'" in out
    assert "decisions/In-process caching for the Replay API.md#L" in out
    assert "owner:" in (target / ".kenning" / "config.yaml").read_text()
    assert "Created " in out and "people/Hannah Berg.md" in out
    again = CliRunner().invoke(main, ["demo", str(target)]).output
    assert "Using the existing demo vault" in again and "0 new source file(s)" in again
    assert "Set the vault owner" not in again
