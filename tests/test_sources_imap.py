"""The IMAP connector against a real Dovecot on loopback (tests/dovecot.py): incremental by
UIDVALIDITY + UID, a dropped connection, passwords from the environment or the keyring and never
in the vault, TLS with a certificate the test trusts."""

from __future__ import annotations

import contextlib
import json
import mailbox
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from dovecot import Dovecot, local_address, running_dovecot

from kenning.api import Vault
from kenning.cli import main
from kenning.sources.email import imap
from kenning.sources.store import SyncError
from kenning.vault import frontmatter

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
ENV = "KENNING_IMAP_PASSWORD"


@pytest.fixture
def dovecot() -> Iterator[Dovecot]:
    with running_dovecot() as server:
        yield server


@pytest.fixture
def null_keyring() -> Iterator[None]:
    """The OS keyring, if the package is there, answers "no password" during the test."""
    try:
        import keyring
        from keyring.backends.null import Keyring as NullKeyring
    except ImportError:
        yield
        return
    before = keyring.get_keyring()
    keyring.set_keyring(NullKeyring())
    yield
    keyring.set_keyring(before)


def message(n: int, *, subject: str | None = None, reply_to: int | None = None,
            sender: str = "Sarah Chen <sarah@techflow.io>") -> bytes:
    """A small RFC 822 message with Message-ID <n@techflow.io>, optionally a reply to another."""
    subject = subject or f"Pilot plan, part {n}"
    headers = [f"From: {sender}", "To: Alex Morgan <alex@example.org>",
               f"Subject: {'Re: ' if reply_to else ''}{subject}",
               f"Date: Mon, {2 + n % 20} Mar 2026 10:{n % 60:02d}:00 +0000",
               f"Message-ID: <{n}@techflow.io>"]
    if reply_to:
        headers += [f"In-Reply-To: <{reply_to}@techflow.io>",
                    f"References: <{reply_to}@techflow.io>"]
    body = f"Hello Alex,\r\n\r\nNote number {n} about the pilot.\r\n\r\nSarah\r\n"
    return ("\r\n".join(headers) + "\r\n\r\n" + body).encode()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted((root / "sources").rglob("*")) if p.is_file()}


def message_ids(root: Path, *, copies: bool = False) -> list[str]:
    """Every message id recorded in the email thread files' frontmatter (with repeats), and with
    ``copies`` the ids of copies kept once (``copy_ids``: the same message under another id)."""
    found: list[str] = []
    for path in sorted((root / "sources" / "email").glob("*.md")):
        data = frontmatter.to_plain(frontmatter.read(path.read_text(encoding="utf-8")).data)
        found += [str(m) for m in data.get("message_ids") or []]
        found += [str(m) for m in data.get("copy_ids") or []] if copies else []
    return found


def cursor(root: Path, folder: str = "INBOX") -> dict[str, int]:
    state = json.loads((root / ".kenning" / "sync" / "imap.json").read_text())
    (account,) = state["cursors"]["accounts"].values()
    return account[folder]


def cli_sync(root: Path, url: str, *args: str) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", "email", url, *args, "--json"])
    data = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, data, result.output


# -- the URL and the password ------------------------------------------------------------------


def test_url_forms() -> None:
    gmail = imap.parse_target("imaps://alex%40gmail.com@imap.gmail.com/%5BGmail%5D/All%20Mail")
    assert (gmail.user, gmail.host, gmail.port, gmail.folder) == (
        "alex@gmail.com", "imap.gmail.com", 993, "[Gmail]/All Mail")
    assert gmail.account == "alex@gmail.com@imap.gmail.com" and not gmail.loopback
    assert gmail.label == "imaps://alex%40gmail.com@imap.gmail.com"
    local = imap.parse_target("imap://bo@127.0.0.1:1143")
    assert (local.port, local.folder, local.loopback) == (1143, None, True)
    assert imap.parse_target("imap://bo@localhost").port == 143
    assert imap.parse_target("imap://bo@[::1]:1143").loopback
    with pytest.raises(SyncError, match="do not put the password in the URL") as err:
        imap.parse_target("imaps://bo:hunter2@mail.example.org")
    assert "hunter2" not in str(err.value)
    with pytest.raises(SyncError, match="needs a user and a host"):
        imap.parse_target("imaps://mail.example.org")


