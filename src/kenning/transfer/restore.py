"""``kenning import kenning ARCHIVE``: a vault restored from a ``kenning export`` archive
(docs/export.md), its vectors reused by text hash so nothing is embedded again.

Restoring is for an empty vault (a new ``kenning init``) or one that already holds the same
files: every file of ``vault/`` is checked against the manifest's SHA-256 first, and a file of
the vault that differs from the archive's stops the restore before anything is written (the
two files ``kenning init`` writes, still as it wrote them, are replaced). Then, under the vault
write lock, the files are written — UTF-8 pages as one journaled batch, the others (attachments,
bytes that are not UTF-8, dot-folders) each atomically — the index is brought up to date, and
every vector whose text a chunk of the restored index has (the SHA-256 recomputed from the
archived text, Kenning's text hash recomputed too) is stored under the archive's model.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kenning.errors import KenningError
from kenning.index.store.base import Store
from kenning.transfer.export import FORMAT, FORMAT_VERSION, INDEX_PREFIX, VAULT_PREFIX
from kenning.vault.fsio import STATE_DIR, hidden_part, resolve_inside
from kenning.vault.layout import CONFIG_NAME, CORE_MEMORY, DEFAULT_CONFIG

#: What ``kenning init`` writes: replaced by the archive's while still exactly this.
INIT_FILES = {"memory.md": CORE_MEMORY.encode("utf-8"),
              f"{STATE_DIR}/{CONFIG_NAME}": DEFAULT_CONFIG.encode("utf-8")}
MAX_SHOWN = 10


class RestoreFailed(KenningError):
    """The archive cannot be restored into this vault; nothing was written."""


class Reader:
    """The members of a tar.gz or zip export, by name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tar: tarfile.TarFile | None = None
        self.zip: zipfile.ZipFile | None = None
        try:
            if zipfile.is_zipfile(path):
                self.zip = zipfile.ZipFile(path)
            elif tarfile.is_tarfile(path):
                self.tar = tarfile.open(path, "r:*")  # noqa: SIM115 (closed by close())
        except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
            raise RestoreFailed(f"{path}: cannot read the archive ({exc})") from None
        if self.tar is None and self.zip is None:
            raise RestoreFailed(f"{path}: not a kenning export (neither tar nor zip)")

    def open(self, name: str) -> IO[bytes]:
        try:
            if self.zip is not None:
                return self.zip.open(name)
            assert self.tar is not None
            fh = self.tar.extractfile(name)
        except KeyError:
            raise RestoreFailed(f"{self.path}: {name} is missing from the archive") from None
        if fh is None:
            raise RestoreFailed(f"{self.path}: {name} is not a file in the archive")
        return fh

    def read(self, name: str) -> bytes:
        with self.open(name) as fh:
            return fh.read()

    def has(self, name: str) -> bool:
        if self.zip is not None:
            return name in self.zip.namelist()
        assert self.tar is not None
        return name in self.tar.getnames()

    def in_order(self, rels: list[str]) -> list[str]:
        """Vault paths in the order the archive stores them: a tar.gz reads forward only (a
        step back decompresses again from the start)."""
        if self.tar is None:
            return sorted(rels)
        where = {m.name: m.offset for m in self.tar.getmembers()}
        return sorted(rels, key=lambda rel: where.get(VAULT_PREFIX + rel, -1))

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()
        if self.zip is not None:
            self.zip.close()


