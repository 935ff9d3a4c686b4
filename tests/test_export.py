"""``kenning export``: a real vault (the sample, plus attachments, a file that is not UTF-8, a
symlink out of the vault, a pipe, tool state) indexed, exported, and the archive read back with
the standard library only: every vault file byte for byte with its SHA-256, the index's facts,
links, items and vectors, nothing of the index database, locks or temp files, and no DEST left
by a failure."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from kenning.api import Vault
from kenning.errors import KenningError
from kenning.sample import copy_sample
from kenning.vault.writes import write_lock

LATIN1 = "notes/latin1.md"  # a Markdown file whose bytes are not UTF-8
BLOB = "attachments/diagram.bin"
KNOWN_FACT = "topics/Caching.md#L18-L18"  # informs → Replay Engine, in the sample vault


def _build(root: Path, outside: Path) -> Vault:
    """The sample vault with the awkward files an export meets, indexed (no vectors)."""
    v, _ = Vault.init(copy_sample(root))
    (root / "notes").mkdir(exist_ok=True)
    (root / LATIN1).write_bytes("# Caf\xe9\n\nna\xefve r\xe9sum\xe9\n".encode("latin-1"))
    (root / "attachments").mkdir()
    (root / BLOB).write_bytes(bytes(range(256)) * 8)
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nnot part of the vault\n")
    os.symlink(outside / "secret.md", root / "notes" / "outside.md")
    os.symlink(outside, root / "linked")
    os.symlink(root / "topics" / "Caching.md", root / "notes" / "caching-link.md")
    os.mkfifo(root / "notes" / "pipe.md")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "notes" / ".draft.md.host_123-abcdefgh.tmp").write_text("half a write")
    (root / ".kenning" / "tokens.json").write_text('{"tokens": []}')
    (root / ".kenning" / "manual-links.jsonl").write_text("")
    v.index(embed=False)
    return v


@pytest.fixture
def built(tmp_path: Path):
    v = _build(tmp_path / "sample", tmp_path / "elsewhere")
    yield v
    v.close()


def _members(archive: Path) -> dict[str, bytes]:
    """Name → bytes of every regular member (tar.gz or zip), read with the standard library."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            return {n: z.read(n) for n in z.namelist()}
    with tarfile.open(archive, "r:gz") as tar:
        out = {}
        for m in tar.getmembers():
            assert m.isfile(), f"{m.name} is not a regular member"
            fh = tar.extractfile(m)
            assert fh is not None
            out[m.name] = fh.read()
        return out


def _jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def _expected_files(root: Path) -> set[str]:
    """What the archive must hold of the vault, found independently: every regular file, not
    under a version-control folder, not a symlink, not Kenning's database, lock, temp or token
    file."""
    out = set()
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        for name in names:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink() or not full.is_file() or name.endswith(".tmp"):
                continue
            if rel.startswith(".kenning/") and (name.startswith("index.db")
                                                or name.endswith(".lock")
                                                or name == "tokens.json"):
                continue
            out.add(rel)
    return out


def test_every_vault_file_byte_for_byte_with_its_sha256(built: Vault, tmp_path: Path) -> None:
    dest = tmp_path / "out" / "vault.tar.gz"
    dest.parent.mkdir()
    report = built.export(dest)
    members = _members(dest)
    manifest = json.loads(members["kenning/manifest.json"])
    expected = _expected_files(built.root)
    assert {LATIN1, BLOB, ".kenning/config.yaml", ".kenning/manual-links.jsonl"} <= expected
    assert set(manifest["files"]) == expected
    assert {n.removeprefix("vault/") for n in members if n.startswith("vault/")} == expected
    for rel, entry in manifest["files"].items():
        data = (built.root / rel).read_bytes()
        assert members[f"vault/{rel}"] == data, rel
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}, rel
    assert members[f"vault/{LATIN1}"] == (built.root / LATIN1).read_bytes()  # not UTF-8
    assert report["counts"]["files"] == len(expected) == manifest["counts"]["files"]
    assert report["bytes"] == dest.stat().st_size
    assert manifest["format"] == "kenning-export" and manifest["format_version"] == 1
    assert manifest["exported_at"].endswith("Z") and manifest["index"]["backend"] == "sqlite"


