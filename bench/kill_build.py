"""Does a killed `kenning build` converge? SIGKILL builds of Enron at random points, build again.

    .venv/bin/python bench/kill_build.py [--runs 10] [--max-seconds S] [--seed 12]
                                         [--mbox PATH] [--work DIR] [--doctor]

1. Syncs the Enron mbox into a vault once (``kenning sync email``) and builds one copy cleanly
   (``kenning build`` in a subprocess): the reference.
2. ``--runs`` times: a fresh copy of the synced vault, ``kenning build`` started and SIGKILLed
   after a random delay between 1 s and ``--max-seconds`` (default: as long as the clean build
   took, so every kill lands inside a build; fixed ``--seed``); with ``--doctor``, what
   ``kenning doctor --json``'s ``build-run`` check says then; then ``kenning build`` again.
3. Each run is compared with the reference: every file outside ``sources/`` and the index
   (pages, ``.kenning/build/state.json``, ``mentions.jsonl``, ``created.json``) byte for byte,
   and temp files (``*.tmp``) left anywhere in the vault are counted.

Prints one line per run and ``converged k/N``. Every process gets the same ``KENNING_TODAY``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE.parents[1] / "shared" / "eval" / "enron"
SKIP = (".kenning/index.db", ".kenning/write.lock", ".kenning/index.lock")


def _env() -> dict[str, str]:
    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0",
           "KENNING_TODAY": "2026-01-15", "PYTHONUTF8": "1"}
    env.pop("KENNING_VAULT", None)
    return env


def _kenning() -> list[str]:
    script = Path(sys.executable).with_name("kenning")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kenning.cli"]


def snapshot(root: Path) -> tuple[dict[str, bytes], list[str]]:
    """(vault-relative path → bytes of every file the build owns or writes, temp files)."""
    files: dict[str, bytes] = {}
    temps: list[str] = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if name.endswith(".tmp"):
                temps.append(rel)
                continue
            if rel.startswith("sources/") or rel.startswith(SKIP):
                continue
            if rel.startswith(".kenning/index") or rel.endswith((".db-wal", ".db-shm")):
                continue
            files[rel] = (Path(dirpath) / name).read_bytes()
    return files, sorted(temps)


def compare(clean: dict[str, bytes], other: dict[str, bytes]) -> list[str]:
    """Paths whose bytes differ, are missing or are extra."""
    return sorted(p for p in set(clean) | set(other) if clean.get(p) != other.get(p))


def build(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_kenning(), "-C", str(root), "build"], capture_output=True,
                          text=True, env=_env())


def doctor_build_finding(root: Path) -> str:
    """What `kenning doctor` says about the build run (its ``build-run`` check), if anything."""
    subprocess.run([*_kenning(), "-C", str(root), "index"], capture_output=True, env=_env())
    out = subprocess.run([*_kenning(), "-C", str(root), "doctor", "--json"],
                         capture_output=True, text=True, env=_env())
    try:
        data = json.loads(out.stdout)
    except ValueError:
        return "(doctor output unreadable)"
    found = [f for f in data.get("findings", []) if f.get("check") == "build-run"]
    return f"{found[0]['level']}: {found[0]['message']}" if found else "nothing"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="latest kill (default: the clean build's duration)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--mbox", type=Path, default=EVAL / "enron_with_categories.mbox")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: tmp)")
    parser.add_argument("--doctor", action="store_true",
                        help="also ask doctor about each killed build (an index run each)")
    args = parser.parse_args()
    if not args.mbox.exists():
        print(f"no Enron mbox at {args.mbox}; nothing to measure")
        return 0
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="kill-build-", dir=args.work))
    try:
        base = work / "synced"
        sync = subprocess.run([*_kenning(), "init", str(base)], capture_output=True, env=_env())
        sync = subprocess.run([*_kenning(), "-C", str(base), "sync", "email", str(args.mbox)],
                              capture_output=True, text=True, env=_env())
        if sync.returncode != 0:
            print(sync.stdout, sync.stderr)
            return 1
        clean_root = work / "clean"
        shutil.copytree(base, clean_root)
        started = time.perf_counter()
        done = build(clean_root)
        seconds = time.perf_counter() - started
        clean, clean_temps = snapshot(clean_root)
        print(f"clean build: {seconds:.1f} s, {sum(1 for p in clean if p.endswith('.md'))} "
              f"pages; {done.stdout.strip().splitlines()[0] if done.stdout.strip() else ''}")
        shutil.rmtree(clean_root)
        latest = args.max_seconds or seconds
        converged = 0
        temps_total = 0
        for i in range(args.runs):
            delay = rng.uniform(1.0, latest)
            root = work / f"run{i}"
            shutil.copytree(base, root)
            proc = subprocess.Popen([*_kenning(), "-C", str(root), "build"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=_env(), start_new_session=True)
            try:
                proc.wait(timeout=delay)
                killed = False
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                killed = True
            _, left = snapshot(root)
            said = doctor_build_finding(root) if args.doctor and killed else "-"
            again = build(root)
            files, temps = snapshot(root)
            diff = compare(clean, files)
            pages = [p for p in diff if p.endswith(".md")]
            ok = not diff and not temps
            converged += ok
            temps_total += len(temps)
            print(f"run {i}: killed at {delay:5.1f} s{'' if killed else ' (had finished)'}; "
                  f"temp files after the kill {len(left)}, after the re-build {len(temps)}; "
                  f"{len(pages)} pages and {len(diff) - len(pages)} state files differ"
                  f"{' (' + ', '.join(diff[:3]) + ')' if diff else ''}; rc {again.returncode}"
                  f"; doctor before the re-build: {said}")
            shutil.rmtree(root)
        print(f"converged {converged}/{args.runs}; temp files left {temps_total}; "
              f"reference temp files {len(clean_temps)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
