"""`kenning sources list|show`: counts per kind, each connector's last sync, one source's data."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main


def _chat(path: Path, sid: str, title: str) -> None:
    path.write_text(json.dumps({"id": sid, "title": title, "messages": [
        {"speaker": "Ana", "text": "We ship on Friday.", "timestamp": "2026-03-02T10:00:00Z"},
        {"speaker": "Bo", "text": "Agreed.", "timestamp": "2026-03-02T10:01:00Z"}]}))


def test_list_and_show_report_what_the_syncs_wrote(vault: Vault, tmp_path: Path) -> None:
    runner = CliRunner()
    root = str(vault.root)
    listed = json.loads(runner.invoke(main, ["-C", root, "sources", "list", "--json"]).output)
    assert listed["kinds"]["chat"] == 0 and listed["connectors"] == []

    inbox = tmp_path / "in"
    inbox.mkdir()
    _chat(inbox / "a.json", "s-1", "Release plan")
    _chat(inbox / "b.json", "s-2", "Retro")
    synced = runner.invoke(main, ["-C", root, "sync", "chats", str(inbox), "--json"])
    assert synced.exit_code == 0, synced.output
    assert json.loads(synced.output)["created"] == 2

    listed = json.loads(runner.invoke(main, ["-C", root, "sources", "list", "--json"]).output)
    assert listed["kinds"]["chat"] == 2 and listed["kinds"]["email"] == 0
    (chats,) = listed["connectors"]
    assert chats["connector"] == "chats" and chats["sources"] == 2 and chats["last_sync"]
    text = runner.invoke(main, ["-C", root, "sources", "list"]).output
    assert "chat" in text and "last sync" in text

    paths = sorted(p.relative_to(vault.root).as_posix()
                   for p in (vault.root / "sources" / "chats").glob("*.md"))
    shown = json.loads(runner.invoke(main, ["-C", root, "sources", "show", paths[0],
                                            "--json"]).output)
    assert shown["path"] == paths[0] and shown["kind"] == "chat"
    assert shown["connector"] == "chats" and shown["content_hash"].startswith("sha256:")
    by_stem = json.loads(runner.invoke(main, ["-C", root, "sources", "show",
                                              Path(paths[1]).stem, "--json"]).output)
    assert by_stem["path"] == paths[1]

    by_id = json.loads(runner.invoke(main, ["-C", root, "sources", "show", shown["source_id"],
                                            "--json"]).output)
    assert by_id["path"] == paths[0]

    missing = runner.invoke(main, ["-C", root, "sources", "show", "no-such-thing"])
    assert missing.exit_code == 1 and "no source file matches 'no-such-thing'" in missing.output
