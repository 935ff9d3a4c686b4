"""YAML frontmatter: locate it, read it into plain JSON-able values, edit single keys in place.

Reading uses a safe loader and never raises on bad content: the caller gets a problem with the file
line instead. Editing splices only the lines of the keys it changes, so a person's comments,
quoting, key order and blank lines survive byte for byte (see docs/vault-format.md).
"""

from __future__ import annotations

import datetime as _dt
import functools
import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import RoundTripConstructor, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kenning.errors import KenningError

# Bounds on what one YAML text may make (frontmatter, the vault config): a 339-byte "billion
# laughs" (nine anchors of nine aliases each) is a graph of 90 nodes that expands to 9**9 values
# when anything walks it as a tree, and 40,000 nested '[' overflow the C composer's stack. The
# graph is checked before anything is constructed from it (``_check_graph``); texts long enough
# to nest that deep are checked on the event stream first, before the composer sees them.
MAX_YAML_CHARS = 256 * 1024   # a frontmatter block or config file
MAX_YAML_NODES = 100_000      # values after alias expansion
MAX_YAML_DEPTH = 64           # nested collections
_EVENT_CHECK_CHARS = 4096     # shorter texts cannot nest deep enough to hurt the C composer


class YamlLimit(MarkedYAMLError):
    """YAML over a bound (size, depth, values after alias expansion, a recursive alias)."""


def _limit(problem: str, node_or_mark: Any = None) -> YamlLimit:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    return YamlLimit(problem=problem, problem_mark=mark)


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_graph(root: Node) -> None:
    """Raise YamlLimit when the node graph, expanded as a tree, is too big or too deep, or has
    a cycle. Iterative and memoised per node, so its cost is the graph's, not the tree's."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in kids)
            height[key] = 1 + max((height[id(c)] for c in kids), default=0)
            open_.discard(key)
            if size[key] > MAX_YAML_NODES:
                raise _limit(f"more than {MAX_YAML_NODES:,} values once aliases are expanded "
                             "(an alias bomb?)", node)
            if height[key] > MAX_YAML_DEPTH:
                raise _limit(f"nested more than {MAX_YAML_DEPTH} levels deep", node)
            continue
        if key in size:
            continue
        open_.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_:
                raise _limit("a recursive alias (a value that contains itself)", child)
            if id(child) not in size:
                stack.append((child, False))


def _check_events(yaml: YAML, text: str) -> None:
    """Raise YamlLimit when ``text`` nests too deep, reading parser events (no composition)."""
    depth = 0
    for event in yaml.parse(text):
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise _limit(f"nested more than {MAX_YAML_DEPTH} levels deep", event)
        elif isinstance(event, CollectionEndEvent):
            depth -= 1


class _SafeConstructor(SafeConstructor):
    def construct_document(self, node: Any) -> Any:
        _check_graph(node)
        return super().construct_document(node)


class _RoundTripConstructor(RoundTripConstructor):
    def construct_document(self, node: Any) -> Any:
        _check_graph(node)
        return super().construct_document(node)


def load_yaml(yaml: YAML, text: str) -> Any:
    """``yaml.load(text)`` within the bounds above (raises YamlLimit, a YAMLError, past them).

    Every YAML load of the vault's own files goes through here, with a loader of
    :func:`safe_yaml` or the round-trip editor's: their constructors check the node graph."""
    if len(text) > MAX_YAML_CHARS:
        raise _limit(f"{len(text) / 1024:,.0f} KB of YAML (at most {MAX_YAML_CHARS // 1024} KB)")
    if len(text) > _EVENT_CHECK_CHARS:
        _check_events(yaml, text)
    return yaml.load(text)


def safe_yaml() -> YAML:
    """A safe loader (ruamel's C parser when present) whose constructor checks the bounds."""
    y = YAML(typ="safe")
    y.Constructor = _SafeConstructor
    return y


# The safe loader is stateless between loads, so one instance serves every parse. It scans
# and parses with ruamel's C extension (ruamel.yaml.clib, a dependency) when present — about
# four times faster than the pure-Python parser, with the same YAML 1.2 values — and falls back
# to pure Python where it is not.
_SAFE = safe_yaml()
_ROUND_TRIP: YAML | None = None

_OPEN = re.compile(r"---[ \t]*\r?")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Line breaks YAML's C reader counts and Kenning's lines (split at "\n") do not: a lone CR, NEL,
# and the Unicode line and paragraph separators.
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


