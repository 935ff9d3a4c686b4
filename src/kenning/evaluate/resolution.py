"""Entity-resolution evaluation: does ``kenning build`` put every mention of one entity on one page,
and never two entities on one page?

Two kinds of input, told apart by what the folder holds:

- a **labelled corpus** (``gold.jsonl``, see below): synced into a fresh temporary vault, built with
  :func:`kenning.builder.run_build`, and scored from the mention log the build writes
  (``.kenning/build/mentions.jsonl``) with B-cubed and pairwise precision/recall;
- the **Enron silver map** (``derived_address_displayname_silver.json`` next to the Enron mbox, as
  in ``../shared/eval/enron/``): the mbox is synced and built, then checked against the map.

Nothing is ever written inside the input folder; the vault lives in a temporary folder (or in
``workdir`` when given, to look at afterwards).

Labelled corpus format
----------------------
::

    CORPUS/
      gold.jsonl            one JSON object per line (blank lines and lines starting with # skipped)
      config.yaml           optional: vault config merged into the vault's (e.g. the owner)
      sources/
        email/              mbox files, .eml files, Maildirs → the email connector, one sync each
        meetings/           transcripts (.vtt, .srt, .txt, .md, JSON exports) → meetings
        chats/              chat sessions (.json, .jsonl) → chats
        calendar/           .ics files → calendar
        raw/<folder>/*.md   raw-layer Markdown, copied as-is to the vault's sources/<folder>/

Each entry directly under ``sources/<connector>/`` (a file or a folder) is synced on its own, so
the files it produced are known. A gold line::

    {"source": "<msg-1@example.test>", "match": "Bob Smith", "identity": "person:robert-smith",
     "kind": "person"}

- ``source`` names where the mention is: the corpus path of an input entry
  (``sources/meetings/2025-03-02 Weekly.vtt``), a Message-ID (with or without ``<>``: the email
  thread holding it), a raw-layer ``source_id`` (``generic:chat-7``, ``meeting:2025-03-02:weekly``)
  or a vault path (``sources/email/x.md``). It stands for the set of source files it maps to.
- ``match`` is the mention as it appears there: a name form ("Smith, Robert", "Dr. Kim",
  "Sarah from TechFlow") or an email address.
- ``identity`` is any string; mentions with the same identity are one entity.
- ``kind`` (optional) is the entity type (person, organization …); when given, only logged mentions
  of that kind match.

Matching a logged mention to the gold (most specific rule first; the first rule that matches any
gold line of the mention's source file decides):

1. **address**: the gold ``match`` is an email address and equals the mention's ``email``;
2. **text**: the folded gold ``match`` equals the folded mention ``text`` (Unicode NFKC,
   case-folded, whitespace collapsed, surrounding quotes/brackets/punctuation and a leading
   honorific such as "Dr." removed);
3. **words**: the words of one are a subset of the words of the other ("Sarah" ⊂ "Sarah from
   TechFlow", "Smith, Robert" = "Robert Smith").

A mention matched by its deciding rule to gold lines of two different identities is a
**conflict** and left out; a mention matching no gold line is **unlabelled** and left out; a gold
line that no mention matched is **unmatched gold** (missed extraction), reported as its own number
and not part of the scores. Gold is therefore per source file: within one file one mention text
names one entity.

Scores, over the matched mentions: the gold cluster of a mention is its identity, the predicted
cluster is the page it was resolved to (an unresolved mention is a cluster of its own).
B-cubed precision = mean over mentions of |pred ∩ gold| / |pred|, recall = mean |pred ∩ gold| /
|gold|; pairwise precision = pairs in one predicted and one gold cluster / pairs in one predicted
cluster, recall = the same pairs / pairs in one gold cluster (1.0 when there are no pairs).

Enron silver check
------------------
The map gives each address the display names seen with it. From the mention log: **consistent
addresses** is the share of addresses with several display forms (that the log holds, resolved at
least once) whose resolved mentions all end on one page; **silver violations** are pages that hold
two addresses whose display names share no normalised name (first + last name, "Last, First"
turned round, quotes, "(E-mail)" and ``@ENRON`` residue dropped) — two different people on one page.
Addresses whose display names are only addresses or single words are not compared.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kenning.errors import KenningError

GOLD_NAME = "gold.jsonl"
CONFIG_NAME = "config.yaml"
SILVER_NAME = "derived_address_displayname_silver.json"
MENTIONS = Path(".kenning") / "build" / "mentions.jsonl"
CONNECTORS = ("email", "meetings", "chats", "calendar")
RAW = "raw"
UNRESOLVED = "(unresolved)"
SHOWN = 10  # error examples kept per list

_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
_HONORIFIC = re.compile(r"^(?:dr|mr|mrs|ms|mx|miss|prof|sir|dame)\.?\s+", re.IGNORECASE)
_STRIP = "\"'`“”‘’«»<>()[]{}.,;:!? \t"
_WORD = re.compile(r"\w+")


class ResolutionEvalError(KenningError):
    """The evaluation cannot run: a bad corpus, gold line or mention log, or no build stage."""


# -- gold and mentions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Gold:
    source: str
    match: str
    identity: str
    kind: str | None = None
    line: int = 0  # line in gold.jsonl

    @property
    def is_address(self) -> bool:
        return bool(_ADDRESS.match(self.match.strip()))


def load_gold(path: Path) -> list[Gold]:
    """Read ``gold.jsonl``; a bad line raises an error naming the file and the line."""
    gold: list[Gold] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResolutionEvalError(f"cannot read ({exc.strerror or exc})", path=str(path)) from None
    except UnicodeDecodeError:
        raise ResolutionEvalError("not UTF-8 text", path=str(path)) from None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            raise ResolutionEvalError(f"invalid JSON ({exc.args[0].split(':')[0]})",
                                      path=str(path), line=n) from None
        if not isinstance(obj, dict):
            raise ResolutionEvalError("a gold line must be a JSON object", path=str(path), line=n)
        values: dict[str, str] = {}
        for key in ("source", "match", "identity"):
            value = obj.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ResolutionEvalError(f"field '{key}' must be a non-empty string",
                                          path=str(path), line=n, field=key)
            values[key] = value.strip()
        kind = obj.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise ResolutionEvalError("field 'kind' must be a string", path=str(path), line=n,
                                      field="kind")
        gold.append(Gold(values["source"], values["match"], values["identity"],
                         kind.strip().lower() if kind else None, n))
    if not gold:
        raise ResolutionEvalError("no gold mentions", path=str(path))
    return gold


@dataclass(frozen=True)
class Mention:
    source: str
    line: int
    text: str
    kind: str | None
    email: str | None
    page: str | None
    confidence: float | None
    rule: str | None
    index: int  # position in the log (names an unresolved mention's own cluster)


def read_mentions(path: Path) -> list[Mention]:
    """Read a mention log (``.kenning/build/mentions.jsonl``); bad lines name file and line."""
    if not path.exists():
        raise ResolutionEvalError("no mention log: did the build run?", path=str(path))
    mentions: list[Mention] = []
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                raise ResolutionEvalError("invalid JSON in the mention log", path=str(path),
                                          line=n) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("source"), str):
                raise ResolutionEvalError("a mention needs a 'source' string", path=str(path),
                                          line=n, field="source")
            text, email, page = obj.get("text"), obj.get("email"), obj.get("page")
            conf = obj.get("confidence")
            mentions.append(Mention(
                source=obj["source"], line=int(obj.get("line") or 0),
                text=text if isinstance(text, str) else "",
                kind=str(obj["kind"]).lower() if obj.get("kind") else None,
                email=email.strip().lower() if isinstance(email, str) and email.strip() else None,
                page=page if isinstance(page, str) and page else None,
                confidence=float(conf) if isinstance(conf, int | float) else None,
                rule=str(obj["rule"]) if obj.get("rule") is not None else None,
                index=len(mentions)))
    return mentions


def fold(text: str) -> str:
    """The form mention texts are compared in (see the module doc)."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = " ".join(t.split()).strip(_STRIP)
    t = _HONORIFIC.sub("", t)
    return " ".join(t.split()).strip(_STRIP)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(fold(text)))


