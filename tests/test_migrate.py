"""`kenning migrate`: a vault the format-1 Kenning wrote (tests/fixtures/vaults/format-1, built by
commit 5b878dd on the bundled sample sources) upgraded to format 2, on a copy in tmp_path.

Real vaults on disk, real SQLite indexes, real `kenning` processes for the kill test; no mocks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.errors import KenningError, NotAVault
from kenning.vault.fsio import fault_steps
from kenning.vault.layout import FORMAT, FormatTooNew, config_with_format, load_config

FIXTURE = Path(__file__).parent / "fixtures" / "vaults" / "format-1"
DAY = "2026-12-01"
# Every page the format-1 Kenning created and recorded, and where format 2 names it.
MOVES = {
    "decisions/use-redis-for-replay-caching.md": "decisions/Use Redis for replay caching.md",
    "meetings/2026-10-07-replay-cache-review.md": "meetings/2026-10-07 Replay cache review.md",
    "notes/2026-11-30-churn-numbers-for-sarah.md": "notes/2026-11-30 Churn numbers for Sarah.md",
    "organizations/bluefin.md": "organizations/Bluefin.md",
    "organizations/copperline.md": "organizations/Copperline.md",
    "organizations/horizon.md": "organizations/Horizon.md",
    "organizations/kestrel-labs.md": "organizations/Kestrel Labs.md",
    "organizations/northwind-freight.md": "organizations/Northwind Freight.md",
    **{f"people/{s}.md": f"people/{t}.md" for s, t in (
        ("diego-santos", "Diego Santos"), ("hannah-berg", "Hannah Berg"),
        ("jonas-weber", "Jonas Weber"), ("marta-nowak", "Marta Nowak"),
        ("owen-hart", "Owen Hart"), ("peter-lindqvist", "Peter Lindqvist"),
        ("priya-raman", "Priya Raman"), ("rachel-moreno", "Rachel Moreno"),
        ("sam-whitaker", "Sam Whitaker"), ("sarah-chen", "Sarah Chen"),
        ("tom-alvarez", "Tom Alvarez"))},
}
TOO_NEW = "format 3 is newer than this Kenning (knows 2); upgrade Kenning"


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", DAY)


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A copy of the format-1 fixture vault."""
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    return root


