"""Long documents, fixed seed: is planted evidence recalled within a word budget?

One vault holds a 1,000-turn meeting (a plain "Name: text" transcript synced with the meetings
connector), an 80-message email thread (an mbox synced with the email connector), a 20,000-word
note, and short notes that share their vocabulary. Each long document has planted facts: three
consecutive lines (turns, message lines, sentences) of which only the first shares the question's
words; the other two carry the rest of the answer. Every question is asked of the whole vault;
results are packed into word budgets as ``kenning eval qmsum`` packs them (evaluate/budget.py).

    PYTHONPATH=src .venv/bin/python bench/long_docs.py            # lexical; --mode hybrid embeds

Reports, per run (``page``: ``kenning search`` defaults; ``chunk``: ``--group chunk``; ``mcp``:
the MCP tool's defaults, 10 results within 2,000 tokens), evidence hit (any gold line taken) and
evidence recall (share of gold lines taken) at 250 / 500 / 1,000 words, per document kind.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

SEED = 20261201
BUDGETS = (250, 500, 1000)
TOPICS = ("budget roadmap design review launch customer pricing hiring metrics latency storage "
          "backup onboarding release schedule vendor contract warehouse supplier invoice "
          "firmware audit migration dashboard").split()
PEOPLE = ("Priya", "Tomas", "Grace", "Omar")

# (key, question, first line: shares the question's words, two lines of the rest of the answer)
FACTS = {
    "meeting": [
        ("m1", "What did we decide about the warehouse lease in Leeds?",
         "On the warehouse lease in Leeds, we decided not to renew it.",
         "Instead the stock moves to the Bradford site by the end of March.",
         "Grace owns the move and will book the removal firm this week."),
        ("m2", "Why did the firmware audit slip?",
         "The firmware audit slipped because the external auditor fell ill.",
         "They sent a replacement who needs two extra weeks to get up to speed.",
         "So the new sign-off date is the fourteenth of May."),
        ("m3", "Which supplier will make the kestrel enclosures?",
         "For the kestrel enclosures the supplier is Norland Plastics.",
         "They beat the other two quotes by eleven percent.",
         "First batch of five hundred units arrives in June."),
    ],
    "email": [
        ("e1", "What price did the customer accept for the osprey renewal?",
         "The customer accepted the osprey renewal price of 48,000 euros.",
         "That includes the premium support tier for two years.",
         "Legal will send the countersigned order form on Friday."),
        ("e2", "When is the dashboard migration cut-over?",
         "The dashboard migration cut-over is set for Saturday night.",
         "Omar keeps the old system read-only until Monday noon.",
         "Rollback takes about forty minutes if the checks fail."),
    ],
    "note": [
        ("n1", "What is the backup retention policy for invoices?",
         "Backup retention for invoices is seven years on cold storage.",
         "Monthly snapshots are kept for the first year only.",
         "Deletion after that needs a second person to approve."),
        ("n2", "Who approves hiring above the plan?",
         "Hiring above the plan is approved by the finance director.",
         "A request needs a written case with twelve months of cost.",
         "Tomas collects these on the first Monday of each month."),
        ("n3", "What latency target did the onboarding service get?",
         "The onboarding service latency target is 300 milliseconds at p95.",
         "It is measured from the edge, not inside the cluster.",
         "Breaching it three days running opens an incident."),
    ],
}


def filler(rng: random.Random, n: int) -> str:
    """A sentence of topic words (it shares vocabulary with the questions, never the answer)."""
    return " ".join(rng.choice(TOPICS) for _ in range(n)).capitalize() + "."


def write_corpus(folder: Path, rng: random.Random) -> dict[str, Any]:
    """Write the meeting, the mbox and the notes under ``folder``; the planted lines per fact."""
    (folder / "meetings").mkdir(parents=True)
    (folder / "notes").mkdir()
    planted: dict[str, list[str]] = {}
    # The meeting: 1,000 turns; facts at turns ~150, ~520, ~910.
    turns = [f"{PEOPLE[i % 4]}: {filler(rng, rng.randint(8, 25))}" for i in range(1000)]
    for (key, _, *lines), at in zip(FACTS["meeting"], (150, 520, 910), strict=True):
        for j, line in enumerate(lines):
            turns[at + j] = f"{PEOPLE[(at + j) % 4]}: {line}"
        planted[key] = list(lines)
    (folder / "meetings" / "2026-03-02 operations review.txt").write_text(
        "\n\n".join(turns) + "\n", encoding="utf-8")
    # The email thread: 80 messages, one subject, each replying to the one before.
    start = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
    bodies = [[filler(rng, rng.randint(10, 20)) for _ in range(rng.randint(3, 6))]
              for _ in range(80)]
    for (key, _, *lines), at in zip(FACTS["email"], (23, 71), strict=True):
        bodies[at][1:1] = list(lines)
        planted[key] = list(lines)
    mbox = []
    for i, body in enumerate(bodies):
        who = PEOPLE[i % 4]
        headers = [f"From {who.lower()}@example.com {start:%a %b %d %H:%M:%S %Y}",
                   f"From: {who} <{who.lower()}@example.com>", "To: team@example.com",
                   "Subject: Re: osprey account and dashboard plans" if i else
                   "Subject: osprey account and dashboard plans",
                   f"Date: {format_datetime(start + timedelta(hours=5 * i))}",
                   f"Message-ID: <m{i}@example.com>"]
        if i:
            headers.append(f"In-Reply-To: <m{i - 1}@example.com>")
        mbox.append("\n".join(headers) + "\n\n" + "\n".join(body) + "\n")
    (folder / "thread.mbox").write_text("\n".join(mbox), encoding="utf-8")
    # The note: ~20,000 words in 40 sections of paragraphs; facts in sections 6, 22, 37.
    sections = []
    where = {6: FACTS["note"][0], 22: FACTS["note"][1], 37: FACTS["note"][2]}
    for s in range(40):
        paras = [" ".join(filler(rng, rng.randint(10, 18)) for _ in range(4)) for _ in range(8)]
        if s in where:
            key, _, *lines = where[s]
            paras[3:3] = list(lines)  # three consecutive paragraphs
            planted[key] = list(lines)
        sections.append(f"## Section {s + 1}\n\n" + "\n\n".join(paras))
    (folder / "notes" / "handbook.md").write_text("# Operations handbook\n\n"
                                                  + "\n\n".join(sections) + "\n",
                                                  encoding="utf-8")
    for i in range(30):  # short notes that compete on the same words
        (folder / "notes" / f"memo-{i}.md").write_text(
            f"# Memo {i}\n\n{filler(rng, 20)}\n\n{filler(rng, 20)}\n", encoding="utf-8")
    return planted


def gold_lines(root: Path, planted: dict[str, list[str]]) -> dict[str, set[tuple[str, int]]]:
    """Each fact's lines in the vault files, found by their text (one file per fact)."""
    out: dict[str, set[tuple[str, int]]] = {}
    files = [p for p in root.rglob("*.md") if ".kenning" not in p.parts]
    for key, lines in planted.items():
        found: set[tuple[str, int]] = set()
        for path in files:
            text = path.read_text(encoding="utf-8").split("\n")
            for n, line in enumerate(text, 1):
                if any(planted_line in line for planted_line in lines):
                    found.add((path.relative_to(root).as_posix(), n))
        if not found:
            raise SystemExit(f"fact {key}: its lines were not found in the vault")
        out[key] = found
    return out


