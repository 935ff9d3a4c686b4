"""Hostile `record` calls: retries, huge batches, huge observations, names that collide.

What must hold: a retried call writes once (with or without an idempotency key), a call at the
item limit finishes in bounded time over remote MCP, a call over a limit is refused in one line
naming the field and writes nothing, and names differing only in case make one page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hostile import Case, Run, one_line_naming

DAY = {"KENNING_TODAY": "2026-03-04"}


def _facts(root: Path, title: str) -> list[str]:
    pages = [p for p in root.glob("*/*.md") if p.stem.casefold() == title.casefold()]
    if len(pages) != 1:
        return [f"<{len(pages)} pages titled {title!r}>"]
    lines = pages[0].read_text(encoding="utf-8").splitlines()
    start = lines.index("## Facts") if "## Facts" in lines else len(lines)
    return [line for line in lines[start + 1:] if line.startswith("- ")]


def _person(root: Path, name: str = "Ada Park") -> None:
    (root / "people").mkdir(exist_ok=True)
    (root / "people" / f"{name}.md").write_text(
        f"---\ntype: person\n---\n# {name}\n\nChairs the harbour board.\n", encoding="utf-8")


def _batch(root: Path, name: str, data: object) -> str:
    (root.parent / name).write_text(json.dumps(data), encoding="utf-8")
    return "{root}/../" + name


def _obs(n: int, entity: str = "Ada Park") -> list[dict[str, str]]:
    return [{"entity": entity, "text": f"Observation {i}: budget line {i} was reviewed"}
            for i in range(n)]


def _ok(run: Run) -> list[str]:
    if run.returncode != 0:
        return [f"{' '.join(run.args)[:80]}: exit {run.returncode}: {run.output[-300:]!r}"]
    return []


def _remote_ok(run: Run) -> list[str]:
    try:
        result = json.loads(run.stdout)
    except ValueError:
        return [f"no MCP result: {run.output[-300:]!r}"]
    return [f"remote call failed: {result['text'][:300]!r}"] if result["error"] else []


# -- a retried record ------------------------------------------------------------------------

RETRY = ("record", "--batch", "{root}/../obs.json")


def _retry_setup(root: Path) -> None:
    _person(root)
    _batch(root, "obs.json", {"observations": _obs(23)})


def _retry_check(root: Path, runs: list[Run]) -> list[str]:
    problems = [p for r in runs for p in _ok(r)]
    facts = _facts(root, "Ada Park")
    if len(facts) != 23:
        problems.append(f"a retried record left {len(facts)} facts, not 23")
    return problems


def _key_check(root: Path, runs: list[Run]) -> list[str]:
    first, again, other = runs
    problems = _ok(first) + _ok(again)
    if '"replayed": true' not in again.stdout:
        problems.append(f"the retry with the key was not replayed: {again.stdout[-200:]!r}")
    if other.returncode == 0:
        problems.append("the key reused with other observations was accepted")
    problems += one_line_naming(other, "key", "other arguments")
    facts = _facts(root, "Ada Park")
    if len(facts) != 23:
        problems.append(f"{len(facts)} facts after a keyed retry, not 23")
    return problems


def _key_setup(root: Path) -> None:
    _retry_setup(root)
    _batch(root, "other.json", {"observations": _obs(24)})


# -- at the item limit, remote -----------------------------------------------------------------


def _remote_setup(root: Path) -> None:
    _person(root)
    _batch(root, "remote-999.json", {"observations": _obs(999)})


def _remote_check(root: Path, runs: list[Run]) -> list[str]:
    problems = [p for r in runs if r.args[0].startswith("@") for p in _remote_ok(r)]
    facts = _facts(root, "Ada Park")
    if len(facts) != 999:
        problems.append(f"{len(facts)} facts after a remote record of 999, not 999")
    return problems


# -- over a limit: refused in one line, nothing written ------------------------------------------


def _refused(field: str, *needles: str, title: str | None = "Ada Park",
             facts: int = 0) -> Callable[[Path, list[Run]], list[str]]:
    """A check: the first command refused in one line naming ``field``; nothing written."""
    def check(root: Path, runs: list[Run]) -> list[str]:
        run = runs[0]
        problems = [] if run.returncode != 0 else ["the call was accepted"]
        problems += one_line_naming(run, field, *needles)
        if title is not None and len(_facts(root, title)) != facts:
            problems.append(f"{title}: {len(_facts(root, title))} facts, not {facts}")
        if len(list(root.glob("people/*.md"))) != 1:
            problems.append(f"pages were created: {sorted(p.name for p in root.glob('people/*'))}")
        return problems + [p for r in runs[1:] for p in _ok(r)]
    return check


def _remote_huge_setup(root: Path) -> None:
    _person(root)
    _batch(root, "remote-huge.json", {"observations": [{"entity": "Ada Park",
                                                        "text": "storm " * 170_000}]})


def _huge_obs_setup(root: Path) -> None:
    _person(root)
    _batch(root, "huge.json", {"observations": [{"entity": "Ada Park",
                                                 "text": "storm " * 170_000}]})


def _many_entities_setup(root: Path) -> None:
    _person(root)
    _batch(root, "many.json", {"entities": [{"name": f"Keeper {i:05d}", "type": "person"}
                                            for i in range(10_000)]})


def _nested_setup(root: Path) -> None:
    _person(root)
    _batch(root, "nested.json", {"entities": [{"name": "Ada Park", "type": "person",
                                               "observations": [f"n{i}" for i in
                                                                range(50_000)]}]})


def _limit_pages_setup(root: Path) -> None:
    _person(root)
    _batch(root, "pages.json", {"entities": [{"name": f"Keeper {i:04d}", "type": "person"}
                                             for i in range(999)],
                                "observations": [{"entity": "Keeper 0500",
                                                  "text": "Tends the northern lamp"}]})


def _limit_pages_check(root: Path, runs: list[Run]) -> list[str]:
    problems = [p for r in runs for p in _ok(r)]
    count = len(list(root.glob("people/*.md")))
    if count != 1000:
        problems.append(f"{count} person pages after creating 999 (want 1000)")
    if "Keeper 0500" not in runs[-1].stdout:
        problems.append(f"the new page is not found: {runs[-1].stdout[-200:]!r}")
    return problems


# -- names that differ only in case ------------------------------------------------------------


def _case_setup(root: Path) -> None:
    _person(root)
    _batch(root, "case.json", {
        "entities": [{"name": "ADA PARK", "type": "person", "observations": ["Likes tea"]},
                     {"name": "Ben Ode", "type": "person"}],
        "observations": [{"entity": "ada park", "text": "Likes tea"},
                         {"entity": "BEN ODE", "text": "Audits the budget"},
                         {"entity": "ben ode", "text": "Audits the budget"}]})


def _case_check(root: Path, runs: list[Run]) -> list[str]:
    problems = [p for r in runs for p in _ok(r)]
    people = sorted(p.name for p in root.glob("people/*.md"))
    if people != ["Ada Park.md", "Ben Ode.md"]:
        problems.append(f"names differing in case made pages {people}")
    for title, want in (("Ada Park", 1), ("Ben Ode", 1)):
        if len(_facts(root, title)) != want:
            problems.append(f"{title}: {_facts(root, title)} (want {want} fact)")
    return problems


def _dup_in_call_setup(root: Path) -> None:
    _person(root)
    _batch(root, "dup.json", {"entities": [{"name": "Cy Dee", "type": "person"},
                                           {"name": "cy  DEE", "type": "person"}]})


CASES = [
    Case("record", "retried-record-without-key", _retry_setup, (RETRY, RETRY), _retry_check,
         env=DAY),
    Case("record", "retried-record-with-key", _key_setup,
         ((*RETRY, "--key", "k-1"), (*RETRY, "--key", "k-1", "--json"),
          ("record", "--batch", "{root}/../other.json", "--key", "k-1")), _key_check, env=DAY),
    Case("record", "remote-record-999-observations", _remote_setup,
         (("@mcp-remote", "record", "@{root}/../remote-999.json"),), _remote_check,
         env=DAY),
    Case("record", "observation-of-1mb", _huge_obs_setup,
         (("record", "--batch", "{root}/../huge.json"), ("index",)),
         _refused("observations[0].text", "at most 20,000")),
    Case("record", "remote-observation-of-1mb", _remote_huge_setup,
         (("@mcp-remote", "record", "@{root}/../remote-huge.json"),),
         lambda root, runs: ([] if '"error": true' in runs[0].stdout and "limit" in
                             runs[0].stdout else [f"accepted: {runs[0].stdout[-200:]!r}"])
         + ([] if not _facts(root, "Ada Park") else ["written"])),
    Case("record", "10000-entities-in-one-call", _many_entities_setup,
         (("record", "--batch", "{root}/../many.json"), ("index",)),
         _refused("10000 items in one call", "at most 1000")),
    Case("record", "50000-observations-inside-one-entity", _nested_setup,
         (("record", "--batch", "{root}/../nested.json"), ("index",)),
         _refused("50001 items in one call", "at most 1000")),
    Case("record", "1000-new-pages-in-one-call", _limit_pages_setup,
         (("record", "--batch", "{root}/../pages.json"), ("search", "northern lamp")),
         _limit_pages_check, env=DAY),
    Case("record", "names-differing-only-in-case", _case_setup,
         (("record", "--batch", "{root}/../case.json"),), _case_check, env=DAY),
    Case("record", "one-name-twice-in-one-call", _dup_in_call_setup,
         (("record", "--batch", "{root}/../dup.json"), ("index",)),
         _refused("entities[1].name", "appears twice", title=None)),
]
