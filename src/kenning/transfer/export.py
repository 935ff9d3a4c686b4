"""``kenning export``: the vault and its index as one portable archive (docs/export.md).

The archive (``.tar.gz``, or ``.zip`` when DEST ends in ``.zip``) holds ``vault/`` — every file
of the vault byte for byte, Kenning's index database, locks, temp files and server tokens left
out — and ``kenning/``: JSON Lines of the pages, facts, links, items and timeline as the index
holds them, the vectors (``vectors.npy`` + ``vectors.jsonl``, keyed by the SHA-256 of the text
that was embedded) and, last, ``manifest.json`` with the counts and the SHA-256 of every vault
file. Everything is written to a temp file beside DEST (the index dumps staged in a temp folder
there), fsynced and renamed: a failure leaves no DEST and no partial one.

:func:`write_archive` is called by :meth:`kenning.api.Vault.export`, which holds the vault write
lock and the index lock, brings the index up to date first, and lets the locks go once the files
are archived and the index is dumped (the slow compression of the dumps does not block writers).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from kenning.errors import KenningError
from kenning.index.queries import export as rows
from kenning.index.store.base import Store
from kenning.memory.common import cite
from kenning.vault.fsio import (
    STATE_DIR,
    TEMP_SUFFIX,
    dead_writer_temp,
    fault_point,
    fsync_dir,
    is_temp_name,
    is_utf8_name,
    not_utf8_reason,
    readable_name,
    temp_tag,
    utf8_data,
)
from kenning.vault.layout import FORMAT as VAULT_FORMAT

FORMAT = "kenning-export"
FORMAT_VERSION = 1
VAULT_PREFIX = "vault/"
INDEX_PREFIX = "kenning/"
#: Folders of other tools' history and dependencies: never exported (use their own tools).
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules"})
#: Files of ``.kenning/`` that are not the vault's: the index database and its side files, the
#: recall activity database, locks, and the server's access tokens (credentials).
_STATE_SKIPPED = re.compile(r"^(?:index\.db|activity\.db)(?:$|[-.])|\.lock$|^tokens\.json$")
_COPY = 1 << 20
# One encoder for every line: json.dumps with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False).encode

# A progress callback: (done, total, what it is on).
Progress = Callable[[int, int | None, str], None]


class _Changed(KenningError):
    """A vault file got shorter while it was being archived."""


# -- where the archive goes ---------------------------------------------------------------------

def database_files(root: Path, url: str) -> set[str]:
    """The vault-relative paths of the SQLite index at ``url`` and its side files, when the
    index lies inside the vault (they are never archived); empty for PostgreSQL."""
    from kenning.index.store import sqlite_path

    db = sqlite_path(root, url)
    if db is None or not is_inside(db, root):
        return set()
    rel = os.path.relpath(os.path.realpath(db), root).replace(os.sep, "/")
    return {rel + suffix for suffix in ("", "-wal", "-shm", "-journal")}


def default_dest(root: Path, cwd: Path | None = None) -> Path:
    """``kenning-export-<vault>-<UTC date>.tar.gz`` in ``cwd``, or beside the vault when
    ``cwd`` is inside it (an archive in the vault would be exported into the next one)."""
    from kenning.vault.layout import slug

    cwd = (cwd or Path.cwd()).resolve()
    folder = root.parent if is_inside(cwd, root) else cwd
    day = dt.datetime.now(dt.UTC).date().isoformat()
    return folder / f"kenning-export-{slug(root.name)}-{day}.tar.gz"


def archive_kind(dest: Path) -> str:
    """``zip`` or ``tar.gz`` by DEST's name; a one-line error for any other."""
    name = dest.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    raise KenningError(f"{dest}: the archive name must end in .tar.gz, .tgz or .zip")


def check_dest(root: Path, dest: Path, *, force: bool) -> tuple[Path, str]:
    """DEST made absolute, and its kind; a one-line error when it cannot be written."""
    dest = Path(os.path.abspath(dest.expanduser()))
    kind = archive_kind(dest)
    if is_inside(dest.parent.resolve(), root) or is_inside(dest, root):
        raise KenningError(f"{dest}: inside the vault {root}; the archive would be part of the "
                           "next export. Write it outside the vault (e.g. beside it)")
    if dest.is_dir():
        raise KenningError(f"{dest}: is a folder; give the archive's file name")
    if not dest.parent.exists():
        raise KenningError(f"{dest}: folder {dest.parent} does not exist")
    if not dest.parent.is_dir():
        raise KenningError(f"{dest}: {dest.parent} is not a folder")
    if (dest.exists() or dest.is_symlink()) and not force:
        raise KenningError(f"{dest}: exists; pass --force to replace it")
    return dest, kind