# -- matching --------------------------------------------------------------------------------


@dataclass
class Matching:
    items: list[tuple[Mention, str]]  # (mention, gold identity)
    rules: Counter[str]  # how many mentions each matching rule labelled
    unmatched: list[Gold]  # gold lines no mention matched
    unmapped: list[Gold]  # gold lines whose source maps to no file
    conflicts: list[tuple[Mention, list[str]]]
    unlabelled: int


def match_mentions(gold: list[Gold], mentions: list[Mention],
                   files_of: Callable[[str], set[str]]) -> Matching:
    """Label logged mentions with gold identities (rules in the module doc)."""
    by_file: dict[str, list[Gold]] = defaultdict(list)
    unmapped: list[Gold] = []
    for g in gold:
        files = files_of(g.source)
        if not files:
            unmapped.append(g)
        for f in files:
            by_file[f].append(g)
    used: set[int] = set()  # gold line numbers matched at least once
    items: list[tuple[Mention, str]] = []
    rules: Counter[str] = Counter()
    conflicts: list[tuple[Mention, list[str]]] = []
    unlabelled = 0
    for m in mentions:
        candidates = [g for g in by_file.get(m.source, ())
                      if not (g.kind and m.kind and g.kind != m.kind)]
        hit: list[Gold] = []
        rule = ""
        if m.email:
            hit = [g for g in candidates if g.is_address and g.match.lower() == m.email.lower()]
            rule = "address"
        if not hit and m.text:
            text = fold(m.text)
            hit = [g for g in candidates if fold(g.match) == text]
            rule = "text"
        if not hit and m.text:
            words = _words(m.text)
            if words:
                hit = [g for g in candidates if not g.is_address
                       and (words <= _words(g.match) or _words(g.match) <= words)
                       and _words(g.match)]
                rule = "words"
        if not hit:
            unlabelled += 1
            continue
        identities = sorted({g.identity for g in hit})
        if len(identities) > 1:
            conflicts.append((m, identities))
            continue
        used.update(g.line for g in hit)
        items.append((m, identities[0]))
        rules[rule] += 1
    unmatched = [g for g in gold if g.line not in used and g not in unmapped]
    return Matching(items, rules, unmatched, unmapped, conflicts, unlabelled)


