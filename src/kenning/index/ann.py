"""An optional approximate nearest-neighbour index (HNSW, via ``usearch``) over chunk vectors.

SQLite stays the source of truth: this index is a derived, disposable accelerator that can be
rebuilt from the stored vectors at any time (and must be, when :meth:`AnnIndex.load` raises
:class:`AnnIndexError`). It is used only when ``usearch`` is installed
(``pip install 'kenning[ann]'``); without it, dense search stays exact numpy over the cached
matrix, which is fast enough for a personal vault (see ``bench/ann_crossover.py``).

Vectors are L2-normalised (again, defensively) and compared by inner product, so a score is the
cosine similarity. Storage is float16: half the memory of float32 and faster to build, with no
measurable loss of recall at these dimensions.

Filtering: recall narrows candidates in SQL first (type, folder, dates …) and passes the
surviving ids as ``allowed`` (m of the index's N). HNSW cannot filter inside the graph walk, so
it over-fetches ``fetch = 2·k·N/m`` results (growing ×4 up to ``max_fetch``) and keeps the
allowed ones. Fetching costs about as much per result as scoring one allowed vector exactly
(~1–2 µs either way), so an allowed set no larger than ``fetch`` (m ≤ √(2kN): 1,400 ids at
N = 100k) — or one too rare for ``max_fetch`` results to hold k of it — is scored exactly over
its own vectors instead. ``exact_below`` overrides that size limit.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError

if TYPE_CHECKING:
    import numpy as np

INSTALL_FIX = "pip install 'kenning[ann]'"


class AnnUnavailable(KenningError):
    """``usearch`` is not installed (or does not load) here."""

    def __init__(self, message: str, fix: str = INSTALL_FIX) -> None:
        self.fix = fix
        super().__init__(message)


class AnnIndexError(KenningError):
    """A saved index that cannot be used (missing, corrupt, other dimension): rebuild it."""


def available() -> bool:
    """True when ``usearch`` can be imported."""
    try:
        import usearch.index  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


def _usearch() -> Any:
    try:
        from usearch import index
    except (ImportError, OSError) as exc:
        raise AnnUnavailable(f"the approximate vector index needs usearch, which cannot load "
                             f"here: {exc}") from None
    return index


def _unit_rows(vectors: Any, dim: int) -> np.ndarray:
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2 or matrix.shape[1] != dim:
        raise ValueError(f"expected vectors of dimension {dim}, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms)


def _keys(ids: Any) -> np.ndarray:
    import numpy as np

    array = np.asarray(ids)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise ValueError("ids must be a 1-d array of integers")
    array = array.astype(np.int64, copy=False)
    if array.size and array.min() < 0:
        raise ValueError("ids must be non-negative")
    return array.astype(np.uint64)


class AnnIndex:
    """HNSW over (id, vector) pairs; ids are the SQLite chunk ids (non-negative int64)."""

    def __init__(self, dim: int, *, dtype: str = "f16", connectivity: int = 32,
                 expansion_add: int = 128, expansion_search: int = 256, threads: int = 0,
                 exact_below: int | None = None, max_fetch: int = 4096) -> None:
        if dim <= 0:
            raise ValueError("dim must be positive")
        self.dim = int(dim)
        self.dtype = dtype
        self.connectivity = connectivity
        self.expansion_add = expansion_add
        self.expansion_search = expansion_search
        self.threads = threads
        self.exact_below = exact_below
        self.max_fetch = max_fetch
        self._index = self._new()

    def _new(self) -> Any:
        index = _usearch().Index(ndim=self.dim, metric="ip", dtype=self.dtype,
                                 connectivity=self.connectivity,
                                 expansion_add=self.expansion_add,
                                 expansion_search=self.expansion_search)
        return index

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"AnnIndex(dim={self.dim}, size={len(self)}, dtype={self.dtype!r})"

    # -- building -----------------------------------------------------------------------------

    def build(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Replace the whole index with these vectors (one row per id, ids unique)."""
        keys = _keys(ids)
        matrix = _unit_rows(vectors, self.dim) if len(keys) else None
        if matrix is not None and len(matrix) != len(keys):
            raise ValueError(f"{len(keys)} ids for {len(matrix)} vectors")
        if len(set(keys.tolist())) != len(keys):
            raise ValueError("ids must be unique")
        self._index = self._new()
        if matrix is not None:
            self._index.add(keys, matrix, threads=self.threads)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add or replace some vectors (for incremental updates between rebuilds)."""
        keys = _keys(ids)
        if not len(keys):
            return
        matrix = _unit_rows(vectors, self.dim)
        if len(matrix) != len(keys) or len(set(keys.tolist())) != len(keys):
            raise ValueError("ids must be unique, one per vector")
        self.remove(keys)
        self._index.add(keys, matrix, threads=self.threads)

    def remove(self, ids: np.ndarray) -> None:
        """Drop these ids (unknown ids are ignored)."""
        keys = _keys(ids)
        if len(keys):
            self._index.remove(keys)

    # -- persistence --------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to ``path`` atomically (a reader sees the old file or the new one)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        try:
            self._index.save(str(tmp))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | os.PathLike[str], dim: int, *, view: bool = False,
             **options: Any) -> AnnIndex:
        """Open a saved index; ``view=True`` memory-maps it read-only (instant open).

        Raises :class:`AnnIndexError` when the file is missing, is not an index, or holds
        vectors of another dimension or metric — the caller then rebuilds from SQLite.
        """
        usearch = _usearch()
        path = Path(path)
        if not path.is_file():
            raise AnnIndexError(f"no vector index at {path}", path=str(path))
        try:
            index = usearch.Index.restore(str(path), view=view)
        except (ValueError, RuntimeError, OSError) as exc:
            raise AnnIndexError(f"the vector index is unreadable ({exc}); rebuild it",
                                path=str(path)) from None
        if index is None:
            raise AnnIndexError("the vector index is unreadable; rebuild it", path=str(path))
        if int(index.ndim) != dim:
            raise AnnIndexError(f"the vector index holds {index.ndim}-d vectors, the model "
                                f"makes {dim}-d ones; rebuild it", path=str(path))
        if index.metric != usearch.MetricKind.IP:
            raise AnnIndexError(f"the vector index uses metric {index.metric}, expected inner "
                                "product; rebuild it", path=str(path))
        dtype = str(index.dtype).rsplit(".", 1)[-1].lower()
        ann = cls(dim, dtype=dtype, **options)
        index.expansion_search = ann.expansion_search
        ann._index = index
        return ann

    # -- searching ----------------------------------------------------------------------------

    def search(self, query: np.ndarray, k: int,
               allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The ``k`` nearest ids with their cosine similarity, best first.

        ``allowed`` restricts results to these ids (from SQL pre-filtering); ids it names that
        are not in the index are ignored.
        """
        import numpy as np

        q = _unit_rows(query, self.dim)[0]
        size = len(self._index)
        if k <= 0 or size == 0:
            return []
        if allowed is None:
            return self._hnsw(q, min(k, size))
        members = np.unique(_keys(allowed))
        if members.size == 0:
            return []
        fetch = math.ceil(2 * k * size / members.size)
        limit = fetch if self.exact_below is None else self.exact_below
        if members.size <= limit or fetch > max(self.max_fetch, k):
            return self._exact(q, k, members)
        while True:
            fetch = min(fetch, size)
            hits = self._hnsw(q, fetch)
            found = np.fromiter((i for i, _ in hits), dtype=np.uint64, count=len(hits))
            keep = np.isin(found, members)
            if keep.sum() >= k or fetch >= size:
                return [hit for hit, ok in zip(hits, keep, strict=True) if ok][:k]
            if fetch >= self.max_fetch:
                return self._exact(q, k, members)
            fetch = min(fetch * 4, self.max_fetch)

    def _hnsw(self, q: np.ndarray, count: int) -> list[tuple[int, float]]:
        matches = self._index.search(q, count, threads=1)
        return [(int(key), 1.0 - float(dist))
                for key, dist in zip(matches.keys, matches.distances, strict=True)]

    def _exact(self, q: np.ndarray, k: int, members: np.ndarray) -> list[tuple[int, float]]:
        import numpy as np

        rows = self._index.get(members)
        if not isinstance(rows, tuple):
            rows = (rows,)
        present = [(int(key), row) for key, row in zip(members, rows, strict=True)
                   if row is not None]
        if not present:
            return []
        ids = np.fromiter((key for key, _ in present), dtype=np.int64, count=len(present))
        matrix = np.vstack([row for _, row in present]).astype(np.float32).reshape(-1, self.dim)
        scores = matrix @ q
        top = min(k, len(scores))
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in best]
