"""One message, parsed: decoded headers, addresses, date, new text, signature, attachments.

Parsing uses the standard library (``email`` with ``policy.default``; ``compat32`` when that
raises). Nothing here raises for a bad message: problems become warnings on the result.

Decoding rules:

- Headers: RFC 2047 encoded words are decoded; raw 8-bit header bytes are read as UTF-8, else
  cp1252.
- Text parts: the declared charset, then UTF-8, cp1252 and latin-1 (a warning says which was used
  when the declared one was unknown or wrong).
- Date: the ``Date`` header; when it is missing or impossible (unparseable, before 1971, the
  Lotus Notes/DOS "zero" date 1980-01-01T00:00Z, more than a day in the future), the newest
  ``Received`` header's time, then the reader's delivery time (mbox ``From_`` line — except
  ``From MAILER-DAEMON`` lines, which Python's :mod:`mailbox` writes with the conversion time —,
  Maildir file name, IMAP INTERNALDATE); a warning names the fallback, and with none the message
  is "undated". A file's modification time is never used (copying a mailbox changes it).
- Attachments are listed by name, type and size; their content is never decoded (the size of a
  base64 part is computed from its encoded length).
"""

from __future__ import annotations

import contextlib
import email
import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime

from kenning.sources.email.quotes import split_message

MAX_TEXT = 20_000  # characters of new text kept per message
MAX_HTML = 500_000  # characters of HTML converted per message
MAX_PARTS = 500
_MSGID = re.compile(r"<([^<>\s]+)>")
_PREFIX = re.compile(r"^\s*(?:(?:re|fw|fwd|aw|wg|sv|vs|r|tr|antw|rif|ynt)\s*(?:\[\d+\])?\s*:\s*"
                     r"|\[[^\]]{1,40}\]\s*)+", re.IGNORECASE)
_REPLY_PREFIX = re.compile(r"^\s*(?:\[[^\]]{1,40}\]\s*)*(?:re|fw|fwd|aw|wg|sv|vs|r|tr|antw|rif)"
                           r"\s*(?:\[\d+\])?\s*:", re.IGNORECASE)
_NOREPLY = re.compile(r"^(?:no-?reply|do-?not-?reply|donotreply|mailer-daemon|postmaster"
                      r"|bounces?)(?:[+.\-_].*)?$", re.IGNORECASE)
_MIN_DATE = datetime(1971, 1, 1, tzinfo=UTC)
# "Zero" dates some systems write for an unknown time (Lotus Notes, DOS): not real dates.
_NULL_DATES = (datetime(1980, 1, 1, tzinfo=UTC),)


@dataclass
class Attachment:
    name: str
    type: str
    size: int


@dataclass
class Person:
    name: str
    address: str


@dataclass
class Parsed:
    """What the connector keeps of one message."""

    where: str
    message_id: str | None
    references: list[str]  # References then In-Reply-To, oldest first, without <>
    subject: str
    date: datetime | None
    sender: Person | None
    to: list[Person]
    cc: list[Person]
    bcc: list[Person]
    reply_to: list[Person]
    text: str
    signature: str
    quoted: int
    attachments: list[Attachment]
    bulk: bool
    folder: str | None = None
    labels: tuple[str, ...] = ()
    digest: str = ""  # sha1 of the raw bytes
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False
    alt_key: str | None = None  # set when another message already uses this Message-ID
    copy_of: str | None = None  # the key of the message this one is a copy of (other id)
    lists: tuple[str, ...] = ()  # the mailing lists it came through (List-Post addresses)

    @property
    def key(self) -> str:
        return self.alt_key or self.message_id or f"sha1:{self.digest[:20]}"

    @property
    def is_reply(self) -> bool:
        return bool(_REPLY_PREFIX.match(self.subject))

    @property
    def content_id(self) -> str:
        """Identity of the content: the same message from two folders has the same one."""
        parts = [self.date.isoformat() if self.date else "", self.sender.address if self.sender
                 else "", self.subject, self.text, self.signature,
                 ";".join(f"{a.name}/{a.size}" for a in self.attachments)]
        return hashlib.sha1("\x00".join(parts).encode("utf-8", "replace")).hexdigest()

    @property
    def copy_key(self) -> str | None:
        """Identity of the message whatever its Message-ID: the same message filed in two
        folders (Enron's "All documents" and "Sent Items" copies carry different Message-IDs),
        or a copy without one. None without a date and a sender (too little to tell)."""
        if self.date is None or self.sender is None or not (self.sender.address
                                                             or self.sender.name):
            return None
        people = sorted(p.address or p.name for p in [*self.to, *self.cc])
        parts = [self.date.isoformat(), self.sender.address or self.sender.name,
                 ";".join(people), " ".join(self.subject.split()), " ".join(self.text.split()),
                 " ".join(self.signature.split()),
                 ";".join(f"{a.name}/{a.size}" for a in self.attachments)]
        return hashlib.sha1("\x00".join(parts).encode("utf-8", "replace")).hexdigest()[:24]

    def people(self) -> list[Person]:
        return [p for p in [self.sender, *self.to, *self.cc, *self.bcc] if p]


