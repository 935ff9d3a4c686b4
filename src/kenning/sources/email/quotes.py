"""A message's new text: quoted replies removed, the signature split off.

Mail clients quote in a few recognisable ways; everything here is a line-based heuristic:

- ``> `` lines, with the attribution line before them (``On … wrote:``, ``X writes:``);
- an Outlook reply header, ``-----Original Message-----`` or a ``From: … Sent: …`` block, and
  Lotus Notes' ``Name / date / To: / cc: / Subject:`` block — everything after it is the quoted
  conversation (top posting);
- a forwarded message (``Forwarded by``, ``Forwarded message``, ``Begin forwarded message``) is
  content, not a quote: it is kept, and no reply header after it is cut;
- a mailing-list footer (a row of underscores and the list's name and address) is dropped.

The signature is what follows a ``-- `` line, or the few short lines after a sign-off such as
"Thanks," or "Best regards," at the end; it is returned separately because it tells who the
sender is (role, organisation, phone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FORWARD = re.compile(
    r"^\s*(?:-{3,}\s*Forwarded by\b|-{3,}\s*Forwarded message\s*-*|Begin forwarded message:"
    r"|-{3,}\s*Weitergeleitete Nachricht|-{3,}\s*Message transféré)", re.IGNORECASE)
_ORIGINAL = re.compile(
    r"^\s*-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine"
    r"|Mensaje original|Messaggio originale)\s*-{2,}\s*$", re.IGNORECASE)
_HEADER_FROM = re.compile(r"^\s*\*?(?:From|Von|De|Da)\s*:\*?\s+\S", re.IGNORECASE)
_HEADER_NEXT = re.compile(r"^\s*\*?(?:Sent|Date|Gesendet|Envoyé|Enviado|To|Subject|Betreff)"
                          r"\s*:", re.IGNORECASE)
_NOTES_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*[AP]M\b",
                         re.IGNORECASE)
_NOTES_TO = re.compile(r"^\s*To:\s*\S", re.IGNORECASE)
_NOTES_SUBJECT = re.compile(r"^\s*(?:cc|bcc|Subject):", re.IGNORECASE)
_ATTRIBUTION = re.compile(r"(?:wrote|writes|schrieb|a écrit|escribió|scrisse)\s*:\s*$",
                          re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"^\s*(?:On|Am|Le|El|Il)\s", re.IGNORECASE)
_SIGN_OFF = re.compile(
    r"^\s*(?:thanks(?: again| so much| a lot)?|thank you|many thanks|thx|cheers|regards"
    r"|best|best regards|kind regards|warm regards|warmest regards|best wishes|sincerely"
    r"|yours(?: truly| sincerely)?|all the best|talk soon|take care|ciao|br|mfg"
    r"|viele grüße|liebe grüße|cordialement|saludos)\s*[,.!]*\s*$", re.IGNORECASE)
_LIST_FOOTER_RULE = re.compile(r"^_{20,}\s*$")

SIGNATURE_LINES = 8  # at most this many signature lines are kept


@dataclass(frozen=True)
class Split:
    text: str  # the new text
    signature: str  # the signature lines joined by newlines ("" when none)
    quoted: int  # how many quoted lines were removed


def split_message(text: str) -> Split:
    lines = [line if line == "-- " else line.rstrip()
             for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = _drop_list_footer(lines)
    before = sum(1 for ln in lines if ln.strip())
    lines = _drop_quoted(_cut_reply_header(lines))
    quoted = before - sum(1 for ln in lines if ln.strip())
    body, signature = _split_signature(lines)
    body_text = _tidy(body)
    sig = "\n".join(ln.strip() for ln in signature if ln.strip())
    return Split(body_text, sig, quoted)


def _first_forward(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        if _FORWARD.match(line):
            return i
    return len(lines)


def _cut_reply_header(lines: list[str]) -> list[str]:
    """Cut at the first reply header before any forwarded message (top-posted quote)."""
    limit = _first_forward(lines)
    for i in range(limit):
        line = lines[i]
        if _ORIGINAL.match(line):
            return lines[:i]
        if _HEADER_FROM.match(line) and _followed_by_header(lines, i):
            return lines[:i]
        if _NOTES_TO.match(line) and any(_NOTES_SUBJECT.match(x) for x in lines[i + 1:i + 4]):
            start = _notes_block_start(lines, i)
            if start is not None:
                return lines[:start]
    return lines


def _followed_by_header(lines: list[str], i: int) -> bool:
    nxt = [x for x in lines[i + 1:i + 5] if x.strip()]
    return len(nxt) >= 2 and sum(bool(_HEADER_NEXT.match(x)) for x in nxt[:3]) >= 2


def _notes_block_start(lines: list[str], to_line: int) -> int | None:
    """Lotus Notes: 'Name' / 'date time' (or both on one line) just above 'To:'."""
    above = [j for j in range(to_line - 1, max(-1, to_line - 5), -1) if lines[j].strip()][:2]
    for j in above:
        if _NOTES_DATE.search(lines[j]):
            if (j >= 1 and lines[j - 1].strip() and not _NOTES_DATE.search(lines[j - 1])
                    and not _HEADER_FROM.match(lines[j])):
                return j - 1
            return j
    return None


def _drop_quoted(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">"):
            i += 1
            continue
        if _ATTRIBUTION.search(line) and _next_is_quote(lines, i):
            # "On Mon, 1 Jan 2001, Ana <a@x>\nwrote:" wraps over two lines in many clients.
            if (out and out[-1].strip() and _ATTRIBUTION_START.match(out[-1])
                    and not _ATTRIBUTION_START.match(line)):
                out.pop()
            i += 1
            continue
        out.append(line)
        i += 1
    return out


def _next_is_quote(lines: list[str], i: int) -> bool:
    for line in lines[i + 1:]:
        if line.strip():
            return line.lstrip().startswith(">")
    return True  # an attribution at the very end introduces a quote that was cut


def _drop_list_footer(lines: list[str]) -> list[str]:
    for i in range(len(lines) - 1, max(-1, len(lines) - 8), -1):
        if _LIST_FOOTER_RULE.match(lines[i]):
            tail = " ".join(lines[i + 1:]).lower()
            if "mailing list" in tail or "listinfo" in tail or "unsubscribe" in tail:
                return lines[:i]
    return lines


def _split_signature(lines: list[str]) -> tuple[list[str], list[str]]:
    limit = _first_forward(lines)
    for i in range(min(limit, len(lines)) - 1, -1, -1):
        if lines[i] in ("-- ", "--") and i > 0:
            sig = [x for x in lines[i + 1:] if x.strip()]
            if sig and (lines[i] == "-- " or len(sig) <= 2 * SIGNATURE_LINES):
                return lines[:i], sig[:SIGNATURE_LINES]
    # A sign-off line near the end followed by a few short lines (name, role, company).
    content = [i for i in range(min(limit, len(lines))) if lines[i].strip()]
    if limit < len(lines):
        return lines, []
    for pos in range(len(content) - 2, max(-1, len(content) - 9), -1):
        i = content[pos]
        if _SIGN_OFF.match(lines[i]):
            tail = [lines[j] for j in content[pos + 1:]]
            if tail and len(tail) <= 6 and all(len(x.strip()) <= 70 for x in tail):
                return lines[:i + 1], tail
            break
    return lines, []


def _tidy(lines: list[str]) -> str:
    text = "\n".join(lines).strip("\n")
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()
