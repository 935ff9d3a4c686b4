"""Hostile pages: frontmatter that explodes, lines that are all links, pages that end inside a
code fence, huge and deep notes. Each must be read in bounded time and memory, be named with its
line when it cannot be used, and leave every other note indexed and every write readable."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hostile import Case, Run, one_line_naming

GOOD = "The lighthouse keeper logs storms.\n"


def _alias_bomb() -> str:
    """'Billion laughs': nine anchors of nine aliases each, 9**9 values once expanded."""
    lines = ["a: &a [" + ",".join(['"lol"'] * 9) + "]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _notes(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in {**files, "notes/Good.md": "# Good\n\n" + GOOD}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _good_found(run: Run) -> list[str]:
    if "notes/Good.md" not in run.stdout:
        return [f"{' '.join(run.args)}: the good note is not found: {run.output[-300:]!r}"]
    return []


def _failed(run: Run) -> list[str]:
    """Problems when a command (or an MCP tool call) did not succeed."""
    failed = run.returncode != 0
    if not failed and run.args[0].startswith("@mcp"):
        try:
            failed = bool(json.loads(run.stdout).get("error"))
        except ValueError:
            failed = True
    return [f"{' '.join(run.args)[:80]}: failed: {run.output[-300:]!r}"] if failed else []


# -- frontmatter ---------------------------------------------------------------------------------


def _bomb_setup(root: Path) -> None:
    _notes(root, {
        "notes/Bomb.md": "---\ntitle: Bomb\n" + _alias_bomb() + "---\n# Bomb\n\nboom\n",
        "notes/Loop.md": "---\nloop: &x [1, *x]\n---\n# Loop\n",
        "notes/Deep.md": "---\ndeep: " + "[" * 100_000 + "\n---\n# Deep\n",
    })


def _bomb_check(root: Path, runs: list[Run]) -> list[str]:
    index, doctor, search, build, mcp = runs
    problems = _failed(index) + _good_found(search) + _failed(build)
    problems += one_line_naming(doctor, "notes/Bomb.md:", "alias")
    problems += one_line_naming(doctor, "notes/Loop.md:2", "recursive alias")
    problems += one_line_naming(doctor, "notes/Deep.md:2", "nested")
    try:
        result = json.loads(mcp.stdout)
    except ValueError:
        return [*problems, f"MCP search gave no JSON: {mcp.output[-300:]!r}"]
    if result.get("error") or "notes/Good.md" not in result.get("text", ""):
        problems.append(f"MCP search did not find the good note: {mcp.output[-300:]!r}")
    return problems


def _config_bomb_setup(root: Path) -> None:
    config = root / ".kenning" / "config.yaml"
    # The bomb is the exclude list itself, which every command walks.
    text = config.read_text(encoding="utf-8").replace('exclude:\n  - "templates/**"\n',
                                                      "exclude: *i\n")
    config.write_text(_alias_bomb() + text, encoding="utf-8")
    _notes(root, {})


def _config_bomb_check(root: Path, runs: list[Run]) -> list[str]:
    (index,) = runs
    if index.returncode == 0:
        return [f"index accepted a config with an alias bomb: {index.output[-300:]!r}"]
    return one_line_naming(index, ".kenning/config.yaml", "alias")


def _big_frontmatter_setup(root: Path) -> None:
    many = "".join(f"  - item {i}\n" for i in range(40_000))  # ~500 KB of YAML
    _notes(root, {"notes/Big.md": "---\nlist:\n" + many + "---\n# Big\n\nbig body\n"})


def _big_frontmatter_check(root: Path, runs: list[Run]) -> list[str]:
    index, doctor, search = runs
    return (_failed(index) + _good_found(search)
            + one_line_naming(doctor, "notes/Big.md:", "KB of YAML"))


def _fm_links_setup(root: Path) -> None:
    # Each list item's line used to be searched from its key, and each key's line over every
    # line: quadratic in items and in keys (17 s here for 250 KB).
    _notes(root, {"people/Rel.md": "---\ntype: person\nrelated:\n"
                  + "".join(f'  - "[[P{i}]]"\n' for i in range(12_000))
                  + "".join(f"k{i}: {i}\n" for i in range(5_000)) + "---\n# Rel\n"})


def _fm_links_check(root: Path, runs: list[Run]) -> list[str]:
    index, search = runs
    problems = _failed(index) + _good_found(search)
    dangling = re.search(r"([\d,]+) dangling", index.output)
    if dangling is None or int(dangling.group(1).replace(",", "")) < 12_000:
        problems.append(f"index did not count the 12,000 links: {index.output[-300:]!r}")
    return problems


# -- links and other per-line syntax -------------------------------------------------------------


def _links_setup(root: Path) -> None:
    # 10,000 links on one ~120 KB line, each in its own "sentence": every link's context used to
    # rescan (and copy) the whole line.
    line = " ".join(f"[[Note {i}]]." for i in range(10_000))
    para = "".join(f"line [[Para {i}]] ^b{i}\n" for i in range(10_000))  # one 10,000-line paragraph
    tags = " ".join(f"#tag{i}" for i in range(10_000))
    fields = "## Facts\n\n- x " + "[from:: [[a]] " * 10_000 + "\n"
    _notes(root, {"notes/Links.md": f"# Links\n\n{line}\n\n{tags}\n\n{para}\n{fields}",
                  "notes/Anchors.md": "# Anchors\n\n[[Links#^b9999]]\n"})


def _links_check(root: Path, runs: list[Run]) -> list[str]:
    index, search = runs
    problems = _failed(index) + _good_found(search)
    dangling = re.search(r"([\d,]+) dangling", index.output)
    if dangling is None or int(dangling.group(1).replace(",", "")) < 10_000:
        problems.append(f"index did not count the 10,000 links: {index.output[-300:]!r}")
    return problems


# -- writes that must land where they can be read ------------------------------------------------

_PERSON = "---\ntype: person\n---\n# Hannah Berg\n\n## Facts\n\n- Likes tea ^f1\n\nNotes:\n\n"


def _fence_setup(root: Path) -> None:
    # The page ends inside an unclosed fence that quotes an old fact id.
    _notes(root, {"people/Hannah Berg.md": _PERSON + "```python\nprint('^f2')\n- old ^f2\n"})


def _comment_setup(root: Path) -> None:
    _notes(root, {"people/Hannah Berg.md": _PERSON.replace("## Facts\n\n- Likes tea ^f1\n\n", "")
                  + "<!-- draft\n## Timeline\n- 2020 — hidden\n"})


def _facts_check(root: Path, runs: list[Run]) -> list[str]:
    *writes, facts = runs
    problems = [p for r in writes for p in _failed(r)] + _failed(facts)
    for text in ("Plays chess", "Runs marathons"):
        if text not in facts.stdout:
            problems.append(f"facts does not show {text!r} after record: "
                            f"{facts.output[-400:]!r}")
    page = (root / "people" / "Hannah Berg.md").read_text(encoding="utf-8")
    ids = [line.rsplit("^", 1)[1] for line in page.splitlines()
           if line.startswith("- ") and " ^f" in line]
    if len(ids) != len(set(ids)):
        problems.append(f"fact ids reused on the page: {ids}")
    return problems


def _mcp_record(entity: str, text: str) -> tuple[str, ...]:
    return ("@mcp", "record", json.dumps({"observations": [{"entity": entity, "text": text}]}))


def _lone_cr_setup(root: Path) -> None:
    _notes(root, {"people/Ada Lovelace.md":
                  "---\ntype: person\rrole: engineer\nemails: [ada@example.com]\n---\n"
                  "# Ada Lovelace\n\nWrites notes.\n"})


def _lone_cr_check(root: Path, runs: list[Run]) -> list[str]:
    record, index, search = runs
    problems = _failed(index) + _good_found(search)
    page = (root / "people" / "Ada Lovelace.md").read_bytes()
    if page != (b"---\ntype: person\rrole: engineer\nemails: [ada@example.com]\n---\n"
                b"# Ada Lovelace\n\nWrites notes.\n"):
        problems.append(f"the page with a lone CR was changed: {page[:200]!r}")
    if record.returncode == 0:
        problems.append(f"record wrote to a page whose frontmatter it cannot read: "
                        f"{record.output[-300:]!r}")
    return problems + one_line_naming(record, "people/Ada Lovelace.md:2", "lone CR")


# -- size and depth ------------------------------------------------------------------------------


def _huge_setup(root: Path) -> None:
    _notes(root, {
        "notes/Huge.md": "# Huge\n\n" + ("word " * 20 + "\n") * 200_000,         # 20 MB
        "notes/Line.md": "# Line\n\n" + " ".join(f"w{i}" for i in range(130_000)) + "\n",
        "notes/Heads.md": "".join(f"## Heading {i}\n" for i in range(100_000)),
        "notes/Quotes.md": "# Quotes\n\n" + ">" * 20_000 + " deep\n",
        "notes/Lists.md": "# Lists\n\n" + "".join("  " * i + "- item\n" for i in range(1_000)),
    })


def _huge_check(root: Path, runs: list[Run]) -> list[str]:
    index, search, line = runs
    problems = _failed(index) + _good_found(search)
    problems += one_line_naming(index, "notes/Huge.md", "too large")
    if "notes/Line.md" not in line.stdout:
        problems.append(f"the 1 MB line is not searchable: {line.output[-300:]!r}")
    return problems


def _sections_setup(root: Path) -> None:
    # Each section's end used to be found by scanning (and copying) every later heading, and each
    # item's section by scanning every section: quadratic in sections.
    _notes(root, {"people/Many Sections.md": "---\ntype: person\n---\n# Many Sections\n\n"
                  + "".join(f"## Facts\n\n- fact number {i}\n\n" for i in range(30_000))})


def _sections_check(root: Path, runs: list[Run]) -> list[str]:
    index, search, facts = runs
    problems = _failed(index) + _good_found(search) + _failed(facts)
    if "fact number 29999" not in facts.stdout:
        problems.append(f"the last fact is not read: {facts.output[-300:]!r}")
    return problems


CASES = [
    Case("pages", "yaml-alias-bomb-recursion-depth", _bomb_setup,
         (("index",), ("doctor",), ("search", "lighthouse keeper"), ("build",),
          ("@mcp", "search", json.dumps({"query": "lighthouse keeper"}))), _bomb_check),
    Case("pages", "yaml-alias-bomb-in-config", _config_bomb_setup, (("index",),),
         _config_bomb_check),
    Case("pages", "frontmatter-500kb", _big_frontmatter_setup,
         (("index",), ("doctor",), ("search", "lighthouse keeper")), _big_frontmatter_check),
    Case("pages", "frontmatter-12000-links-5000-keys", _fm_links_setup,
         (("index",), ("search", "lighthouse keeper")), _fm_links_check),
    Case("pages", "10000-links-on-one-line", _links_setup,
         (("index",), ("search", "lighthouse keeper")), _links_check),
    Case("pages", "unclosed-fence-then-record", _fence_setup,
         (("record", "--entity", "Hannah Berg", "--obs", "Plays chess"),
          ("record", "--entity", "Hannah Berg", "--obs", "Runs marathons"),
          ("facts", "Hannah Berg")), _facts_check),
    Case("pages", "unclosed-comment-then-mcp-record", _comment_setup,
         (_mcp_record("Hannah Berg", "Plays chess"), _mcp_record("Hannah Berg", "Runs marathons"),
          ("facts", "Hannah Berg")), _facts_check),
    Case("pages", "lone-cr-in-frontmatter-then-record", _lone_cr_setup,
         (("record", "--entity", "Ada Lovelace", "--obs", "Likes maths"), ("index",),
          ("search", "lighthouse keeper")), _lone_cr_check),
    Case("pages", "30000-facts-sections", _sections_setup,
         (("index",), ("search", "lighthouse keeper"), ("facts", "Many Sections")),
         _sections_check),
    Case("pages", "20mb-note-1mb-line-100k-headings-deep-nesting", _huge_setup,
         (("index",), ("search", "lighthouse keeper"), ("search", "w129999")), _huge_check),
]
