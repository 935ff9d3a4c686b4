"""Build state (``.kenning/build/state.json``), the mention log, source discovery, strictness.

State keys:

- ``sources``: source path → ``sha256:`` of its bytes when it was last built;
- ``pages``: page path → what the build last wrote there (``summary``, ``organization``, ``role``)
  and the identity it carries (``keys``: emails, name keys; ``last_seen``), so a hand edit is
  recognised (a value that is no longer what Kenning wrote is the person's and is kept) and a
  page deleted by hand can be recognised;
- ``deleted``: identity key → last evidence date of a page deleted by hand; evidence up to that
  date does not create it again, newer evidence does;
- ``renamed``: old page path → new page path (renames and merges), applied to the mention log;
- ``contacts``: addresses of people in conversations the owner wrote in (strictness high);
- ``strictness``: the value used by the last build.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.vault.fsio import atomic_write_text, is_utf8_name
from kenning.vault.layout import STATE_DIR

BUILD_DIR = "build"
STATE_NAME = "state.json"
LOG_NAME = "mentions.jsonl"
STATE_VERSION = 1
STRICTNESS = ("low", "medium", "high")
Intend = Callable[[Mapping[str, "str | None"]], None]


def build_dir(root: Path) -> Path:
    return root / STATE_DIR / BUILD_DIR


@dataclass
class BuildState:
    sources: dict[str, str] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)
    contacts: list[str] = field(default_factory=list)
    strictness: str | None = None
    warning: str | None = None

    @classmethod
    def load(cls, root: Path) -> BuildState:
        path = build_dir(root) / STATE_NAME
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as exc:
            # A damaged state costs a full rebuild, never a lost page: pages are merged into.
            return cls(warning=f"{path}: unreadable build state ({exc}); rebuilding all sources")
        return cls(sources=dict(data.get("sources") or {}), pages=dict(data.get("pages") or {}),
                   deleted=dict(data.get("deleted") or {}),
                   renamed=dict(data.get("renamed") or {}),
                   contacts=list(data.get("contacts") or []), strictness=data.get("strictness"))

    def to_json(self) -> str:
        data = {"version": STATE_VERSION, "strictness": self.strictness,
                "sources": dict(sorted(self.sources.items())),
                "pages": dict(sorted(self.pages.items())),
                "deleted": dict(sorted(self.deleted.items())),
                "renamed": dict(sorted(self.renamed.items())),
                "contacts": sorted(set(self.contacts))}
        return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False) + "\n"

    def save(self, root: Path, *, intend: Intend | None = None) -> None:
        """Write the state (``intend``, the build's journal, is told first)."""
        path = build_dir(root) / STATE_NAME
        text = self.to_json()
        if _holds(path, text):
            return
        if intend is not None:
            intend({path.relative_to(root).as_posix(): text})
        atomic_write_text(path, text)

    def follow(self, page: str | None) -> str | None:
        """Where a page is now, through renames and merges."""
        seen = set()
        while page in self.renamed and page not in seen:
            seen.add(page)
            page = self.renamed[page]
        return page


def _holds(path: Path, text: str) -> bool:
    """The file at ``path`` already holds ``text`` (a damaged or missing one does not)."""
    try:
        return path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def file_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def list_sources(root: Path) -> list[str]:
    """Every Markdown source file under ``sources/`` (vault-relative), sorted."""
    base = root / "sources"
    if not base.is_dir():
        return []
    out = []
    for p in base.rglob("*.md"):
        rel = p.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")) or not is_utf8_name(rel):
            continue  # a name that is not UTF-8: `kenning index` names it, skipped
        if p.is_file():
            out.append(rel)
    return sorted(out)


# -- the mention log --------------------------------------------------------------------------


def read_log(root: Path) -> list[dict[str, Any]]:
    path = build_dir(root) / LOG_NAME
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a damaged line is rebuilt with its source
        if isinstance(row, dict):
            out.append(row)
    return out


def log_text(rows: list[dict[str, Any]]) -> str:
    rows = sorted(rows, key=lambda r: (r.get("source") or "", r.get("line") or 0,
                                       r.get("kind") or "", r.get("text") or ""))
    encode = json.JSONEncoder(ensure_ascii=False, sort_keys=False).encode  # = json.dumps(…)
    return "".join(encode(r) + "\n" for r in rows)


def write_log(root: Path, rows: list[dict[str, Any]], *, intend: Intend | None = None) -> None:
    """Write the mention log (``intend``, the build's journal, is told first)."""
    path = build_dir(root) / LOG_NAME
    text = log_text(rows)
    if _holds(path, text):
        return
    if intend is not None:
        intend({path.relative_to(root).as_posix(): text})
    atomic_write_text(path, text)


# -- strictness -------------------------------------------------------------------------------


def infer_strictness(configured: Any, *, owner_known: bool, email_sources: int,
                     owner_wrote: bool) -> tuple[str, str]:
    """(strictness, why). Configured wins; else volume and whether the owner writes mail."""
    if configured is not None:
        value = str(configured).strip().lower()
        if value not in STRICTNESS:
            from kenning.errors import NotAVault

            raise NotAVault(f".kenning/config.yaml: field 'build.strictness' must be one of "
                            f"{', '.join(STRICTNESS)}, not {configured!r}")
        return value, "configured (build.strictness)"
    if owner_known and owner_wrote and email_sources >= 1000:
        return "high", f"{email_sources} email threads and the owner writes mail"
    if email_sources >= 200:
        return "medium", f"{email_sources} email threads"
    return "low", f"{email_sources} email threads"
