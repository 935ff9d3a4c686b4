"""Per-person bearer tokens for ``kenning serve --http``: named, scoped, stored hashed.

A token is ``kn_`` + 43 URL-safe characters (32 random bytes). Only its SHA-256 is kept, in
``.kenning/tokens.json`` (mode 0600, replaced atomically under ``.kenning/tokens.lock``); the
secret is printed once by ``kenning token add``. The file lives beside the index, not in it: a
token is not derivable from the vault, so ``kenning rebuild`` (which replaces the index) and a
move to another database (``kenning db copy``) never touch it (docs/decisions.md).

Scopes nest: ``read`` (search, recall, page, graph, session_start) ⊂ ``record`` (+ the write
tools) ⊂ ``admin`` (everything the server's profile offers, with the owner's rights: link and
delete too). A running server re-reads the file when it changes, so a revoke takes effect on the
next request without a restart.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.errors import KenningError
from kenning.vault.fsio import STATE_DIR, acquire_flock, atomic_write_text

TOKENS_FILE = "tokens.json"
TOKENS_LOCK = "tokens.lock"
SCOPES: tuple[str, ...] = ("read", "record", "admin")
PREFIX = "kn_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class TokenError(KenningError):
    """A token command that cannot be done (bad name, unknown token, damaged file)."""


@dataclass(frozen=True)
class Identity:
    """Who an HTTP request comes from: a token's name and its (highest) scope.

    ``named`` is False for the server's single shared token and for an unauthenticated
    loopback server; those keep today's behaviour (every tool of the profile).
    """

    name: str
    scope: str
    named: bool = True
    mounts: tuple[str, ...] | None = None  # the mounts it may read ('vault' its own); None: all

    def allows(self, needed: str) -> bool:
        """True when this identity's scope includes ``needed``."""
        return SCOPES.index(self.scope) >= SCOPES.index(needed)


def tokens_path(root: Path) -> Path:
    return Path(root) / STATE_DIR / TOKENS_FILE


def highest(scopes: list[str] | tuple[str, ...]) -> str:
    """The widest of ``scopes`` (they nest); refuses an unknown one."""
    if not scopes:
        raise TokenError(f"give a scope: one of {', '.join(SCOPES)}")
    for s in scopes:
        if s not in SCOPES:
            raise TokenError(f"unknown scope {s!r}; scopes are {', '.join(SCOPES)}")
    return max(scopes, key=SCOPES.index)


def digest(secret: str) -> str:
    """What is stored for ``secret``."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _read(root: Path) -> list[dict[str, Any]]:
    path = tokens_path(root)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data = json.loads(raw)
        entries = data["tokens"]
        assert isinstance(entries, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise TokenError(f"{path} is damaged (not the JSON Kenning writes); restore it from a "
                         "backup or remove it and add the tokens again") from None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)
            and isinstance(e.get("hash"), str) and e.get("scope") in SCOPES]


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    path = Path(root) / STATE_DIR / TOKENS_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        acquire_flock(fd, 10.0, lambda: TokenError(f"{path} is held by another kenning token "
                                                   "command; try again"))
        yield
    finally:
        os.close(fd)


def _write(root: Path, entries: list[dict[str, Any]]) -> None:
    path = tokens_path(root)
    atomic_write_text(path, json.dumps({"version": 1, "tokens": entries}, indent=2,
                                       ensure_ascii=False) + "\n")
    os.chmod(path, 0o600)


def add(root: Path, name: str, scopes: list[str] | tuple[str, ...],
        mounts: list[str] | tuple[str, ...] | None = None) -> tuple[str, dict[str, Any]]:
    """Create token ``name`` with ``scopes`` (reading only ``mounts`` when given: 'vault' is the
    vault's own pages); (the secret, shown once; its listed entry)."""
    if not _NAME.match(name):
        raise TokenError(f"token name {name!r}: 1-64 letters, digits, '.', '_', '-', '@', "
                         "starting with a letter or digit (it is written into pages as mcp:NAME)")
    scope = highest(list(scopes))
    secret = PREFIX + secrets.token_urlsafe(32)
    entry: dict[str, Any] = {"name": name, "scope": scope, "hash": digest(secret),
                             "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    if mounts:
        from kenning.vault.mounts import VAULT_MOUNT, MountError, load_mounts, unknown_mount

        known = {m.name for m in load_mounts(Path(root))} | {VAULT_MOUNT}
        for mount in mounts:
            if mount not in known:
                raise MountError(unknown_mount(Path(root), mount))
        entry["mounts"] = sorted(set(mounts))
    with _locked(root):
        entries = _read(root)
        if any(e["name"] == name for e in entries):
            raise TokenError(f"a token named {name!r} exists; revoke it first "
                             f"(kenning token revoke {name}) or choose another name")
        _write(root, [*entries, entry])
    return secret, public(entry)


def public(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as listed: never its hash."""
    out = {"name": entry["name"], "scope": entry["scope"], "created": entry.get("created")}
    if entry.get("mounts"):
        out["mounts"] = entry["mounts"]
    return out


def listed(root: Path) -> list[dict[str, Any]]:
    """Every token, without hashes, in the order added."""
    return [public(e) for e in _read(root)]


def revoke(root: Path, name: str) -> None:
    """Remove token ``name``; a running server refuses it from its next request."""
    with _locked(root):
        entries = _read(root)
        kept = [e for e in entries if e["name"] != name]
        if len(kept) == len(entries):
            known = ", ".join(e["name"] for e in entries) or "none"
            raise TokenError(f"no token named {name!r} (tokens: {known})")
        _write(root, kept)


class Tokens:
    """The token file as a running server sees it: re-read whenever the file changes."""

    def __init__(self, root: Path) -> None:
        self.path = tokens_path(root)
        self.root = Path(root)
        self._stamp: tuple[int, int, int] | None = None
        self._entries: list[tuple[bytes, Identity]] = []
        self._lock = threading.Lock()
        self._load()

    def exists(self) -> bool:
        return self.path.exists()

    def _load(self) -> None:
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp == self._stamp and (stamp is not None or not self._entries):
                return
            try:
                entries = _read(self.root) if stamp is not None else []
            except TokenError:
                entries = []  # a damaged file admits nobody (fail closed)
            self._entries = [(e["hash"].encode(), Identity(
                e["name"], e["scope"], mounts=tuple(e["mounts"]) if e.get("mounts") else None))
                for e in entries]
            self._stamp = stamp

    def check(self, secret: bytes) -> Identity | None:
        """The identity ``secret`` belongs to, or None; compares every hash in constant time."""
        self._load()
        try:
            given = digest(secret.decode("utf-8")).encode()
        except UnicodeDecodeError:
            return None
        found = None
        for stored, identity in self._entries:
            if hmac.compare_digest(stored, given):
                found = identity
        return found

    def __len__(self) -> int:
        self._load()
        return len(self._entries)
