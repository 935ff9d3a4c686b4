"""Vectors carried between any two stores by (model, text hash), so no text is embedded twice.

Used by a rebuild (the old index into the one built beside it) and by a move between backends
(SQLite to PostgreSQL and back). Reads the source with :meth:`Store.read_vectors` and writes
with :meth:`Store.put_vectors`, so it works for every pair of backends; a backend may override
:meth:`Store.copy_vectors_from` with a faster path for its own kind (SQLite: ``ATTACH``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.index.store.base import Store


def copy_vectors(source: Store, target: Store, storage: str = "float32") -> int:
    """Copy every vector of ``source`` that ``target`` lacks; the number copied. One
    transaction per batch on ``target``: a copy cut short keeps what it wrote, and the next
    embedding pass (or copy) fills the rest."""
    copied = 0
    for batch in source.read_vectors():
        by_key: dict[tuple[str, int], list[tuple[str, object]]] = {}
        for model, digest, dim, vector in batch:
            by_key.setdefault((model, dim), []).append((digest, vector))
        with target.transaction():
            for (model, dim), rows in by_key.items():
                have: set[str] = set()
                digests = [digest for digest, _ in rows]
                for part, marks in target.in_batches(digests):
                    have.update(r[0] for r in target.rows(
                        "SELECT text_hash FROM embeddings"
                        f" WHERE model = ? AND text_hash IN ({marks})", (model, *part)))
                new = [(digest, vector) for digest, vector in rows if digest not in have]
                if new:
                    target.put_vectors(model, dim, new, storage)  # type: ignore[arg-type]
                    copied += len(new)
    if copied:
        with target.transaction():
            from kenning.index.vectors import bump_version

            bump_version(target)
    return copied
