"""Vectors in the index: what text a chunk embeds, the embedding pass, and exact dense search.

Vectors live in the index database with everything else, keyed by model and text hash, stored
by the backend (``Store.put_vectors``; SQLite: float32 BLOBs of 4 bytes per dimension, or with
``embeddings.storage: int8`` a little-endian float32 scale followed by one signed byte per
dimension, 4x smaller on disk, float32 again in memory). Search is an exact matrix product over a
matrix cached in the process and rebuilt when the index changes; SQL filters pick the rows first.
Exact search is fast enough for a person's vault (~1 ms at 10k chunks, ~15 ms at 100k); an HNSW
index is an optional extra (index/ann.py), and a backend may search its own (``Store.nearest``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from kenning.index.embedders import Embedder
    from kenning.index.store import Store

MAX_EMBED_CHARS = 2000  # the model reads ~512 tokens; more text only costs time
EmbedProgress = Callable[[int, int], None]


_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|\*\*|__|`|\s\((?:[A-Z]{0,3}\d+[:.]\d+)\)(?=:)"
                     r"|\s\^[A-Za-z0-9-]{4,}\s*$")  # ... and Obsidian block ids (" ^a1b2c3")


def plain(line: str) -> str:
    """A line as the model should read it: list markers, emphasis, turn and block ids removed."""
    return _MARKUP.sub("", line)


# Lines that say something about the text, not in it: the email renderer's own notes.
_MARKER = re.compile(r"^\s*_\((?:\d+ quoted lines? omitted|no new text)\)_\s*$"
                     r"|^Signature: .*\S|^\s*%%\s*$")  # ... and Obsidian's comment marks
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$")
# A line of data rather than words: a JSON member or value, brackets, a number, a long run of
# base64 or hex. Obsidian's Excalidraw drawings keep their whole scene as JSON in the note (61 %
# of the zettelkasten's embedded text); the words of a drawing are in its "Text Elements".
_DATA = re.compile(r"""^\s*(?:
    "(?:[^"\\]|\\.)*"\s*:\s*(?:-?\d|"|true\b|false\b|null\b|\[|\{).*
  | [\[\](){},;]+
  | -?\d[\d.eE+-]*\s*,?
  | "(?:[^"\\]|\\.)*"\s*,
  | [A-Za-z0-9+/=_-]{60,}
)\s*$""", re.VERBOSE)
# A mail disclaimer: who may read the message, and what to do if it reached someone else. A
# chunk (~30 words of whole lines) often holds only part of one, so a paragraph's part in a chunk
# is left out when it holds two of these phrases.
_DISCLAIMER = re.compile(
    r"intended recipient|sole use|intended (?:only|solely) for|(?:confidential|privileged)"
    r" (?:and|or|and/or) (?:confidential|privileged)|unauthori[sz]ed (?:review|use|disclosure"
    r"|distribution|copying)|prohibited|in error|(?:notify|contact) the sender"
    r"|delete (?:it|this|all copies|the message|the original)|destroy all copies", re.IGNORECASE)


def evidence_lines(lines: Sequence[str]) -> list[str]:
    """A chunk's lines without what carries no evidence for the model: lines of data (JSON,
    numbers, base64), the email renderer's notes on quoted text and signatures, and mail
    disclaimers. A chunk with nothing left gets no vector; its words stay searchable lexically."""
    out: list[str] = []
    paragraph: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            if not (_MARKER.match(line) or _DATA.match(line)):
                paragraph.append(line)
            continue
        phrases = {m.group(0).lower() for m in _DISCLAIMER.finditer(" ".join(paragraph))}
        if len(phrases) < 2:
            out.extend(paragraph)
        paragraph = []
    return out


def embed_text(title: str, heading: str, lines: Sequence[str]) -> str:
    """The text a chunk is embedded as: its page title and heading give the passage context."""
    # Heading lines are left out: the title and heading path already lead the text.
    kept = [line for line in evidence_lines(lines) if not line.lstrip().startswith("#")]
    if all(_FENCE.match(line) for line in kept):
        return ""  # nothing but headings, or the fences of a code block of data
    body = "\n".join(plain(line) for line in kept).strip()
    if not body:
        return ""  # nothing but headings: no content to find by meaning
    context = title if not heading or heading == title else f"{title} — {heading}"
    return f"{context}\n{body}"[:MAX_EMBED_CHARS]


def text_hash(text: str) -> str | None:
    """The cache key of an embedded text (None for nothing to embed)."""
    if not text.strip():
        return None
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass
class EmbedReport:
    """What one embedding pass did."""

    model: str | None = None
    embedded: int = 0
    pending: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    error: str | None = None
    cut: int = 0  # texts longer than the model's context, embedded as their first part

    @property
    def rate(self) -> float:
        """Chunks embedded per second."""
        return self.embedded / self.seconds if self.seconds else 0.0


def pending_texts(store: Store, model: str, dim: int | None = None
                  ) -> list[tuple[str, str]]:
    """(text hash, text) of every chunk whose text has no sound vector for ``model`` yet."""
    dim = dim or _stored_dim(store)
    rows = store.rows(
        f"""SELECT c.text_hash, MIN(c.id) FROM chunks c
           WHERE c.text_hash IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM embeddings e WHERE e.model = ? AND e.text_hash = c.text_hash
               AND {store.sound_vector()})
           GROUP BY c.text_hash""", (model, dim))
    out = []
    for digest, chunk_id in rows:
        text = chunk_embed_text(store, chunk_id)
        if text:
            out.append((digest, text))
    return out


def chunk_embed_text(store: Store, chunk_id: int) -> str:
    """Rebuild a chunk's embed text from the index (frontmatter lines left out)."""
    row = store.one(
        """SELECT p.title, c.heading, c.start_line, p.body_start, f.body
           FROM chunks c JOIN pages p ON p.id = c.page_id
           JOIN chunks_fts f ON f.rowid = c.id WHERE c.id = ?""", (chunk_id,))
    if row is None:
        return ""
    return stored_embed_text(*row)


