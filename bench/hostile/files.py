"""Hostile files in the vault itself: names, bytes and links that must not stop the index."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from hostile import Case, Run, base_env, kenning_cmd, one_line_naming


def _binary_named_md(root: Path) -> None:
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "photo.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
    (root / "notes" / "Good.md").write_text("# Good\n\nThe lighthouse keeper logs storms.\n")


def _binary_check(root: Path, runs: list[Run]) -> list[str]:
    index, search = runs
    problems = []
    if "photo.md" not in index.output:
        problems.append(f"index does not name notes/photo.md: {index.output[-300:]!r}")
    if "Good.md" not in search.stdout:
        problems.append(f"the good note is not found: {search.stdout[-300:]!r}")
    return problems


CASES = [
    Case("files", "binary-content-named-md", _binary_named_md,
         (("index",), ("search", "lighthouse keeper")), _binary_check),
]


# -- names that are not UTF-8, and other hostile names ------------------------------------------


def _put(root: Path, rel: bytes, data: bytes) -> None:
    """Write ``data`` at vault path ``rel`` given as bytes: a name that may not be UTF-8."""
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


GOOD = b"# Good\n\nThe lighthouse keeper logs storms. [[caf\xc3\xa9]] ![[pic\xc3\xa9.png]]\n"


def _latin1_note(root: Path) -> None:
    _put(root, b"notes/Good.md", GOOD)
    _put(root, b"notes/caf\xe9.md", b"# Cafe\n\nThe espresso machine hums.\n")


def _latin1_attachment(root: Path) -> None:
    _put(root, b"notes/Good.md", GOOD)
    _put(root, b"notes/pic\xe9.png", b"\x89PNG\r\n\x1a\n")


def _latin1_folder(root: Path) -> None:
    _put(root, b"notes/Good.md", GOOD)
    _put(root, b"archiv\xe9/old.md", b"# Old\n\nFrom the old archive.\n")


def _skipped_and_found(shown: str) -> Callable[[Path, list[Run]], list[str]]:
    def check(root: Path, runs: list[Run]) -> list[str]:
        index, search, doctor = runs
        problems = [f"{' '.join(r.args)}: exit {r.returncode}: {r.output[-300:]!r}"
                    for r in runs if r.returncode != 0]
        problems += one_line_naming(index, shown, "not valid UTF-8", "rename")
        problems += one_line_naming(doctor, shown, "not valid UTF-8")
        if "notes/Good.md" not in search.stdout:
            problems.append(f"the good note is not found: {search.stdout[-300:]!r}")
        return problems
    return check


def _sync_input_named_latin1(root: Path) -> None:
    folder = os.path.join(os.fsencode(root.parent), b"r\xe9unions")
    vtt = b"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Alice Berg>The harbour budget is %s.\n"
    _put(Path(os.fsdecode(folder)), b"2026-10-06 standup.vtt", vtt % b"approved")
    _put(Path(os.fsdecode(folder)), b"2026-10-07 r\xe9union.vtt", vtt % b"signed")


def _sync_check(root: Path, runs: list[Run]) -> list[str]:
    sync, again, index, search = runs
    problems = [f"{' '.join(r.args)}: exit {r.returncode}: {r.output[-300:]!r}"
                for r in runs if r.returncode != 0]
    if "2 new source file(s)" not in sync.stdout:
        problems.append(f"not both meetings synced: {sync.output[-300:]!r}")
    if "2 unchanged" not in again.stdout:
        problems.append(f"a second sync is not a no-op: {again.output[-300:]!r}")
    if "Problems: 0" not in index.stdout:
        problems.append(f"the synced sources do not index cleanly: {index.output[-300:]!r}")
    if search.stdout.count("sources/meetings/") < 2:
        problems.append(f"the meetings are not both found: {search.stdout[-300:]!r}")
    for path in (root / "sources").rglob("*.md"):
        try:
            os.fsencode(path).decode("utf-8")
            path.read_bytes().decode("utf-8")
        except UnicodeError:
            problems.append(f"a source that is not UTF-8 was written: {path!r}")
    return problems


def _rebuild_blocked(root: Path) -> None:
    _put(root, b"notes/Good.md", GOOD)
    # Run first so there is an old index; the thing in the way of the new one comes after.
    subprocess.run([*kenning_cmd(), "-C", str(root), "index"], capture_output=True,
                   env=base_env(), check=True)
    (root / ".kenning" / "index.db.rebuild-wal").mkdir()


def _rebuild_over_latin1(root: Path) -> None:
    _put(root, b"notes/Good.md", GOOD)
    subprocess.run([*kenning_cmd(), "-C", str(root), "index"], capture_output=True,
                   env=base_env(), check=True)
    _put(root, b"notes/caf\xe9.md", b"# Cafe\n\nThe espresso machine hums.\n")


def _rebuild_over_check(root: Path, runs: list[Run]) -> list[str]:
    rebuild, search = runs
    problems = one_line_naming(rebuild, "notes/caf\\xe9.md", "not valid UTF-8")
    if rebuild.returncode != 0:
        problems.append(f"the rebuild failed: {rebuild.output[-300:]!r}")
    if "notes/Good.md" not in search.stdout:
        problems.append(f"nothing is searchable after the rebuild: {search.output[-300:]!r}")
    return problems


def _rebuild_check(root: Path, runs: list[Run]) -> list[str]:
    rebuild, search = runs
    problems = one_line_naming(rebuild, "rebuild failed", "old index is unchanged")
    if rebuild.returncode == 0:
        problems.append("the rebuild reported success")
    if "notes/Good.md" not in search.stdout:
        problems.append(f"the old index is gone: {search.output[-300:]!r}")
    return problems


def _odd_names(root: Path) -> None:
    import unicodedata

    nfc, nfd = (unicodedata.normalize(f, "Café") for f in ("NFC", "NFD"))
    for stem, word in (("line\nbreak", "newline"), ("x" * 250, "longname"), (nfc, "composed"),
                       (nfd, "decomposed"), ("Upper", "upper"), ("upper", "lower"),
                       ("tab\tbell\x07", "control")):
        _put(root, os.fsencode(f"notes/{stem}.md"), f"# T\n\nzeppelin {word}.\n".encode())


def _odd_check(root: Path, runs: list[Run]) -> list[str]:
    index, search, _doctor = runs
    problems = [f"{' '.join(r.args)}: exit {r.returncode}: {r.output[-300:]!r}"
                for r in runs if r.returncode != 0]
    if "8 added" not in index.stdout:  # the seven and memory.md
        problems.append(f"not every odd name became a page: {index.stdout[-300:]!r}")
    if search.stdout.count("zeppelin") < 7:
        problems.append(f"not every page is found: {search.stdout[-400:]!r}")
    problems += one_line_naming(search, "notes/line\\nbreak.md#L3")
    problems += one_line_naming(search, "notes/tab\\tbell\\x07.md#L3")
    return problems


def _record_check(root: Path, runs: list[Run]) -> list[str]:
    (record,) = runs
    try:
        answer = json.loads(record.stdout)
        data = json.loads(answer["text"])
    except (ValueError, KeyError):
        return [f"record did not answer: {record.output[-300:]!r}"]
    problems = [f"record failed: {answer['text'][:300]!r}"] if answer["error"] else []
    if data.get("indexed") is False or "facts" not in data:  # MCP says "indexed" only when not
        problems.append(f"record was not indexed: {answer['text'][:300]!r}")
    pages = list((root / "projects").glob("*.md"))
    if len(pages) != 1 or pages[0].read_text().count("Arrives on Friday") != 1:
        problems.append(f"the observation is not written exactly once: {pages!r}")
    return problems


SEARCH = ("search", "lighthouse keeper")
CASES += [
    Case("files", "note-name-not-utf8", _latin1_note, (("index",), SEARCH, ("doctor",)),
         _skipped_and_found("notes/caf\\xe9.md")),
    Case("files", "attachment-name-not-utf8", _latin1_attachment,
         (("index",), SEARCH, ("doctor",)), _skipped_and_found("notes/pic\\xe9.png")),
    Case("files", "folder-name-not-utf8", _latin1_folder, (("index",), SEARCH, ("doctor",)),
         _skipped_and_found("archiv\\xe9/")),
    Case("files", "sync-input-names-not-utf8", _sync_input_named_latin1,
         (("sync", "meetings", os.fsdecode(b"{root}/../r\xe9unions")),
          ("sync", "meetings", os.fsdecode(b"{root}/../r\xe9unions")), ("index",),
          ("search", "harbour budget")), _sync_check),
    Case("files", "rebuild-with-a-name-not-utf8", _rebuild_over_latin1,
         (("rebuild",), SEARCH), _rebuild_over_check),
    Case("files", "rebuild-fails-keeps-old-index", _rebuild_blocked,
         (("rebuild",), SEARCH), _rebuild_check),
    Case("files", "newline-long-lookalike-names", _odd_names,
         (("index",), ("search", "zeppelin", "--limit", "20"), ("doctor",)), _odd_check),
    Case("files", "record-beside-a-name-not-utf8", _latin1_note,
         (("@mcp", "record", json.dumps({"entities": [
             {"name": "Harbour Crane", "type": "project",
              "observations": ["Arrives on Friday"]}]})),), _record_check),
]
