"""`kenning` commands of the memory stage: record, decide, revise, invalidate, retain, note,
delete, facts, reflect and session start|close (thin layers over ``kenning.api.Vault``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kenning.cli_common import JSON_OPTION, emit

if TYPE_CHECKING:
    from kenning.api import Vault

KEY_OPTION = click.option(
    "--key", metavar="KEY", help="An idempotency key: running the command again with the same "
    "key returns the first result and writes nothing (other arguments: an error).")


def _open(ctx: click.Context) -> Vault:
    from kenning.api import Vault

    return Vault.open((ctx.obj or {}).get("vault"))


def _read(source: str) -> str:
    """Text of a file, or of stdin for ``-``."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {source}: {exc}") from None


def _show(result: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        emit(result)
        return
    for line in lines:
        click.echo(line)
    for note in result.get("notes") or []:  # e.g. "LLM extraction skipped: …"
        click.echo(f"note: {note}", err=True)
    if result.get("indexed") is False:
        click.echo(result.get("note", ""), err=True)


def _extracted(extracted: dict[str, Any] | None) -> list[str]:
    """One line on what the configured model added at session close (nothing without one)."""
    if not extracted:
        return []
    counts = ", ".join(f"{len(v)} {k}" for k, v in extracted.items()
                       if isinstance(v, list) and v)
    return [f"Added by the model: {counts}"] if counts else []


def register(main: click.Group) -> None:
    """Add this stage's commands to the `kenning` group."""

    @main.command()
    @click.option("--batch", "batch", metavar="FILE",
                  help="A JSON object {entities, relations, observations} ('-' for stdin).")
    @click.option("--entity", help="Name of one entity to create or update.")
    @click.option("--type", "etype", help="Its type (person, organization, project, …).")
    @click.option("--domain", help="Its domain (engineering, finance, …).")
    @click.option("--alias", "aliases", multiple=True, help="Another name (repeatable).")
    @click.option("--summary", help="A short summary for a new page.")
    @click.option("--obs", "observations", multiple=True,
                  help="An observation about --entity (repeatable).")
    @click.option("--rel", "relations", nargs=3, multiple=True, metavar="FROM REL TO",
                  help="A typed relation (repeatable), e.g. --rel 'Sarah Chen' works_at Acme.")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def record(ctx: click.Context, batch: str | None, entity: str | None, etype: str | None,
               domain: str | None, aliases: tuple[str, ...], summary: str | None,
               observations: tuple[str, ...], relations: tuple[tuple[str, str, str], ...],
               key: str | None, as_json: bool) -> None:
        """Record entities, relations and observations; all or nothing, indexed at once."""
        data: dict[str, Any] = {}
        if batch:
            try:
                data = json.loads(_read(batch))
            except json.JSONDecodeError as exc:
                raise click.BadParameter(f"{batch}:{exc.lineno}: invalid JSON: {exc.msg}",
                                         param_hint="--batch") from None
            if not isinstance(data, dict):
                raise click.BadParameter("the batch must be a JSON object with entities, "
                                         "relations, observations", param_hint="--batch")
        entities = list(data.get("entities") or [])
        obs = list(data.get("observations") or [])
        if entity:
            item: dict[str, Any] = {"name": entity}
            if etype:
                item["type"] = etype
            if domain:
                item["domain"] = domain
            if aliases:
                item["aliases"] = list(aliases)
            if summary:
                item["summary"] = summary
            if etype:
                item["observations"] = list(observations)
                entities.append(item)
            else:
                obs += [{"entity": entity, "text": o} for o in observations]
        elif observations:
            raise click.UsageError("--obs needs --entity")
        rels = list(data.get("relations") or []) + [
            {"from": a, "rel": r, "to": b} for a, r, b in relations]
        with _open(ctx) as vault:
            result = vault.record(entities, rels, obs, key=key)
        if result.get("replayed"):
            head = ["Nothing written: a call with this key was already made; its result:"]
        elif not (result["created"] or result["updated"]):
            head = ["Nothing new: already recorded today"]
        else:
            head = []
        _show(result, as_json, head + [f"{'Created' if p in result['created'] else 'Updated'} {p}"
                                       for p in result["created"] + result["updated"]]
              + [f"  {f['id']}: {f['text']}  ({f['citation']})"
                 + ("  (already there)" if f.get("existing") else "") for f in result["facts"]])

    @main.command()
    @click.argument("name")
    @click.option("--domain", required=True, help="engineering, product, finance, …")
    @click.option("--decided", required=True, help="What was decided.")
    @click.option("--because", required=True, help="Why.")
    @click.option("--rejected", multiple=True, metavar="'OPTION[: WHY]'",
                  help="A rejected option and why, or the option alone (repeatable).")
    @click.option("--date", help="When it was decided (default today).")
    @click.option("--source", help="Where it was decided, e.g. [[meetings/2026-03-04-review]].")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def decide(ctx: click.Context, name: str, domain: str, decided: str, because: str,
               rejected: tuple[str, ...], date: str | None, source: str | None,
               key: str | None, as_json: bool) -> None:
        """Record a decision with the options it rejected, each part citable on its own."""
        with _open(ctx) as vault:     # each --rejected is parsed by the write path
            result = vault.record_decision(name, domain, decided, because, list(rejected),
                                           date=date, source=source, key=key)
        c = result["citations"]
        _show(result, as_json, [f"Created {result['path']}", f"  decided  {c['decided']}",
                                f"  because  {c['because']}"]
              + [f"  rejected {r['option']}  {r['citation']}" for r in c["rejected"]])

    @main.command()
    @click.argument("entity")
    @click.argument("observation")
    @click.argument("new_text", required=False)
    @click.option("--superseded-by", help="An existing fact that replaces it (^f5 or "
                  "page#^f5) instead of NEW_TEXT.")
    @click.option("--superseding-entity", help="Put the new fact on this page instead.")
    @click.option("--valid-from", help="When the new state became true (closes the old one).")
    @click.option("--source", help="Citation for the new fact.")
    @click.option("--epistemic", help="assertion, hypothesis, speculation (default unknown).")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def revise(ctx: click.Context, entity: str, observation: str, new_text: str | None,
               superseded_by: str | None, superseding_entity: str | None,
               valid_from: str | None, source: str | None, epistemic: str | None,
               key: str | None, as_json: bool) -> None:
        """Supersede OBSERVATION (its text or ^id) of ENTITY; the old fact stays, dated."""
        with _open(ctx) as vault:
            result = vault.revise(entity, observation, new_text, superseded_by=superseded_by,
                                  superseding_entity=superseding_entity,
                                  valid_from=valid_from, source=source, epistemic=epistemic,
                                  key=key)
        _show(result, as_json, [
            f"Superseded {result['old']['id']} ({result['old']['citation']})",
            f"  by {result['new']['id']}: {result['new']['text']} ({result['new']['citation']})"])

    @main.command()
    @click.argument("entity")
    @click.argument("observation")
    @click.option("--reason", required=True, help="Why it does not hold.")
    @click.option("--source", help="Citation for the reason.")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def invalidate(ctx: click.Context, entity: str, observation: str, reason: str,
                   source: str | None, key: str | None, as_json: bool) -> None:
        """Mark OBSERVATION of ENTITY invalidated (kept, dated, reason on the timeline)."""
        with _open(ctx) as vault:
            result = vault.invalidate(entity, observation, reason=reason, source=source,
                                      key=key)
        _show(result, as_json, [f"Invalidated {result['id']}: {result['text']} "
                                f"({result['citation']})"])

    @main.command()
    @click.argument("kind")
    @click.argument("text")
    @click.option("--entity", "entities", multiple=True, help="A mentioned entity (repeatable).")
    @click.option("--confidence", type=float, help="0 to 1 (for opinions).")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def retain(ctx: click.Context, kind: str, text: str, entities: tuple[str, ...],
               confidence: float | None, key: str | None, as_json: bool) -> None:
        """Append a typed bullet to today's daily log: KIND is W, B, O or S."""
        with _open(ctx) as vault:
            result = vault.retain(kind, text, list(entities), confidence, key=key)
        _show(result, as_json, [f"Retained in {result['citation']}"])

    @main.command()
    @click.argument("text")
    @click.option("--title", help="The note's title (default: its first words).")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def note(ctx: click.Context, text: str, title: str | None, key: str | None,
             as_json: bool) -> None:
        """Write a quick free note (TEXT, or '-' for stdin) under notes/."""
        body = _read("-") if text == "-" else text
        with _open(ctx) as vault:
            result = vault.note(body, title=title, key=key)
        _show(result, as_json, [f"Wrote {result['path']}"])

    @main.command()
    @click.argument("page")
    @JSON_OPTION
    @click.pass_context
    def delete(ctx: click.Context, page: str, as_json: bool) -> None:
        """Move PAGE to .trash/ (local use only; remote callers cannot delete)."""
        with _open(ctx) as vault:
            result = vault.delete(page)
        _show(result, as_json, [f"Moved {result['deleted']} to {result['trash']}"])

    @main.command()
    @click.argument("entity")
    @click.option("--as-of", help="What was true on this date (valid time).")
    @click.option("--believed-on", help="What Kenning believed on this date (record time).")
    @click.option("--history", is_flag=True, help="Every fact, superseded ones included.")
    @JSON_OPTION
    @click.pass_context
    def facts(ctx: click.Context, entity: str, as_of: str | None, believed_on: str | None,
              history: bool, as_json: bool) -> None:
        """The facts of ENTITY, as of a date, as believed on a date, or their whole history."""
        with _open(ctx) as vault:
            result = vault.facts(entity, as_of=as_of, believed_on=believed_on, history=history)
        lines = [f"{result['entity']} ({result['path']})"]
        for f in result["facts"]:
            when = " ".join(x for x in (f"from {f['valid_from']}" if f["valid_from"] else "",
                                        f"to {f['valid_to']}" if f["valid_to"] else "") if x)
            status = "" if f["status_then"] == "active" else f" [{f['status_then']}]"
            rel = f"{f['relation']}:: " if f["relation"] else ""
            lines.append(f"  {rel}{f['text']}{status}{'  ' + when if when else ''}  "
                         f"{f['citation']}")
        _show(result, as_json, lines)

    @main.command()
    @click.option("--since", default="7d", show_default=True,
                  help="Daily logs from: 7d, 2w, 1m, all or a date.")
    @click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
    @JSON_OPTION
    @click.pass_context
    def reflect(ctx: click.Context, since: str, dry_run: bool, as_json: bool) -> None:
        """Fold ## Retain bullets of recent daily logs into entity pages; propose memory.md
        edits (memory.proposed.md, never applied)."""
        with _open(ctx) as vault:
            result = vault.reflect(since, apply=not dry_run)
        verb = "Would fold" if dry_run else "Folded"
        lines = [f"{verb} {len(result['folded'])} bullet(s) since {result['since']}"]
        lines += [f"  {f['from']} → {', '.join(f['to'])}" for f in result["folded"]]
        lines += [f"  confidence {m['old']:.2f} → {m['new']:.2f} on {m['path']}: {m['fact']}"
                  for m in result["confidence"]]
        lines += [f"  skipped {s['from']}: {s['reason']}" for s in result["skipped"]]
        lines += [f"  summary rewritten by the model: {path}"
                  for path in result.get("model_summaries") or []]
        if result["proposed"]:
            lines.append(f"Proposed edits to memory.md in {result['proposed']}:")
            lines.append(result["proposal_diff"].rstrip())
        _show(result, as_json, lines)

    @main.group()
    def session() -> None:
        """Start and close agent sessions (core memory, handoff, what changed)."""

    @session.command("start")
    @click.option("--project", help="The project (default: 'default').")
    @click.option("--budget", type=int, default=2000, show_default=True, help="Token budget.")
    @JSON_OPTION
    @click.pass_context
    def session_start(ctx: click.Context, project: str | None, budget: int,
                      as_json: bool) -> None:
        """Print memory.md, the last handoff and what changed since, within a budget."""
        with _open(ctx) as vault:
            result = vault.session_start(project, budget=budget)
        _show(result, as_json, [result["text"].rstrip()])

    @session.command("close")
    @click.option("--transcript", "transcript", default="-", show_default=True,
                  metavar="FILE", help="The transcript: text, or JSON [{role, content}] "
                  "('-' for stdin).")
    @click.option("--project", help="The project (default: 'default').")
    @click.option("--summary", help="A one-paragraph summary for the handoff.")
    @KEY_OPTION
    @JSON_OPTION
    @click.pass_context
    def session_close(ctx: click.Context, transcript: str, project: str | None,
                      summary: str | None, key: str | None, as_json: bool) -> None:
        """Save the transcript, record its DECISION:/REMEMBER:/W:/B:/O:/S:/TODO: lines, and
        write the handoff the next `session start` loads."""
        raw = _read(transcript)
        data: Any = raw
        if raw.lstrip().startswith("["):
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                data = raw
        with _open(ctx) as vault:
            result = vault.session_close(data, project=project, summary=summary, key=key)
        _show(result, as_json, [
            f"Transcript {result['transcript']}", f"Handoff    {result['handoff']}",
            f"{len(result['decisions'])} decision(s), {len(result['retained'])} retained, "
            f"{len(result['todos'])} TODO(s)"] + _extracted(result.get("extracted")) + [
            f"  not recorded: {e}" for e in result["errors"]])
