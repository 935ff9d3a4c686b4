"""Shared fixtures: a fresh vault, the bundled sample vault, and a helper to write notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.sample import copy_sample


@pytest.fixture(autouse=True)
def _lexical_unless_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding is slow on 2 cores: only tests marked ``embeddings`` run the real model."""
    if "embeddings" not in request.keywords:
        monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    # Progress lines off a terminal go to stderr, which CliRunner's `output` mixes in: tests
    # that read them set the interval themselves.
    monkeypatch.setenv("KENNING_PROGRESS_EVERY", "0")


def write(vault: Vault, relpath: str, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``relpath`` in the vault; return the path."""
    path = vault.root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def vault(tmp_path: Path):
    """A freshly created, empty (not yet indexed) vault at ``tmp_path/"v"``."""
    v, _ = Vault.init(tmp_path / "v")
    yield v
    v.close()


@pytest.fixture
def sample_vault(tmp_path: Path):
    """A private copy of the bundled sample vault (Kestrel Labs), initialised, not yet indexed."""
    v, _ = Vault.init(copy_sample(tmp_path / "sample"))
    yield v
    v.close()


# -- PostgreSQL: a real server for the tests (tests/pg_harness.py) -----------------------------
#
# ``pg_server`` (session) starts one PostgreSQL 18 + pgvector on a free loopback port, the first
# time a test asks for it, and stops it at the end of the session. ``pg_url`` gives a test its
# own schema in it. ``pg_cluster`` (module) is a private server for the fault and replica tests,
# which stop, kill -9 and restart it. ``backend`` runs a test module against both backends.
#
# PostgreSQL tests never skip silently: when the driver or the server is missing they error.
# Only a local run may opt out, explicitly, with KENNING_TEST_POSTGRES=0 (never under CI).

import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import weakref  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pg_harness  # noqa: E402

#: The test modules that run against both backends (ids end in ``[sqlite]``/``[postgresql]``).
BACKEND_MODULES = frozenset({
    "test_search", "test_hybrid", "test_graph", "test_links", "test_citations",
    "test_memory_write", "test_memory_sessions", "test_memory_ownership", "test_memory_cli",
    "test_mcp", "test_mcp_write", "test_items_query", "test_items_cli", "test_items_recall",
})
BACKENDS = ("sqlite", "postgresql")


def _postgres_opted_out() -> str | None:
    """The reason PostgreSQL tests skip on this run, or None (they run)."""
    if os.environ.get(pg_harness.OPT_OUT_ENV, "").strip().lower() in {"0", "no", "off", "false"}:
        if os.environ.get("CI"):
            raise pytest.UsageError(f"{pg_harness.OPT_OUT_ENV}=0 is not allowed under CI: "
                                    "the PostgreSQL tests must run there")
        return f"PostgreSQL tests opted out locally ({pg_harness.OPT_OUT_ENV}=0)"
    return None


def _postgres_backend_present() -> bool:
    return importlib.util.find_spec("kenning.index.store.postgres") is not None


def pytest_report_header(config: pytest.Config) -> list[str]:
    reason = _postgres_opted_out()
    if reason:
        return [reason]
    if not _postgres_backend_present():
        return ["postgresql variants not generated: kenning.index.store.postgres is absent"]
    try:
        bindir = pg_harness.find_bindir()
    except pg_harness.PgUnavailable as exc:
        return [f"PostgreSQL: UNAVAILABLE ({exc}); PostgreSQL tests will error"]
    return [f"PostgreSQL binaries: {bindir}"]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pg_harness.PgServer]:
    """One real PostgreSQL for the session (database ``kenning`` with pgvector), on a free
    loopback port with trust auth; stopped and removed at the end."""
    reason = _postgres_opted_out()
    if reason:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="kenning-pg-"))
    try:
        with pg_harness.temporary_server(base=base) as server:
            yield server
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_schema(pg_server: pg_harness.PgServer) -> Iterator[str]:
    """A fresh schema name for this test (created by the store on open; dropped afterwards)."""
    schema = pg_server.new_schema()
    yield schema
    with contextlib.suppress(Exception):
        pg_server.drop_schema(schema)


@pytest.fixture
def pg_url(pg_server: pg_harness.PgServer, pg_schema: str) -> str:
    """``postgresql://kenning@127.0.0.1:PORT/kenning?schema=t_<id>``: this test's own schema."""
    return pg_server.url(schema=pg_schema)


@pytest.fixture(scope="module")
def pg_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pg_harness.PgServer]:
    """A private PostgreSQL for one module (fault and replica tests stop, kill and restart it;
    ``pg_cluster.start_replica()`` adds a streaming standby)."""
    reason = _postgres_opted_out()
    if reason:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="kenning-pgc-"))
    try:
        with pg_harness.temporary_server(base=base) as server:
            yield server
    finally:
        shutil.rmtree(base, ignore_errors=True)


