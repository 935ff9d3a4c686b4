"""Chat and agent sessions → ``sources/chats/``: one Markdown file per session.

Inputs (a file, or a folder searched recursively for ``*.json``, ``*.jsonl`` and ``*.ndjson``);
the format is recognised by content, not by name:

- **Claude Code** session JSONL (``~/.claude/projects/<project>/<session>.jsonl``): one JSON
  object per line (``type`` user / assistant / summary / system …, ``message`` with ``role`` and
  ``content``, ``uuid``, ``sessionId``, ``timestamp``, ``cwd``, ``gitBranch``). One source per
  file. Tool calls are summarized on one line — ``used Bash: `pytest -q` → ok (12 lines):
  `3 passed``` — thinking is left out, and lines that are not conversation (file-history
  snapshots, meta messages, sidechain work of subagents inside a main session) are skipped. A
  session file that grows is re-read and only its new lines are appended (entries are keyed by
  the line's ``uuid``; a tool call is keyed by its ``tool_use`` id). A tool result that arrives
  after its call was written is appended as its own ``tool`` line.
- **ChatGPT** ``conversations.json`` export: a list of conversations (``title``,
  ``create_time``, ``mapping`` of nodes, ``current_node``). The shown branch is walked from
  ``current_node`` up through ``parent``; system, hidden and empty messages, reasoning and
  custom-instruction nodes are skipped; tool calls and tool output are summarized.
- **LoCoMo** conversations (``sample_id``, ``conversation`` with ``speaker_a``, ``speaker_b``,
  ``session_<n>`` turns and ``session_<n>_date_time``): one source per session. The title and the
  turn lines are those of :mod:`kenning.evaluate.locomo` (one definition of the format):
  ``- **Caroline** (D1:3): text [image: caption]``.
- **Generic** JSON / JSONL, for anything else (a script can write it):

  - a JSON list of messages, or
  - a JSON object ``{"id"?, "title"?, "participants"?, "messages": [...]}``, or
  - a JSON list of such objects (several sessions in one file), or
  - JSONL: one message object per line (one session per file).

  A message is an object with ``speaker`` or ``role`` (the name shown), ``text`` or ``content``
  (a string, or a list of ``{"type": "text", "text": ...}`` blocks), and optionally
  ``timestamp`` (ISO 8601, or epoch seconds / milliseconds) and ``id`` (the entry key; without
  it the message's position is its key, so a JSONL log may grow at its end). The source id is
  ``id`` when given, else a hash of the title and the first message.

Every source file (frontmatter written by :class:`~kenning.sources.store.SourceStore` plus
``source_format``, ``session_id``, ``started``, ``ended``, ``participants``, ``turns``, ``model``
and, for Claude Code, ``project``, ``cwd``, ``git_branch``, ``tool_calls``) has one list item per
turn::

    - **user** (10:02): first line of the message
      further lines, indented two spaces, so the turn stays one list item

    - **assistant** (10:02): used Bash: `pytest -q` → ok (12 lines): `12 passed in 0.4s`

A turn header always starts a line with ``- **``; every other line of a turn is indented (or
blank), so a citation ``path#Lstart-Lend`` covers exactly the turns it names. Times are
``HH:MM`` in the time zone the input recorded (UTC for Claude Code and ChatGPT), with the date
in front when it is not the session's date. A turn longer than :data:`TURN_CAP` characters is cut
and ends with ``… [cut: N characters in all]``; a code fence left open is closed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenning.evaluate.locomo import parse_session_date, session_numbers, session_title, turn_line
from kenning.sources.store import (
    Entry,
    Progress,
    SourceDoc,
    SourceStore,
    SyncError,
    SyncReport,
)

CONNECTOR = "chats"
# The renderer version (see SourceStore): 2 keeps the turns around a node a ChatGPT export
# lacks; files written by 1 are re-rendered from their input on the next sync.
RENDERER = 2
TURN_CAP = 4000  # characters of one turn's text; the rest is cut, with a note
SAVE_EVERY = 200  # source files between state saves
SUFFIXES = (".json", ".jsonl", ".ndjson")
# A JSONL line longer than this is skipped unread (a Claude Code line with a pasted image is a
# few MB; one of 16 MB is not a chat turn, and parsing it costs ten times its size in memory).
MAX_LINE_CHARS = 16 * 1024 * 1024
TITLE_WORDS = 10
CLAUDE_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot",
                "queue-operation", "progress"}
CHATGPT_SKIPPED = {"thoughts", "reasoning_recap", "user_editable_context",
                   "model_editable_context"}
EXPECTED = ("expected a Claude Code session (JSONL lines with 'type' and 'message'), a ChatGPT "
            "export (a list of conversations with 'mapping'), LoCoMo samples ('conversation' "
            "with 'speaker_a' and session_<n> lists) or generic chat messages (a list of "
            "{speaker|role, text|content}, an object with 'messages', or JSONL of messages)")


@dataclass
class Turn:
    """One entry of a session before rendering."""

    key: str
    speaker: str = ""
    text: str = ""
    when: datetime | None = None
    line: str | None = None  # already rendered (LoCoMo)
    counts: bool = True  # a turn of the conversation (tool results and markers are not)


@dataclass
class Session:
    source_id: str
    title: str
    source_format: str
    turns: list[Turn]
    fields: dict[str, Any] = field(default_factory=dict)
    header: str = ""
    date: str | None = None  # when no turn has a time (LoCoMo)
    name: str | None = None


# -- entry point ---------------------------------------------------------------------------------


def sync(root: Path, target: Path | str, *, progress: Progress | None = None) -> SyncReport:
    """Sync one chat file or every ``*.json`` / ``*.jsonl`` / ``*.ndjson`` under a folder."""
    root, target = Path(root), Path(target)
    if not target.exists():
        raise SyncError(f"{target}: no such file or folder")
    report = SyncReport(CONNECTOR)
    if target.is_dir():
        files = sorted(p for p in target.rglob("*")
                       if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            report.warn(str(target), "no .json, .jsonl or .ndjson files in this folder")
    else:
        files = [target]
    with SourceStore(root, CONNECTOR, renderer=RENDERER) as store:
        if store.load_warning:
            report.warn(str(store.state_path), store.load_warning)
        unsaved = 0
        for done, path in enumerate(files):
            if progress:
                progress(done, len(files), path.name)
            unsaved += _sync_file(store, path, report)
            if unsaved >= SAVE_EVERY:
                store.save()
                unsaved = 0
        if progress:
            progress(len(files), len(files), "")
    return report


def _sync_file(store: SourceStore, path: Path, report: SyncReport) -> int:
    """Sync one input file; returns how many sources were put."""
    try:
        stat = path.stat()
    except OSError as exc:
        report.warn(str(path), f"cannot read ({exc.strerror or exc})")
        return 0
    key = str(path.resolve())
    # An input whose size and mtime are unchanged gives the same sources: skip reading it,
    # unless a person deleted one of its files (then it is written again).
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    if store.input_unchanged(key, stamp, report) is not None:
        return 0
    warned, read = len(report.warnings), report.items_read
    try:
        sessions = _read(store, path, report)
    except (*_SHAPE_ERRORS, MemoryError) as exc:
        # A shape no reader expected: this file is skipped, the folder's other files sync.
        report.warn(str(path), f"could not be read ({_error(exc)}); skipped")
        sessions = []
    for session in sessions:
        doc = _doc(session)
        doc.origin = str(path)
        store.put(doc, report)
        report.items_read += sum(1 for t in session.turns if t.counts)
    store.remember_input(key, stamp, [s.source_id for s in sessions],
                         read=report.items_read - read, warnings=report.warnings[warned:])
    return len(sessions)


# Errors a reader can meet on a value of an unexpected type deep in an input: they skip the
# item (a line, a conversation, a session) they happened in, never the file or the folder.
_SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_clip(_one_line(exc), 160)}"


# -- reading and recognising a file --------------------------------------------------------------


def _read(store: SourceStore, path: Path, report: SyncReport) -> list[Session]:
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        report.warn(where, f"cannot read ({exc.strerror or exc})")
        return []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        report.warn(where, f"not valid UTF-8 at byte {exc.start}; undecodable bytes replaced")
        text = raw.decode("utf-8-sig", errors="replace")
    if not text.strip():
        report.warn(where, "empty file; nothing to sync")
        return []
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return _read_lines(store, path, text, report)
    try:
        data = _loads(text)
    except ValueError as exc:
        if _looks_like_lines(text):
            return _read_lines(store, path, text, report)
        report.warn(where, f"not valid JSON ({_json_error(exc)}); {EXPECTED}")
        return []
    kind = _classify(data)
    if kind == "chatgpt":
        return _chatgpt(path, data, report)
    if kind == "locomo":
        return _locomo(path, data, report)
    if kind == "generic":
        return _generic_json(path, data, report)
    report.warn(where, f"JSON of an unknown shape ({_shape(data)}); {EXPECTED}")
    return []


def _loads(text: str) -> Any:
    """``json.loads``, with nesting too deep for the parser raised as a ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None


