"""Sources without a date still build pages that parse cleanly (no dateless timeline lines)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main


def test_an_undated_transcript_builds_a_clean_meeting_page(vault: Vault, tmp_path: Path) -> None:
    transcript = tmp_path / "standup.txt"
    transcript.write_text("Title: Standup\nAna Lima: We ship on Friday.\n"
                          "Bo Park: Agreed, I will tell the customer.\n")
    runner = CliRunner()
    root = str(vault.root)
    assert runner.invoke(main, ["-C", root, "sync", "meetings", str(transcript)]).exit_code == 0
    built = runner.invoke(main, ["-C", root, "build"])
    assert built.exit_code == 0, built.output
    pages = sorted((vault.root / "meetings").glob("*.md"))
    assert pages, "no meeting page was built"
    for page in pages:
        assert "\n-  —" not in page.read_text()
    vault.index(embed=False)
    problems = vault.store.rows("SELECT f.path, p.message FROM problems p"
                                " JOIN files f ON f.id = p.file_id")
    assert [p for p in problems if p[0].startswith(("meetings/", "people/"))] == []
