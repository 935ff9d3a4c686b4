"""Reflect: fold the ``## Retain`` bullets of recent daily logs into entity pages.

For each bullet of ``memory/YYYY-MM-DD.md`` on or after ``since`` that was not folded before:

- ``W`` (world fact) → a fact on each mentioned page, citing the log line
  (``[source:: [[memory/2026-03-02#L7]]]``), epistemic status left ``unknown``;
- ``O`` (opinion) → if the page holds a matching opinion (an active fact with a confidence and
  mostly the same words), its confidence moves one small step: up when the new bullet agrees,
  down when it negates it (``not``, ``no longer`` …), ``c ± 0.2·w·(1−c | c)`` with ``w`` the
  bullet's own confidence (0.5 when absent); the move is explained on the page's timeline with
  a link to the evidence. Otherwise a new opinion fact with the bullet's confidence;
- ``B`` (experience) and ``S`` (summary) → a timeline line on each mentioned page, citing it;
- bullets without mentions: ``W`` and ``O`` are proposed for ``memory.md`` (written to
  ``memory.proposed.md`` with a diff in the result; never applied), ``B``/``S`` stay in the log.

Mentions that name no page are skipped and reported (and tried again next time). What was folded
is recorded in ``.kenning/reflect.json`` by log path and bullet text, so reflecting twice folds
nothing twice. Summaries of the touched pages are refreshed deterministically — only when the
page has none or still has the one reflect wrote last (a person's own summary is never replaced).

With an ``llm:`` config, each summary reflect refreshed is then rewritten by the model from the
page's active facts and latest timeline (``kenning.memory.llm_assist``): plain text, at most
about 60 words, no links and no URLs that are not on the page; an answer that fails these checks
or a server that does not answer keeps the deterministic summary. The model is asked after the
pages are written and with the write lock released, and its summary replaces the deterministic
one only if that is still on the page. ``model_summaries`` lists the pages it wrote; a dry run
does not ask the model.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kenning.errors import KenningError
from kenning.memory.common import (
    Problems,
    Resolver,
    load_state,
    read_page,
    reindex,
    save_state,
    today,
    write_lock,
    write_page,
)
from kenning.memory.write import _Batch, _Edit, _fact_body
from kenning.vault.layout import daily_log_date
from kenning.vault.page import (
    Fact,
    Page,
    RetainItem,
    TimelineEntry,
    append_timeline,
    parse_page,
    render_retain,
    replace_fact,
    set_summary,
)

if TYPE_CHECKING:
    from kenning.memory.common import Context

STATE = "reflect.json"
PROPOSED = "memory.proposed.md"
STEP = 0.2
SIMILAR = 0.5
_NEGATIONS = {"not", "no", "never", "none", "nobody", "nothing", "cannot", "unlikely",
              "isn't", "aren't", "won't", "don't", "doesn't", "didn't", "can't", "wouldn't",
              "shouldn't", "longer"}
_STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "be", "will",
         "with", "at", "by", "it", "they", "this", "that", "as", "was", "were", "has", "have",
         "do", "does", "did", "very", "really", "lot", "much"}
_WORD = re.compile(r"[\w']+")
_MENTION = re.compile(r"@\[\[([^\[\]|#]+)(?:[|#][^\]]*)?\]\]|@([\w][\w.\-]*)")
_SINCE = re.compile(r"(\d+)\s*([dwm])")


def parse_since(p: Problems, since: Any) -> str:
    """``7d``, ``2w``, ``1m`` (30 days), ``today``, ``all`` or a date → the first day folded."""
    day = _dt.date.fromisoformat(today())
    if isinstance(since, str):
        text = since.strip().lower()
        if text == "all":
            return "0001-01-01"
        if text == "today":
            return day.isoformat()
        m = _SINCE.fullmatch(text)
        if m:
            n, unit = int(m.group(1)), m.group(2)
            return (day - _dt.timedelta(days=n * {"d": 1, "w": 7, "m": 30}[unit])).isoformat()
        found = p.date("since", text)
        if found:
            return found if len(found) == 10 else (found + "-01-01")[:10]
        return day.isoformat()
    p.add("since", f"{since!r}: give 7d, 2w, 1m, today, all or a date")
    return day.isoformat()


def _words(text: str) -> set[str]:
    """Content words, crudely singular (``updates`` → ``update``), for matching opinions."""
    out = set()
    for w in _WORD.findall(text.casefold()):
        if w in _STOP or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _polarity(text: str) -> bool:
    """True when the text is negated (an odd number of negations)."""
    words = _WORD.findall(text.casefold())
    return sum(1 for w in words if w in _NEGATIONS or w.endswith("n't")) % 2 == 1


def _similar(a: str, b: str) -> float:
    wa, wb = _words(a) - _NEGATIONS, _words(b) - _NEGATIONS
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _plain(text: str) -> str:
    """Mentions as plain names: ``@Horizon_Ventures`` → ``Horizon Ventures``."""
    return _MENTION.sub(lambda m: m.group(1) or m.group(2).rstrip(".-").replace("_", " "), text)


def _link_text(text: str) -> str:
    return re.sub(r"\[\[([^\]|]*)\|([^\]]*)\]\]|\[\[([^\]]*)\]\]",
                  lambda m: m.group(2) or (m.group(3) or "").split("#")[0], text)


def deterministic_summary(page: Page) -> str:
    """A short summary from the page's current facts and latest timeline line."""
    active = [f for f in page.facts if f.status == "active"]
    parts = []
    for f in active[-4:]:
        text = _link_text(f.text)
        if f.relation:
            target = _link_text(f"[[{f.target}]]") if f.target and f.target not in text else ""
            text = f"{f.relation.replace('_', ' ')} {target} {text}".strip()
        if f.confidence is not None:
            text += f" (confidence {f.confidence:.2f})"
        parts.append(" ".join(text.split()))
    out = ""
    if parts:
        out = "Current: " + "; ".join(parts) + "."
    if page.timeline:
        last = max(page.timeline, key=lambda t: (t.date, t.line))
        out += f" Latest: {last.date} — {_link_text(last.text)}"
    return out.strip()[:600]