class FrontmatterError(KenningError, ValueError):
    """Frontmatter that cannot be edited safely (malformed YAML, unterminated block)."""


@dataclass(frozen=True)
class FrontmatterBlock:
    """Where the frontmatter sits in a file; line numbers are 1-based file lines."""

    yaml_text: str           # the text between the delimiters, line endings as in the file
    yaml_start: int          # file line of the first YAML line (always 2)
    close_line: int | None   # file line of the closing delimiter; None when unterminated
    body_start: int          # first body line (1 when unterminated)
    yaml_offset: int         # character offset of yaml_text in the file
    body_offset: int         # character offset of the body in the file


@dataclass(frozen=True)
class FrontmatterResult:
    """The outcome of reading a file's frontmatter."""

    data: dict[str, Any]
    body_start: int
    body_offset: int
    block: FrontmatterBlock | None
    error: tuple[int, str] | None  # (file line, message) when the frontmatter is unusable


def locate(text: str) -> FrontmatterBlock | None:
    """Find the frontmatter block (``---`` on line 1 up to ``---``/``...``), or None if absent."""
    if not text.startswith("---"):
        return None
    first_end = text.find("\n")
    first = text[: first_end if first_end >= 0 else len(text)]
    if not _OPEN.fullmatch(first):
        return None
    if first_end < 0:
        return FrontmatterBlock("", 2, None, 1, len(text), 0)
    start = first_end + 1
    match = _CLOSE.search(text, start)
    if match is None:
        return FrontmatterBlock(text[start:], 2, None, 1, start, 0)
    close_line = text.count("\n", 0, match.start()) + 1
    nl = text.find("\n", match.end())
    body_offset = len(text) if nl < 0 else nl + 1
    return FrontmatterBlock(text[start : match.start()], 2, close_line, close_line + 1, start,
                            body_offset)


def read(text: str) -> FrontmatterResult:
    """Read a file's frontmatter into plain values; problems are returned, never raised."""
    block = locate(text)
    if block is None:
        return FrontmatterResult({}, 1, 0, None, None)
    if block.close_line is None:
        return FrontmatterResult(
            {}, 1, 0, block,
            (1, "frontmatter starts with '---' but has no closing '---'; read as body"))
    odd = _ODD_BREAK.search(block.yaml_text)
    if odd is not None:
        # YAML reads these as line breaks; Kenning's lines end at "\n" (docs/vault-format.md).
        # Read one way and edited the other, a key would be spliced on the wrong line.
        line = block.yaml_start + block.yaml_text.count("\n", 0, odd.start())
        what = "a carriage return without a newline (lone CR)" if odd.group() == "\r" else \
            f"a line separator (U+{ord(odd.group()):04X})"
        return FrontmatterResult({}, block.body_start, block.body_offset, block, (
            line, f"{what} in frontmatter; save the file with LF or CRLF line endings "
                  "(frontmatter not read)"))
    if not block.yaml_text.strip():
        return FrontmatterResult({}, block.body_start, block.body_offset, block, None)
    data, error = _load(block.yaml_text, block.yaml_start)
    return FrontmatterResult(_copy(data), block.body_start, block.body_offset, block, error)


def _load(yaml_text: str, yaml_start: int) -> tuple[dict[str, Any], tuple[int, str] | None]:
    """The plain mapping of one frontmatter text, or ``{}`` and (file line, message).

    Short texts are cached: notes made from one template share their frontmatter (4,516
    distinct texts among the 13,392 of a real zettelkasten), and YAML is most of the cost of
    reading a note. Callers get a copy (``_copy``), never the cached value.
    """
    if len(yaml_text) <= _CACHED_CHARS:
        return _load_cached(yaml_text, yaml_start)
    return _parse(yaml_text, yaml_start)


_CACHED_CHARS = 2048


def _parse(yaml_text: str, yaml_start: int) -> tuple[dict[str, Any], tuple[int, str] | None]:
    try:
        loaded = load_yaml(_SAFE, yaml_text)
    except Exception as exc:  # any YAML failure is the file's problem, not the caller's
        return {}, (_error_line(exc, yaml_text, yaml_start), _error_message(exc))
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, (yaml_start, f"frontmatter must be a mapping of keys, not a "
                                f"{type(loaded).__name__}")
    return to_plain(loaded), None


