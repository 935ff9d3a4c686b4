"""Journaled multi-file writes: a batch is all or nothing even when the writer is killed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kenning.errors import UnsafePath
from kenning.vault.writes import JOURNAL, recover, write_files, write_lock

KILLER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    import kenning.vault.writes as w
    real, calls = w.atomic_write_text, []
    def dying(path, text):
        calls.append(path)
        if len(calls) == 3:      # the journal, the first page, then the process dies
            os._exit(9)
        real(path, text)
    w.atomic_write_text = dying
    root = Path(sys.argv[1])
    w.write_files(root, {"people/a.md": "A new\\n", "people/b.md": "B new\\n"},
                  ["people/old.md"], threads=1)
""")


def test_a_batch_killed_half_way_is_finished_by_the_next_writer(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".kenning").mkdir(parents=True)
    (root / "people").mkdir()
    for name, text in (("a", "A old\n"), ("b", "B old\n"), ("old", "moved away\n")):
        (root / "people" / f"{name}.md").write_text(text)
    run = subprocess.run([sys.executable, "-c", KILLER, str(root)], capture_output=True)
    assert run.returncode == 9, run.stderr
    # Half-way: one page new, the other old, the journal still there.
    assert (root / "people/a.md").read_text() == "A new\n"
    assert (root / "people/b.md").read_text() == "B old\n"
    assert (root / ".kenning" / JOURNAL).exists()
    with write_lock(root):
        pass
    assert (root / "people/b.md").read_text() == "B new\n"
    assert not (root / "people/old.md").exists()
    assert not (root / ".kenning" / JOURNAL).exists()
    assert recover(root) is False  # nothing left to do


def test_a_torn_journal_means_the_batch_never_started(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".kenning").mkdir(parents=True)
    (root / "a.md").write_text("kept\n")
    (root / ".kenning" / JOURNAL).write_text('{"writes": {"a.md": "ne')
    assert recover(root) is False
    assert (root / "a.md").read_text() == "kept\n"
    assert not (root / ".kenning" / JOURNAL).exists()


def test_paths_outside_the_vault_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".kenning").mkdir(parents=True)
    with pytest.raises(UnsafePath):
        write_files(root, {"a.md": "x\n", "../escape.md": "y\n"})
    assert not (root / "a.md").exists() and not (tmp_path / "escape.md").exists()
