"""Hostile build states: what killed writers and killed builds leave behind must not stay."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from hostile import Case, Run, base_env, kenning_cmd, one_line_naming

TODAY = {"KENNING_TODAY": "2026-01-15"}
PEOPLE = [("Sarah", "Sarah Chen", "sarah.chen@horizon.vc"), ("Tom", "Tom Okafor", "tom@bright.io"),
          ("Priya Raman", "Priya Raman", "priya@bright.io"), ("Ana", "Ana Souza", "ana@sol.br")]


def _emails(root: Path, n: int = 16) -> None:
    """``n`` small email threads; the later ones know people's full names (pages get renamed)."""
    folder = root / "sources" / "email"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        day = f"2025-03-{1 + i:02d}"
        late = 1 if i >= n // 2 else 0
        a, b = PEOPLE[i % len(PEOPLE)], PEOPLE[(i + 1) % len(PEOPLE)]
        lines = ["---", "type: source", "kind: email", f'title: "Plan {i}"', f"date: {day}",
                 f'subject: "Plan {i}"', "participants:",
                 f'  - name: "{a[late]}"', f"    address: {a[2]}", "    roles: [from]",
                 f'  - name: "{b[late]}"', f"    address: {b[2]}", "    roles: [to]",
                 "category: personal", "direction: received", "---", f"# Plan {i}", "",
                 f"## {day} 09:00 +00:00 · {a[late]} <{a[2]}> → {b[late]} <{b[2]}>", "",
                 "The harbour survey is due."]
        (folder / f"{day}-plan-{i}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _temp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.tmp"))


# -- temp files a killed writer left -----------------------------------------------------------


def _left_temp(root: Path) -> None:
    import re
    import socket

    _emails(root, 4)
    # How kenning.vault.fsio names a temp file: .<name>.<host>_<pid>-<random>.tmp
    host = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40]
    (root / "people").mkdir(exist_ok=True)
    (root / "people" / f".Sarah Chen.md.{host}_{_dead_pid()}-abcd1234.tmp").write_text(
        "---\ntitle: Sarah Chen\n---\nkraken half-written\n", encoding="utf-8")
    old = root / "people" / ".Tom Okafor.md.zz9yy8xx.tmp"  # an older Kenning's, an hour old
    old.write_text("kraken", encoding="utf-8")
    os.utime(old, (old.stat().st_atime - 3600, old.stat().st_mtime - 3600))


def _left_temp_check(root: Path, runs: list[Run]) -> list[str]:
    doctor, build, _index, search = runs
    problems = one_line_naming(doctor, "temp file")
    problems += one_line_naming(build, "removed 2 temp file")
    if _temp_files(root):
        problems.append(f"temp files still there: {_temp_files(root)}")
    if ".tmp" in search.stdout or "No results" not in search.stdout:
        problems.append(f"a temp file was indexed: {search.stdout[-300:]!r}")
    if not list((root / "people").glob("*.md")):
        problems.append("the build made no person page")
    return problems


# -- a damaged build state ----------------------------------------------------------------------


def _garbage_state(root: Path) -> None:
    _emails(root, 4)
    state = root / ".kenning" / "build"
    state.mkdir(parents=True, exist_ok=True)
    (state / "state.json").write_bytes(b'{"sources": {"sources/email/x.md": "sha256:\xff')
    (state / "mentions.jsonl").write_text('{"source": "a"\n\x00\x01garbage\n', encoding="utf-8")


def _garbage_state_check(root: Path, runs: list[Run]) -> list[str]:
    build, again = runs
    problems = one_line_naming(build, "state.json", "unreadable build state")
    if build.returncode != 0 or not list((root / "people").glob("*.md")):
        problems.append(f"build failed or made no page: {build.output[-300:]!r}")
    if "Built 0" not in again.stdout:
        problems.append(f"the second build was not a no-op: {again.stdout[-200:]!r}")
    return problems


def _garbage_journal(root: Path) -> None:
    _emails(root, 4)
    state = root / ".kenning" / "build"
    state.mkdir(parents=True, exist_ok=True)
    (state / "journal.jsonl").write_bytes(
        b'{"build": {"pid": 1}}\n{"path": "../../etc/passwd", "first": true, "before": "x"}\n'
        b'{"path": "people/Ghost.md", "first": true, "before": null, "after": null}\n\xff\xfe{')


