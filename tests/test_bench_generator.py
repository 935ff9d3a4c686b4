"""bench/gen_vault.py: deterministic, well-formed, self-consistent benchmark vaults."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kenning import vocabulary

GEN = Path(__file__).resolve().parents[1] / "bench" / "gen_vault.py"
N = 30

_spec = importlib.util.spec_from_file_location("gen_vault", GEN)
gen_vault = importlib.util.module_from_spec(_spec)
sys.modules["gen_vault"] = gen_vault
_spec.loader.exec_module(gen_vault)

CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
MDLINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FACT = re.compile(r"^- ([a-z_]+):: ", re.M)


def words(text: str) -> int:
    """Whitespace words, two CJK characters counting as one (the generator's documented rule)."""
    cjk = len(CJK.findall(text))
    return len(CJK.sub(" ", text).split()) + (cjk + 1) // 2


def snapshot(root: Path) -> dict[str, bytes]:
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    for suffix in (".queries.json", ".touch.json"):
        files[suffix] = Path(f"{root}{suffix}").read_bytes()
    return files


def notes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text("utf-8")
            for p in sorted(root.rglob("*.md"))}


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "vault"
    gen_vault.generate(N, out, seed=42)
    return out


def test_same_seed_gives_byte_identical_output(vault, tmp_path):
    # A separate process with another hash seed: nothing may depend on set or dict hashing.
    again = tmp_path / "again"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, str(GEN), "--n", str(N), "--out", str(again), "--seed", "42"],
                   check=True, env=env, capture_output=True)
    assert snapshot(again) == snapshot(vault)

    other = tmp_path / "other"
    gen_vault.generate(N, other, seed=43)
    assert snapshot(other) != snapshot(vault)


def test_note_count_and_kinds(vault):
    texts = notes(vault)
    assert len(texts) == N
    folders = {path.split("/")[0] for path in texts}
    assert folders == {"people", "organizations", "projects", "meetings", "topics"}


def test_word_counts_within_bounds(vault):
    counts = {path: words(text) for path, text in notes(vault).items()}
    out_of_range = {p: c for p, c in counts.items() if not 200 <= c <= 800}
    assert not out_of_range


def test_every_link_target_exists(vault):
    texts = notes(vault)
    stems = {Path(p).stem for p in texts}
    paths = {p.removesuffix(".md") for p in texts}
    assert len(stems) == len(texts), "note titles must be unique across folders"
    links = 0
    for path, text in texts.items():
        body = FENCE.sub("", text)
        for target in WIKILINK.findall(body):
            links += 1
            assert target in stems or target in paths, f"{path}: [[{target}]] does not exist"
        for href in MDLINK.findall(body):
            if "://" in href:
                continue
            resolved = (vault / path).parent / urllib.parse.unquote(href)
            assert resolved.resolve().is_file(), f"{path}: ({href}) does not exist"
    assert links > 10 * N


def test_frontmatter_and_facts_use_the_vocabulary(vault):
    yaml = YAML(typ="safe")
    facts = 0
    for path, text in notes(vault).items():
        match = re.match(r"---\n(.*?)\n---\n", text, re.S)
        assert match, f"{path}: no frontmatter"
        meta = yaml.load(match.group(1))
        assert meta["type"] in vocabulary.ENTITY_TYPES
        assert vocabulary.TYPE_FOLDERS[meta["type"]] == path.split("/")[0]
        assert meta["domain"] in vocabulary.DOMAINS
        if meta["type"] == "meeting":
            assert meta["attendees"] and str(meta["date"]) == path.split("/")[1][:10]
        for relation in FACT.findall(text):
            facts += 1
            assert relation in vocabulary.RELATION_TYPES, f"{path}: {relation}"
    assert facts > 0


def test_planted_targets_hold_their_rare_word(vault):
    texts = notes(vault)
    queries = json.loads(Path(f"{vault}.queries.json").read_text("utf-8"))
    assert len(queries["quality"]) == 10
    assert len({q["target"] for q in queries["quality"]}) == 10
    for item in queries["quality"]:
        rare = item["rare"]
        assert re.search(rf"\b{rare}\b", item["query"])
        holders = [p for p, t in texts.items() if re.search(rf"\b{rare}\b", t, re.I)]
        assert holders == [item["target"]], f"{rare!r} must occur only in its target"
        assert item["fact"] in texts[item["target"]]
    stop = {"a", "an", "the", "to", "of", "in", "on", "at", "and", "who", "which", "our", "that",
            "whose", "without"}
    for item in queries["paraphrase"]:
        fact = set(re.findall(r"\w+", item["fact"].lower())) - stop
        query = set(re.findall(r"\w+", item["query"].lower())) - stop
        assert not fact & query, f"paraphrase shares {fact & query}"
    assert len(queries["latency"]) == 50 and all(q.strip() for q in queries["latency"])


def test_touch_list(vault):
    touch = json.loads(Path(f"{vault}.touch.json").read_text("utf-8"))
    queries = json.loads(Path(f"{vault}.queries.json").read_text("utf-8"))
    planted = {q["target"] for q in queries["quality"]}
    assert len(touch) == len(set(touch)) == 10
    assert all((vault / p).is_file() for p in touch)
    assert not set(touch) & planted


def test_some_notes_are_japanese(tmp_path):
    out = tmp_path / "v"
    info = gen_vault.generate(400, out, seed=42)
    japanese = [t for t in notes(out).values() if len(CJK.findall(t)) > 200]
    assert info["japanese"] == len(japanese)
    assert 0.01 * 400 <= len(japanese) <= 0.06 * 400


def test_refuses_tiny_vaults_and_existing_output(tmp_path):
    with pytest.raises(ValueError):
        gen_vault.generate(5, tmp_path / "tiny")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.md").write_text("mine")
    with pytest.raises(SystemExit):
        gen_vault.main(["--n", "20", "--out", str(tmp_path / "busy")])
    assert (tmp_path / "busy" / "keep.md").read_text() == "mine"
