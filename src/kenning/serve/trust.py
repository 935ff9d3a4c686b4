"""The caller policy of the MCP server: who is trusted, what remote callers may not do, clamps.

Local stdio callers are trusted (they run as the vault's owner, with the same rights as the CLI).
HTTP callers are remote unless the server was started with ``--trust-http``. Remote callers:

- never see or call ``delete`` and ``link`` (manual links change ranking);
- are limited in request size (``MAX_BODY_BYTES``, HTTP 413) and rate (``RATE_PER_SECOND``
  with a burst of ``RATE_BURST`` per client address, HTTP 429).

For everyone: paths stay inside the vault (absolute paths, ``..`` and symlinks out refused),
strings carry no NUL bytes, one call's arguments stay under ``MAX_ARGUMENT_BYTES`` (remote) or
``MAX_LOCAL_ARGUMENT_BYTES`` (trusted: room for a long transcript), and graph
depth, result counts and token budgets are clamped.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.errors import KenningError, UnsafePath
from kenning.vault.fsio import resolve_inside

MAX_DEPTH = 4
MAX_LIMIT = 50
MAX_BUDGET = 8000
MAX_ARGUMENT_BYTES = 1_000_000  # one call's arguments, remote callers
MAX_LOCAL_ARGUMENT_BYTES = 10_000_000  # trusted callers (a long session transcript)
MAX_BODY_BYTES = 1_048_576
RATE_PER_SECOND = 20.0
RATE_BURST = 40
# A bearer token shorter than this is guessable by the rate limit alone (16 random hex
# characters are 64 bits); `openssl rand -hex 32` gives 64.
MIN_TOKEN_CHARS = 16

# Tools a remote caller never sees and cannot call.
TRUSTED_ONLY = frozenset({"delete", "link"})


class Refused(KenningError):
    """A call the caller policy does not allow."""


@dataclass(frozen=True)
class Caller:
    """Who is calling: the transport and whether it is trusted."""

    transport: str  # "stdio" | "http"
    trusted: bool
    mounts: tuple[str, ...] | None = None  # the only mounts it may read (a token's); None: all

    def scope(self, asked: Sequence[str] | None) -> list[str] | None:
        """The mounts a call reads: what it asked for, within what the caller may read."""
        if self.mounts is None:
            return list(asked) if asked else None
        if not asked:
            return list(self.mounts)
        refused = sorted(set(asked) - set(self.mounts))
        if refused:
            raise Refused(f"mounts: this token may read only {', '.join(self.mounts)}, not "
                          f"{', '.join(refused)}")
        return list(asked)

    @property
    def remote(self) -> bool:
        """True for callers without the owner's rights."""
        return not self.trusted

    @property
    def max_argument_bytes(self) -> int:
        """How large one call's arguments may be (JSON, UTF-8)."""
        return MAX_LOCAL_ARGUMENT_BYTES if self.trusted else MAX_ARGUMENT_BYTES


def may_call(caller: Caller, tool: str) -> bool:
    """Whether ``caller`` may see and call ``tool``."""
    return caller.trusted or tool not in TRUSTED_ONLY


def refuse_unless_allowed(caller: Caller, tool: str) -> None:
    """Raise Refused when a remote caller asks for a trusted-only tool."""
    if not may_call(caller, tool):
        raise Refused(f"`{tool}` is not available to remote callers (HTTP without --trust-http); "
                      "run it locally with the CLI or over stdio")


def clamp(value: int | None, upper: int, *, default: int, lower: int = 1,
          name: str = "value", notes: list[str] | None = None) -> int:
    """``value`` limited to ``lower..upper`` (``default`` when None); notes say when cut."""
    if value is None:
        return default
    out = max(lower, min(upper, int(value)))
    if out != value and notes is not None:
        notes.append(f"{name} {value} clamped to {out} (server limit {lower}..{upper})")
    return out


def check_strings(value: Any, where: str = "arguments") -> None:
    """Refuse NUL bytes anywhere in a call's arguments (they end C strings and file names)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise Refused(f"{where} contains a NUL byte")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_strings(item, f"{where}[{i}]")


def looks_like_path(ref: str) -> bool:
    """True for a page reference written as a path rather than a title or alias."""
    return ("/" in ref or "\\" in ref or ref.startswith(("~", "."))
            or ref.lower().endswith(".md") or os.path.isabs(ref))


def safe_path(root: Path, relative: str) -> Path:
    """The file ``relative`` names inside the vault; refuses absolute paths, ``..``, symlinks out.

    Stricter than ``resolve_inside``: a ``..`` component is refused even when it would land
    inside the vault again, so a caller cannot probe the folders around the vault.
    """
    parts = relative.replace("\\", "/").split("/")
    if ".." in parts:
        raise UnsafePath(f"path must not contain '..': {relative!r}")
    from kenning.vault.mounts import load_mounts, mounted_file, split_mount

    mount = split_mount(relative)[0]
    if mount and any(m.name == mount for m in load_mounts(root)):
        return mounted_file(root, relative)  # a mounted folder's file (read only)
    if relative.startswith("\\") or (len(relative) > 1 and relative[1] == ":"):
        raise UnsafePath(f"path must be relative to the vault: {relative!r}")
    return resolve_inside(root, relative)


def token_problem(token: str, variable: str) -> str | None:
    """Why ``token`` (read from ``variable``) is too weak to guard the server, or None."""
    if len(token.strip()) < MIN_TOKEN_CHARS:
        return (f"{variable} holds a {len(token.strip())}-character bearer token; use at least "
                f"{MIN_TOKEN_CHARS} random characters (e.g. `export {variable}="
                "$(openssl rand -hex 32)`)")
    if token != token.strip():
        return f"{variable}: the bearer token starts or ends with white space; remove it"
    return None


def bare_host(host: str) -> str:
    """``host`` without the brackets a URL puts around an IPv6 address (``[::1]`` → ``::1``)."""
    host = host.strip()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def url_host(host: str) -> str:
    """``host`` as it goes into a URL: an IPv6 address in one pair of brackets."""
    bare = bare_host(host)
    return f"[{bare}]" if ":" in bare else bare


def is_loopback(host: str) -> bool:
    """True when ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare_host(host)).is_loopback
    except ValueError:
        return False


class TokenBucket:
    """Per-client token buckets: ``rate`` requests a second, bursts up to ``burst``."""

    def __init__(self, rate: float = RATE_PER_SECOND, burst: int = RATE_BURST,
                 *, max_clients: int = 10_000) -> None:
        self.rate, self.burst, self.max_clients = rate, float(burst), max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str, now: float | None = None) -> float:
        """Take one token for ``client``: 0.0 when allowed, else seconds until the next token."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.pop(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                wait = 0.0
            else:
                self._buckets[client] = (tokens, now)
                wait = (1.0 - tokens) / self.rate
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            return wait


_PLACES = ("path", "citation", "source", "definition")


def confine(data: Any, mounts: Sequence[str]) -> Any:
    """``data`` without any listed item that names a page outside ``mounts`` (by its path,
    citation, source or definition): what a token confined to some mounts may see."""
    from kenning.vault.mounts import mount_keys, split_mount

    allowed = mount_keys(mounts)

    def inside(item: Any) -> bool:
        if not isinstance(item, dict):
            return True
        return all(split_mount(item[k])[0] in allowed for k in _PLACES
                   if isinstance(item.get(k), str) and item[k])

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value if inside(v)]
        return value

    return walk(data)