def test_no_index_database_lock_temp_token_or_outside_file(built: Vault, tmp_path: Path) -> None:
    dest = tmp_path / "v.tar.gz"
    report = built.export(dest)
    names = set(_members(dest))
    assert (built.root / ".kenning" / "index.db").exists()
    for name in names:
        base = name.rsplit("/", 1)[-1]
        assert not base.startswith("index.db") and not base.endswith((".lock", ".tmp")), name
        assert not name.startswith("vault/.git/") and name != "vault/.kenning/tokens.json"
    secret = (tmp_path / "elsewhere" / "secret.md").read_bytes()
    assert all(secret not in data for data in _members(dest).values())
    assert not any(n.startswith(("vault/linked", "vault/notes/outside")) for n in names)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert "outside the vault" in skipped["notes/outside.md"]
    assert "outside the vault" in skipped["linked/"]
    assert "inside the vault" in skipped["notes/caching-link.md"]
    assert "not a regular file" in skipped["notes/pipe.md"]
    manifest = json.loads(_members(dest)["kenning/manifest.json"])
    assert manifest["skipped"] == report["skipped"]


def test_facts_links_items_pages_and_timeline_are_the_index(built: Vault, tmp_path: Path
                                                             ) -> None:
    dest = tmp_path / "v.tgz"
    built.export(dest)
    members = _members(dest)
    store = built.store
    facts = _jsonl(members["kenning/facts.jsonl"])
    assert len(facts) == store.scalar("SELECT count(*) FROM facts") > 50
    known = [f for f in facts if f["citation"] == KNOWN_FACT]
    assert len(known) == 1
    assert (known[0]["relation"], known[0]["target"], known[0]["entity"]) == (
        "informs", "Replay Engine", "Caching")
    line = (built.root / "topics/Caching.md").read_text().splitlines()[17]
    assert "Replay Engine" in line
    shown = built.show("Caching")["facts"]
    assert sorted(f["citation"] for f in shown) == sorted(
        f["citation"] for f in facts if f["page"] == "topics/Caching.md")

    links = _jsonl(members["kenning/links.jsonl"])
    assert len(links) == store.scalar("SELECT count(*) FROM links") > 100
    out = [e for e in built.show("Caching")["links_out"]]
    mine = {(e["rel"], e["target"], e["citation"]) for e in links
            if e["source"] == "topics/Caching.md" and e["resolution"] == "resolved"}
    for edge in out:
        assert (edge["rel"], edge["path"], edge["citation"]) in mine, edge
    assert any(e["resolution"] == "unresolved" and e["target"] is None and e["target_ref"]
               for e in links)

    items = _jsonl(members["kenning/items.jsonl"])
    assert len(items) == store.scalar("SELECT count(*) FROM items") > 5
    assert {i["key"] for i in items} == {
        r[0] for r in store.rows("SELECT key FROM items")}
    for item in items:
        path, lines = item["citation"].split("#L")
        start = int(lines.split("-")[0])
        assert start == item["line"]
        assert item["text"][:20] in (built.root / path).read_text().splitlines()[start - 1]
    api = {i["citation"] for i in built.items()}
    assert any(i["citation"] in api for i in items)

    pages = {p["path"]: p for p in _jsonl(members["kenning/pages.jsonl"])}
    assert set(pages) == {r[0] for r in store.rows("SELECT path FROM pages")}
    with_aliases = [p for p in pages.values() if p["aliases"]]
    assert with_aliases
    assert built.show(with_aliases[0]["path"])["aliases"] == with_aliases[0]["aliases"]
    timeline = _jsonl(members["kenning/timeline.jsonl"])
    assert len(timeline) == store.scalar("SELECT count(*) FROM timeline")
    counts = json.loads(members["kenning/manifest.json"])["counts"]
    assert (counts["facts"], counts["links"], counts["items"], counts["pages"]) == (
        len(facts), len(links), len(items), len(pages))


