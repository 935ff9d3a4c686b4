"""Bad input gives a clear error and loses nothing: malformed and unreadable files, symlinks,
a run killed mid-way, two runs at once, touched/deleted/renamed files, atomic writes, unsafe paths.

Everything here is real: files in tmp_path, the real SQLite index, real ``kenning`` subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import write

from kenning.api import Vault
from kenning.errors import IndexBusy, UnsafePath
from kenning.index.store import Store
from kenning.index.store import sqlite_schema as dbm
from kenning.vault import fsio
from kenning.vault.fsio import MAX_FILE_BYTES, atomic_write_text, resolve_inside

KENNING = [sys.executable, "-m", "kenning.cli"]
N_NOTES = 3000  # big enough that a run lasts well past its first committed batch
PAGE_TABLES = ("names", "chunks", "facts", "timeline", "retained")


# -- helpers ------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("KENNING_VAULT", None)
    env["COLUMNS"] = "200"
    return env


def cli(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``kenning -C root ARGS`` to completion."""
    return subprocess.run([*KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          timeout=timeout, env=_env(), cwd=root.parent)


def start_cli(root: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``kenning -C root ARGS`` in the background."""
    return subprocess.Popen([*KENNING, "-C", str(root), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(), cwd=root.parent)


def make_notes(root: Path, n: int = N_NOTES) -> int:
    """Write ``n`` small linked notes fast; returns how many Markdown files the vault now has."""
    for i in range(n):
        folder = root / "topics" / f"g{i % 10}"
        if i < 10:
            folder.mkdir(parents=True, exist_ok=True)
        dangling = f" Also [[Nowhere {i}]]." if i % 500 == 0 else ""
        (folder / f"Note {i:04d}.md").write_bytes(
            f"---\ntype: topic\n---\n# Note {i:04d}\n\nkw{i:04d} alpha beta gamma, see "
            f"[[Note {(i + 1) % n:04d}]].{dangling}\n\n## More\n\ndelta epsilon{i % 7}\n"
            .encode())
    return sum(1 for _ in root.rglob("*.md"))


def one(db: Store, sql: str, *args: object) -> int:
    return int(db.one(sql, args)[0])


@contextmanager
def readonly(root: Path) -> Iterator[Callable[[str], object | None]]:
    """A read-only view of a vault's index that tolerates it not existing yet (SQLite's file,
    opened read-only: another process creates and migrates it)."""
    path = dbm.db_path(root)
    conns: list[sqlite3.Connection] = []

    def query(sql: str) -> object | None:
        if not conns:
            if not path.exists():
                return None
            conns.append(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5,
                                         isolation_level=None))
        try:
            row = conns[0].execute(sql).fetchone()
        except sqlite3.OperationalError:  # not created or migrated yet
            return None
        return row[0] if row else None

    try:
        yield query
    finally:
        for conn in conns:
            conn.close()


def wait_until(condition: Callable[[], bool], procs: list[subprocess.Popen[str]], what: str
               ) -> None:
    """Poll ``condition`` (a file or database signal); fail if a process exits first."""
    deadline = time.monotonic() + 60  # a safety net against hangs, not a timing assertion
    while not condition():
        for proc in procs:
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"pid {proc.pid} exited (rc {proc.returncode}) before {what}:"
                            f"\n{out}\n{err}")
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.002)


def holds_open(pid: int, path: Path) -> bool:
    """True when process ``pid`` has ``path`` open (Linux /proc)."""
    fd_dir, target = Path(f"/proc/{pid}/fd"), os.path.realpath(path)
    try:
        fds = list(fd_dir.iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd) == target:
                return True
        except OSError:
            continue
    return False


def search_snapshot(vault: Vault, queries: list[str]) -> list[list[tuple[object, ...]]]:
    """Search results without chunk ids: path, score, and each hit's lines and snippet."""
    return [sorted((r.path, round(r.score, 9),
                    tuple((h.start_line, h.end_line, h.snippet) for h in r.hits))
                   for r in vault.search(q)) for q in queries]


def index_snapshot(db: Store) -> dict[str, object]:
    """Row counts and the resolved link graph (by path), independent of row ids."""
    counts = {t: one(db, f"SELECT count(*) FROM {t}")
              for t in ("files", "pages", "names", "chunks", "chunks_fts", "links", "facts",
                        "timeline", "problems")}
    links = sorted(db.rows(
        """SELECT o.path, l.kind, l.line, l.rel, l.dst_ref, s.path, d.path, l.resolution
           FROM links l LEFT JOIN pages o ON o.id = l.origin_id
           LEFT JOIN pages s ON s.id = l.src_id LEFT JOIN pages d ON d.id = l.dst_id"""
    ), key=repr)
    return {"counts": counts, "links": links}


def assert_consistent(vault: Vault, n_files: int, queries: list[str]) -> None:
    """One row per file, no duplicates, FTS in step, every link resolved, doctor healthy, and the
    same answers as an index rebuilt from scratch."""
    db = vault.store
    assert db.get_meta("run_state") == "complete"
    assert one(db, "SELECT count(*) FROM files") == n_files
    assert one(db, "SELECT count(DISTINCT path) FROM files") == n_files
    assert one(db, "SELECT count(*) FROM files WHERE status != 'ok'") == 0
    assert one(db, "SELECT count(*) FROM pages") == n_files
    assert one(db, "SELECT count(DISTINCT path) FROM pages") == n_files
    assert one(db, "SELECT count(*) FROM pages WHERE id NOT IN (SELECT page_id FROM chunks)") == 0
    assert one(db, "SELECT count(*) FROM chunks_fts") == one(db, "SELECT count(*) FROM chunks")
    assert one(db, "SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM chunks_fts)"
               ) == 0
    assert one(db, "SELECT count(*) FROM links WHERE resolution IS NULL") == 0
    assert one(db, "SELECT count(*) FROM links WHERE resolution = 'resolved'") >= n_files - 1
    assert one(db, "SELECT count(*) FROM dirty_names") == 0
    health = vault.doctor()
    assert health.ok, [f for f in health.findings if f.level == "error"]

    before = index_snapshot(db), search_snapshot(vault, queries)
    assert all(before[1]), f"every query should find something: {before[1]}"
    vault.rebuild()
    after = index_snapshot(vault.store), search_snapshot(vault, queries)
    assert before[0] == after[0], "the index differs from one rebuilt from scratch"
    assert before[1] == after[1], "search answers differ from a freshly rebuilt index"


QUERIES = ["kw1234", "Note 0042", "kw2999", "epsilon3 kw0003"]


# -- 1. malformed frontmatter ---------------------------------------------------------------------


BROKEN = "---\ntype: topic\nkey: [unclosed\n---\n# Broken Page\n\nThe zeppelin hangar notes.\n"


def test_malformed_frontmatter_keeps_body_and_doctor_names_the_line(vault: Vault) -> None:
    write(vault, "topics/Broken Page.md", BROKEN)
    write(vault, "topics/Fine.md", "# Fine\n\nNothing wrong here.\n")
    shown = cli(vault.root, "index")  # the run that finds it names the file and line
    assert shown.returncode == 0, shown.stderr
    assert "  topics/Broken Page.md:3: " in shown.stdout, shown.stdout
    assert cli(vault.root, "index").stdout.count("Broken Page.md:3") == 0  # found once
    report = vault.index()
    assert report.problems == 1
    assert report.skipped == []

    assert [r.path for r in vault.search("zeppelin")] == ["topics/Broken Page.md"]
    assert vault.find("Broken Page").path == "topics/Broken Page.md"

    health = vault.doctor()
    assert not health.ok
    errors = [f for f in health.findings if f.level == "error"]
    assert [f.check for f in errors] == ["frontmatter"]
    assert any(item.startswith("topics/Broken Page.md:3:") for item in errors[0].items), \
        errors[0].items
    assert errors[0].fix

    done = cli(vault.root, "doctor")
    assert done.returncode == 1, done
    assert "topics/Broken Page.md:3" in done.stdout
    assert "fix: " in done.stdout
    assert "unhealthy" in done.stdout

    write(vault, "topics/Broken Page.md", BROKEN.replace("[unclosed", "[closed]"))
    assert vault.index().problems == 0
    assert vault.doctor().ok
    assert cli(vault.root, "doctor").returncode == 0


# -- 2. unreadable files --------------------------------------------------------------------------


BAD_FILES = {
    "topics/latin1.md": (b"# Latin\n\nCaf\xe9 quokkabad\n", "invalid UTF-8 at line 3"),
    "topics/binary.md": (b"# Binary quokkabad\n\x00\x01\x02\x03", "binary"),
    "topics/huge.md": (b"# Huge quokkabad\n" + b"x" * MAX_FILE_BYTES, "too large"),
}


def test_unreadable_files_are_skipped_with_a_reason_then_indexed_once_fixed(vault: Vault) -> None:
    for rel, (data, _) in BAD_FILES.items():
        (vault.root / rel).write_bytes(data)
    write(vault, "topics/Good.md", "# Good\n\nThe wombat is fine.\n")

    report = vault.index()
    assert [p for p, _ in report.skipped] == sorted(BAD_FILES)
    for path, reason in report.skipped:
        assert BAD_FILES[path][1] in reason, (path, reason)
    assert report.added == 2  # Good.md and memory.md
    assert [r.path for r in vault.search("wombat")] == ["topics/Good.md"]
    assert vault.search("quokkabad") == []
    assert one(vault.store, "SELECT count(*) FROM pages WHERE path IN (?, ?, ?)", *BAD_FILES) == 0

    shown = cli(vault.root, "index")
    assert shown.returncode == 0, shown
    assert "Skipped 3 file(s):" in shown.stdout
    assert "0 added, 0 updated, 0 deleted, 2 unchanged, 3 skipped." in shown.stdout  # each once
    for rel, (_, reason) in BAD_FILES.items():
        line = next(x for x in shown.stdout.splitlines() if x.strip().startswith(rel + ":"))
        assert reason in line, line

    health = vault.doctor()
    assert health.ok  # a skipped file is a warning, the rest of the vault is fine
    warned = next(f for f in health.findings if f.check == "skipped")
    assert warned.level == "warn" and warned.fix
    for rel, (_, reason) in BAD_FILES.items():
        assert any(item.startswith(rel + ":") and reason in item for item in warned.items), \
            warned.items

    for rel in BAD_FILES:
        write(vault, rel, f"# Fixed {Path(rel).stem}\n\nquokkafixed now ({Path(rel).stem}).\n")
    report = vault.index()
    assert report.skipped == []
    assert report.added == 3
    assert sorted(r.path for r in vault.search("quokkafixed")) == sorted(BAD_FILES)
    assert not any(f.check == "skipped" for f in vault.doctor().findings)


def test_special_files_named_md_are_skipped_not_read(vault: Vault) -> None:
    """A FIFO would block a read forever; it must be skipped with a reason, not opened."""
    os.mkfifo(vault.root / "topics" / "pipe.md")
    write(vault, "topics/Good.md", "# Good\n\nThe wombat is fine.\n")
    done = cli(vault.root, "index", "--json", timeout=30)
    assert done.returncode == 0, done
    report = json.loads(done.stdout)
    assert [s["path"] for s in report["skipped"]] == ["topics/pipe.md"]
    assert "regular file" in report["skipped"][0]["reason"]
    assert [r.path for r in vault.search("wombat")] == ["topics/Good.md"]


def test_file_that_becomes_unreadable_leaves_no_stale_page(vault: Vault,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """A page whose file can no longer be read is skipped, and its old rows must go with it.

    Root can read any file, so the refusal is injected at the read (as EACCES would give it).
    """
    path = write(vault, "topics/Secret.md", "# Secret\n\nThe okapi plan.\n")
    vault.index()
    assert [r.path for r in vault.search("okapi")] == ["topics/Secret.md"]

    real_read = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "Secret.md":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    report = vault.index()
    assert report.skipped == [("topics/Secret.md", "cannot read: Permission denied")]
    assert vault.search("okapi") == [], (
        "BUG (kenning/index/indexer.py, Indexer._index_file): a file that became unreadable is "
        "marked skipped but its page, chunks and links stay searchable; drop the page too")
    assert one(vault.store, "SELECT count(*) FROM pages WHERE path = 'topics/Secret.md'") == 0


# -- 3. symlinks ----------------------------------------------------------------------------------


def test_symlinks_out_of_the_vault_and_loops_are_not_followed(vault: Vault,
                                                              tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Secret.md").write_text("# Secret\n\nplutonium recipe\n")
    (outside / "Single.md").write_text("# Single\n\nunobtainium recipe\n")
    os.symlink(outside, vault.root / "topics" / "ext")
    os.symlink(outside / "Single.md", vault.root / "topics" / "single.md")

    real = vault.root / "projects" / "sub"
    real.mkdir()
    write(vault, "projects/sub/Real Note.md", "# Real Note\n\nquokka inside the vault\n")
    os.symlink("..", real / "up")                      # a loop back to its parent
    os.symlink(".", real / "self")                     # a loop to itself
    os.symlink(vault.root, real / "top")               # a loop to the vault root
    os.symlink("projects/sub", vault.root / "aaa-link")        # sorts before the real folder
    os.symlink("../projects/sub", vault.root / "topics" / "zz-link")
    os.symlink("../projects/sub/Real Note.md", vault.root / "people" / "Alias.md")

    done = cli(vault.root, "index", "--json", timeout=30)  # a loop must not hang the run
    assert done.returncode == 0, done
    report = json.loads(done.stdout)
    assert [(s["path"], "outside" in s["reason"]) for s in report["skipped"]] == [
        ("topics/single.md", True)]

    paths = [r[0] for r in vault.store.rows("SELECT path FROM files ORDER BY path")]
    assert paths == ["memory.md", "projects/sub/Real Note.md", "topics/single.md"], (
        "each note once, at its real path (a symlinked folder or file inside the vault is a "
        "second way to the same notes)")
    assert vault.search("plutonium") == []
    assert vault.search("unobtainium") == []
    assert [r.path for r in vault.search("quokka")] == ["projects/sub/Real Note.md"]
    assert vault.find("Real Note").path == "projects/sub/Real Note.md"
    health = vault.doctor()
    assert health.ok, health.findings
    assert not any(f.check == "coverage" and f.level != "ok" for f in health.findings)


def test_symlinked_folder_inside_the_vault_is_fine(vault: Vault) -> None:
    write(vault, "people/Sarah Chen.md", "---\ntype: person\n---\n# Sarah Chen\n\nPartner.\n")
    write(vault, "topics/Team.md", "# Team\n\nSee [[Sarah Chen]] and [[people/Sarah Chen]].\n")
    os.symlink("people", vault.root / "contacts")
    report = vault.index()
    assert report.skipped == []
    assert [r.path for r in vault.search("Partner")] == ["people/Sarah Chen.md"]
    assert vault.find("Sarah Chen").path == "people/Sarah Chen.md"
    assert dict(vault.store.rows(
        "SELECT resolution, count(*) FROM links GROUP BY resolution")) == {"resolved": 2}
    assert vault.doctor().ok


# -- 4. SIGKILL mid-run ---------------------------------------------------------------------------


def test_run_killed_mid_way_is_reported_and_the_next_run_completes_it(vault: Vault) -> None:
    total = make_notes(vault.root)
    proc = start_cli(vault.root, "index")
    try:
        with readonly(vault.root) as query:
            wait_until(lambda: (query("SELECT count(*) FROM files") or 0) > 0, [proc],
                       "the first batch was committed")
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            assert proc.returncode == -signal.SIGKILL
            committed = query("SELECT count(*) FROM files")
            state = query("SELECT value FROM meta WHERE key = 'run_state'")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert isinstance(committed, int)
    assert 0 < committed < total, "the kill must land mid-run for this test to mean anything"
    assert state == "running"

    health = vault.doctor()
    assert not health.ok
    run = next(f for f in health.findings if f.check == "index-run")
    assert run.level == "error" and "interrupted" in run.message and run.fix

    report = vault.index()
    assert report.added == total - committed, "the next run resumes, it does not redo"
    assert report.unchanged == committed
    assert_consistent(vault, total, QUERIES)


# -- 5. two runs at once --------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_two_index_runs_at_once_one_indexes_the_other_waits_or_refuses(vault: Vault) -> None:
    total = make_notes(vault.root)
    lock = dbm.state_dir(vault.root) / dbm.LOCK_NAME
    procs = [start_cli(vault.root, "index", "--wait", "60", "--json") for _ in range(2)]
    holder = None
    try:
        with readonly(vault.root) as query:
            wait_until(lambda: query("SELECT value FROM meta WHERE key = 'run_state'")
                       == "running", procs, "one run started indexing")
            holder_pid = int(lock.read_text())
            holder = next(p for p in procs if p.pid == holder_pid)
            waiter = next(p for p in procs if p is not holder)
            os.kill(holder.pid, signal.SIGSTOP)  # freeze the holder mid-run, lock held
            assert query("SELECT value FROM meta WHERE key = 'run_state'") == "running"
            wait_until(lambda: holds_open(waiter.pid, lock), [waiter],
                       "the second run waits for the lock")

            refused = cli(vault.root, "index", timeout=60)  # no --wait
            assert refused.returncode == 1, refused
            lines = refused.stderr.strip().splitlines()
            assert len(lines) == 1, refused.stderr
            assert "another kenning process" in lines[0] and f"pid {holder.pid}" in lines[0]
            assert "--wait" in lines[0]

            with Vault(vault.root) as probe:  # a run in progress is not an interrupted run
                run = next(f for f in probe.doctor().findings if f.check == "index-run")
                assert run.level == "warn", run

            os.kill(holder.pid, signal.SIGCONT)
        outs = {p.pid: p.communicate(timeout=120) for p in procs}
    finally:
        for p in procs:
            if p.poll() is None:
                if holder is not None:
                    os.kill(holder.pid, signal.SIGCONT)
                p.kill()
                p.communicate()
    assert [p.returncode for p in procs] == [0, 0], outs
    did = json.loads(outs[holder.pid][0])
    waited = json.loads(outs[waiter.pid][0])
    assert (did["added"], did["unchanged"]) == (total, 0)
    assert (waited["added"], waited["updated"], waited["unchanged"]) == (0, 0, total), \
        "the run that waited found nothing left to do"
    assert_consistent(vault, total, QUERIES)


LOCK_HOLDER = """\
import sys
from pathlib import Path
from kenning.api import Vault
with Vault(Path(sys.argv[1])).store.writer_lock():
    print("held", flush=True)
    sys.stdin.read()
"""


def test_writer_lock_is_exclusive_across_processes_and_dies_with_its_holder(
        vault: Vault) -> None:
    child = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(vault.root)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        with pytest.raises(IndexBusy, match=rf"another kenning process .*pid {child.pid}"), \
                vault.store.writer_lock(wait=0):
            pytest.fail("acquired a lock another process holds")
        with pytest.raises(IndexBusy):
            vault.index()
        assert vault.store.lock_held()
        os.kill(child.pid, signal.SIGKILL)  # the kernel drops a dead holder's flock
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()
    assert not vault.store.lock_held()
    with vault.store.writer_lock(wait=0):
        assert int((dbm.state_dir(vault.root) / dbm.LOCK_NAME).read_text()) == os.getpid()
    assert vault.index().added == 1


# -- 6. touch, edit, delete, rename ---------------------------------------------------------------


DOOMED = """\
---
type: person
aliases: [Dee]
organization: "[[Acme Corp]]"
---
# Doomed Person

Dee studies the narwhal migration with [[Acme Corp]].

## Facts
- works_at:: [[Acme Corp]] Researcher [from:: 2025-01-01]
- Likes tea [epistemic:: hypothesis]

## Timeline
- 2026-03-02 — Joined the narwhal survey.
- not a dated bullet
"""
ACME = "---\ntype: organization\n---\n# Acme Corp\n\nWorks with [[Doomed Person]] and [[Dee]].\n"


def _page_rows(db: Store, page_id: int) -> dict[str, list[tuple[object, ...]]]:
    rows = {t: db.rows(f"SELECT * FROM {t} WHERE page_id = ? ORDER BY id" if t != "names"
                          else "SELECT * FROM names WHERE page_id = ? ORDER BY norm",
                          (page_id,)) for t in PAGE_TABLES}
    rows["pages"] = db.rows("SELECT * FROM pages WHERE id = ?", (page_id,))
    rows["fts"] = db.rows("SELECT rowid, * FROM chunks_fts WHERE rowid IN "
                             "(SELECT id FROM chunks WHERE page_id = ?)", (page_id,))
    rows["links"] = db.rows("SELECT * FROM links WHERE origin_id = ? ORDER BY id",
                               (page_id,))
    return rows


def test_touch_without_change_is_not_reparsed_and_an_edit_is(vault: Vault) -> None:
    path = write(vault, "people/Doomed Person.md", DOOMED)
    write(vault, "organizations/Acme Corp.md", ACME)
    vault.index()
    page_id = vault.find("Doomed Person").id
    before = _page_rows(vault.store, page_id)
    assert before["chunks"] and before["facts"] and before["links"]

    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    report = vault.index()
    assert (report.touched, report.updated, report.added, report.unchanged) == (1, 0, 0, 2)
    assert _page_rows(vault.store, page_id) == before
    assert one(vault.store, "SELECT mtime_ns FROM files WHERE id = ?", page_id) == \
        path.stat().st_mtime_ns
    assert vault.index().unchanged == 3  # the new mtime was remembered

    write(vault, "people/Doomed Person.md", DOOMED.replace("narwhal migration", "orca pods"))
    report = vault.index()
    assert (report.updated, report.touched, report.added) == (1, 0, 0)
    assert vault.find("Doomed Person").id == page_id
    assert [r.path for r in vault.search("orca")] == ["people/Doomed Person.md"]
    assert vault.search("migration") == []


def _traces(db: Store, page_id: int, path: str) -> dict[str, int]:
    """Rows anywhere in the index that still belong to (or point at) a page or its file."""
    traces = {t: one(db, f"SELECT count(*) FROM {t} WHERE page_id = ?", page_id)
              for t in PAGE_TABLES}
    traces["files"] = one(db, "SELECT count(*) FROM files WHERE id = ? OR path = ?",
                          page_id, path)
    traces["pages"] = one(db, "SELECT count(*) FROM pages WHERE id = ? OR path = ?",
                          page_id, path)
    traces["chunks_fts"] = one(db, "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN"
                               " (SELECT id FROM chunks)")  # orphans of any page
    traces["links"] = one(db, "SELECT count(*) FROM links WHERE origin_id = ? OR src_id = ?"
                          " OR dst_id = ?", page_id, page_id, page_id)
    traces["problems"] = one(db, "SELECT count(*) FROM problems WHERE file_id = ?", page_id)
    return traces


def test_deleted_file_leaves_nothing_behind(vault: Vault) -> None:
    path = write(vault, "people/Doomed Person.md", DOOMED)
    write(vault, "organizations/Acme Corp.md", ACME)
    vault.index()
    page_id = vault.find("Dee").id
    traces = _traces(vault.store, page_id, "people/Doomed Person.md")
    assert all(traces[t] for t in ("names", "chunks", "facts", "timeline", "files", "pages",
                                   "links", "problems")), traces
    assert one(vault.store, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'narwhal'") > 0

    path.unlink()
    report = vault.index()
    assert report.deleted == 1
    assert _traces(vault.store, page_id, "people/Doomed Person.md") == dict.fromkeys(traces, 0)
    assert vault.search("narwhal") == []
    assert one(vault.store, "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'narwhal'") == 0
    # Links that pointed at it are now dangling, not resolved to a ghost.
    assert sorted(vault.store.rows(
        "SELECT dst_ref, resolution FROM links WHERE dst_ref IN ('Doomed Person', 'Dee')")) == [
        ("Dee", "unresolved"), ("Doomed Person", "unresolved")]
    assert one(vault.store, "SELECT count(*) FROM links WHERE resolution IS NULL") == 0
    assert one(vault.store, "SELECT count(*) FROM dirty_names") == 0


def test_renamed_file_moves_everywhere_and_links_by_title_still_resolve(vault: Vault) -> None:
    old = write(vault, "people/Doomed Person.md", DOOMED)
    write(vault, "organizations/Acme Corp.md", ACME)
    vault.index()
    old_id = vault.find("Doomed Person").id

    new = vault.root / "people" / "archive" / "Dee P.md"
    new.parent.mkdir()
    old.rename(new)
    report = vault.index()
    assert (report.deleted, report.added) == (1, 1)
    db = vault.store
    for table in ("files", "pages"):
        assert one(db, f"SELECT count(*) FROM {table} WHERE path = ?",
                   "people/Doomed Person.md") == 0
        assert one(db, f"SELECT count(*) FROM {table} WHERE path = ?",
                   "people/archive/Dee P.md") == 1
    assert one(db, "SELECT count(*) FROM names WHERE norm = 'people/doomed person'") == 0
    new_id = vault.find("Doomed Person").id
    assert vault.find("Dee").id == new_id
    assert vault.find("people/archive/Dee P").id == new_id
    if new_id != old_id:  # SQLite may hand the freed id to the new file; if not, it is empty
        assert _traces(db, old_id, "people/Doomed Person.md") == dict.fromkeys(
            (*PAGE_TABLES, "files", "pages", "chunks_fts", "links", "problems"), 0)
    assert one(db, "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)"
               ) == 0
    assert [r.path for r in vault.search("narwhal")] == ["people/archive/Dee P.md"]
    incoming = db.rows(
        """SELECT l.dst_ref, l.resolution, d.path FROM links l JOIN pages o ON o.id = l.origin_id
           LEFT JOIN pages d ON d.id = l.dst_id WHERE o.path = 'organizations/Acme Corp.md'
           ORDER BY l.dst_ref""")
    assert incoming == [("Dee", "resolved", "people/archive/Dee P.md"),
                        ("Doomed Person", "resolved", "people/archive/Dee P.md")]
    errors = [f for f in vault.doctor().findings if f.level == "error"]
    assert [(f.check, f.items[0].split(": ")[0]) for f in errors] == [
        ("timeline", "people/archive/Dee P.md:16")], "only its own problem, at its new path"


# -- 7. atomic writes -----------------------------------------------------------------------------


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "notes" / "page.md"
    atomic_write_text(target, "first\r\nline two\n")
    atomic_write_text(target, "second ü\n")
    assert target.read_bytes() == "second ü\n".encode()
    assert sorted(p.name for p in target.parent.iterdir()) == ["page.md"]


def test_failed_atomic_write_keeps_the_original(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "page.md"
    target.write_bytes(b"original \xe2\x9c\x93\n")

    def fail(src: object, dst: object) -> None:
        assert Path(str(src)).exists(), "the new bytes were written to a temp file first"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsio.os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, "replacement\n")
    assert target.read_bytes() == b"original \xe2\x9c\x93\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]


# -- 8. resolve_inside ----------------------------------------------------------------------------


def test_resolve_inside_rejects_paths_out_of_the_vault(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# x\n")
    os.symlink(outside, vault.root / "topics" / "ext")
    os.symlink(outside / "x.md", vault.root / "topics" / "x.md")
    for bad in ("../x", "../outside/x.md", "topics/../../outside/x.md", "/etc/passwd",
                str(vault.root / "memory.md"), "topics/ext/x.md", "topics/x.md", ""):
        with pytest.raises(UnsafePath):
            resolve_inside(vault.root, bad)
    assert resolve_inside(vault.root, "memory.md") == vault.root / "memory.md"
    assert resolve_inside(vault.root, "people/New Page.md") == vault.root / "people/New Page.md"
    assert resolve_inside(vault.root, "topics/./../memory.md") == vault.root / "memory.md"


def test_a_broken_vault_config_is_one_line_naming_file_and_line(tmp_path) -> None:
    from click.testing import CliRunner

    from kenning.cli import main

    root = tmp_path / "v"
    CliRunner().invoke(main, ["init", str(root)])
    config = root / ".kenning" / "config.yaml"
    config.write_text(config.read_text() + "\nllm:\n  url: http://a\nllm:\n  url: http://b\n")
    out = CliRunner().invoke(main, ["-C", str(root), "index", "--no-embed"])
    assert out.exit_code == 1
    (line,) = [x for x in out.output.splitlines() if x.strip()]
    assert line.startswith(f"error: {config}:") and "duplicate key" in line
