"""A killed `kenning build` converges: SIGKILLed at random write steps, then built again, the vault
is byte-identical to a clean build of the same sources, with no temp file left, and `doctor`
reports the interrupted build before the re-run and is clean after it.

The kill points are write steps (``KENNING_FAULT_KILL_AT``, see ``kenning.vault.fsio``): before
and after each atomic rename and after each build-journal entry, chosen with a fixed seed from
every step a clean build takes, so each run stops at a known place, on any machine.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main

OWNER = "owner:\n  names: [Alex Morgan]\n  emails: [alex@kestrel.dev]\n  domains: [kestrel.dev]\n"
TODAY = "2026-01-15"
PEOPLE = [  # (display name early, display name later, address, organization in signature)
    ("Sarah", "Sarah Chen", "sarah.chen@horizon.vc", "Horizon Ventures"),
    ("Tom", "Tom Okafor", "tom@brightline.io", "Brightline"),
    ("Priya Raman", "Priya Raman", "priya@brightline.io", "Brightline"),
    ("J. Weber", "Julia Weber", "julia.weber@nordwind.de", "Nordwind"),
    ("Marcus Lee", "Marcus Lee", "marcus@horizon.vc", "Horizon Ventures"),
    ("Ana", "Ana Souza", "ana@solaris.com.br", "Solaris"),
    ("Ken Ito", "Ken Ito", "ken.ito@nordwind.de", "Nordwind"),
    ("Lena Park", "Lena Park", "lena@kestrel.dev", "Kestrel Labs"),
]
SUBJECTS = ["Q3 plan", "Seed round", "Pilot kickoff", "Invoice 114", "Board prep",
            "Hiring update", "Roadmap", "Security review"]


def _email(root: Path, i: int, rng: random.Random) -> None:
    day = f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}"
    late = i >= 20  # later mail knows people's full names: pages are renamed mid-build
    sender = PEOPLE[rng.randrange(len(PEOPLE))]
    others = rng.sample([p for p in PEOPLE if p is not sender], 2)
    subject = f"{SUBJECTS[i % len(SUBJECTS)]} #{i}"
    people = [(sender[1 if late else 0], sender[2], "from"), ("Alex Morgan",
              "alex@kestrel.dev", "to")] + [(p[1 if late else 0], p[2], "cc") for p in others]
    lines = ["---", "type: source", "kind: email", f"title: {json.dumps(subject)}",
             f"date: {day}", f"subject: {json.dumps(subject)}", "participants:"]
    for name, address, role in people:
        lines += [f"  - name: {json.dumps(name)}", f"    address: {address}",
                  f"    roles: [{role}]"]
    lines += ["category: personal", "direction: received", "---", f"# {subject}", ""]
    to = ", ".join(f"{n} <{a}>" for n, a, r in people if r != "from")
    lines += [f"## {day} 09:00 +00:00 · {people[0][0]} <{people[0][1]}> → {to}", "",
              f"Let's talk about the {subject.split(' #')[0].lower()} with "
              f"{others[0][1]} next week.", "", "Best,", sender[1], sender[3]]
    rel = root / "sources" / "email" / f"{day}-thread-{i:03d}.md"
    rel.parent.mkdir(parents=True, exist_ok=True)
    rel.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _corpus(tmp: Path) -> Path:
    root = tmp / "base"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    with (root / ".kenning" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(OWNER)
    rng = random.Random(7)
    for i in range(48):
        _email(root, i, rng)
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0",
           "KENNING_TODAY": TODAY, **extra}
    env.pop("KENNING_VAULT", None)
    return env


def _kenning() -> list[str]:
    script = Path(sys.executable).with_name("kenning")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kenning.cli"]


BATCH = ("--batch-size", "4")  # many committed batches, so kills land between them too


def _build_in_process(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_TODAY", TODAY)
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    result = CliRunner().invoke(main, ["-C", str(root), "build", *BATCH])
    assert result.exit_code == 0, result.output


def _files(root: Path) -> tuple[dict[str, bytes], list[str]]:
    """Every file the build owns or writes (pages, build state, registry), and temp files."""
    files, temps = {}, []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if not p.is_file():
            continue
        if p.name.endswith(".tmp"):
            temps.append(rel)
        elif not rel.startswith(("sources/", ".kenning/index", ".kenning/write.lock",
                                 ".kenning/build/build.lock")):
            files[rel] = p.read_bytes()
    return files, temps


def _doctor(root: Path) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "doctor", "--json"])
    return json.loads(result.output)


def _findings(report: dict, check: str) -> list[dict]:
    return [f for f in report["findings"] if f["check"] == check]


def test_killed_builds_converge_to_the_clean_build(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.vault import fsio

    base = _corpus(tmp_path)
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    monkeypatch.setenv("KENNING_FAULT_KILL_AT", "0")  # count the write steps of a clean build
    before = fsio.fault_steps()
    _build_in_process(clean, monkeypatch)
    steps = fsio.fault_steps() - before
    monkeypatch.delenv("KENNING_FAULT_KILL_AT")
    reference, temps = _files(clean)
    assert temps == []
    assert any(p.startswith("people/") for p in reference)
    assert steps > 50, steps

    rng = random.Random(12)
    points = sorted(rng.sample(range(1, steps + 1), 7))
    problems = []
    for at in points:
        root = tmp_path / f"killed-{at}"
        shutil.copytree(base, root)
        proc = subprocess.run([*_kenning(), "-C", str(root), "build", *BATCH],
                              capture_output=True, text=True,
                              env=_env(KENNING_FAULT_KILL_AT=str(at)))
        assert proc.returncode == -signal.SIGKILL, (at, proc.stdout, proc.stderr)
        said = _findings(_doctor(root), "build-run")
        if [f["level"] for f in said] != ["error"] or "kenning build" not in said[0]["fix"]:
            problems.append(f"step {at}: doctor before the re-build: {said}")

        _build_in_process(root, monkeypatch)
        files, temps = _files(root)
        if temps:
            problems.append(f"step {at}: temp files left: {temps}")
        differ = sorted(p for p in set(reference) | set(files)
                        if reference.get(p) != files.get(p))
        if differ:
            problems.append(f"step {at}: {len(differ)} files differ: {differ[:4]}")

        CliRunner().invoke(main, ["-C", str(root), "index"])
        report = _doctor(root)
        if not report["ok"] or [f["level"] for f in _findings(report, "build-run")] != ["ok"] \
                or _findings(report, "temp-files"):
            problems.append(f"step {at}: doctor after the re-build: "
                            f"{[f for f in report['findings'] if f['level'] != 'ok']}")
        shutil.rmtree(root)
    assert problems == [], "\n".join(problems)


def test_left_temp_files_are_reported_and_removed(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A temp file a killed writer left (in people/, in the state folder) is named by doctor,
    removed by the next build and never indexed; one a live writer is writing is left alone."""
    from kenning.vault.fsio import temp_tag

    root = _corpus(tmp_path)
    _build_in_process(root, monkeypatch)
    proc = subprocess.Popen(["true"])  # a pid that has exited
    proc.wait()
    dead = proc.pid
    host = temp_tag().rsplit("_", 1)[0]
    left = root / "people" / f".Sarah Chen.md.{host}_{dead}-abcd1234.tmp"
    left.write_text("---\ntitle: half\n", encoding="utf-8")
    state_tmp = root / ".kenning" / "build" / f".state.json.{host}_{dead}-zz11yy22.tmp"
    state_tmp.write_text("{", encoding="utf-8")
    live = root / "people" / f".Tom Okafor.md.{temp_tag()}-live0000.tmp"
    live.write_text("being written", encoding="utf-8")

    CliRunner().invoke(main, ["-C", str(root), "index"])
    report = _doctor(root)
    temps = _findings(report, "temp-files")
    assert temps and temps[0]["level"] == "warn"
    assert set(temps[0]["items"]) == {left.relative_to(root).as_posix(),
                                      state_tmp.relative_to(root).as_posix()}
    search = CliRunner().invoke(main, ["-C", str(root), "search", "half", "--json"])
    assert ".tmp" not in search.output

    _build_in_process(root, monkeypatch)
    assert not left.exists() and not state_tmp.exists()
    assert live.exists()  # this process is alive: its write is not cut short
