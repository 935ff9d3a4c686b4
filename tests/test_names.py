"""File names that are not UTF-8 (old archives, SMB mounts), and what must hold around them: the
index skips such a file and names it (escaped), everything else is indexed, synced and served;
``rebuild`` never leaves the vault without a searchable index; a write that landed never reports
failure. Real files with byte names on disk, real CLI runs, a real MCP client over stdio."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import anyio
import pytest

from kenning.answers import result_path
from kenning.api import Vault
from kenning.vault import frontmatter

KENNING = str(Path(sys.executable).parent / "kenning")
LATIN1_NOTE = b"notes/caf\xe9.md"  # "café.md" written by a Latin-1 system
SHOWN = "notes/caf\\xe9.md"

pytestmark = pytest.mark.skipif(sys.platform == "darwin",
                                reason="macOS refuses file names that are not UTF-8")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KENNING_VAULT"}
    # A UTF-8 locale with strict stdout, as on most desktops: UTF-8 mode would hide the bug.
    env.pop("PYTHONUTF8", None)
    return {**env, "KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0",
            "LC_ALL": "C.UTF-8", **extra}


def run(root: Path, *args: str, preexec: Any = None) -> subprocess.CompletedProcess[str]:
    """``kenning -C root ARGS`` in a subprocess (stdout and stderr decoded leniently)."""
    return subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          errors="replace", env=_env(), timeout=120, preexec_fn=preexec)


def put(root: Path, rel: bytes, data: bytes) -> None:
    """Write ``data`` to the vault path ``rel``, given as bytes (a name that may not be UTF-8)."""
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


@pytest.fixture
def hostile(vault: Vault) -> Path:
    """A vault with a good note and non-UTF-8 names: a note, an attachment, a folder."""
    root = vault.root
    put(root, b"notes/Good.md", "# Good\n\nThe lighthouse keeper logs storms. [[café]] "
        "![[picé.png]]\n".encode())
    put(root, LATIN1_NOTE, b"# Cafe\n\nThe espresso machine hums.\n")
    put(root, b"notes/pic\xe9.png", b"\x89PNG\r\n")
    put(root, b"ol\xe9/inside.md", b"# Inside\n\nHidden by its folder's name.\n")
    vault.close()
    return root


# -- the helpers ---------------------------------------------------------------------------------


def test_readable_name_escapes_bad_bytes_and_control_characters_only() -> None:
    from kenning.vault.fsio import readable_name, utf8_text

    assert readable_name(os.fsdecode(b"caf\xe9.md")) == "caf\\xe9.md"
    assert readable_name("line\nbreak\x07.md") == "line\\nbreak\\x07.md"
    assert readable_name("Café 東京.md") == "Café 東京.md"
    assert utf8_text("a\ud800b") == "a\\ud800b"
    assert utf8_text("keeps\nnewlines") == "keeps\nnewlines"


# -- the index -----------------------------------------------------------------------------------


def test_index_skips_names_that_are_not_utf8_and_names_them(hostile: Path) -> None:
    result = run(hostile, "index")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for shown in (SHOWN, "notes/pic\\xe9.png", "ol\\xe9/"):
        line = next((ln for ln in out.splitlines() if shown in ln), None)
        assert line is not None, out
        assert "not valid UTF-8" in line and "rename" in line
    assert "café.md" in out, "the likely intended name is suggested"
    found = run(hostile, "search", "lighthouse keeper")
    assert found.returncode == 0 and "notes/Good.md" in found.stdout, found

    data = json.loads(run(hostile, "index", "--json").stdout)
    assert SHOWN in {s["path"] for s in data["skipped"]}

    doctor = run(hostile, "doctor", "--json")
    findings = {f["check"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert any(SHOWN in item for item in findings["skipped"]["items"])
    assert findings["coverage"]["level"] == "ok", "a skipped name is not a stale index"


def test_a_rebuild_with_such_names_succeeds(hostile: Path) -> None:
    assert run(hostile, "index").returncode == 0
    result = run(hostile, "rebuild")
    assert result.returncode == 0, result.stderr
    assert "notes/Good.md" in run(hostile, "search", "lighthouse keeper").stdout


def test_names_with_newlines_long_names_and_look_alike_names_are_indexed(vault: Vault) -> None:
    root = vault.root
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    names = {"line\nbreak": "newline", "x" * 240: "longname", nfc: "composed", nfd: "decomposed",
             "Upper": "upper", "upper": "lower"}
    for stem, word in names.items():
        put(root, os.fsencode(f"notes/{stem}.md"), f"# T\n\nzeppelin {word} notes.\n".encode())
    vault.close()
    assert run(root, "index").returncode == 0
    with Vault(root) as v:
        paths = {p for (p,) in v.store.rows("SELECT path FROM pages")}
    assert {f"notes/{stem}.md" for stem in names} <= paths, "each file is its own page"
    out = run(root, "search", "zeppelin newline").stdout
    assert "notes/line\\nbreak.md#L3" in out, "a name's newline never breaks the line"
    assert run(root, "doctor").returncode == 0


# -- sync inputs ---------------------------------------------------------------------------------


MBOX = b"""From alice@example.com Mon Oct  6 09:00:00 2026
From: Alice Berg <alice@example.com>
To: Bob Stone <bob@example.com>
Subject: Harbour plans {n}
Date: Mon, 6 Oct 2026 09:00:00 +0000
Message-ID: <m{n}@example.com>

