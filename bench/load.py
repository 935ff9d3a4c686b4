#!/usr/bin/env python3
"""Team-mode load: concurrent MCP-over-HTTP clients against several `kenning serve --http`
processes on one vault over one database (issue 14, "Load and performance").

    .venv/bin/python bench/load.py                                  # SQLite, 60 s
    .venv/bin/python bench/load.py --database postgresql://…        # one PostgreSQL
    .venv/bin/python bench/load.py --seconds 10 --json out.json

A copy of the bundled sample vault is indexed (lexically: the 2-core bench machine cannot embed
at load), one token is added per client (searchers `read`, writers `record`), and ``--servers``
processes are started on loopback with rate limiting off. ``--searchers`` clients search and
``--writers`` clients record observations (each on an entity of its own, each text carrying a
unique word) for ``--seconds``, spread round-robin over the servers, each client on its own MCP
session. Afterwards every acknowledged observation must be in its page on disk, in the index
(found by a lexical search for its unique word, on that page) and in the audit table: a write
that was acknowledged and is missing anywhere is a lost write. Prints errors, lost writes,
throughput and p50/p95 latency per operation.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio

KENNING = str(Path(sys.executable).parent / "kenning")
ENV = {"KENNING_EMBEDDINGS": "none", "KENNING_PROGRESS_EVERY": "0"}
QUERIES = ["Horizon", "Sarah Chen", "pricing decision", "Kestrel Labs", "replay cache",
           "who leads the platform team", "launch date", "Redis", "onboarding", "budget"]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def kenning(root: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run([KENNING, "-C", str(root), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"kenning {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


@contextmanager
def server(root: Path, env: dict[str, str]) -> Any:
    proc = subprocess.Popen([KENNING, "-C", str(root), "serve", "--http", "--port", "0",
                             "--profile", "record", "--rate", "0"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if " at http://" not in line:
            raise SystemExit("server did not start: " + line + proc.stderr.read())
        yield line.rsplit(" at ", 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        errors = proc.stderr.read() if proc.stderr else ""
        if errors.strip():
            print(f"server stderr: {errors.strip()[:2000]}", file=sys.stderr)


def client(url: str, token: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    return Client(streamable_http_client(url, http_client=http))


async def run_load(urls: list[str], readers: list[str], writers: list[str], seconds: float
                   ) -> dict[str, Any]:
    latency: dict[str, list[float]] = {"search": [], "record": []}
    errors: list[str] = []
    acked: list[tuple[int, str, str]] = []  # (writer, entity, unique word)
    deadline = time.monotonic() + seconds

    async def searcher(n: int, token: str) -> None:
        rng = random.Random(n)
        async with client(urls[n % len(urls)], token) as c:
            while time.monotonic() < deadline:
                t = time.perf_counter()
                try:
                    result = await c.call_tool("search", {"query": rng.choice(QUERIES),
                                                          "limit": 10})
                    if result.is_error:
                        errors.append("search: " + result.content[0].text[:200])
                        continue
                except Exception as exc:
                    errors.append(f"search: {type(exc).__name__}: {exc}"[:300])
                    continue
                latency["search"].append(time.perf_counter() - t)

    async def writer(n: int, token: str) -> None:
        name = f"Load Writer {n}"
        async with client(urls[(n + 1) % len(urls)], token) as c:
            first = await c.call_tool("record", {"entities": [{
                "name": name, "type": "contact", "domain": "work",
                "observations": [f"Writes under load as client {n}"]}]})
            if first.is_error:
                errors.append("record entity: " + first.content[0].text[:200])
                return
            i = 0
            while time.monotonic() < deadline:
                word = f"zqw{n}n{i}"
                t = time.perf_counter()
                try:
                    result = await c.call_tool("record", {"observations": [{
                        "entity": name, "text": f"load observation {word} from client {n}"}]})
                except Exception as exc:
                    errors.append(f"record: {type(exc).__name__}: {exc}"[:300])
                    i += 1
                    continue
                if result.is_error:
                    errors.append("record: " + result.content[0].text[:200])
                else:
                    latency["record"].append(time.perf_counter() - t)
                    acked.append((n, name, word))
                i += 1

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        for n, token in enumerate(readers):
            tg.start_soon(searcher, n, token)
        for n, token in enumerate(writers):
            tg.start_soon(writer, n, token)
    return {"latency": latency, "errors": errors, "acked": acked,
            "wall_s": time.monotonic() - started}


def verify(root: Path, acked: list[tuple[int, str, str]], writers: int,
           env: dict[str, str]) -> dict[str, Any]:
    """Every acknowledged observation: on its page on disk, in the index, in the audit."""
    for key, value in env.items():
        os.environ[key] = value
    from kenning.api import Vault

    lost_disk, lost_index = [], []
    with Vault.open(root) as v:
        v.index(embed=False)  # nothing to do if the servers indexed every write
        pages = {}
        for n in range(writers):
            hits = list(root.rglob(f"Load Writer {n}.md"))
            pages[n] = (hits[0].read_text(encoding="utf-8"),
                        hits[0].relative_to(root).as_posix()) if hits else ("", "")
        for n, _, word in acked:
            text, rel = pages[n]
            if word not in text:
                lost_disk.append(word)
            found = v.search(word, mode="lexical", limit=5)
            if not any(r.path == rel for r in found):
                lost_index.append(word)
        audited = len([r for r in v.store.audit_log(limit=10**9) if r["tool"] == "record"])
    return {"lost_on_disk": lost_disk, "lost_in_index": lost_index,
            "audit_rows": audited, "expected_audit_rows": len(acked) + writers}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--database", default=None, help="postgresql://… (default: SQLite); "
                    "'temp' starts a throw-away PostgreSQL 18 + pgvector (tests/pg_harness.py)")
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--searchers", type=int, default=16)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kenning-load-"))
    with ExitStack() as pg:
        if args.database == "temp":
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
            import pg_harness

            base = Path(tempfile.mkdtemp(prefix="kenning-load-pg-"))
            pg.callback(shutil.rmtree, base, ignore_errors=True)
            server = pg.enter_context(pg_harness.temporary_server(base=base))
            args.database = server.url(schema="load")
        report = run(args, work)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if report["errors"] or report["lost_writes"] \
            or report["audit_rows"] != report["expected_audit_rows"]:
        sys.exit(1)


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    try:
        from kenning.api import Vault
        from kenning.sample import copy_sample

        vault, _ = Vault.init(copy_sample(work / "vault"))
        root = vault.root
        vault.close()
        env = {**os.environ, **ENV}
        if args.database:
            env["KENNING_DATABASE_URL"] = args.database
        kenning(root, "index", env=env)
        readers = [json.loads(kenning(root, "token", "add", f"reader-{n}", "--scope", "read",
                                      "--json", env=env))["token"]
                   for n in range(args.searchers)]
        writers = [json.loads(kenning(root, "token", "add", f"writer-{n}", "--scope",
                                      "record", "--json", env=env))["token"]
                   for n in range(args.writers)]
        with ExitStack() as stack:
            urls = [stack.enter_context(server(root, env)) for _ in range(args.servers)]
            load = anyio.run(run_load, urls, readers, writers, args.seconds)
        checked = verify(root, load["acked"], args.writers, ENV | (
            {"KENNING_DATABASE_URL": args.database} if args.database else {}))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lat = load["latency"]
    report = {
        "backend": "postgresql" if args.database else "sqlite",
        "database": (args.database or "").split("@")[-1],
        "servers": args.servers, "searchers": args.searchers, "writers": args.writers,
        "seconds": round(load["wall_s"], 1),
        "searches": len(lat["search"]), "records": len(lat["record"]),
        "errors": len(load["errors"]), "error_examples": load["errors"][:5],
        "lost_writes": len(set(checked["lost_on_disk"]) | set(checked["lost_in_index"])),
        "lost_on_disk": len(checked["lost_on_disk"]),
        "lost_in_index": len(checked["lost_in_index"]),
        "audit_rows": checked["audit_rows"], "expected_audit_rows":
            checked["expected_audit_rows"],
        "search_per_s": round(len(lat["search"]) / load["wall_s"], 1),
        "record_per_s": round(len(lat["record"]) / load["wall_s"], 1),
        **{f"{op}_{name}_ms": round(1000 * percentile(lat[op], q), 1)
           for op in ("search", "record") for name, q in (("p50", 0.5), ("p95", 0.95))},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}",
    }
    if lat["search"]:
        report["search_mean_ms"] = round(1000 * statistics.fmean(lat["search"]), 1)
    return report


if __name__ == "__main__":
    main()
