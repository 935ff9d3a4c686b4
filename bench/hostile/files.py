"""Hostile files in the vault itself: names, bytes and links that must not stop the index."""

from __future__ import annotations

from pathlib import Path

from hostile import Case, Run


def _binary_named_md(root: Path) -> None:
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "photo.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
    (root / "notes" / "Good.md").write_text("# Good\n\nThe lighthouse keeper logs storms.\n")


def _binary_check(root: Path, runs: list[Run]) -> list[str]:
    index, search = runs
    problems = []
    if "photo.md" not in index.output:
        problems.append(f"index does not name notes/photo.md: {index.output[-300:]!r}")
    if "Good.md" not in search.stdout:
        problems.append(f"the good note is not found: {search.stdout[-300:]!r}")
    return problems


CASES = [
    Case("files", "binary-content-named-md", _binary_named_md,
         (("index",), ("search", "lighthouse keeper")), _binary_check),
]