def normalize_subject(subject: str) -> str:
    """'Re: [list] Fwd: Budget  2024' → 'budget 2024' (for threading by subject)."""
    return " ".join(_PREFIX.sub("", subject).split()).lower()


def clean_subject(subject: str) -> str:
    """The subject without reply/forward prefixes, for titles."""
    stripped = re.sub(r"^\s*(?:(?:re|fw|fwd|aw|wg|sv|vs|r|tr|antw|rif)\s*(?:\[\d+\])?\s*:\s*)+",
                      "", subject, flags=re.IGNORECASE)
    return " ".join(stripped.split())


def parse(data: bytes, where: str, *, folder: str | None = None, labels: tuple[str, ...] = (),
          internal_date: datetime | None = None, digest: str | None = None) -> Parsed:
    digest = digest or hashlib.sha1(data.rstrip(b"\r\n")).hexdigest()
    errors: list[str] = []
    for pol in (policy.default, policy.compat32):
        try:
            msg = email.message_from_bytes(data, policy=pol)
            result = _extract(msg, where, internal_date)
        except Exception as exc:  # the stdlib parser has many ways to fail on bad input
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        if errors:
            result.warnings.append(f"parsed leniently after an error ({errors[0][:120]})")
        result.folder, result.digest = folder, digest
        result.labels = tuple(dict.fromkeys([*labels, *result.labels]))
        return result
    # Nothing worked: keep the raw text so the message still lands.
    text = _decode_bytes(data[:MAX_TEXT * 2], None, [])[0]
    result = Parsed(where, None, [], "(unparseable message)", internal_date, None, [], [], [], [],
                    text[:MAX_TEXT], "", 0, [], False, folder, labels, digest,
                    [f"could not be parsed ({errors[-1][:120]}); kept as raw text"])
    return result


def _extract(msg: Message, where: str, internal_date: datetime | None) -> Parsed:
    warnings: list[str] = []
    raw = _raw_headers(msg)
    message_id = _first_id(raw.get("message-id", []))
    refs = _ids(raw.get("references", [])) + _ids(raw.get("in-reply-to", []))
    refs = [r for r in dict.fromkeys(refs) if r != message_id]
    subject = _text_header(raw.get("subject", []), warnings)
    sender_list = _addresses(raw.get("from", []), warnings)
    sender = sender_list[0] if sender_list else None
    if sender is not None and not sender.name:
        x_from = _text_header(raw.get("x-from", []), warnings).split(" <", 1)[0].strip()
        if x_from and "@" not in x_from and "<" not in x_from and len(x_from) < 80:
            sender.name = x_from
    to = _addresses(raw.get("to", []), warnings)
    _names_from(to, _text_header(raw.get("x-to", []), warnings))
    cc = _addresses(raw.get("cc", []), warnings)
    _names_from(cc, _text_header(raw.get("x-cc", []), warnings))
    bcc = _addresses(raw.get("bcc", []), warnings)
    reply_to = _addresses(raw.get("reply-to", []), warnings)
    date = _date(raw, internal_date, warnings)

    texts: list[str] = []
    attachments: list[Attachment] = []
    truncated = _collect(msg, texts, attachments, warnings, 0)
    body = "\n\n".join(t for t in texts if t.strip())
    split = split_message(body)
    text = split.text
    if len(text) > MAX_TEXT:
        text = (text[:MAX_TEXT].rstrip()
                + f"\n\n[… {len(split.text) - MAX_TEXT:,} more characters not copied; "
                  "the original message has them]")
    gmail = _text_header(raw.get("x-gmail-labels", []), warnings)
    labels = tuple(x.strip() for x in gmail.split(",") if x.strip())
    return Parsed(where, message_id, refs, subject, date, sender, to, cc, bcc, reply_to,
                  text, split.signature, split.quoted, attachments,
                  _is_bulk(raw, sender), labels=labels, warnings=warnings, truncated=truncated,
                  lists=_list_addresses(raw))