def is_inside(path: Path, root: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)


# -- which files of the vault -------------------------------------------------------------------

def vault_files(root: Path, leave_out: set[str]) -> tuple[list[str], list[dict[str, str]]]:
    """The vault-relative paths to archive (sorted, by folder), and the files skipped with
    the reason. Symlinks are never followed (nor archived: what they point to inside the vault
    is archived at its own path); ``leave_out`` are vault paths Kenning keeps outside the
    archive (a SQLite index configured at another path inside the vault)."""
    found: list[str] = []
    skipped: list[dict[str, str]] = []

    def skip(rel: str, reason: str) -> None:
        skipped.append({"path": readable_name(rel), "reason": reason})

    def walk_error(exc: OSError) -> None:
        rel = os.path.relpath(exc.filename or str(root), root).replace(os.sep, "/")
        skip(rel + "/", f"cannot read the folder: {exc.strerror or exc}")

    for dirpath, dirs, names in os.walk(root, onerror=walk_error):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        keep = []
        for name in sorted(dirs):
            rel = rel_dir + name
            if name in SKIPPED_FOLDERS:
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                skip(rel + "/", _link_reason(root, full))
            elif not is_utf8_name(name):
                skip(rel + "/", not_utf8_reason(name, folder=True))
            else:
                keep.append(name)
        dirs[:] = keep
        for name in sorted(names):
            rel = rel_dir + name
            state = rel_dir.startswith(f"{STATE_DIR}/")
            if is_temp_name(name) or rel in leave_out or (state and (
                    name.endswith(TEMP_SUFFIX) or _STATE_SKIPPED.search(name))):
                continue
            full = os.path.join(dirpath, name)
            if not is_utf8_name(name):
                skip(rel, not_utf8_reason(name))
                continue
            try:
                st = os.lstat(full)
            except OSError as exc:
                skip(rel, f"cannot stat: {exc.strerror}")
                continue
            if stat.S_ISLNK(st.st_mode):
                skip(rel, _link_reason(root, full))
            elif not stat.S_ISREG(st.st_mode):
                skip(rel, "not a regular file (a pipe, socket or device)")
            else:
                found.append(rel)
    return found, skipped


def _link_reason(root: Path, full: str) -> str:
    real = os.path.realpath(full)
    if not is_inside(Path(real), root):
        return "symlink to outside the vault: not followed"
    target = os.path.relpath(real, os.path.realpath(root)).replace(os.sep, "/")
    return f"symlink to {readable_name(target)} inside the vault: archived at its own path"


# -- the archive --------------------------------------------------------------------------------

class _Hashing(io.RawIOBase):
    """Reads exactly ``size`` bytes of an open file, hashing them; a file that ends sooner (it
    was cut while being archived) raises :class:`_Changed`."""

    def __init__(self, fh: IO[bytes], size: int, rel: str) -> None:
        self.fh, self.left, self.rel = fh, size, rel
        self.sha = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        want = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(want) if want else b""
        while want and 0 < len(data) < want:  # a short read before the end: read on
            more = self.fh.read(want - len(data))
            if not more:
                break
            data += more
        if len(data) < want:
            raise _Changed(f"{readable_name(self.rel)}: changed while it was being exported "
                           "(got shorter); nothing written, export again")
        self.left -= len(data)
        self.sha.update(data)
        return data


