"""The CLI as a user meets it: init/adopt, index, search, show, graph, link, doctor, demo."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from kenning.sample import copy_sample


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".kenning" not in p.parts}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = copy_sample(tmp_path / "demo")
    run("init", str(root))
    run("-C", str(root), "index")
    return root


def test_init_creates_the_vault_layout(tmp_path: Path) -> None:
    out = run("init", str(tmp_path / "new"))
    assert "Created a vault" in out
    for folder in ("people", "organizations", "projects", "topics", "meetings", "decisions",
                   "memory", "sources", "sessions"):
        assert (tmp_path / "new" / folder).is_dir()
    assert (tmp_path / "new" / "memory.md").read_text().startswith("---\ntype: note")
    assert (tmp_path / "new" / ".kenning" / "config.yaml").exists()


def test_init_adopts_an_obsidian_vault_without_touching_its_files(tmp_path: Path) -> None:
    root = tmp_path / "obsidian"
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text("{}")
    (root / "Daily").mkdir()
    (root / "Daily" / "note.md").write_text("---\ntags: [x]  # mine\n---\n# Note\n[[Other]]\n")
    (root / "Other.md").write_bytes(b"# Other\r\nCRLF text\r\n")
    before = tree_digest(root)
    folders_before = sorted(p.name for p in root.iterdir())
    out = run("init", str(root))
    assert "Adopted" in out
    run("-C", str(root), "index")
    assert tree_digest(root) == before
    assert sorted(p.name for p in root.iterdir()) == sorted([*folders_before, ".kenning"])


def test_index_prints_a_summary_and_json(demo: Path) -> None:
    (demo / "people" / "new.md").write_text("# New person\n")
    out = run("-C", str(demo), "index")
    assert "1 added" in out and "Links:" in out
    data = json.loads(run("-C", str(demo), "index", "--json"))
    assert data["added"] == 0 and data["unchanged"] == data["scanned"]


def test_search_prints_citations_and_json(demo: Path) -> None:
    out = run("-C", str(demo), "search", "Horizon", "Ventures")
    assert "organizations/Horizon Ventures.md#L" in out
    data = json.loads(run("-C", str(demo), "search", "seed round", "--json", "-n", "3"))
    assert data["query"] == "seed round" and 0 < len(data["results"]) <= 3
    first = data["results"][0]
    # Each item once: the page is named by its hits' citations, no null or default field.
    assert set(first) <= {"title", "type", "exact", "hits"} and first["hits"]
    assert all(set(h) <= {"citation", "heading", "snippet"} for h in first["hits"])
    assert len({h["citation"].split("#L")[0] for h in first["hits"]}) == 1
    assert "null" not in json.dumps(data)


def test_search_rejects_bad_dates_and_types_in_one_line(demo: Path) -> None:
    result = CliRunner().invoke(main, ["-C", str(demo), "search", "x", "--since", "May"])
    assert result.exit_code == 2 and "YYYY-MM-DD" in result.output
    result = CliRunner().invoke(main, ["-C", str(demo), "search", "x", "-t", "robot"])
    assert result.exit_code == 2
    assert "unknown entity type 'robot'; allowed: person" in result.output


def test_show_by_alias_and_json(demo: Path) -> None:
    data = json.loads(run("-C", str(demo), "show", "Sarah", "--json"))
    assert data["path"] == "people/Sarah Chen.md"
    assert data["facts"] and all(f["citation"].startswith(data["path"]) for f in data["facts"])
    assert any(e["rel"] == "works_at" for e in data["links_out"])
    raw = run("-C", str(demo), "show", "Sarah Chen", "--raw")
    assert raw == (demo / "people" / "Sarah Chen.md").read_text(encoding="utf-8")


def test_show_unknown_page_is_one_clear_line(demo: Path) -> None:
    result = CliRunner().invoke(main, ["-C", str(demo), "show", "Nobody At All"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: no page named 'Nobody At All' (tried path, file name, title, alias)"]


def test_graph_commands_json(demo: Path) -> None:
    neighbors = json.loads(run("-C", str(demo), "graph", "neighbors", "Kestrel Labs",
                               "--direction", "in", "--rel", "invested_in", "--json"))
    investors = {e["path"] for e in neighbors}
    assert {"organizations/Horizon Ventures.md", "organizations/Bluefin Capital.md"} <= investors
    assert all(e["citation"].startswith(e["path"] + "#L") for e in neighbors)  # where it is
    traversal = json.loads(run("-C", str(demo), "graph", "traverse", "Maya Okafor",
                               "--depth", "50", "--json"))
    assert traversal["depth"] == 10 and traversal["nodes"]
    path = json.loads(run("-C", str(demo), "graph", "path", "Sarah Chen", "Maya Okafor",
                          "--json"))
    assert path[0]["path"] == "people/Sarah Chen.md"
    assert path[-1]["path"] == "people/Maya Okafor.md"
    back = json.loads(run("-C", str(demo), "graph", "backlinks", "Horizon Ventures", "--json"))
    assert all(e["direction"] == "in" for e in back) and back
    assert isinstance(json.loads(run("-C", str(demo), "graph", "orphans", "--json")), list)


def test_link_add_and_remove(demo: Path) -> None:
    out = run("-C", str(demo), "link", "add", "Sarah Chen", "advises", "Minato Systems")
    assert "manual" in out
    data = json.loads(run("-C", str(demo), "graph", "neighbors", "Sarah Chen", "--rel",
                          "advises", "--direction", "out", "--json"))
    assert any(e["kind"] == "manual" and e["path"] == "organizations/Minato Systems.md"
               for e in data)
    run("-C", str(demo), "link", "remove", "Sarah Chen", "advises", "Minato Systems")
    data = json.loads(run("-C", str(demo), "graph", "neighbors", "Sarah Chen", "--rel",
                          "advises", "--direction", "out", "--json"))
    assert not any(e["kind"] == "manual" for e in data)


def test_doctor_healthy_sample_then_failing_with_fixes(demo: Path) -> None:
    out = run("-C", str(demo), "doctor")
    assert "healthy" in out
    data = json.loads(run("-C", str(demo), "doctor", "--json"))
    assert data["ok"] is True
    (demo / "people" / "bad.md").write_text("---\ntype: robot\n---\n# Bad\n")
    out = run("-C", str(demo), "doctor", code=1)
    assert "not indexed" in out and "fix: kenning index" in out
    run("-C", str(demo), "index")
    out = run("-C", str(demo), "doctor", code=1)
    assert "people/bad.md:2" in out and "unknown entity type 'robot'" in out
    assert "fix:" in out


def test_not_a_vault_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["-C", str(tmp_path), "search", "x"])
    assert result.exit_code == 1
    assert "is not inside a vault; run `kenning init" in result.output


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    out = run("demo", str(tmp_path / "d"))
    assert "Indexed" in out and "#L" in out and "invested_in" in out
    # The items the build put on pages, and what others owe the owner (Marta's signed offer).
    assert "commitments, asks and decisions, each on the pages it concerns" in out
    owed = out.split("$ kenning items --to me --status open", 1)[1].split("\n$ ", 1)[0]
    assert "Marta Nowak → me — I will send the signed offer tomorrow." in owed


def test_help_does_not_import_heavy_modules() -> None:
    code = ("import sys, kenning.cli; heavy = [m for m in ('rich', 'markdown_it', 'ruamel', "
            "'sqlite3', 'numpy', 'kenning.index.indexer') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
    help_text = subprocess.run([sys.executable, "-m", "kenning.cli", "--help"],
                               capture_output=True, text=True, check=True).stdout
    for command in ("init", "index", "rebuild", "search", "show", "graph", "doctor", "demo"):
        assert command in help_text


def test_search_before_any_index_says_what_to_do(tmp_path: Path) -> None:
    run("init", str(tmp_path / "fresh"))
    result = CliRunner().invoke(main, ["-C", str(tmp_path / "fresh"), "search", "anything"])
    assert result.exit_code == 1
    assert "has no index yet; run `kenning index` first" in result.output


def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with stdout a pipe whose reader is already gone (`… | head -1` once head
    has exited): every write to it fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-c", "from kenning.cli import main; main()",
                               *args], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              check=False)
    finally:
        os.close(write_end)


def test_a_closed_output_pipe_exits_quietly(tmp_path: Path) -> None:
    """No BrokenPipe traceback, no warning: an import whose write landed exits 0 (its work is
    done; a retrying agent must not take it for a failure), a read exits 1 as click does."""
    fixture = Path(__file__).parent / "fixtures/import/rawthink"
    for n, flags in enumerate((["--json"], [])):
        root = tmp_path / f"v{n}"
        run("init", str(root))
        done = _with_closed_stdout("-C", str(root), "import", "rawthink", str(fixture), *flags)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
        assert (root / ".kenning/imports/rawthink.json").is_file()   # the import landed
        assert (root / "decisions/Use SQLite.md").is_file()
    read = _with_closed_stdout("-C", str(tmp_path / "v0"), "search", "SQLite", "--json")
    assert (read.returncode, read.stderr) == (1, "")
    again = _with_closed_stdout("-C", str(tmp_path / "v0"), "import", "rawthink", str(fixture))
    assert (again.returncode, again.stderr) == (1, "")                # nothing new to write
