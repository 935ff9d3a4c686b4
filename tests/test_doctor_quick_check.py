"""SQLite's quick check in ``kenning doctor``: run once per change of the index file in a
process (the web view's health page asks on every request), and again as soon as the file
changes, so damage is still reported."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import write as put

from kenning import Vault
from kenning.index.store.sqlite import SQLiteStore


@pytest.fixture
def v(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    vault, _ = Vault.init(tmp_path / "v")
    put(vault, "people/Ana.md", "# Ana\n\nSee [[Bo]].\n")
    put(vault, "people/Bo.md", "# Bo\n\nSee [[Ana]].\n")
    vault.index()
    return vault


def test_the_check_runs_again_only_once_the_file_changed(v: Vault) -> None:
    store = SQLiteStore(v.root)
    ran: list[str] = []
    store.conn.set_trace_callback(ran.append)
    try:
        assert store.quick_check() == "ok"
        assert store.quick_check() == "ok"
        assert [s for s in ran if "quick_check" in s] == ["PRAGMA quick_check"]
        put(v, "people/Cy.md", "# Cy\n\nNew.\n")
        v.index()  # writes the index: its WAL (or the file) changes
        assert store.quick_check() == "ok"
        assert [s for s in ran if "quick_check" in s] == ["PRAGMA quick_check"] * 2
    finally:
        store.close()


def database_errors(v: Vault) -> list[str]:
    return [f.message for f in v.doctor().findings if f.check == "database" and f.level == "error"]


def test_damage_after_a_clean_check_is_still_reported(v: Vault) -> None:
    assert database_errors(v) == []  # checked, and remembered as ok
    v.close()
    db = v.root / ".kenning" / "index.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'links_dst'"
                            ).fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * size
    data[start + 8:start + size] = bytes(size - 8)  # the index's cells point nowhere
    db.write_bytes(bytes(data))
    again = Vault(v.root)
    try:
        errors = database_errors(again)
    finally:
        again.close()
    assert len(errors) == 1 and "fails SQLite's quick check" in errors[0], errors