def _key(path: str, item: RetainItem, seen: dict[str, int]) -> str:
    digest = hashlib.sha1(render_retain(item).encode("utf-8")).hexdigest()[:16]
    base = f"{path}:{digest}"
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}:{seen[base]}"


def reflect(ctx: Context, since: str = "7d", *, apply: bool = True) -> dict[str, Any]:
    """Fold retained bullets since ``since`` into pages; with ``apply=False`` nothing is written
    and the result says what would be."""
    p = Problems()
    start = parse_since(p, since)
    p.raise_if_any()
    end = today()
    folded_out: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    proposals: list[str] = []
    with write_lock(ctx.root):
        state = load_state(ctx.root, STATE)
        folded: dict[str, Any] = state.setdefault("folded", {})
        generated: dict[str, str] = state.setdefault("summaries", {})
        batch = _Batch(ctx, Problems())
        resolver = Resolver(ctx)
        logs = sorted(
            f"memory/{f.name}" for f in (ctx.root / "memory").glob("*.md")
            if (day := daily_log_date(f"memory/{f.name}")) and start <= day <= end
        ) if (ctx.root / "memory").is_dir() else []
        for log in logs:
            _, page = read_page(ctx.root, log)
            day = daily_log_date(log) or end
            seen: dict[str, int] = {}
            for item in page.retain:
                key = _key(log, item, seen)
                if key in folded:
                    continue
                evidence = f"[[{log[:-3]}#L{item.line}]]"
                where = f"{log}#L{item.line}"
                text = " ".join(_plain(item.text).split())
                targets: list[_Edit] = []
                missing = []
                foreign: list[str] = []
                for name in item.entities:
                    path, candidates = resolver.find(name)
                    if path is None:
                        missing.append(name + (f" (several pages: {', '.join(candidates)})"
                                               if candidates else ""))
                        continue
                    edit = batch.open(path, where)
                    if edit is not None and edit.foreign:
                        foreign.append(edit.foreign)  # a person's note: read, never written
                    elif edit is not None and edit not in targets:
                        targets.append(edit)
                if foreign:
                    skipped.append({"from": where, "text": item.text,
                                    "reason": "; ".join(foreign)})
                    continue
                if missing:
                    skipped.append({"from": where, "text": item.text,
                                    "reason": "no page named " + ", ".join(missing)})
                    continue
                if not text:
                    folded[key] = {"to": [], "on": end}
                    continue
                if not targets:
                    if item.kind in ("W", "O"):
                        proposals.append(text)
                        folded[key] = {"to": [PROPOSED], "on": end}
                        folded_out.append({"from": where, "kind": item.kind,
                                           "text": item.text, "to": [PROPOSED]})
                    else:
                        folded[key] = {"to": [], "on": end}
                    continue
                check = Problems()
                body = _fact_body(check, where, text, trusted=True)
                if body is None and item.kind in ("W", "O"):
                    skipped.append({"from": where, "text": item.text,
                                    "reason": "; ".join(check.items)})
                    continue
                for edit in targets:
                    if item.kind == "W":
                        relation, target, rest = body  # type: ignore[misc]
                        batch.add_fact(edit, Fact(0, relation, target, rest, source=evidence,
                                                  recorded=end))
                    elif item.kind == "O":
                        move = _opinion(batch, edit, item, text, evidence, end)
                        if move:
                            moves.append({**move, "from": where})
                    else:
                        label = "Summary" if item.kind == "S" else "Experience"
                        edit.text = append_timeline(edit.text, TimelineEntry(
                            0, day, f"{label}: {text}", evidence))
                folded[key] = {"to": [e.path for e in targets], "on": end}
                folded_out.append({"from": where, "kind": item.kind, "text": item.text,
                                   "to": [e.path for e in targets]})
        summaries = []
        refreshed: dict[str, str] = {}
        for edit in batch.edits.values():
            if edit.foreign:
                continue
            page = parse_page(edit.text, edit.path)
            if page.title_line is None or (page.summary and generated.get(edit.path)
                                           != _digest(page.summary)):
                continue  # no H1 to put it under, or a summary a person wrote
            summary = deterministic_summary(page)
            if summary and summary != page.summary:
                try:
                    edit.text = set_summary(edit.text, summary)
                except ValueError:
                    continue
                generated[edit.path] = _digest(summary)
                summaries.append(edit.path)
                refreshed[edit.path] = summary
        for edit in batch.edits.values():
            batch.touch(edit)
        proposal = _proposal(ctx, proposals, end)
        if apply:
            batch.write()
            if proposal is not None:
                write_page(ctx.root, PROPOSED, proposal["text"])
            save_state(ctx.root, STATE, state)
    model_summaries: list[str] = []
    notes: list[str] = []
    if refreshed:
        model_summaries, notes = _model_summaries(ctx, refreshed, apply=apply)
    result: dict[str, Any] = {
        "since": start, "applied": apply, "folded": folded_out, "confidence": moves,
        "summaries": summaries, "model_summaries": model_summaries, "notes": notes,
        "skipped": skipped,
        "proposed": PROPOSED if proposal is not None else None,
        "proposal_diff": proposal["diff"] if proposal is not None else "",
        "updated": [e.path for e in batch.edits.values() if e.changed],
    }
    if apply and (batch.edits or proposal is not None):
        result.update(reindex(ctx))
    return result