# -- headers --------------------------------------------------------------------------------


def _raw_headers(msg: Message) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in msg.raw_items():
        out.setdefault(name.lower(), []).append(str(value))
    return out


def _unsurrogate(value: str) -> str:
    """Raw 8-bit header bytes arrive as surrogate escapes: read them as UTF-8, else cp1252."""
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    data = value.encode("ascii", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def decode_text(value: str, warnings: list[str] | None = None) -> str:
    value = _unsurrogate(value)
    if "=?" in value:
        try:
            value = str(make_header(decode_header(value)))
        except (LookupError, UnicodeError, ValueError, AssertionError) as exc:
            value = _decode_words_leniently(value)
            if warnings is not None:
                warnings.append(f"header with a bad encoded word ({type(exc).__name__}); "
                                "decoded leniently")
    return " ".join(value.split())


def _decode_words_leniently(value: str) -> str:
    try:
        parts = decode_header(value)
    except Exception:
        return value
    out = []
    for chunk, charset in parts:
        if isinstance(chunk, str):
            out.append(chunk)
        else:
            out.append(_decode_bytes(chunk, charset, [])[0])
    return " ".join(out)


def _text_header(values: list[str], warnings: list[str]) -> str:
    return decode_text(values[0], warnings) if values else ""


def _addresses(values: list[str], warnings: list[str]) -> list[Person]:
    if not values:
        return []
    people: list[Person] = []
    seen: set[str] = set()
    cleaned = [_unsurrogate(" ".join(v.split())) for v in values]
    try:
        pairs = getaddresses(cleaned)
    except Exception:
        pairs = []
    for name, address in pairs:
        name = decode_text(name, warnings).strip().strip("'\"").strip() if name else ""
        address = address.strip().strip("<>").lower()
        if not address and not name:
            continue
        if name.lower() == address:
            name = ""
        ident = address or name
        if ident in seen:
            continue
        seen.add(ident)
        people.append(Person(name, address))
    return people


def _names_from(people: list[Person], x_header: str) -> None:
    """Enron-style X-To / X-cc display names: paired by address when the header carries them
    (``"Andy Brown" <abb@eslawfirm.com>``), else by position when the count matches."""
    if not x_header:
        return
    if "<" in x_header or "@" in x_header:
        try:
            pairs = getaddresses([x_header])
        except Exception:
            return
        named = {a.strip().lower(): n.strip().strip("'\"").strip() for n, a in pairs
                 if a and n and "@" in a}
        for person in people:
            name = named.get(person.address)
            if not person.name and name and "@" not in name:
                person.name = name
        return
    names = [n.strip() for n in x_header.split(",") if n.strip()]
    if len(names) != len(people):
        return
    for person, name in zip(people, names, strict=True):
        if not person.name:
            person.name = name


_MAILTO = re.compile(r"<mailto:([^>?\s]+)", re.IGNORECASE)


def _list_addresses(raw: dict[str, list[str]]) -> tuple[str, ...]:
    """The addresses of the mailing lists a message came through (``List-Post: <mailto:…>``,
    RFC 2369): a list is a place people write to, not a person."""
    found = [m.group(1).strip().lower() for v in raw.get("list-post", [])
             for m in _MAILTO.finditer(v)]
    return tuple(dict.fromkeys(a for a in found if "@" in a))


def _ids(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        found = _MSGID.findall(value)
        if not found and value.strip() and " " not in value.strip():
            found = [value.strip()]
        out.extend(found)
    return out


def _first_id(values: list[str]) -> str | None:
    ids = _ids(values)
    return ids[0] if ids else None


def _date(raw: dict[str, list[str]], internal: datetime | None,
          warnings: list[str]) -> datetime | None:
    header = raw.get("date", [""])[0].strip()
    parsed = _parse_date(header)
    if parsed is not None:
        return parsed
    problem = "no Date header" if not header else f"impossible Date {header[:60]!r}"
    for received in raw.get("received", []):
        when = _parse_date(received.rsplit(";", 1)[-1]) if ";" in received else None
        if when is not None:
            warnings.append(f"{problem}; used the Received time {when.isoformat()}")
            return when
    if internal is not None and _plausible(internal):
        warnings.append(f"{problem}; used the mailbox's delivery time {internal.isoformat()}")
        return internal
    warnings.append(f"{problem} and no other time; the message is undated")
    return None


def _parse_date(value: str) -> datetime | None:
    value = " ".join(value.split())
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when if _plausible(when) else None


def _plausible(when: datetime) -> bool:
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if when in _NULL_DATES:
        return False
    return _MIN_DATE <= when <= datetime.now(UTC) + timedelta(days=1)


def _is_bulk(raw: dict[str, list[str]], sender: Person | None) -> bool:
    if raw.get("list-unsubscribe"):
        return True
    precedence = " ".join(raw.get("precedence", [])).strip().lower()
    if precedence in ("bulk", "list", "junk"):
        return True
    auto = " ".join(raw.get("auto-submitted", [])).strip().lower()
    if auto and auto != "no":
        return True
    if sender and sender.address:
        local = sender.address.split("@", 1)[0]
        if _NOREPLY.match(local):
            return True
    return False


# -- body -----------------------------------------------------------------------------------


def _collect(part: Message, texts: list[str], attachments: list[Attachment],
             warnings: list[str], depth: int) -> bool:
    """Walk the MIME tree: text parts into ``texts``, everything else into ``attachments``.

    Returns True when the structure looks cut off (a multipart without its closing boundary).
    """
    if depth > 30 or len(attachments) > MAX_PARTS:
        return False
    ctype = part.get_content_type()
    truncated = any(type(d).__name__ == "CloseBoundaryNotFoundDefect"
                    for d in getattr(part, "defects", []))
    if ctype == "message/rfc822":
        inner = part.get_payload()
        inner_msg = inner[0] if isinstance(inner, list) and inner else None
        subject = decode_text(str(inner_msg.get("subject", "")) if inner_msg else "")
        size = len(inner_msg.as_bytes()) if inner_msg is not None else 0
        attachments.append(Attachment(part.get_filename() or f"{subject or 'message'}.eml",
                                      ctype, size))
        return truncated
    if part.get_content_maintype() == "multipart" and not part.is_multipart():
        # No boundary (or one the parser could not find): the parts cannot be told apart, so
        # the whole payload is kept as text rather than lost as an "attachment".
        payload = part.get_payload()
        text = payload if isinstance(payload, str) else ""
        if text.strip():
            texts.append(text)
            warnings.append(f"{ctype} without a usable boundary; its raw content was kept as "
                            "text")
        return truncated
    if part.is_multipart():
        subs = [p for p in part.get_payload() if isinstance(p, Message)]
        if ctype == "multipart/alternative" and subs:
            chosen = _best_alternative(subs)
            return _collect(chosen, texts, attachments, warnings, depth + 1) or truncated
        for sub in subs:
            truncated = _collect(sub, texts, attachments, warnings, depth + 1) or truncated
        return truncated
    disposition = (part.get("content-disposition") or "").split(";")[0].strip().lower()
    filename = _filename(part)
    if ctype in ("text/plain", "text/html") and disposition != "attachment" and not filename:
        text = _part_text(part, warnings)
        if ctype == "text/html":
            text = html_to_markdown(text)
        texts.append(text)
        return truncated
    if ctype == "text/plain" and not disposition and not filename and not texts:
        texts.append(_part_text(part, warnings))
        return truncated
    attachments.append(Attachment(filename or f"(unnamed {ctype})", ctype, _encoded_size(part)))
    return truncated


def _best_alternative(subs: list[Message]) -> Message:
    for wanted in ("text/plain", "text/html"):
        for sub in subs:
            if sub.get_content_type() == wanted and _filename(sub) is None:
                return sub
    for sub in subs:
        if sub.is_multipart():
            return sub
    return subs[0]


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:
        return None
    return decode_text(str(name)) if name else None


def _encoded_size(part: Message) -> int:
    payload = part.get_payload()
    if not isinstance(payload, str):
        return 0
    cte = str(part.get("content-transfer-encoding", "")).strip().lower()
    if cte == "base64":
        body = len(payload) - payload.count("\n") - payload.count("\r") - payload.count(" ")
        return max(0, body * 3 // 4 - payload.rstrip().count("=", -2))
    return len(payload)


def _part_text(part: Message, warnings: list[str]) -> str:
    try:
        data = part.get_payload(decode=True)
    except Exception as exc:
        warnings.append(f"a text part could not be decoded ({type(exc).__name__})")
        data = None
    if data is None:
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    if not isinstance(data, bytes):
        return str(data)
    charset = None
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text, note = _decode_bytes(data, charset, warnings)
    if note:
        warnings.append(note)
    return text


_LATIN1 = frozenset({"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "iso_8859-1"})


def _decode_bytes(data: bytes, charset: str | None,
                  warnings: list[str]) -> tuple[str, str | None]:
    """Decode with the declared charset, then UTF-8, cp1252, latin-1; say so on a fallback."""
    declared = (charset or "").strip().strip('"').lower() or None
    if declared in (None, "us-ascii", "ascii", "unknown-8bit", "x-unknown", "default"):
        try:
            return data.decode("ascii"), None
        except UnicodeDecodeError:
            pass
    elif declared is not None:
        try:
            if declared in _LATIN1 and any(0x80 <= b <= 0x9F for b in data):
                # Bytes 0x80-0x9F are controls in Latin-1 but quotes and dashes in the
                # Windows-1252 that mail clients write under that name (as browsers read it).
                with contextlib.suppress(UnicodeDecodeError):
                    return data.decode("cp1252"), None
            return data.decode(declared), None
        except LookupError:
            pass
        except UnicodeDecodeError:
            pass
    for fallback in ("utf-8", "cp1252", "latin-1"):
        try:
            text = data.decode(fallback)
        except UnicodeDecodeError:
            continue
        if declared in (None, "unknown-8bit", "x-unknown"):
            note = None if fallback == "utf-8" else f"undeclared 8-bit text read as {fallback}"
            return text, note
        return text, f"text declared as {declared!r} is not; read as {fallback}"
    return data.decode("latin-1", "replace"), None  # unreachable: latin-1 decodes every byte


def html_to_markdown(html: str) -> str:
    from markdownify import markdownify

    if len(html) > MAX_HTML:
        html = html[:MAX_HTML]
    html = re.sub(r"(?is)<(script|style|head)\b.*?</\1\s*>", "", html)
    try:
        text = markdownify(html, heading_style="ATX", strip=["img"])
    except Exception:
        text = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\n[ \t]+\n", "\n\n", text)


def parse_mbox_from_line(line: str) -> datetime | None:
    """The date on an mbox ``From sender Mon Nov 30 09:45:01 2026`` line (read as UTC).

    ``From MAILER-DAEMON …`` lines are ignored: Python's :mod:`mailbox` writes them, with the
    time of the conversion, for messages that had no delivery line.
    """
    parts = line.split()
    if len(parts) < 7 or parts[1].upper() == "MAILER-DAEMON":
        return None
    try:
        return datetime.strptime(" ".join(parts[-5:]), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
    except ValueError:
        return None
