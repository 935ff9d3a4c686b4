"""The RAWThink importer on MCP-memory JSONL as found in public repositories: ``_type`` or no
type at all, ``from_entity``/``to_entity``, observations as objects, dates as ISO text or unix
seconds/milliseconds (hand-written fixtures in tests/fixtures/import/rawthink-wild, see its
README). Round trips read the vault's pages back: every entity, relation and observation of the
input is found there, and every line that is not is in the report's skipped list with a reason.
The last test does the same on the real files when their repositories are mirrored."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kenning import vocabulary
from kenning.api import Vault
from kenning.errors import VocabularyError
from kenning.transfer import rawthink
from kenning.vault.page import Page, parse_page

WILD = Path(__file__).parent / "fixtures/import/rawthink-wild"
MIRRORS = Path("/work/.mirror")
PUBLIC = ("maithanhduyan/memory-graph", "jasonpaulso/mcp-think-tank", "stevejones45/memory")


def _kind(item: dict[str, Any]) -> str | None:
    kind = item.get("type", item.get("_type"))
    if kind is None and "entityType" in item and "name" in item:
        return "entity"
    if kind is None and "relationType" in item:
        return "relation"
    return kind


def _expected(path: Path) -> tuple[dict[str, list[str]], list[tuple[str, str, str]],
                                   set[int]]:
    """What the file holds, read independently of the importer: each entity's observation
    texts, each relation, and the lines that are neither (or hold an observation without
    text)."""
    entities: dict[str, list[str]] = {}
    relations: list[tuple[str, str, str]] = []
    odd: set[int] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        kind = _kind(item)
        if kind == "entity":
            texts = entities.setdefault(item["name"], [])
            for obs in item.get("observations") or []:
                text = obs if isinstance(obs, str) else obs.get("text") or obs.get("content")
                if text:
                    texts.append(" ".join(text.split()))
                else:
                    odd.add(number)
        elif kind == "relation":
            relations.append((item.get("from", item.get("from_entity")), item["relationType"],
                              item.get("to", item.get("to_entity"))))
        else:
            odd.add(number)
    return entities, relations, odd


def _pages(root: Path) -> dict[str, Page]:
    """The vault's pages by title, and by their H1 when it names them otherwise (a name with
    a ``:`` has a file name without it)."""
    out = {}
    for p in root.rglob("*.md"):
        rel = p.relative_to(root).as_posix()
        if not rel.startswith("sources/"):
            page = parse_page(p.read_text(encoding="utf-8"), rel)
            out[page.title] = page
            if page.heading_alias:
                out.setdefault(page.heading_alias, page)
    return out


def _folded(rel: str) -> str:
    try:
        return vocabulary.relation(rel)
    except VocabularyError:
        return "related_to"


def _assert_all_in_vault(root: Path, path: Path, report: dict[str, Any]) -> None:
    """Every entity, observation and relation of ``path`` is on the vault's pages; every line
    holding something else is named in the report's skipped list."""
    entities, relations, odd = _expected(path)
    pages = _pages(root)
    titles: dict[str, set[str]] = {}     # link target (file stem or path) → names
    for page in pages.values():
        for target in (Path(page.path).stem, page.path.rsplit(".", 1)[0]):
            titles.setdefault(target, set()).update({page.title, page.heading_alias or page.title})
    for name, texts in entities.items():
        page = pages[" ".join(name.split())]
        have = {f.text for f in page.facts if not f.relation}
        missing = [t for t in texts if t not in have]
        assert not missing, (name, missing)
    for src, rel, dst in relations:
        facts = pages[src].facts
        assert any(f.relation == _folded(rel) and dst in titles.get(f.target or "", {f.target})
                   and (f.relation == rel or f"(rawthink: {rel})" in f.text)
                   for f in facts), (src, rel, dst)
    skipped = {s["where"] for s in report["skipped"]}
    for number in odd:
        assert f"{path.name}:{number}" in skipped, (number, report["skipped"])


@pytest.mark.parametrize("name", ["memory-graph.jsonl", "think-tank.jsonl",
                                  "from-entity.jsonl"])
def test_round_trip_each_shape(name: str, tmp_path: Path) -> None:
    path = WILD / name
    got = rawthink.read(path)
    assert not got.problems
    entities, relations, _ = _expected(path)
    assert [e.name for e in got.entities] == list(entities)
    v, _ = Vault.init(tmp_path / "v")
    report = v.import_from("rawthink", path)
    v.close()
    _assert_all_in_vault(v.root, path, report)
    observations = sum(len(t) for t in entities.values())
    assert report["written"]["facts"] == observations
    assert report["written"]["relations"] == len(set(relations))


def _reasons(report: dict[str, Any]) -> dict[str, str]:
    return {s["where"]: s["reason"] for s in report["skipped"]}


def test_untyped_lines_with_unix_seconds(vault: Vault) -> None:
    report = vault.import_from("rawthink", WILD / "memory-graph.jsonl")
    pages = _pages(vault.root)
    harbor = pages["Harbor"]
    assert harbor.type == "project"
    assert str(harbor.frontmatter["created"]) == "2026-01-10"        # createdAt 1768061136
    assert harbor.frontmatter["createdBy"] == "Lena Ortiz"
    assert harbor.frontmatter["updatedAt"] == "2026-01-13T14:18:36"  # updatedAt 1768313916
    bug = pages["Bug: Lost Writes"]
    assert bug.frontmatter["imported_type"] == "Bug"
    to_bug = next(f for f in harbor.facts if f.relation and "has_bug" in f.text)
    assert to_bug.recorded == "2026-01-11"                           # createdAt 1768108015
    reasons = _reasons(report)
    assert "not the keys of an entity" in reasons["memory-graph.jsonl:7"]
    assert "'createdBy'" in reasons["memory-graph.jsonl:6"] and "(1 relation, line" in \
        reasons["memory-graph.jsonl:6"]