def _garbage_journal_check(root: Path, runs: list[Run]) -> list[str]:
    doctor, build = runs
    problems = one_line_naming(doctor, "interrupted")
    problems += one_line_naming(build, "interrupted")
    if build.returncode != 0:
        problems.append(f"build failed: {build.output[-300:]!r}")
    if (root / ".kenning" / "build" / "journal.jsonl").exists():
        problems.append("the journal is still there after a build")
    return problems


# -- a build killed part-way ----------------------------------------------------------------------


def _killed_build(root: Path) -> None:
    _emails(root)
    clean = root.parent / "clean"
    shutil.copytree(root, clean)
    env = {**base_env(), **TODAY}
    subprocess.run([*kenning_cmd(), "-C", str(clean), "build", "--batch-size", "2"],
                   capture_output=True, env=env, check=True)
    # SIGKILL at a write step part-way (the fault suite's switch, kenning.vault.fsio).
    subprocess.run([*kenning_cmd(), "-C", str(root), "build", "--batch-size", "2"],
                   capture_output=True, env={**env, "KENNING_FAULT_KILL_AT": "41"})


def _owned_files(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(("sources/", ".kenning/index", ".kenning/write",
                                                ".kenning/build/build.lock")):
            out[rel] = p.read_bytes()
    return out


def _killed_build_check(root: Path, runs: list[Run]) -> list[str]:
    doctor, _build = runs
    problems = one_line_naming(doctor, "build", "interrupted")
    clean, now = _owned_files(root.parent / "clean"), _owned_files(root)
    differ = sorted(p for p in set(clean) | set(now) if clean.get(p) != now.get(p))
    if differ:
        problems.append(f"{len(differ)} files differ from a clean build: {differ[:5]}")
    if _temp_files(root):
        problems.append(f"temp files left: {_temp_files(root)}")
    state = json.loads((root / ".kenning" / "build" / "state.json").read_text())
    if state.get("deleted"):
        problems.append(f"the state lists pages as deleted by hand: {state['deleted']}")
    return problems


# -- a state that lists a page under a name it no longer has ------------------------------------


def _renamed_after_save(root: Path) -> None:
    _emails(root, 8)
    env = {**base_env(), **TODAY}
    subprocess.run([*kenning_cmd(), "-C", str(root), "build"], capture_output=True, env=env,
                   check=True)
    # The person renames a page in Obsidian: the state still lists the old path.
    page = next(p for p in (root / "people").glob("*.md") if "Sarah" in p.name)
    page.rename(page.with_name("Sarah C (Horizon).md"))
    _emails(root, 12)  # new mail from the same people


def _renamed_after_save_check(root: Path, runs: list[Run]) -> list[str]:
    (build,) = runs
    problems = []
    state = json.loads((root / ".kenning" / "build" / "state.json").read_text())
    if state.get("deleted"):
        problems.append(f"a renamed page is listed as deleted by hand: {state['deleted']}")
    sarah = sorted(p.name for p in (root / "people").glob("*.md") if "Sarah" in p.name)
    if sarah != ["Sarah C (Horizon).md"]:
        problems.append(f"Sarah's pages: {sarah} (build said {build.stdout[-300:]!r})")
    return problems


CASES = [
    Case("build", "temp-files-left-by-a-killed-writer", _left_temp,
         (("doctor",), ("build",), ("index",), ("search", "kraken")), _left_temp_check, TODAY),
    Case("build", "garbage-build-state", _garbage_state, (("build",), ("build",)),
         _garbage_state_check, TODAY),
    Case("build", "garbage-build-journal", _garbage_journal, (("doctor",), ("build",)),
         _garbage_journal_check, TODAY),
    Case("build", "build-killed-mid-way", _killed_build,
         (("doctor",), ("build", "--batch-size", "2")), _killed_build_check, TODAY),
    Case("build", "state-lists-a-page-renamed-after-the-save", _renamed_after_save,
         (("build",),), _renamed_after_save_check, TODAY),
]
