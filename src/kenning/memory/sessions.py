"""Sessions: ``session_start`` loads what a new session needs within a token budget;
``session_close`` exports the transcript, records its explicit markers and writes the handoff
the next start loads.

Files: ``sessions/<project>/<stamp>-transcript.md`` and ``sessions/<project>/<stamp>-handoff.md``
(``<stamp>`` = ``YYYY-MM-DD-HHMMSS``, so names sort by time). State: ``.kenning/sessions.json``
keeps per project when the last session started and closed. Works with any client: nothing here
depends on one vendor's hooks.

Markers (deterministic; one per line, anywhere in any message, not inside code fences):

- ``DECISION: <what> [because <why>] [; rejected: <option> (<why>); <option> — <why>]``
  → ``record_decision`` (domain ``general``, name = the first words of <what>);
- ``REMEMBER: <text>`` → ``retain("W", text)``; ``W|B|O|S [(c=0.8)] [@Name …]: <text>`` →
  ``retain`` with that kind, confidence and mentions;
- ``TODO: <text>`` → the handoff's open items (and ``retain("B", "TODO: …")``).

With an ``llm:`` config (and a trusted, local caller), the model then reads the transcript and
proposes entities, relations, observations, decisions and retain items in the shapes ``record``,
``record_decision`` and ``retain`` accept; they are validated as a whole, cited to the transcript
line and listed in the handoff under their own heading (``kenning.memory.llm_assist``). A remote
caller's transcript is recorded from its explicit markers only.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.memory import write
from kenning.memory.common import (
    MemoryInputError,
    Problems,
    cite,
    link_to,
    load_state,
    now,
    read_journal,
    reindex,
    save_state,
    today,
    write_files,
    write_lock,
    write_page,
)
from kenning.recall.search import estimate_tokens
from kenning.vault import provenance
from kenning.vault.created import update_created
from kenning.vault.frontmatter import read as read_frontmatter
from kenning.vault.fsio import is_utf8_name
from kenning.vault.layout import slug
from kenning.vault.page import new_page, parse_page

if TYPE_CHECKING:
    from kenning.memory.common import Context

STATE = "sessions.json"
MAX_TRANSCRIPT = 8_000_000   # characters (the index skips files over 10 MB)
DEFAULT_PROJECT = "default"

_MARKER = re.compile(
    r"^(?P<key>DECISION|REMEMBER|TODO|[WBOSwbos](?:\([^)]*\))?(?:[ \t]+@\S+)*)[ \t]*:[ \t]*"
    r"(?P<text>\S.*)$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_LEAD = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:[-*+][ \t]+)?")


def tokens(text: str) -> int:
    """The token estimate every budget uses (about four bytes of UTF-8 a token)."""
    return estimate_tokens(text)


def _project(p: Problems, project: str | None) -> str:
    if project is None or project == "":
        return DEFAULT_PROJECT
    name = p.name("project", project)
    return slug(name) if name else DEFAULT_PROJECT


def _fit(text: str, budget: int, more: str) -> str:
    """``text`` cut at a line boundary to fit ``budget`` tokens, saying where the rest is."""
    if tokens(text) <= budget:
        return text
    note = f"\n… (cut to fit the budget; the rest is in {more})"
    room = max(0, budget * 4 - len(note.encode("utf-8")))
    cut = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rindex("\n")]
    return (cut.rstrip() + note) if room > 0 else ""


def _body(text: str) -> str:
    block = read_frontmatter(text)
    return text[block.body_offset:].strip() if not block.error else text.strip()


def _handoffs(ctx: Context, project: str) -> list[str]:
    folder = ctx.root / "sessions" / project
    if not folder.is_dir():
        return []
    return sorted(f"sessions/{project}/{f.name}" for f in folder.iterdir()
                  if f.name.endswith("-handoff.md") and is_utf8_name(f.name) and f.is_file())


def session_start(ctx: Context, project: str | None = None, *, budget: int = 2000
                  ) -> dict[str, Any]:
    """``memory.md``, the last handoff of ``project`` and the pages changed since it closed, as
    one text: ``{"project", "since"?, "handoff"?: its path, "text"}``, all of it (as compact
    JSON) within ``budget`` tokens."""
    p = Problems()
    slug = _project(p, project)
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 50:
        p.add("budget", f"{budget!r} must be a whole number of tokens, at least 50")
    p.raise_if_any()
    reindex(ctx)
    state = load_state(ctx.root, STATE).get(slug, {})
    memory_path = ctx.root / "memory.md"
    memory = _body(memory_path.read_text(encoding="utf-8")) if memory_path.is_file() else ""
    handoffs = _handoffs(ctx, slug)
    handoff = None
    if handoffs:
        rel = handoffs[-1]
        handoff = {"path": rel, "text": _body((ctx.root / rel).read_text(encoding="utf-8"))}
    since = state.get("closed")
    changed = _changed(ctx, state.get("closed_clock"))
    # What remote callers wrote is shown as theirs: the next agent reads it as data.
    ledger = provenance.Ledger(ctx.root)
    if ledger:
        memory = provenance.mark_markdown("memory.md", memory, ledger)
        if handoff:
            handoff["text"] = provenance.mark_markdown(handoff["path"], handoff["text"], ledger)
        for c in changed:
            if ledger.page(c["path"]):
                c["title"] = provenance.MARK + c["title"]
                c["untrusted"] = True
            elif ledger.lines.get(c["path"]):
                c["changed"] += "; has lines a remote caller wrote"

    # Budget: the handoff is the most specific, then core memory, then the list of changes.
    head = f"# Session start — {slug} — {now().isoformat(sep=' ', timespec='minutes')}\n"
    sections: list[tuple[str, str, str, float]] = [
        ("## Last handoff" + (f" ({handoff['path']})" if handoff else ""),
         handoff["text"] if handoff else "(no handoff yet for this project)",
         handoff["path"] if handoff else "sessions/", 0.45),
        ("## Core memory (memory.md)", memory or "(memory.md is empty)", "memory.md", 0.35),
        ("## Changed since the last session" + (f" ({since})" if since else ""),
         "\n".join(f"- {c['path']} — {c['title']} ({c['changed']})" for c in changed)
         or "(nothing changed)", "`kenning search --since`", 0.2),
    ]
    # The answer carries each part once, in its text; the budget counts the whole answer as
    # sent (JSON escapes and the fields around the text included).
    answer: dict[str, Any] = {"project": slug, **({"since": since} if since else {}),
                              **({"handoff": handoff["path"]} if handoff else {}), "text": ""}
    room = budget - _sent_tokens(answer)
    while True:
        answer["text"] = _start_text(head, sections, room)
        over = _sent_tokens(answer) - budget
        if over <= 0 or room <= 0:
            break
        room -= max(over, 1)
    with write_lock(ctx.root):
        all_state = load_state(ctx.root, STATE)
        all_state.setdefault(slug, {})["started"] = now().isoformat()
        save_state(ctx.root, STATE, all_state)
    return answer


def _sent_tokens(answer: dict[str, Any]) -> int:
    """What ``answer`` costs as sent (compact JSON, like ``kenning.answers``)."""
    return tokens(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))


def _start_text(head: str, sections: list[tuple[str, str, str, float]], budget: int) -> str:
    """The session-start text within ``budget`` tokens: each section its share, what one
    leaves unused goes to the next."""
    left = budget - tokens(head)
    parts = [head]
    spare = 0
    for i, (title, text, where, share) in enumerate(sections):
        room = int(left * share) + spare
        if i == len(sections) - 1:
            room = left - sum(tokens(x) for x in parts[1:])
        block = f"\n{title}\n\n" + text.strip() + "\n"
        if tokens(block) > room:
            block = _fit(block, max(room, 0), where)
        spare = max(0, room - tokens(block))
        if block:
            parts.append(block)
    out = "".join(parts)
    if tokens(out) > budget:
        out = _fit(out, max(budget, 0), "the files above")
    return out


def _changed(ctx: Context, since: float | None, limit: int = 30) -> list[dict[str, Any]]:
    """Pages whose files changed after ``since`` (epoch seconds), newest first, from the index;
    without ``since``, the most recently changed pages."""
    import datetime as dt

    from kenning.index.queries import memory as queries

    since_ns = int(since * 1e9) if isinstance(since, int | float) else None
    try:
        rows = queries.changed_pages(ctx.store, since_ns, limit if since else 10)
    except Exception:  # a missing or broken index only loses this list
        return []
    return [{"path": r[0], "title": r[1],
             "changed": dt.datetime.fromtimestamp(r[2] / 1e9).isoformat(timespec="minutes")}
            for r in rows]


# -- close -------------------------------------------------------------------------------------


def _messages(p: Problems, transcript: Any) -> list[tuple[str, str]]:
    if isinstance(transcript, str):
        if "\x00" in transcript:
            p.add("transcript", "contains a NUL byte")
        if len(transcript) > MAX_TRANSCRIPT:
            p.add("transcript", f"is {len(transcript):,} characters (at most {MAX_TRANSCRIPT:,})")
        return [("", transcript)]
    if not isinstance(transcript, list):
        p.add("transcript", "must be text or a list of {role, content} messages")
        return []
    out, size = [], 0
    for i, msg in enumerate(transcript):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str):
            p.add(f"transcript[{i}]", "must be an object with text 'content' (and 'role')")
            continue
        role = msg.get("role", "")
        if not isinstance(role, str) or "\n" in role or len(role) > 40:
            p.add(f"transcript[{i}].role", "must be a short one-line name")
            continue
        if "\x00" in msg["content"]:
            p.add(f"transcript[{i}].content", "contains a NUL byte")
        size += len(msg["content"])
        out.append((role, msg["content"]))
    if size > MAX_TRANSCRIPT:
        p.add("transcript", f"is {size:,} characters (at most {MAX_TRANSCRIPT:,})")
    return out


def _render(messages: list[tuple[str, str]], header: str, *, inert: bool = False
            ) -> tuple[str, list[tuple[int, str]]]:
    """The transcript page, every message line quoted (so no line in it reads as a section,
    a fact or a marker of the page itself), and (file line, original line) of each message
    line for citations.

    ``inert`` (a remote caller's transcript) puts each message in a fenced block instead, so
    its ``[[links]]`` and Markdown links are text, not edges that would change ranking.
    """
    lines = header.rstrip("\n").split("\n")
    lines += ["", "## Transcript"]
    mapped: list[tuple[int, str]] = []
    for role, content in messages:
        lines.append("")
        if role:
            lines.append(f"**{role}:**")
            lines.append("")
        raws = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", content)), default=0))
        if inert:
            lines.append(fence + "text")
        for raw in raws:
            lines.append(raw if inert else ("> " + raw if raw else ">"))
            mapped.append((len(lines), raw))
        if inert:
            lines.append(fence)
    return "\n".join(lines) + "\n", mapped


def extract_markers(mapped: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """(line, key, text) of each explicit marker line, skipping fenced code."""
    out = []
    fenced = False
    for line, raw in mapped:
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        if fenced:
            continue
        body = _LEAD.sub("", raw, count=1).strip()
        m = _MARKER.match(body)
        if m:
            out.append((line, m.group("key"), m.group("text").strip()))
    return out


_BECAUSE = re.compile(r"\s+because\s+", re.I)
_REJECTED = re.compile(r"[;.]?\s*\brejected\s*:\s*", re.I)


def parse_decision(text: str) -> dict[str, Any]:
    """``<what> [because <why>] [; rejected: a (why); b — why]`` → the decision's parts."""
    m = _REJECTED.search(text)
    main, rest = (text[: m.start()], text[m.end():]) if m else (text, "")
    parts = _BECAUSE.split(main, maxsplit=1)
    decided = parts[0].strip().rstrip(".;")
    because = parts[1].strip() if len(parts) > 1 else ""
    rejected = []
    for part in filter(None, (s.strip() for s in rest.split(";"))):
        m = re.match(r"(?P<o>.+?)\s*\((?P<w>.+)\)\s*\.?$", part) or re.match(
            r"(?P<o>.+?)\s+(?:—|–|-|:)\s+(?P<w>.+)$", part)
        if m:
            rejected.append({"option": m.group("o").strip(), "why": m.group("w").strip()})
        else:
            rejected.append({"option": part.rstrip(".")})     # no why stated
    words = decided.split()
    name = " ".join(words[:8]).rstrip(".,;:")
    return {"name": name or "Decision", "decided": decided,
            "because": because.rstrip(".") + "." if because else
            "Not stated in the session; see the transcript.", "rejected": rejected}


def session_close(ctx: Context, transcript: str | list[dict[str, Any]], *,
                  project: str | None = None, summary: str | None = None,
                  trusted: bool = True, key: str | None = None) -> dict[str, Any]:
    """Write the transcript, run the marker writes, and write the handoff.

    A remote caller's (``trusted=False``) transcript cannot add links, and its markers write
    with the same limits as that caller's own record/retain calls. The same close repeated on
    the same day (a retry: same transcript, project and summary) returns the first result and
    writes nothing; so does a repeated ``key`` (an idempotency key).
    """
    from kenning.memory import idempotency as idem

    p = Problems()
    slug = _project(p, project)
    messages = _messages(p, transcript)
    note = p.text("summary", summary, required=False)
    given = idem.check_key(p, key)
    p.raise_if_any()
    fingerprint = idem.digest("session_close", [slug, messages, note, trusted])
    # Without a key, the call itself is the key, for the day: a retried close is the same one.
    given = given if given is not None else f"auto:{today()}:{fingerprint}"
    with write_lock(ctx.root):
        if (done := idem.replay(ctx.root, given, "session_close", fingerprint)):
            return {**done, **reindex(ctx)}
    moment = now()
    stamp = moment.strftime("%Y-%m-%d-%H%M%S")
    folder = f"sessions/{slug}"
    tpath, hpath = f"{folder}/{stamp}-transcript.md", f"{folder}/{stamp}-handoff.md"
    n = 2
    while (ctx.root / tpath).exists() or (ctx.root / hpath).exists():
        tpath, hpath = f"{folder}/{stamp}-{n}-transcript.md", f"{folder}/{stamp}-{n}-handoff.md"
        n += 1
    header = new_page(title=f"Session {moment.isoformat(sep=' ', timespec='minutes')} — {slug}",
                      frontmatter={"type": "session", "project": slug, "date": today(),
                                   "closed": moment.isoformat()})
    text, mapped = _render(messages, header, inert=not trusted)
    with write_lock(ctx.root):
        state = load_state(ctx.root, STATE).get(slug, {})
        write_page(ctx.root, tpath, text)
        update_created(ctx.root, add={tpath: "session_close"}, day=today())
    # What this session wrote: since it started, else since the last close, else today.
    since = state.get("started") or state.get("closed") or today()

    decisions: list[dict[str, Any]] = []
    retained: list[dict[str, Any]] = []
    todos: list[dict[str, Any]] = []
    errors: list[str] = []
    link = tpath[:-3]
    for line, key, body in extract_markers(mapped):
        where = cite(tpath, line)
        try:
            if key == "DECISION":
                parts = parse_decision(body)
                try:
                    result = write.record_decision(
                        ctx, parts["name"], "general", parts["decided"], parts["because"],
                        parts["rejected"], source=f"[[{link}#L{line}]]", trusted=trusted)
                except MemoryInputError as exc:
                    if not any(x.startswith("name:") for x in exc.problems):
                        raise
                    result = write.record_decision(
                        ctx, f"{parts['name']} ({stamp})", "general", parts["decided"],
                        parts["because"], parts["rejected"], source=f"[[{link}#L{line}]]",
                        trusted=trusted)
                decisions.append({"path": result["path"], "title": result["title"],
                                  "decided": parts["decided"], "from": where,
                                  "citation": result["citations"]["decided"]})
            elif key == "TODO":
                todos.append({"text": body, "from": where})
                result = write.retain(ctx, "B", f"TODO: {body}", trusted=trusted)
                retained.append({"kind": "B", "text": f"TODO: {body}", "from": where,
                                 "citation": result["citation"]})
            else:
                kind, text, ents, conf = "W", body, [], None
                if key != "REMEMBER":
                    item = parse_page(f"## Retain\n- {key}: {body}\n", "m.md").retain
                    if not item:
                        raise MemoryInputError([f"{key}: is not a retain bullet"])
                    kind, text = item[0].kind, item[0].text
                    ents, conf = list(item[0].entities), item[0].confidence
                result = write.retain(ctx, kind, text, ents, conf, trusted=trusted)
                retained.append({"kind": kind, "text": text, "from": where,
                                 "citation": result["citation"]})
        except KenningError as exc:
            errors.append(f"{where}: {key}: {exc.message}")

    markers = [d["decided"] for d in decisions] + [r["text"] for r in retained] + [
        t["text"] for t in todos]
    extracted, notes, failed = _extract_with_model(ctx, tpath, messages, mapped, markers,
                                                   trusted=trusted)
    errors += failed
    by_model = {f["citation"] for f in (extracted or {}).get("facts", [])}
    journal = read_journal(ctx.root, since)
    changes = [e for e in journal
               if e.get("op") in ("record", "revise", "invalidate", "note", "delete")
               and not (e.get("op") == "record" and e.get("citation") in by_model)]
    # Decisions recorded during the session (`decide`) are the session's decisions too; those
    # of this transcript's markers and of the model are listed already.
    listed = {d["path"] for d in decisions} | {
        d["path"] for d in (extracted or {}).get("decisions", [])}
    for e in journal:
        if e.get("op") == "decide" and e.get("path") not in listed:
            listed.add(e["path"])
            decided = str(e.get("text", ""))
            decisions.append({"path": e["path"], "title": _title(ctx, e["path"]),
                              "decided": provenance.MARK + decided if e.get("remote")
                              else decided, "citation": e.get("citation", "")})
    handoff = _handoff(ctx, slug, moment.isoformat(), tpath, note, messages, decisions,
                       retained, todos, changes, errors, extracted, notes)
    result = {"project": slug, "transcript": tpath, "handoff": hpath, "decisions": decisions,
              "retained": retained, "todos": todos, "changes": changes, "errors": errors,
              "extracted": extracted, "notes": notes}
    with write_lock(ctx.root):
        write_files(ctx.root, {hpath: handoff, **dict(
            [idem.entry(given, "session_close", fingerprint, result)])})
        idem.prune(ctx.root)
        update_created(ctx.root, add={hpath: "session_close"}, day=today())
        all_state = load_state(ctx.root, STATE)
        # "closed_clock": the real clock after every write of this session; "changed since"
        # compares it with file modification times.
        all_state[slug] = {**all_state.get(slug, {}), "closed": now().isoformat(),
                           "closed_clock": time.time(), "handoff": hpath}
        all_state[slug].pop("started", None)
        save_state(ctx.root, STATE, all_state)
    return {**result, **reindex(ctx)}


def _by_message(messages: list[tuple[str, str]], mapped: list[tuple[int, str]]
                ) -> list[tuple[str, list[tuple[int, str]]]]:
    """``mapped`` (file line, text) grouped by message, with each message's role."""
    out, at = [], 0
    for role, content in messages:
        count = len(content.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        out.append((role, mapped[at:at + count]))
        at += count
    return out


def _extract_with_model(ctx: Context, tpath: str, messages: list[tuple[str, str]],
                        mapped: list[tuple[int, str]], markers: list[str], *, trusted: bool
                        ) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """The optional LLM pass: (what it added or None, notes, errors). Never fatal: without a
    model, with an unusable answer or an unreachable server the markers' result stands."""
    from kenning.memory import llm_assist

    client, problem = llm_assist.client_for(ctx.root)
    if client is None:
        return None, ([f"LLM extraction skipped: {problem}"] if problem else []), []
    if not trusted:
        # The caller wrote this transcript: it is recorded with the caller's own trust (its
        # explicit markers), never turned into writes it did not ask for.
        return None, ["LLM extraction skipped: a remote caller's transcript is recorded from "
                      "its explicit markers only"], []
    view = llm_assist.transcript_view(_by_message(messages, mapped))
    if not "".join(view.lines.values()).strip():
        return None, [], []
    notes = []
    if view.omitted:
        notes.append(f"LLM extraction read transcript lines {view.first}–{view.last} only "
                     f"({view.total - view.omitted} of {view.total} lines): the transcript is "
                     f"over {llm_assist.MAX_TRANSCRIPT_CHARS:,} characters and its end was sent")
    reindex(ctx)
    names = llm_assist.known_names(ctx)
    check = llm_assist.ExtractionCheck(ctx, tpath, view, names, markers)
    request = llm_assist.extraction_request(view, tpath, names, markers)
    found, why, attempts = llm_assist.ask_extraction(client, check, request)
    if found is None:
        notes.append(f"LLM extraction skipped: {why}; only the explicit markers were recorded")
        return None, notes, []
    added, errors = llm_assist.apply_extraction(ctx, found, tpath)
    return {"model": client.config.model, "attempts": attempts, **added}, notes, errors


def _title(ctx: Context, path: str) -> str:
    try:
        return parse_page((ctx.root / path).read_text(encoding="utf-8"), path).title or path
    except (OSError, UnicodeDecodeError):
        return path


def _handoff(ctx: Context, slug: str, closed: str, tpath: str, note: str | None,
             messages: list[tuple[str, str]], decisions: list[dict[str, Any]],
             retained: list[dict[str, Any]], todos: list[dict[str, Any]],
             changes: list[dict[str, Any]], errors: list[str],
             extracted: dict[str, Any] | None = None, notes: list[str] | None = None) -> str:
    model_items = 0
    if extracted:
        model_items = sum(len(extracted[k]) for k in ("created", "facts", "decisions",
                                                       "retained"))
    summary = note or (
        f"Session of {len(messages)} message{'s' if len(messages) != 1 else ''}: "
        f"{len(decisions)} decision(s), {len(changes)} change(s) to pages, "
        f"{len(retained)} item(s) retained, {len(todos)} open TODO(s)"
        + (f", {model_items} item(s) added by the model." if extracted else "."))
    lines: list[str] = []

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.extend([f"## {title}", "", *items, ""])

    section("Open TODOs", [f"- [ ] {t['text']} ({t['from']})" for t in todos])
    section("Decisions", [f"- {link_to(d['path'], d['title'])}: {d['decided']} ({d['citation']})"
                          for d in decisions])
    if changes:
        lines += ["## Changes", ""]
        for c in changes:
            op, path = c.get("op"), str(c.get("path", ""))
            title = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if c.get("remote"):  # a remote caller's words, copied here: marked as theirs
                title = provenance.MARK + title
                path = provenance.MARK + path
            if op == "revise":
                lines.append(f"- Revised {path}: {c.get('old', '')!r} → {c.get('text', '')!r}"
                             f" ({c.get('citation', '')}); the old fact stays, superseded")
            elif op == "invalidate":
                lines.append(f"- Invalidated on {path}: {c.get('text', '')!r} — "
                             f"{c.get('reason', '')} ({c.get('citation', '')})")
            elif op == "delete":
                lines.append(f"- Deleted {path} (moved to {c.get('trash', '')})")
            else:
                lines.append(f"- {str(op).capitalize()} {title}: {c.get('text', '')} "
                             f"({c.get('citation', '')})")
        lines.append("")
    section("Retained", [f"- {r['kind']}: {r['text']} ({r['citation']})" for r in retained])
    if extracted:
        lines += [f"## Added by the model ({extracted['model']})", ""]
        lines += [f"- Created {link_to(path, _title(ctx, path))}"
                  for path in extracted["created"]]
        lines += [f"- {f['entity']}: {f['rel'] + ' ' if f.get('rel') else ''}{f['text']} "
                  f"({f['citation']})" for f in extracted["facts"]]
        lines += [f"- Decision {link_to(d['path'], d['title'])}: {d['decided']} "
                  f"({d['citation']})" for d in extracted["decisions"]]
        lines += [f"- Retained {r['kind']}: {r['text']} ({r['citation']})"
                  for r in extracted["retained"]]
        if not model_items:
            lines.append("- (nothing beyond the explicit markers)")
        lines += ["", "What the model extracted cites the transcript line it came from; its "
                  "facts are hypotheses unless that line records them as decided.", ""]
    section("Notes", [f"- {n}" for n in notes])
    section("Not recorded", [f"- {e}" for e in errors])
    body = "\n".join(lines)
    return new_page(
        title=f"Handoff — {slug} — {closed.replace('T', ' ')[:16]}",
        frontmatter={"type": "session", "project": slug, "closed": closed,
                     "transcript": f"[[{tpath[:-3]}]]"},
        summary=f"{summary} Transcript: [[{tpath[:-3]}]].",
        body=body)
