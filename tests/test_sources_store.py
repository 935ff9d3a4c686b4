"""The raw layer's writer: create, append-only updates, idempotence, crash recovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kenning.api import Vault
from kenning.sources.owner import Owner
from kenning.sources.store import Entry, SourceDoc, SourceStore, SyncReport


def _doc(entries: list[tuple[str, str]], **fields: object) -> SourceDoc:
    return SourceDoc(kind="chat", source_id="sess-1", title="Planning chat", date="2026-03-02",
                     entries=[Entry(k, t) for k, t in entries], fields=dict(fields))


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_create_then_append_keeps_existing_bytes(vault: Vault) -> None:
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats") as store:
        rel = store.put(_doc([("1", "- **Ana**: hello"), ("2", "- **Bo**: hi")],
                             participants=["Ana", "Bo"]), report)
    assert rel == "sources/chats/2026-03-02-planning-chat.md"
    first = (vault.root / rel).read_text()
    assert "connector: chats" in first and "source_id: sess-1" in first
    assert "content_hash: sha256:" in first
    body_before = first.split("---\n", 2)[2]

    # A person adds a note to the file; then one more turn arrives.
    path = vault.root / rel
    path.write_text(path.read_text() + "\nMy own remark.\n")
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats") as store:
        store.put(_doc([("1", "- **Ana**: hello"), ("2", "- **Bo**: hi"), ("3", "- **Ana**: bye")],
                       participants=["Ana", "Bo"]), report)
    after = path.read_text()
    assert report.appended == 1 and report.entries_added == 1
    assert after.split("---\n", 2)[2].startswith(body_before)
    assert "My own remark." in after and after.rstrip().endswith("- **Ana**: bye")
    assert after.count("- **Bo**: hi") == 1


def test_same_input_twice_changes_no_byte_and_no_mtime(vault: Vault) -> None:
    doc = _doc([("1", "- **Ana**: hello")], participants=["Ana"])
    with SourceStore(vault.root, "chats") as store:
        store.put(doc, SyncReport("chats"))
    before = _snapshot(vault.root / "sources")
    state_before = (vault.root / ".kenning/sync/chats.json").read_text()
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats") as store:
        store.put(doc, report)
    assert report.unchanged == 1 and report.created == report.appended == 0
    assert _snapshot(vault.root / "sources") == before
    # Only the last-sync time moves in the state file, never a source.
    state_after = json.loads((vault.root / ".kenning/sync/chats.json").read_text())
    assert state_after["sources"] == json.loads(state_before)["sources"]


def test_lost_state_does_not_duplicate_entries(vault: Vault) -> None:
    doc = _doc([("1", "- **Ana**: hello"), ("2", "- **Bo**: hi")])
    with SourceStore(vault.root, "chats") as store:
        rel = store.put(doc, SyncReport("chats"))
    os.unlink(vault.root / ".kenning/sync/chats.json")  # as if the crash came before the save
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats") as store:
        again = store.put(_doc([("1", "- **Ana**: hello"), ("2", "- **Bo**: hi"),
                                ("3", "- **Ana**: more")]), report)
    text = (vault.root / rel).read_text()
    assert again == rel and text.count("hello") == 1 and text.count("more") == 1


def test_same_name_different_source_gets_its_own_file(vault: Vault) -> None:
    report = SyncReport("chats")
    with SourceStore(vault.root, "chats") as store:
        a = store.put(_doc([("1", "x")]), report)
        other = _doc([("1", "y")])
        other.source_id = "sess-2"
        b = store.put(other, report)
    assert a != b and report.created == 2


def test_owner_direction() -> None:
    owner = Owner.from_config({"owner": {"emails": ["me@kestrel.dev"], "names": ["Alex Morgan"],
                                         "domains": ["kestrel.dev"]}})
    assert owner.direction(("Alex", "me@kestrel.dev"), [("S", "s@horizon.vc")]) == "sent"
    assert owner.direction(("S", "s@horizon.vc"), [("Alex", "me@kestrel.dev")]) == "received"
    assert owner.direction(("M", "m@kestrel.dev"), [("Alex", "me@kestrel.dev")]) == "internal"
    assert owner.direction(("S", "s@horizon.vc"), [("T", "t@x.com")]) == "external"
    assert Owner().direction(("S", "s@horizon.vc"), []) is None
