"""Code as memory: a repository mounted with --kind code, indexed by definition, its call graph
resolved across files through imports, kept current file by file, and reached from notes,
search, the CLI, MCP and the web view. Real files, a real index, real servers."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from click.testing import CliRunner
from test_mcp import data, stdio
from web_harness import running

from kenning.api import Vault
from kenning.cli import main
from kenning.errors import PageNotFound

CORE = '''"""Mentions and limits."""

import re


def resolve_mention(text):
    """Turn an @mention into a page name."""
    return _norm(text)


def _norm(text):
    return re.sub(r"\\s+", " ", text).strip()


class Limiter:
    """A token bucket."""

    rate = 5

    def check(self):
        return self._refill() > 0

    def _refill(self):
        return self.rate
'''

API = '''from pkg import resolve_mention
from pkg.core import Limiter
from pkg.extra import late


def handle(request):
    Limiter().check()
    late()
    return resolve_mention(request)
'''

HELPERS = '''import pkg.core as core


def use():
    return core.resolve_mention("x")
'''

BROKEN = '''def fine_before():
    return 1


def broken(:
    pass


def fine_after():
    return fine_before()
'''


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    write(repo, "pkg/__init__.py", "from .core import resolve_mention\n")
    write(repo, "pkg/core.py", CORE)
    write(repo, "pkg/api.py", API)
    write(repo, "pkg/util/__init__.py", "")
    write(repo, "pkg/util/helpers.py", HELPERS)
    write(repo, "pkg/broken.py", BROKEN)
    write(repo, "pkg/latin.py", "# caf\xe9 au lait\ndef brew():\n    return 'caf\xe9'\n"
          .encode("latin-1"))
    write(repo, "web/math.ts", "export function add(a: number, b: number) { return a + b; }\n")
    write(repo, "web/app.ts", "import { add } from './math';\n\nexport function main() {\n"
          "  return add(1, 2);\n}\n")
    write(repo, "README.md", "# Repo\n\nThe rate limit lives in `Limiter.check`.\n")
    write(repo, "node_modules/left-pad/index.js", "module.exports = function () {};\n")
    write(repo, "node_modules/left-pad/README.md", "# left-pad\n")
    write(repo, "web/big.min.js", "var a=1;" * 600_000)  # ~5 MB on one line
    write(repo, ".gitignore", "build/\n")
    write(repo, "build/gen.py", "def generated():\n    pass\n")
    write(repo, "sub/.git", "gitdir: ../.git/modules/sub\n")
    write(repo, "sub/inner.py", "def in_submodule():\n    pass\n")
    outside = write(base, "outside/secret.py", "def secret():\n    pass\n")
    (repo / "pkg" / "leak.py").symlink_to(outside)
    return repo


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as mp:  # never leak into other modules' tests
        mp.setenv("KENNING_EMBEDDINGS", "none")
        base = tmp_path_factory.mktemp("code")
        repo = make_repo(base)
        v, _ = Vault.init(base / "vault")
        write(v.root, "decisions/Rate limits.md",
              "# Rate limits\n\nWe enforce the rate limit in `Limiter.check`; `resolve_mention` "
              "stays pure. A word in backticks, `json`, is not a symbol.\n")
        _, report = v.mount_add("repo", repo, kind="code")
        yield v, repo, report
        v.close()


def symbol(v: Vault, name: str) -> dict[str, Any]:
    found = v.code("def", name)["definitions"]
    assert len(found) == 1, found
    return found[0]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def test_each_definition_is_a_chunk_with_its_exact_lines(world: Any) -> None:
    v, repo, _ = world
    page = v.store.one("SELECT type, title, mount FROM pages WHERE path = 'repo:pkg/core.py'")
    assert page == ("code", "pkg.core", "repo")
    text = (repo / "pkg/core.py").read_text()
    d = symbol(v, "resolve_mention")
    start = line_of(text, "def resolve_mention")
    assert d["qualname"] == "pkg.core.resolve_mention"
    assert d["citation"] == f"repo:pkg/core.py#L{start}-L{start + 2}"
    chunks = v.store.rows(
        "SELECT c.heading, c.start_line, c.end_line FROM chunks c JOIN pages p"
        " ON p.id = c.page_id WHERE p.path = 'repo:pkg/core.py' ORDER BY c.start_line")
    headings = [c[0] for c in chunks]
    assert {"pkg.core.resolve_mention", "pkg.core._norm", "pkg.core.Limiter",
            "pkg.core.Limiter.check", "pkg.core.Limiter._refill"} <= set(headings)
    spans = [(c[1], c[2]) for c in chunks]
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans)), spans  # no overlap
    limiter = next(c for c in chunks if c[0] == "pkg.core.Limiter")
    assert limiter[2] < line_of(text, "def check")  # the class chunk stops at its first method


def test_calls_resolve_across_files_through_imports_not_text(world: Any) -> None:
    v, _, _ = world
    callers = v.code("callers", "pkg.core.resolve_mention")["callers"]
    by = {c["caller"] for c in callers}
    assert "pkg.api.handle" in by          # through pkg/__init__'s re-export
    assert "pkg.util.helpers.use" in by    # through `import pkg.core as core`
    callees = {c["callee"]: c for c in v.code("callees", "handle")["callees"]}
    assert callees["pkg.core.resolve_mention"]["resolved"] is True
    assert callees["pkg.core.Limiter"]["definition"].startswith("repo:pkg/core.py#L")
    assert callees["late"]["resolved"] is False   # pkg/extra.py does not exist (yet)
    deep = v.code("callers", "_norm", depth=2)["callers"]
    assert {(c["depth"], c["caller"]) for c in deep} >= {
        (1, "pkg.core.resolve_mention"), (2, "pkg.api.handle"), (2, "pkg.util.helpers.use")}
    ts = v.code("callers", "add")["callers"]
    assert [c["caller"] for c in ts] == ["web/app.main"]


def test_notes_that_name_a_symbol_link_to_its_definition(world: Any) -> None:
    v, _, _ = world
    refs = v.code("refs", "resolve_mention")["references"]
    mention = [r for r in refs if r["kind"] == "mention"]
    assert [r["citation"] for r in mention] == ["decisions/Rate limits.md#L3"]
    check = v.code("refs", "Limiter.check")["references"]
    assert {r["citation"].split("#")[0] for r in check if r["kind"] == "mention"} == {
        "decisions/Rate limits.md", "repo:README.md"}
    assert v.store.scalar("SELECT count(*) FROM code_refs WHERE kind = 'mention'"
                          " AND text = 'json'") == 0


def test_what_is_left_out_says_why_and_nothing_outside_is_read(world: Any) -> None:
    v, _, report = world
    skipped = dict(report.skipped)
    assert skipped["repo:node_modules"] == "vendored"
    assert skipped["repo:build"] == "ignored by .gitignore"
    assert "submodule" in skipped["repo:sub"]
    assert skipped["repo:web/big.min.js"].startswith(("generated", "minified", "too large"))
    assert skipped["repo:pkg/leak.py"] == "symlink leading outside root"
    paths = {r[0] for r in v.store.rows("SELECT path FROM pages WHERE mount = 'repo'")}
    assert "repo:README.md" in paths  # the repository's Markdown is an ordinary page
    assert not any("node_modules" in p or "build/" in p or "sub/" in p for p in paths)
    with pytest.raises(PageNotFound):
        v.code("def", "secret")
    with pytest.raises(PageNotFound):
        v.code("def", "in_submodule")


def test_a_syntax_error_keeps_the_rest_and_bad_bytes_are_reported(world: Any) -> None:
    v, _, report = world
    assert symbol(v, "fine_after")["qualname"] == "pkg.broken.fine_after"
    assert symbol(v, "fine_before")["qualname"] == "pkg.broken.fine_before"
    assert any(line.startswith("repo:pkg/broken.py:5:") for line in report.found), report.found
    assert any(line.startswith("repo:pkg/latin.py:1:") for line in report.found), report.found
    assert symbol(v, "brew")["citation"] == "repo:pkg/latin.py#L2-L3"
    assert "caf\ufffd" in v.read("repo:pkg/latin.py", record=False)


def test_one_changed_file_reparses_itself_and_reresolves_what_pointed_at_it(world: Any) -> None:
    v, repo, _ = world
    core = repo / "pkg/core.py"
    original = core.read_text()
    try:
        core.write_text(original.replace("def resolve_mention", "def resolve_mentions"))
        report = v.index(embed=False)
        assert (report.added, report.updated) == (0, 1)
        callees = {c["text"]: c for c in v.code("callees", "handle")["callees"]}
        assert callees["resolve_mention"]["resolved"] is False
        # A file added later resolves what was waiting for it.
        write(repo, "pkg/extra.py", "def late():\n    return 2\n")
        report = v.index(embed=False)
        assert report.added == 1 and report.updated == 0
        callees = {c["callee"]: c for c in v.code("callees", "handle")["callees"]}
        assert callees["pkg.extra.late"]["resolved"] is True
    finally:
        core.write_text(original)
        (repo / "pkg/extra.py").unlink(missing_ok=True)
        v.index(embed=False)
    callees = {c["callee"]: c for c in v.code("callees", "handle")["callees"]}
    assert callees["pkg.core.resolve_mention"]["resolved"] is True
    assert callees["late"]["resolved"] is False


def test_search_finds_definitions_and_near_symbol_adds_structural_neighbours(world: Any
                                                                           ) -> None:
    v, _, _ = world
    top = v.search("token bucket", mode="lexical")[0]
    assert top.path == "repo:pkg/core.py"
    assert top.hits[0].heading == "pkg.core.Limiter"
    assert top.hits[0].start_line == line_of(CORE, "A token bucket")  # narrowed to the line
    refill = line_of(CORE, "def _refill")
    bare = [(r.path, h.start_line) for r in v.search("bucket", mode="lexical", group="chunk",
                                                      limit=10) for h in r.hits]
    assert ("repo:pkg/core.py", refill) not in bare  # no word of it matches
    near = v.search("bucket", mode="lexical", near_symbol="Limiter.check", walk_depth=1,
                    group="chunk", limit=10)
    cited = [(r.path, h.start_line) for r in near for h in r.hits]
    assert cited[0] == bare[0]  # what matched still leads
    assert ("repo:pkg/core.py", refill) in cited  # the callee of check is added
    assert ("repo:pkg/core.py", line_of(CORE, "def check")) in cited


def test_the_cli_answers_with_citations(world: Any) -> None:
    v, _, _ = world
    run = CliRunner().invoke
    out = run(main, ["-C", str(v.root), "code", "callers", "resolve_mention", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    assert answer["definitions"][0]["citation"].startswith("repo:pkg/core.py#L")
    assert all("#L" in c["citation"] for c in answer["callers"])
    text = run(main, ["-C", str(v.root), "code", "def", "Limiter"])
    assert text.exit_code == 0 and "pkg.core.Limiter" in text.output
    missing = run(main, ["-C", str(v.root), "code", "def", "no_such_thing"])
    assert missing.exit_code != 0 and "no definition named 'no_such_thing'" in missing.output
    near = run(main, ["-C", str(v.root), "search", "bucket", "--near-symbol", "Limiter.check",
                      "--mode", "lexical", "--json"])
    assert near.exit_code == 0 and "repo:pkg/core.py" in near.output


def test_mcp_graph_reaches_the_code_graph(world: Any) -> None:
    v, _, _ = world

    async def run() -> dict[str, Any]:
        async with stdio(v.root, "recall") as client:
            return data(await client.call_tool(
                "graph", {"op": "callers", "ref": "resolve_mention"}))

    answer = anyio.run(run)
    assert {c["caller"] for c in answer["callers"]} >= {"pkg.api.handle", "pkg.util.helpers.use"}


def test_the_web_view_shows_a_source_file_with_the_cited_lines(world: Any) -> None:
    v, _, _ = world
    d = symbol(v, "resolve_mention")
    start, end = d["lines"]
    with running(v.root) as base:
        page = httpx.get(f"{base}/page/repo:pkg/core.py", params={"hl": f"{start}-{end}"})
    assert page.status_code == 200
    assert '<pre class="code">' in page.text
    assert f'<span data-line="{start}" id="L{start}" class="hl">def resolve_mention' in page.text
    assert f'data-line="{end + 1}" id="L{end + 1}">' in page.text  # past the range: plain


@pytest.mark.both_backends
def test_the_code_graph_is_the_same_on_each_backend(backend: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    repo = make_repo(tmp_path)
    v, _ = Vault.init(tmp_path / "vault")
    try:
        v.mount_add("repo", repo, kind="code")
        by = {c["caller"] for c in v.code("callers", "pkg.core.resolve_mention")["callers"]}
        assert by == {"pkg.api.handle", "pkg.util.helpers.use"}
        write(repo, "pkg/extra.py", "def late():\n    return 2\n")
        v.index(embed=False)
        callees = {c["callee"]: c for c in v.code("callees", "handle")["callees"]}
        assert callees["pkg.extra.late"]["resolved"] is True
        v.mount_remove("repo")
        for table in ("code_symbols", "code_refs", "code_aliases"):
            assert v.store.scalar(f"SELECT count(*) FROM {table}") == 0, table
    finally:
        v.close()
