"""Mounts: other folders in one vault's index, read and never written.

Real folders on disk, a real index (SQLite here; test_mounts_postgres runs the same world on
PostgreSQL), the CLI through click, and MCP over real HTTP with a token confined to some mounts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from test_mcp import data, error, http_client, http_server

from kenning.api import Vault
from kenning.cli import main
from kenning.errors import KenningError, PageNotFound, UnsafePath
from kenning.vault.fsio import resolve_inside
from kenning.vault.mounts import MountError, add_mount, mounted_file, split_mount


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build_world(base: Path) -> tuple[Vault, Path, Path]:
    """A vault with two mounted folders: ``team`` (federated) and ``private`` (only when named).

    Bob exists in the vault and in team; Carol only in team; Dora only in private."""
    v, _ = Vault.init(base / "home")
    write(v.root, "people/Bob.md", "# Bob\n\nHome Bob keeps the heron feeder.\n")
    write(v.root, "notes/Home.md",
          "# Home\n\nAsk [[Bob]], [[team:Bob]], [[Carol]], [[Dora]], [[private:Dora]] and "
          "[[nope:Ada]] about herons.\n")
    team = base / "team"
    write(team, "people/Ada.md", "---\ntype: person\n---\n# Ada\n\nAda studies herons with "
          "[[Bob]] and [[Carol]].\n")
    write(team, "Bob.md", "# Bob\n\nTeam Bob counts herons at dawn.\n")
    write(team, "Carol.md", "# Carol\n\nCarol photographs herons.\n")
    private = base / "private"
    write(private, "Dora.md", "# Dora\n\nDora tags herons with rings (private).\n")
    add_mount(v.root, "team", team)
    add_mount(v.root, "private", private, federated=False)
    v.index(embed=False)
    return v, team, private


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as mp:  # never leak into other modules' tests
        mp.setenv("KENNING_EMBEDDINGS", "none")
        v, team, private = build_world(tmp_path_factory.mktemp("mounts"))
        yield v, team, private
        v.close()


def link_targets(v: Vault, origin: str) -> dict[str, str | None]:
    return {ref: dst for ref, dst in v.store.rows(
        "SELECT l.dst_ref, d.path FROM links l JOIN pages o ON o.id = l.origin_id"
        " LEFT JOIN pages d ON d.id = l.dst_id WHERE o.path = ?", (origin,))}


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns,
                                         hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_mounted_pages_carry_their_mount_in_path_folder_and_title(world: Any) -> None:
    v, _, _ = world
    rows = {r[0]: r[1:] for r in v.store.rows(
        "SELECT path, mount, folder, title, type FROM pages")}
    assert rows["team:people/Ada.md"] == ("team", "people", "Ada", "person")
    assert rows["team:Bob.md"] == ("team", "", "Bob", None)
    assert rows["private:Dora.md"][0] == "private"
    assert rows["people/Bob.md"][0] == ""
    assert split_mount("team:people/Ada.md") == ("team", "people/Ada.md")
    assert split_mount("people/Ada.md") == ("", "people/Ada.md")


def test_links_resolve_in_their_own_mount_first_and_qualified_across(world: Any) -> None:
    v, _, _ = world
    home = link_targets(v, "notes/Home.md")
    assert home["Bob"] == "people/Bob.md"            # the vault's own Bob first
    assert home["team:Bob"] == "team:Bob.md"         # qualified: that mount's
    assert home["Carol"] == "team:Carol.md"          # nowhere at home: a federated mount's
    assert home["Dora"] is None                      # only in a mount searched when named
    assert home["private:Dora"] == "private:Dora.md"
    assert home["nope:Ada"] is None
    ada = link_targets(v, "team:people/Ada.md")
    assert ada["Bob"] == "team:Bob.md"               # inside team, team's Bob wins
    assert ada["Carol"] == "team:Carol.md"


def test_doctor_names_a_link_to_a_mount_that_does_not_exist(world: Any) -> None:
    v, _, _ = world
    found = {f.check: f for f in v.doctor().findings}
    assert "unknown-mounts" in found
    items = found["unknown-mounts"].items
    assert any("[[nope:Ada]]" in item and "'nope'" in item for item in items)


def test_search_reads_the_vault_and_federated_mounts_unless_mounts_are_named(world: Any) -> None:
    v, _, _ = world
    default = {r.path for r in v.search("herons", mode="lexical", limit=20)}
    assert {"notes/Home.md", "team:Bob.md", "team:Carol.md", "team:people/Ada.md"} <= default
    assert "private:Dora.md" not in default
    private = [r.path for r in v.search("herons", mode="lexical", mounts=["private"])]
    assert private == ["private:Dora.md"]
    own = {r.path for r in v.search("herons", mode="lexical", mounts=["vault"])}
    assert own == {"notes/Home.md", "people/Bob.md"}
    hit = v.search("dawn", mode="lexical")[0]
    assert hit.path == "team:Bob.md" and hit.hits[0].start_line == 3
    with pytest.raises(MountError, match="no mount named 'nowhere'"):
        v.search("herons", mounts=["nowhere"])


def test_find_prefers_the_vault_then_reaches_a_mount_by_qualified_name(world: Any) -> None:
    v, _, _ = world
    assert v.find("Bob").path == "people/Bob.md"
    assert v.find("team:Bob").path == "team:Bob.md"
    assert v.find("team:people/Ada.md").path == "team:people/Ada.md"
    assert v.find("private:Dora").path == "private:Dora.md"
    with pytest.raises(PageNotFound):
        v.find("Dora")  # not federated: only by its qualified name
    with pytest.raises(PageNotFound):
        v.find("team:Dora")
    assert "Team Bob counts herons" in v.read("team:Bob.md", record=False)


def test_a_mounted_folder_is_never_written_and_paths_cannot_leave_it(world: Any,
                                                                   tmp_path: Path) -> None:
    v, team, _ = world
    before = snapshot(team)
    v.index(embed=False)
    v.rebuild(embed=False)
    assert snapshot(team) == before
    with pytest.raises(UnsafePath, match="only reads a mounted folder"):
        resolve_inside(v.root, "team:people/Ada.md")  # every writer goes through here
    with pytest.raises(UnsafePath):
        mounted_file(v.root, "team:../private/Dora.md")
    with pytest.raises(UnsafePath):
        mounted_file(v.root, "team:/etc/passwd")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nherons of the outside world\n")
    (team / "escape.md").symlink_to(outside)
    try:
        v.index(embed=False)
        assert not v.store.rows("SELECT 1 FROM pages WHERE path = 'team:escape.md'")
        with pytest.raises(UnsafePath, match="outside mount"):
            mounted_file(v.root, "team:escape.md")
    finally:
        (team / "escape.md").unlink()
        v.index(embed=False)


def test_adding_a_mount_refuses_what_cannot_work(world: Any, tmp_path: Path) -> None:
    v, _, _ = world
    with pytest.raises(MountError, match="exists already"):
        add_mount(v.root, "team", tmp_path)
    with pytest.raises(MountError, match="is taken"):
        add_mount(v.root, "vault", tmp_path)
    with pytest.raises(MountError, match="lowercase"):
        add_mount(v.root, "Team X", tmp_path)
    with pytest.raises(MountError, match="not a folder"):
        add_mount(v.root, "gone", tmp_path / "missing")
    with pytest.raises(MountError, match="inside the vault"):
        add_mount(v.root, "inner", v.root / "people")
    with pytest.raises(MountError, match="--kind"):
        add_mount(v.root, "odd", tmp_path, kind="photos")
    assert [m.name for m in v.mounts()] == ["team", "private"]


def test_a_damaged_mount_list_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    v, _ = Vault.init(tmp_path / "v")
    config = v.root / ".kenning" / "mounts.yaml"
    config.write_text("mounts:\n  - {name: a, path: /tmp}\n  - {name: a, path: /srv}\n")
    with pytest.raises(MountError, match=r"mounts\.yaml: mount 2: a second mount named 'a'"):
        v.mounts()
    config.write_text("mounts: [\n")
    with pytest.raises(MountError, match=r"mounts\.yaml: not valid YAML") as exc:
        v.mounts()
    assert "\n" not in str(exc.value)
    v.close()


def test_the_cli_mounts_lists_searches_by_mount_and_removes(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v, team, _ = build_world(tmp_path)
    root = str(v.root)
    v.close()
    run = CliRunner().invoke
    listed = run(main, ["-C", root, "mount", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.output)}
    assert rows["team"]["pages"] == 3 and rows["team"]["federated"] is True
    assert rows["private"]["federated"] is False
    found = run(main, ["-C", root, "search", "herons", "--mount", "private", "--json",
                       "--mode", "lexical"])
    assert found.exit_code == 0, found.output
    assert [r["hits"][0]["citation"].split("#")[0] for r in json.loads(found.output)["results"]
            ] == ["private:Dora.md"]
    again = run(main, ["-C", root, "mount", "add", "team", str(team)])
    assert again.exit_code == 2 and "exists already" in again.output  # a usage error
    assert again.output.count("\n") == 1
    removed = run(main, ["-C", root, "mount", "remove", "team"])
    assert removed.exit_code == 0 and "3 files left the index" in removed.output, removed.output
    v = Vault.open(root)
    try:
        # Nothing of the mount is left anywhere in the index.
        for sql in ("SELECT count(*) FROM files WHERE path LIKE 'team:%' OR mount = 'team'",
                    "SELECT count(*) FROM pages WHERE mount = 'team'",
                    "SELECT count(*) FROM chunks c JOIN pages p ON p.id = c.page_id"
                    " WHERE p.mount = 'team'",
                    "SELECT count(*) FROM links l LEFT JOIN pages d ON d.id = l.dst_id"
                    " WHERE d.mount = 'team'",
                    "SELECT count(*) FROM names n LEFT JOIN pages p ON p.id = n.page_id"
                    " WHERE p.id IS NULL"):
            assert v.store.scalar(sql) == 0, sql
        assert link_targets(v, "notes/Home.md")["Carol"] is None  # it was in team
        assert link_targets(v, "notes/Home.md")["team:Bob"] is None
        assert (team / "Bob.md").is_file()  # the folder itself is untouched
    finally:
        v.close()


def test_a_mount_whose_folder_is_missing_keeps_its_pages(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v, team, _ = build_world(tmp_path)
    try:
        aside = team.with_name("team-unplugged")
        team.rename(aside)
        report = v.index(embed=False)
        assert report.deleted == 0
        assert any("mount team" in line and "cannot be read" in line for line in report.found)
        assert v.find("team:Carol").path == "team:Carol.md"
        assert v.mount_list()[0]["available"] is False
        aside.rename(team)
        assert v.index(embed=False).deleted == 0
    finally:
        v.close()


def test_a_token_confined_to_mounts_sees_only_them_over_mcp_http(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    from kenning.serve import tokens

    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v, _, _ = build_world(tmp_path)
    v.close()
    secret, entry = tokens.add(v.root, "guest", ["record"], ["team"])
    assert entry["mounts"] == ["team"]
    with pytest.raises(KenningError, match="no mount named 'elsewhere'"):
        tokens.add(v.root, "bad", ["read"], ["elsewhere"])

    async def run(url: str) -> dict[str, Any]:
        async with http_client(url, secret) as client:
            got: dict[str, Any] = {}
            got["search"] = data(await client.call_tool("search", {"query": "herons",
                                                                   "mode": "lexical"}))
            got["other"] = error(await client.call_tool(
                "search", {"query": "herons", "mounts": ["vault"]}))
            got["page"] = data(await client.call_tool("page", {"ref": "team:Carol"}))
            got["home_page"] = error(await client.call_tool("page", {"ref": "people/Bob.md"}))
            got["write"] = error(await client.call_tool(
                "retain", {"kind": "W", "text": "Herons left early"}))
            return got

    with http_server(v.root) as (url, _):
        got = anyio.run(run, url)
    paths = {r["hits"][0]["citation"].split("#")[0] for r in got["search"]["results"]}
    assert paths and all(p.startswith("team:") for p in paths), paths
    assert "may read only team" in got["other"]
    assert got["page"]["path"] == "team:Carol.md"
    assert "no page named" in got["home_page"]
    assert "writes to the vault" in got["write"]


def test_removing_a_mount_that_is_not_there_says_which_exist(world: Any) -> None:
    v, _, _ = world
    with pytest.raises(MountError, match=r"no mount named 'ghost' \(mounts: team, private"):
        v.mount_remove("ghost")


@pytest.mark.both_backends
def test_mounts_work_alike_on_each_backend(backend: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    v, _, _ = build_world(tmp_path)
    try:
        home = link_targets(v, "notes/Home.md")
        assert (home["Bob"], home["team:Bob"], home["Carol"], home["Dora"]) == (
            "people/Bob.md", "team:Bob.md", "team:Carol.md", None)
        assert [r.path for r in v.search("herons", mode="lexical", mounts=["private"])] == [
            "private:Dora.md"]
        v.mount_remove("team")
        assert v.store.scalar("SELECT count(*) FROM pages WHERE mount = 'team'") == 0
        assert link_targets(v, "notes/Home.md")["Carol"] is None
    finally:
        v.close()


def test_graph_recall_and_show_read_only_the_named_mounts(world: Any) -> None:
    v, _, _ = world
    every = {e.other.path for e in v.neighbors("notes/Home.md")}
    assert {"people/Bob.md", "team:Bob.md", "team:Carol.md"} <= every
    own = {e.other.path for e in v.neighbors("notes/Home.md", mounts=["vault"])}
    assert own == {"people/Bob.md"}
    walked = v.traverse("notes/Home.md", depth=2, mounts=["vault"])
    assert walked.nodes and all(":" not in n.path for n in walked.nodes)
    assert v.recall("Carol").to_dict()["path"] == "team:Carol.md"
    with pytest.raises(PageNotFound):
        v.recall("Carol", mounts=["vault"])
    with pytest.raises(PageNotFound):
        v.show("team:Carol", mounts=["vault"])
    cli = ["-C", str(v.root), "graph", "neighbors", "notes/Home.md", "--json"]
    out = CliRunner().invoke(main, [*cli, "--mount", "vault", "--mount", "private"])
    assert out.exit_code == 0, out.output
    assert {e["path"] for e in json.loads(out.output)} == {
        "people/Bob.md", "private:Dora.md"}
    outside = CliRunner().invoke(main, [*cli, "--mount", "team"])  # the page itself is not there
    assert outside.exit_code != 0 and "no page named 'notes/Home.md'" in outside.output
