"""The bundled sample sources: raw inputs (an mbox, a WebVTT transcript, a chat session) for the
Kestrel Labs sample vault, so ``kenning demo`` runs the whole pipeline: sync → build → index →
recall. See ``README.md`` in this folder for what each file holds.

The files are read in place (syncing only reads its inputs), so nothing writes into the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.sources.store import SyncReport

__all__ = ["apply_owner", "sample_sources_path", "sync_sample", "vault_pages"]

# (connector, folder under this one), in the order the demo syncs them.
INPUTS = (("email", "email"), ("meetings", "meetings"), ("chats", "chats"))
ENTITY_FOLDERS = ("people", "organizations", "projects", "topics", "meetings")


def sample_sources_path() -> Path:
    """Path of the bundled sample sources inside the installed package (do not write into it)."""
    return Path(__file__).parent


def apply_owner(root: Path) -> bool:
    """Give the vault the sample's owner (Maya Okafor) unless its config already names one."""
    from kenning.evaluate.resolution import merge_config

    return bool(merge_config(Path(root), sample_sources_path() / "config.yaml",
                             keep_existing=True))


def sync_sample(root: Path) -> list[SyncReport]:
    """Sync the sample mbox, transcript and chat into ``root/sources/`` (idempotent)."""
    from kenning.sources import chats, email, meetings

    base = sample_sources_path()
    return [email.sync(root, str(base / "email")), meetings.sync(root, base / "meetings"),
            chats.sync(root, base / "chats")]


@dataclass(frozen=True)
class PageState:
    path: str
    title: str
    digest: str


def vault_pages(root: Path) -> dict[str, PageState]:
    """Entity pages the build writes (people/, organizations/ …), with a content digest."""
    import hashlib

    from kenning.vault.page import parse_page

    pages: dict[str, PageState] = {}
    for folder in ENTITY_FOLDERS:
        base = Path(root) / folder
        if not base.is_dir():
            continue
        for file in sorted(base.rglob("*.md")):
            data = file.read_bytes()
            rel = file.relative_to(root).as_posix()
            title = parse_page(data.decode("utf-8", "replace"), rel).title  # the one title rule
            pages[rel] = PageState(rel, title, hashlib.sha256(data).hexdigest())
    return pages
