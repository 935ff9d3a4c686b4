"""Email into ``sources/email/``: one Markdown file per thread (mbox, Maildir, .eml, IMAP)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kenning.sources.owner import Owner
from kenning.sources.store import Progress, SourceStore, SyncReport


@dataclass(frozen=True)
class RawMessage:
    """One message as a reader found it, before parsing."""

    data: bytes  # the RFC 822 bytes
    where: str  # for warnings: "path/to/mbox#message 12", "INBOX uid 42", "x.eml"
    folder: str | None = None  # mailbox folder / IMAP folder, stored as a label
    labels: tuple[str, ...] = ()  # e.g. Gmail X-GM-LABELS


def ingest(store: SourceStore, messages: Iterable[RawMessage], report: SyncReport, *,
           owner: Owner, progress: Progress | None = None, total: int | None = None) -> None:
    """Parse, thread and write messages (thread files appended, never rewritten)."""
    raise NotImplementedError  # filled in shortly


def sync(root: Path, target: str, *, progress: Progress | None = None,
         folders: list[str] | None = None,
         password_env: str = "KENNING_IMAP_PASSWORD") -> SyncReport:
    """Sync an mbox file, a Maildir, a folder of .eml files, or imap://… / imaps://…"""
    if target.startswith(("imap://", "imaps://")):
        from kenning.sources.email import imap

        return imap.sync(root, target, progress=progress, folders=folders,
                         password_env=password_env)
    raise NotImplementedError
