"""``kenning eval items``: score the item extractor on a labelled corpus (bench/items_corpus.py).

A corpus is a Kenning vault with ``labels.json`` beside its ``sources/``::

    {"format": 1, "seed": 7, "split": "train", "owner": {name, email, owner},
     "messages": {"<message-id>": {"header": "2025-03-04 10:05 +01:00", "from": "a@b.test"}},
     "items": [{"id", "kind": "commitment|ask|decision", "source": REF, "text": SENTENCE,
                "who": {name, email, owner, as_written?}, "to": [party…], "due": ISO|null,
                "status": "open|done|decided", "closed_by": {"source": REF, "text": …|null}|null,
                "rejected": [...], "about": [...], "repeats": [{"source": REF, "text": …}]}],
     "distractors": [{"id", "trap", "source": REF, "text", "present"}]}

A REF names where the text was written: ``email:<message-id>`` (that message's section of its
thread file, found by the message's header line), ``meeting:<transcript file name>`` (the whole
meeting file; ``…#HH:MM:SS`` the turn at that time), ``chat:<chat id>`` (``…#HH:MM`` the turn at
that time). The scorer finds the line of the rendered source holding the sentence inside that
span (the generator checks every item is found exactly once); a ``closed_by`` without text is
the whole message or turn (an ask answered by a reply).

Scoring: the extractor (``kenning.builder.items.extract.extract_items`` per file under
``sources/``, then ``kenning.builder.items.settle.settle`` over all of them) gives items; a
predicted item matches a gold one of the same kind in the same file when its line span overlaps
the gold line (or a line where the same promise is repeated: the repeat may be the one kept),
one to one, closest first. Per kind: precision, recall, F1. Over matched items: who, due,
status (and ``to`` where the gold names addressees, ``rejected`` for decisions, ``because`` where
the gold states a reason (its words inside the predicted one), ``about`` for
decisions whose gold names a project — its words, "the" and "project" aside, inside one
predicted ``about`` — and ``closed_by`` for items done on both sides) right or wrong.
Distractors: how many present in the rendered sources overlap an unmatched predicted item.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.errors import KenningError

LABELS_NAME = "labels.json"
KINDS = ("commitment", "ask", "decision")
ATTRIBUTES = ("who", "due", "status", "to", "rejected", "because", "about", "closed_by")
_HEADER = re.compile(r"^## \d{4}-\d\d-\d\d \d\d:\d\d ")
_TURN = re.compile(r"^- \*\*")
_ABOUT_STOP = {"the", "project"}   # "Project Heron" is about "Heron"


class ItemsEvalError(KenningError):
    """The evaluation cannot run: no labels, bad labels, or no extractor."""


# -- locating labelled text in the rendered sources -------------------------------------------


@dataclass(frozen=True)
class Span:
    path: str     # vault-relative source file
    line: int     # 1-based
    end: int

    def overlaps(self, line: int, end: int) -> bool:
        return line <= self.end and end >= self.line


@dataclass
class Located:
    spans: dict[str, Span] = field(default_factory=dict)      # label key → where it is
    problems: dict[str, str] = field(default_factory=dict)    # label key → why not found


def is_corpus(path: Path) -> bool:
    return (path / LABELS_NAME).is_file() and (path / "sources").is_dir()


def load_labels(path: Path) -> dict[str, Any]:
    file = path / LABELS_NAME
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ItemsEvalError(f"no {LABELS_NAME} (make one with bench/items_corpus.py)",
                             path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ItemsEvalError(f"cannot read the labels ({exc})", path=str(file)) from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ItemsEvalError("labels must be an object with an 'items' list", path=str(file))
    for n, item in enumerate(data["items"]):
        missing = [k for k in ("id", "kind", "source", "text") if not item.get(k)]
        if missing or item.get("kind") not in KINDS:
            raise ItemsEvalError(f"item {n + 1}: missing {', '.join(missing) or 'a known kind'}",
                                 path=str(file))
    return data


def source_index(root: Path) -> dict[str, str]:
    """``email:<message-id>``, ``meeting:<original file>``, ``chat:<session id>`` → vault path."""
    from kenning.vault import frontmatter

    index: dict[str, str] = {}
    for file in sorted((root / "sources").rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        try:
            data = frontmatter.read(file.read_text(encoding="utf-8")).data or {}
        except (OSError, UnicodeDecodeError):
            continue
        for mid in data.get("message_ids") or []:
            index.setdefault(f"email:{str(mid).strip('<> ').lower()}", rel)
        if data.get("original_file"):
            index.setdefault(f"meeting:{data['original_file']}", rel)
        if data.get("session_id"):
            index.setdefault(f"chat:{data['session_id']}", rel)
    return index


class _Locator:
    def __init__(self, root: Path, labels: dict[str, Any]) -> None:
        self.root = root
        self.index = source_index(root)
        self.messages = labels.get("messages") or {}
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            self._lines[path] = (self.root / path).read_text(encoding="utf-8").splitlines()
        return self._lines[path]

    def section(self, ref: str) -> tuple[str, int, int]:
        """(path, first line, last line) of a REF, 1-based inclusive."""
        base, _, anchor = ref.partition("#")
        kind, _, key = base.partition(":")
        lookup = f"email:{key.strip('<> ').lower()}" if kind == "email" else base
        path = self.index.get(lookup)
        if path is None:
            raise LookupError(f"{base}: no rendered source holds it")
        lines = self.lines(path)
        if kind == "email":
            info = self.messages.get(key)
            if not info:
                raise LookupError(f"{base}: not in the labels' messages")
            start = next((i for i, line in enumerate(lines)
                          if line.startswith(f"## {info['header']} · ")
                          and f"<{info['from']}>" in line.split(" → ")[0]), None)
            if start is None:
                raise LookupError(f"{base}: no message header {info['header']} in {path}")
            stop = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])),
                        len(lines))
            return path, start + 1, stop
        if anchor:
            turn = (re.compile(rf"^- \*\*\[{re.escape(anchor)}\] ") if kind == "meeting"
                    else re.compile(rf"^- \*\*.+?\*\* \({re.escape(anchor)}\):"))
            start = next((i for i, line in enumerate(lines) if turn.match(line)), None)
            if start is None:
                raise LookupError(f"{ref}: no turn at {anchor} in {path}")
            stop = next((i for i in range(start + 1, len(lines))
                         if _TURN.match(lines[i]) or lines[i].startswith("#")), len(lines))
            return path, start + 1, stop
        return path, 1, len(lines)

    def find(self, ref: str, text: str | None) -> Span:
        path, first, last = self.section(ref)
        if text is None:
            return Span(path, first, last)
        lines = self.lines(path)
        hits = [n for n in range(first, last + 1) if text in lines[n - 1]]
        if not hits:
            want = " ".join(text.split())
            hits = [n for n in range(first, last + 1) if want in " ".join(lines[n - 1].split())]
        if len(hits) != 1:
            raise LookupError(f"{ref}: {text!r} found {len(hits)} times in {path}"
                              f"#L{first}-L{last}")
        return Span(path, hits[0], hits[0])


def locate_all(root: Path, labels: dict[str, Any]) -> Located:
    """Find every item (its text, repeats and closing line) and every distractor.

    Keys: the item id, ``<id>:closed``, ``<id>:repeat<N>``, the distractor id. A distractor
    that is not in the rendered source (quoted text the connector removed) is simply absent;
    anything else not found exactly once is a problem."""
    loc = _Locator(root, labels)
    out = Located()

    def put(key: str, ref: str, text: str | None, *, required: bool = True) -> None:
        try:
            out.spans[key] = loc.find(ref, text)
        except LookupError as exc:
            if required or "found 2" in str(exc) or "found 3" in str(exc):
                out.problems[key] = str(exc)

    for item in labels.get("items", []):
        put(item["id"], item["source"], item["text"])
        closed = item.get("closed_by")
        if closed:
            put(f"{item['id']}:closed", closed["source"], closed.get("text"))
        for n, rep in enumerate(item.get("repeats") or []):
            put(f"{item['id']}:repeat{n}", rep["source"], rep["text"])
    for d in labels.get("distractors", []):
        put(d["id"], d["source"], d["text"], required=False)
    return out


# -- matching and scoring ----------------------------------------------------------------------


def fold(text: str | None) -> str:
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.findall(r"\w+", text.casefold()))


def party_matches(pred: Any, gold: dict[str, Any] | None) -> bool:
    """A predicted :class:`Party` names the gold person: same address, both the owner, or the
    name as the gold gives it (full name, first name, or as the source wrote it)."""
    if pred is None or not gold:
        return False
    email = (getattr(pred, "email", None) or "").lower()
    if email and gold.get("email") and email == gold["email"].lower():
        return True
    if getattr(pred, "owner", False) and gold.get("owner"):
        return True
    name = fold(getattr(pred, "name", None))
    if not name:
        return False
    full = fold(gold.get("name"))
    forms = {full, fold(gold.get("as_written")), full.split(" ")[0] if full else ""}
    return name in forms - {""}


def parties_match(pred: Iterable[Any], gold: list[dict[str, Any]]) -> bool:
    pred = list(pred)
    if len(pred) != len(gold):
        return False
    left = list(pred)
    for g in gold:
        hit = next((p for p in left if party_matches(p, g)), None)
        if hit is None:
            return False
        left.remove(hit)
    return True


def rejected_match(pred: Iterable[str], gold: list[str]) -> bool:
    """Same number of alternatives, each gold one's words inside one predicted (or the reverse):
    "Adyen" matches "Adyen" and "going with Adyen"."""
    pred = [fold(p) for p in pred]
    if len(pred) != len(gold):
        return False
    for g in gold:
        gw = set(fold(g).split())
        if not any(gw <= set(p.split()) or (set(p.split()) and set(p.split()) <= gw)
                   for p in pred):
            return False
    return True


def _citation(value: str | None) -> tuple[str, int, int] | None:
    if not value:
        return None
    m = re.match(r"^(.*)#L(\d+)(?:-L(\d+))?$", value.strip())
    if not m:
        return None
    path = m.group(1)
    if not path.endswith(".md"):
        path += ".md"
    line = int(m.group(2))
    return path, line, int(m.group(3) or line)


@dataclass
class KindScore:
    gold: int = 0
    predicted: int = 0
    matched: int = 0

    @property
    def precision(self) -> float:
        return self.matched / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"gold": self.gold, "predicted": self.predicted, "matched": self.matched,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "f1": round(self.f1, 4)}


@dataclass
class ItemsResult:
    split: str | None
    seed: int | None
    sources: int
    kinds: dict[str, KindScore]
    attributes: dict[str, list[int]]          # attribute → [right, scored]
    distractors: dict[str, list[int]]         # trap → [produced an item, present]
    absent_distractors: int                   # not in the rendered sources (quoted)
    kind_confusions: int                      # unmatched predictions on a gold line of another kind
    channels: dict[str, list[int]] = field(default_factory=dict)   # channel → [found, gold]
    missed: list[dict[str, Any]] = field(default_factory=list)
    spurious: list[dict[str, Any]] = field(default_factory=list)
    wrong: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def accuracy(self, attribute: str) -> float | None:
        right, n = self.attributes.get(attribute, [0, 0])
        return right / n if n else None

    def as_dict(self) -> dict[str, Any]:
        total = KindScore(sum(k.gold for k in self.kinds.values()),
                          sum(k.predicted for k in self.kinds.values()),
                          sum(k.matched for k in self.kinds.values()))
        return {
            "split": self.split, "seed": self.seed, "sources": self.sources,
            "kinds": {k: v.as_dict() for k, v in self.kinds.items()},
            "all": total.as_dict(),
            "attributes": {a: {"right": r, "scored": n,
                               "accuracy": round(r / n, 4) if n else None}
                           for a, (r, n) in self.attributes.items()},
            "distractors": {t: {"produced_item": h, "present": n}
                            for t, (h, n) in sorted(self.distractors.items())},
            "distractors_absent": self.absent_distractors,
            "kind_confusions": self.kind_confusions,
            "recall_by_channel": {c: {"found": f, "gold": n, "recall": round(f / n, 4) if n
                                      else None} for c, (f, n) in sorted(self.channels.items())},
            "missed": self.missed, "spurious": self.spurious, "wrong": self.wrong,
            "notes": self.notes,
        }


def score(labels: dict[str, Any], located: Located, predicted: list[Any], *,
          sources: int = 0, examples: int = 10) -> ItemsResult:
    """Match ``predicted`` (:class:`~kenning.builder.items.model.Item`) to the located gold."""
    gold = [g for g in labels["items"] if g["id"] in located.spans]
    kinds = {k: KindScore() for k in KINDS}
    for g in gold:
        kinds[g["kind"]].gold += 1
    for p in predicted:
        kinds.setdefault(p.kind, KindScore()).predicted += 1

    def gold_spans(g: dict[str, Any]) -> list[tuple[Span, int]]:
        spans = [(located.spans[g["id"]], 2)]
        spans += [(located.spans[k], 1) for n in range(len(g.get("repeats") or []))
                  if (k := f"{g['id']}:repeat{n}") in located.spans]
        return spans

    candidates: list[tuple[int, int, int, int]] = []   # (-strength, distance, gold i, pred j)
    for i, g in enumerate(gold):
        for span, strength in gold_spans(g):
            for j, p in enumerate(predicted):
                if p.kind == g["kind"] and p.source == span.path and span.overlaps(p.line,
                                                                                   p.end):
                    candidates.append((-strength, abs(p.line - span.line), i, j))
    candidates.sort()
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for _, _, i, j in candidates:
        if i in pairs or j in taken:
            continue
        pairs[i] = j
        taken.add(j)

    attributes = {a: [0, 0] for a in ATTRIBUTES}
    wrong: list[dict[str, Any]] = []

    def check(attr: str, ok: bool, g: dict[str, Any], p: Any, got: Any) -> None:
        attributes[attr][1] += 1
        if ok:
            attributes[attr][0] += 1
        elif len(wrong) < examples:
            wrong.append({"attribute": attr, "text": g["text"], "citation": p.citation,
                          "gold": g.get(attr), "predicted": got})

    for i, j in sorted(pairs.items()):
        g, p = gold[i], predicted[j]
        kinds[g["kind"]].matched += 1
        check("who", party_matches(p.who, g.get("who")), g, p,
              p.who.as_dict() if p.who else None)
        check("due", (p.due or None) == (g.get("due") or None), g, p, p.due)
        check("status", p.status == g.get("status"), g, p, p.status)
        if g.get("to"):
            check("to", parties_match(p.to, g["to"]), g, p, [t.as_dict() for t in p.to])
        if g["kind"] == "decision":
            check("rejected", rejected_match(p.rejected, g.get("rejected") or []), g, p,
                  list(p.rejected))
        if g["kind"] == "decision" and g.get("because"):
            want = set(fold(g["because"]).split())
            check("because", bool(want) and want <= set(fold(p.because).split()), g, p,
                  p.because)
        if g["kind"] == "decision" and g.get("about"):
            check("about", all(any(set(fold(a).split()) - _ABOUT_STOP <= set(fold(x).split())
                                   for x in p.about) for a in g["about"]), g, p, list(p.about))
        closed = located.spans.get(f"{g['id']}:closed")
        if closed is not None and g.get("status") == "done" and p.status == "done":
            c = _citation(p.closed_by)
            check("closed_by", c is not None and c[0] == closed.path
                  and closed.overlaps(c[1], c[2]), g, p, p.closed_by)

    # Distractors and confusions among the predictions left over.
    present = [d for d in labels.get("distractors", []) if d["id"] in located.spans]
    traps: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for d in present:
        traps[d["trap"]][1] += 1
    leftover = [p for j, p in enumerate(predicted) if j not in taken]
    for d in present:
        span = located.spans[d["id"]]
        if any(p.source == span.path and span.overlaps(p.line, p.end) for p in leftover):
            traps[d["trap"]][0] += 1
    confusions = sum(
        1 for p in leftover
        if any(located.spans[g["id"]].path == p.source
               and located.spans[g["id"]].overlaps(p.line, p.end) and g["kind"] != p.kind
               for g in gold))
    missed = [{"kind": g["kind"], "text": g["text"],
               "citation": _cite(located.spans[g["id"]])}
              for i, g in enumerate(gold) if i not in pairs][:examples]
    spurious = [{"kind": p.kind, "text": p.text, "citation": p.citation, "note": p.note}
                for p in leftover][:examples]
    notes = [f"{k}: {v}" for k, v in located.problems.items()]
    channels: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i, g in enumerate(gold):
        channels[g.get("channel") or "?"][1] += 1
        channels[g.get("channel") or "?"][0] += i in pairs
    return ItemsResult(labels.get("split"), labels.get("seed"), sources, kinds, attributes,
                       dict(traps),
                       sum(1 for d in labels.get("distractors", [])
                           if d["id"] not in located.spans),
                       confusions, dict(channels), missed, spurious, wrong, notes)


def _cite(span: Span) -> str:
    path = span.path[:-3] if span.path.endswith(".md") else span.path
    return f"{path}#L{span.line}" if span.line == span.end else f"{path}#L{span.line}-L{span.end}"


# -- running the extractor ---------------------------------------------------------------------


def extract_vault(root: Path, progress: Callable[[str], None] | None = None
                  ) -> tuple[list[Any], int, list[str]]:
    """Every source file under ``root/sources`` through the extractor, then settled:
    (items, source files read, extractor notes)."""
    try:
        from kenning.builder.items.extract import extract_items
        from kenning.builder.items.settle import settle
    except ImportError as exc:
        raise ItemsEvalError(f"the item extractor is not available ({exc})") from None
    from kenning.sources.owner import Owner

    owner = Owner.load(root)
    items: list[Any] = []
    deliveries: list[Any] = []
    replies: list[Any] = []
    notes: list[str] = []
    files = sorted((root / "sources").rglob("*.md"))
    for file in files:
        rel = file.relative_to(root).as_posix()
        if progress:
            progress(rel)
        found = extract_items(rel, file.read_text(encoding="utf-8"), owner, info=None)
        items += found.items
        deliveries += found.deliveries
        replies += found.replies
        notes += found.notes
    return list(settle(items, deliveries, replies)), len(files), notes


def run_items(path: Path, *, examples: int = 10,
              progress: Callable[[str], None] | None = None) -> ItemsResult:
    if not is_corpus(path):
        raise ItemsEvalError(f"no {LABELS_NAME} and sources/ (make a corpus with "
                             "bench/items_corpus.py)", path=str(path))
    labels = load_labels(path)
    located = locate_all(path, labels)
    predicted, sources, notes = extract_vault(path, progress)
    result = score(labels, located, predicted, sources=sources, examples=examples)
    result.notes += notes[:examples]
    return result


# -- output ------------------------------------------------------------------------------------


def to_json(result: ItemsResult) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False)


def _f(x: float | None) -> str:
    return "  –  " if x is None else f"{x:.3f}"


def format_report(result: ItemsResult) -> str:
    out = [f"Items: split {result.split or '?'}, seed {result.seed}, {result.sources} source "
           "files"]
    out.append(f"{'kind':<11} {'gold':>5} {'found':>5} {'right':>5} {'P':>6} {'R':>6} "
               f"{'F1':>6}")
    rows = list(result.kinds.items())
    total = KindScore(sum(k.gold for _, k in rows), sum(k.predicted for _, k in rows),
                      sum(k.matched for _, k in rows))
    for name, k in [*rows, ("all", total)]:
        out.append(f"{name:<11} {k.gold:>5} {k.predicted:>5} {k.matched:>5} "
                   f"{_f(k.precision):>6} {_f(k.recall):>6} {_f(k.f1):>6}")
    out.append("matched items right on: " + " · ".join(
        f"{a} {_f(result.accuracy(a))} ({r}/{n})"
        for a, (r, n) in result.attributes.items() if n))
    hit = sum(h for h, _ in result.distractors.values())
    seen = sum(n for _, n in result.distractors.values())
    out.append(f"distractors that produced an item: {hit} of {seen} present"
               + (" (" + ", ".join(f"{t} {h}/{n}" for t, (h, n)
                                    in sorted(result.distractors.items())) + ")" if seen else "")
               + f"; {result.absent_distractors} not rendered (quoted text removed by the "
                 "connector)")
    if result.channels:
        out.append("recall by channel: " + " · ".join(
            f"{c} {_f(f / n if n else None)} ({f}/{n})"
            for c, (f, n) in sorted(result.channels.items())))
    if result.kind_confusions:
        out.append(f"predictions on a gold line of another kind: {result.kind_confusions}")
    for title, rows_ in (("missed", result.missed), ("spurious", result.spurious)):
        for r in rows_:
            out.append(f"  {title}: [{r['kind']}] {r['text']}  ({r['citation']})")
    for r in result.wrong:
        out.append(f"  wrong {r['attribute']}: {r['text']} — gold {r['gold']!r}, got "
                   f"{r['predicted']!r}  ({r['citation']})")
    for n in result.notes:
        out.append(f"  note: {n}")
    return "\n".join(out)