# -- scores ----------------------------------------------------------------------------------


@dataclass
class Scores:
    mentions: int
    gold_entities: int
    predicted_clusters: int
    b3_precision: float
    b3_recall: float
    b3_f1: float
    pairwise_precision: float
    pairwise_recall: float
    pairwise_f1: float


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def score_clusters(pairs: Iterable[tuple[str, str]]) -> Scores:
    """B-cubed and pairwise scores of (gold identity, predicted cluster) per mention."""
    pairs = list(pairs)
    n = len(pairs)
    cells = Counter(pairs)
    gold_sizes = Counter(g for g, _ in pairs)
    pred_sizes = Counter(p for _, p in pairs)
    if n == 0:
        return Scores(0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    # Each mention in cell (g, p) sees |cell| mentions of its own in its predicted / gold cluster.
    b3_p = sum(c * c / pred_sizes[p] for (_, p), c in cells.items()) / n
    b3_r = sum(c * c / gold_sizes[g] for (g, _), c in cells.items()) / n
    same_both = sum(math.comb(c, 2) for c in cells.values())
    same_pred = sum(math.comb(c, 2) for c in pred_sizes.values())
    same_gold = sum(math.comb(c, 2) for c in gold_sizes.values())
    pw_p = same_both / same_pred if same_pred else 1.0
    pw_r = same_both / same_gold if same_gold else 1.0
    return Scores(n, len(gold_sizes), len(pred_sizes), b3_p, b3_r, _f1(b3_p, b3_r),
                  pw_p, pw_r, _f1(pw_p, pw_r))


def predicted_cluster(m: Mention) -> str:
    return m.page if m.page else f"{UNRESOLVED}#{m.index}"


# -- corpus → vault --------------------------------------------------------------------------


def is_corpus(path: Path) -> bool:
    return (path / GOLD_NAME).is_file()


def is_silver(path: Path) -> bool:
    return (path / SILVER_NAME).is_file()


def _new_vault(root: Path, config: Path | None) -> None:
    from kenning.vault.layout import init_vault

    init_vault(root)
    if config is not None and config.is_file():
        merge_config(root, config)


def merge_config(root: Path, snippet: Path, *, keep_existing: bool = False) -> list[str]:
    """Merge the top-level keys of a YAML snippet into the vault's ``.kenning/config.yaml``
    (comments and order kept); with ``keep_existing`` a key the vault already has is left alone.
    Returns the keys written."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from kenning.vault.fsio import atomic_write_text
    from kenning.vault.layout import CONFIG_NAME as VAULT_CONFIG
    from kenning.vault.layout import STATE_DIR

    try:
        extra = YAML(typ="safe").load(snippet.read_text(encoding="utf-8")) or {}
    except (YAMLError, OSError, UnicodeDecodeError) as exc:
        raise ResolutionEvalError(f"cannot read the config snippet ({exc})",
                                  path=str(snippet)) from None
    if not isinstance(extra, dict):
        raise ResolutionEvalError("the config snippet must be a mapping", path=str(snippet))
    target = root / STATE_DIR / VAULT_CONFIG
    yaml = YAML()
    try:
        data = yaml.load(target.read_text(encoding="utf-8")) if target.exists() else None
    except YAMLError as exc:
        raise ResolutionEvalError(f"invalid YAML in the vault config ({exc})",
                                  path=str(target)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ResolutionEvalError("the vault config must be a mapping", path=str(target))
    written = [k for k in extra if not (keep_existing and data.get(k))]
    if not written:
        return []
    for key in written:
        data[key] = extra[key]
    buf = io.StringIO()
    yaml.dump(data, buf)
    atomic_write_text(target, buf.getvalue())
    return written


def sync_inputs(corpus: Path, root: Path,
                progress: Callable[[str], None] | None = None) -> tuple[dict[str, list[str]],
                                                                         list[str]]:
    """Sync every input entry under ``corpus/sources/`` into the vault at ``root``.

    Returns (corpus path of each entry → vault source paths it produced, warnings).
    """
    from kenning.sources import calendar, chats, email, meetings

    syncs: dict[str, Callable[..., Any]] = {
        "email": lambda r, t: email.sync(r, str(t)), "meetings": meetings.sync,
        "chats": chats.sync, "calendar": calendar.sync}
    produced: dict[str, list[str]] = {}
    warnings: list[str] = []
    base = corpus / "sources"
    if not base.is_dir():
        raise ResolutionEvalError("no sources/ folder in the corpus", path=str(corpus))
    known = {*CONNECTORS, RAW}
    for child in sorted(base.iterdir()):
        if child.name not in known and not child.name.startswith("."):
            warnings.append(f"{child}: not a connector folder ({', '.join(sorted(known))}); "
                            "skipped")
    for connector in CONNECTORS:
        folder = base / connector
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith("."):
                continue
            rel = entry.relative_to(corpus).as_posix()
            if progress:
                progress(rel)
            report = syncs[connector](root, entry)
            produced[rel] = sorted(set(report.paths))
            warnings.extend(report.warnings)
    raw = base / RAW
    if raw.is_dir():
        from kenning.vault.fsio import atomic_write_bytes

        for file in sorted(raw.rglob("*.md")):
            rel_in_raw = file.relative_to(raw).as_posix()
            dest = root / "sources" / rel_in_raw
            atomic_write_bytes(dest, file.read_bytes())
            produced[file.relative_to(corpus).as_posix()] = [f"sources/{rel_in_raw}"]
    return produced, warnings


def source_keys(root: Path) -> dict[str, set[str]]:
    """Every way a gold ``source`` can name a vault source file → those files."""
    from kenning.vault import frontmatter

    keys: dict[str, set[str]] = defaultdict(set)
    sources = root / "sources"
    if not sources.is_dir():
        return keys
    for file in sorted(sources.rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        keys[rel].add(rel)
        try:
            data = frontmatter.read(file.read_text(encoding="utf-8")).data or {}
        except (OSError, UnicodeDecodeError):
            continue
        sid = data.get("source_id")
        if sid:
            keys[str(sid)].add(rel)
        for mid in data.get("message_ids") or []:
            keys[_msgid(str(mid))].add(rel)
    return keys


def _msgid(value: str) -> str:
    return value.strip().strip("<>").lower()


def file_resolver(produced: dict[str, list[str]],
                  keys: dict[str, set[str]]) -> Callable[[str], set[str]]:
    def files_of(source: str) -> set[str]:
        if source in produced:
            return set(produced[source])
        if source in keys:
            return set(keys[source])
        return set(keys.get(_msgid(source), ()))
    return files_of


# -- the run ---------------------------------------------------------------------------------


@dataclass
class ErrorExample:
    what: str  # "merge" | "split"
    name: str  # the page (merge) or the gold identity (split)
    counts: dict[str, int]  # identity → mentions (merge) or page → mentions (split)
    texts: list[str] = field(default_factory=list)
    rules: dict[str, int] = field(default_factory=dict)


@dataclass
class ResolutionResult:
    corpus: str
    scores: Scores
    gold_lines: int
    matched_gold: int
    unmatched_gold: int
    unmapped_gold: int
    mentions_logged: int
    unlabelled: int
    conflicts: int
    resolved: int  # matched mentions resolved to a page
    missing_pages: int  # matched mentions whose page is not in the vault after the build
    by_kind: dict[str, Scores]
    by_rule: dict[str, dict[str, int]]  # build rule → {mentions, resolved, wrong}
    matched_by: dict[str, int]
    merges: list[ErrorExample]
    splits: list[ErrorExample]
    unmatched_examples: list[dict[str, Any]]
    warnings: list[str]
    seconds: dict[str, float]
    vault: str | None = None


def evaluate(gold: list[Gold], mentions: list[Mention], files_of: Callable[[str], set[str]], *,
             root: Path | None = None, corpus: str = "") -> ResolutionResult:
    """Score a mention log against gold lines (no build, no sync: for tests and re-scoring)."""
    matching = match_mentions(gold, mentions, files_of)
    items = matching.items
    scores = score_clusters((ident, predicted_cluster(m)) for m, ident in items)
    by_kind: dict[str, Scores] = {}
    kinds = sorted({m.kind or "?" for m, _ in items})
    if len(kinds) > 1:
        for kind in kinds:
            by_kind[kind] = score_clusters((ident, predicted_cluster(m)) for m, ident in items
                                           if (m.kind or "?") == kind)
    merges, splits, majority = _errors(items)
    by_rule: dict[str, dict[str, int]] = defaultdict(lambda: {"mentions": 0, "resolved": 0,
                                                              "wrong": 0})
    for m, ident in items:
        row = by_rule[m.rule or "?"]
        row["mentions"] += 1
        if m.page:
            row["resolved"] += 1
            if majority.get(m.page) != ident:
                row["wrong"] += 1
    missing = 0
    if root is not None:
        missing = sum(1 for m, _ in items if m.page and not (root / m.page).is_file())
    return ResolutionResult(
        corpus=corpus, scores=scores, gold_lines=len(gold),
        matched_gold=len(gold) - len(matching.unmatched) - len(matching.unmapped),
        unmatched_gold=len(matching.unmatched), unmapped_gold=len(matching.unmapped),
        mentions_logged=len(mentions), unlabelled=matching.unlabelled,
        conflicts=len(matching.conflicts), resolved=sum(1 for m, _ in items if m.page),
        missing_pages=missing, by_kind=by_kind, by_rule=dict(sorted(by_rule.items())),
        matched_by=dict(matching.rules), merges=merges, splits=splits,
        unmatched_examples=[{"source": g.source, "match": g.match, "identity": g.identity,
                             "line": g.line}
                            for g in (matching.unmapped + matching.unmatched)[:SHOWN]],
        warnings=[], seconds={})


def _errors(items: list[tuple[Mention, str]]) -> tuple[list[ErrorExample], list[ErrorExample],
                                                        dict[str, str]]:
    by_page: dict[str, list[tuple[Mention, str]]] = defaultdict(list)
    by_ident: dict[str, list[Mention]] = defaultdict(list)
    for m, ident in items:
        if m.page:
            by_page[m.page].append((m, ident))
        by_ident[ident].append(m)
    majority: dict[str, str] = {}
    merges: list[ErrorExample] = []
    for page, rows in by_page.items():
        counts = Counter(ident for _, ident in rows)
        majority[page] = counts.most_common(1)[0][0]
        if len(counts) > 1:
            wrong = [(m, i) for m, i in rows if i != majority[page]]
            merges.append(ErrorExample(
                "merge", page, dict(counts.most_common()),
                sorted({f"{m.text} [{i}]" for m, i in wrong})[:5],
                dict(Counter(m.rule or "?" for m, _ in wrong).most_common())))
    merges.sort(key=lambda e: (-(sum(e.counts.values()) - max(e.counts.values())), e.name))
    splits: list[ErrorExample] = []
    for ident, ms in by_ident.items():
        counts = Counter(m.page or UNRESOLVED for m in ms)
        if len(counts) > 1:
            top = counts.most_common(1)[0][0]
            off = [m for m in ms if (m.page or UNRESOLVED) != top]
            splits.append(ErrorExample(
                "split", ident, dict(counts.most_common()), sorted({m.text for m in off})[:5],
                dict(Counter(m.rule or "?" for m in off).most_common())))
    splits.sort(key=lambda e: (-(sum(e.counts.values()) - max(e.counts.values())), e.name))
    return merges[:SHOWN], splits[:SHOWN], majority


def _import_build() -> Callable[..., Any]:
    try:
        from kenning.builder import run_build
    except ImportError as exc:
        raise ResolutionEvalError(f"the build stage is not available ({exc})") from None
    return run_build


def _timed_build(run_build: Callable[..., Any], root: Path, batch_size: int,
                 progress: Callable[[str], None] | None) -> float:
    """Run the build over ``root``; its wall time in seconds."""
    if progress:
        progress("build")
    started = time.perf_counter()
    run_build(root, batch_size=batch_size)
    return time.perf_counter() - started


class _Workdir:
    """A fresh vault folder: ``workdir`` (must be empty or absent) or a temporary one."""

    def __init__(self, workdir: Path | None) -> None:
        self.keep = workdir is not None
        if workdir is not None:
            workdir = Path(workdir)
            if workdir.exists() and any(workdir.iterdir()):
                raise ResolutionEvalError("the work folder must be empty or absent",
                                          path=str(workdir))
            workdir.mkdir(parents=True, exist_ok=True)
            self.path = workdir
        else:
            self.path = Path(tempfile.mkdtemp(prefix="kenning-eval-resolution-")) / "vault"

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        if not self.keep:
            shutil.rmtree(self.path.parent, ignore_errors=True)


def run_resolution(corpus: Path, *, workdir: Path | None = None, batch_size: int = 50,
                   progress: Callable[[str], None] | None = None) -> ResolutionResult:
    """Sync a labelled corpus into a fresh vault, build it and score the mention log."""
    corpus = Path(corpus)
    gold = load_gold(corpus / GOLD_NAME)
    run_build = _import_build()
    with _Workdir(workdir) as root:
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        _new_vault(root, corpus / CONFIG_NAME)
        produced, warnings = sync_inputs(corpus, root, progress)
        seconds["sync"] = time.perf_counter() - t0
        seconds["build"] = _timed_build(run_build, root, batch_size, progress)
        mentions = read_mentions(root / MENTIONS)
        result = evaluate(gold, mentions, file_resolver(produced, source_keys(root)), root=root,
                          corpus=str(corpus))
        result.warnings = warnings
        result.seconds = {k: round(v, 2) for k, v in seconds.items()}
        result.vault = str(root) if workdir is not None else None
    return result


# -- Enron silver ------------------------------------------------------------------------------

_SILVER_JUNK = re.compile(r"\((?:e-?mail)\)|<[^>]*>|@\S+|\"", re.IGNORECASE)
_ADDRESS_LIKE = re.compile(r"\S+@\S+")


def silver_names(display_names: Iterable[str]) -> set[str]:
    """Normalised ``first last`` forms of display names (address-only and one-word forms drop)."""
    names: set[str] = set()
    for raw in display_names:
        text = unicodedata.normalize("NFKD", raw)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        if _ADDRESS_LIKE.fullmatch(text.strip(" '\"")):
            continue
        text = _SILVER_JUNK.sub(" ", text).replace("'", " ").strip()
        if "/" in text:  # Lotus Notes "Mark Whitt/DEN/ECT"
            text = text.split("/", 1)[0]
        if "," in text:
            last, _, first = text.partition(",")
            text = f"{first} {last}"
        words = [w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 1]
        if len(words) >= 2:
            names.add(f"{words[0]} {words[-1]}")
    return names


def _silver_same(a: set[str], b: set[str]) -> bool:
    if a & b:
        return True
    # Nickname forms ("Ben Rogers" / "Benjamin Rogers"): same last name, one first name a prefix.
    for x in a:
        for y in b:
            fx, lx = x.split(" ", 1)
            fy, ly = y.split(" ", 1)
            if lx == ly and (fx.startswith(fy) or fy.startswith(fx)):
                return True
    return False


@dataclass
class SilverResult:
    data: str
    addresses: int  # addresses in the silver map
    multi_form: int  # … with several display forms
    multi_form_logged: int  # … of those, resolved at least once in the log
    consistent: int  # … of those, all resolved mentions on one page
    scattered: list[dict[str, Any]]
    pages_checked: int  # pages holding at least one silver address
    multi_address_pages: int  # … of those, pages holding several (the merges checked)
    partly_unresolved: int  # multi-form addresses with some mentions left unresolved
    violations: list[dict[str, Any]]
    violation_count: int
    mentions_logged: int
    address_mentions: int
    resolved_address_mentions: int
    messages: int
    sources: int
    seconds: dict[str, float]
    warnings: list[str]
    vault: str | None = None

    @property
    def consistent_share(self) -> float:
        return self.consistent / self.multi_form_logged if self.multi_form_logged else 1.0


def check_silver(silver: dict[str, dict[str, int]], mentions: list[Mention]) -> SilverResult:
    """The two silver checks over a mention log (no sync, no build: for tests)."""
    silver = {a.lower(): v for a, v in silver.items()}
    pages_of: dict[str, Counter[str]] = defaultdict(Counter)
    addrs_of: dict[str, Counter[str]] = defaultdict(Counter)
    address_mentions = resolved = 0
    unresolved: set[str] = set()
    for m in mentions:
        if not m.email:
            continue
        address_mentions += 1
        if not m.page:
            unresolved.add(m.email)
        if m.page:
            resolved += 1
            pages_of[m.email][m.page] += 1
            if m.email in silver:
                addrs_of[m.page][m.email] += 1
    multi = {a for a, forms in silver.items() if len(forms) > 1}
    logged = [a for a in sorted(multi) if pages_of.get(a)]
    scattered = [{"address": a, "pages": dict(pages_of[a].most_common()),
                  "display_names": sorted(silver[a])} for a in logged if len(pages_of[a]) > 1]
    names = {a: silver_names(forms) for a, forms in silver.items()}
    violations: list[dict[str, Any]] = []
    for page, addrs in sorted(addrs_of.items()):
        named = [a for a in sorted(addrs) if names[a]]
        clashes = [(a, b) for i, a in enumerate(named) for b in named[i + 1:]
                   if not _silver_same(names[a], names[b])]
        if clashes:
            violations.append({"page": page, "addresses": {a: sorted(names[a]) for a in named},
                               "pairs": [list(p) for p in clashes[:5]]})
    return SilverResult(
        data="", addresses=len(silver), multi_form=len(multi), multi_form_logged=len(logged),
        consistent=len(logged) - len(scattered), scattered=scattered[:SHOWN],
        pages_checked=len(addrs_of),
        multi_address_pages=sum(1 for addrs in addrs_of.values() if len(addrs) > 1),
        partly_unresolved=sum(1 for a in logged if a in unresolved), violations=violations[:SHOWN],
        violation_count=len(violations), mentions_logged=len(mentions),
        address_mentions=address_mentions, resolved_address_mentions=resolved, messages=0,
        sources=0, seconds={}, warnings=[])


def run_silver(path: Path, *, workdir: Path | None = None, batch_size: int = 50,
               progress: Callable[[str], None] | None = None) -> SilverResult:
    """Sync the Enron mbox next to the silver map, build, and check the map."""
    path = Path(path)
    silver_path = path / SILVER_NAME
    try:
        silver = json.loads(silver_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResolutionEvalError(f"cannot read the silver map ({exc})",
                                  path=str(silver_path)) from None
    if not isinstance(silver, dict) or not all(isinstance(v, dict) for v in silver.values()):
        raise ResolutionEvalError("the silver map must map addresses to {display name: count}",
                                  path=str(silver_path))
    boxes = sorted(path.glob("*.mbox"))
    if not boxes:
        raise ResolutionEvalError("no .mbox file next to the silver map", path=str(path))
    run_build = _import_build()
    from kenning.sources import email

    with _Workdir(workdir) as root:
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        _new_vault(root, None)
        warnings: list[str] = []
        items = sources = 0
        for box in boxes:
            if progress:
                progress(box.name)
            report = email.sync(root, str(box))
            warnings.extend(report.warnings)
            items += report.items_read
            sources += report.created
        seconds["sync"] = time.perf_counter() - t0
        seconds["build"] = _timed_build(run_build, root, batch_size, progress)
        result = check_silver(silver, read_mentions(root / MENTIONS))
        result.data, result.messages, result.sources = str(path), items, sources
        result.seconds = {k: round(v, 2) for k, v in seconds.items()}
        result.warnings = warnings
        result.vault = str(root) if workdir is not None else None
    return result


# -- reports ---------------------------------------------------------------------------------


def to_json(result: ResolutionResult | SilverResult) -> str:
    data = asdict(result)
    if isinstance(result, SilverResult):
        data["consistent_share"] = round(result.consistent_share, 4)
    return json.dumps(data, ensure_ascii=False, indent=2)


def _pct(x: float) -> str:
    return f"{x:.3f}"


def format_report(result: ResolutionResult) -> str:
    s = result.scores
    lines = [f"Resolution on {result.corpus}",
             f"  gold: {result.gold_lines} lines, {result.matched_gold} matched, "
             f"{result.unmatched_gold} unmatched (not extracted), "
             f"{result.unmapped_gold} whose source maps to no file",
             f"  log: {result.mentions_logged} mentions, {s.mentions} labelled "
             f"({', '.join(f'{k} {v}' for k, v in sorted(result.matched_by.items())) or '-'}), "
             f"{result.unlabelled} unlabelled, {result.conflicts} conflicts; "
             f"{result.resolved} of the labelled resolved to a page",
             f"  {s.gold_entities} gold entities, {s.predicted_clusters} predicted clusters",
             "",
             f"  {'':14}{'precision':>10}{'recall':>10}{'F1':>10}",
             f"  {'B-cubed':14}{_pct(s.b3_precision):>10}{_pct(s.b3_recall):>10}"
             f"{_pct(s.b3_f1):>10}",
             f"  {'pairwise':14}{_pct(s.pairwise_precision):>10}{_pct(s.pairwise_recall):>10}"
             f"{_pct(s.pairwise_f1):>10}"]
    for kind, ks in result.by_kind.items():
        lines.append(f"  {'B³ ' + kind:14}{_pct(ks.b3_precision):>10}{_pct(ks.b3_recall):>10}"
                     f"{_pct(ks.b3_f1):>10}   ({ks.mentions} mentions)")
    if result.missing_pages:
        lines.append(f"  note: {result.missing_pages} labelled mentions name a page that is not "
                     "in the vault after the build (renamed or removed)")
    if result.by_rule:
        lines += ["", "  by build rule: mentions / resolved / on a page of another entity"]
        for rule, row in result.by_rule.items():
            lines.append(f"    {rule:28} {row['mentions']:6} {row['resolved']:6} "
                         f"{row['wrong']:6}")
    if result.merges:
        lines += ["", "  wrong merges (page: gold entities and their mentions):"]
        for e in result.merges:
            lines.append(f"    {e.name}: " + ", ".join(f"{k} ×{v}" for k, v in e.counts.items())
                         + (f"  e.g. {'; '.join(e.texts)}" if e.texts else ""))
    if result.splits:
        lines += ["", "  split entities (gold entity: pages and their mentions):"]
        for e in result.splits:
            lines.append(f"    {e.name}: " + ", ".join(f"{k} ×{v}" for k, v in e.counts.items())
                         + (f"  e.g. {'; '.join(e.texts)}" if e.texts else ""))
    if result.unmatched_examples:
        lines += ["", "  unmatched gold (first few):"]
        for g in result.unmatched_examples:
            lines.append(f"    gold.jsonl:{g['line']}: {g['match']!r} in {g['source']}")
    if result.seconds:
        lines.append("\n  " + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()))
    if result.warnings:
        lines.append(f"  {len(result.warnings)} sync warnings (first: {result.warnings[0]})")
    if result.vault:
        lines.append(f"  vault kept at {result.vault}")
    return "\n".join(lines)


def format_silver(result: SilverResult) -> str:
    lines = [f"Enron silver check on {result.data}",
             f"  synced {result.messages} messages into {result.sources} thread files; "
             f"{result.mentions_logged} mentions logged, {result.address_mentions} with an "
             f"address ({result.resolved_address_mentions} resolved)",
             f"  addresses with several display forms: {result.multi_form} in the map, "
             f"{result.multi_form_logged} resolved in the log, {result.consistent} on one page "
             f"({result.consistent_share:.1%}); {result.partly_unresolved} of them with some "
             "mentions left unresolved",
             f"  pages merging different silver names: {result.violation_count} "
             f"(of {result.pages_checked} pages holding a silver address, "
             f"{result.multi_address_pages} of them several)"]
    for v in result.violations:
        lines.append(f"    {v['page']}: " + "; ".join(
            f"{a} ({', '.join(n)})" for a, n in v["addresses"].items()))
    if result.scattered:
        lines.append("  addresses spread over several pages:")
        for s in result.scattered:
            lines.append(f"    {s['address']}: " + ", ".join(
                f"{p} ×{c}" for p, c in s["pages"].items()))
    if result.seconds:
        lines.append("  " + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()))
    if result.vault:
        lines.append(f"  vault kept at {result.vault}")
    return "\n".join(lines)
