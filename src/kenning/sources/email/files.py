"""Readers for mail on disk: an mbox file, a Maildir, or a folder of message files.

A folder is walked recursively in name order. Each file is sniffed: an mbox (starts with
``From ``) is read with :mod:`mailbox`; a file whose first line is a header field and whose first
lines hold From/Date/Subject/Message-ID is a message (any extension: ``.eml``, Maildir names,
Enron's ``N.txt``); anything else (``.cats`` label files, READMEs, indexes) is skipped silently.
Maildir ``tmp/`` folders are skipped (messages being delivered). A message's folder label is its
folder relative to the target, without Maildir's ``cur``/``new`` (an mbox's label is its file
name without the extension).
"""

from __future__ import annotations

import mailbox
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.sources.email.message import parse_mbox_from_line
from kenning.sources.store import SyncError, SyncReport

if TYPE_CHECKING:
    from kenning.sources.email import RawMessage

_HEADER_LINE = re.compile(rb"^[\x21-\x39\x3b-\x7e]+:")
_KNOWN = re.compile(rb"^(?:from|date|subject|message-id|received|return-path|to|"
                    rb"delivered-to|mime-version):", re.IGNORECASE | re.MULTILINE)
_MAILDIR_TIME = re.compile(r"^(\d{9,10})\.")
SNIFF = 8192
_FROM_ESCAPE = re.compile(rb"(?m)^>(>*From )")


def looks_like_message(head: bytes) -> bool:
    head = head.lstrip(b"\r\n")
    first = head.split(b"\n", 1)[0]
    if not _HEADER_LINE.match(first):
        return False
    block = head.split(b"\n\n", 1)[0].split(b"\r\n\r\n", 1)[0]
    return len(_KNOWN.findall(block)) >= 2


def read(path: Path, report: SyncReport) -> tuple[Iterator[RawMessage], int | None]:
    """The messages under ``path`` and how many there are (None when unknown up front)."""
    if path.is_dir():
        files = list(_walk(path))
        return _read_folder(path, files, report), len(files)
    if not path.is_file():
        raise SyncError(f"{path}: no such file or folder")
    with path.open("rb") as fh:
        head = fh.read(SNIFF)
    if head.startswith(b"From "):
        box = mailbox.mbox(str(path), create=False)
        keys = list(box.keys())
        return _read_mbox(path, box, keys, report, path.stem), len(keys)
    if looks_like_message(head):
        return _read_single(path), 1
    raise SyncError(f"{path}: not an mbox file or an email message (expected a file starting "
                    "with 'From ' or with mail headers, a Maildir or a folder of .eml files)")


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        is_maildir = {"cur", "new"} <= set(dirs)
        dirs[:] = sorted(d for d in dirs if not (d == "tmp" and is_maildir)
                         and d not in (".git", ".kenning", ".notmuch"))
        for name in sorted(names):
            if name.startswith(".") and name.endswith(".tmp"):
                continue
            yield here / name


def _folder_label(root: Path, file: Path) -> str | None:
    parts = list(file.parent.relative_to(root).parts)
    if parts and parts[-1] in ("cur", "new"):
        parts.pop()
    parts = [p.lstrip(".") for p in parts if p.lstrip(".")]
    return "/".join(parts) or None


def _read_folder(root: Path, files: list[Path], report: SyncReport) -> Iterator[RawMessage]:
    from kenning.sources.email import RawMessage

    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            report.warn(str(file), f"cannot read ({exc.strerror or exc})")
            continue
        if data.startswith(b"From "):
            try:
                box = mailbox.mbox(str(file), create=False)
                keys = list(box.keys())
            except (OSError, mailbox.Error) as exc:
                report.warn(str(file), f"cannot read as mbox ({exc})")
                continue
            label = "/".join(p for p in [_folder_label(root, file), file.stem] if p)
            yield from _read_mbox(file, box, keys, report, label)
            continue
        if not looks_like_message(data[:SNIFF]):
            continue
        when = _MAILDIR_TIME.match(file.name)
        internal = datetime.fromtimestamp(int(when.group(1)), UTC) if when else None
        yield RawMessage(data, str(file), folder=_folder_label(root, file),
                         internal_date=internal)


def _read_single(path: Path) -> Iterator[RawMessage]:
    from kenning.sources.email import RawMessage

    yield RawMessage(path.read_bytes(), str(path))


# The first line of a message: a header field ("Name: value"), RFC 5322 field-name characters.
_HEADER_LINE = re.compile(rb"[!-9;-~]+[ \t]*:")


def _mbox_message(pending: list[Any], label: str | None, report: SyncReport) -> RawMessage:
    from kenning.sources.email import RawMessage

    from_line, data, where, joined = pending
    if joined:
        report.warn(where, f"{joined} body line(s) starting with 'From ' (not escaped as "
                           "'>From ') were read as part of this message, not as new ones")
    # mbox writers escape body lines starting with "From " as ">From " (mboxrd: one more ">"
    # per level); undo one level so they are not mistaken for quotes.
    data = _FROM_ESCAPE.sub(rb"\1", data)
    internal = parse_mbox_from_line(from_line.decode("ascii", "replace"))
    return RawMessage(data, where, folder=label, internal_date=internal)


def _read_mbox(path: Path, box: mailbox.mbox, keys: list[str], report: SyncReport,
               label: str | None) -> Iterator[RawMessage]:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 1))
            ends_cleanly = size == 0 or fh.read(1) == b"\n"
    except OSError:
        ends_cleanly = True
    pending: list[Any] | None = None  # [from line, bytes, where, lines joined] not yet out
    number = 0
    try:
        for key in keys:
            try:
                data = box.get_bytes(key, from_=True)
            except (OSError, KeyError, mailbox.Error) as exc:
                report.warn(f"{path}#message {number + 1}", f"cannot read ({exc})")
                continue
            from_line, _, data = data.partition(b"\n")
            if pending is not None and not _HEADER_LINE.match(data):
                # Not a message: a body line starting with "From " that its writer did not
                # escape as ">From ". It and what follows belong to the message before.
                body = pending[1]
                pending[1] = body + (b"" if body.endswith(b"\n") else b"\n") + from_line + \
                    b"\n" + data
                pending[3] += 1
                continue
            if pending is not None:
                yield _mbox_message(pending, label, report)
            number += 1
            pending = [from_line, data, f"{path}#message {number}", 0]
        if pending is not None:
            if not ends_cleanly:
                report.warn(pending[2], "the mbox ends in the middle of a line: this last "
                                        "message looks truncated; what is there was kept")
            yield _mbox_message(pending, label, report)
    finally:
        box.close()