def manifest_of(reader: Reader) -> dict[str, Any]:
    """The archive's manifest, checked to be one this Kenning reads."""
    try:
        manifest = json.loads(reader.read(f"{INDEX_PREFIX}manifest.json"))
    except ValueError as exc:
        raise RestoreFailed(f"{reader.path}: kenning/manifest.json is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise RestoreFailed(f"{reader.path}: not a kenning export (manifest format is not "
                            f"{FORMAT!r})")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise RestoreFailed(f"{reader.path}: export format_version {version!r} is newer than "
                            f"this Kenning reads ({FORMAT_VERSION}); upgrade Kenning")
    if not isinstance(manifest.get("files"), dict):
        raise RestoreFailed(f"{reader.path}: manifest field 'files' must be a mapping")
    return manifest


def plan(root: Path, reader: Reader, manifest: dict[str, Any]) -> dict[str, list[str]]:
    """Which files to write, which the vault already has, which replace ``kenning init``'s;
    :class:`RestoreFailed` naming the files when the archive is damaged or the vault holds
    different ones."""
    out: dict[str, list[str]] = {"write": [], "already": [], "replace": []}
    damaged: list[str] = []
    differ: list[str] = []
    files = manifest["files"]
    for rel in reader.in_order(list(files)):
        entry = files[rel]
        try:
            target = resolve_inside(root, rel, hidden_ok=True)
        except KenningError as exc:
            raise RestoreFailed(f"{reader.path}: manifest file {rel!r}: {exc}") from None
        digest = hashlib.sha256()
        with reader.open(VAULT_PREFIX + rel) as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
        if digest.hexdigest() != entry.get("sha256"):
            damaged.append(rel)
            continue
        if not target.exists():
            out["write"].append(rel)
            continue
        have = target.read_bytes() if target.is_file() else None
        if have is not None and hashlib.sha256(have).hexdigest() == entry["sha256"]:
            out["already"].append(rel)
        elif have is not None and INIT_FILES.get(rel) == have:
            out["replace"].append(rel)
        else:
            differ.append(rel)
    for listed in out.values():
        listed.sort()
    if damaged:
        damaged.sort()
        differ.sort()
        raise RestoreFailed(_listed(f"{reader.path}: damaged, nothing restored: "
                                    f"{len(damaged)} file(s) do not match their SHA-256 in the "
                                    "manifest", damaged))
    if differ:
        differ.sort()
        raise RestoreFailed(_listed(f"nothing restored: {len(differ)} file(s) of the vault "
                                    f"{root} differ from the archive's (restore into a new "
                                    "vault: `kenning init DIR`)", differ))
    return out


def _listed(head: str, paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_SHOWN])
    more = len(paths) - MAX_SHOWN
    return f"{head}: {shown}" + (f" … and {more} more" if more > 0 else "")


def write(root: Path, reader: Reader, paths: list[str]) -> None:
    """Write ``paths`` from the archive (call it holding the vault write lock): UTF-8 pages as
    one journaled batch, every other file atomically byte for byte."""
    from kenning.vault.fsio import atomic_write_bytes
    from kenning.vault.writes import note_landed, write_files

    texts: dict[str, str] = {}
    for rel in reader.in_order(paths):
        data = reader.read(VAULT_PREFIX + rel)
        text = None
        if hidden_part(rel) is None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is None:
            atomic_write_bytes(root / rel, data)
            note_landed(rel)
        else:
            texts[rel] = text
    write_files(root, texts)


def vector_rows(reader: Reader, manifest: dict[str, Any]
                ) -> Iterator[tuple[str, str, int, Any]]:
    """(Kenning text hash recomputed from the text, model, dim, vector) of every archived
    vector whose text matches its SHA-256."""
    import numpy as np

    from kenning.index.vectors import text_hash

    embedding = manifest.get("embedding") or {}
    if not embedding.get("exported") or not reader.has(f"{INDEX_PREFIX}vectors.npy"):
        return
    matrix = np.load(io.BytesIO(reader.read(f"{INDEX_PREFIX}vectors.npy")))
    with reader.open(f"{INDEX_PREFIX}vectors.jsonl") as fh:
        for raw in fh:
            row = json.loads(raw)
            text = row.get("text") or ""
            if hashlib.sha256(text.encode("utf-8")).hexdigest() != row.get("sha256"):
                continue
            digest = text_hash(text)
            index = row.get("row")
            if digest and isinstance(index, int) and 0 <= index < len(matrix) \
                    and matrix.shape[1] == row.get("dim"):
                yield digest, str(row["model"]), int(row["dim"]), matrix[index]


def reuse_vectors(store: Store, reader: Reader, manifest: dict[str, Any]) -> int:
    """Store the archive's vectors whose text a chunk of ``store`` has and lacks a vector
    for; how many. The model becomes the index's when it has none."""
    from kenning.index.vectors import bump_version, pending_texts

    embedding = manifest.get("embedding") or {}
    model, dim = embedding.get("model"), embedding.get("dim")
    if not model or not isinstance(dim, int):
        return 0
    wanted = {digest for digest, _ in pending_texts(store, model, dim)}
    rows = [(digest, vec) for digest, name, size, vec in vector_rows(reader, manifest)
            if name == model and size == dim and digest in wanted]
    if not rows:
        return 0
    with store.transaction():
        store.put_vectors(model, dim, rows)
        if store.get_meta("embed_model") is None:
            store.set_meta("embed_model", model)
            store.set_meta("embed_dim", str(dim))
        bump_version(store)
    return len(rows)