MAX_MODEL_SUMMARIES = 25   # summaries the model rewrites in one reflect (the rest: deterministic)


def _model_summaries(ctx: Context, refreshed: dict[str, str], *, apply: bool
                     ) -> tuple[list[str], list[str]]:
    """Rewrite the summaries reflect just refreshed with the configured model: (pages whose
    summary the model wrote, notes). The lock is not held while the model thinks; a page
    whose summary changed meanwhile keeps it."""
    from kenning.llm import LLMUnavailable, one_line
    from kenning.memory import llm_assist
    from kenning.vault.writes import write_files

    client, problem = llm_assist.client_for(ctx.root)
    if client is None:
        return [], ([f"LLM summaries skipped: {problem}"] if problem else [])
    if not apply:
        return [], ["LLM summaries are not asked for in a dry run (the deterministic ones are "
                    "shown)"]
    notes: list[str] = []
    wanted: dict[str, str] = {}
    for n, (path, summary) in enumerate(refreshed.items()):
        if n >= MAX_MODEL_SUMMARIES:
            notes.append(f"LLM summaries: {len(refreshed) - n} more page(s) keep the "
                         f"deterministic summary (at most {MAX_MODEL_SUMMARIES} a run)")
            break
        try:
            _, page = read_page(ctx.root, path)
            text, why = llm_assist.ask_summary(client, page)
        except LLMUnavailable as exc:
            notes.append(f"LLM summaries skipped: {one_line(exc.message, 300)}; the "
                         "deterministic summaries stay")
            break
        except (OSError, KenningError) as exc:
            notes.append(f"LLM summary of {path} skipped: {exc}")
            continue
        if text is None:
            notes.append(f"LLM summary of {path} refused ({why}); the deterministic one stays")
        elif text != summary:
            wanted[path] = text
    done: list[str] = []
    if not wanted:
        return done, notes
    with write_lock(ctx.root):
        state = load_state(ctx.root, STATE)
        generated: dict[str, str] = state.setdefault("summaries", {})
        files: dict[str, str] = {}
        for path, text in wanted.items():
            try:
                old, page = read_page(ctx.root, path)
            except (OSError, KenningError):
                continue
            if _digest(page.summary or "") != _digest(refreshed[path]):
                notes.append(f"LLM summary of {path} not written: the page's summary changed "
                             "meanwhile")
                continue
            try:
                files[path] = set_summary(old, text)
            except ValueError as exc:
                notes.append(f"LLM summary of {path} refused ({exc})")
                continue
            generated[path] = _digest(text)
            done.append(path)
        if files:
            write_files(ctx.root, files)
            save_state(ctx.root, STATE, state)
    return done, notes


