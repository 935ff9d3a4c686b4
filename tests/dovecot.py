"""A throwaway Dovecot IMAP server on loopback, for the IMAP connector's tests.

Everything lives in one temporary folder: the config, base_dir (sockets), state_dir, the log, a
passwd-file with one user and a Maildir per user. The server listens on 127.0.0.1 only, on a
free port, runs in the foreground (``dovecot -F -c conf``) and is stopped at teardown. Plain IMAP
by default; ``tls=True`` also opens an implicit-TLS port with a self-signed certificate for
127.0.0.1 and this machine's own address (made with the ``openssl`` command) that a test can
trust through ``SSL_CERT_FILE``; the plain port then offers STARTTLS.

As root, ``first_valid_uid = 0`` is set and the Maildirs belong to ``nobody``: Dovecot refuses
uid 0 for mail access even then ("userdb returned 0 as uid"). The server is stopped by killing
its process group (a clean SIGTERM costs a second per test).

Tests skip cleanly when the ``dovecot`` binary is absent (``.ci/run`` installs Debian's
``dovecot-imapd``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "alex@example.org"
PASSWORD = "s3cret-Pa55-for-tests"


def dovecot_binary() -> str | None:
    for candidate in (shutil.which("dovecot"), "/usr/sbin/dovecot"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Dovecot:
    """A running server: where it listens and how to log in."""

    home: Path
    port: int
    process: subprocess.Popen[bytes]
    tls_port: int | None = None
    cert: Path | None = None
    user: str = USER
    password: str = PASSWORD

    def url(self, folder: str = "", *, scheme: str = "imap") -> str:
        from urllib.parse import quote

        port = self.tls_port if scheme == "imaps" else self.port
        path = "/" + quote(folder) if folder else ""
        return f"{scheme}://{quote(self.user, safe='')}@127.0.0.1:{port}{path}"

    def client(self):  # -> imapclient.IMAPClient, logged in
        from imapclient import IMAPClient

        client = IMAPClient("127.0.0.1", port=self.port, ssl=False, timeout=10)
        client.login(self.user, self.password)
        return client

    def append(self, messages: list[bytes], folder: str = "INBOX") -> None:
        client = self.client()
        try:
            if not client.folder_exists(folder):
                client.create_folder(folder)
            for data in messages:
                client.append(folder, data)
        finally:
            client.logout()

    def log(self) -> str:
        try:
            return (self.home / "dovecot.log").read_text(errors="replace")
        except OSError:
            return ""


def _mail_owner() -> tuple[int, int]:
    """Whose files the Maildirs are: Dovecot refuses uid 0 for mail, so as root "nobody"."""
    import pwd

    if os.getuid() != 0:
        return os.getuid(), os.getgid()
    nobody = pwd.getpwnam("nobody")
    return nobody.pw_uid, nobody.pw_gid


def _config(home: Path, port: int, tls_port: int | None, cert: Path | None) -> str:
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    mail_uid, mail_gid = _mail_owner()
    me = pwd.getpwuid(uid).pw_name
    # As root Dovecot drops privileges for its own processes to these users (the Debian package
    # creates them); as anyone else every process runs as the caller.
    internal = "dovecot" if uid == 0 and _user_exists("dovecot") else me
    login = "dovenull" if uid == 0 and _user_exists("dovenull") else me
    group = grp.getgrgid(gid).gr_name
    lines = [
        f"base_dir = {home}/run",
        f"state_dir = {home}/state",
        f"log_path = {home}/dovecot.log",
        f"info_log_path = {home}/dovecot.log",
        "listen = 127.0.0.1",
        "protocols = imap",
        "ssl = yes" if cert else "ssl = no",
        "disable_plaintext_auth = no",
        "auth_mechanisms = plain login",
        "auth_failure_delay = 0",  # a wrong password answers at once
        "mail_fsync = never",  # throwaway mail: no fsync per APPEND
        "first_valid_uid = 0",  # needed when the tests run as root
        "first_valid_gid = 0",
        f"default_internal_user = {internal}",
        f"default_internal_group = {group if internal == me else 'dovecot'}",
        f"default_login_user = {login}",
        f"mail_location = maildir:{home}/mail/%n",
        f"mail_uid = {mail_uid}",
        f"mail_gid = {mail_gid}",
        "namespace inbox {",  # "/" between folder levels, as Gmail and most servers show it
        "  inbox = yes",
        "  separator = /",
        "}",
        "passdb {",
        "  driver = passwd-file",
        f"  args = scheme=PLAIN username_format=%u {home}/passwd",
        "}",
        "userdb {",
        "  driver = static",
        f"  args = uid={mail_uid} gid={mail_gid} home={home}/home/%n",
        "}",
        "service imap-login {",
        "  chroot =",
        "  inet_listener imap {",
        "    address = 127.0.0.1",
        f"    port = {port}",
        "  }",
        "  inet_listener imaps {",
        "    address = 127.0.0.1",
        f"    port = {tls_port or 0}",
        "    ssl = yes",
        "  }",
        "}",
        "service anvil {",
        "  chroot =",
        "}",
        "service stats {",
        "  chroot =",
        "}",
    ]
    if cert:
        lines += [f"ssl_cert = <{cert}", f"ssl_key = <{cert.with_suffix('.key')}"]
    return "\n".join(lines) + "\n"


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def local_address() -> str | None:
    """This machine's own non-loopback IPv4 address, if it has one (no packet is sent)."""
    import ipaddress

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the outgoing interface
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if ipaddress.ip_address(address).is_loopback else address