#: Fixtures of these scopes, when a test module defines them, are built once per module, not
#: once per backend: tests that use them run on SQLite only (listed in the terminal summary).
_SHARED_SCOPES = {"module", "package", "session", "class"}
_OWN_FIXTURES = {"pg_server", "pg_cluster", "backend", "_backend_module", "tmp_path_factory"}
_SQLITE_ONLY: list[str] = []


def _shared_fixtures(metafunc: pytest.Metafunc) -> list[str]:
    """Names of module/session-scoped fixtures (not ours) this test uses."""
    defs = getattr(metafunc, "_arg2fixturedefs", {}) or {}
    shared = []
    for name, fixturedefs in defs.items():
        if name in _OWN_FIXTURES or not fixturedefs:
            continue
        fixturedef = fixturedefs[-1]
        scope = getattr(fixturedef, "scope", "function")
        scope = getattr(scope, "value", scope)
        if scope in _SHARED_SCOPES and getattr(fixturedef, "baseid", ""):
            shared.append(name)
    return shared


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run the modules in BACKEND_MODULES (and tests marked ``both_backends``) once per
    backend: ``backend`` is an indirect, module-scoped parameter."""
    if "backend" not in metafunc.fixturenames:
        return
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module not in BACKEND_MODULES and not metafunc.definition.get_closest_marker(
            "both_backends"):
        return
    backends: tuple[str, ...] = BACKENDS if _postgres_backend_present() else ("sqlite",)
    shared = _shared_fixtures(metafunc)
    if shared and len(backends) > 1:
        backends = ("sqlite",)
        _SQLITE_ONLY.append(f"{metafunc.definition.nodeid} (uses {', '.join(shared)})")
    metafunc.parametrize("backend", backends, indirect=True, scope="module")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _SQLITE_ONLY:
        terminalreporter.write_line(
            f"{len(_SQLITE_ONLY)} test(s) of the two-backend modules ran on SQLite only: they "
            "use a module-scoped fixture built once (see tests/conftest.py)")
        if config.getoption("verbose") > 0:
            for line in _SQLITE_ONLY:
                terminalreporter.write_line(f"  {line}")


class _Scope:
    """The schemas and stores one module or test made on the session server: dropped and
    closed when it ends (a test that never closes its vault leaves no pool behind)."""

    def __init__(self, server: pg_harness.PgServer) -> None:
        self.server = server
        self.before = self.schemas()
        self.stores: list[weakref.ref] = []

    def schemas(self) -> set[str]:
        return {row[0] for row in self.server.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'kenning\\_%' "
            "OR nspname LIKE 't\\_%'")}

    def end(self) -> None:
        for ref in self.stores:
            store = ref()
            if store is not None:
                with contextlib.suppress(Exception):
                    store.close()
        with contextlib.suppress(Exception):
            for schema in self.schemas() - self.before:
                self.server.drop_schema(schema)


_SCOPES: list[_Scope] = []


def _track_stores(mp: pytest.MonkeyPatch) -> None:
    """Every PostgresStore opened in this process joins the innermost open scope."""
    from kenning.index.store import postgres

    if getattr(postgres.PostgresStore.__init__, "_tracked", False):
        return
    original = postgres.PostgresStore.__init__

    def init(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        original(self, *args, **kwargs)
        if _SCOPES:
            _SCOPES[-1].stores.append(weakref.ref(self))

    init._tracked = True  # type: ignore[attr-defined]
    mp.setattr(postgres.PostgresStore, "__init__", init)


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """``sqlite`` or ``postgresql`` for this module. On ``postgresql``, KENNING_DATABASE_URL is
    the session server's database with no ``schema``: every vault gets its own schema
    (``kenning_<vault id>``), as on SQLite every vault has its own file; the module's and each
    test's schemas are dropped when they end. On ``sqlite`` the variable is unset, whatever the
    caller's environment."""
    name = getattr(request, "param", "sqlite")
    with pytest.MonkeyPatch.context() as mp:
        if name == "postgresql":
            server: pg_harness.PgServer = request.getfixturevalue("pg_server")
            mp.setenv("KENNING_DATABASE_URL", server.url())
            _track_stores(mp)
            scope = _Scope(server)
            _SCOPES.append(scope)
            try:
                yield name
            finally:
                _SCOPES.remove(scope)
                scope.end()
        else:
            mp.delenv("KENNING_DATABASE_URL", raising=False)
            yield name


