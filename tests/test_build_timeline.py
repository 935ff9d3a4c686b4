"""Timeline folding: real .eml files synced by `kenning sync email`, pages written by
`kenning build`; old months fold into one line each, the recent window stays verbatim, a
person's own line is never touched, and a rebuild changes no byte."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

from click.testing import CliRunner

from kenning.builder.timeline import WINDOW_DAYS
from kenning.cli import main
from kenning.vault import frontmatter


def _run(root: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _eml(folder: Path, n: int, subject: str, day: str) -> None:
    when = datetime.fromisoformat(day + "T09:00:00").replace(tzinfo=UTC)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{n:03d}.eml").write_text(
        "From: Dana Fox <dana@foxworks.example>\n"
        "To: Priya Raman <priya@raman.example>\n"
        f"Subject: {subject}\n"
        f"Date: {format_datetime(when)}\n"
        f"Message-ID: <m{n}@foxworks.example>\n"
        "\n"
        f"Notes on {subject.lower()}.\n", encoding="utf-8")


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    return root


def _cite(root: Path, subject: str) -> str:
    """The citation the build writes for Dana's message in the thread ``subject``: the thread
    file and the line of her message header, read from the synced source."""
    for path in sorted((root / "sources" / "email").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if frontmatter.read(text).data.get("subject") == subject:
            line = next(i for i, row in enumerate(text.split("\n"), 1)
                        if row.startswith("## ") and "Dana Fox" in row)
            return f"[[sources/email/{path.stem}#L{line}]]"
    raise AssertionError(subject)


def _timeline(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    section = text.split("## Timeline\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.split("\n") if line.strip()]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(
                (".kenning/index", ".kenning/build/journal"))}


SUBJECTS = [("Pricing tiers draft", "2026-01-05"), ("Pricing tiers feedback", "2026-01-12"),
            ("Hiring plan", "2026-01-20"), ("Office move", "2026-02-03"),
            ("Launch checklist", "2026-04-20"), ("Launch date", "2026-04-25")]


def test_old_months_fold_and_a_hand_written_line_survives(tmp_path: Path) -> None:
    assert WINDOW_DAYS == 60  # the dates below sit on either side of that window
    root = _vault(tmp_path)
    for n, (subject, day) in enumerate(SUBJECTS):
        _eml(tmp_path / "mail1", n, subject, day)
    _run(root, "sync", "email", str(tmp_path / "mail1"))
    _run(root, "build")
    page = root / "people" / "Dana Fox.md"
    c = {s: _cite(root, s) for s, _ in SUBJECTS}
    # Newest 2026-04-25: the window starts 2026-02-24. January's three threads fold into one
    # line citing its first and last; February's one thread stays (one line either way).
    assert _timeline(page) == [
        f"- 2026-01 — 3 emails, mostly about Pricing, tiers [source:: {c['Pricing tiers draft']}]"
        f" [source:: {c['Hiring plan']}]",
        f"- 2026-02-03 — Wrote in email “Office move” [source:: {c['Office move']}]",
        f"- 2026-04-20 — Wrote in email “Launch checklist” [source:: {c['Launch checklist']}]",
        f"- 2026-04-25 — Wrote in email “Launch date” [source:: {c['Launch date']}]",
    ]
    data = frontmatter.read(page.read_text(encoding="utf-8")).data
    assert str(data["last_seen"]) == "2026-04-25"  # "when did we last talk?", exactly
    assert "6 email threads (wrote 6)" in page.read_text(encoding="utf-8")

    # A second build over unchanged sources changes no byte.
    before = _snapshot(root)
    _run(root, "build")
    assert _snapshot(root) == before

    # A person's own line, written in the middle of the folded month, in the build's form
    # but citing nothing, and a note indented under a build line.
    text = page.read_text(encoding="utf-8")
    mine = "- 2026-01-15 — Met Dana for coffee; she prefers Thursdays."
    # ... and one in the build's very form, citing a source: it is still the person's.
    cited = (f"- 2026-01-13 — Dana's feedback was about the enterprise tier "
             f"[source:: {c['Pricing tiers feedback']}]")
    office = f"- 2026-02-03 — Wrote in email “Office move” [source:: {c['Office move']}]"
    text = text.replace(office, f"{cited}\n{mine}\n{office}\n  - she is moving to Lisbon")
    page.write_text(text, encoding="utf-8")

    # A late thread in the folded month: January's line counts it and cites it as its last.
    _eml(tmp_path / "mail2", 10, "Pricing tiers final", "2026-01-28")
    _run(root, "sync", "email", str(tmp_path / "mail2"))
    _run(root, "build")
    c["Pricing tiers final"] = _cite(root, "Pricing tiers final")
    assert _timeline(page) == [
        f"- 2026-01 — 4 emails, mostly about Pricing, tiers [source:: {c['Pricing tiers draft']}]"
        f" [source:: {c['Pricing tiers final']}]",
        cited,
        mine,
        office,
        "  - she is moving to Lisbon",
        f"- 2026-04-20 — Wrote in email “Launch checklist” [source:: {c['Launch checklist']}]",
        f"- 2026-04-25 — Wrote in email “Launch date” [source:: {c['Launch date']}]",
    ]
    assert "7 email threads (wrote 7)" in page.read_text(encoding="utf-8")
    # Lossless: the mention log still holds every thread Dana wrote.
    rows = [json.loads(line) for line in
            (root / ".kenning" / "build" / "mentions.jsonl").read_text().splitlines()]
    wrote = {r["source"] for r in rows if r.get("page") == "people/Dana Fox.md" and r.get("wrote")}
    assert len(wrote) == 7
    before = _snapshot(root)
    _run(root, "build")
    assert _snapshot(root) == before


def test_a_newer_thread_moves_the_window_and_folds_what_fell_out(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    for n, (subject, day) in enumerate(SUBJECTS):
        _eml(tmp_path / "mail1", n, subject, day)
    _run(root, "sync", "email", str(tmp_path / "mail1"))
    _run(root, "build")
    # The page was saved with Windows line endings (a person's editor): they stay.
    page = root / "people" / "Dana Fox.md"
    page.write_bytes(page.read_bytes().replace(b"\n", b"\r\n"))
    # 2026-08-01: the window now starts 2026-06-02, so April's two threads fold too.
    _eml(tmp_path / "mail2", 20, "Quarterly numbers", "2026-08-01")
    _run(root, "sync", "email", str(tmp_path / "mail2"))
    _run(root, "build")
    raw = page.read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") and not raw.endswith(b"\r\n\r")
    page.write_bytes(raw.replace(b"\r\n", b"\n"))
    c = {s: _cite(root, s) for s, _ in [*SUBJECTS, ("Quarterly numbers", "")]}
    lines = _timeline(page)
    assert lines[1:] == [
        f"- 2026-02-03 — Wrote in email “Office move” [source:: {c['Office move']}]",
        f"- 2026-04 — 2 emails, mostly about Launch [source:: {c['Launch checklist']}]"
        f" [source:: {c['Launch date']}]",
        f"- 2026-08-01 — Wrote in email “Quarterly numbers” [source:: {c['Quarterly numbers']}]",
    ]


def _eml_from(folder: Path, n: int, sender: str, subject: str, day: str) -> None:
    _eml(folder, n, subject, day)
    path = folder / f"{n:03d}.eml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "From: Dana Fox <dana@foxworks.example>", f"From: {sender}"), encoding="utf-8")


def test_a_merged_page_brings_its_month_lines_and_they_keep_folding(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    for n, (subject, day) in enumerate(SUBJECTS):
        _eml(tmp_path / "mail1", n, subject, day)
    dee = "Dee Fox <dee@elsewhere.example>"
    for n, (subject, day) in enumerate([("Budget review", "2025-11-03"),
                                        ("Budget numbers", "2025-11-10"),
                                        ("Catch up", "2026-03-01")], 30):
        _eml_from(tmp_path / "mail1", n, dee, subject, day)
    _run(root, "sync", "email", str(tmp_path / "mail1"))
    _run(root, "build")
    c = {s: _cite(root, s) for s, _ in SUBJECTS}
    for s in ("Budget review", "Budget numbers", "Catch up"):
        path = next(p for p in sorted((root / "sources" / "email").glob("*.md"))
                    if frontmatter.read(p.read_text(encoding="utf-8")).data.get("subject") == s)
        line = next(i for i, row in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
                    if row.startswith("## ") and "Dee Fox" in row)
        c[s] = f"[[sources/email/{path.stem}#L{line}]]"
    month = (f"- 2025-11 — 2 emails, mostly about Budget [source:: {c['Budget review']}]"
             f" [source:: {c['Budget numbers']}]")
    assert _timeline(root / "people" / "Dee Fox.md")[0] == month
    result = CliRunner().invoke(main, ["-C", str(root), "merge", "people/Dana Fox.md",
                                       "people/Dee Fox.md"])
    assert result.exit_code == 0, result.output
    page = root / "people" / "Dana Fox.md"
    assert month in _timeline(page)
    # A late thread from Dee's address in that month: the moved month line counts it.
    _eml_from(tmp_path / "mail2", 40, dee, "Budget final", "2025-11-24")
    _run(root, "sync", "email", str(tmp_path / "mail2"))
    _run(root, "build")
    path = next(p for p in sorted((root / "sources" / "email").glob("*.md"))
                if frontmatter.read(p.read_text(encoding="utf-8")).data.get("subject")
                == "Budget final")
    line = next(i for i, row in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
                if row.startswith("## ") and "Dee Fox" in row)
    lines = _timeline(page)
    assert lines[0] == (f"- 2025-11 — 3 emails, mostly about Budget [source:: "
                        f"{c['Budget review']}] [source:: [[sources/email/{path.stem}#L{line}]]]")
    assert month not in lines