def snapshot(root: Path, *, times: bool = True) -> dict[str, object]:
    """Every file of the vault (its bytes, and its mtime) but the index and lock files."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith((".kenning/index", ".kenning/backups/")) \
                or rel.endswith(".lock"):
            continue
        out[rel] = (path.read_bytes(), path.stat().st_mtime_ns) if times else path.read_bytes()
    return out


def cli(root: Path, *args: str) -> object:
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def format_of(root: Path) -> int:
    return load_config(root).format


def test_the_fixture_is_a_format_1_vault() -> None:
    assert format_of(FIXTURE) == 1
    for old in MOVES:
        assert (FIXTURE / old).is_file(), old
    assert not (FIXTURE / ".kenning" / "created.json").exists()  # the registry came with 2


def test_dry_run_prints_every_change_as_a_diff_and_writes_nothing(old: Path) -> None:
    before = snapshot(old)
    result = cli(old, "migrate")
    assert result.exit_code == 0, result.output
    out = result.output
    for a, b in MOVES.items():
        assert f"rename from {a}\nrename to {b}\n" in out
    assert "+format: 2\n" in out
    assert "-- works_at:: [[horizon|Horizon]]" in out  # the rename's content diff
    assert "+- works_at:: [[Horizon]]" in out
    assert "--- a/notes/board-prep.md\n+++ b/notes/board-prep.md\n" in out
    assert "+++ b/.kenning/created.json" in out
    assert "nothing written (dry run)" in out
    assert cli(old, "migrate", "--dry-run").output == out
    data = json.loads(cli(old, "migrate", "--json").output)
    assert data["format"] == 1 and data["target"] == FORMAT and data["pending"]
    assert {r["from"]: r["to"] for r in data["renames"]} == MOVES
    assert snapshot(old) == before  # bytes and mtimes


def test_apply_upgrades_every_page_and_every_link_still_resolves(old: Path) -> None:
    vault = Vault.open(old)
    vault.index(embed=False)
    assert next(f for f in vault.doctor().findings if f.check == "format").level == "warn"
    dangling_before = [f for f in vault.doctor().findings if f.check == "dangling-links"]
    original = snapshot(old, times=False)

    report = vault.migrate(apply=True)
    assert report["applied"] and report["format"] == 1
    for a, b in MOVES.items():
        assert not (old / a).exists() and (old / b).is_file(), (a, b)
    assert (old / "people/Sarah Chen.md").read_text(encoding="utf-8") == \
        original["people/sarah-chen.md"].decode().replace("[[horizon|Horizon]]", "[[Horizon]]")
    assert (old / "organizations/kestrel.md").exists()  # not recorded as Kenning's: stays
    note = (old / "notes/board-prep.md").read_text(encoding="utf-8")
    assert "[[people/Sarah Chen|Sarah]]" in note and "[[Hannah Berg]]" in note
    assert "[[organizations/Horizon#Facts]]" in note
    assert "[[meetings/2026-10-07 Replay cache review|cache review]]" in note
    config = (old / ".kenning/config.yaml").read_text(encoding="utf-8")
    assert config == original[".kenning/config.yaml"].decode().replace(
        "version: 1\n", "version: 1\nformat: 2\n")
    created = json.loads((old / ".kenning/created.json").read_text(encoding="utf-8"))["pages"]
    assert set(MOVES.values()) <= set(created)
    links = (old / ".kenning/manual-links.jsonl").read_text(encoding="utf-8")
    assert '"src": "people/Sarah Chen.md"' in links and '"dst": "people/Priya Raman.md"' in links
    state = json.loads((old / ".kenning/build/state.json").read_text(encoding="utf-8"))
    assert "people/Sarah Chen.md" in state["pages"] and "people/sarah-chen.md" not in state["pages"]
    assert state["renamed"]["people/sarah-chen.md"] == "people/Sarah Chen.md"

    # The backup holds every file the migration touched, byte for byte, and a manifest.
    folder = old / report["backup"]
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["from_format"] == 1 and manifest["to_format"] == 2
    saved = {f["path"] for f in manifest["files"]}
    assert set(MOVES) | {".kenning/config.yaml", "notes/board-prep.md"} <= saved
    for rel in saved:
        assert (folder / "files" / rel).read_bytes() == original[rel]

    assert report["index"]["indexed"]
    fresh = Vault.open(old)
    health = fresh.doctor()
    checks = {f.check: f for f in health.findings}
    assert checks["format"].level == "ok" and checks["format"].message == "vault format 2"
    assert checks["coverage"].level == "ok"
    dangling_after = [f for f in health.findings if f.check == "dangling-links"]
    assert len(dangling_after) <= len(dangling_before) and not dangling_after
    assert checks["links"].level == "ok"
    # The build sees a migrated vault: nothing left to move.
    from kenning.builder import run_build

    assert run_build(old).renamed == []


def test_a_second_apply_changes_nothing(old: Path) -> None:
    Vault.open(old).migrate(apply=True)
    after = snapshot(old)
    again = Vault.open(old).migrate(apply=True)
    assert not again["applied"] and again["backup"] is None and not again["pending"]
    assert snapshot(old) == after
    assert len(list((old / ".kenning/backups").iterdir())) == 1
    assert "up to date, nothing to migrate" in cli(old, "migrate").output


def test_rollback_restores_the_bytes_exactly(old: Path) -> None:
    original = snapshot(old, times=False)
    Vault.open(old).migrate(apply=True)
    assert snapshot(old, times=False) != original
    result = cli(old, "migrate", "--rollback")
    assert result.exit_code == 0, result.output
    assert "the vault is format 1 again" in result.output
    assert snapshot(old, times=False) == original
    assert format_of(old) == 1
    # Migrating again after a rollback gives the same format-2 vault.
    Vault.open(old).migrate(apply=True)
    assert all((old / b).is_file() for b in MOVES.values())


def test_rollback_refuses_over_a_file_changed_since_and_force_restores(old: Path) -> None:
    original = snapshot(old, times=False)
    report = Vault.open(old).migrate(apply=True)
    page = old / "people/Sarah Chen.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nMy own line.\n", encoding="utf-8")
    changed = snapshot(old, times=False)
    result = CliRunner().invoke(main, ["-C", str(old), "migrate", "--rollback",
                                       Path(report["backup"]).name])
    assert result.exit_code == 1
    assert "1 file(s) changed since the migration (people/Sarah Chen.md)" in result.output
    assert snapshot(old, times=False) == changed  # nothing restored
    forced = Vault.open(old).rollback_migration(force=True)
    assert forced["overwritten"] == ["people/Sarah Chen.md"]
    assert snapshot(old, times=False) == original


def test_a_backup_without_manifest_is_never_restored_from(old: Path) -> None:
    cut = old / ".kenning/backups/20261201T000000Z/files/people"
    cut.mkdir(parents=True)
    (cut / "sarah-chen.md").write_text("half a backup\n", encoding="utf-8")
    with pytest.raises(KenningError, match="no complete migration backup"):
        Vault.open(old).rollback_migration()
    with pytest.raises(KenningError, match="incomplete backup"):
        Vault.open(old).rollback_migration("20261201T000000Z")
    plan = Vault.open(old).migrate()
    assert plan["incomplete_backups"] == ["20261201T000000Z"]
    assert "incomplete backup .kenning/backups/20261201T000000Z" in cli(old, "migrate").output
    with pytest.raises(KenningError, match="no backup 'nope'"):
        Vault.open(old).rollback_migration("nope")


def test_a_damaged_backup_file_restores_nothing(old: Path) -> None:
    report = Vault.open(old).migrate(apply=True)
    after = snapshot(old, times=False)
    (old / report["backup"] / "files/people/sarah-chen.md").write_text("x", encoding="utf-8")
    with pytest.raises(KenningError, match="missing or damaged"):
        Vault.open(old).rollback_migration()
    assert snapshot(old, times=False) == after


def test_a_newer_format_is_refused_by_every_writer_and_nothing_is_written(old: Path) -> None:
    config = old / ".kenning/config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "format: 3\n", encoding="utf-8")
    before = snapshot(old)
    line = f"error: {config}: {TOO_NEW}"
    for args in (("migrate",), ("migrate", "--apply"), ("index",), ("build",),
                 ("note", "hello")):
        result = CliRunner().invoke(main, ["-C", str(old), *args])
        assert result.exit_code == 1, (args, result.output)
        assert result.output.strip() == line, (args, result.output)
    vault = Vault.open(old)
    with pytest.raises(FormatTooNew, match=re.escape(TOO_NEW)):
        vault.record([{"name": "Ada Park", "type": "person"}])
    with pytest.raises(FormatTooNew):
        vault.import_from("mem0", old / "nothing.json")
    from kenning.sources import meetings

    with pytest.raises(FormatTooNew):
        meetings.sync(old, FIXTURE / "sources" / "meetings")
    assert snapshot(old) == before
    # Reading commands still read, and the doctor says what to do.
    finding = next(f for f in vault.doctor().findings if f.check == "format")
    assert finding.level == "error" and "newer than this Kenning" in finding.message
    assert finding.fix == "upgrade Kenning"


def test_init_writes_the_current_format(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "new")
    assert format_of(vault.root) == FORMAT
    plan = vault.migrate()
    assert not plan["pending"] and plan["diff"] == ""
    vault.index(embed=False)
    assert next(f for f in vault.doctor().findings if f.check == "format").level == "ok"


def test_a_vault_of_title_named_pages_only_gets_its_format_line(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".kenning").mkdir(parents=True)
    (root / ".kenning/config.yaml").write_text("# mine\nexclude: []\n", encoding="utf-8")
    (root / "people").mkdir()
    (root / "people/ada-park.md").write_text("# Ada Park\n", encoding="utf-8")  # a person's
    plan = Vault.open(root).migrate()
    assert plan["renames"] == [] and plan["changed"] == [".kenning/config.yaml"]
    Vault.open(root).migrate(apply=True)
    assert (root / ".kenning/config.yaml").read_text(encoding="utf-8") == \
        "# mine\nformat: 2\nexclude: []\n"
    assert (root / "people/ada-park.md").exists()


def test_the_config_edit_keeps_every_other_line() -> None:
    assert config_with_format("format: 1\r\nexclude: []\r\n", 2) == "format: 2\r\nexclude: []\r\n"
    assert config_with_format("", 2) == "format: 2\n"
    assert config_with_format("# a\n# b\nsearch: {}\n", 2) == "# a\n# b\nformat: 2\nsearch: {}\n"
    with pytest.raises(KenningError, match="add the line `format: 2`"):
        config_with_format("{exclude: []}\n", 2)


def test_a_format_that_is_not_a_number_is_one_clear_line(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".kenning").mkdir(parents=True)
    (root / ".kenning/config.yaml").write_text("format: two\n", encoding="utf-8")
    with pytest.raises(NotAVault, match="field 'format' must be a whole number"):
        load_config(root)


def _env() -> dict[str, str]:
    env = {**os.environ, "KENNING_TODAY": DAY, "KENNING_EMBEDDINGS": "none",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    env.pop("KENNING_FAULT_KILL_AT", None)
    return env


def _whole_format(root: Path) -> int:
    """The vault's format, asserting that every page, link and state file agrees with it."""
    number = format_of(root)
    if number == 1:
        assert all((root / a).is_file() and not (root / b).exists() for a, b in MOVES.items())
        assert "[[people/sarah-chen|Sarah]]" in (root / "notes/board-prep.md").read_text()
        assert not (root / ".kenning/created.json").exists()
    else:
        assert number == 2
        assert all((root / b).is_file() and not (root / a).exists() for a, b in MOVES.items())
        assert "[[people/Sarah Chen|Sarah]]" in (root / "notes/board-prep.md").read_text()
        assert "people/Sarah Chen.md" in (root / ".kenning/manual-links.jsonl").read_text()
        assert (root / ".kenning/created.json").is_file()
    return number


