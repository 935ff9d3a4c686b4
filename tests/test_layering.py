"""The layering the storage seam implies, checked on the source (``ast``, not text search).

(a) memory/ and health.py never import ``kenning.api`` (the facade passes its store and config
    down; an import there would be a cycle), at module level or inside a function.
(b) No module outside ``kenning/index/`` imports sqlite3 or psycopg, calls ``.execute(…)`` or
    holds SQL (a string literal or f-string starting with SELECT, INSERT, UPDATE, DELETE, CREATE
    or WITH): every query lives in the index layer, behind the store.
(c) The index layer depends on nothing above it: no import of recall, graph, memory, serve,
    health, api or the CLI.

Each test lists every offender as ``path:line: what``, so one run shows all the work left.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "kenning"
SQL_START = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH)\s", re.ASCII)
DB_DRIVERS = ("sqlite3", "psycopg", "psycopg_pool", "pgvector")
ABOVE_INDEX = ("kenning.recall", "kenning.graph", "kenning.memory", "kenning.serve",
               "kenning.health", "kenning.api", "kenning.cli")


def _modules(under: Path) -> list[Path]:
    return sorted(p for p in under.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in ``path``, wherever it is (function bodies, TYPE_CHECKING
    blocks); relative imports are made absolute, ``from a import b`` yields ``a`` and ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") or
               (p == "kenning.cli" and module.startswith("kenning.cli_")) for p in prefixes)


def _string_start(node: ast.AST) -> str | None:
    """The leading text of a string literal or f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (prose, never SQL)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _string_start(body[0].value) is not None:
                out.add(id(body[0].value))
    return out


def sql_offenders(path: Path) -> list[str]:
    """Every database-driver import, ``.execute`` call and SQL string in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    drivers = sorted({(line, module.split(".")[0]) for line, module in _imports(path)
                      if module.split(".")[0] in DB_DRIVERS})
    found += [f"{_rel(path)}:{line}: imports {driver}" for line, driver in drivers]
    docs = _docstrings(tree)
    in_fstring: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            in_fstring.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany", "executescript")):
            found.append(f"{_rel(path)}:{node.lineno}: calls .{node.func.attr}(…)")
        elif id(node) not in docs and id(node) not in in_fstring:
            text = _string_start(node)
            if text is not None and SQL_START.match(text):
                shown = " ".join(text.split())[:50]
                found.append(f"{_rel(path)}:{node.lineno}: SQL {shown!r}")
    return sorted(found, key=lambda o: int(o.split(":")[1]))


def test_memory_and_health_never_import_the_facade() -> None:
    targets = [*_modules(PACKAGE / "memory"), PACKAGE / "health.py"]
    offenders = [f"{_rel(p)}:{line}: imports {module}" for p in targets
                 for line, module in _imports(p) if _within(module, ("kenning.api",))]
    assert targets and not offenders, "\n" + "\n".join(offenders)


def test_no_sql_and_no_database_driver_above_the_index_layer() -> None:
    index = PACKAGE / "index"
    targets = [p for p in _modules(PACKAGE) if index not in p.parents]
    offenders = [o for p in targets for o in sql_offenders(p)]
    assert not offenders, f"{len(offenders)} offender(s):\n" + "\n".join(offenders)


def test_the_index_layer_imports_nothing_above_it() -> None:
    targets = _modules(PACKAGE / "index")
    offenders = [f"{_rel(p)}:{line}: imports {module}" for p in targets
                 for line, module in _imports(p) if _within(module, ABOVE_INDEX)]
    assert targets and not offenders, "\n" + "\n".join(offenders)


# The web view is a thin layer over Vault: it may use the facade, the errors and vocabulary,
# the serve layer's token guard and the vault format's safe path resolving; never the index,
# recall, graph or memory internals (their answers reach it only through Vault).
WEB_MAY_USE = ("kenning.api", "kenning.errors", "kenning.vocabulary", "kenning.serve",
               "kenning.vault", "kenning.web")


def test_the_web_view_reaches_the_vault_only_through_the_facade() -> None:
    targets = [*_modules(PACKAGE / "web"), PACKAGE / "cli_web.py"]
    offenders = [f"{_rel(p)}:{line}: imports {module}" for p in targets
                 for line, module in _imports(p)
                 if module.startswith("kenning") and not _within(module, WEB_MAY_USE)
                 and not module.startswith("kenning.cli_")]
    assert len(targets) > 3 and not offenders, "\n" + "\n".join(offenders)


# -- the detectors themselves catch what they must, and pass what they must not ----------------


@pytest.mark.parametrize(("source", "expected"), [
    ("import sqlite3\n", ["imports sqlite3"]),
    ("def f():\n    import psycopg\n", ["imports psycopg"]),
    ("from psycopg_pool import ConnectionPool\n", ["imports psycopg_pool"]),
    ("db.execute('x')\n", ["calls .execute(…)"]),
    ("q = ('SELECT id'\n     ' FROM pages')\n", ["SQL 'SELECT id FROM pages'"]),
    ("q = f'''\n  WITH RECURSIVE w AS ({x})'''\n", ["SQL 'WITH RECURSIVE w AS ('"]),
    ("q = 'DELETE FROM links WHERE id = ?'\n", ["SQL 'DELETE FROM links WHERE id = ?'"]),
    ('def f():\n    """SELECT the best page."""\n', []),  # a docstring is prose
    ("msg = 'Select a page'\n", []),  # a sentence, not SQL
    ("msg = 'WITHOUT a page'\n", []),
    ("from kenning.index.queries import graph\n", []),
])
def test_the_sql_detector(tmp_path: Path, source: str, expected: list[str]) -> None:
    folder = tmp_path / "src" / "kenning"
    folder.mkdir(parents=True)
    module = folder / "probe.py"
    module.write_text(source, encoding="utf-8")
    global SRC
    saved, SRC = SRC, tmp_path / "src"
    try:
        found = [o.split(": ", 1)[1] for o in sql_offenders(module)]
    finally:
        SRC = saved
    assert found == expected


def test_the_import_walker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "kenning" / "memory"
    folder.mkdir(parents=True)
    module = folder / "probe.py"
    module.write_text("def f():\n    from kenning.api import Vault\n"
                      "from ..api import Vault as V\n", encoding="utf-8")
    global SRC
    saved, SRC = SRC, tmp_path / "src"
    try:
        found = [m for _, m in _imports(module) if _within(m, ("kenning.api",))]
    finally:
        SRC = saved
    assert found == ["kenning.api", "kenning.api.Vault", "kenning.api", "kenning.api.Vault"]
