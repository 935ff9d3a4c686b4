"""Derived caches a build keeps between runs (``.kenning/build/cache/``), for speed only.

Two files, each a pure function of what it caches, so a build reads or ignores them and never
needs them:

- ``pages.json``: per entity page, the compact-index entry (:func:`kenning.builder.pages.
  read_entity`) of the page's exact text, keyed by the sha256 of its bytes. A page edited by
  anyone (by hand, an agent, another build) has another hash and is read again.
- ``names.json``: :func:`kenning.builder.names.parse_person` for the names the next build will
  parse again (person pages' names and aliases, unresolved person mentions of the log).

Each file carries a fingerprint of the code that computed it (every ``.py`` file of the
``kenning`` package, and the versions of Python, ``nameparser`` and ``ruamel.yaml``): any other
fingerprint and the file is ignored. Written atomically at the end of a build, only when its
bytes change, never in a dry run; not journaled (a stale or half-old cache is never wrong, only
slower). An unreadable or damaged file is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

CACHE_DIR = "cache"
CACHE_VERSION = 1


def cache_dir(root: Path) -> Path:
    from kenning.builder.state import build_dir

    return build_dir(root) / CACHE_DIR


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The code that computes the cached values: the kenning package's sources, and the
    versions of the libraries and Python that parse names and YAML."""
    import kenning

    h = hashlib.sha256(f"v{CACHE_VERSION} {sys.version}".encode())
    for dist in ("nameparser", "ruamel.yaml"):
        try:
            from importlib.metadata import version

            h.update(f" {dist}={version(dist)}".encode())
        except Exception:  # not installed as a distribution: still a fingerprint
            h.update(f" {dist}=?".encode())
    base = Path(kenning.__file__).resolve().parent
    for path in sorted(base.rglob("*.py")):
        h.update(path.relative_to(base).as_posix().encode() + b"\0")
        try:
            h.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def load(root: Path, name: str) -> dict[str, Any]:
    """The cached entries of ``name`` (``pages`` / ``names``), or {} when absent, damaged or
    computed by other code."""
    try:
        data = json.loads((cache_dir(root) / f"{name}.json").read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint() \
            or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def save(root: Path, name: str, entries: dict[str, Any]) -> None:
    """Write the entries (sorted: the same entries give the same bytes) when they changed."""
    text = json.dumps({"fingerprint": fingerprint(), "entries": entries}, ensure_ascii=False,
                      sort_keys=True, separators=(",", ":")) + "\n"
    path = cache_dir(root) / f"{name}.json"
    try:
        if path.read_bytes() == text.encode("utf-8"):
            return
    except OSError:
        pass
    with contextlib.suppress(OSError):  # a cache not written only costs the next build time
        _replace(path, text.encode("utf-8"))


def _replace(path: Path, data: bytes) -> None:
    """Temp file and rename, without the fsyncs of :func:`kenning.vault.fsio.atomic_write_bytes`
    (a cache needs no durability: a file a crash damaged does not parse, or is not this code's,
    and is ignored). The temp file is named like every writer's, so a killed build's is swept."""
    import os
    import tempfile

    from kenning.vault.fsio import TEMP_SUFFIX, temp_tag

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{temp_tag()}-", suffix=TEMP_SUFFIX,
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
