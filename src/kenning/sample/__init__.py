"""The bundled sample vault: Kestrel Labs, a small fictional startup, for `kenning demo` and tests.

The vault ships inside the package and is read-only by convention: copy it with ``copy_sample``
before indexing or editing, so nothing ever writes into the installed package.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["copy_sample", "sample_vault_path"]


def sample_vault_path() -> Path:
    """Path of the bundled sample vault inside the installed package (do not write into it)."""
    return Path(__file__).parent / "vault"


def copy_sample(dest: Path) -> Path:
    """Copy the sample vault to ``dest`` (which must not exist yet) and return ``dest``.

    Derived state (a ``.kenning/`` index, editor folders) is never copied, so the copy is clean.
    """
    dest = Path(dest)
    shutil.copytree(
        sample_vault_path(), dest,
        ignore=shutil.ignore_patterns(".kenning", ".obsidian", "__pycache__", ".DS_Store"),
    )
    return dest
