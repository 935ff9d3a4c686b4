"""The email connector for files: mbox, Maildir, folders of messages → sources/email/ threads."""

from __future__ import annotations

import base64
import json
import mailbox
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.api import Vault
from kenning.cli import main
from kenning.sources.email import RawMessage, ingest
from kenning.sources.email.message import parse
from kenning.sources.email.quotes import split_message
from kenning.sources.owner import Owner
from kenning.sources.store import SourceStore, SyncReport
from kenning.vault import frontmatter

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
ENRON_MBOX = EVAL / "enron" / "enron_with_categories.mbox"
ENRON_DIR = EVAL / "enron" / "enron_with_categories"
NOTMUCH = EVAL / "email_fixtures" / "notmuch" / "corpora"


# -- helpers ---------------------------------------------------------------------------------


def _sync(root: Path, target: Path | str) -> dict:
    result = CliRunner().invoke(main, ["-C", str(root), "sync", "email", str(target), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _threads(root: Path) -> dict[str, dict]:
    """Every thread file's frontmatter (and body) by file name; each must parse."""
    out = {}
    for path in sorted((root / "sources" / "email").glob("*.md")):
        parsed = frontmatter.read(path.read_text(encoding="utf-8"))
        assert parsed.error is None, path
        data = dict(parsed.data)
        data["_body"] = path.read_text(encoding="utf-8")[parsed.body_offset:]
        out[path.name] = data
    return out


def _all_ids(threads: dict[str, dict], *, copies: bool = True) -> list[str]:
    """Every Message-ID the threads hold: their messages', and (``copies``) the ids of copies
    kept once (the same message under another id, listed under ``copy_ids``)."""
    return [mid for t in threads.values() for mid in [*(t.get("message_ids") or []), *(
        t.get("copy_ids") or [] if copies else [])]]


def _msg(mid: str | None, subject: str, sender: str, to: str, body: str, *,
         date: str | None = "Mon, 02 Mar 2026 10:00:00 +0100", refs: str = "",
         extra: str = "") -> bytes:
    head = [f"From: {sender}", f"To: {to}", f"Subject: {subject}"]
    if mid:
        head.append(f"Message-ID: <{mid}>")
    if date:
        head.append(f"Date: {date}")
    if refs:
        head += [f"In-Reply-To: {refs.split()[-1]}", f"References: {refs}"]
    if extra:
        head.append(extra.strip())
    return ("\n".join(head) + "\n\n" + body + "\n").encode("utf-8")


def _mbox_ids(path: Path) -> set[str]:
    """The Message-IDs in an mbox's headers (not the ones quoted in bodies)."""
    from email.parser import BytesHeaderParser

    box = mailbox.mbox(str(path), create=False)
    parser = BytesHeaderParser()
    ids = {str(parser.parsebytes(box.get_bytes(k)).get("message-id", "")).strip("<> ")
           for k in box.iterkeys()}
    box.close()
    return ids


def _write_mbox(path: Path, messages: list[bytes]) -> None:
    box = mailbox.mbox(str(path))
    for data in messages:
        box.add(data)
    box.flush()
    box.close()


ANA = "Ana Lima <ana@kestrel.dev>"
BO = "Bo Chen <bo@horizon.vc>"


# -- real data: Enron ------------------------------------------------------------------------


@pytest.mark.skipif(not ENRON_MBOX.exists(), reason="shared eval data absent")
def test_enron_mbox_every_message_in_exactly_one_thread_and_resync_is_a_no_op(
        vault: Vault) -> None:
    report = _sync(vault.root, ENRON_MBOX)
    assert report["items_read"] == 1702
    threads = _threads(vault.root)
    ids = _all_ids(threads)
    assert len(ids) == len(set(ids)) == 1702  # messages in = messages out, each exactly once
    assert set(ids) == _mbox_ids(ENRON_MBOX)
    # 44 messages are copies of others filed in a second mailbox folder under another
    # Message-ID: each is one entry, its copies' ids listed under copy_ids.
    assert report["copies"] == 44 == len(_all_ids(threads)) - len(_all_ids(threads, copies=False))
    assert report["entries_added"] == 1702 - 44 and report["created"] == len(threads)
    for name, t in threads.items():
        # one header line per message, frontmatter describing all of them
        assert t["_body"].count("\n## ") == t["messages"] == len(t["message_ids"]), name
        assert t["thread_id"] == t["source_id"]
        if "first_date" in t:
            assert t["first_date"] <= t["last_date"]
        else:
            assert "## undated" in t["_body"]
    assert len(threads) < 1702  # replies without In-Reply-To were threaded by subject
    # Enron's "From:" has no display name: X-From supplies it.
    assert any(p.get("name") == "Steven J Kean" for t in threads.values()
               for p in t["participants"])

    before = _snapshot(vault.root / "sources")
    again = _sync(vault.root, ENRON_MBOX)
    assert again["entries_added"] == again["created"] == again["appended"] == 0
    assert again["unchanged"] > 0 and again["items_read"] == 1702
    assert _snapshot(vault.root / "sources") == before


@pytest.mark.skipif(not ENRON_DIR.exists(), reason="shared eval data absent")
def test_enron_folder_of_files_skips_label_files(vault: Vault) -> None:
    report = _sync(vault.root, ENRON_DIR)
    assert report["items_read"] == 1702  # 1,703 .txt (categories.txt is not mail), .cats skipped
    assert not [w for w in report["warnings"] if ".cats" in w or "categories.txt" in w]
    threads = _threads(vault.root)
    ids = _all_ids(threads)
    assert len(ids) == len(set(ids)) == 1702
    assert {f for t in threads.values() for f in t["folders"]} <= {str(n) for n in range(1, 9)}


@pytest.mark.skipif(not ENRON_MBOX.exists(), reason="shared eval data absent")
def test_sigkill_mid_sync_leaves_whole_files_and_the_next_sync_finishes(vault: Vault) -> None:
    cmd = [sys.executable, "-c", "from kenning.cli import main; main()", "-C", str(vault.root),
           "sync", "email", str(ENRON_MBOX), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = vault.root / "sources" / "email"
    try:
        while proc.poll() is None:
            if folder.is_dir() and sum(1 for _ in folder.iterdir()) >= 300:
                break
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sync finished before it could be killed"
    # At most the one file being written is left as a hidden temporary; every .md is whole.
    assert len(list(vault.root.rglob("*.tmp"))) <= 1
    partial = _threads(vault.root)  # every file there parses
    assert 0 < len(_all_ids(partial)) < 1702

    report = _sync(vault.root, ENRON_MBOX)
    assert not list(vault.root.rglob("*.tmp"))  # the next sync removes a killed write's temp
    threads = _threads(vault.root)
    ids = _all_ids(threads)
    assert len(ids) == len(set(ids)) and set(ids) == _mbox_ids(ENRON_MBOX)
    for name, t in threads.items():  # no entry was written twice by the recovery
        assert t["_body"].count("\n## ") == len(t["message_ids"]), name
    assert report["items_read"] == 1702


# -- real data: notmuch's MIME edge cases ----------------------------------------------------


@pytest.mark.skipif(not NOTMUCH.exists(), reason="shared eval data absent")
def test_notmuch_corpus_decodes_odd_charsets_and_keeps_every_message(vault: Vault) -> None:
    report = _sync(vault.root, NOTMUCH)
    threads = _threads(vault.root)
    text = "\n".join(json.dumps(t, ensure_ascii=False) for t in threads.values())
    # RFC 2047 in ISO-8859-1 Q, UTF-8 Q and UTF-8 B encodings, in names and subjects
    for decoded in ("Nicolas de Pesloüan", "François Boulogne", "Antoine Beaupré",
                    "Essai accentué", "Tack alla trafikanter och fotgängare!"):
        assert decoded in text, decoded
    assert "=?" not in "".join(str(t.get("title")) for t in threads.values())
    # messages in = messages out: every distinct Message-ID lands once; copies of one message
    # (same id, same content) are one entry; same id with other content is kept, with a warning
    from email.parser import BytesHeaderParser

    source_ids: Counter[str] = Counter()
    without_id = 0
    for path in NOTMUCH.rglob("*"):
        if path.is_file() and path.name != "README":
            data = path.read_bytes()
            box = mailbox.mbox(str(path))
            boxed = ([box.get_bytes(k) for k in box.iterkeys()] if data.startswith(b"From ")
                     else [data])
            for one in boxed:
                mid = " ".join(str(BytesHeaderParser().parsebytes(one).get("message-id", ""))
                               .split()).strip("<> ")
                if mid:
                    source_ids[mid] += 1
                else:
                    without_id += 1
    ids = _all_ids(threads)
    assert len(ids) == len(set(ids))
    assert {i.split("~")[0] for i in ids if not i.startswith("sha1:")} == set(source_ids)
    assert sum(i.startswith("sha1:") for i in ids) == without_id == 1
    dup_warnings = [w for w in report["warnings"] if "duplicate Message-ID" in w]
    assert len(ids) == len(source_ids) + without_id + len(dup_warnings) and dup_warnings
    # an HTML part and attachments
    assert any("Attachments:" in t["_body"] for t in threads.values())
    assert all("<html" not in t["_body"].lower() for t in threads.values())
    # Threading by headers: the ghost-root corpus is one thread under the missing root.
    ghost = [t for t in threads.values() if "threading/ghost-root" in t.get("folders", [])]
    assert ghost and max(t["messages"] for t in ghost) >= 5


# -- incremental ------------------------------------------------------------------------------


def test_second_sync_of_a_grown_mbox_appends_only_new_messages(vault: Vault,
                                                                tmp_path: Path) -> None:
    m1 = _msg("a1@x", "Budget 2026", ANA, BO, "Can you send the numbers?",
              date="Mon, 02 Mar 2026 10:00:00 +0100")
    m2 = _msg("a2@x", "Re: Budget 2026", BO, ANA, "Attached tomorrow.\n\n> Can you send",
              date="Mon, 02 Mar 2026 11:00:00 +0100", refs="<a1@x>")
    other = _msg("b1@x", "Offsite", ANA, BO, "Lisbon or Porto?",
                 date="Tue, 03 Mar 2026 09:00:00 +0100")
    mbox = tmp_path / "inbox.mbox"
    _write_mbox(mbox, [m1, m2, other])
    first = _sync(vault.root, mbox)
    assert first["created"] == 2 and first["entries_added"] == 3
    folder = vault.root / "sources" / "email"
    budget = folder / "2026-03-02-budget-2026.md"
    before = _snapshot(folder)
    old_body = budget.read_text().split("\n---\n", 1)[1]

    m3 = _msg("a3@x", "Re: Budget 2026", ANA, BO, "Thanks!\n\nOn Mon, Bo wrote:\n> Attached",
              date="Tue, 03 Mar 2026 12:00:00 +0100", refs="<a1@x> <a2@x>")
    fresh = _msg("c1@x", "Hiring", BO, ANA, "Two candidates.", date="Wed, 04 Mar 2026 09:00 +0100")
    _write_mbox(mbox, [m3, fresh])  # appended to the same file
    second = _sync(vault.root, mbox)
    assert second["items_read"] == 5
    assert second["entries_added"] == 2 and second["created"] == 1 and second["appended"] == 1
    after = _snapshot(folder)
    assert after["2026-03-01-offsite.md" if False else "2026-03-03-offsite.md"] == \
        before["2026-03-03-offsite.md"]
    text = budget.read_text()
    body = text.split("\n---\n", 1)[1]
    assert body.startswith(old_body.rstrip("\n"))  # existing text untouched
    assert body.count("\n## ") == 3 and "Thanks!" in body and "> Attached" not in body
    data = frontmatter.read(text).data
    assert data["message_ids"] == ["a1@x", "a2@x", "a3@x"]
    assert data["last_date"] == "2026-03-03T12:00:00+01:00"
    assert (folder / "2026-03-04-hiring.md").exists()


def test_a_message_joining_two_threads_appends_to_the_first_and_notes_it(
        vault: Vault, tmp_path: Path) -> None:
    mbox = tmp_path / "m.mbox"
    _write_mbox(mbox, [_msg("p@x", "Plan", ANA, BO, "Plan A", date="Mon, 02 Mar 2026 10:00 +0000"),
                       _msg("q@x", "Plan (other copy)", BO, ANA, "Plan B",
                            date="Mon, 02 Mar 2026 11:00 +0000")])
    _sync(vault.root, mbox)
    folder = vault.root / "sources" / "email"
    plan_b = folder / "2026-03-02-plan-other-copy.md"
    b_body = plan_b.read_text().split("\n---\n", 1)[1]
    _write_mbox(mbox, [_msg("r@x", "Re: Plan", ANA, BO, "Merging both.",
                            date="Tue, 03 Mar 2026 10:00 +0000", refs="<p@x> <q@x>")])
    report = _sync(vault.root, mbox)
    assert report["entries_added"] == 1
    plan_a = (folder / "2026-03-02-plan.md").read_text()
    assert "Merging both." in plan_a and "thread q@x" in plan_a
    assert "merged_threads" in plan_a
    b_text = plan_b.read_text()
    assert b_text.split("\n---\n", 1)[1] == b_body  # the other file's text is not rewritten
    assert frontmatter.read(b_text).data["continued_in"] == "p@x"
    # a later reply to the absorbed thread goes to the first one too
    _write_mbox(mbox, [_msg("s@x", "Re: Plan (other copy)", BO, ANA, "Late reply.",
                            date="Wed, 04 Mar 2026 10:00 +0000", refs="<q@x>")])
    _sync(vault.root, mbox)
    assert "Late reply." in (folder / "2026-03-02-plan.md").read_text()
    assert "Late reply." not in plan_b.read_text()


def test_same_thread_from_two_connectors_is_one_file(vault: Vault) -> None:
    """The IMAP connector shares threads with the file connector: same id, same file."""
    msgs = [_msg("t1@x", "Launch", ANA, BO, "Monday?", date="Mon, 02 Mar 2026 10:00 +0000"),
            _msg("t2@x", "Re: Launch", BO, ANA, "Yes.", date="Mon, 02 Mar 2026 11:00 +0000",
                 refs="<t1@x>")]
    with SourceStore(vault.root, "email") as store:
        ingest(store, [RawMessage(msgs[0], "a.eml")], SyncReport("email"), owner=Owner())
    report = SyncReport("imap")
    with SourceStore(vault.root, "imap") as store:
        ingest(store, [RawMessage(m, f"INBOX uid {i}", folder="INBOX") for i, m in
                       enumerate(msgs, 1)], report, owner=Owner())
    files = list((vault.root / "sources" / "email").glob("*.md"))
    assert len(files) == 1 and report.created == 0
    data = frontmatter.read(files[0].read_text()).data
    assert data["message_ids"] == ["t1@x", "t2@x"] and data["folders"] == ["INBOX"]
    assert files[0].read_text().count("\n## ") == 2


# -- bad input --------------------------------------------------------------------------------


def test_bad_input_warns_and_every_other_message_lands(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    (folder / "charset.eml").write_bytes(
        b"From: =?x-unknown-cs?Q?Jos=E9?= <jose@x.org>\nTo: ana@kestrel.dev\n"
        b"Subject: =?iso-8859-1?q?Caf=E9?=\nMessage-ID: <cs@x>\n"
        b"Date: Mon, 02 Mar 2026 10:00:00 +0000\n"
        b"Content-Type: text/plain; charset=utf-8\n\nna\xefve caf\xe9 text\n")
    (folder / "nodate.eml").write_bytes(
        b"Received: from a by b; Tue, 03 Mar 2026 08:00:00 +0000\n"
        b"From: bo@horizon.vc\nTo: ana@kestrel.dev\nSubject: No date\nMessage-ID: <nd@x>\n\nhi\n")
    (folder / "baddate.eml").write_bytes(_msg("bd@x", "Odd date", BO, ANA, "x",
                                              date="Thu, 31 Feb 1912 99:00:00 +0000"))
    (folder / "dup1.eml").write_bytes(_msg("same@x", "Same id", BO, ANA, "first text"))
    (folder / "dup2.eml").write_bytes(_msg("same@x", "Same id", BO, ANA, "second text"))
    (folder / "broken.eml").write_bytes(
        b"From: bo@horizon.vc\nSubject: Broken MIME\nMessage-ID: <bm@x>\n"
        b"Date: Mon, 02 Mar 2026 10:00:00 +0000\n"
        b"Content-Type: multipart/mixed; boundary=\"zz\"\n\n--zz\nContent-Type: text/plain\n\n"
        b"visible part\n--zz\nContent-Type: application/pdf; name=a.pdf\n"
        b"Content-Transfer-Encoding: base64\n\n%%%not base64%%%\n")
    (folder / "notes.txt").write_text("just some notes, not mail\n")
    report = _sync(vault.root, folder)
    assert report["items_read"] == 6
    warnings = "\n".join(report["warnings"])
    assert "charset.eml: text declared as 'utf-8' is not; read as cp1252" in warnings
    assert "nodate.eml: no Date header; used the Received time 2026-03-03T08:00:00+00:00" \
        in warnings
    assert "baddate.eml: impossible Date" in warnings and "undated" in warnings
    assert "dup2.eml: duplicate Message-ID <same@x> with different content" in warnings
    assert "notes.txt" not in warnings
    threads = _threads(vault.root)
    body = "\n".join(t["_body"] for t in threads.values())
    assert "naïve café text" in body and "Café" in {t["title"] for t in threads.values()}
    assert "first text" in body and "second text" in body and "visible part" in body
    assert "a.pdf (application/pdf" in body
    assert len(_all_ids(threads)) == 6


def test_truncated_mbox_keeps_the_partial_last_message(vault: Vault, tmp_path: Path) -> None:
    mbox = tmp_path / "cut.mbox"
    last = _msg("t3@x", "Report", ANA, BO, "", extra="Content-Type: multipart/mixed; "
                "boundary=\"b1\"").rstrip(b"\n") + (
        b"\n--b1\nContent-Type: text/plain\n\nThe numbers are in the attach")
    _write_mbox(mbox, [_msg("t1@x", "One", ANA, BO, "first"),
                       _msg("t2@x", "Two", BO, ANA, "second"), last])
    data = mbox.read_bytes().rstrip(b"\n")
    mbox.write_bytes(data)  # cut mid-line, without the closing boundary
    report = _sync(vault.root, mbox)
    assert report["items_read"] == 3 and report["entries_added"] == 3
    assert any("#message 3: the mbox ends in the middle of a line" in w
               for w in report["warnings"])
    assert "The numbers are in the attach" in "".join(
        t["_body"] for t in _threads(vault.root).values())


def test_huge_attachment_is_listed_not_copied(vault: Vault, tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    encoded = base64.encodebytes(b"\0" * size)
    data = (b"From: bo@horizon.vc\nTo: ana@kestrel.dev\nSubject: Dataset\nMessage-ID: <big@x>\n"
            b"Date: Mon, 02 Mar 2026 10:00:00 +0000\nMIME-Version: 1.0\n"
            b"Content-Type: multipart/mixed; boundary=\"BB\"\n\n--BB\n"
            b"Content-Type: text/plain\n\nHere is the dump.\n--BB\n"
            b"Content-Type: application/octet-stream; name=\"dump.bin\"\n"
            b"Content-Disposition: attachment; filename=\"dump.bin\"\n"
            b"Content-Transfer-Encoding: base64\n\n" + encoded + b"--BB--\n")
    (tmp_path / "big.eml").write_bytes(data)
    report = _sync(vault.root, tmp_path / "big.eml")
    assert report["entries_added"] == 1
    (thread,) = _threads(vault.root).values()
    assert "dump.bin (application/octet-stream, 50.0 MB)" in thread["_body"]
    assert thread["attachments"] == 1
    assert len(thread["_body"]) < 2000


# -- units ------------------------------------------------------------------------------------


def test_quotes_and_signatures() -> None:
    bottom = split_message("Sounds good.\n\nOn Mon, 2 Mar 2026 at 10:00, Ana Lima\n"
                           "<ana@kestrel.dev> wrote:\n> Shall we meet?\n> At 3?\n\n"
                           "See you then.\n\n-- \nBo Chen\nPartner, Horizon VC\n+1 555 0100")
    assert bottom.text == "Sounds good.\n\nSee you then."
    assert bottom.signature == "Bo Chen\nPartner, Horizon VC\n+1 555 0100"
    assert bottom.quoted == 4

    outlook = split_message("Approved.\n\nThanks,\nMaria Ortiz\nCFO\n\n"
                            "-----Original Message-----\nFrom: Ana\nSent: Monday\nSubject: x\n"
                            "old text")
    assert outlook.text == "Approved.\n\nThanks," and outlook.signature == "Maria Ortiz\nCFO"

    block = split_message("Yes.\n\nFrom: Ana Lima <ana@kestrel.dev>\nSent: Monday, March 2\n"
                          "To: Bo\nSubject: Q\n\nold question")
    assert block.text == "Yes."

    notes = split_message("Agreed.\n\nJeff Dasovich\n05/14/2001 04:39 PM\nTo: Steven J Kean\n"
                          "cc:\nSubject: Re: rates\n\nold")
    assert notes.text == "Agreed."

    forward = split_message("FYI\n\n---------------------- Forwarded by Steven J Kean/HOU/EES "
                            "on 10/18/99 ---------------------------\n\nKaren Denne\n"
                            "10/18/99 07:08 AM\nTo: Steven J Kean\ncc:\nSubject: Articles\n\n"
                            "The forwarded text.")
    assert "The forwarded text." in forward.text  # a forward is content, not a quote

    footer = split_message("Patch attached.\n_______________________________________________\n"
                           "notmuch mailing list\nnotmuch@notmuchmail.org\n"
                           "http://notmuchmail.org/mailman/listinfo/notmuch")
    assert footer.text == "Patch attached." and footer.signature == ""

    plain = split_message("Thanks for the update, this is the whole message.")
    assert plain.signature == "" and plain.quoted == 0


def test_html_only_message_becomes_markdown() -> None:
    data = (b"From: news@x.org\nSubject: Hi\nMessage-ID: <h@x>\nDate: Mon, 02 Mar 2026 10:00 +0000"
            b"\nContent-Type: text/html; charset=utf-8\n\n<html><head><style>p{}</style></head>"
            b"<body><p>Hello <b>team</b></p><ul><li>one</li></ul>"
            b"<blockquote>old quote</blockquote></body></html>")
    m = parse(data, "h.eml")
    assert "Hello **team**" in m.text and "* one" in m.text
    assert "old quote" not in m.text and "<p>" not in m.text and "p{}" not in m.text


def test_bulk_classification() -> None:
    def bulk(extra: str = "", sender: str = "Ana <ana@x.org>") -> bool:
        return parse(_msg("x@y", "S", sender, ANA, "b", extra=extra), "t").bulk

    assert bulk("List-Unsubscribe: <mailto:u@x.org>")
    assert bulk("Precedence: bulk") and bulk("Precedence: list") and bulk("Precedence: junk")
    assert bulk("Auto-Submitted: auto-replied") and not bulk("Auto-Submitted: no")
    assert bulk(sender="GitHub <noreply@github.com>") and bulk(sender="no-reply@x.org")
    assert bulk(sender="MAILER-DAEMON@mx.x.org") and bulk(sender="do-not-reply@x.org")
    assert not bulk() and not bulk("Precedence: first-class")


def test_threading_fallback_by_subject_and_participants(vault: Vault, tmp_path: Path) -> None:
    carl = "Carl <carl@other.org>"
    msgs = [_msg("f1@x", "Q3 forecast", ANA, BO, "draft", date="Mon, 02 Mar 2026 10:00 +0000"),
            _msg("f2@x", "RE: Q3 forecast", BO, ANA, "ok", date="Mon, 02 Mar 2026 12:00 +0000"),
            # same subject, but nobody in common: its own thread
            _msg("f3@x", "Re: Q3 forecast", carl, "dee@other.org", "?",
                 date="Mon, 02 Mar 2026 13:00 +0000"),
            # same people and subject, but half a year later: its own thread
            _msg("f4@x", "Re: Q3 forecast", ANA, BO, "again",
                 date="Mon, 07 Sep 2026 13:00 +0000"),
            # not a reply: a new thread even with the same subject and people
            _msg("f5@x", "Q3 forecast", ANA, BO, "new round", date="Tue, 03 Mar 2026 10:00 +0000"),
            ]
    (tmp_path / "in").mkdir()
    for i, data in enumerate(msgs):
        (tmp_path / "in" / f"{i}.eml").write_bytes(data)
    _sync(vault.root, tmp_path / "in")
    groups = sorted(sorted(t["message_ids"]) for t in _threads(vault.root).values())
    assert groups == [["f1@x", "f2@x"], ["f3@x"], ["f4@x"], ["f5@x"]]


def test_direction_and_owner_roles_from_the_vault_config(vault: Vault, tmp_path: Path) -> None:
    config = vault.root / ".kenning" / "config.yaml"
    config.write_text(config.read_text() + "owner:\n  names: [Ana Lima]\n"
                      "  emails: [ana@kestrel.dev]\n  domains: [kestrel.dev]\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "1.eml").write_bytes(_msg("d1@x", "Terms", BO, ANA, "Our offer."))
    (tmp_path / "in" / "2.eml").write_bytes(_msg("d2@x", "Lunch", ANA, BO, "Friday?"))
    (tmp_path / "in" / "3.eml").write_bytes(_msg("d3@x", "Standup", ANA, "Max <max@kestrel.dev>",
                                                 "Moved to 10."))
    _sync(vault.root, tmp_path / "in")
    by_title = {t["title"]: t for t in _threads(vault.root).values()}
    assert by_title["Terms"]["direction"] == "received"
    assert by_title["Lunch"]["direction"] == "sent"
    assert by_title["Standup"]["direction"] == "internal"
    ana = next(p for p in by_title["Terms"]["participants"] if p["address"] == "ana@kestrel.dev")
    assert ana == {"name": "Ana Lima", "address": "ana@kestrel.dev", "roles": ["to"],
                   "owner": "received"}
    bo = next(p for p in by_title["Lunch"]["participants"] if p["address"] == "bo@horizon.vc")
    assert "owner" not in bo and bo["roles"] == ["to"]


def test_no_owner_configured_omits_direction(vault: Vault, tmp_path: Path) -> None:
    (tmp_path / "1.eml").write_bytes(_msg("n1@x", "Hello", BO, ANA, "Hi."))
    _sync(vault.root, tmp_path / "1.eml")
    (thread,) = _threads(vault.root).values()
    assert "direction" not in thread
    assert all("owner" not in p for p in thread["participants"])
    assert thread["category"] == "personal" and thread["subject"] == "Hello"


# -- the same message in two folders -----------------------------------------------------------


def _maildir(root: Path, folder: str, name: str, data: bytes) -> None:
    path = root / folder / "cur" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_the_same_message_filed_in_two_folders_is_kept_once(vault: Vault, tmp_path: Path) -> None:
    """By Message-ID, else by content: Enron files one message in "All documents" and in
    "Sent Items" under two Message-IDs; a client may file a copy without one."""
    mail = tmp_path / "mail"
    budget = _msg("budget-1@kestrel.dev", "Budget 2026", ANA, BO, "Numbers attached.")
    _maildir(mail, "Inbox", "1.eml", budget)
    _maildir(mail, "Projects", "1.eml", _msg(  # another id, the same message
        "budget-1-copy@kestrel.dev", "Budget 2026", ANA, BO, "Numbers attached.",
        extra="X-Folder: \\Ana_Lima\\Projects"))
    _maildir(mail, "Archive", "1.eml", _msg(None, "Budget 2026", ANA, BO, "Numbers attached."))
    _maildir(mail, "Inbox", "2.eml", _msg("budget-2@kestrel.dev", "Re: Budget 2026", BO, ANA,
                                          "Thanks!", date="Tue, 03 Mar 2026 10:00:00 +0100",
                                          refs="<budget-1-copy@kestrel.dev>"))
    # The same text to someone else is another message.
    _maildir(mail, "Inbox", "3.eml", _msg("budget-3@kestrel.dev", "Budget 2026", ANA,
                                          "Cy <cy@horizon.vc>", "Numbers attached."))
    report = _sync(vault.root, mail)
    assert report["items_read"] == 5 and report["copies"] == 2
    threads = _threads(vault.root)
    assert sum(t["_body"].count("Numbers attached.") for t in threads.values()) == 2
    (budget_thread,) = [t for t in threads.values()
                        if t["message_ids"][0] == "budget-1@kestrel.dev"]
    assert budget_thread["message_ids"] == ["budget-1@kestrel.dev", "budget-2@kestrel.dev"]
    assert sorted(budget_thread["copy_ids"])[0] == "budget-1-copy@kestrel.dev"
    assert len(budget_thread["copy_ids"]) == 2  # the copy with an id and the one without
    assert budget_thread["folders"] == ["Archive", "Inbox", "Projects"]

    before = _snapshot(vault.root / "sources")
    assert _sync(vault.root, mail)["copies"] == 0  # re-sync: nothing new, nothing moves
    assert _snapshot(vault.root / "sources") == before

    # A folder synced later holds one more copy: still one entry.
    _maildir(mail, "Later", "1.eml", budget.replace(b"budget-1@kestrel.dev", b"b-4@kestrel.dev"))
    again = _sync(vault.root, mail)
    assert again["copies"] == 1 and again["entries_added"] == 0
    threads = _threads(vault.root)
    assert sum(t["_body"].count("Numbers attached.") for t in threads.values()) == 2


def test_copies_are_recognised_against_state_written_before_content_keys(
        vault: Vault, tmp_path: Path) -> None:
    mail = tmp_path / "mail"
    budget = _msg("budget-1@kestrel.dev", "Budget 2026", ANA, BO, "Numbers attached.")
    _maildir(mail, "Inbox", "1.eml", budget)
    _sync(vault.root, mail)
    state_path = vault.root / ".kenning" / "sync" / "email.json"
    state = json.loads(state_path.read_text())
    del state["cursors"]["contents"]  # what an older connector left
    state_path.write_text(json.dumps(state))
    _maildir(mail, "Sent Items", "1.eml", budget.replace(b"budget-1@", b"other-id@"))
    report = _sync(vault.root, mail)
    assert report["copies"] == 1 and report["created"] == 0
    assert sum(t["_body"].count("Numbers attached.") for t in _threads(vault.root).values()) == 1