_load_cached = functools.lru_cache(maxsize=4096)(_parse)


def _copy(value: Any) -> Any:
    """A copy of plain JSON-like data (mappings and lists are new; scalars are immutable)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _error_line(exc: Exception, yaml_text: str, yaml_start: int) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = getattr(mark, "line", None)
    if isinstance(line, int):
        # A mark past the last YAML line (e.g. "end of stream") is reported on the last one.
        last = yaml_start + max(yaml_text.count("\n") - 1, 0)
        return min(yaml_start + line, last)
    return yaml_start


def _error_message(exc: Exception) -> str:
    if isinstance(exc, YamlLimit):
        return f"frontmatter YAML over a limit: {exc.problem}; not read"
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    parts = [p for p in (context, problem) if p]
    if parts:
        text = "; ".join(parts)
    else:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"invalid YAML in frontmatter: {text}"


def to_plain(value: Any) -> Any:
    """Convert loaded YAML to JSON-able Python (dates → ISO strings, keys → str)."""
    if isinstance(value, dict):
        return {_plain_key(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, bool | str | int) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted((to_plain(v) for v in value), key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _plain_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    plain = to_plain(key)
    return plain if isinstance(plain, str) else str(plain)


# A plain key is its first character and, greedily, the rest up to its last non-blank before the
# line's first ':' (a lazy rest followed by [ \t]* is quadratic on a long line of blanks).
_KEY_LINE = re.compile(r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'"""
                       r"""|([^\s#'"?\-](?:[^:\r\n]*[^: \t\r\n])?"""
                       r"""|-[^\s:](?:[^:\r\n]*[^: \t\r\n])?))[ \t]*:(?:[ \t]|\r?$)""")


def key_line(block: FrontmatterBlock | None, key: str) -> int | None:
    """File line of a top-level ``key`` in the frontmatter (cheap textual scan), or None."""
    if block is None:
        return None
    return _key_lines(block.yaml_text, block.yaml_start).get(key)


def key_lines(block: FrontmatterBlock | None) -> dict[str, int]:
    """File line of every top-level key (its first occurrence), in one scan."""
    if block is None:
        return {}
    return dict(_key_lines(block.yaml_text, block.yaml_start))


