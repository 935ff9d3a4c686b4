"""IMAP into ``sources/email/``: ``kenning sync email imap[s]://user@host[:port][/FOLDER]``.

The reader fetches messages and hands them, as :class:`~kenning.sources.email.RawMessage`, to the
email connector's :func:`~kenning.sources.email.ingest` (parsing, threading, writing). It owns:

- **The URL.** ``imaps://`` is implicit TLS (port 993, certificate and host name verified against
  the system's trust store; ``SSL_CERT_FILE`` points it elsewhere). ``imap://`` (port 143) is
  upgraded with STARTTLS, which is *required* unless the host is loopback (``localhost``,
  ``127.0.0.0/8``, ``::1``): the password is never sent in the clear over a network. The user may
  be URL-encoded (``alex%40gmail.com``); a password in the URL is refused, since URLs end up in
  logs and warnings.
- **The password.** From the environment variable named by ``password_env``
  (``KENNING_IMAP_PASSWORD`` by default), else from the OS keyring (optional extra
  ``kenning[keyring]``; service ``kenning-imap``, user ``user@host``). It is never written to the
  vault, the sync state or a warning.
- **Folders.** The URL's folder and every ``--folder``; INBOX when none is named. Each folder is
  opened read-only (EXAMINE) and messages are fetched with ``BODY.PEEK[]``: nothing is marked
  read. With the server capability ``X-GM-EXT-1`` (Gmail) the ``X-GM-LABELS`` are fetched too.
- **Incremental state.** Per account (``user@host``) and folder, the folder's UIDVALIDITY and the
  highest UID written, in ``.kenning/sync/imap.json`` (``cursors.accounts``). Only UIDs above it
  are fetched. A changed UIDVALIDITY (the server renumbered the folder) means the folder is read
  again; the thread files do not grow, since the writer skips message ids it already has.
- **Batches.** At most :data:`BATCH` messages (and about :data:`BATCH_BYTES` bytes) per FETCH.
  Fetched messages are written every :data:`WRITE_EVERY` messages (or :data:`WRITE_BYTES`), at
  the end of each folder, and when the connection drops; the folder's cursor is saved right
  after each write. So a dropped connection keeps every message fetched whole, gives one
  warning, and the next sync continues from there; a killed process loses at most one write's
  worth of fetching, never a file.
"""

from __future__ import annotations

import contextlib
import imaplib
import ipaddress
import os
import re
import socket
import ssl
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from kenning.sources.owner import Owner
from kenning.sources.store import Progress, SourceStore, SyncError, SyncReport

CONNECTOR = "imap"
KEYRING_SERVICE = "kenning-imap"
BATCH = 100  # messages per FETCH of BODY.PEEK[]
BATCH_BYTES = 25 * 1024 * 1024  # … and about this many bytes, by RFC822.SIZE
WRITE_EVERY = 1000  # messages fetched before they are written and the cursor saved
WRITE_BYTES = 100 * 1024 * 1024  # … or this many bytes held in memory
SIZE_CHUNK = 1000  # UIDs per FETCH of RFC822.SIZE (keeps command lines short)
TIMEOUT = 60.0  # seconds without an answer before the connection counts as lost
DEFAULT_PORTS = {"imap": 143, "imaps": 993}