def test_underscore_type_observation_objects_and_milliseconds(vault: Vault) -> None:
    report = vault.import_from("rawthink", WILD / "think-tank.jsonl")
    pages = _pages(vault.root)
    tide = pages["Tide Model"]
    facts = {f.text: f for f in tide.facts}
    assert facts["Predict tides from the lunar phase"].recorded == "2025-05-13"   # ms
    assert facts["Needs station data"].recorded == "2025-05-12"
    assert facts["Check it against harmonic constants"].recorded is None
    assert tide.frontmatter["_savedAt"] == "2025-05-13T14:03:20"     # unix seconds
    assert pages["Think Tank"].frontmatter["_savedAt"] == "2025-05-13T14:03:13"
    assert any(f.relation == "uses" for f in tide.facts)
    skipped = [s["reason"] for s in report["skipped"] if s["where"] == "think-tank.jsonl:2"]
    assert any("observations[2] has no text" in r for r in skipped)
    assert any("'last tuesday' is not a date" in r for r in skipped)
    reasons = _reasons(report)
    assert reasons["think-tank.jsonl:4"] == "unknown item type 'task'"
    assert "observation field 'version'" in reasons["think-tank.jsonl:1"]
    assert "2 observations" in reasons["think-tank.jsonl:1"]


def test_from_entity_relations_and_weight(vault: Vault) -> None:
    report = vault.import_from("rawthink", WILD / "from-entity.jsonl")
    pages = _pages(vault.root)
    assert pages["Memory System"].frontmatter["weight"] == 7
    assert pages["Sarah Kim"].type == "person"
    assert "(rawthink: works_on)" in next(f.text for f in pages["Sarah Kim"].facts
                                          if f.relation)
    assert "again; once" in _reasons(report)["from-entity.jsonl:6"]
    assert report["written"]["relations"] == 2


@pytest.mark.parametrize(("value", "want"), [
    ("2025-05-11T15:54:05.242Z", "2025-05-11T15:54:05"),
    ("2025-05-11", "2025-05-11"),
    ("2025-05-11 09:30", "2025-05-11T09:30"),
    (1768061136, "2026-01-10T16:05:36"),
    (1747140000000, "2025-05-13T12:40:00"),
    ("1768061136", "2026-01-10T16:05:36"),
    (1768061136.5, "2026-01-10T16:05:36"),
    ("last tuesday", None), (True, None), ("", None), (None, None), (10**20, None),
])
def test_dates(value: Any, want: str | None) -> None:
    assert rawthink._date(value) == want


def test_other_keys_are_kept_and_odd_observations_reported(tmp_path: Path) -> None:
    p = tmp_path / "memory.jsonl"
    p.write_text(json.dumps({
        "type": "entity", "name": "X", "entityType": "thing", "status": "open",
        "tags": ["a", "b"], "observations": [42, {"text": "kept", "score": 3},
                                             {"content": "also kept"}]}) + "\n"
        + json.dumps({"name": "Y", "entityType": "thing", "observations": "one string"})
        + "\n", encoding="utf-8")
    got = rawthink.read(p)
    x, y = got.entities
    assert x.frontmatter == {"rawthink_status": "open", "tags": ["a", "b"]}
    assert [f.text for f in x.facts] == ["kept", "also kept"]
    reasons = [s.reason for s in got.skipped]
    assert any("observations[0] has no text (it is int)" in r for r in reasons)
    assert any("observation field 'score'" in r for r in reasons)
    assert any("observations is not a list (str)" in r for r in reasons)
    assert not y.facts


def _mirror_file(repo: str, tmp_path: Path) -> Path:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir() or shutil.which("git") is None:
        pytest.skip(f"{repo} is not mirrored under {MIRRORS}")
    shown = subprocess.run(["git", "-C", str(git_dir), "show", "HEAD:memory.jsonl"],
                           capture_output=True, check=False)
    if shown.returncode != 0:
        pytest.skip(f"{repo}: no memory.jsonl at HEAD of the mirror")
    path = tmp_path / f"{repo.split('/')[0]}.jsonl"
    path.write_bytes(shown.stdout)
    return path


@pytest.mark.parametrize("repo", PUBLIC)
def test_public_files_when_mirrored(repo: str, tmp_path: Path) -> None:
    path = _mirror_file(repo, tmp_path)
    got = rawthink.read(path)
    assert not got.problems, [str(p) for p in got.problems[:5]]
    v, _ = Vault.init(tmp_path / "v")
    report = v.import_from("rawthink", path)
    v.close()
    _assert_all_in_vault(v.root, path, report)
    entities, relations, _ = _expected(path)
    assert report["read"]["entities"] == len(entities)
    assert report["written"]["facts"] == sum(len(set(t)) for t in entities.values())
    assert report["written"]["relations"] == len(set(relations))