def test_a_stale_index_is_brought_up_to_date_first(built: Vault, tmp_path: Path) -> None:
    (built.root / "people" / "Zed Quill.md").write_text(
        "# Zed Quill\n\n## Facts\n\n- Zed Quill joined Kestrel Labs in 2026 [from:: 2026-02-01]\n")
    report = built.export(tmp_path / "v.tar.gz")
    assert report["index"]["added"] == 1
    members = _members(tmp_path / "v.tar.gz")
    assert "people/Zed Quill.md" in {p["path"] for p in _jsonl(members["kenning/pages.jsonl"])}
    assert any(f["page"] == "people/Zed Quill.md" and "joined" in f["text"]
               for f in _jsonl(members["kenning/facts.jsonl"]))


def test_zip_holds_the_same(built: Vault, tmp_path: Path) -> None:
    built.export(tmp_path / "v.tar.gz")
    built.export(tmp_path / "v.zip")
    tar, zipped = _members(tmp_path / "v.tar.gz"), _members(tmp_path / "v.zip")
    assert set(tar) == set(zipped)
    assert zipped[f"vault/{BLOB}"] == tar[f"vault/{BLOB}"] == (built.root / BLOB).read_bytes()
    assert zipped["kenning/facts.jsonl"] == tar["kenning/facts.jsonl"]


def test_dest_errors_are_one_line_and_write_nothing(built: Vault, tmp_path: Path) -> None:
    dest = tmp_path / "v.tar.gz"
    built.export(dest)
    before = dest.read_bytes()
    with pytest.raises(KenningError, match=r"exists; pass --force"):
        built.export(dest)
    assert dest.read_bytes() == before
    (built.root / "people" / "Yan.md").write_text("# Yan\n")
    built.export(dest, force=True)
    assert "vault/people/Yan.md" in _members(dest)
    with pytest.raises(KenningError, match=r"inside the vault"):
        built.export(built.root / "exports" / "v.tar.gz")
    with pytest.raises(KenningError, match=r"must end in \.tar\.gz, \.tgz or \.zip"):
        built.export(tmp_path / "v.rar")
    with pytest.raises(KenningError, match=r"does not exist"):
        built.export(tmp_path / "missing" / "v.tar.gz")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(KenningError, match=r"afile is not a folder"):
        built.export(tmp_path / "afile" / "v.tar.gz")
    assert not (built.root / "exports").exists()


def _left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_failure_mid_write_leaves_no_dest_and_no_temp(built: Vault, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()

    def fail(done: int, total: int | None, item: str) -> None:
        if done == 10:
            raise RuntimeError("stopped mid-write")

    with pytest.raises(RuntimeError, match="stopped mid-write"):
        built.export(out / "v.tar.gz", progress=fail)
    assert _left_in(out) == []

    def remove_folder(done: int, total: int | None, item: str) -> None:
        if done == 10:
            shutil.rmtree(out)

    with pytest.raises(KenningError, match=r"v\.tar\.gz: writing the archive failed"):
        built.export(out / "v.tar.gz", progress=remove_folder)
    assert not (out / "v.tar.gz").exists() and _left_in(tmp_path / "out") == []
    # The vault is unharmed and can still be exported.
    out.mkdir()
    assert built.export(out / "v.tar.gz")["counts"]["files"] > 50


def test_an_export_killed_before_the_rename_leaves_no_dest(built: Vault, tmp_path: Path
                                                           ) -> None:
    import subprocess
    import sys

    root = str(built.root)
    built.close()
    dest = tmp_path / "killed.tar.gz"
    env = {**os.environ, "KENNING_FAULT_KILL_AT": "1", "KENNING_EMBEDDINGS": "none"}
    done = subprocess.run([sys.executable, "-c", "from kenning.cli import main; main()", "-C",
                           root, "export", str(dest)], env=env, capture_output=True, check=False)
    assert done.returncode == -9, done.stderr
    assert not dest.exists()
    (tmp_path / f".{dest.name}.{socket_host()}_999999-abcdefgh.tmp").write_text("killed")
    env.pop("KENNING_FAULT_KILL_AT")
    again = subprocess.run([sys.executable, "-c", "from kenning.cli import main; main()", "-C",
                            root, "export", str(dest)], env=env, capture_output=True, check=False)
    assert again.returncode == 0, again.stderr
    assert tarfile.is_tarfile(dest)
    # What the killed export (and a long-gone pid) left beside DEST is removed.
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".killed")] == []