def main() -> None:
    """Build the corpus, index it, ask every question, print hit and recall per run."""
    from kenning.api import Vault
    from kenning.evaluate.budget import LineWords, pack_lines
    from kenning.sources import meetings

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="lexical", choices=("lexical", "hybrid", "dense"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="kenning-long-") as tmp:
        base = Path(tmp)
        planted = write_corpus(base / "in", rng)
        vault, _ = Vault.init(base / "vault")
        meetings.sync(vault.root, base / "in" / "meetings")
        from kenning.sources import email as mail

        mail.sync(vault.root, str(base / "in" / "thread.mbox"))
        target = vault.root / "notes"
        target.mkdir(exist_ok=True)
        for note in (base / "in" / "notes").iterdir():
            (target / note.name).write_text(note.read_text(encoding="utf-8"), encoding="utf-8")
        vault.index(embed=args.mode != "lexical")
        gold = gold_lines(vault.root, planted)
        words = LineWords(vault.root)
        runs = {"page": lambda q: vault.search(q, mode=args.mode),
                "chunk": lambda q: vault.search(q, mode=args.mode, group="chunk", limit=100),
                "mcp": lambda q: vault.search(q, mode=args.mode, limit=10, budget=2000)}
        scores: dict[str, dict[str, dict[int, list[float]]]] = {}
        for kind, facts in FACTS.items():
            for key, question, *_ in facts:
                for run, ask in runs.items():
                    results = list(ask(question))
                    for b in BUDGETS:
                        taken = set(pack_lines(results, b, words))
                        inside = len(gold[key] & taken)
                        cell = scores.setdefault(run, {}).setdefault(kind, {})
                        cell.setdefault(b, []).append(inside / len(gold[key]))
        vault.close()
    out = {run: {kind: {b: {"hit": sum(v > 0 for v in vals) / len(vals),
                            "recall": sum(vals) / len(vals)} for b, vals in per.items()}
                 for kind, per in kinds.items()} for run, kinds in scores.items()}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"mode {args.mode}; hit / recall at {', '.join(map(str, BUDGETS))} words")
    for run, kinds in out.items():
        for kind, per in kinds.items():
            cells = "  ".join(f"{per[b]['hit']:.2f}/{per[b]['recall']:.2f}" for b in BUDGETS)
            print(f"{run:6s} {kind:8s} {cells}")


if __name__ == "__main__":
    main()
