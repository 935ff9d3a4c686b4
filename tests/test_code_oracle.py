"""bench/code_oracle.py on a small synthetic package: jedi's answers against SymbolTable's."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jedi")

ORACLE = Path(__file__).resolve().parents[1] / "bench" / "code_oracle.py"
_spec = importlib.util.spec_from_file_location("code_oracle", ORACLE)
code_oracle = importlib.util.module_from_spec(_spec)
sys.modules["code_oracle"] = code_oracle
_spec.loader.exec_module(code_oracle)

FILES = {
    "src/acme/__init__.py": "from .store import Store\nfrom .util import slug as make_slug\n",
    "src/acme/util.py": """\
        import os


        def slug(text):
            return text.lower()


        def helper():
            return os.getcwd()
        """,
    "src/acme/base.py": """\
        class Base:
            def save(self):
                return 1
        """,
    "src/acme/store.py": """\
        from acme import util
        from acme.base import Base
        from acme.util import slug


        class Store(Base):
            def put(self, text):
                self.save()
                return slug(text) + util.slug(text)

            def get(self):
                return self.put("x")


        def helper():
            return 2
        """,
    "src/acme/cli.py": """\
        import acme.util
        from acme import Store, make_slug


        def main():
            store = Store()
            store.put("a")
            acme.util.helper()
            helper()
            return make_slug("b")


        def helper():
            return 3
        """,
}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("oracle")
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return code_oracle.run(root)


def test_direct_cross_file_calls_are_all_resolved_and_right(result: dict[str, Any]) -> None:
    row = result["splits"]["cross/direct"]
    # slug(), util.slug(), Store(), acme.util.helper(), make_slug(): five calls into other files
    assert row["labelled"] == 5
    assert row["precision"] == 1.0 and row["recall"] == 1.0


def test_method_calls_resolve_through_self_bases_and_constructors(
        result: dict[str, Any]) -> None:
    cross = result["splits"]["cross/method"]
    # self.save() (inherited from another file) and store.put() (store = Store()) resolve
    assert cross["labelled"] == 2 and cross["correct"] == 2 and cross["precision"] == 1.0
    same = result["splits"]["same/method"]
    assert same["labelled"] == 1 and same["recall"] == 1.0  # self.put()


def test_same_file_calls_prefer_the_local_definition(result: dict[str, Any]) -> None:
    row = result["splits"]["same/direct"]
    assert row["labelled"] == 1 and row["precision"] == 1.0 and row["recall"] == 1.0
    assert not [m for m in result["misses"] if m["split"].endswith("direct")]