def _self_signed(folder: Path) -> Path:
    """A certificate for 127.0.0.1 and this machine's own address."""
    openssl = shutil.which("openssl")
    if not openssl:
        pytest.skip("the openssl command is not installed (needed for a test certificate)")
    cert, key = folder / "cert.pem", folder / "cert.key"
    names = ",".join(f"IP:{a}" for a in ("127.0.0.1", local_address()) if a)
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", f"subjectAltName={names}",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert


def _wait_for_port(port: int, process: subprocess.Popen[bytes], home: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = (home / "dovecot.log").read_text(errors="replace") if (
                home / "dovecot.log").exists() else ""
            out = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"dovecot exited with {process.returncode}: {out}\n{log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.recv(64).startswith(b"* OK"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"dovecot did not answer on 127.0.0.1:{port}")


@contextmanager
def running_dovecot(*, tls: bool = False) -> Iterator[Dovecot]:
    """Start a throwaway Dovecot; skip the test when the binary is absent."""
    binary = dovecot_binary()
    if binary is None:
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd; .ci/run does it)")
    # A short path: unix socket paths under base_dir are limited to ~100 bytes.
    home = Path(tempfile.mkdtemp(prefix="kdv-"))
    try:
        os.chmod(home, 0o755)  # the login and internal users must reach base_dir
        for sub in ("run", "state", "mail", "home"):
            (home / sub).mkdir()
        mail_uid, mail_gid = _mail_owner()
        for sub in ("mail", "home"):
            os.chown(home / sub, mail_uid, mail_gid)
        (home / "passwd").write_text(f"{USER}:{{PLAIN}}{PASSWORD}\n")
        cert = _self_signed(home) if tls else None
        port = free_port()
        tls_port = free_port() if tls else None
        conf = home / "dovecot.conf"
        conf.write_text(_config(home, port, tls_port, cert))
        process = subprocess.Popen([binary, "-F", "-c", str(conf)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        try:
            _wait_for_port(port, process, home)
            yield Dovecot(home, port, process, tls_port, cert)
        finally:
            _stop(process)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and every process it started (they share its session and group)."""
    if process.poll() is None:
        # A clean SIGTERM costs a second per test (the master waits for its children); the
        # server's files are thrown away, so the whole group is killed at once.
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    for stream in (process.stdout, process.stderr):
        if stream:
            stream.close()
