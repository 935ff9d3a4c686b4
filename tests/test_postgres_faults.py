"""PostgreSQL faults, for real: the server is killed with SIGKILL (the postmaster and every
backend, as a crash would) in the middle of a full index and in the middle of memory writes,
then restarted; the next run completes and the index holds exactly the rows a clean index of
the same files holds (no row lost, none duplicated). A streaming replica, started from the same
binaries, serves search while the primary takes writes.

Every test uses ``pg_cluster``, a private server for this module (the session's server is never
killed), and compares against a clean index in another schema of the same server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_harness import PgServer, index_snapshot, snapshot_diff

from kenning.api import Vault
from kenning.sample import copy_sample

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "bench" / "gen_vault.py"
NOTES = 1000  # ~12,700 chunks: a full PostgreSQL index takes a few seconds here


def _gen_vault():
    spec = importlib.util.spec_from_file_location("gen_vault", GEN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_vault", module)
    spec.loader.exec_module(module)
    return module


def _env(url: str) -> dict[str, str]:
    env = dict(os.environ, KENNING_DATABASE_URL=url, KENNING_EMBEDDINGS="none",
               KENNING_PROGRESS_EVERY="0")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _kenning(*args: str, url: str, **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kenning.cli", *args], env=_env(url),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **kwargs)


def _snapshot(root: Path, url: str) -> dict:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_DATABASE_URL", url)
        vault = Vault(root)
        try:
            return index_snapshot(vault.store)
        finally:
            vault.close()


def _index(root: Path, url: str) -> float:
    started = time.perf_counter()
    proc = _kenning("-C", str(root), "index", url=url)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1,000-note generated vault (bench/gen_vault.py, fixed seed), initialised."""
    root = tmp_path_factory.mktemp("gen") / "vault"
    _gen_vault().generate(NOTES, root, seed=7)
    Vault.init(root)[0].close()
    return root


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".kenning"))
    Vault.init(dst)[0].close()
    return dst


# -- kill -9 mid-index ---------------------------------------------------------------------------


def test_kill_9_mid_index_then_the_next_run_completes_with_no_lost_or_duplicate_rows(
        pg_cluster: PgServer, generated: Path, tmp_path: Path) -> None:
    clean_url = pg_cluster.url(schema=pg_cluster.new_schema("clean"))
    clean_seconds = _index(generated, clean_url)
    clean = _snapshot(generated, clean_url)
    assert sum(clean["chunks"].values()) > 5000

    crashed = _copy(generated, tmp_path / "crashed")
    url = pg_cluster.url(schema=pg_cluster.new_schema("crash"))
    indexer = _kenning("-C", str(crashed), "index", url=url)
    # Kill when a good part of the work is done but well before the end (measured above).
    time.sleep(max(0.5, clean_seconds * 0.4))
    assert indexer.poll() is None, "the indexer finished before the server could be killed"
    in_flight = pg_cluster.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = 'kenning' "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
    pg_cluster.kill()
    assert in_flight[0][0] >= 1, "the indexer had no open connection at the kill"
    time.sleep(1.0)
    pg_cluster.start()
    out, _ = indexer.communicate(timeout=300)  # it may fail, or reconnect and finish
    first_exit = indexer.returncode

    _index(crashed, url)  # the next run completes …
    after = _snapshot(crashed, url)
    diff = snapshot_diff(clean, after)
    assert not diff, f"(interrupted run exited {first_exit}: {out[-500:]})\n{diff}"
    _index(crashed, url)  # … and a further run changes nothing
    assert not snapshot_diff(clean, _snapshot(crashed, url))


# -- kill -9 mid-write ---------------------------------------------------------------------------

WRITER = r"""
import json, sys, time
from pathlib import Path
from kenning.api import Vault

root, count = Path(sys.argv[1]), int(sys.argv[2])
vault = Vault(root)
for i in range(count):
    deadline = time.monotonic() + 120
    while True:
        try:
            result = vault.record(observations=[{"entity": "Kestrel Labs",
                                                 "text": f"Crash probe {i:04d} observed"}],
                                  key=f"crash-probe-{i:04d}")
            break
        except Exception as exc:  # the server is down: the same call again, same key
            print(json.dumps({"error": i, "why": f"{type(exc).__name__}: {exc}"[:200]}),
                  flush=True)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    print(json.dumps({"ack": i, "indexed": result.get("indexed")}), flush=True)
vault.close()
"""