@functools.lru_cache(maxsize=256)  # asked once per key of a page: one scan, not one per key
def _key_lines(yaml_text: str, yaml_start: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for i, line in enumerate(yaml_text.split("\n")):
        m = _KEY_LINE.match(line)
        if m is None:
            continue
        key = m.group(1) if m.group(1) is not None else (
            m.group(2).replace("''", "'") if m.group(2) is not None else m.group(3))
        found.setdefault(key, yaml_start + i)
    return found


# ---------------------------------------------------------------------------------------------
# Editing


def _rt() -> YAML:
    global _ROUND_TRIP
    if _ROUND_TRIP is None:
        y = YAML()
        y.Constructor = _RoundTripConstructor
        y.preserve_quotes = True
        # Obsidian's own style: block lists indented under their key.
        y.indent(mapping=2, sequence=4, offset=2)
        y.width = 4096
        y.allow_unicode = True
        _ROUND_TRIP = y
    return _ROUND_TRIP


def _yamlish(value: Any) -> Any:
    # ISO date strings are written as YAML dates so Obsidian shows them as date properties;
    # they read back as the same ISO string.
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {str(k): _yamlish(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_yamlish(v) for v in value]
    return value


def render(data: dict[str, Any]) -> str:
    """Render a mapping as block-style YAML lines (``\\n`` endings, no delimiters)."""
    if not data:
        return ""
    out = io.StringIO()
    _rt().dump({str(k): _yamlish(v) for k, v in data.items()}, out)
    return out.getvalue()


def set_frontmatter(text: str, updates: dict[str, Any], remove: Iterable[str] = ()) -> str:
    """Set/add top-level keys and remove others; every other byte of ``text`` is kept.

    Raises FrontmatterError for frontmatter the reader does not read, and for an edit that would
    not read back as asked (the page is then left as it was)."""
    removals = [k for k in remove if k not in updates]
    new = _set_frontmatter(text, updates, removals)
    after = read(new.removeprefix("\ufeff"))
    wrong = [k for k in removals if k in after.data] + [
        k for k, v in updates.items() if str(k) not in after.data
        or after.data[str(k)] != to_plain(_yamlish(v))]
    if after.error is not None or wrong:
        why = after.error[1] if after.error else f"{', '.join(map(str, wrong))} would read back " \
            "differently"
        raise FrontmatterError(f"cannot edit frontmatter: the edit would not read back ({why})",
                               line=after.error[0] if after.error else None)
    return new


def _set_frontmatter(text: str, updates: dict[str, Any], removals: list[str]) -> str:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom):]
    nl = "\r\n" if "\r\n" in text else "\n"
    block = locate(text)
    if block is None:
        if not updates:
            return bom + text
        return bom + "---" + nl + _with_nl(render(updates), nl) + "---" + nl + text
    if block.close_line is None:
        raise FrontmatterError("frontmatter has no closing '---'; fix it before editing", line=1)
    # The editor changes only frontmatter the reader reads, and finds its keys with the reader's
    # own parser: one line model, one set of limits, one notion of valid YAML.
    result = read(text)
    if result.error is not None:
        raise FrontmatterError(f"cannot edit frontmatter: {result.error[1]}",
                               line=result.error[0])
    node = _SAFE.compose(block.yaml_text) if block.yaml_text.strip() else None
    pairs = node.value if isinstance(node, MappingNode) else []
    # Frontmatter of only white space (or only comments) holds no key to keep in place; white
    # space alone is replaced (a tab line there would break the YAML once a key follows it).
    lines = block.yaml_text.split("\n") if block.yaml_text.strip() else [""]
    tail = lines.pop()  # text after the last newline (normally "")
    keys = list(result.data)
    starts = [k.start_mark.line for k, _ in pairs]
    # A mapping indented as a whole ("  a: 1") takes new and rewritten keys at its own column.
    first = lines[starts[0]] if starts and starts[0] < len(lines) else ""
    indent = " " * (len(first) - len(first.lstrip(" ")))
    merge = any(k.tag == "tag:yaml.org,2002:merge" for k, _ in pairs)
    flow = isinstance(node, MappingNode) and bool(node.flow_style)
    null = node is not None and not isinstance(node, MappingNode)  # "~" or "null": no mapping
    if flow or null or tail.strip() or merge or len(keys) != len(pairs) \
            or len(set(starts)) != len(starts):
        # No per-key lines to splice (a one-line {a: 1} mapping, a null document, merge keys,
        # keys that read as the same text): rewrite the mapping from what the reader read.
        merged = {k: v for k, v in result.data.items() if k not in removals}
        merged.update(updates)
        yaml_text = _with_nl(render(merged), nl)
        return bom + text[: block.yaml_offset] + yaml_text + text[block.yaml_offset
                                                                   + len(block.yaml_text):]
    spans: dict[Any, tuple[int, int]] = {}
    for i, k in enumerate(keys):
        end = starts[i + 1] if i + 1 < len(keys) else len(lines)
        # Blank lines and comment lines before the next key belong to that key, not this one
        # (inside a block scalar a '#' line is content, so only blank lines are trimmed there).
        value = pairs[i][1]
        block_scalar = isinstance(value, ScalarNode) and value.style in ("|", ">")
        while end - 1 > starts[i] and (not lines[end - 1].strip() or (
                not block_scalar and lines[end - 1].lstrip().startswith("#"))):
            end -= 1
        spans[k] = (starts[i], end)
    replace: dict[int, tuple[int, str]] = {}
    for k in removals:
        if k in spans:
            s, e = spans[k]
            replace[s] = (e, "")
    appended: dict[str, Any] = {}
    for k, v in updates.items():
        if k in spans:
            s, e = spans[k]
            replace[s] = (e, _with_nl(_indented(render({k: v}), indent), nl))
        else:
            appended[k] = v
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in replace:
            e, rendered = replace[i]
            out.append(rendered)
            i = e
            continue
        out.append(lines[i] + "\n")
        i += 1
    if appended:
        out.append(_with_nl(_indented(render(appended), indent), nl))
    yaml_text = "".join(out)
    return bom + text[: block.yaml_offset] + yaml_text + text[block.yaml_offset
                                                               + len(block.yaml_text):]


def _indented(rendered: str, indent: str) -> str:
    if not indent:
        return rendered
    return "".join(indent + line if line.strip() else line
                   for line in rendered.splitlines(keepends=True))


def _with_nl(rendered: str, nl: str) -> str:
    return rendered.replace("\n", nl) if nl != "\n" else rendered
