"""The dense arm of recall: the query embedded, the vector matrix, the chunks nearest in meaning.

:func:`prepare` readies a search's dense side (or says why there is none): it checks the
embedder and the index's vectors, loads the matrix (cached until the index changes), and starts
embedding the query on a worker thread so that the lexical arm runs meanwhile.
:func:`candidates` then ranks chunks by cosine, exactly or through an HNSW index on very large
vaults. Matrix storage and the HNSW index are the index layer's (:mod:`kenning.index.vectors`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.index.queries import recall as recall_sql
from kenning.index.store.base import Store

CANDIDATE_CHUNKS = 200  # as many as the lexical arm ranks


@dataclass(frozen=True)
class DenseArm:
    """The dense side of a search: the vector matrix and the query vector (or its Future)."""

    matrix: Any
    query: Any
    ann: Any = None  # an HNSW index over the matrix, for very large vaults

    def vector(self) -> Any:
        """The query vector, waiting for it if it is still being embedded."""
        return self.query.result() if hasattr(self.query, "result") else self.query


def embedding_pool() -> ThreadPoolExecutor:
    """A worker thread for embedding queries (its owner shuts it down)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-embed")


def prepare(store: Store, embedder: Callable[[], Any], query: str, mode: str, *,
            state_dir: Path, context: float, ann_threshold: int,
            pool: Callable[[], Executor]) -> tuple[DenseArm | None, list[str], Any]:
    """The dense arm for a ``mode`` search of ``query``: (arm or None, notes, vector coverage).

    ``embedder()`` loads the configured embedder (None when switched off; raises
    EmbedderUnavailable); ``pool()`` gives the executor the query is embedded on. With no arm
    the notes say why (no embedder, vectors of another model, no vectors yet)."""
    from kenning.index import vectors
    from kenning.index.embedders import EmbedderUnavailable, fit

    if mode == "lexical" or not query.strip():
        return None, [], None
    try:
        model = embedder()
        if model is not None:
            model.dim  # noqa: B018 — a remote embedder learns its dimension here
    except EmbedderUnavailable as exc:
        return None, [f"{exc.message} (fix: {exc.fix})"], None
    if model is None:
        return None, ["embeddings are switched off in the config"], None
    stored = store.get_meta("embed_model")
    if stored and stored != model.model_id:
        coverage = vectors.coverage(store, model.model_id, model.dim)
        return None, [f"the index holds vectors of {stored}, the config asks for "
                      f"{model.model_id}: run `kenning index` to re-embed"], coverage
    # The matrix is cached until the index changes, and knows its own coverage.
    matrix = vectors.load_matrix(store, model.model_id, state_dir, context=context)
    coverage = matrix.coverage
    if coverage[0] == 0:
        return None, ["no vectors yet: run `kenning index` to embed"], coverage
    notes = []
    if coverage[0] < coverage[1]:
        notes.append(f"vectors cover {coverage[0]} of {coverage[1]} chunks; "
                     "`kenning index` fills the rest")
    ann = vectors.approximate_index(matrix, model.model_id, state_dir, ann_threshold)
    # The bundled model counts its tokens and is cut on a word boundary; other embedders
    # get the first 2,000 characters (~512 tokens of English) and apply their own limit.
    fitted = fit(model, query[:100_000], query=True)
    if fitted.truncated:
        notes.append(f"the query is {fitted.tokens} tokens, the embedding model reads "
                     f"{fitted.limit}: the dense arm used its first {len(fitted.text):,} "
                     f"of {len(query):,} characters, the lexical arm all of it")
    text = fitted.text if fitted.limit else query[:2000]
    # Embed the query on another thread while the lexical arm runs (both release the GIL).
    future = pool().submit(model.embed_query, text)
    return DenseArm(matrix, future, ann), notes, coverage


_WORKER: ThreadPoolExecutor | None = None


def worker() -> ThreadPoolExecutor:
    """The thread the dense ranking runs on while the caller's thread runs the lexical SQL."""
    global _WORKER
    if _WORKER is None:
        _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-dense")
    return _WORKER


def candidates(dense: DenseArm, allowed: Any) -> list[tuple[int, float]]:
    """(chunk id, cosine) of the best chunks by meaning: exact, or through the HNSW index;
    only chunks in ``allowed`` (an id array) when given. Touches numpy arrays only."""
    from kenning.index.vectors import dense_search

    vector = dense.vector()
    if dense.ann is not None:
        return list(dense.ann.search(vector, CANDIDATE_CHUNKS, allowed))
    return dense_search(dense.matrix, vector, k=CANDIDATE_CHUNKS, allowed=allowed)


def allowed_chunks(store: Store, where: str, params: Sequence[object]) -> Any:
    """The ids of the chunks a filter keeps, as an int64 array for :func:`candidates`."""
    import numpy as np

    ids = recall_sql.allowed_chunk_ids(store, where, params)
    return np.fromiter(ids, dtype=np.int64, count=len(ids))


def not_embedded(store: Store, dense: DenseArm, chunk_ids: Sequence[int]) -> list[int]:
    """The chunks among ``chunk_ids`` that have text worth embedding but no vector in the
    matrix (written a moment ago, or the embedder was down)."""
    import numpy as np

    matrix = dense.matrix
    ids = getattr(matrix, "ids", None)
    if not chunk_ids or ids is None or matrix.coverage[0] >= matrix.coverage[1]:
        return []  # every chunk has its vector: the common case costs nothing
    wanted = np.fromiter(chunk_ids, dtype=np.int64, count=len(chunk_ids))
    missing = wanted[~np.isin(wanted, ids)].tolist()
    if not missing:
        return []
    return recall_sql.embeddable(store, missing)
