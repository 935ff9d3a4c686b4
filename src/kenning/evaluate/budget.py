"""What the evidence evals share: packing ranked cited lines into a word budget, and the run's
plumbing (searching without recording activity, indexing, timing, Markdown tables).

:mod:`kenning.evaluate.locomo` and :mod:`kenning.evaluate.qmsum` both score with
:func:`pack_lines`, so their numbers are measured the same way.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Protocol

from kenning.errors import KenningError

Line = tuple[str, int]


class EvalError(KenningError):
    """The evaluation cannot run: bad data file, unknown conversation, unsupported mode."""


class HitLike(Protocol):
    """What packing needs from a hit."""

    start_line: int
    end_line: int


class ResultLike(Protocol):
    """What packing needs from a result."""

    path: str
    hits: Sequence[HitLike]


def pack_lines(results: Iterable[ResultLike], budget: int, words: Callable[[str, int], int],
               *, overflow: str = "skip") -> list[Line]:
    """The (path, line) pairs a reader with ``budget`` words takes from ranked ``results``.

    Results in order, hits in order, each hit's lines in order; a line already taken is free
    and skipped; a line costs ``words(path, line)``. A line that would overflow the budget is not
    taken; ``overflow="skip"`` goes on with later lines, ``"stop"`` ends the packing there.
    Packing ends when the budget is spent exactly.
    """
    if overflow not in ("skip", "stop"):
        raise ValueError(f"overflow must be 'skip' or 'stop', not {overflow!r}")
    taken: list[Line] = []
    seen: set[Line] = set()
    left = budget
    for result in results:
        for hit in result.hits:
            for line in range(hit.start_line, hit.end_line + 1):
                key = (result.path, line)
                if key in seen:
                    continue
                cost = words(result.path, line)
                if cost > left:
                    if overflow == "stop":
                        return taken
                    continue
                seen.add(key)
                taken.append(key)
                left -= cost
                if left <= 0:
                    return taken
    return taken


class LineWords:
    """Word count of a vault file's line, read once per file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, list[int]] = {}

    def __call__(self, path: str, line: int) -> int:
        counts = self.cache.get(path)
        if counts is None:
            try:
                text = (self.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            counts = self.cache[path] = [len(t.split()) for t in text.split("\n")]
        return counts[line - 1] if 1 <= line <= len(counts) else 0


def check_modes(vault_cls: Any, modes: Sequence[str]) -> None:
    """Raise EvalError when the Vault cannot search in one of ``modes``."""
    if any(m != "lexical" for m in modes) and not _has_mode(vault_cls.search):
        raise EvalError(
            f"this Kenning's Vault.search has no mode= argument, so only lexical search can be "
            f"evaluated (asked for {', '.join(modes)}); run with mode lexical")


def _has_mode(search: Callable[..., Any]) -> bool:
    return "mode" in _parameters(search)


def searcher(vault: Any, mode: str) -> Callable[[str, int], Sequence[Any]]:
    """``search(question, limit)`` in one mode (a search records no recall activity)."""
    params = _parameters(vault.search)
    extra: dict[str, Any] = {}
    if "mode" in params:
        extra["mode"] = mode
    elif mode != "lexical":
        raise EvalError(f"Vault.search cannot search in mode {mode!r}")
    if "group" in params:
        # The budget goes to the best passages first, not to whole pages in page order.
        extra["group"] = "chunk"
    return lambda q, n: vault.search(q, limit=n, **extra)


def index_vault(vault: Any, *, embed: bool) -> Any:
    """Index the vault; vectors only when a dense or hybrid mode is measured."""
    if "embed" in _parameters(vault.index):
        return vault.index(embed=embed)
    return vault.index()


def _parameters(func: Callable[..., Any]) -> Any:
    try:
        return inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}


def forget_activity(root: Path) -> None:
    """Remove recall activity a re-used eval vault may hold (it would bias recency)."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (root / ".kenning" / f"activity.db{suffix}").unlink()


def report_fields(report: Any) -> dict[str, Any]:
    """The JSON-friendly scalar fields of an index report, whatever it carries."""
    if is_dataclass(report) and not isinstance(report, type):
        fields = asdict(report)
    else:
        fields = dict(getattr(report, "__dict__", {}))
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if value is None or isinstance(value, (bool, int, float, str)):
            out[key] = value
        elif isinstance(value, dict) and all(
                v is None or isinstance(v, (bool, int, float, str)) for v in value.values()):
            out[key] = {str(k): v for k, v in value.items()}
        elif isinstance(value, (list, tuple)):
            out[key] = len(value)
    return out


def latency(values: list[float]) -> dict[str, Any]:
    """Count, p50, p95 (nearest rank), mean and max of query times."""
    if not values:
        return {"queries": 0, "p50": None, "p95": None, "mean": None, "max": None}
    ordered = sorted(values)
    return {"queries": len(values), "p50": _percentile(ordered, 50),
            "p95": _percentile(ordered, 95), "mean": statistics.fmean(values),
            "max": ordered[-1]}


def _percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def environment() -> dict[str, Any]:
    """Kenning and Python versions, the machine and the date of the run."""
    from kenning import __version__

    return {"kenning": __version__, "python": sys.version.split()[0],
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
            "date": time.strftime("%Y-%m-%d")}


def safe_name(name: str) -> str:
    """A name safe as a file or folder name."""
    return re.sub(r"[^\w.-]+", "-", name).strip(".-") or "conversation"


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table, first column left, the others right-aligned."""
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def fmt(value: float | None) -> str:
    """A share or mean to three decimals; an em dash for none."""
    return "—" if value is None else f"{value:.3f}"


def fmt0(value: float | None) -> str:
    """A word count, rounded; an em dash for none."""
    return "—" if value is None else f"{value:.0f}"


def fmt_ms(value: float | None) -> str:
    """Milliseconds to one decimal; an em dash for none."""
    return "—" if value is None else f"{value:.1f}"


def work_base(stack: contextlib.ExitStack, workdir: Path | None, prefix: str) -> Path:
    """Where an eval keeps its vaults: ``workdir`` (kept and re-used) or a temporary folder."""
    if workdir is None:
        return Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
    base = Path(workdir).expanduser()
    base.mkdir(parents=True, exist_ok=True)
    return base
