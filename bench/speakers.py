"""Benchmark: speaker labels — turns under their own speaker, speakers who are attendees.

Usage: .venv/bin/python bench/speakers.py FOLDER [FOLDER …]

A folder holds WebVTT files as Zoom writes them (every cue starts with its speaker's label,
``Name: text``; the label is the truth) or QMSum JSON files (``meeting_transcripts`` with
``speaker``). A turn counts as its own speaker's when its speaker is the label's person (the
name is in the label, or the label in the name, compared folded: ``jo-smith`` is Jo Smith) and
its text does not start with the label; a speaker counts as an attendee when the source's
``attendees`` name them. Labels that are nobody ("Zoom user", "Speaker 2") are not counted as
speakers. Public Zoom transcripts: ``ethereum/pm`` ``.github/ACDbot/artifacts/*/transcript.vtt``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

from kenning.sources.meetings import _GENERIC, build_doc
from kenning.sources.meetings.parse import UNKNOWN, read_file
from kenning.sources.store import SyncReport


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return " ".join(re.sub(r"[-_.|()]+", " ", text).split())


def _same(speaker: str, label: str) -> bool:
    s, lab = _fold(speaker), _fold(label)
    return bool(s) and speaker != UNKNOWN and (s in lab or lab in s)


def _vtt_labels(text: str) -> list[str | None]:
    out: list[str | None] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.strip().split("\n")
        at = next((i for i, line in enumerate(lines) if "-->" in line), None)
        said = " ".join(" ".join(lines[at + 1:]).split()) if at is not None else ""
        if said:
            m = re.match(r"^([^:]{1,80}?): ", said)
            out.append(m.group(1) if m else None)
    return out


def measure(files: list[Path]) -> dict[str, float | int]:
    """Counts over ``files`` (see the module docstring)."""
    turns = own = people = attending = skipped = 0
    for path in files:
        if path.suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8")).get("meeting_transcripts") or []
            truth = [r["speaker"] for r in rows if " ".join(str(r.get("content")).split())]
        else:
            truth = _vtt_labels(path.read_text(encoding="utf-8"))
        (meeting,) = read_file(path)
        said = [t for t in meeting.turns if t.text]
        if len(said) != len(truth):
            skipped += 1  # not one label per cue: no truth to compare with
            continue
        for turn, label in zip(said, truth, strict=True):
            turns += 1
            own += (label is None or _same(turn.speaker, label)) and not (
                label and turn.text.startswith(label + ":"))
        attendees = build_doc(meeting, path, path.name, SyncReport("bench")).fields.get(
            "attendees") or []
        for label in {lab for lab in truth if lab and not _GENERIC.match(lab)}:
            people += 1
            attending += any(_same(a, label) for a in attendees)
    return {"files": len(files) - skipped, "skipped": skipped, "turns": turns,
            "own_speaker": own, "own_share": round(own / max(turns, 1), 4),
            "speakers": people, "attendees": attending,
            "attendee_share": round(attending / max(people, 1), 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    args = ap.parse_args()
    files = sorted(p for folder in args.folders for p in folder.rglob("*")
                   if p.suffix in (".vtt", ".json"))
    print(json.dumps(measure(files), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
