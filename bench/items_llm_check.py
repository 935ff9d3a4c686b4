#!/usr/bin/env python3
"""How the model pass for items (kenning.builder.items.llm) treats answers that are right.

    python bench/items_llm_check.py CORPUS [--mode echo|oracle|both] [--json]

CORPUS is a labelled items corpus (bench/items_corpus.py) or any vault (``--mode echo`` only).
No real model is involved: the scripted OpenAI-compatible server of tests/llm_server.py plays
two models over the real sources and the real extractor's items —

- **echo** answers every suggestion it was sent, as sent. Every request should be accepted and
  the items should be exactly the rules' (a rejection is the validator refusing the extractor's
  own items: a false rejection).
- **oracle** answers the gold items of labels.json located on the lines it was sent (text, who,
  to, due, status, a same-source closing line; an item closed in a later source is answered
  open and left to settle). Every request should be accepted, and the score is the ceiling the
  model path allows: what a perfect model gets through validation.
- **forge** (``--mode forge``) echoes and adds one fabricated commitment per source: another
  source's item text cited at a real line of this one. Every such request should be refused
  (twice) and fall back; an accepted one is a fabrication the text check let through.

Prints, per mode, requests accepted / fallen back (with the first reasons) and, on a corpus, the
``kenning eval items`` scores of rules only and of rules + model.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

_SOURCE = re.compile(r"^## Source (\d+): (\S+) \(", re.M)
_LINE = re.compile(r"^L(\d+): ", re.M)


def _blocks(body: dict[str, Any]) -> list[tuple[str, str]]:
    user = body["messages"][1]["content"]
    heads = list(_SOURCE.finditer(user))
    out = []
    for n, m in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(user)
        out.append((m.group(2), user[m.start():end]))
    return out


def echo(body: dict[str, Any]) -> dict[str, Any]:
    from llm_server import answer

    return answer({"sources": [
        {"source": n, "items": [json.loads(s) for s in block.splitlines()
                                if s.startswith('{"kind":')]}
        for n, (_, block) in enumerate(_blocks(body), 1)]})


FORGED: list[bool] = []  # per fabricated item: whether the text check alone would accept it


def forge(pool: list[str]) -> Any:
    """Echo, plus one fabricated commitment per source: another source's item text, cited at
    the middle line that was sent. Only the text-on-lines check can refuse it."""
    from llm_server import answer

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        sources = []
        for n, (path, block) in enumerate(_blocks(body), 1):
            items = [json.loads(s) for s in block.splitlines() if s.startswith('{"kind":')]
            sent = sorted(int(x) for x in _LINE.findall(block))
            text = pool[sum(map(ord, path)) % len(pool)] if pool else "I will send it."
            if sent and text not in block:
                line = sent[len(sent) // 2]
                from kenning.builder.items.llm import text_on_lines

                shown = re.search(rf"^L{line}: (.*)$", block, re.M)
                FORGED.append(text_on_lines(text, [shown.group(1) if shown else ""]))
                items.append({"kind": "commitment", "line": line, "end": line, "text": text,
                              "who": "me", "to": [], "due": None, "due_text": None,
                              "status": "open", "closed_by": None, "because": None,
                              "rejected": [], "about": []})
            sources.append({"source": n, "items": items})
        return answer({"sources": sources})
    return reply


def _label(p: dict[str, Any] | None, block: str) -> str | None:
    """How a model that reads the block names this party: "me", the address when the block
    shows it (a chat shows none), else the name."""
    if not p:
        return None
    if p.get("owner"):
        return "me"
    email = p.get("email")
    return email if email and email in block else p.get("name")


def oracle(labels: dict[str, Any], located: Any) -> Any:
    from llm_server import answer

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        sources = []
        for n, (path, block) in enumerate(_blocks(body), 1):
            sent = sorted(int(x) for x in _LINE.findall(block))
            items = []
            for g in labels["items"]:
                span = located.spans.get(g["id"])
                if span is None or span.path != path or span.line not in sent:
                    continue
                end = max([x for x in sent if span.line <= x <= span.end] or [span.line])
                status, closed_by = ("decided", None) if g["kind"] == "decision" else \
                    ("open", None)
                closed = located.spans.get(f"{g['id']}:closed")
                if g.get("status") == "done" and closed is not None and closed.path == path:
                    later = [x for x in sent if closed.line <= x <= closed.end and x > end]
                    if later:
                        status, closed_by = "done", later[0]
                items.append({"kind": g["kind"], "line": span.line, "end": end,
                              "text": g["text"], "who": _label(g.get("who"), block),
                              "to": [t for p in g.get("to") or [] if (t := _label(p, block))],
                              "due": g.get("due"), "due_text": None, "status": status,
                              "closed_by": closed_by, "because": None,
                              "rejected": list(g.get("rejected") or []),
                              "about": list(g.get("about") or [])})
            sources.append({"source": n, "items": items})
        return answer({"sources": sources})
    return reply


def run(root: Path, mode: str, labels: dict[str, Any] | None, located: Any) -> dict[str, Any]:
    from llm_server import ChatServer

    from kenning.builder.items.extract import extract_items
    from kenning.builder.items.llm import ItemModel
    from kenning.builder.items.settle import settle
    from kenning.llm import ChatClient, LLMConfig
    from kenning.sources.owner import Owner

    owner = Owner.load(root)
    inputs = []
    for file in sorted((root / "sources").rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        inputs.append((rel, text, extract_items(rel, text, owner)))
    server = ChatServer()
    try:
        pool = sorted({i.text for _, _, r in inputs for i in r.items})
        responder = echo if mode == "echo" else forge(pool) if mode == "forge" else \
            oracle(labels or {}, located)
        server.script = [responder] * 100_000
        model = ItemModel(root, ChatClient(LLMConfig(url=server.url, model="scripted",
                                                     max_retries=0)), owner)
        refined = model.refine(inputs)
        sizes = sorted(len(b["messages"][1]["content"]) for b in server.chats())
    finally:
        server.close()
    reasons = Counter(r.error.split(": ", 1)[-1][:120] for r in model.requests
                      if r.outcome != "model" and r.error)
    out: dict[str, Any] = {"mode": mode, "sources": len(inputs), **model.summary(),
                           "unchanged_sources": sum(1 for a, (_, _, b) in
                                                    zip(refined, inputs, strict=True) if a is b),
                           "first_reasons": reasons.most_common(5),
                           "user_chars": {"median": sizes[len(sizes) // 2] if sizes else 0,
                                          "max": sizes[-1] if sizes else 0}}
    out.pop("tokens", None)
    if mode == "forge":
        out["forged_items"] = len(FORGED)
        out["forged_passing_the_text_check"] = sum(FORGED)
    if labels is not None:
        from kenning.evaluate.items import score

        def scored(results: list[Any]) -> dict[str, Any]:
            items = [i for r in results for i in r.items]
            deliveries = [d for r in results for d in r.deliveries]
            replies = [x for r in results for x in r.replies]
            d = score(labels, located, settle(items, deliveries, replies),
                      sources=len(results)).as_dict()
            return {"kinds": {k: {m: v[m] for m in ("precision", "recall")}
                              for k, v in d["kinds"].items()},
                    "attributes": {a: v["accuracy"] for a, v in d["attributes"].items()}}

        out["rules"] = scored([b for _, _, b in inputs])
        out["rules+model"] = scored(refined)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--mode", choices=("echo", "oracle", "forge", "both"), default="both")
    args = ap.parse_args(argv)
    from kenning.evaluate.items import is_corpus, load_labels, locate_all

    labels = located = None
    if is_corpus(args.corpus):
        labels = load_labels(args.corpus)
        located = locate_all(args.corpus, labels)
    elif args.mode not in ("echo", "forge"):
        ap.error(f"{args.corpus} has no labels.json: only --mode echo or forge")
    modes = ("echo", "oracle") if args.mode == "both" else (args.mode,)
    for mode in modes:
        print(json.dumps(run(args.corpus, mode, labels, located), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