def test_missing_password_is_one_clear_line(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                            null_keyring: None) -> None:
    monkeypatch.delenv(ENV, raising=False)
    code, _, output = cli_sync(vault.root, "imaps://alex%40example.org@127.0.0.1:9")
    assert code == 1
    assert "Traceback" not in output
    (line,) = [x for x in output.splitlines() if x.strip()]
    assert line.startswith("error: imaps://alex%40example.org@127.0.0.1:9: no password")
    assert ENV in line and "'kenning-imap'" in line and "'alex@example.org@127.0.0.1'" in line
    assert not (vault.root / "sources" / "email").exists()


def test_password_from_keyring(vault: Vault, dovecot: Dovecot,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    keyring = pytest.importorskip("keyring")
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.items: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.items.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.items[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.items.pop((service, username), None)

    before = keyring.get_keyring()
    memory = Memory()
    memory.set_password("kenning-imap", f"{dovecot.user}@127.0.0.1", dovecot.password)
    keyring.set_keyring(memory)
    try:
        monkeypatch.delenv(ENV, raising=False)
        dovecot.append([message(1)])
        code, data, output = cli_sync(vault.root, dovecot.url())
    finally:
        keyring.set_keyring(before)
    assert code == 0, output
    assert data is not None and data["items_read"] == 1 and data["created"] == 1


def test_wrong_password_fails_cleanly(vault: Vault, dovecot: Dovecot,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "not-the-password")
    code, _, output = cli_sync(vault.root, dovecot.url())
    assert code == 1 and "Traceback" not in output
    assert "login as alex@example.org failed" in output and "not-the-password" not in output


# -- incremental sync ----------------------------------------------------------------------------


def test_only_new_uids_are_fetched_and_resync_changes_nothing(
        vault: Vault, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, dovecot.password)
    root = vault.root
    dovecot.append([message(1), message(2, reply_to=1), message(3, subject="Invoice")])
    code, first, output = cli_sync(root, dovecot.url())
    assert code == 0, output
    assert first is not None and first["items_read"] == 3 and first["warnings"] == []
    assert cursor(root)["uid"] == 3
    assert sorted(message_ids(root)) == [f"{n}@techflow.io" for n in (1, 2, 3)]

    # Two more arrive: a reply into the first thread and a new thread.
    dovecot.append([message(4, reply_to=2), message(5, subject="Offsite")])
    code, second, output = cli_sync(root, dovecot.url())
    assert code == 0, output
    assert second is not None and second["items_read"] == 2  # only UIDs 4 and 5 were fetched
    assert second["created"] == 1 and second["appended"] == 1
    assert cursor(root)["uid"] == 5
    ids = message_ids(root)
    assert sorted(ids) == [f"{n}@techflow.io" for n in range(1, 6)]  # each once
    assert len(list((root / "sources" / "email").glob("*.md"))) == 3

    # Nothing new: no byte and no mtime under sources/ changes, nothing is fetched.
    before = snapshot(root)
    code, third, output = cli_sync(root, dovecot.url())
    assert code == 0, output
    assert third is not None and third["items_read"] == 0 and third["entries_added"] == 0
    assert snapshot(root) == before

    # Read-only: nothing was marked \Seen on the server.
    client = dovecot.client()
    try:
        client.select_folder("INBOX", readonly=True)
        flags = client.get_flags(client.search("ALL"))
    finally:
        client.logout()
    assert len(flags) == 5 and not any(b"\\Seen" in f for f in flags.values())

    # The password is nowhere in the vault (sources, state, config) nor in the output.
    assert dovecot.password not in output
    secret = dovecot.password.encode()
    assert not [p for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


def test_changed_uidvalidity_reads_the_folder_again(
        vault: Vault, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, dovecot.password)
    root = vault.root
    dovecot.append([message(1), message(2, reply_to=1)], folder="Projects")
    code, first, output = cli_sync(root, dovecot.url(), "--folder", "Projects")
    assert code == 0 and first is not None and first["items_read"] == 2, output
    old = cursor(root, "Projects")

    # The folder is deleted and made again: the server gives it a new UIDVALIDITY.
    client = dovecot.client()
    try:
        client.delete_folder("Projects")
    finally:
        client.logout()
    dovecot.append([message(1), message(2, reply_to=1), message(3, reply_to=2)],
                   folder="Projects")
    code, second, output = cli_sync(root, dovecot.url("Projects"))
    assert code == 0, output
    new = cursor(root, "Projects")
    assert new["uidvalidity"] != old["uidvalidity"] and new["uid"] == 3
    assert second is not None and second["items_read"] == 3  # the whole folder again …
    assert second["entries_added"] == 1  # … but only message 3 is new to the vault
    (warning,) = second["warnings"]
    assert "Projects: UIDVALIDITY changed" in warning and "read again" in warning
    assert sorted(message_ids(root)) == [f"{n}@techflow.io" for n in (1, 2, 3)]


def test_a_missing_folder_warns_and_the_others_land(
        vault: Vault, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, dovecot.password)
    dovecot.append([message(1), message(2)])
    dovecot.append([message(3)], folder="Clients/Été")  # a modified UTF-7 folder name
    code, data, output = cli_sync(vault.root, dovecot.url(), "--folder", "INBOX",
                                  "--folder", "Nope", "--folder", "Clients/Été")
    assert code == 0, output
    assert data is not None and data["items_read"] == 3
    (warning,) = data["warnings"]
    assert warning.startswith("imap://alex%40example.org@127.0.0.1:") and "/Nope: " in warning
    assert "cannot open the folder" in warning and "doesn't exist" in warning
    assert cursor(vault.root, "Clients/Été")["uid"] == 1


def test_gmail_labels_are_text() -> None:
    assert imap._label(b"\\Important") == "Important"
    assert imap._label(b"Clients/&AMk-t&AOk-") == "Clients/Été"
    assert imap._label("Work") == "Work"


# -- a connection dropped mid-fetch --------------------------------------------------------------


class CuttingProxy:
    """A TCP proxy in front of Dovecot for one connection: it forwards the server's answers
    until the ``keep``-th message body, then closes both sides in the middle of the next one
    (``keep=None``: never). It listens on ``host`` (loopback unless told otherwise)."""

    MARKER = b"BODY[] {"

    def __init__(self, upstream_port: int, keep: int | None = None,
                 host: str = "127.0.0.1") -> None:
        self.upstream_port = upstream_port
        self.keep = keep
        self.cut = False
        self.listener = socket.create_server((host, 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            client, _ = self.listener.accept()
        except OSError:
            return
        server = socket.create_connection(("127.0.0.1", self.upstream_port))
        threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
        self._pump_down(server, client)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass

    def _pump_down(self, server: socket.socket, client: socket.socket) -> None:
        seen, tail = 0, b""
        try:
            while chunk := server.recv(65536):
                window, start, cut = tail + chunk, 0, None
                while (i := window.find(self.MARKER, start)) >= 0:
                    if i + len(self.MARKER) > len(tail):  # not counted with the last chunk
                        seen += 1
                        if self.keep is not None and seen > self.keep:
                            cut = max(0, i - len(tail)) + len(self.MARKER) + 3
                            break
                    start = i + 1
                if cut is not None:
                    client.sendall(chunk[:cut])
                    self.cut = True
                    break
                client.sendall(chunk)
                tail = window[-len(self.MARKER):]
        except OSError:
            pass
        for sock in (client, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.listener.close()


def test_connection_lost_mid_fetch_keeps_what_landed(
        vault: Vault, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, dovecot.password)
    root = vault.root
    dovecot.append([message(n) for n in range(1, 11)])
    proxy = CuttingProxy(dovecot.port, keep=4)  # batches of 3: the second batch breaks
    try:
        url = f"imap://{dovecot.url().split('://', 1)[1].split('@')[0]}@127.0.0.1:{proxy.port}"
        report = imap.sync(root, url, batch_size=3)
    finally:
        proxy.close()
    assert proxy.cut
    (warning,) = report.warnings
    assert warning.startswith(f"imap://alex%40example.org@127.0.0.1:{proxy.port}: "
                              "connection lost after 3 of 10 messages in INBOX")
    assert warning.endswith("run sync again to continue")
    assert report.items_read == 3 and len(message_ids(root)) == 3
    assert cursor(root)["uid"] == 3

    # The next sync (here straight to the server) continues from UID 4, with progress.
    calls: list[tuple[int, int | None, str]] = []
    again = imap.sync(root, dovecot.url(), batch_size=3,
                      progress=lambda done, total, item: calls.append((done, total, item)))
    assert again.warnings == [] and again.items_read == 7
    assert calls[0] == (0, 7, "") and calls[-1] == (7, 7, "INBOX uid 10")
    assert sorted(message_ids(root)) == sorted(f"{n}@techflow.io" for n in range(1, 11))
    assert cursor(root)["uid"] == 10


# -- TLS -----------------------------------------------------------------------------------------


def test_imaps_verifies_the_certificate(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    with running_dovecot(tls=True) as server:
        monkeypatch.setenv(ENV, server.password)
        server.append([message(1)])
        url = server.url(scheme="imaps")
        # Not trusted yet: a clear error, nothing written.
        monkeypatch.setenv("SSL_CERT_FILE", str(vault.root / "no-such-bundle.pem"))
        code, _, output = cli_sync(vault.root, url)
        assert code == 1 and "Traceback" not in output
        assert "TLS certificate is not trusted" in output
        # Trusted through SSL_CERT_FILE: the sync goes through TLS.
        assert server.cert is not None
        monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
        code, data, output = cli_sync(vault.root, url)
        log = server.log()
    assert code == 0, output
    assert data is not None and data["items_read"] == 1 and data["created"] == 1
    assert ", TLS, session=" in log  # Dovecot logs how each login came in


@pytest.fixture
def off_loopback() -> str:
    address = local_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to test STARTTLS through")
    return address


def test_plain_imap_off_loopback_needs_starttls(
        vault: Vault, dovecot: Dovecot, off_loopback: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server reached over a network that offers no STARTTLS never sees the password."""
    monkeypatch.setenv(ENV, dovecot.password)
    proxy = CuttingProxy(dovecot.port, host=off_loopback)
    try:
        code, _, output = cli_sync(vault.root, f"imap://bo@{off_loopback}:{proxy.port}")
    finally:
        proxy.close()
    assert code == 1 and "Traceback" not in output
    assert "does not offer STARTTLS; refusing to send the password unencrypted" in output
    assert "Login:" not in dovecot.log() and "auth failed" not in dovecot.log()


def test_plain_imap_off_loopback_upgrades_with_starttls(
        vault: Vault, off_loopback: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with running_dovecot(tls=True) as server:
        assert server.cert is not None
        monkeypatch.setenv(ENV, server.password)
        monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
        server.append([message(1)])
        proxy = CuttingProxy(server.port, host=off_loopback)
        try:
            user = server.url().split("://", 1)[1].split("@127.0.0.1")[0]
            code, data, output = cli_sync(vault.root,
                                          f"imap://{user}@{off_loopback}:{proxy.port}")
        finally:
            proxy.close()
        log = server.log()
    assert code == 0, output
    assert data is not None and data["items_read"] == 1
    assert ", TLS, session=" in log  # the login came after STARTTLS


# -- real data -----------------------------------------------------------------------------------


def test_enron_messages_through_imap(vault: Vault, dovecot: Dovecot,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = EVAL / "enron" / "enron_with_categories.mbox"
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives in ../shared/eval)")
    monkeypatch.setenv(ENV, dovecot.password)
    box = mailbox.mbox(str(path), create=False)
    raw = [box.get_bytes(key) for key in list(box.keys())[:120]]
    dovecot.append(raw)
    code, data, output = cli_sync(vault.root, dovecot.url())
    assert code == 0, output
    assert data is not None and data["items_read"] == 120  # two FETCH batches of BODY.PEEK[]
    assert cursor(vault.root)["uid"] == 120
    ids = message_ids(vault.root)
    assert len(ids) == len(set(ids)) == data["entries_added"] == 120 - data["copies"]
    every = message_ids(vault.root, copies=True)  # messages in = out, copies kept once
    assert len(every) == len(set(every)) == 120