def test_a_kill_at_any_step_leaves_one_format_and_a_second_apply_completes(
        old: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = tmp_path / "counted"
    shutil.copytree(FIXTURE, counted)
    monkeypatch.setenv("KENNING_FAULT_KILL_AT", "0")
    start = fault_steps()
    Vault.open(counted).migrate(apply=True)
    steps = fault_steps() - start
    monkeypatch.delenv("KENNING_FAULT_KILL_AT")
    assert steps > 40
    seen = set()
    for n in sorted({1, 10, steps // 4, steps // 2, steps // 2 + 1, 3 * steps // 4, steps - 1}):
        root = tmp_path / f"kill-{n}"
        shutil.copytree(FIXTURE, root)
        proc = subprocess.run(
            [sys.executable, "-c", "from kenning.cli import main; main()", "-C", str(root),
             "migrate", "--apply"], env={**_env(), "KENNING_FAULT_KILL_AT": str(n)},
            capture_output=True, text=True, check=False, timeout=120)
        assert proc.returncode == -9, (n, proc.stdout, proc.stderr)
        Vault.open(root)  # finishes a batch the kill cut
        seen.add(_whole_format(root))
        again = subprocess.run(
            [sys.executable, "-c", "from kenning.cli import main; main()", "-C", str(root),
             "migrate", "--apply"], env=_env(), capture_output=True, text=True, check=False,
            timeout=120)
        assert again.returncode == 0, (n, again.stdout, again.stderr)
        assert _whole_format(root) == 2
        assert snapshot(root, times=False) == snapshot(counted, times=False), n
    assert seen == {1, 2}  # kills before the batch and inside it


def test_the_dry_run_reads_the_index_state_without_writing_the_index(old: Path) -> None:
    vault = Vault.open(old)
    vault.index(embed=False)
    vault.close()
    index = {p.name: p.read_bytes() for p in (old / ".kenning").glob("index.db*")}
    data = json.loads(cli(old, "migrate", "--json").output)
    assert data["index"] == {"present": True, "schema": data["index"]["expected"],
                             "expected": data["index"]["expected"], "stale": False,
                             "state": f"index schema v{data['index']['expected']}, up to date"}
    assert {p.name: p.read_bytes() for p in (old / ".kenning").glob("index.db*")} == index


def test_one_mode_at_a_time(old: Path) -> None:
    before = snapshot(old)
    for args in (("--apply", "--dry-run"), ("--apply", "--rollback"), ("--force",)):
        result = CliRunner().invoke(main, ["-C", str(old), "migrate", *args])
        assert result.exit_code == 2, (args, result.output)
    assert snapshot(old) == before


def test_apply_on_a_vault_without_index_creates_none(old: Path) -> None:
    report = Vault.open(old).migrate(apply=True)
    assert report["applied"] and not report["index"]["indexed"]
    assert "no index yet" in report["index"]["state"]
    assert not list((old / ".kenning").glob("index.db*"))