@dataclass(frozen=True)
class ImapTarget:
    """A parsed ``imap[s]://user@host[:port][/FOLDER]``."""

    scheme: str
    user: str
    host: str
    port: int
    folder: str | None = None

    @property
    def secure(self) -> bool:
        return self.scheme == "imaps"

    @property
    def account(self) -> str:
        """``user@host``: the keyring user name and the key of this account's cursors."""
        return f"{self.user}@{self.host}"

    @property
    def label(self) -> str:
        """The URL without folder, for messages (there is never a password in it)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{quote(self.user, safe='')}@{host}{port}"

    @property
    def loopback(self) -> bool:
        if self.host == "localhost" or self.host.endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_target(target: str) -> ImapTarget:
    """Parse an IMAP URL; a clear :class:`SyncError` when it is not one we can use."""
    shown = target.split("@", 1)[-1] if "@" in target else target
    try:
        parts = urlsplit(target)
        port = parts.port
    except ValueError as exc:
        raise SyncError(f"{shown}: not an IMAP URL ({exc}); expected "
                        "imap[s]://user@host[:port][/FOLDER]") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise SyncError(f"{target}: not an IMAP URL; expected imap[s]://user@host[:port][/FOLDER]")
    if parts.password is not None:
        raise SyncError(f"{scheme}://…@{parts.hostname}: do not put the password in the URL; "
                        "set it in the environment (KENNING_IMAP_PASSWORD) or the OS keyring")
    if not parts.username or not parts.hostname:
        raise SyncError(f"{target}: the URL needs a user and a host: "
                        "imap[s]://user@host[:port][/FOLDER] (user URL-encoded: alex%40gmail.com)")
    folder = unquote(parts.path.lstrip("/")) or None
    return ImapTarget(scheme, unquote(parts.username), parts.hostname,
                      port or DEFAULT_PORTS[scheme], folder)


def password_for(target: ImapTarget, password_env: str) -> str:
    """The password from ``$password_env``, else the OS keyring; a one-line error otherwise."""
    value = os.environ.get(password_env)
    if value:
        return value
    where = (f"the OS keyring entry (service '{KEYRING_SERVICE}', user '{target.account}')")
    try:
        import keyring
    except ImportError:
        raise SyncError(f"{target.label}: no password: set the environment variable "
                        f"{password_env}, or install kenning[keyring] and store it in {where}"
                        ) from None
    note = ""
    try:
        value = keyring.get_password(KEYRING_SERVICE, target.account)
    except Exception as exc:  # keyring.errors.KeyringError, or whatever a backend raises
        # (D-Bus, Keychain and Credential Manager errors are not always KeyringErrors).
        value, note = None, f" (the OS keyring could not be read: {type(exc).__name__})"
    if value:
        return value
    raise SyncError(f"{target.label}: no password: set the environment variable {password_env} "
                    f"or store it in {where}, e.g. `keyring set {KEYRING_SERVICE} "
                    f"{target.account}`{note}")


def connect(target: ImapTarget, password: str, *, timeout: float = TIMEOUT) -> Any:
    """A logged-in :class:`imapclient.IMAPClient` (TLS as described in the module docstring)."""
    from imapclient import IMAPClient
    from imapclient.exceptions import IMAPClientError, LoginError

    context = ssl.create_default_context()
    try:
        client = IMAPClient(target.host, port=target.port, ssl=target.secure,
                            ssl_context=context if target.secure else None, timeout=timeout)
    except ssl.SSLCertVerificationError as exc:
        raise SyncError(f"{target.label}: the server's TLS certificate is not trusted "
                        f"({exc.verify_message})") from None
    except (OSError, IMAPClientError) as exc:
        raise SyncError(f"{target.label}: cannot connect ({_reason(exc)})") from None
    try:
        if not target.secure and not target.loopback:
            if b"STARTTLS" not in client.capabilities():
                raise SyncError(f"{target.label}: the server does not offer STARTTLS; refusing "
                                "to send the password unencrypted (use imaps:// instead)")
            client.starttls(context)
        client.login(target.user, password)
        client.normalise_times = False  # INTERNALDATE with its zone, not naive local time
    except SyncError:
        _close(client)
        raise
    except ssl.SSLCertVerificationError as exc:
        _close(client)
        raise SyncError(f"{target.label}: the server's TLS certificate is not trusted "
                        f"({exc.verify_message})") from None
    except LoginError as exc:
        _close(client)
        raise SyncError(f"{target.label}: login as {target.user} failed ({_reason(exc)})"
                        ) from None
    except (OSError, IMAPClientError) as exc:
        _close(client)
        raise SyncError(f"{target.label}: cannot log in ({_reason(exc)})") from None
    return client


def sync(root: Path, target: str, *, progress: Progress | None = None,
         folders: list[str] | None = None, password_env: str = "KENNING_IMAP_PASSWORD",
         batch_size: int = BATCH) -> SyncReport:
    """Fetch the new messages of each folder and write them as thread files."""
    parsed = parse_target(target)
    password = password_for(parsed, password_env)
    names = list(dict.fromkeys([*([parsed.folder] if parsed.folder else []), *(folders or [])]))
    owner = Owner.load(root)
    report = SyncReport(CONNECTOR)
    client = connect(parsed, password)
    del password
    try:
        with SourceStore(root, CONNECTOR) as store:
            if store.load_warning:
                report.warnings.append(store.load_warning)
            _Reader(client, parsed, store, report, owner, progress,
                    max(1, batch_size)).run(names or ["INBOX"])
    finally:
        _close(client)
    return report


# Errors that mean the connection is gone (imaplib's abort is a subclass of its error).
_LOST: tuple[type[BaseException], ...] = (imaplib.IMAP4.abort, OSError, EOFError)


class _Lost(Exception):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(_reason(cause))


@dataclass
class _Plan:
    folder: str
    uidvalidity: int
    uids: list[int]


class _Reader:
    def __init__(self, client: Any, target: ImapTarget, store: SourceStore, report: SyncReport,
                 owner: Owner, progress: Progress | None, batch_size: int) -> None:
        self.client = client
        self.target = target
        self.store = store
        self.report = report
        self.owner = owner
        self.progress = progress
        self.batch_size = batch_size
        accounts = store.cursors.setdefault("accounts", {})
        self.cursors: dict[str, dict[str, int]] = accounts.setdefault(target.account, {})
        self.gmail = False
        self.total = 0
        self.landed = 0  # UIDs of the current folder written (or found expunged)

    def where(self, folder: str) -> str:
        return f"{self.target.label}/{folder}"

    def run(self, folders: list[str]) -> None:
        folder = folders[0]
        plans: list[_Plan] = []
        try:
            self.gmail = b"X-GM-EXT-1" in self._call(self.client.capabilities)
            for folder in folders:
                plan = self._plan(folder)
                if plan is not None:
                    plans.append(plan)
            self.total = sum(len(p.uids) for p in plans)
            if self.progress:
                self.progress(0, self.total, "")
            for plan in plans:
                folder, self.landed = plan.folder, 0
                self._fetch(plan)
        except _Lost as exc:
            pending = next((len(p.uids) for p in plans if p.folder == folder), None)
            count = f" after {self.landed} of {pending} messages" if pending else ""
            self.report.warn(self.target.label,
                             f"connection lost{count} in {folder} ({exc}); "
                             "run sync again to continue")

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except _LOST as exc:
            raise _Lost(exc) from exc

    def _select(self, folder: str) -> dict[bytes, Any] | None:
        from imapclient.exceptions import IMAPClientError

        try:
            return self._call(self.client.select_folder, folder, readonly=True)
        except IMAPClientError as exc:
            self.report.warn(self.where(folder), f"cannot open the folder ({_reason(exc)}); "
                                                 "skipped")
            return None

    def _plan(self, folder: str) -> _Plan | None:
        """Select ``folder`` and list the UIDs above its cursor."""
        info = self._select(folder)
        if info is None:
            return None
        uidvalidity = int(info.get(b"UIDVALIDITY") or 0)
        cursor = self.cursors.get(folder)
        last = 0
        if cursor and int(cursor.get("uidvalidity", -1)) == uidvalidity:
            last = int(cursor.get("uid", 0))
        elif cursor:
            self.report.warn(self.where(folder),
                             f"UIDVALIDITY changed ({cursor.get('uidvalidity')} → {uidvalidity}): "
                             "the server renumbered the folder, so it is read again (messages "
                             "already in the vault are not written twice)")
        if not cursor or last == 0:
            self.cursors[folder] = {"uidvalidity": uidvalidity, "uid": 0}
        uidnext = info.get(b"UIDNEXT")
        if not int(info.get(b"EXISTS") or 0) or (uidnext is not None and int(uidnext) <= last + 1):
            return _Plan(folder, uidvalidity, [])
        found = self._call(self.client.search, ["UID", f"{last + 1}:*"])
        # "n:*" always matches the last message, even when its UID is below n.
        return _Plan(folder, uidvalidity, sorted(int(u) for u in found if int(u) > last))

    def _fetch(self, plan: _Plan) -> None:
        """Fetch ``plan``'s messages in batches; write them every :data:`WRITE_EVERY`, at the
        end, and — when the connection drops — what was fetched before it did."""
        from imapclient.exceptions import IMAPClientError

        from kenning.sources.email import RawMessage

        if not plan.uids:
            return
        info = self._select(plan.folder)
        if info is None:
            return
        if int(info.get(b"UIDVALIDITY") or 0) != plan.uidvalidity:
            self.report.warn(self.where(plan.folder), "UIDVALIDITY changed during the sync; "
                                                      "run sync again to read the folder anew")
            return
        items = [b"BODY.PEEK[]", b"INTERNALDATE", *([b"X-GM-LABELS"] if self.gmail else [])]
        pending: list[Any] = []
        held = 0
        fetched: int | None = None  # the highest UID fetched
        written: int | None = None  # … and written
        try:
            for batch in self._batches(plan.uids):
                try:
                    response = self._call(self.client.fetch, batch, items)
                except IMAPClientError as exc:
                    self.report.warn(self.where(plan.folder),
                                     f"FETCH of UIDs {batch[0]}–{batch[-1]} failed "
                                     f"({_reason(exc)}); run sync again to retry")
                    break
                for uid in batch:
                    data = response.get(uid, {})
                    body = data.get(b"BODY[]")
                    if body is None:
                        continue  # expunged since the listing
                    when = data.get(b"INTERNALDATE")
                    labels = tuple(_label(v) for v in data.get(b"X-GM-LABELS") or ())
                    pending.append(RawMessage(
                        bytes(body), f"{plan.folder} uid {uid}", folder=plan.folder,
                        labels=labels, internal_date=when if isinstance(when, datetime) else None))
                    held += len(body)
                fetched = batch[-1]
                if len(pending) >= WRITE_EVERY or held >= WRITE_BYTES:
                    self._write(plan, pending, fetched)
                    pending, held, written = [], 0, fetched
        except _Lost:
            if fetched is not None and fetched != written:
                self._write(plan, pending, fetched)
            raise
        if fetched is not None and fetched != written:
            self._write(plan, pending, fetched)

    def _write(self, plan: _Plan, messages: list[Any], upto: int) -> None:
        """Hand fetched messages to the email writer, then move the folder's cursor."""
        from kenning.sources.email import ingest

        if messages:
            ingest(self.store, messages, self.report, owner=self.owner, progress=self.progress,
                   total=self.total)
        self.cursors[plan.folder] = {"uidvalidity": plan.uidvalidity, "uid": upto}
        self.store.save()
        self.landed = bisect_right(plan.uids, upto)

    def _batches(self, uids: list[int]) -> Iterator[list[int]]:
        """Up to ``batch_size`` UIDs and about :data:`BATCH_BYTES` per batch."""
        for start in range(0, len(uids), SIZE_CHUNK):
            chunk = uids[start:start + SIZE_CHUNK]
            sizes = self._call(self.client.fetch, chunk, [b"RFC822.SIZE"])
            batch: list[int] = []
            held = 0
            for uid in chunk:
                if uid not in sizes:
                    continue  # expunged since the listing
                size = int(sizes[uid].get(b"RFC822.SIZE") or 0)
                if batch and (len(batch) >= self.batch_size or held + size > BATCH_BYTES):
                    yield batch
                    batch, held = [], 0
                batch.append(uid)
                held += size
            if batch:
                yield batch


def _label(value: Any) -> str:
    """A Gmail label as text: modified UTF-7 decoded, system labels without the backslash."""
    from imapclient.imap_utf7 import decode

    text = decode(value) if isinstance(value, bytes) else str(value)
    return text[1:] if text.startswith("\\") else text


def _reason(exc: BaseException) -> str:
    """An exception as one short line (imaplib wraps server text in bytes reprs)."""
    if isinstance(exc, socket.timeout):
        return "timed out"
    text = " ".join(str(exc).split())
    for prefix in ("b'", 'b"'):
        if text.startswith(prefix) and text.endswith(prefix[-1]):
            text = text[2:-1]
    # Dovecot appends timings to its answers: "… (0.001 + 0.000 secs)."
    text = re.sub(r"\s*\([\d.+ ]+ secs\)\.?$", "", text)
    return text or type(exc).__name__


def _close(client: Any) -> None:
    from imapclient.exceptions import IMAPClientError

    try:
        client.logout()
    except (IMAPClientError, OSError, EOFError):
        with contextlib.suppress(IMAPClientError, OSError, EOFError):
            client.shutdown()
