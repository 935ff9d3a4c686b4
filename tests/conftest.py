"""Shared fixtures: a fresh vault, the bundled sample vault, and a helper to write notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.sample import copy_sample


@pytest.fixture(autouse=True)
def _lexical_unless_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding is slow on 2 cores: only tests marked ``embeddings`` run the real model."""
    if "embeddings" not in request.keywords:
        monkeypatch.setenv("KENNING_EMBEDDINGS", "none")
    # Progress lines off a terminal go to stderr, which CliRunner's `output` mixes in: tests
    # that read them set the interval themselves.
    monkeypatch.setenv("KENNING_PROGRESS_EVERY", "0")


def write(vault: Vault, relpath: str, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``relpath`` in the vault; return the path."""
    path = vault.root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def vault(tmp_path: Path):
    """A freshly created, empty (not yet indexed) vault at ``tmp_path/"v"``."""
    v, _ = Vault.init(tmp_path / "v")
    yield v
    v.close()


@pytest.fixture
def sample_vault(tmp_path: Path):
    """A private copy of the bundled sample vault (Kestrel Labs), initialised, not yet indexed."""
    v, _ = Vault.init(copy_sample(tmp_path / "sample"))
    yield v
    v.close()
