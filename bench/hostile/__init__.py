"""The hostile-input corpus: cases that must index, sync, build and serve within fixed bounds.

Each module in this package defines ``CASES: list[Case]`` for one area (``files``, ``sources``,
``writes``, ``remote``, …). A case writes its hostile input into a fresh, initialised vault,
names the commands to run against it, and checks what they left: a clear message naming the file,
and everything else still indexed, synced and served. ``run_case`` runs every command in its own
process with a hard memory cap and a hang guard, and reports time and peak memory, so
``bench/faults.py`` can print them and ``tests/test_hostile.py`` can hold them.

A command is a tuple of ``kenning`` CLI arguments (``"{root}"`` is replaced by the vault root),
or ``("@mcp", TOOL, JSON_ARGS)`` / ``("@mcp-remote", TOOL, JSON_ARGS)``: one tool call through the
official MCP client against ``kenning serve`` over stdio, as a local caller, or over HTTP on
loopback with a bearer token, as a remote one. Its stdout is the tool result as JSON
(``{"error": bool, "text": str}``).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Targets of issue 12: every hostile case bounded by 30 s and 1 GB here.
TIME_TARGET_S = 30.0
MEMORY_TARGET_MIB = 1024.0
# Hard guards so a regression fails (and is reported) instead of taking the machine down.
HANG_GUARD_S = 120.0
MEMORY_CAP_BYTES = 3 * 1024**3


@dataclass(frozen=True)
class Run:
    """One command's outcome."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mib: float
    timed_out: bool

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class Case:
    """One hostile input and what must hold after the commands ran on it."""

    area: str
    name: str
    setup: Callable[[Path], None]
    commands: tuple[tuple[str, ...], ...]
    check: Callable[[Path, list[Run]], list[str]]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.area}/{self.name}"


@dataclass(frozen=True)
class Outcome:
    case: Case
    runs: list[Run]
    problems: list[str]

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)  # the whole case: every command, in turn

    @property
    def max_rss_mib(self) -> float:
        return max((r.max_rss_mib for r in self.runs), default=0.0)


def kenning_cmd() -> list[str]:
    """The kenning CLI next to this interpreter (the project's .venv)."""
    script = Path(sys.executable).with_name("kenning")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kenning.cli"]


def base_env() -> dict[str, str]:
    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0",
           "PYTHONUTF8": "1"}
    env.pop("KENNING_VAULT", None)
    return env


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))


def run_command(root: Path, args: Sequence[str], env: dict[str, str] | None = None,
                timeout: float = HANG_GUARD_S) -> Run:
    """Run one case command in a fresh process group, capped in memory and time."""
    args = tuple(a.replace("{root}", str(root)) for a in args)
    if args and args[0] in ("@mcp", "@mcp-remote"):
        argv = [sys.executable, str(HERE / "mcp_call.py"), args[0], str(root), *args[1:]]
    else:
        argv = [*kenning_cmd(), "-C", str(root), *args]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**base_env(), **(env or {})}, preexec_fn=_limit_memory,
                            start_new_session=True)
    streams: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n=n, f=f: streams.__setitem__(n, f.read()))
               for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    # Reaped with wait4, which gives this command's own peak RSS (its waited-for children, an
    # MCP server, included), not the largest of every process this runner ever started.
    timed_out = False
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline and not timed_out:
            timed_out = True
            os.killpg(proc.pid, 9)
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    out, err = (streams.get(n, b"").decode("utf-8", "replace") for n in ("out", "err"))
    return Run(args, proc.returncode, out, err, seconds, usage.ru_maxrss / 1024, timed_out)


def run_case(case: Case, workdir: Path) -> Outcome:
    """Initialise a vault under ``workdir``, set the case up, run its commands, check."""
    root = workdir / "vault"
    init = subprocess.run([*kenning_cmd(), "init", str(root)], capture_output=True, text=True,
                          env=base_env())
    if init.returncode != 0:
        raise RuntimeError(f"kenning init failed: {init.stderr}")
    case.setup(root)
    runs = [run_command(root, args, case.env) for args in case.commands]
    problems = []
    for r in runs:
        if r.timed_out:
            problems.append(f"{' '.join(r.args)}: still running after {HANG_GUARD_S:.0f} s")
        elif "Traceback (most recent call last)" in r.stderr:
            problems.append(f"{' '.join(r.args)}: traceback: {r.stderr.strip().splitlines()[-1]}")
    problems += case.check(root, runs)
    return Outcome(case, runs, problems)


def all_cases(areas: Sequence[str] = ()) -> list[Case]:
    """Every case of every area module (or of the named areas)."""
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "mcp_call":
            continue
        if areas and info.name not in areas:
            continue
        module = importlib.import_module(f"hostile.{info.name}")
        cases += module.CASES
    return cases


def one_line_naming(run: Run, *needles: str) -> list[str]:
    """Problems unless some output line names every needle (a file, a line, a field)."""
    for line in run.output.splitlines():
        if all(n in line for n in needles):
            return []
    return [f"{' '.join(run.args)}: no line names {needles!r}: {run.output.strip()[-300:]!r}"]
