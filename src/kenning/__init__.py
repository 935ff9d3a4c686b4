"""Kenning: a local-first memory for AI agents, kept as plain Markdown pages.

The Python API is the product; the CLI is a thin layer over it::

    from kenning import Vault
    vault = Vault.open("~/notes")
    vault.index()
    for hit in vault.search("pricing decision"):
        print(hit.citation, hit.snippet)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Vault", "__version__"]

if TYPE_CHECKING:
    from kenning.api import Vault


def __getattr__(name: str) -> Any:
    # Lazy so that `kenning --help` does not import the index and its dependencies.
    if name == "Vault":
        from kenning.api import Vault

        return Vault
    raise AttributeError(name)