def _short(text: str, limit: int = 80) -> str:
    """``'text'`` quoted, cut at a word boundary with an ellipsis when longer than ``limit``."""
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:.") + "…"
    return f"'{text}'"


def _digest(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def _opinion(batch: _Batch, edit: _Edit, item: RetainItem, text: str, evidence: str,
             day: str) -> dict[str, Any] | None:
    page = parse_page(edit.text, edit.path)
    best, score = None, 0.0
    for fact in page.facts:
        if fact.status != "active" or fact.confidence is None:
            continue
        s = _similar(fact.text, text)
        if s > score:
            best, score = fact, s
    if best is None or score < SIMILAR or best.confidence is None:
        batch.add_fact(edit, Fact(0, None, None, text, confidence=item.confidence
                                  if item.confidence is not None else 0.5,
                                  source=evidence, recorded=day))
        return None
    weight = item.confidence if item.confidence is not None else 0.5
    old = best.confidence
    agrees = _polarity(best.text) == _polarity(text)
    new = old + STEP * weight * (1 - old) if agrees else old - STEP * weight * old
    new = round(min(1.0, max(0.0, new)), 2)
    edit.text = replace_fact(edit.text, best.line, replace(best, confidence=new))
    verb = "supported" if agrees else "contradicted"
    edit.text = append_timeline(edit.text, TimelineEntry(
        0, day, f"Confidence in {_short(best.text)} {old:.2f} → {new:.2f}: {verb} by "
        f"{_short(text)}", evidence))
    return {"path": edit.path, "fact": best.text, "old": old, "new": new,
            "direction": "up" if agrees else "down", "evidence": evidence}


def _proposal(ctx: Context, items: list[str], day: str) -> dict[str, str] | None:
    """``memory.proposed.md``: memory.md plus the new bullets, and the diff; None if none."""
    memory_path = ctx.root / "memory.md"
    current = memory_path.read_text(encoding="utf-8") if memory_path.is_file() else ""
    proposed_path = ctx.root / PROPOSED
    base = proposed_path.read_text(encoding="utf-8") if proposed_path.is_file() else current
    known = {" ".join(line.lstrip("-*+ ").split()).casefold()
             for line in base.splitlines() if line.strip()}
    fresh = list(dict.fromkeys(i for i in items if " ".join(i.split()).casefold() not in known))
    if not fresh:
        return None
    text = base if base.endswith("\n") or not base else base + "\n"
    text += f"\n## Proposed by reflect on {day}\n\n" + "".join(f"- {i}\n" for i in fresh)
    diff = "".join(difflib.unified_diff(current.splitlines(keepends=True),
                                        text.splitlines(keepends=True),
                                        "memory.md", PROPOSED))
    return {"text": text, "diff": diff}
