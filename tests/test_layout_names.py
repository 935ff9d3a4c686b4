"""The package layout survives the standard Python ``.gitignore`` template."""

from __future__ import annotations

from pathlib import Path

import kenning

# Folder names the GitHub Python .gitignore template ignores anywhere in a tree.
IGNORED_ANYWHERE = {"build", "dist", "develop-eggs", "downloads", "eggs", ".eggs", "lib",
                    "lib64", "parts", "sdist", "var", "wheels", "env", "venv", "ENV"}


def test_no_package_folder_has_a_name_the_python_gitignore_template_drops() -> None:
    root = Path(kenning.__file__).parent
    folders = {p.name for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    assert "builder" in folders
    assert not folders & IGNORED_ANYWHERE, sorted(folders & IGNORED_ANYWHERE)