@pytest.fixture(scope="module", autouse=True)
def _backend_module(backend: str) -> str:
    """Puts ``backend`` in every test's closure (so it can be parametrised) at module scope,
    before the module's own module-scoped fixtures."""
    return backend


@pytest.fixture(autouse=True)
def _backend_schema(request: pytest.FixtureRequest, backend: str) -> Iterator[None]:
    """On ``postgresql``: whatever schemas and stores this test made are gone after it."""
    if backend != "postgresql":
        yield
        return
    scope = _Scope(request.getfixturevalue("pg_server"))
    _SCOPES.append(scope)
    try:
        yield
    finally:
        _SCOPES.remove(scope)
        scope.end()


# -- The web view's tests (tests/web_harness.py): what the modules share ------------------------
#
# ``web_browser`` is one Chromium for the consecutive web test modules (closed when the run
# leaves them: see ``pytest_runtest_teardown``). ``demo_root`` is the demo vault built once per
# session with the web tests' fixed "today"; tests only read it, and a test that writes gets its
# own ``web_harness.copy_vault`` of it. ``indexed_sample`` is the sample vault indexed once.

_CHROMIUM_MODULES: dict[str, bool] = {}


def _module_uses_shared_chromium(item: pytest.Item) -> bool:
    """Whether any test of ``item``'s module asks for ``web_browser``."""
    module = item.nodeid.split("::", 1)[0]
    cache = _CHROMIUM_MODULES
    if module not in cache:
        cache[module] = any("web_browser" in getattr(other, "fixturenames", ())
                            for other in item.session.items
                            if other.nodeid.split("::", 1)[0] == module)
    return cache[module]


@pytest.fixture
def web_browser() -> object:
    """The shared headless Chromium (a Playwright ``Browser``); open your own page in it."""
    import web_harness

    return web_harness.shared_chromium()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Close the shared Chromium when the next test is in a module that does not use it (this
    hook runs after pytest's own teardown, so ``item``'s fixtures are gone by now)."""
    import sys

    harness = sys.modules.get("web_harness")
    if harness is None:
        return
    if nextitem is None or (nextitem.nodeid.split("::", 1)[0] != item.nodeid.split("::", 1)[0]
                            and not _module_uses_shared_chromium(nextitem)):
        harness.close_shared_chromium()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import sys

    harness = sys.modules.get("web_harness")
    if harness is not None:
        harness.close_shared_chromium()


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo vault (``web_harness.build_demo``), built once, indexed without embeddings.
    Read only: copy it (``web_harness.copy_vault``) to write."""
    import web_harness

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_EMBEDDINGS", "none")
        mp.setenv("KENNING_TODAY", web_harness.WEB_TODAY)
        mp.delenv("KENNING_DATABASE_URL", raising=False)
        return web_harness.build_demo(tmp_path_factory.mktemp("web-demo") / "demo")


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample vault, initialised and indexed without embeddings, once. Read only."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_EMBEDDINGS", "none")
        mp.delenv("KENNING_DATABASE_URL", raising=False)
        v, _ = Vault.init(copy_sample(tmp_path_factory.mktemp("web-sample") / "sample"))
        v.index(embed=False)
        v.close()
        return v.root
