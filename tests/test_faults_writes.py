"""Every agent write survives SIGKILL: killed at random points (fixed seed) while it holds the
vault write lock, the next command finds each page as before or fully written, never half, and
the batch (pages, the created-pages registry, the idempotency entry) all or nothing; the agent's
retry with the same key then leaves exactly what one uninterrupted run leaves.

Real `kenning` processes on a vault in tmp_path; no mocks.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_robustness import holds_open

from kenning.api import Vault

KENNING = [sys.executable, "-m", "kenning.cli"]
DAY = "2026-03-04"
SEED = 1212
KILLS = 5  # per operation
LOCK = Path(".kenning/write.lock")
JOURNAL = Path(".kenning/pending-writes.json")


def _env() -> dict[str, str]:
    env = {**os.environ, "KENNING_TODAY": DAY, "KENNING_EMBEDDINGS": "none",
           "KENNING_PROGRESS_EVERY": "0"}
    env.pop("KENNING_VAULT", None)
    return env


def _batch(folder: Path) -> Path:
    """A record touching many pages at once: 24 new people, observations on two old ones."""
    data = {"entities": [{"name": f"Keeper {i:02d}", "type": "person",
                          "observations": [f"Keeps light {i}", f"Logs storm {i}"]}
                         for i in range(24)],
            "observations": [{"entity": "Ada Park", "text": "Runs the harbour board"},
                             {"entity": "Ben Ode", "text": "Audits the lighthouse budget"}]}
    path = folder / "batch.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _ops(folder: Path) -> dict[str, tuple[str, ...]]:
    return {
        "record": ("record", "--batch", str(_batch(folder)), "--key", "r1"),
        "decide": ("decide", "Use SQLite", "--domain", "engineering", "--decided",
                   "SQLite for the index", "--because", "One file, no server",
                   "--rejected", "Postgres: a server to run", "--key", "d1"),
        "revise": ("revise", "Ada Park", "Likes tea", "Likes green tea", "--key", "v1"),
        "retain": ("retain", "W", "The harbour opens at six", "--entity", "Ada Park",
                   "--key", "t1"),
        "note": ("note", "Call the harbour master about the lease", "--title",
                 "Harbour lease", "--key", "n1"),
    }


def _state(root: Path) -> dict[str, bytes]:
    """The files a write may change: every page, and the registry of created pages."""
    out = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.md")
           if ".kenning" not in p.parts}
    created = root / ".kenning" / "created.json"
    out[".kenning/created.json"] = created.read_bytes() if created.exists() else b""
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault with two people, one fact to revise, indexed."""
    os.environ["KENNING_TODAY"] = DAY
    try:
        vault, _ = Vault.init(tmp_path_factory.mktemp("base") / "v")
        with vault:
            vault.record([{"name": "Ada Park", "type": "person", "observations": ["Likes tea"]},
                          {"name": "Ben Ode", "type": "person"}])
    finally:
        os.environ.pop("KENNING_TODAY", None)
    return vault.root


def _copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          timeout=120, env=_env(), cwd=root.parent)


def _kill_in_write(root: Path, args: tuple[str, ...], delay: float, *,
                   in_batch: bool = False) -> bool:
    """Start ``kenning ARGS``; once it holds the write lock (``in_batch``: once its journal of
    page writes exists, i.e. mid-batch), wait ``delay`` s and SIGKILL it. True when it was
    killed there (False: it finished first)."""
    proc = subprocess.Popen([*KENNING, "-C", str(root), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=_env(), cwd=root.parent)
    deadline = time.monotonic() + 60  # against a hang, not a timing assertion
    while not ((root / JOURNAL).exists() if in_batch else holds_open(proc.pid, root / LOCK)):
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
            return False
        assert time.monotonic() < deadline
        time.sleep(0.0005)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.returncode == -signal.SIGKILL


def _lock_held(root: Path, args: tuple[str, ...]) -> float:
    """How long ``kenning ARGS`` holds the write lock here: the window the kills are drawn
    from (a measure for aiming, never asserted)."""
    proc = subprocess.Popen([*KENNING, "-C", str(root), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env(), cwd=root.parent)
    while not holds_open(proc.pid, root / LOCK) and proc.poll() is None:
        time.sleep(0.0005)
    start = time.monotonic()
    proc.wait()
    return max(time.monotonic() - start, 0.005)


@pytest.mark.parametrize("op", ["record", "decide", "revise", "retain", "note"])
def test_killed_write_is_all_or_nothing_and_its_retry_converges(op: str, base: Path,
                                                                tmp_path: Path) -> None:
    args = _ops(tmp_path)[op]
    before = _state(base)
    clean = _copy(base, tmp_path / "clean")
    done = _run(clean, *args)
    assert done.returncode == 0, done.stderr
    after = _state(clean)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed, "the operation must change something"

    window = _lock_held(_copy(base, tmp_path / "timed"), args)
    rng = random.Random(f"{SEED}-{op}")
    killed = 0
    for n in range(KILLS):
        root = _copy(base, tmp_path / f"kill{n}")
        # Odd kills aim at the batch itself (journal written, pages being written).
        killed += _kill_in_write(root, args, rng.uniform(0.0, window if n % 2 == 0 else 0.002),
                                 in_batch=n % 2 == 1)
        # Any next command (here a read) finishes a batch the kill interrupted.
        facts = _run(root, "facts", "Ada Park")
        assert facts.returncode == 0, facts.stderr
        assert not (root / JOURNAL).exists(), "the interrupted batch was not finished"
        now = _state(root)
        for path in changed:
            assert now.get(path) in (before.get(path), after.get(path)), \
                f"{op}, kill {n}: {path} is neither as before nor fully written"
        whole = {now.get(p) == after.get(p) for p in changed}
        assert len(whole) == 1, f"{op}, kill {n}: part of the batch was written"
        assert not [p for p in root.rglob("*.tmp")], f"{op}, kill {n}: temp files left"
        # The agent retries with the same key: exactly one run's worth, nothing twice.
        retry = _run(root, *args)
        assert retry.returncode == 0, retry.stderr
        assert _state(root) == after, f"{op}, kill {n}: the retry did not converge"
    assert killed > 0, "no kill landed while the write was under way"