def stored_embed_text(title: str, heading: str, start_line: int, body_start: int,
                      body: str) -> str:
    """A chunk's embed text from what the index stores: its page's title and body start, its
    heading, first line and ``chunks_fts`` body (frontmatter lines left out)."""
    lines = body.split("\n")[max(0, body_start - start_line):]
    return embed_text(title, heading, lines)


def encode_vector(vector: np.ndarray, storage: str = "float32") -> bytes:
    """The BLOB of one vector: float32, or int8 with its scale in front (see the module doc)."""
    import numpy as np

    if storage == "int8":
        scale = float(np.abs(vector).max()) / 127.0 or 1.0
        quantized = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8)
        return np.float32(scale).astype("<f4").tobytes() + quantized.tobytes()
    return np.asarray(vector, dtype="<f4").tobytes()


def decode_vectors(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Rows of float32 from BLOBs of either storage (their length says which)."""
    import numpy as np

    out = np.empty((len(blobs), dim), dtype=np.float32)
    for row, blob in enumerate(blobs):
        if len(blob) == 4 * dim:
            out[row] = np.frombuffer(blob, dtype="<f4")
        else:
            scale = np.frombuffer(blob[:4], dtype="<f4")[0]
            out[row] = np.frombuffer(blob[4:], dtype=np.int8).astype(np.float32) * scale
    return out


def embed_pending(store: Store, embedder: Embedder, *, batch_size: int = 8,
                  progress: EmbedProgress | None = None,
                  storage: str = "float32") -> EmbedReport:
    """Embed every chunk text that has no vector yet; commits per batch so a kill loses little.

    The model runs on this thread: the bundled engine's OpenMP team ran ~1.2x slower when
    called from a worker thread, and the database's share of the pass is ~20 ms (SQLite;
    docs/decisions.md).
    """
    from kenning.index.embedders import fit

    report = EmbedReport(model=embedder.model_id)
    todo = []
    for digest, text in pending_texts(store, embedder.model_id, embedder.dim):
        fitted = fit(embedder, text)
        report.cut += fitted.truncated
        todo.append((digest, fitted.text))
    # Similar lengths in a batch waste less work on padding (remote and sentence-transformers
    # models pad a batch to its longest text; the bundled model packs tokens and does not care).
    todo.sort(key=lambda item: len(item[1]))
    report.pending = len(todo)
    started = time.perf_counter()
    with store.transaction():
        store.set_meta("embed_model", embedder.model_id)
        store.set_meta("embed_dim", str(embedder.dim))
        store.set_meta("embed_state", "running")
    try:
        for begin in range(0, len(todo), batch_size):
            batch = todo[begin : begin + batch_size]
            _store_batch(store, embedder, batch, storage)
            report.embedded += len(batch)
            if progress:
                progress(report.embedded, report.pending)
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    finally:
        report.seconds = time.perf_counter() - started
    with store.transaction():
        # Vectors no chunk uses any more, and those of other models, are dead weight.
        store.run("""DELETE FROM embeddings WHERE model != ? OR text_hash NOT IN
                     (SELECT text_hash FROM chunks WHERE text_hash IS NOT NULL)""",
                  (embedder.model_id,))
        store.set_meta("embed_state", "complete")
    return report


def _store_batch(store: Store, embedder: Embedder,
                 batch: Sequence[tuple[str, str]], storage: str) -> None:
    """Embed one batch of (text hash, text) and store its vectors in one transaction."""
    vectors = _embed_batch(embedder, batch)
    with store.transaction():
        store.put_vectors(embedder.model_id, embedder.dim,
                          [(digest, vec) for (digest, _), vec in zip(batch, vectors, strict=True)],
                          storage)
        bump_version(store)


def _embed_batch(embedder: Embedder, batch: Sequence[tuple[str, str]]) -> np.ndarray:
    """One batch's vectors, checked: one finite row of the model's dimension per text."""
    import numpy as np

    vectors = np.asarray(embedder.embed_passages([text for _, text in batch]), dtype=np.float32)
    if vectors.shape != (len(batch), embedder.dim):
        raise ValueError(f"embedder returned shape {vectors.shape}, expected "
                         f"({len(batch)}, {embedder.dim})")
    if not np.isfinite(vectors).all():
        raise ValueError(f"embedder {embedder.model_id} returned non-finite values")
    return vectors


def embed_pages(store: Store, embedder: Embedder, paths: Sequence[str], *,
                seconds: float = 1.0, batch_size: int = 8,
                storage: str = "float32") -> tuple[int, int]:
    """Embed the chunks of the pages at ``paths`` that have no vector yet — what a write just
    indexed — batch by batch until about ``seconds`` have passed; returns (embedded, left).

    Nothing is embedded when the index holds no vectors of this model: a vault searched by its
    words stays so, and a model change waits for ``kenning index``.
    """
    from kenning.index.embedders import fit

    if not paths or store.get_meta("embed_model") != embedder.model_id:
        return 0, 0
    rows: list[tuple[Any, ...]] = []
    for part, marks in store.in_batches(paths):
        rows += store.rows(
            f"""SELECT c.text_hash, MIN(c.id) FROM chunks c JOIN pages p ON p.id = c.page_id
               WHERE p.path IN ({marks}) AND c.text_hash IS NOT NULL AND NOT EXISTS (
                   SELECT 1 FROM embeddings e WHERE e.model = ? AND e.text_hash = c.text_hash
                   AND {store.sound_vector()})
               GROUP BY c.text_hash""",
            (*part, embedder.model_id, embedder.dim))
    rows.sort(key=lambda row: row[1])
    seen: set[str] = set()
    todo = [(digest, fit(embedder, text).text) for digest, chunk_id in rows
            if not (digest in seen or seen.add(digest))
            and (text := chunk_embed_text(store, chunk_id))]
    started, done = time.perf_counter(), 0
    for begin in range(0, len(todo), batch_size):
        if begin and time.perf_counter() - started > seconds:
            break  # the rest waits for `kenning index`; recall finds it by its words meanwhile
        batch = todo[begin : begin + batch_size]
        _store_batch(store, embedder, batch, storage)
        done += len(batch)
    return done, len(todo) - done


def bump_version(store: Store) -> None:
    """Mark the vectors or chunks as changed, so cached matrices are rebuilt (in every process:
    the version is in ``meta``). Caller owns the transaction."""
    store.run("INSERT INTO meta(key, value) VALUES ('vectors_version', '1')"
              " ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1"
              " AS TEXT)")


def _stored_dim(store: Store) -> int:
    """The dimension of the model the index was last embedded with (0 if never)."""
    return int(store.get_meta("embed_dim") or 0)


def coverage(store: Store, model: str | None, dim: int | None = None) -> tuple[int, int]:
    """(chunks with a sound vector for ``model``, chunks with text worth embedding)."""
    dim = dim or _stored_dim(store)
    total = int(store.scalar("SELECT count(*) FROM chunks WHERE text_hash IS NOT NULL",
                             default=0))
    if not model:
        return 0, total
    done = int(store.scalar(
        f"""SELECT count(*) FROM chunks c JOIN embeddings e
           ON e.text_hash = c.text_hash AND e.model = ? AND {store.sound_vector()}""",
        (model, dim), default=0))
    return done, total


def damaged(store: Store, model: str | None = None, dim: int | None = None) -> int:
    """Vectors of ``model`` that do not hold ``dim`` float32 values (truncated or foreign)."""
    model = model or store.get_meta("embed_model")
    dim = dim or _stored_dim(store)
    return int(store.scalar(
        f"SELECT count(*) FROM embeddings e WHERE e.model = ? AND NOT ({store.sound_vector()})",
        (model, dim), default=0))


@dataclass
class Matrix:
    """Chunk ids and their vectors, row for row."""

    ids: np.ndarray
    vectors: np.ndarray
    version: str
    chunks: int = 0  # chunks with text worth embedding, when the matrix was loaded

    @property
    def coverage(self) -> tuple[int, int]:
        """(chunks with a usable vector, chunks with text worth embedding)."""
        return int(self.ids.size), self.chunks


_CACHE: dict[tuple[str, str], Matrix] = {}


def load_matrix(store: Store, model: str, cache_dir: Path | None = None, *,
                context: float = 0.0) -> Matrix:
    """The matrix of every chunk vector of ``model``, cached in the process and on disk.

    With ``context`` > 0 each row is the chunk's vector blended with its page context (see
    ``with_context``): what the dense arm searches. The on-disk copy (``cache_dir/matrix-*.npy``)
    lets a new process — one CLI search — map the matrix instead of reading every BLOB; it is
    rewritten when the index changes.
    """
    version = f"{store.get_meta('index_id')}:{store.get_meta('vectors_version') or 0}"
    if context:
        version += f":context={context:g}"
    key = (str(cache_dir), model)
    cached = _CACHE.get(key)
    if cached is not None and cached.version == version:
        return cached
    matrix = _read_disk(cache_dir, model, version) if cache_dir else None
    if matrix is None:
        matrix = _read_db(store, model, version)
        if context:
            matrix.vectors = with_context(store, matrix.ids, matrix.vectors, context)
        if cache_dir:
            _write_disk(cache_dir, model, matrix)
    _CACHE[key] = matrix
    return matrix


def with_context(store: Store, ids: np.ndarray, vectors: np.ndarray, weight: float
                 ) -> np.ndarray:
    """Each chunk's vector blended with its neighbourhood: ``(v + weight·w) / (1 + weight)``,
    where ``w`` is the normalised mean of the chunk's and its neighbours' vectors on the page.

    A 30-word chunk is sharp but short: one turn of a conversation, one bullet of a note. Its
    neighbours say what it is about ("that one" is the pottery bowl of the turn before). The
    blend is linear, so one matrix product still scores every chunk, as cheaply as before
    (LoCoMo, dense: 0.831 → 0.849 evidence recall @1000 words; decisions.md).
    """
    import numpy as np

    if ids.size == 0 or weight <= 0:
        return vectors
    listed = np.asarray(store.rows("SELECT id, page_id FROM chunks ORDER BY page_id, ord"),
                        dtype=np.int64).reshape(-1, 2)
    by_id = np.argsort(ids, kind="stable")
    found = np.searchsorted(ids, listed[:, 0], sorter=by_id)
    found = np.minimum(found, ids.size - 1)
    keep = ids[by_id[found]] == listed[:, 0]  # chunks with a vector, in page order
    rows, page = by_id[found[keep]], listed[keep, 1]
    same = page[1:] == page[:-1]  # row i and row i+1 of `rows` are neighbours on one page
    out = np.array(vectors, dtype=np.float32)
    n = rows.size
    for a in range(0, n, 4096):  # in blocks: small temporaries, no second copy of the matrix
        b = min(n, a + 4096)
        own = out[rows[a:b]]
        near = own.copy()  # the chunk plus its neighbours; its direction is their mean's
        lo, hi = max(a, 1), min(b, n - 1)
        before, after = same[lo - 1 : b - 1], same[a:hi]
        near[lo - a :][before] += vectors[rows[lo - 1 : b - 1][before]]
        near[: hi - a][after] += vectors[rows[a + 1 : hi + 1][after]]
        near *= (weight / np.maximum(np.sqrt(np.einsum("ij,ij->i", near, near)), 1e-12))[:, None]
        near += own
        near /= 1.0 + weight
        out[rows[a:b]] = near
    return out


def _tag(model: str, version: str) -> str:
    # Files are named by what they hold, so two versions can never be mixed.
    return hashlib.blake2b(f"{model}|{version}".encode(), digest_size=8).hexdigest()


def _read_disk(folder: Path, model: str, version: str) -> Matrix | None:
    import numpy as np

    tag = _tag(model, version)
    try:
        meta = json.loads((folder / f"matrix-{tag}.json").read_text(encoding="utf-8"))
        ids = np.load(folder / f"matrix-{tag}-ids.npy")
        vectors = np.load(folder / f"matrix-{tag}.npy", mmap_mode="r")
    except (OSError, ValueError, json.JSONDecodeError):
        return None
    if vectors.shape[0] != ids.shape[0]:
        return None
    return Matrix(ids=ids, vectors=vectors, version=version, chunks=int(meta.get("chunks", 0)))


def _write_disk(folder: Path, model: str, matrix: Matrix) -> None:
    """Best effort: a cache that cannot be written is only slower next time."""
    import numpy as np

    tag = _tag(model, matrix.version)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("matrix-*"):
            if tag not in old.name:
                old.unlink(missing_ok=True)
        for name, array in ((f"matrix-{tag}.npy", matrix.vectors),
                            (f"matrix-{tag}-ids.npy", matrix.ids)):
            tmp = folder / f".{name}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                np.save(fh, array)
            os.replace(tmp, folder / name)
        # Written last: its presence says the arrays are complete.
        (folder / f"matrix-{tag}.json").write_text(json.dumps({"chunks": matrix.chunks}),
                                                   encoding="utf-8")
    except OSError:
        pass


def _read_db(store: Store, model: str, version: str) -> Matrix:
    ids, vectors = store.chunk_vectors(model, _stored_dim(store))
    chunks = int(store.scalar("SELECT count(*) FROM chunks WHERE text_hash IS NOT NULL",
                              default=0))
    return Matrix(ids=ids, vectors=vectors, version=version, chunks=chunks)


ANN_THRESHOLD = 250_000  # below this many vectors exact search is fast enough (benchmarks.md)


def approximate_index(matrix: Matrix, model: str, cache_dir: Path, threshold: int) -> Any:
    """An HNSW index over the matrix when it is large and usearch is installed, else None.

    Built from the matrix (the database stays the truth) and saved next to it under the same version
    tag, so it is rebuilt exactly when the vectors change.
    """
    if matrix.ids.size < threshold:
        return None
    from kenning.index import ann

    if not ann.available():
        return None
    dim = int(matrix.vectors.shape[1])
    path = cache_dir / f"ann-{_tag(model, matrix.version)}.usearch"
    try:
        return ann.AnnIndex.load(path, dim, view=True)
    except ann.AnnIndexError:
        pass
    for old in cache_dir.glob("ann-*.usearch"):
        old.unlink(missing_ok=True)
    index = ann.AnnIndex(dim)
    index.build(matrix.ids, matrix.vectors)
    index.save(path)
    return index


def dense_search(matrix: Matrix, query: np.ndarray, *, k: int,
                 allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Top ``k`` (chunk id, cosine) by exact matrix product, within ``allowed`` ids if given."""
    import numpy as np

    if matrix.ids.size == 0:
        return []
    vectors, ids = matrix.vectors, matrix.ids
    if allowed is not None:
        mask = np.isin(ids, allowed)
        vectors, ids = vectors[mask], ids[mask]
        if ids.size == 0:
            return []
    scores = vectors @ query.astype(np.float32)
    k = min(k, scores.size)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(ids[i]), float(scores[i])) for i in top]