def _looks_like_lines(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    if len(first) > MAX_LINE_CHARS:
        return False
    try:
        return isinstance(_loads(first), dict) and len(text.strip().splitlines()) > 1
    except ValueError:
        return False


def _json_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    return str(exc)


def _shape(data: object) -> str:
    if isinstance(data, dict):
        keys = ", ".join(sorted(map(str, data))[:8])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(data, list):
        if not data:
            return "an empty list"
        first = data[0]
        if isinstance(first, dict):
            return f"a list of objects with keys {', '.join(sorted(map(str, first))[:8])}"
        return f"a list of {type(first).__name__}"
    return f"a {type(data).__name__}"


def _is_message(value: object) -> bool:
    return (isinstance(value, dict) and ("speaker" in value or "role" in value)
            and ("text" in value or "content" in value))


def _classify(data: object) -> str | None:
    items = [data] if isinstance(data, dict) else data if isinstance(data, list) else []
    first = next((x for x in items if isinstance(x, dict)), None)
    if first is None:
        return None
    if isinstance(first.get("mapping"), dict):
        return "chatgpt"
    conversation = first.get("conversation")
    if isinstance(conversation, dict) and ("speaker_a" in conversation
                                           or session_numbers(conversation)):
        return "locomo"
    if isinstance(first.get("messages"), list) or (isinstance(data, list) and _is_message(first)):
        return "generic"
    return None


def _read_lines(store: SourceStore, path: Path, text: str,
                report: SyncReport) -> list[Session]:
    where = str(path)
    records: list[tuple[int, dict[str, Any]]] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            report.warn(where, f"line {number}: {len(line):,} characters, more than a chat line "
                               f"holds ({MAX_LINE_CHARS:,}); skipped")
            continue
        try:
            value = _loads(line)
        except ValueError as exc:
            if number == len(lines) and not text.endswith("\n"):
                report.warn(where, f"line {number}: incomplete last line (is the file still "
                                   "being written?); left for the next sync")
            else:
                report.warn(where, f"line {number}: not valid JSON ({_json_error(exc)}); "
                                   "skipped")
            continue
        if not isinstance(value, dict):
            report.warn(where, f"line {number}: not a JSON object; skipped")
            continue
        records.append((number, value))
    if not records:
        if not report.warnings or not report.warnings[-1].startswith(where):
            report.warn(where, "no JSON objects; nothing to sync")
        return []
    if any(r.get("type") in CLAUDE_TYPES and ("message" in r or "summary" in r
                                              or "sessionId" in r) for _, r in records):
        return _claude(store, path, records, report)
    if any(_is_message(r) for _, r in records):
        return _generic_messages(path, {}, [(f"line {n}", r) for n, r in records], report,
                                 "generic-jsonl")
    report.warn(where, f"JSONL of an unknown shape (first line: "
                       f"{_shape(records[0][1])}); {EXPECTED}")
    return []


# -- Claude Code ---------------------------------------------------------------------------------


def _claude(store: SourceStore, path: Path, records: list[tuple[int, dict[str, Any]]],
            report: SyncReport) -> list[Session]:
    talk = ("user", "assistant")
    main = [(n, r) for n, r in records if not r.get("isSidechain")]
    sidechain = not any(r.get("type") in talk for _, r in main)
    if sidechain:
        main = records
    session_id = next((str(r["sessionId"]) for _, r in main if r.get("sessionId")), "")
    stem = path.stem
    source_id = f"claude-code:{stem}" if not session_id or stem == session_id \
        else f"claude-code:{session_id}/{stem}"
    record = store.known(source_id)
    known = set(record["keys"]) if record else set()

    results: dict[str, dict[str, Any]] = {}
    for _, r in main:
        for block in _blocks(r):
            if block.get("type") == "tool_result" and block.get("tool_use_id"):
                results.setdefault(str(block["tool_use_id"]), block)

    turns: list[Turn] = []
    calls: dict[str, str] = {}  # tool_use id → tool name
    models: list[str] = []
    branches: list[str] = []
    cwd = ""
    version = ""
    title = ""
    uuids: set[str] = set()
    summaries: list[tuple[str, str]] = []
    for number, r in main:
        try:
            kind = r.get("type")
            if kind == "summary" and isinstance(r.get("summary"), str):
                summaries.append((str(r.get("leafUuid") or ""), r["summary"]))
                continue
            uuid = str(r.get("uuid") or f"line:{number}")
            uuids.add(uuid)
            when = _timestamp(r.get("timestamp"))
            if kind in talk:
                cwd = cwd or str(r.get("cwd") or "")
                version = version or str(r.get("version") or "")
                if r.get("gitBranch"):
                    branches.append(str(r["gitBranch"]))
            if kind == "system":
                if r.get("subtype") == "compact_boundary":
                    turns.append(Turn(uuid, "system", "context compacted: earlier turns were "
                                      "summarized for the model", when, counts=False))
                continue
            if kind not in talk or r.get("isMeta") or r.get("isCompactSummary"):
                continue
            message = r.get("message") if isinstance(r.get("message"), dict) else {}
            content = message.get("content")
            if kind == "assistant":
                model = message.get("model")
                if isinstance(model, str) and model and not model.startswith("<"):
                    models.append(model)
            texts: list[str] = [content] if isinstance(content, str) else []
            parts: list[Turn] = []  # tool calls and results, after the line's text
            for i, block in enumerate(_blocks(r)):
                btype = block.get("type")
                if btype == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif btype in ("image", "document"):
                    texts.append(f"[{btype}]")
                elif btype == "tool_use":
                    tid = str(block.get("id") or f"{uuid}:{i}")
                    name = str(block.get("name") or "a tool")
                    calls[tid] = name
                    line = _tool_call(name, block.get("input"))
                    if tid in results and tid not in known:
                        line += " → " + _result_summary(results[tid])
                    parts.append(Turn(tid, "assistant", line, when))
                elif btype == "tool_result":
                    tid = str(block.get("tool_use_id") or f"{uuid}:{i}")
                    if tid in calls and tid not in known:
                        # Its call is new in this sync and carries the result; the key is kept so
                        # a later sync knows the result was written.
                        parts.append(Turn(f"result:{tid}", counts=False))
                    else:
                        name = calls.get(tid, "tool")
                        parts.append(Turn(f"result:{tid}", "tool",
                                          f"{name} → {_result_summary(block)}", when, counts=False))
            text = "\n\n".join(t for t in texts if t.strip())
            if kind == "user":
                text, plain = _clean_user(text)
                if plain and not title:
                    title = _first_words(text)
            text = text.strip()
            if text:
                turns.append(Turn(uuid, kind, text, when))
            turns += parts
        except _SHAPE_ERRORS as exc:
            report.warn(str(path), f"line {number}: unexpected shape ({_error(exc)}); skipped")
    if not any(t.counts for t in turns):
        report.warn(str(path), "no conversation turns (only summaries, snapshots or meta "
                               "lines); nothing written")
        return []
    summary = next((s for leaf, s in summaries if leaf in uuids), None) or \
        next((s for _, s in summaries), None)
    title = _one_line(summary or title) or f"Claude Code session {session_id[:8] or stem}"
    fields: dict[str, Any] = {"session_id": session_id or stem}
    if cwd:
        fields["project"] = Path(cwd).name or cwd
        fields["cwd"] = cwd
    if branches:
        fields["git_branch"] = branches[0]
        distinct = list(dict.fromkeys(branches))
        if len(distinct) > 1:
            fields["git_branches"] = distinct
    if models:
        fields["model"] = max(dict.fromkeys(models), key=models.count)
        if len(set(models)) > 1:
            fields["models"] = list(dict.fromkeys(models))
    fields["tool_calls"] = len(calls)
    if version:
        fields["claude_code_version"] = version
    if sidechain:
        fields["sidechain"] = True
    where = f" in `{cwd}`" if cwd else ""
    if branches:
        where += f" on branch `{branches[0]}`"
    header = (f"Claude Code {'subagent ' if sidechain else ''}session{where}. Tool calls are "
              "summarized (tool, main argument, "
              "result size and first line); thinking is left out; times are UTC.")
    return [Session(source_id, title, "claude-code", turns, fields, header)]


def _blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_TAG = r"<{0}>(.*?)</{0}>"


def _tag(name: str, text: str) -> str | None:
    m = re.search(_TAG.format(name), text, re.S)
    return m[1].strip() if m else None


def _clean_user(text: str) -> tuple[str, bool]:
    """A user line's text, with slash commands and shell escapes summarized; and whether it is
    something the person typed (the title comes from the first such message)."""
    text = _REMINDER.sub("", text).strip()
    command = _tag("command-name", text)
    if command is not None:
        args = _tag("command-args", text) or ""
        return f"ran {_code(_one_line(f'{command} {args}'))}", False
    output = _tag("local-command-stdout", text)
    if output is not None:
        return f"command output → {_output_summary(output, False)}", False
    shell = _tag("bash-input", text)
    if shell is not None:
        return f"ran shell {_code(_clip(_one_line(shell), 160))}", False
    stdout = _tag("bash-stdout", text)
    if stdout is not None:
        stderr = _tag("bash-stderr", text) or ""
        return (f"shell output → {_output_summary(stdout or stderr, bool(stderr and not stdout))}",
                False)
    return text, bool(text) and not text.startswith("[Request interrupted")


_MAIN_ARGS = ("command", "file_path", "notebook_path", "path", "pattern", "url", "query",
              "description", "prompt", "skill", "plan")


def _tool_call(name: str, args: object) -> str:
    """``used Bash: `pytest -q``` — the tool and its main argument, on one line."""
    if not isinstance(args, dict) or not args:
        return f"used {name}"
    if isinstance(args.get("todos"), list):
        return f"used {name}: {len(args['todos'])} todo item(s)"
    main = next((args[k] for k in _MAIN_ARGS if isinstance(args.get(k), str) and args[k].strip()),
                None)
    line = _call_line(name, main if main is not None
                      else json.dumps(args, ensure_ascii=False, sort_keys=True))
    if isinstance(args.get("content"), str):  # Write
        line += f", {_count_lines(args['content'])} line(s) written"
    return line


def _call_line(name: str, argument: str) -> str:
    argument = argument.strip()
    if not argument:
        return f"used {name}"
    more = argument.count("\n")
    line = f"used {name}: {_code(_clip(argument.split(chr(10), 1)[0].strip(), 160))}"
    return line + (f" (+{more} line{'s' if more > 1 else ''})" if more else "")


def _result_summary(block: dict[str, Any]) -> str:
    return _output_summary(_content_text(block.get("content")), bool(block.get("is_error")))


def _output_summary(text: str, error: bool) -> str:
    """``ok (12 lines): `first line``` — never the whole output."""
    status = "error" if error else "ok"
    lines = text.strip("\n").split("\n") if text.strip() else []
    first = next((line.strip() for line in lines if line.strip()), "")
    if not first:
        return f"{status} (no output)"
    n = len(lines)
    return f"{status} ({n} line{'s' if n != 1 else ''}): {_code(_clip(first, 100))}"


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type"):
                    parts.append(f"[{block['type']}]")
        return "\n".join(parts)
    return ""


# -- ChatGPT -------------------------------------------------------------------------------------


def _chatgpt(path: Path, data: object, report: SyncReport) -> list[Session]:
    where = str(path)
    conversations = data if isinstance(data, list) else [data]
    sessions = []
    for number, conv in enumerate(conversations, 1):
        try:
            if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
                report.warn(where, f"conversation {number}: no 'mapping' of messages; skipped")
                continue
            label = f"conversation {number} ({_one_line(conv.get('title') or 'untitled')})"
            mapping: dict[str, Any] = conv["mapping"]
            node_id = conv.get("current_node")
            if node_id not in mapping:
                leaves = [k for k, v in mapping.items()
                          if isinstance(v, dict) and not v.get("children")]
                node_id = max(leaves, key=lambda k: _node_time(mapping[k]), default=None)
                if conv.get("current_node"):
                    report.warn(where, f"{label}: current_node is not in the mapping; the latest "
                                       "branch was used")
            gaps: list[str] = []
            chain = _branch(mapping, node_id, gaps.append)
            for gap in gaps:
                report.warn(where, f"{label}: {gap}")
            turns: list[Turn] = []
            models: list[str] = []
            for node_key in reversed(chain):
                node = mapping[node_key]
                msg = node.get("message") if isinstance(node, dict) else None
                if not isinstance(msg, dict):
                    continue
                turn = _chatgpt_turn(str(msg.get("id") or node_key), msg, models)
                if turn is not None:
                    turns.append(turn)
            if not any(t.counts for t in turns):
                report.warn(where, f"{label}: no messages on the shown branch; skipped")
                continue
            conv_id = str(conv.get("conversation_id") or conv.get("id") or hashlib.sha1(
                json.dumps([conv.get("title"), conv.get("create_time")]).encode()).hexdigest()[:16])
            title = _one_line(conv.get("title") or "") or next(
                (_first_words(t.text) for t in turns if t.speaker == "user"),
                "ChatGPT conversation")
            fields: dict[str, Any] = {"session_id": conv_id}
            model = (max(dict.fromkeys(models), key=models.count) if models
                     else conv.get("default_model_slug"))
            if model:
                fields["model"] = str(model)
            if len(set(models)) > 1:
                fields["models"] = list(dict.fromkeys(models))
            created = _timestamp(conv.get("create_time"))
            header = ("ChatGPT conversation (the branch shown in ChatGPT). Tool calls and tool "
                      "output are summarized; times are UTC.")
            session = Session(f"chatgpt:{conv_id}", title, "chatgpt", turns, fields, header)
            if created and not any(t.when for t in turns):
                session.date = created.date().isoformat()
                fields["started"] = _iso(created)
            sessions.append(session)
        except _SHAPE_ERRORS as exc:
            report.warn(where, f"conversation {number}: unexpected shape ({_error(exc)}); "
                               "skipped")
    return sessions


def _branch(mapping: dict[str, Any], node_id: object,
            warn: Callable[[str], None]) -> list[str]:
    """The node ids from ``node_id`` up to the root, following ``parent``.

    An export can lack a node that others point at (its ``parent`` or ``children`` name an id the
    mapping does not hold): the walk goes on at the node above the gap — the one whose
    ``children`` name the missing node or the node below it, else the latest node left dangling
    before it — so every turn around the gap survives, in order, and the gap is a warning.
    """
    chain: list[str] = []
    on_chain: set[str] = set()
    while isinstance(node_id, str) and node_id not in on_chain:
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            if not chain:
                break
            below = chain[-1]
            above = _above_gap(mapping, node_id, below, on_chain)
            warn(f"node {node_id!r} (the parent of {below!r}) is missing from the mapping; "
                 + ("the turns before and after it were joined" if above else
                    "no turns before it are in the export"))
            node_id = above
            continue
        chain.append(node_id)
        on_chain.add(node_id)
        parent = node.get("parent")
        if parent is None:
            # A root, unless another node lists this one as its child.
            parent = next((k for k, v in mapping.items() if isinstance(v, dict) and k not in
                           on_chain and node_id in (v.get("children") or [])), None)
            if parent is not None:
                warn(f"node {node_id!r} has no parent but is a child of {parent!r}; "
                     "followed the child link")
        node_id = parent
    return chain


def _above_gap(mapping: dict[str, Any], missing: str, below: str,
               on_chain: set[str]) -> str | None:
    """The node that continues a branch above a missing node (see :func:`_branch`)."""
    nodes = {k: v for k, v in mapping.items() if isinstance(v, dict) and k not in on_chain}
    for k, v in nodes.items():
        if missing in (v.get("children") or []) or below in (v.get("children") or []):
            return k
    # Nothing names the gap: the latest node before it whose own children are absent.
    limit = _node_time(mapping.get(below))
    dangling = [k for k, v in nodes.items()
                if all(c not in mapping for c in v.get("children") or [])
                and (not limit or _node_time(v) <= limit)]
    return max(dangling, key=lambda k: _node_time(nodes[k]), default=None)


def _node_time(node: object) -> float:
    msg = node.get("message") if isinstance(node, dict) else None
    value = msg.get("create_time") if isinstance(msg, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def _chatgpt_turn(key: str, msg: dict[str, Any], models: list[str]) -> Turn | None:
    author = msg.get("author") if isinstance(msg.get("author"), dict) else {}
    role = str(author.get("role") or "unknown")
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
    ctype = content.get("content_type")
    if role == "system" or meta.get("is_visually_hidden_from_conversation") \
            or ctype in CHATGPT_SKIPPED:
        return None
    text = _chatgpt_text(content)
    when = _timestamp(msg.get("create_time"))
    recipient = str(msg.get("recipient") or "all")
    if role == "assistant":
        if isinstance(meta.get("model_slug"), str):
            models.append(meta["model_slug"])
        if recipient != "all":
            return Turn(key, "assistant", _call_line(recipient, text), when)
    if role == "tool":
        name = str(author.get("name") or "tool")
        return Turn(key, "tool", f"{name} → {_output_summary(text, False)}", when, counts=False)
    if not text.strip():
        return None
    return Turn(key, role, text, when)


def _chatgpt_text(content: dict[str, Any]) -> str:
    parts = content.get("parts")
    if isinstance(parts, list):
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif "image" in str(part.get("content_type", "")):
                    out.append("[image]")
                else:
                    out.append(f"[{part.get('content_type') or 'attachment'}]")
        return "\n".join(p for p in out if p)
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


# -- LoCoMo --------------------------------------------------------------------------------------


_CLOCK = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\b", re.I)


def _locomo(path: Path, data: object, report: SyncReport) -> list[Session]:
    where = str(path)
    samples = data if isinstance(data, list) else [data]
    sessions = []
    for number, sample in enumerate(samples, 1):
        conv = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conv, dict):
            report.warn(where, f"sample {number}: no 'conversation' mapping; skipped")
            continue
        sample_id = _one_line(sample.get("sample_id") or f"sample-{number}")
        pair = [_one_line(conv.get(k) or "") for k in ("speaker_a", "speaker_b")]
        for n in session_numbers(conv):
            try:
                label = f"sample {sample_id} session {n}"
                turns: list[Turn] = []
                keys: set[str] = set()
                for i, turn in enumerate(conv[f"session_{n}"], 1):
                    if not isinstance(turn, dict):
                        report.warn(where, f"{label} turn {i}: not an object; skipped")
                        continue
                    dia_id, line = turn_line(turn)
                    key = dia_id or f"#{i}"
                    key = key if key not in keys else f"{key}#{i}"
                    keys.add(key)
                    turns.append(Turn(key, _one_line(turn.get("speaker") or ""), line=line))
                if not turns:
                    report.warn(where, f"{label}: no turns; skipped")
                    continue
                stamp = _one_line(conv.get(f"session_{n}_date_time") or "")
                day = parse_session_date(stamp)
                fields: dict[str, Any] = {"conversation": sample_id, "session": n}
                if day:
                    clock = _CLOCK.search(stamp)
                    fields["started"] = day if not clock else (
                        f"{day}T{int(clock[1]) % 12 + (12 if clock[3].lower() == 'p' else 0):02d}"
                        f":{clock[2]}:00")
                fields["session_date_time"] = stamp
                fields["participants"] = list(dict.fromkeys(
                    [p for p in pair if p] + [t.speaker for t in turns if t.speaker]))
                sessions.append(Session(
                    f"locomo:{sample_id}:session-{n}", session_title(conv, n), "locomo", turns,
                    fields, date=day,
                    name="-".join(p for p in (day, f"locomo-{sample_id}-session-{n}") if p)))
            except _SHAPE_ERRORS as exc:
                report.warn(where, f"sample {sample_id} session {n}: unexpected shape "
                                   f"({_error(exc)}); skipped")
    return sessions


# -- generic -------------------------------------------------------------------------------------


def _generic_json(path: Path, data: object, report: SyncReport) -> list[Session]:
    objects = [data] if isinstance(data, dict) else data if isinstance(data, list) else []
    if not any(isinstance(o, dict) and "messages" in o for o in objects):
        # A plain list of messages: one session.
        return _generic_messages(path, {}, [(f"message {i}", m) for i, m in
                                            enumerate(objects, 1)], report, "generic-json")
    sessions = []
    for number, obj in enumerate(objects, 1):
        prefix = f"session {number}: " if len(objects) > 1 else ""
        if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
            report.warn(str(path), f"{prefix}no 'messages' list; skipped")
            continue
        items = [(f"{prefix}message {i}", m) for i, m in enumerate(obj["messages"], 1)]
        sessions += _generic_messages(path, obj, items, report, "generic-json")
    return sessions


def _generic_messages(path: Path, meta: dict[str, Any], items: list[tuple[str, object]],
                      report: SyncReport, source_format: str) -> list[Session]:
    where = str(path)
    turns: list[Turn] = []
    keys: set[str] = set()
    first: object = None
    for position, (label, m) in enumerate(items, 1):
        if not isinstance(m, dict):
            report.warn(where, f"{label}: not an object; skipped")
            continue
        raw = m.get("text") if m.get("text") is not None else m.get("content")
        text = _generic_text(raw)
        if text is None:
            report.warn(where, f"{label}: 'text' or 'content' must be a string or a list of "
                               "{type: text, text} blocks; skipped")
            continue
        if not text.strip():
            report.warn(where, f"{label}: no text; skipped")
            continue
        speaker = _one_line(m.get("speaker") or m.get("role") or "")
        if not speaker:
            report.warn(where, f"{label}: no 'speaker' or 'role'; written as 'unknown'")
            speaker = "unknown"
        when = None
        if m.get("timestamp") not in (None, ""):
            when = _timestamp(m["timestamp"])
            if when is None:
                report.warn(where, f"{label}: unreadable timestamp {m['timestamp']!r}; "
                                   "written without a time")
        key = f"id:{m['id']}" if m.get("id") not in (None, "") else f"#{position}"
        if key in keys:
            key = f"{key}#{position}"
        keys.add(key)
        if first is None:
            first = [speaker, text, m.get("timestamp")]
        turns.append(Turn(key, speaker, text, when))
    if not turns:
        report.warn(where, "no messages with text; nothing written")
        return []
    title = _one_line(meta.get("title") or "") or _first_words(turns[0].text) or path.stem
    ident = meta.get("id")
    if ident in (None, ""):
        ident = hashlib.sha1(json.dumps([meta.get("title"), first], ensure_ascii=False,
                                        default=str).encode("utf-8", "surrogatepass")
                                        ).hexdigest()[:16]
    fields: dict[str, Any] = {"session_id": str(ident)}
    named = meta.get("participants")
    if isinstance(named, list):
        names = [_one_line(p.get("name") if isinstance(p, dict) else p) for p in named]
        fields["participants"] = list(dict.fromkeys(
            [n for n in names if n] + [t.speaker for t in turns]))
    return [Session(f"generic:{ident}", title, source_format, turns, fields)]


def _generic_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                return None
        return "\n".join(parts)
    return None


# -- rendering -----------------------------------------------------------------------------------


def _doc(session: Session) -> SourceDoc:
    times = [t.when for t in session.turns if t.when is not None]
    start = min(times, key=_sort_key) if times else None
    end = max(times, key=_sort_key) if times else None
    day = start.date().isoformat() if start else session.date
    entries = [Entry(t.key, t.line if t.line is not None else
                     (format_turn(t.speaker, _clock(t.when, day), t.text) if t.text else ""))
               for t in session.turns]
    fields: dict[str, Any] = {"source_format": session.source_format}
    if start and end:
        fields["started"] = _iso(start)
        fields["ended"] = _iso(end)
    fields["participants"] = list(dict.fromkeys(
        t.speaker for t in session.turns if t.counts and t.speaker))
    fields["turns"] = sum(1 for t in session.turns if t.counts)
    for key, value in session.fields.items():
        fields[key] = value
    header = session.header
    if any(len(t.text.strip()) > TURN_CAP for t in session.turns):
        header = (header + " " if header else "") + \
            f"Turns longer than {TURN_CAP:,} characters are cut (marked “[cut …]”)."
    return SourceDoc(kind="chat", source_id=session.source_id, title=session.title, date=day,
                     entries=entries, fields=fields, header=header, name=session.name)


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def format_turn(speaker: str, when: str, text: str) -> str:
    """One turn as one Markdown list item: ``- **speaker** (when): text``, further lines
    indented by two spaces; capped at :data:`TURN_CAP` characters; open code fences closed."""
    text = text.strip()
    note = ""
    if len(text) > TURN_CAP:
        cut = text[:TURN_CAP]
        stop = max(cut.rfind("\n"), cut.rfind(" "))
        if stop > TURN_CAP - 300:
            cut = cut[:stop]
        note = f"… [cut: {len(text):,} characters in all]"
        text = cut.rstrip()
    lines: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    fence = None
    for line in lines:
        m = _FENCE.match(line)
        if m and (fence is None or (m[1][0] == fence[0] and len(m[1]) >= len(fence))):
            fence = None if fence else m[1]
    if fence:
        lines.append(fence)
    if note:
        lines.append(note)
    head = f"- **{_one_line(speaker) or 'unknown'}**" + (f" ({when})" if when else "") + ":"
    if lines and not _FENCE.match(lines[0]):
        head = f"{head} {lines.pop(0).lstrip()}"
    return "\n".join([head.rstrip(), *(f"  {line}" if line else "" for line in lines)])


def _clock(when: datetime | None, day: str | None) -> str:
    if when is None:
        return ""
    clock = when.strftime("%H:%M")
    return clock if when.date().isoformat() == day else f"{when.date().isoformat()} {clock}"


# -- small helpers -------------------------------------------------------------------------------


def _timestamp(value: object) -> datetime | None:
    """ISO 8601 text or epoch seconds (milliseconds when huge) → datetime; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip()):
        value = float(value)
    if isinstance(value, int | float):
        seconds = float(value) / (1000 if value > 1e11 else 1)
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def _sort_key(when: datetime) -> tuple[float, str]:
    # Naive and aware times can meet in one generic file; naive ones are taken as UTC.
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    return aware.timestamp(), when.isoformat()


def _iso(when: datetime) -> str:
    text = when.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_words(text: str) -> str:
    line = next((ln for ln in text.strip().split("\n") if ln.strip()), "")
    words = line.split()
    title = " ".join(words[:TITLE_WORDS])
    return _clip(title, 80) + ("…" if len(words) > TITLE_WORDS and len(title) <= 80 else "")


def _code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``" if "``" not in text else f"`{text.replace('`', 'ʼ')}`"


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)