class _Joined(io.RawIOBase):
    """``head`` bytes, then what ``rest`` reads (the .npy header before the raw rows)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        # Full reads: tarfile takes a short one for the end of the file.
        if n is None or n < 0:
            data, self.head = self.head + self.rest.read(), b""
            return data
        data, self.head = self.head[:n], self.head[n:]
        return data + self.rest.read(n - len(data)) if len(data) < n else data


class _Archive:
    """A tar.gz or zip being written to ``fh``: members added by name, size and mtime."""

    def __init__(self, fh: IO[bytes], kind: str) -> None:
        self.kind = kind
        if kind == "zip":
            self.zip: zipfile.ZipFile | None = zipfile.ZipFile(
                fh, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)
            self.tar: tarfile.TarFile | None = None
        else:
            self.zip = None
            self.tar = tarfile.open(  # noqa: SIM115 (closed by close())
                fileobj=fh, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT)

    def add(self, name: str, source: IO[bytes], size: int, mtime: float,
            mode: int = 0o644) -> None:
        if self.tar is not None:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = size, int(mtime), mode & 0o777
            self.tar.addfile(info, source)
            return
        assert self.zip is not None
        when = time.gmtime(max(mtime, 315532800))[:6]  # zip dates start in 1980
        info = zipfile.ZipInfo(name, date_time=when)  # type: ignore[arg-type]
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (stat.S_IFREG | (mode & 0o777)) << 16
        with self.zip.open(info, "w", force_zip64=size >= 1 << 31) as out:
            shutil.copyfileobj(source, out, _COPY)

    def add_bytes(self, name: str, data: bytes, mtime: float) -> None:
        self.add(name, io.BytesIO(data), len(data), mtime)

    def add_path(self, name: str, path: Path, mtime: float) -> None:
        with open(path, "rb") as fh:
            self.add(name, fh, os.fstat(fh.fileno()).st_size, mtime)

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()
        if self.zip is not None:
            self.zip.close()


def _line(value: dict[str, Any]) -> str:
    """One JSON Lines record (UTF-8 text; a lone surrogate spelled ``\\xe9``)."""
    text = _encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _encode(utf8_data(value))
    return text + "\n"


def _jsonl(path: Path, records: Iterator[dict[str, Any]]) -> int:
    """Write ``records`` to ``path`` as JSON Lines; how many."""
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(_line(record))
            count += 1
    return count


# -- the index as records -----------------------------------------------------------------------

def _pages(store: Store) -> Iterator[dict[str, Any]]:
    for batch in rows.page_batches(store):
        for row, aliases, tags in batch:
            page = dict(zip(rows.PAGE_COLUMNS, row, strict=True))
            del page["id"]
            page["frontmatter"] = json.loads(page["frontmatter"] or "{}")
            yield {"path": page.pop("path"), "title": page.pop("title"),
                   "type": page.pop("type"), "aliases": aliases, "tags": tags,
                   "frontmatter": page.pop("frontmatter"), **page}


def _facts(store: Store) -> Iterator[dict[str, Any]]:
    for batch in rows.fact_batches(store):
        for (_id, path, title, line, relation, target, text, valid_from, valid_to, recorded,
             expired, status, successor, epistemic, confidence, source) in batch:
            yield {"entity": title, "page": path, "line": line, "citation": cite(path, line),
                   "text": text, "relation": relation, "target": target, "status": status,
                   "valid_from": valid_from, "valid_to": valid_to, "recorded": recorded,
                   "expired": expired, "successor": successor, "epistemic": epistemic,
                   "confidence": confidence, "source": source}


def _links(store: Store) -> Iterator[dict[str, Any]]:
    for batch in rows.link_batches(store):
        for (_id, origin, line, kind, field, rel, src, src_ref, dst, dst_ref, file, heading,
             alias, embed, resolution, via, status, valid_from, valid_to, recorded,
             expired) in batch:
            citation = cite(origin, line) if origin and line else origin
            yield {"source": src, "rel": rel, "target": dst, "kind": kind,
                   "resolution": resolution, "origin": origin, "line": line,
                   "citation": citation, "field": field, "source_ref": src_ref,
                   "target_ref": dst_ref, "file": file, "heading": heading, "alias": alias,
                   "embed": bool(embed), "via": via, "status": status,
                   "valid_from": valid_from, "valid_to": valid_to, "recorded": recorded,
                   "expired": expired}


def _items(store: Store) -> Iterator[dict[str, Any]]:
    from kenning.index.queries.items import COPY_COLUMNS

    for batch in rows.item_batches(store):
        for row, parties in batch:
            item = dict(zip(COPY_COLUMNS, row, strict=True))
            roles: dict[str, list[dict[str, Any]]] = {"who": [], "to": [], "about": []}
            for role, _ord, raw, me, page, resolution in parties:
                roles.setdefault(role, []).append(
                    {"name": raw, "page": page, "me": bool(me), "resolution": resolution})
            path, line = item["path"], item["line"]
            checked = item["checked"]
            yield {"key": item["key"], "kind": item["kind"], "text": item["text"],
                   "status": item["status"], "who": roles["who"], "to": roles["to"],
                   "about": roles["about"], "due": item["due"], "date": item["date"],
                   "page": path, "line": line, "citation": cite(path, line),
                   "section": item["section"],
                   "checked": None if checked is None else bool(checked),
                   "completion": item["completion"], "closed": item["closed"],
                   "because": item["because"], "rejected": json.loads(item["rejected"] or "[]"),
                   "superseded_by": item["superseded_by"], "source": item["source"],
                   "block_id": item["block_id"]}


def _timeline(store: Store) -> Iterator[dict[str, Any]]:
    for batch in rows.timeline_batches(store):
        for _id, path, title, line, day, text, source in batch:
            yield {"entity": title, "page": path, "line": line, "citation": cite(path, line),
                   "date": day, "text": text, "source": source}


def _vectors(store: Store, model: str, dim: int, raw: IO[bytes], index: IO[str]
             ) -> dict[str, int]:
    """Write the float32 rows of every vector of ``model`` whose text a chunk still has to
    ``raw`` and their records to ``index``; counts (written, left out)."""
    import numpy as np

    from kenning.index.vectors import stored_embed_text, text_hash

    written = left_out = 0
    for batch in store.read_vectors():
        mine = [(digest, vec) for name, digest, size, vec in batch
                if name == model and size == dim]
        chunks = rows.chunks_of_texts(store, [d for d, _ in mine])
        for digest, vec in mine:
            found = chunks.get(digest)
            text = ""
            if found:
                _id, _path, title, heading, start, _end, body_start, body = found[0]
                text = stored_embed_text(title, heading, start, body_start, body)
            if not found or text_hash(text) != digest or not np.isfinite(vec).all():
                left_out += 1  # no chunk has this text any more, or the vector is broken
                continue
            raw.write(np.asarray(vec, dtype="<f4").tobytes())
            index.write(_line({
                "row": written, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "model": model, "dim": dim, "text_hash": digest,
                "chunks": [cite(c[1], c[4], c[5]) for c in found], "text": text}))
            written += 1
    return {"written": written, "left_out": left_out}


def _npy_header(rows_: int, dim: int) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": "<f4", "fortran_order": False, "shape": (rows_, dim)})
    return out.getvalue()


# -- writing it ---------------------------------------------------------------------------------

def write_archive(root: Path, store: Store, dest: Path, kind: str, *, vectors: bool = True,
                  vault_format: int = VAULT_FORMAT, leave_out: set[str] | None = None,
                  progress: Progress | None = None,
                  release: Callable[[], None] | None = None) -> dict[str, Any]:
    """Write the archive of the vault at ``root`` and its index ``store`` to ``dest`` (checked
    by :func:`check_dest`); the report. Nothing is left at ``dest`` (or beside it) on failure.

    ``release`` is called once every vault file is in the archive and the index is dumped to
    staging files (the caller's locks: the snapshot is taken), before the dumps — most of the
    archive, at 10,000 notes with vectors — are compressed into it."""
    import kenning

    started = time.perf_counter()
    exported_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    now = exported_at.timestamp()
    paths, skipped = vault_files(root, leave_out or set())
    _remove_dead_temps(dest)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.{temp_tag()}-",
                                        suffix=TEMP_SUFFIX, dir=dest.parent)
    except OSError as exc:
        raise KenningError(f"{dest}: cannot write there ({exc.strerror or exc})") from None
    tmp = Path(tmp_name)
    fh = os.fdopen(fd, "wb")
    staging: Path | None = None
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.{temp_tag()}-",
                                        suffix=TEMP_SUFFIX, dir=dest.parent))
        with fh:
            archive = _Archive(fh, kind)
            files: dict[str, dict[str, Any]] = {}
            for done, rel in enumerate(paths):
                if progress is not None:
                    progress(done, len(paths), rel)
                entry = _add_vault_file(archive, root, rel, skipped)
                if entry is not None:
                    files[rel] = entry
            if progress is not None:
                progress(len(paths), len(paths), "index")
            counts, embedding, dumps = _dump_index(store, staging, vectors)
            if release is not None:
                release()  # the vault's files and the index are read: writers may go on
            _add_dumps(archive, dumps, now)
            counts["files"] = len(files)
            manifest = {
                "format": FORMAT, "format_version": FORMAT_VERSION,
                "kenning_version": kenning.__version__, "vault_format": vault_format,
                "vault": root.name, "exported_at": exported_at.isoformat().replace("+00:00", "Z"),
                "index": {"backend": store.backend, "schema_version": store.schema_version()},
                "counts": counts, "embedding": embedding, "files": files, "skipped": skipped}
            archive.add_bytes(f"{INDEX_PREFIX}manifest.json",
                              json.dumps(utf8_data(manifest), ensure_ascii=False,
                                         indent=1).encode("utf-8"), now)
            archive.close()
            fh.flush()
            os.fsync(fh.fileno())
        fault_point()  # the fault suite's kill switch: killed here, there is no DEST
        os.replace(tmp, dest)
        fsync_dir(dest.parent)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            fh.close()
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise KenningError(f"{dest}: writing the archive failed, nothing written "
                               f"({exc.strerror or exc})") from None
        raise
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return {"archive": str(dest), "kind": kind, "bytes": dest.stat().st_size,
            "seconds": round(time.perf_counter() - started, 2), "counts": counts,
            "embedding": embedding, "skipped": skipped}


def _remove_dead_temps(dest: Path) -> None:
    """Remove the temp file and folder an export to ``dest`` that was killed left beside it."""
    import glob

    for left in dest.parent.glob(f".{glob.escape(dest.name)}.*{TEMP_SUFFIX}"):
        if dead_writer_temp(left):
            if left.is_dir() and not left.is_symlink():
                shutil.rmtree(left, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    left.unlink()


def _add_vault_file(archive: _Archive, root: Path, rel: str,
                    skipped: list[dict[str, str]]) -> dict[str, Any] | None:
    """Archive one vault file as ``vault/<rel>``; its manifest entry, or None when it could not
    be opened (then listed in ``skipped``)."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        skipped.append({"path": rel, "reason": f"cannot read: {exc.strerror or exc}"})
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced by something else since the walk
            skipped.append({"path": rel, "reason": "not a regular file"})
            return None
        reader = _Hashing(fh, st.st_size, rel)
        archive.add(VAULT_PREFIX + rel, reader, st.st_size, st.st_mtime, st.st_mode)
    return {"sha256": reader.sha.hexdigest(), "size": st.st_size}


def _dump_index(store: Store, staging: Path, vectors: bool
                ) -> tuple[dict[str, int], dict[str, Any] | None, list[tuple[str, Path, bytes]]]:
    """Dump the index into files in ``staging``: (counts, embedding, the dumps as (archive
    name, file, header to put before it)). Reads the database only: the slow part of an
    export — compressing the dumps — comes after, when the locks are let go."""
    counts: dict[str, int] = {}
    dumps: list[tuple[str, Path, bytes]] = []
    for name, records in (("pages", _pages), ("facts", _facts), ("links", _links),
                          ("items", _items), ("timeline", _timeline)):
        path = staging / f"{name}.jsonl"
        counts[name] = _jsonl(path, records(store))
        dumps.append((f"{INDEX_PREFIX}{name}.jsonl", path, b""))
    model = store.get_meta("embed_model")
    dim = int(store.get_meta("embed_dim") or 0)
    counts["vectors"] = 0
    if not model or not dim:
        return counts, None, dumps
    from kenning.index.vectors import coverage

    embedded, chunks = coverage(store, model, dim)
    embedding: dict[str, Any] = {
        "model": model, "dim": dim, "key": "sha256 of the embedded text (utf-8)",
        "exported": vectors, "chunks": chunks, "chunks_without_vector": chunks - embedded}
    if not vectors:
        return counts, embedding, dumps
    raw_path, index_path = staging / "vectors.f32", staging / "vectors.jsonl"
    with open(raw_path, "wb") as raw, open(index_path, "w", encoding="utf-8",
                                           newline="\n") as index:
        done = _vectors(store, model, dim, raw, index)
    counts["vectors"] = done["written"]
    embedding["vectors_left_out"] = done["left_out"]
    dumps.append((f"{INDEX_PREFIX}vectors.npy", raw_path, _npy_header(done["written"], dim)))
    dumps.append((f"{INDEX_PREFIX}vectors.jsonl", index_path, b""))
    return counts, embedding, dumps


def _add_dumps(archive: _Archive, dumps: list[tuple[str, Path, bytes]], now: float) -> None:
    for name, path, header in dumps:
        if header:
            with open(path, "rb") as raw:
                archive.add(name, _Joined(header, raw),
                            len(header) + os.fstat(raw.fileno()).st_size, now)
        else:
            archive.add_path(name, path, now)
        path.unlink()
