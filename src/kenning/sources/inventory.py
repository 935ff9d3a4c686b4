"""What the raw layer holds: for ``kenning sources list`` and ``kenning sources show``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kenning.errors import PageNotFound
from kenning.sources.store import FOLDERS, SOURCES, read_states
from kenning.vault import frontmatter


def inventory(root: Path) -> dict[str, Any]:
    kinds = {}
    for kind, folder in FOLDERS.items():
        path = Path(root) / SOURCES / folder
        kinds[kind] = sum(1 for _ in path.rglob("*.md")) if path.is_dir() else 0
    connectors = [{"connector": s.get("connector"), "last_sync": s.get("last_sync"),
                   "sources": len(s.get("sources") or {})} for s in read_states(root)]
    return {"kinds": kinds, "connectors": connectors}


def describe(root: Path, source: str) -> dict[str, Any]:
    """Frontmatter, entry count and size of one source, by path, file stem or source id."""
    root = Path(root)
    rel = _find(root, source)
    text = (root / rel).read_text(encoding="utf-8", errors="replace")
    parsed = frontmatter.read(text)
    data: dict[str, Any] = {"path": rel, **parsed.data}
    data["bytes"] = len(text.encode("utf-8"))
    data["lines"] = text.count("\n")
    return data


def _find(root: Path, source: str) -> str:
    candidate = source.removesuffix(".md")
    for state in read_states(root):
        record = (state.get("sources") or {}).get(source)
        if record:
            return str(record["path"])
    for rel in (f"{candidate}.md", f"{SOURCES}/{candidate}.md"):
        if (root / rel).is_file():
            return rel
    matches = sorted(p.relative_to(root).as_posix()
                     for p in (root / SOURCES).rglob(f"{Path(candidate).name}.md"))
    if len(matches) == 1:
        return matches[0]
    raise PageNotFound(f"no source file matches {source!r}"
                       + (f" (several do: {', '.join(matches[:5])})" if matches else ""))