The harbour crane arrives on Friday.
"""
VTT = b"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice Berg>The harbour budget is approved.\n"
ICS = (b"BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:{n}\nDTSTART:20261006T090000Z\n"
       b"DTEND:20261006T100000Z\nSUMMARY:Harbour review {n}\nEND:VEVENT\nEND:VCALENDAR\n")


def _chat(n: int) -> bytes:
    line = {"type": "user", "message": {"role": "user", "content": f"harbour question {n}"},
            "sessionId": f"s{n}", "timestamp": "2026-10-06T09:00:00Z", "uuid": f"u{n}",
            "cwd": "/work"}
    return json.dumps(line).encode() + b"\n"


@pytest.mark.parametrize(("connector", "files"), [
    ("email", {b"good.mbox": MBOX.replace(b"{n}", b"1"),
               b"caf\xe9.mbox": MBOX.replace(b"{n}", b"2")}),
    ("meetings", {b"2026-10-06 good.vtt": VTT, b"2026-10-07 r\xe9union.vtt": VTT}),
    ("chats", {b"good.jsonl": _chat(1), b"s\xe9ance.jsonl": _chat(2)}),
    ("calendar", {b"good.ics": ICS.replace(b"{n}", b"1"),
                  b"f\xe9te.ics": ICS.replace(b"{n}", b"2")}),
])
def test_sync_reads_inputs_whose_names_are_not_utf8(vault: Vault, tmp_path: Path, connector: str,
                                                   files: dict[bytes, bytes]) -> None:
    # The input folder's own name is not UTF-8 either (a mounted share of an old archive).
    folder = os.path.join(os.fsencode(tmp_path), b"arch\xefve")
    for name, data in files.items():
        put(Path(os.fsdecode(folder)), name, data)
    root = vault.root
    vault.close()
    first = run(root, "sync", connector, os.fsdecode(folder))
    assert first.returncode == 0, first.stderr
    assert "2 new source file(s)" in first.stdout, first.stdout
    again = run(root, "sync", connector, os.fsdecode(folder), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == 2, again
    written = sorted((root / "sources").rglob("*.md"))
    assert len(written) == 2
    for path in written:
        assert os.fsencode(path).decode("utf-8")  # the vault's own names are UTF-8
        text = path.read_bytes().decode("utf-8")  # and so is what they hold
        assert frontmatter.read(text).error is None, path
    index = run(root, "index", "--json")
    assert json.loads(index.stdout)["problems"] == 0, index.stdout


# -- rebuild -------------------------------------------------------------------------------------


def _many_notes(root: Path, n: int = 300) -> None:
    for i in range(n):
        put(root, f"notes/n{i:03d}.md".encode(),
            f"# Note {i}\n\nThe lighthouse keeper {i} logs storms.\n\n{'filler ' * 400}\n".encode())


def _hits(root: Path, query: str) -> list[tuple[str, str]]:
    """Paths and cited lines a search finds (scores move with recall activity)."""
    data = json.loads(run(root, "search", query, "--json").stdout)
    return sorted((result_path(r), json.dumps(r["hits"], sort_keys=True)) for r in data["results"])


def test_a_rebuild_that_fails_part_way_leaves_the_old_index_searchable(vault: Vault) -> None:
    root = vault.root
    _many_notes(root)
    vault.close()
    assert run(root, "index").returncode == 0
    before = _hits(root, "lighthouse keeper 17")
    assert before
    size = (root / ".kenning" / "index.db").stat().st_size

    def full_disk() -> None:  # the new index outgrows what the disk has left
        resource.setrlimit(resource.RLIMIT_FSIZE, (size // 3, size // 3))

    failed = run(root, "rebuild", preexec=full_disk)
    assert failed.returncode == 1, failed
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and "old index is unchanged" in lines[0], failed.stderr
    assert _hits(root, "lighthouse keeper 17") == before
    left = sorted(p.name for p in (root / ".kenning").iterdir() if ".rebuild" in p.name)
    assert left == [], "no temp database is left behind"
    assert run(root, "rebuild").returncode == 0
    assert _hits(root, "lighthouse keeper 17") == before


def test_a_rebuild_swaps_under_an_open_reader(vault: Vault) -> None:
    root = vault.root
    _many_notes(root, 20)
    vault.index(embed=False)
    reader = Vault(root)  # another process's view (a `kenning serve`), kept open
    assert reader.search("lighthouse keeper 7")
    (root / "notes" / "n007.md").write_text("# Note 7\n\nThe foghorn sounds.\n")
    vault.rebuild(embed=False)
    assert any(r.path == "notes/n007.md" for r in reader.search("foghorn"))
    assert reader.store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # type: ignore[attr-defined]
    reader.close()


# -- writes that landed --------------------------------------------------------------------------


def _facts(root: Path, text: str) -> int:
    return sum(p.read_text().count(text) for p in (root / "people").glob("*.md"))


def test_record_in_a_vault_with_such_names_succeeds(hostile: Path) -> None:
    result = run(hostile, "record", "--entity", "Sarah Chen", "--type", "person",
                 "--obs", "Prefers tea", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["indexed"] is True
    assert _facts(hostile, "Prefers tea") == 1


def test_a_write_whose_follow_up_fails_reports_success_with_a_warning(vault: Vault) -> None:
    root = vault.root
    vault.close()
    (root / ".kenning" / "journal.jsonl").mkdir()  # the step after the page write fails
    result = run(root, "record", "--entity", "Sarah Chen", "--type", "person",
                 "--obs", "Prefers tea")
    assert result.returncode == 0, result.stderr
    assert "warning: written (people/" in result.stderr and "do not repeat" in result.stderr
    assert "Traceback" not in result.stderr
    as_json = run(root, "retain", "W", "Shipped the harbour release", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["written"], as_json.stdout
    assert _facts(root, "Prefers tea") == 1

    async def call() -> Any:
        from mcp import Client, StdioServerParameters

        client = Client(StdioServerParameters(
            command=KENNING, args=["-C", str(root), "serve", "--profile", "record"],
            env=_env()))
        async with client:
            return await client.call_tool("record", {"observations": [
                {"entity": "Sarah Chen", "text": "Walks to work"}]})

    answer = anyio.run(call)
    assert not answer.is_error, answer.content
    assert "written" in json.loads(answer.content[0].text)
    assert _facts(root, "Walks to work") == 1


def test_a_write_whose_reindex_fails_keeps_its_whole_answer(vault: Vault) -> None:
    root = vault.root
    vault.index(embed=False)
    vault.store.conn.execute("PRAGMA user_version = 99")  # type: ignore[attr-defined]  # newer
    vault.close()
    result = run(root, "record", "--entity", "Sarah Chen", "--type", "person",
                 "--obs", "Prefers tea", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["indexed"] is False and "rebuild" in data["note"]
    assert data["facts"][0]["text"] == "Prefers tea", "the answer says what was written"
    assert _facts(root, "Prefers tea") == 1


def test_mcp_serves_a_vault_with_such_names(hostile: Path) -> None:
    async def calls() -> list[Any]:
        from mcp import Client, StdioServerParameters

        client = Client(StdioServerParameters(
            command=KENNING, args=["-C", str(hostile), "serve", "--profile", "full"],
            env=_env()))
        async with client:
            return [await client.call_tool("search", {"query": "lighthouse keeper"}),
                    await client.call_tool("index", {}),
                    await client.call_tool("record", {"entities": [
                        {"name": "Harbour Crane", "type": "project",
                         "observations": ["Arrives on Friday"]}]})]

    search, index, record = anyio.run(calls)
    assert not search.is_error and "notes/Good.md" in search.content[0].text
    assert not index.is_error
    skipped = {s["path"] for s in json.loads(index.content[0].text)["skipped"]}
    assert SHOWN in skipped
    assert not record.is_error, record.content
    # Indexed at once: the answer says so only when it was not ("indexed": false + a note).
    assert "indexed" not in json.loads(record.content[0].text)
