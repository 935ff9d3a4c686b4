"""Idempotency keys for the write path: a retried call returns the first call's result.

A caller (an agent that retries after a timeout) passes ``key``; the first call with it stores
``{key, op, digest of the arguments, result}`` in ``.kenning/idempotency/<hash of key>.json``,
written in the same journaled batch as the pages (``vault/writes.py``), so a crash leaves both
or neither. A later call with the same key and the same arguments writes nothing and returns the
stored result (``"replayed": true``); with other arguments it is refused, naming the key.
Entries are kept for ``KEEP_DAYS`` days.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from kenning.memory.common import MemoryInputError, Problems
from kenning.vault.layout import STATE_DIR

FOLDER = "idempotency"
KEEP_DAYS = 7
MAX_KEY = 200


def check_key(p: Problems, key: Any) -> str | None:
    """The key as given (one line, at most ``MAX_KEY`` characters), or None when absent."""
    if key is None:
        return None
    return p.text("key", key, limit=MAX_KEY, one_line=True)


def digest(op: str, payload: Any) -> str:
    """A stable fingerprint of a call: the operation and its arguments as canonical JSON."""
    data = json.dumps([op, payload], ensure_ascii=False, sort_keys=True, default=str,
                      separators=(",", ":"))
    # surrogatepass: a lone surrogate is refused later, with its field named, not here.
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def entry_path(key: str) -> str:
    """The vault-relative file of ``key`` (named by its hash: any text is a safe key)."""
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]
    return f"{STATE_DIR}/{FOLDER}/{name}.json"


def replay(root: Path, key: str | None, op: str, fingerprint: str) -> dict[str, Any] | None:
    """The stored result of an earlier call with ``key`` (None when there is none); raises
    MemoryInputError when that call had other arguments. Call it holding the write lock."""
    if key is None:
        return None
    path = Path(root) / entry_path(key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # none, or unreadable: the call runs (content dedupe still holds)
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    if data.get("op") != op or data.get("digest") != fingerprint:
        raise MemoryInputError([
            f"key: {key[:60]!r} was already used by an earlier {data.get('op')} call with "
            "other arguments; use a new key for a new call"])
    result = data.get("result")
    return {**result, "replayed": True} if isinstance(result, dict) else None


def entry(key: str, op: str, fingerprint: str, result: dict[str, Any]) -> tuple[str, str]:
    """(vault path, text) of the stored entry, for the batch that writes the call's pages."""
    data = {"key": key, "op": op, "digest": fingerprint, "at": time.time(), "result": result}
    return entry_path(key), json.dumps(data, ensure_ascii=False, default=str) + "\n"


def prune(root: Path, *, now: float | None = None) -> int:
    """Remove entries older than ``KEEP_DAYS`` days; returns how many."""
    folder = Path(root) / STATE_DIR / FOLDER
    cutoff = (now or time.time()) - KEEP_DAYS * 86400
    removed = 0
    try:
        items = list(os.scandir(folder))
    except OSError:
        return 0
    for item in items:
        try:
            if item.name.endswith(".json") and item.stat().st_mtime < cutoff:
                os.unlink(item.path)
                removed += 1
        except OSError:
            continue
    return removed