def test_kill_9_mid_write_loses_no_acknowledged_write_and_duplicates_none(
        pg_cluster: PgServer, tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    Vault.init(root)[0].close()
    url = pg_cluster.url(schema=pg_cluster.new_schema("write"))
    _index(root, url)
    count = 60
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writer = subprocess.Popen([sys.executable, str(script), str(root), str(count)],
                              env=_env(url), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    lines: list[str] = []
    acks: list[int] = []

    def read() -> None:
        assert writer.stdout is not None
        for line in writer.stdout:
            lines.append(line)
            if line.startswith("{"):
                event = json.loads(line)
                if "ack" in event:
                    acks.append(event["ack"])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while len(acks) < 10:
        assert writer.poll() is None and time.monotonic() < deadline, "".join(lines[-20:])
        time.sleep(0.01)
    pg_cluster.kill()  # mid-write: the writer is in the middle of its next record()
    killed_at = len(acks)
    time.sleep(1.5)
    pg_cluster.start()
    assert writer.wait(timeout=300) == 0, "".join(lines[-20:])
    reader.join(timeout=10)
    assert acks == list(range(count)), "".join(lines[-20:])
    assert killed_at < count

    # Every acknowledged write is in the vault exactly once …
    text = (root / "organizations" / "Kestrel Labs.md").read_text(encoding="utf-8")
    for i in range(count):
        assert text.count(f"Crash probe {i:04d} observed") == 1, i
    # … and, once indexed, in the index exactly once: the same rows as a clean index.
    _index(root, url)
    after = _snapshot(root, url)
    facts = [row for row in after["facts"].elements() if "Crash probe" in str(row[4])]
    assert len(facts) == count
    clean_root = _copy(root, tmp_path / "clean")
    clean_url = pg_cluster.url(schema=pg_cluster.new_schema("wclean"))
    _index(clean_root, clean_url)
    diff = snapshot_diff(_snapshot(clean_root, clean_url), after)
    assert not diff, diff


# -- a streaming replica serves search ----------------------------------------------------------


@pytest.fixture
def replica(pg_cluster: PgServer) -> Iterator[PgServer]:
    standby = pg_cluster.start_replica()
    yield standby
    standby.destroy()


def test_a_streaming_replica_serves_search_while_the_primary_takes_writes(
        pg_cluster: PgServer, replica: PgServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    schema = pg_cluster.new_schema("replica")
    root = copy_sample(tmp_path / "sample")
    Vault.init(root)[0].close()
    config = root / ".kenning" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + (
        f"\ndatabase:\n  url: {pg_cluster.url(schema=schema)}\n"
        f"  read_url: {replica.url(schema=schema)}\n"), encoding="utf-8")
    monkeypatch.delenv("KENNING_DATABASE_URL", raising=False)
    writer = Vault(root)
    writer.index()
    pg_cluster.wait_caught_up(replica)
    searcher = Vault(root)
    assert searcher.search("pricing", mode="lexical")

    errors: list[BaseException] = []
    written: list[str] = []

    def write() -> None:
        try:
            for i in range(15):
                word = f"replicaprobe{i:02d}"
                writer.record(observations=[{"entity": "Kestrel Labs",
                                             "text": f"Mentions {word} today"}])
                written.append(word)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    searches = 0
    while thread.is_alive():
        assert searcher.search("pricing", mode="lexical")
        searches += 1
    thread.join()
    assert not errors, errors
    assert searches > 0 and len(written) == 15

    # The searcher holds a session on the replica …
    sessions = replica.execute(
        "SELECT application_name FROM pg_stat_activity WHERE datname = 'kenning' "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
    assert any(name.startswith("kenning") for (name,) in sessions), sessions
    # … and the replica alone serves search: with the primary stopped, once it has replayed
    # every write, each written word is found.
    pg_cluster.wait_caught_up(replica)
    pg_cluster.stop()
    try:
        for word in written:
            found = searcher.search(word, mode="lexical")
            assert [r.path for r in found][:1] == ["organizations/Kestrel Labs.md"], word
    finally:
        pg_cluster.start()
    assert replica.execute("SELECT pg_is_in_recovery()") == [(True,)]  # still a standby
    writer.close()
    searcher.close()
