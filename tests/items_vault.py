# ruff: noqa: E501  (item lines are one line each, as the build writes them)
"""A small vault of item lines in the docs/vault-format.md §6b format, written to disk, for the
items tests (query, CLI, recall)."""

from __future__ import annotations

from pathlib import Path

from kenning.api import Vault

TODAY = "2026-10-12"

SARAH = """\
---
type: person
aliases: [Sarah]
---
# Sarah Chen

Partner at Horizon Ventures; leads the Kestrel seed round.

## Commitments
- [ ] 2026-10-09 — Send Sarah the revised deck [who:: me] [to:: [[Sarah Chen]]] [due:: 2026-10-15] [source:: [[sources/email/2026-10-09-deck#L31-L32]]] ^i-3fa2c19d
- [ ] 2026-09-20 — Introduce Sarah to the Copperline team [who:: me] [to:: [[Sarah Chen]]] [due:: 2026-09-30]
- [x] 2026-09-01 — Share the cap table [who:: me] [to:: [[Sarah Chen]]] [completion:: 2026-09-03]

## Open items
- [ ] 2026-10-10 — Can you forward the signed NDA? [to:: me]
"""

PRIYA = """\
---
type: person
---
# Priya Raman

## Commitments
- [x] 2026-10-08 — Ship the versioned cache key [who:: [[Priya Raman]]] [to:: [[Peter Lindqvist]]] [due:: 2026-10-09] [completion:: 2026-10-08] [closed:: [[sources/email/2026-10-08-replay-cache#L58]]] [source:: [[sources/email/2026-10-08-replay-cache#L44-L45]]] ^i-81c07d2e
"""

PETER = """\
---
type: person
---
# Peter Lindqvist
"""

MEETING = """\
---
type: meeting
date: 2026-10-07
attendees: ["[[Priya Raman]]", "[[Peter Lindqvist]]"]
---
# Replay cache review

## Action items
- [ ] Priya: benchmark cache hit rate on a week of Copperline traffic.
- [ ] Jonas: write the deploy runbook [due:: 2026-10-20]
- [ ] Alex Morgan: send the pilot report to Peter [to:: [[Peter Lindqvist]]] [due:: 2026-10-14]
- [ ] 2026-10-09 — Send Sarah the revised deck [who:: me] [to:: [[Sarah Chen]]] [due:: 2026-10-15] [source:: [[sources/email/2026-10-09-deck#L31-L32]]] ^i-3fa2c19d

## Decisions
- 2026-10-07 — Keep the in-process cache and add the projection version to the key [who:: [[Peter Lindqvist]]] [because:: a new projector version means new keys] [rejected:: going back to Redis] [rejected:: a cache-wide flush on every deploy] [about:: [[Caching]]] [source:: [[sources/meetings/2026-10-07-replay-cache-review#L30-L31]]] ^i-5b1e0a47
"""

CACHING = """\
---
type: project
---
# Caching

The replay cache of the Copperline pipeline.
"""

PAGES = {
    "people/Sarah Chen.md": SARAH,
    "people/Priya Raman.md": PRIYA,
    "people/Peter Lindqvist.md": PETER,
    "meetings/2026-10-07 Replay cache review.md": MEETING,
    "projects/Caching.md": CACHING,
}
MEETING_PATH = "meetings/2026-10-07 Replay cache review.md"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make(tmp: Path) -> Vault:
    """A vault (``kenning init``) whose owner is Alex Morgan, with :data:`PAGES`, indexed."""
    vault, _ = Vault.init(tmp / "items")
    config = vault.root / ".kenning" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8")
                      + "owner:\n  names: [Alex Morgan]\n", encoding="utf-8")
    vault.close()
    vault = Vault.open(tmp / "items")
    for rel, text in PAGES.items():
        write(vault.root, rel, text)
    vault.index(embed=False)
    return vault