def socket_host() -> str:
    from kenning.vault.fsio import temp_tag

    return temp_tag().rsplit("_", 1)[0]


def test_default_dest_is_beside_the_vault_when_run_inside_it(built: Vault, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.chdir(built.root / "people")
    report = built.export()
    dest = Path(report["archive"])
    assert dest.parent == built.root.parent
    assert dest.name.startswith("kenning-export-sample-") and dest.name.endswith(".tar.gz")
    assert tarfile.is_tarfile(dest)


@pytest.mark.embeddings
def test_vectors_by_the_sha256_of_their_text(tmp_path: Path) -> None:
    import numpy as np

    from kenning.index.vectors import chunk_embed_text

    v, _ = Vault.init(tmp_path / "v")
    try:
        (v.root / "people").mkdir(exist_ok=True)
        (v.root / "people" / "Ann.md").write_text(
            "# Ann\n\nAnn leads the billing team.\n\n## Work\n\nShe ships the invoice service.\n")
        (v.root / "notes.md").write_text("# Notes\n\nMet [[Ann]] about invoices.\n")
        for folder in ("a", "b"):  # the same text in two chunks: one vector
            (v.root / folder).mkdir()
            (v.root / folder / "Call.md").write_text("# Call\n\nAsk about the invoices.\n")
        report = v.index()
        assert report.embedding is not None and report.embedding.embedded >= 3
        v.export(tmp_path / "v.tar.gz")
        v.export(tmp_path / "lean.tar.gz", vectors=False)
        members = _members(tmp_path / "v.tar.gz")
        manifest = json.loads(members["kenning/manifest.json"])
        model, dim = manifest["embedding"]["model"], manifest["embedding"]["dim"]
        assert model == v.store.get_meta("embed_model") and dim == 384
        matrix = np.load(io.BytesIO(members["kenning/vectors.npy"]))
        index = _jsonl(members["kenning/vectors.jsonl"])
        assert matrix.shape == (len(index), dim) == (manifest["counts"]["vectors"], dim)
        by_sha = {r["sha256"]: r for r in index}
        assert len(by_sha) == len(index)  # one row per distinct text
        ids, stored = v.store.chunk_vectors(model, dim)
        assert len(ids) >= 4
        for chunk_id, vector in zip(ids.tolist(), stored, strict=True):
            text = chunk_embed_text(v.store, chunk_id)
            row = by_sha[hashlib.sha256(text.encode("utf-8")).hexdigest()]
            assert row["text"] == text and row["model"] == model and row["dim"] == dim
            assert np.allclose(matrix[row["row"]], vector)
        shared = by_sha[hashlib.sha256(b"Call\nAsk about the invoices.").hexdigest()]
        assert sorted(shared["chunks"]) == ["a/Call.md#L1-L3", "b/Call.md#L1-L3"]
        lean = _members(tmp_path / "lean.tar.gz")
        assert "kenning/vectors.npy" not in lean and "kenning/vectors.jsonl" not in lean
        assert json.loads(lean["kenning/manifest.json"])["embedding"]["exported"] is False
    finally:
        v.close()


@pytest.mark.both_backends
def test_export_reads_either_backend(backend: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v, _ = Vault.init(copy_sample(tmp_path / "sample"))
    try:
        v.index(embed=False)
        report = v.export(tmp_path / "v.tar.gz")
        members = _members(tmp_path / "v.tar.gz")
        manifest = json.loads(members["kenning/manifest.json"])
        assert manifest["index"]["backend"] == v.store.backend == backend
        for name in ("pages", "facts", "links", "items", "timeline"):
            rows = _jsonl(members[f"kenning/{name}.jsonl"])
            assert len(rows) == report["counts"][name] == v.store.scalar(
                f"SELECT count(*) FROM {name}"), name
        assert any(f["citation"] == KNOWN_FACT for f in _jsonl(members["kenning/facts.jsonl"]))
        # Vectors through each backend's own storage (stored here without a model run).
        import numpy as np

        from kenning.index.vectors import pending_texts

        todo = pending_texts(v.store, "test-model", 8)
        vectors = np.eye(8, dtype=np.float32)[np.arange(len(todo)) % 8]
        with v.store.transaction():
            v.store.put_vectors("test-model", 8, [(d, vec) for (d, _), vec in zip(
                todo, vectors, strict=True)])
            v.store.set_meta("embed_model", "test-model")
            v.store.set_meta("embed_dim", "8")
        v.export(tmp_path / "vectors.tar.gz")
        members = _members(tmp_path / "vectors.tar.gz")
        matrix = np.load(io.BytesIO(members["kenning/vectors.npy"]))
        index = _jsonl(members["kenning/vectors.jsonl"])
        assert matrix.shape == (len(todo), 8) and len(index) == len(todo)
        given = {hashlib.sha256(text.encode("utf-8")).hexdigest(): vec
                 for (_, text), vec in zip(todo, vectors, strict=True)}
        for row in index:
            assert np.array_equal(matrix[row["row"]], given[row["sha256"]])
    finally:
        v.close()


def test_cli_report_json_and_errors(built: Vault, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    root = str(built.root)
    built.close()
    dest = str(tmp_path / "cli.tar.gz")
    done = CliRunner().invoke(main, ["-C", root, "export", dest])
    assert done.exit_code == 0, done.output
    assert f"exported to {dest}" in done.output
    assert "skipped notes/outside.md: symlink to outside the vault" in done.output
    again = CliRunner().invoke(main, ["-C", root, "export", dest])
    assert again.exit_code != 0
    assert again.output.strip().splitlines() == [
        f"error: {dest}: exists; pass --force to replace it"]
    forced = CliRunner().invoke(main, ["-C", root, "export", dest, "--force", "--json",
                                       "--no-vectors"])
    assert forced.exit_code == 0, forced.output
    data = json.loads(forced.output)
    assert data["archive"] == dest and data["counts"]["facts"] > 50
    assert data["kind"] == "tar.gz" and data["bytes"] == Path(dest).stat().st_size


# -- kenning import kenning ARCHIVE: a vault restored from an export ----------------------------

def test_restore_into_a_new_vault_gives_the_same_files_and_index(built: Vault, tmp_path: Path
                                                                 ) -> None:
    archive = tmp_path / "v.tar.gz"
    built.export(archive)
    manifest = json.loads(_members(archive)["kenning/manifest.json"])
    new, _ = Vault.init(tmp_path / "restored")
    try:
        dry = new.import_from("kenning", archive, dry_run=True)
        assert dry["files"]["write"] > 50 and not (new.root / LATIN1).exists()
        done = new.import_from("kenning", archive)
        assert done["files"]["write"] + done["files"]["replace"] + done["files"]["already"] == \
            len(manifest["files"])
        assert "memory.md" in done["replaced"]  # init's template, replaced by the archive's
        for rel, entry in manifest["files"].items():
            data = (new.root / rel).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], rel
        assert (new.root / BLOB).read_bytes() == (built.root / BLOB).read_bytes()
        for table in ("pages", "facts", "links", "items", "timeline"):
            assert new.store.scalar(f"SELECT count(*) FROM {table}") == built.store.scalar(
                f"SELECT count(*) FROM {table}"), table
        assert [f["citation"] for f in new.show("Caching")["facts"]] == [
            f["citation"] for f in built.show("Caching")["facts"]]
        again = new.import_from("kenning", archive)
        assert again["files"]["write"] == 0 and again["files"]["already"] == len(
            manifest["files"])
    finally:
        new.close()


def test_restore_refuses_a_vault_with_other_files_and_a_damaged_archive(built: Vault,
                                                                        tmp_path: Path) -> None:
    from kenning.transfer.restore import RestoreFailed

    archive = tmp_path / "v.tar.gz"
    built.export(archive)
    new, _ = Vault.init(tmp_path / "other")
    try:
        (new.root / "topics").mkdir(exist_ok=True)
        (new.root / "topics" / "Caching.md").write_text("# Caching\n\nmy own note\n")
        with pytest.raises(RestoreFailed, match=r"1 file\(s\) of the vault .* differ from the "
                                                r"archive's .*: topics/Caching\.md$"):
            new.import_from("kenning", archive)
        assert not (new.root / "topics" / "Hiring.md").exists()  # nothing written
        assert (new.root / "topics" / "Caching.md").read_text() == "# Caching\n\nmy own note\n"

        damaged = tmp_path / "damaged.tar.gz"
        with tarfile.open(archive) as src, tarfile.open(damaged, "w:gz") as out:
            for member in src.getmembers():
                data = src.extractfile(member).read()  # type: ignore[union-attr]
                if member.name == "vault/topics/Hiring.md":
                    data = data.replace(b"Hiring", b"Firing")
                member.size = len(data)
                out.addfile(member, io.BytesIO(data))
        (new.root / "topics" / "Caching.md").unlink()
        with pytest.raises(RestoreFailed, match=r"damaged, nothing restored: 1 file\(s\) do not "
                                                r"match .*: topics/Hiring\.md"):
            new.import_from("kenning", damaged)
        assert not (new.root / "topics" / "Hiring.md").exists()
        with pytest.raises(RestoreFailed, match="not a kenning export"):
            new.import_from("kenning", built.root / BLOB)
    finally:
        new.close()


@pytest.mark.embeddings
def test_restore_reuses_the_vectors_by_text_hash(tmp_path: Path) -> None:
    v, _ = Vault.init(tmp_path / "v")
    try:
        (v.root / "people").mkdir(exist_ok=True)
        (v.root / "people" / "Ann.md").write_text(
            "# Ann\n\nAnn leads the billing team.\n\n## Work\n\nShe ships the invoice service.\n")
        assert v.index().embedding.embedded >= 2  # type: ignore[union-attr]
        v.export(tmp_path / "v.zip")
        exported = json.loads(_members(tmp_path / "v.zip")["kenning/manifest.json"])
    finally:
        v.close()
    new, _ = Vault.init(tmp_path / "new")
    try:
        done = new.import_from("kenning", tmp_path / "v.zip")
        assert done["vectors"] == exported["counts"]["vectors"] >= 2
        assert done["notes"] == []
        report = new.index()
        assert report.embedding is not None and report.embedding.embedded == 0  # none again
        hits = new.search("who runs invoicing", mode="dense")
        assert hits and hits[0].path == "people/Ann.md"
    finally:
        new.close()


def test_cli_restore_report(built: Vault, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    archive = tmp_path / "v.tar.gz"
    built.export(archive)
    new, _ = Vault.init(tmp_path / "cli")
    new.close()
    done = CliRunner().invoke(main, ["-C", str(new.root), "import", "kenning", str(archive)])
    assert done.exit_code == 0, done.output
    assert "kenning export of " in done.output and "replaced what kenning init wrote" in \
        done.output
    again = CliRunner().invoke(main, ["-C", str(new.root), "import", "kenning", str(archive),
                                      "--json"])
    assert json.loads(again.output)["files"]["write"] == 0


def test_writers_go_on_while_the_dumps_are_compressed(built: Vault, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Once the files are archived and the index dumped, the locks are let go: a writer that
    # does not wait at all lands, and what it wrote is not in this export's snapshot.
    from kenning.transfer import export as archive

    add_dumps = archive._add_dumps
    landed: list[str] = []

    def write_then_add(*args: Any) -> None:
        with write_lock(built.root, wait=0):  # raises WriteBusy while the export holds it
            (built.root / "notes" / "after.md").write_text("# After\n\nwritten later\n")
            landed.append("notes/after.md")
        add_dumps(*args)

    monkeypatch.setattr(archive, "_add_dumps", write_then_add)
    report = built.export(tmp_path / "out.tar.gz", wait=0)
    assert landed == ["notes/after.md"]
    names = _members(Path(report["archive"]))
    assert "vault/notes/after.md" not in names and "vault/topics/Caching.md" in names
    manifest = json.loads(names["kenning/manifest.json"])
    assert "notes/after.md" not in manifest["files"]
