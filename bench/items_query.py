"""`kenning items` on a large vault: ~10,000 item lines across person and meeting pages.

Generates a vault with a fixed seed (people, meetings; commitments, asks and decisions in the
docs/vault-format.md §6b format, a share of them written on two pages under one block id, a
share of hand-written action items naming people by first name), indexes it, then times the
query behind `kenning items --json` in one warm process (Vault.items + the JSON the CLI
prints): the median and p95 of repeated runs, for no filter and for the common filters.

    .venv/bin/python bench/items_query.py                  # 10,000 item lines, 25 runs each
    .venv/bin/python bench/items_query.py --items 2000 --runs 10
    .venv/bin/python bench/items_query.py --postgres       # on PostgreSQL (tests/pg_harness.py)
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault

FIRST = ["Sarah", "Priya", "Peter", "Jonas", "Marta", "Liam", "Noor", "Kenji", "Ana", "Omar",
         "Ines", "Tariq", "Yuki", "Elena", "Ravi", "Chloe", "Mateo", "Aisha", "Lars", "Zoe"]
LAST = ["Chen", "Raman", "Lindqvist", "Weber", "Kowalski", "Byrne", "Haddad", "Sato", "Silva",
        "Farouk", "Moreau", "Iqbal", "Tanaka", "Petrova", "Gupta", "Dubois", "Rossi", "Khan",
        "Nilsson", "Okafor"]
VERBS = ["send", "review", "draft", "share", "schedule", "benchmark", "write up", "forward",
         "confirm", "book", "update", "summarise"]
THINGS = ["the revised deck", "the pilot report", "the cache numbers", "the signed NDA",
          "the term sheet", "the runbook", "the hiring plan", "the Q3 budget", "the roadmap",
          "the onboarding notes", "the vendor quote", "the incident review"]


def day(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def generate(root: Path, n_items: int, seed: int = 42) -> int:
    rng = random.Random(seed)
    people = sorted({f"{f} {ln}" for f in FIRST for ln in LAST})[:300]
    person_lines: dict[str, list[str]] = {p: [] for p in people}
    meetings: list[tuple[str, str, list[str]]] = []
    written = 0
    m = 0
    while written < n_items:
        m += 1
        date = day(rng)
        attendees = rng.sample(people, 3)
        lines: list[str] = []
        for _ in range(rng.randint(4, 10)):
            kind = rng.random()
            who = rng.choice(["me", *attendees])
            to = rng.choice([a for a in attendees if a != who] or attendees)
            whof = "me" if who == "me" else f"[[{who}]]"
            text = f"{rng.choice(VERBS).capitalize()} {rng.choice(THINGS)} ({m}-{len(lines)})"
            due = f" [due:: {day(rng)}]" if rng.random() < 0.6 else ""
            box = "[x]" if rng.random() < 0.3 else "[ ]"
            if kind < 0.15:  # a decision
                lines.append(f"- {date} — Go with option {m}-{len(lines)} [who:: {whof}] "
                             f"[because:: cheaper] [rejected:: option B] "
                             f"^i-{rng.getrandbits(32):08x}")
                written += 1
            elif kind < 0.35:  # a hand-written action item naming a first name
                lines.append(f"- {box} {to.split()[0]}: {text}{due}")
                written += 1
            else:  # the build's commitment, on the meeting and on the person's page
                block = f"^i-{rng.getrandbits(32):08x}"
                line = (f"- {box} {date} — {text} [who:: {whof}] [to:: [[{to}]]]{due} "
                        f"[source:: [[sources/email/{date}-m{m}#L{rng.randint(5, 80)}]]] {block}")
                lines.append(line)
                person = who if who != "me" else to
                person_lines[person].append(line)
                written += 2
        meetings.append((date, f"Meeting {m}", lines))
    for person, lines in person_lines.items():
        body = "\n".join(lines)
        (root / "people").mkdir(parents=True, exist_ok=True)
        (root / "people" / f"{person}.md").write_text(
            f"---\ntype: person\n---\n# {person}\n\n## Commitments\n{body}\n", encoding="utf-8")
    (root / "meetings").mkdir(parents=True, exist_ok=True)
    for date, title, lines in meetings:
        decisions = [x for x in lines if " [because:: " in x]
        actions = [x for x in lines if x not in decisions]
        (root / "meetings" / f"{date} {title}.md").write_text(
            f"---\ntype: meeting\ndate: {date}\n---\n# {title}\n\n## Action items\n"
            + "\n".join(actions) + "\n\n## Decisions\n" + "\n".join(decisions) + "\n",
            encoding="utf-8")
    return written


def timed(fn, runs: int) -> tuple[float, float, int]:
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        json.dumps(out, ensure_ascii=False, indent=2, default=str)  # what --json prints
        times.append(time.perf_counter() - start)
        size = len(out)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--postgres", action="store_true",
                    help="index into a PostgreSQL server of its own (tests/pg_harness.py)")
    args = ap.parse_args()
    if args.postgres:
        import os

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import pg_harness

        with pg_harness.temporary_server(durable=True) as pg:
            os.environ["KENNING_DATABASE_URL"] = pg.url(schema="bench_items")
            run(args)
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kenning-items-"))
    root = args.keep or tmp / "vault"
    if root.exists():
        shutil.rmtree(root)
    vault, _ = Vault.init(root)
    lines = generate(root, args.items)
    start = time.perf_counter()
    vault.index(embed=False)
    index_s = time.perf_counter() - start
    merged = len(vault.items(today="2026-07-01"))
    print(f"vault: {len(list(root.rglob('*.md')))} pages, {lines} item lines, {merged} items "
          f"after merging copies; full index {index_s:.2f} s ({vault.store.backend})")
    from collections import Counter

    everything = vault.items(today="2026-07-01")
    person = Counter(t for i in everything for t in i["to"]
                     if t.startswith("people/")).most_common(1)[0][0]
    some = {"page": person}
    cases = {
        "items --json (all)": {},
        "--who me --status open": {"who": "me", "status": "open"},
        "--overdue": {"overdue": True},
        f"--to '{person}'": {"to": person},
        "--kind decision --since 2026-06-01": {"kind": "decision", "since": "2026-06-01"},
        "--due-before 2026-03-01 --limit 20": {"due_before": "2026-03-01", "limit": 20},
    }
    print("| query | median | p95 | items |\n|---|---|---|---|")
    for label, kw in cases.items():
        med, p95, n = timed(lambda kw=kw: vault.items(today="2026-07-01", **kw), args.runs)
        print(f"| `{label}` | {med * 1000:.1f} ms | {p95 * 1000:.1f} ms | {n} |")
    # An edit: one box checked, then the incremental index (after one run that finds nothing
    # changed, so files written in the same second as the first index are settled).
    vault.index(embed=False)
    page = root / some["page"]
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("- [ ] ", "- [x] ", 1), encoding="utf-8")
    start = time.perf_counter()
    vault.index(embed=False)
    print(f"re-index after checking one box: {time.perf_counter() - start:.3f} s")
    vault.close()
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
