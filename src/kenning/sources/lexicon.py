"""Name lexicons the connectors and the build share: the ``nicknames`` table (loaded once per
process) and the given names it knows ("Will", "May" and "Mark" are names, not words)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def nicknamer() -> Any:
    """The ``nicknames`` package's table (Bob ↔ Robert)."""
    from nicknames import NickNamer

    return NickNamer()


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """Given names known to the nicknames table, folded, of three letters or more."""
    nn = nicknamer()
    names: set[str] = set()
    for table in (getattr(nn, "_canonical_lookup", {}), getattr(nn, "_nickname_lookup", {})):
        names.update(str(k) for k in table)
    return frozenset(n for n in names if len(n) >= 3)
