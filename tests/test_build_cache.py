"""The build's caches (.kenning/build/cache/): never a different result, only a faster one.

Every test compares a build that had the caches with one that had none (the ground truth):
a page a person edited between builds — same size, same mtime — must be read again; damaged
or foreign cache files are ignored; the cache files are a function of the vault (same vault,
same bytes) and a dry run writes none.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from test_build import build, email, log, vault

from kenning.builder import cache
from kenning.builder import names as nm

CACHE = Path(".kenning") / "build" / "cache"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


def _two_builds(tmp_path: Path) -> Path:
    root = vault(tmp_path)
    email(root, "intro", "Intro", "2026-10-01",
          [("Sarah Chen", "sarah@horizon.vc", "from"), ("Alex Morgan", "alex@kestrel.dev", "to")],
          "Hi Alex, Priya Raman at Horizon will join.")
    email(root, "followup", "Follow-up", "2026-10-02",
          [("Tom Alvarez", "tom@globex.com", "from"), ("Alex Morgan", "alex@kestrel.dev", "to")],
          "Thanks.")
    build(root)
    assert (root / CACHE / "pages.json").is_file() and (root / CACHE / "names.json").is_file()
    return root


def _twin(root: Path, tmp_path: Path) -> Path:
    """A copy of the vault without the caches: what a build must do without them."""
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    shutil.rmtree(twin / CACHE)
    return twin


def test_a_page_edited_in_place_with_the_same_size_and_mtime_is_read_again(tmp_path: Path):
    root = _two_builds(tmp_path)
    page = root / "people" / "Sarah Chen.md"
    text = page.read_text(encoding="utf-8")
    assert "sarah@horizon.vc" in text
    st = os.stat(page)
    with page.open("r+", encoding="utf-8") as fh:  # same inode, same size
        fh.write(text.replace("sarah@horizon.vc", "sarah@horizon.io"))
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(page).st_size, os.stat(page).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    twin = _twin(root, tmp_path)
    for r in (root, twin):
        email(r, "new-address", "From my other address", "2026-10-03",
              [("S. Chen", "sarah@horizon.io", "from"), ("Alex Morgan", "alex@kestrel.dev", "to")])
        build(r)
    rows = [x for x in log(root) if x["source"].endswith("new-address.md")
            and x["kind"] == "person" and x["email"] == "sarah@horizon.io"]
    assert rows and rows[0]["page"] == "people/Sarah Chen.md", rows
    assert _files(root) == _files(twin)


def test_damaged_and_foreign_caches_are_ignored(tmp_path: Path):
    root = _two_builds(tmp_path)
    twin = _twin(root, tmp_path)
    pages = json.loads((root / CACHE / "pages.json").read_text(encoding="utf-8"))
    for rel in pages["entries"]:
        key = pages["entries"][rel][0]
        pages["entries"][rel] = [key, ["person", 7, "not", "a", "valid", "entry", 0, 0, 0]]
    (root / CACHE / "pages.json").write_text(json.dumps(pages), encoding="utf-8")
    names = json.loads((root / CACHE / "names.json").read_text(encoding="utf-8"))
    names["entries"] = {n: ["x", 1] for n in names["entries"]}  # malformed: parsed again
    (root / CACHE / "names.json").write_text(json.dumps(names), encoding="utf-8")
    for r in (root, twin):
        email(r, "third", "Third", "2026-10-04",
              [("Priya Raman", "priya@horizon.vc", "from"), ("Sarah Chen", "sarah@horizon.vc",
                                                             "cc")], "See you.")
        build(r)
    assert _files(root) == _files(twin)
    # Another fingerprint (other code) or a file that is no JSON: no entries at all.
    (root / CACHE / "pages.json").write_text('{"fingerprint": "other", "entries": {"a": 1}}',
                                             encoding="utf-8")
    assert cache.load(root, "pages") == {}
    (root / CACHE / "names.json").write_bytes(b"\x00\x00{")
    assert cache.load(root, "names") == {}


def test_cached_names_parse_as_the_parser_does():
    for name in ("Kean, Steven J", "Dr. Kim", "S. Chen", "Jürgen Müller", "山田花子",
                 "BENJAMIN MERCER", "Sarah"):
        entry = nm.person_entry(nm._parse_person(name))
        assert nm._person_from(entry) == nm._parse_person(name)
        assert nm.person_entry(nm._person_from(entry)) == entry
    alt = nm._parse_person("Jürgen Müller")
    assert alt is not None and alt.alt is not None
    assert nm._person_from(nm.person_entry(alt)).alt == alt.alt


def test_cache_files_depend_on_the_vault_only_and_a_dry_run_writes_none(tmp_path: Path):
    root = _two_builds(tmp_path)
    twin = _twin(root, tmp_path)
    for r in (root, twin):
        email(r, "fourth", "Fourth", "2026-10-05",
              [("Tom Alvarez", "tom@globex.com", "from"), ("Alex Morgan", "alex@kestrel.dev",
                                                          "to")], "Globex is in.")
    before = _files(twin)
    build(twin, "--dry-run")
    assert _files(twin) == before and not (twin / CACHE).exists()
    build(root)
    build(twin)  # no caches to start from: they are made again, byte for byte
    assert _files(root) == _files(twin)
    again = _files(root)
    build(root)
    assert _files(root) == again
