"""Parse one source file with tree-sitter into definitions, imports and references.

Grammars come from per-language wheels that bundle them compiled (no download at run time) and
are loaded on first use. Candidates for each reference are worked out from what the file itself
says (its scopes, definitions and imports); :mod:`.resolve` then checks them against all files.
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import posixpath
import re
from abc import ABC, abstractmethod
from functools import cache
from typing import Any

from kenning.index.code.model import CodeFile, Definition, Import, Reference, join

Node = Any  # tree_sitter.Node (not imported at module load)

LANGUAGE_NAMES = ("python", "javascript", "typescript", "tsx", "go", "rust")
MAX_ERRORS = 20
MAX_SIGNATURE = 300


@cache
def _parser(language: str) -> Any:
    import tree_sitter

    if language == "python":
        import tree_sitter_python as grammar

        handle = grammar.language()
    elif language == "javascript":
        import tree_sitter_javascript as grammar

        handle = grammar.language()
    elif language in ("typescript", "tsx"):
        import tree_sitter_typescript as grammar

        handle = grammar.language_tsx() if language == "tsx" else grammar.language_typescript()
    elif language == "go":
        import tree_sitter_go as grammar

        handle = grammar.language()
    elif language == "rust":
        import tree_sitter_rust as grammar

        handle = grammar.language()
    else:
        raise ValueError(f"unsupported language {language!r} (supported: {LANGUAGE_NAMES})")
    return tree_sitter.Parser(tree_sitter.Language(handle))


# ---------------------------------------------------------------- module names


def module_name(path: str, language: str, all_paths: set[str]) -> str:
    """The module a file defines, as other files of its language name it.

    Python: dotted, ``__init__`` dropped, leading folders without ``__init__.py`` stripped
    (``src/kenning/api.py`` → ``kenning.api``). JS/TS: the path without its extension. Go: the
    package directory (``.`` at the root). Rust: crate-relative (``src/a/b.rs`` → ``crate::a::b``;
    a crate below a folder keeps it: ``crates/x/src/a.rs`` → ``crates/x/crate::a``).
    """
    path = path.replace("\\", "/")
    stem, _ext = posixpath.splitext(path)
    if language == "python":
        parts = stem.split("/")
        names = [parts[-1]] if parts[-1] != "__init__" else []
        directory = parts[:-1]
        while directory and "/".join([*directory, "__init__.py"]) in all_paths:
            names.insert(0, directory[-1])
            directory = directory[:-1]
        return ".".join(names) if names else (parts[-2] if len(parts) > 1 else "__init__")
    if language in ("javascript", "typescript", "tsx"):
        return stem
    if language == "go":
        return posixpath.dirname(path) or "."
    if language == "rust":
        parts = stem.split("/")
        if "src" in parts:
            at = len(parts) - 1 - parts[::-1].index("src")
            prefix, rest = parts[:at], parts[at + 1:]
            root = "/".join([*prefix, "crate"]) if prefix else "crate"
            if rest and rest[-1] == "mod":
                rest = rest[:-1]
            if rest in (["lib"], ["main"]):
                rest = []
            return "::".join([root, *rest])
        if parts[-1] == "mod":
            parts = parts[:-1]
        return "::".join(parts)
    raise ValueError(f"unsupported language {language!r}")


# ---------------------------------------------------------------- helpers


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _lines(node: Node) -> tuple[int, int]:
    start = node.start_point.row + 1
    end = node.end_point.row + 1
    if node.end_point.column == 0 and end > start:
        end -= 1
    return start, end


def _one_line(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def _syntax_errors(root: Node) -> list[tuple[int, str]]:
    if not root.has_error:
        return []
    out: list[tuple[int, str]] = []
    stack = [root]
    while stack and len(out) < MAX_ERRORS:
        node = stack.pop()
        if node.is_missing:
            out.append((node.start_point.row + 1, f"syntax error: missing {node.type!r}"))
            continue
        if node.is_error:
            snippet = _one_line(_text(node))[:40]
            out.append((node.start_point.row + 1, f"syntax error near {snippet!r}"))
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return sorted(set(out))


class Scope:
    """A lexical scope: names bound in it (target qualname, or None for a local variable)."""

    def __init__(self, qualname: str, kind: str, parent: Scope | None,
                 cls: str | None = None, bases: tuple[tuple[str, ...], ...] = ()) -> None:
        self.qualname = qualname
        self.kind = kind  # 'module' | 'class' | 'function'
        self.parent = parent
        self.bindings: dict[str, str | None] = {}
        self.cls = cls  # for a method's scope: the class whose 'self' it sees
        self.bases = bases
        self.stars: list[str] = []
        self.outer: set[str] = set()  # names declared global / nonlocal: never local here
        #: on a class scope: attribute → candidates of its class (from ``self.x = Cls()``,
        #: ``self.x = param: Cls``, ``x: Cls`` in the body); [] when assigned several kinds
        self.attr_types: dict[str, list[str]] = {}
        #: references on ``self.attr.…`` whose candidates wait for the whole class body
        self.deferred: list[tuple[int, str, str]] = []
        #: local name → the class it holds, as written (from an annotation or ``x = Cls(...)``);
        #: "" when it was given more than one
        self.types: dict[str, str] = {}

    def note_type(self, name: str, text: str) -> None:
        if self.types.get(name, text) != text:
            text = ""
        self.types[name] = text

    def bind(self, name: str, target: str | None, *, weak: bool = False) -> None:
        if weak and name in self.bindings:
            return
        if target is None and name in self.outer:
            return
        self.bindings[name] = target

    def lookup(self, name: str) -> tuple[bool, str | None]:
        where = self.where(name)
        return (True, where.bindings[name]) if where is not None else (False, None)

    def where(self, name: str) -> Scope | None:
        """The scope that binds a name (class bodies are not seen from their methods)."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if (first or scope.kind != "class") and name in scope.bindings:
                return scope
            first = False
            scope = scope.parent
        return None

    def module(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def owner(self) -> Scope | None:
        """For a method's scope (or one nested in it): the class scope it belongs to."""
        scope: Scope | None = self
        while scope is not None:
            if scope.cls is not None:
                return scope.parent
            scope = scope.parent
        return None

    def note_attr(self, name: str, candidates: list[str]) -> None:
        if name in self.attr_types and self.attr_types[name] != candidates:
            candidates = []
        self.attr_types[name] = candidates

    def method_class(self) -> tuple[str | None, tuple[tuple[str, ...], ...]]:
        scope: Scope | None = self
        while scope is not None:
            if scope.cls is not None:
                return scope.cls, scope.bases
            scope = scope.parent
        return None, ()


def _decode(data: bytes) -> tuple[bytes, tuple[int, str] | None]:
    try:
        data.decode("utf-8")
        return data, None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        fixed = data.decode("utf-8", "replace").encode("utf-8")
        return fixed, (line, "not valid UTF-8: decoded with replacement characters")


def parse_code(path: str, data: bytes, language: str, module: str) -> CodeFile:
    """Parse one file. Syntax errors are reported by line; the rest still yields definitions."""
    data, bad = _decode(data)
    tree = _parser(language).parse(data)
    root = tree.root_node
    out = CodeFile(path=path, language=language, module=module)
    if bad is not None:
        out.errors.append(bad)
    out.errors.extend(_syntax_errors(root))
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    extractor = {
        "python": _PythonExtractor,
        "javascript": _JsExtractor,
        "typescript": _JsExtractor,
        "tsx": _JsExtractor,
        "go": _GoExtractor,
        "rust": _RustExtractor,
    }[language](out)
    doc = extractor.module_doc(root)
    name = re.split(r"\.|::|/", module)[-1] if module else path
    out.definitions.append(Definition(module, name, "module", 1, max(lines, 1), "", doc, None))
    extractor.run(root)
    return out


class _Extractor(ABC):
    """What every language's extractor shares: the output, scopes, definitions, references."""

    lang = "python"

    def __init__(self, out: CodeFile) -> None:
        self.out = out
        self.module = out.module
        self.root_scope = Scope(out.module, "module", None)

    def q(self, prefix: str, name: str) -> str:
        return join(prefix, name, self.lang)

    def module_doc(self, root: Node) -> str:
        return ""

    @abstractmethod
    def run(self, root: Node) -> None:
        """Fill ``self.out`` from the file's syntax tree."""

    def define(self, node: Node, name: str, kind: str, scope: Scope, signature: str,
               doc: str = "", start_node: Node | None = None,
               bases: tuple[tuple[str, ...], ...] = (), returns: tuple[str, ...] = ()) -> str:
        qual = self.q(scope.qualname, name)
        start, end = _lines(node)
        if start_node is not None:
            start = min(start, _lines(start_node)[0])
        self.out.definitions.append(Definition(
            qual, name, kind, start, end, _one_line(signature), doc, scope.qualname, bases,
            returns))
        return qual

    def add_import(self, node: Node, module: str, name: str | None, alias: str, target: str,
                   scope: Scope) -> None:
        self.out.imports.append(Import(node.start_point.row + 1, module, name, alias, target,
                                       scope.qualname))
        if alias == "*":
            scope.stars.append(target)
        else:
            scope.bind(alias, target)

    def reference(self, node: Node, kind: str, scope: Scope, text: str,
                  candidates: list[str]) -> None:
        seen: list[str] = []
        for cand in candidates:
            if cand and cand not in seen:
                seen.append(cand)
        if kind == "ref" and not seen:
            return
        self.out.references.append(Reference(node.start_point.row + 1, kind, scope.qualname,
                                             text, tuple(seen)))
        parts = text.split(".")
        if self.lang == "python" and len(parts) > 2 and parts[0] in ("self", "cls"):
            owner = scope.owner()
            if owner is not None:
                owner.deferred.append((len(self.out.references) - 1, parts[1],
                                       ".".join(parts[2:])))


# ---------------------------------------------------------------- Python

_PY_STATEMENTS = frozenset({
    "block", "expression_statement", "if_statement", "elif_clause", "else_clause",
    "for_statement", "while_statement", "try_statement", "except_clause", "except_group_clause",
    "finally_clause", "with_statement", "with_clause", "with_item", "as_pattern",
    "match_statement", "case_clause", "parenthesized_expression",
})
_PY_SPECIAL = frozenset({
    "decorated_definition", "function_definition", "class_definition", "import_statement",
    "import_from_statement", "future_import_statement", "call", "identifier", "attribute",
    "keyword_argument", "assignment", "augmented_assignment", "lambda", "string",
    "list_comprehension", "set_comprehension", "dict_comprehension", "generator_expression",
    "concatenated_string", "comment", "integer", "float", "true", "false", "none",
})


class _Walker(_Extractor):
    """An extractor that walks plain nodes with an explicit stack (a 5,000-term expression
    nests that deep, and recursion would hit Python's limit) and visits the ``special`` ones."""

    special: frozenset[str] = frozenset()

    def walk(self, node: Node, scope: Scope) -> None:
        stack = list(reversed(node.named_children))
        while stack:
            child = stack.pop()
            if child.type in self.special:
                self.visit(child, scope)
            else:
                stack.extend(reversed(child.named_children))

    @abstractmethod
    def visit(self, node: Node, scope: Scope) -> None:
        """Extract what one special node holds (a definition, an import, a call …)."""


class _PythonExtractor(_Walker):
    lang = "python"
    special = _PY_SPECIAL

    def module_doc(self, root: Node) -> str:
        return self._docstring(root)

    def _docstring(self, block: Node | None) -> str:
        if block is None:
            return ""
        for child in block.named_children:
            if child.type == "comment":
                continue
            if child.type == "expression_statement" and child.named_child_count == 1:
                string = child.named_children[0]
                if string.type == "string":
                    parts = [_text(c) for c in string.named_children
                             if c.type == "string_content"]
                    return inspect.cleandoc("".join(parts))
            return ""
        return ""

    def _package(self) -> str:
        if self.out.path.endswith("__init__.py"):
            return self.module
        return self.module.rpartition(".")[0]

    def _absolute(self, node: Node) -> str:
        """The absolute module of a ``from X import`` source (relative imports resolved)."""
        if node.type == "relative_import":
            dots = 0
            rest = ""
            for child in node.children:
                if child.type == "import_prefix":
                    dots = _text(child).count(".")
                elif child.type == "dotted_name":
                    rest = _text(child)
            base = self._package()
            for _ in range(dots - 1):
                base = base.rpartition(".")[0]
            return f"{base}.{rest}" if base and rest else (base or rest)
        return _text(node)

    # -- pre-scan: what a scope binds, before its body is walked (names used before defined)

    def prescan(self, node: Node, scope: Scope) -> None:
        stack = list(reversed(node.named_children))  # pre-order, without recursion
        while stack:
            child = stack.pop()
            kind = child.type
            if kind == "decorated_definition":
                inner = child.child_by_field_name("definition")
                if inner is not None:
                    self._bind_def(inner, scope)
            elif kind in ("function_definition", "class_definition"):
                self._bind_def(child, scope)
            elif kind in ("import_statement", "import_from_statement", "future_import_statement"):
                self.imports(child, scope)
            elif kind in ("global_statement", "nonlocal_statement"):
                for ident in child.named_children:
                    scope.outer.add(_text(ident))
                    if scope.bindings.get(_text(ident), "") is None:
                        del scope.bindings[_text(ident)]
            elif kind == "lambda":
                continue
            else:
                if scope.kind == "function":
                    self._bind_locals(child, scope)
                if kind in _PY_STATEMENTS:  # bindings live in statements, not in expressions
                    stack.extend(reversed(child.named_children))

    def _bind_def(self, node: Node, scope: Scope) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            scope.bind(_text(name), self.q(scope.qualname, _text(name)))

    def _bind_locals(self, node: Node, scope: Scope) -> None:
        targets: list[Node] = []
        if node.type in ("assignment", "augmented_assignment", "for_statement",
                         "for_in_clause"):
            targets.append(node.child_by_field_name("left"))
        elif node.type == "as_pattern_target":
            targets.append(node)
        elif node.type == "named_expression":
            targets.append(node.child_by_field_name("name"))
        elif node.type == "except_clause":
            for child in node.named_children:
                if child.type == "as_pattern":
                    targets.append(child.child_by_field_name("alias"))
        for target in targets:
            for ident in self._idents(target):
                scope.bind(ident, None, weak=True)
        if node.type == "assignment":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None and left.type == "identifier":
                text = None
                if right is not None and right.type == "call":
                    func = right.child_by_field_name("function")
                    text = _chain(func) if func is not None else None
                    text = f"{text}()" if text else None
                kind = node.child_by_field_name("type")
                if kind is not None:
                    text = _annotation(kind)
                scope.note_type(_text(left), text or "")
            if right is not None and right.type == "assignment":  # a = b = C()
                self._bind_locals(right, scope)

    def _idents(self, node: Node | None) -> list[str]:
        if node is None:
            return []
        if node.type == "identifier":
            return [_text(node)]
        if node.type in ("pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target",
                         "list_splat_pattern", "parenthesized_expression", "expression_list",
                         "tuple", "list"):
            out: list[str] = []
            for child in node.named_children:
                out.extend(self._idents(child))
            return out
        return []

    def imports(self, node: Node, scope: Scope) -> None:
        if node.type == "import_statement":
            for item in node.named_children:
                if item.type == "dotted_name":
                    mod = _text(item)
                    head = mod.split(".")[0]
                    self.add_import(node, mod, None, head, head, scope)
                elif item.type == "aliased_import":
                    mod = _text(item.child_by_field_name("name"))
                    alias = _text(item.child_by_field_name("alias"))
                    self.add_import(node, mod, None, alias, mod, scope)
        elif node.type == "import_from_statement":
            source = node.child_by_field_name("module_name")
            mod = self._absolute(source)
            for item in node.named_children:
                if item == source or item.type == "comment":
                    continue
                if item.type == "wildcard_import":
                    self.add_import(node, mod, None, "*", mod, scope)
                elif item.type == "dotted_name":
                    name = _text(item)
                    self.add_import(node, mod, name, name.split(".")[-1], f"{mod}.{name}", scope)
                elif item.type == "aliased_import":
                    name = _text(item.child_by_field_name("name"))
                    alias = _text(item.child_by_field_name("alias"))
                    self.add_import(node, mod, name, alias, f"{mod}.{name}", scope)

    # -- candidates

    def candidates(self, text: str, scope: Scope) -> list[str]:
        head, _, rest = text.partition(".")
        if head in ("self", "cls") and rest:
            cls, bases = scope.method_class()
            if cls is not None and scope.kind == "function":
                out = [f"{cls}.{rest}"]
                for base in bases:
                    out.extend(f"{b}.{rest}" for b in base)
                return out
        where = scope.where(head)
        if where is not None:
            target = where.bindings[head]
            if target:
                return [f"{target}.{rest}" if rest else target]
            typed = where.types.get(head)
            if typed and rest and typed.partition(".")[0] != head:
                call = "()" if typed.endswith("()") else ""
                base = typed.removesuffix("()")
                return [f"{c}{call}.{rest}" for c in self.candidates(base, where)]
            return []
        if head in _PY_BUILTINS:
            return []
        return [f"{star}.{text}" for star in scope.module().stars]

    # -- walk

    def run(self, root: Node) -> None:
        self.prescan(root, self.root_scope)
        self.walk(root, self.root_scope)

    def visit(self, node: Node, scope: Scope) -> None:
        kind = node.type
        if kind == "decorated_definition":
            for dec in node.named_children:
                if dec.type == "decorator":
                    self.walk(dec, scope)
            inner = node.child_by_field_name("definition")
            if inner is not None:
                self.definition(inner, scope, node)
        elif kind in ("function_definition", "class_definition"):
            self.definition(node, scope, None)
        elif kind in ("import_statement", "import_from_statement", "future_import_statement"):
            return
        elif kind == "call":
            self.call(node, scope)
        elif kind in ("identifier", "attribute"):
            text = _chain(node)
            if text is not None:
                self.reference(node, "ref", scope, text, self.candidates(text, scope))
            elif kind == "attribute":
                self.visit(node.child_by_field_name("object"), scope)
        elif kind == "keyword_argument":
            value = node.child_by_field_name("value")
            if value is not None:
                self.visit(value, scope)
        elif kind in ("assignment", "augmented_assignment"):
            left = node.child_by_field_name("left")
            if kind == "assignment" and left is not None:
                self._note_attr(node, left, scope)
            if left is not None and left.type not in ("identifier", "pattern_list"):
                self.visit(left, scope)
            for field in ("type", "right"):
                part = node.child_by_field_name(field)
                if part is not None:
                    self.visit(part, scope)
        elif kind in ("list_comprehension", "set_comprehension", "dict_comprehension",
                      "generator_expression"):
            inner = Scope(scope.qualname, "function", scope)  # its loop names are its own
            for clause in node.named_children:
                if clause.type == "for_in_clause":
                    for ident in self._idents(clause.child_by_field_name("left")):
                        inner.bind(ident, None)
            self.walk(node, inner)
        elif kind == "lambda":
            body = node.child_by_field_name("body")
            inner = Scope(scope.qualname, "function", scope)
            params = node.child_by_field_name("parameters")
            if params is not None:
                for name in self._param_names(params):
                    inner.bind(name, None)
            if body is not None:
                self.visit(body, inner)
        elif kind in ("string", "concatenated_string"):
            for part in node.named_children:
                if part.type == "interpolation":
                    self.walk(part, scope)
                elif part.type == "string":
                    self.visit(part, scope)
        elif kind in ("comment", "integer", "float", "true", "false", "none"):
            return
        else:
            self.walk(node, scope)

    def _note_attr(self, node: Node, left: Node, scope: Scope) -> None:
        """``self.x = Cls(...)`` / ``self.x = typed_param`` / ``self.x: Cls`` / ``x: Cls``."""
        annotation = node.child_by_field_name("type")
        right = node.child_by_field_name("right")
        if left.type == "identifier" and scope.kind == "class":
            owner, attr = scope, _text(left)
        elif left.type == "attribute" and _text(left.child_by_field_name("object")) in (
                "self", "cls") and scope.owner() is not None:
            owner, attr = scope.owner(), _text(left.child_by_field_name("attribute"))
        else:
            return
        cands: list[str] = []
        if annotation is not None:
            text = _annotation(annotation)
            cands = self.candidates(text, scope) if text else []
        elif right is not None and right.type == "call":
            func = right.child_by_field_name("function")
            text = _chain(func) if func is not None else None
            cands = [f"{c}()" for c in self.candidates(text, scope)] if text else []
        elif right is not None and right.type == "identifier":
            where = scope.where(_text(right))
            typed = where.types.get(_text(right)) if where is not None else None
            if typed:
                call = "()" if typed.endswith("()") else ""
                cands = [f"{c}{call}" for c in self.candidates(typed.removesuffix("()"),
                                                                 where)]
        if owner is not None and (cands or left.type == "attribute"):
            owner.note_attr(attr, cands)

    def _param_names(self, params: Node) -> list[str]:
        out = []
        for param in params.named_children:
            if param.type == "identifier":
                out.append(_text(param))
            else:
                name = param.child_by_field_name("name")
                if name is None and param.named_child_count:
                    name = param.named_children[0]
                if name is not None:
                    out.extend(self._idents(name) or [_text(name).lstrip("*")])
        return out

    def _walk_params(self, params: Node, scope: Scope) -> None:
        for param in params.named_children:
            for field in ("type", "value"):
                part = param.child_by_field_name(field)
                if part is not None:
                    self.visit(part, scope)

    def definition(self, node: Node, scope: Scope, decorated: Node | None) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None:
            self.walk(node, scope)
            return
        name = _text(name_node)
        head_end = body.start_byte if body is not None else node.end_byte
        signature = node.text[: head_end - node.start_byte].decode("utf-8", "replace")
        signature = signature.rstrip().removesuffix(":")
        doc = self._docstring(body)
        if node.type == "class_definition":
            supers = node.child_by_field_name("superclasses")
            bases: list[tuple[str, ...]] = []
            if supers is not None:
                for arg in supers.named_children:
                    if arg.type == "subscript":  # Base[T]
                        arg = arg.child_by_field_name("value")
                    text = _chain(arg)
                    if text is not None:
                        cands = self.candidates(text, scope)
                        if cands:
                            bases.append(tuple(cands))
                self.walk(supers, scope)
            qual = self.define(node, name, "class", scope, signature, doc, decorated,
                               tuple(bases))
            inner = Scope(qual, "class", scope, cls=None)
            inner.bases = tuple(bases)
            if body is not None:
                self.prescan(body, inner)
                self.walk(body, inner)
            for index, attr, rest in inner.deferred:
                typed = inner.attr_types.get(attr)
                if typed:
                    ref = self.out.references[index]
                    self.out.references[index] = dataclasses.replace(
                        ref, candidates=tuple(f"{c}.{rest}" for c in typed) + ref.candidates)
            return
        kind = "method" if scope.kind == "class" else "function"
        ret = node.child_by_field_name("return_type")
        ret_text = _annotation(ret) if ret is not None else None
        returns = tuple(self.candidates(ret_text, scope)) if ret_text else ()
        qual = self.define(node, name, kind, scope, signature, doc, decorated,
                           returns=returns)
        cls = scope.qualname if scope.kind == "class" else None
        inner = Scope(qual, "function", scope, cls=cls, bases=scope.bases if cls else ())
        params = node.child_by_field_name("parameters")
        if params is not None:
            for pname in self._param_names(params):
                inner.bind(pname, None)
            for param in params.named_children:
                ptype = param.child_by_field_name("type")
                pname_node = param.named_children[0] if param.named_children else None
                if ptype is not None and pname_node is not None and \
                        pname_node.type == "identifier":
                    text = _annotation(ptype)
                    if text:
                        inner.note_type(_text(pname_node), text)
            self._walk_params(params, scope)
        if ret is not None:
            self.visit(ret, scope)
        if body is not None:
            self.prescan(body, inner)
            self.walk(body, inner)

    def call(self, node: Node, scope: Scope) -> None:
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        text = _chain(func) if func is not None else None
        if text is not None:
            self.reference(node, "call", scope, text, self.candidates(text, scope))
        elif func is not None:
            if (func.type == "attribute" and func.child_by_field_name("object") is not None
                    and _is_super(func.child_by_field_name("object"))):
                attr = _text(func.child_by_field_name("attribute"))
                _cls, bases = scope.method_class()
                cands = [f"{b}.{attr}" for base in bases for b in base]
                self.reference(node, "call", scope, f"super().{attr}", cands)
            else:
                self.visit(func, scope)
        if args is not None:
            self.walk(args, scope)


def _annotation(node: Node) -> str | None:
    """The class an annotation names (``Foo``, ``m.Foo``, ``"Foo"``), else None."""
    if node.type == "type" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "string":
        text = "".join(_text(c) for c in node.named_children if c.type == "string_content")
        return text if re.fullmatch(r"[A-Za-z_][\w.]*", text) else None
    return _chain(node)


def _is_super(node: Node) -> bool:
    if node.type != "call":
        return False
    func = node.child_by_field_name("function")
    return func is not None and func.type == "identifier" and _text(func) == "super"


def _chain(node: Node) -> str | None:
    """``a.b.c`` when the node is a plain name or attribute chain of names, else None."""
    kind = node.type
    if kind in ("identifier", "property_identifier", "field_identifier", "type_identifier",
                "this", "self", "package_identifier", "shorthand_property_identifier"):
        return _text(node)
    if kind == "attribute":
        obj = _chain(node.child_by_field_name("object"))
        attr = node.child_by_field_name("attribute")
        return f"{obj}.{_text(attr)}" if obj is not None and attr is not None else None
    if kind == "member_expression":
        obj_node = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        obj = _chain(obj_node) if obj_node is not None else None
        return f"{obj}.{_text(prop)}" if obj is not None and prop is not None else None
    if kind == "selector_expression":
        obj_node = node.child_by_field_name("operand")
        field = node.child_by_field_name("field")
        obj = _chain(obj_node) if obj_node is not None else None
        return f"{obj}.{_text(field)}" if obj is not None and field is not None else None
    if kind == "field_expression":
        obj_node = node.child_by_field_name("value")
        field = node.child_by_field_name("field")
        obj = _chain(obj_node) if obj_node is not None else None
        return f"{obj}.{_text(field)}" if obj is not None and field is not None else None
    if kind == "scoped_identifier":
        path = node.child_by_field_name("path")
        name = node.child_by_field_name("name")
        head = _chain(path) if path is not None else ""
        if head is None or name is None:
            return None
        return f"{head}::{_text(name)}" if head else _text(name)
    if kind in ("crate", "super"):
        return kind
    return None


_PY_BUILTINS = frozenset(dir(builtins))


# ---------------------------------------------------------------- JavaScript / TypeScript

_JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JS_FUNCTION_VALUES = ("arrow_function", "function_expression", "function",
                       "generator_function")
_JS_CLASSES = ("class_declaration", "abstract_class_declaration", "class",
               "interface_declaration")
_JS_SPECIAL = frozenset({
    "function_declaration", "generator_function_declaration", "method_definition",
    *_JS_CLASSES, "lexical_declaration", "variable_declaration", "import_statement",
    "call_expression", "new_expression", "comment", "string", "number",
})


class _JsExtractor(_Walker):
    lang = "javascript"
    special = _JS_SPECIAL

    def source_module(self, spec: str) -> str:
        if not spec.startswith("."):
            return spec
        base = posixpath.dirname(self.out.path)
        target = posixpath.normpath(posixpath.join(base, spec))
        if target == ".":
            return "index"  # require('..') from a top folder: the root's index file
        for ext in _JS_EXTENSIONS:
            if target.endswith(ext):
                return target[: -len(ext)]
        return target

    def run(self, root: Node) -> None:
        self.prescan(root, self.root_scope)
        self.walk(root, self.root_scope)

    def prescan(self, node: Node, scope: Scope) -> None:
        stack = list(reversed(node.named_children))  # pre-order, without recursion
        while stack:
            child = stack.pop()
            kind = child.type
            if kind == "export_statement":
                self.export(child, scope)
                self.prescan(child, scope)
            elif kind == "import_statement":
                self.imports(child, scope)
            elif kind in ("function_declaration", "generator_function_declaration", *_JS_CLASSES):
                name = child.child_by_field_name("name")
                if name is not None:
                    scope.bind(_text(name), self.q(scope.qualname, _text(name)))
            elif kind in ("lexical_declaration", "variable_declaration"):
                for decl in child.named_children:
                    if decl.type != "variable_declarator":
                        continue
                    name = decl.child_by_field_name("name")
                    value = decl.child_by_field_name("value")
                    if name is None:
                        continue
                    if self._require(child, decl, scope):
                        continue
                    if value is not None and value.type in _JS_FUNCTION_VALUES and \
                            name.type == "identifier":
                        scope.bind(_text(name), self.q(scope.qualname, _text(name)))
                    elif scope.kind != "module" and name.type == "identifier":
                        scope.bind(_text(name), None, weak=True)
            elif kind in ("statement_block", "if_statement", "try_statement", "else_clause",
                          "for_statement", "while_statement"):
                self.prescan(child, scope)

    def _require(self, stmt: Node, decl: Node, scope: Scope) -> bool:
        value = decl.child_by_field_name("value")
        if value is None or value.type != "call_expression":
            return False
        func = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if func is None or _text(func) != "require" or args is None:
            return False
        strings = [a for a in args.named_children if a.type == "string"]
        if not strings:
            return False
        mod = self.source_module(_string(strings[0]))
        name = decl.child_by_field_name("name")
        if name.type == "identifier":
            self.add_import(stmt, mod, None, _text(name), mod, scope)
        elif name.type == "object_pattern":
            for part in name.named_children:
                if part.type == "shorthand_property_identifier_pattern":
                    self.add_import(stmt, mod, _text(part), _text(part), f"{mod}.{_text(part)}",
                                    scope)
                elif part.type == "pair_pattern":
                    key = part.child_by_field_name("key")
                    val = part.child_by_field_name("value")
                    if key is not None and val is not None and val.type == "identifier":
                        self.add_import(stmt, mod, _text(key), _text(val),
                                        f"{mod}.{_text(key)}", scope)
        return True

    def imports(self, node: Node, scope: Scope) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        mod = self.source_module(_string(source))
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for item in clause.named_children:
                if item.type == "identifier":
                    self.add_import(node, mod, "default", _text(item), f"{mod}.default", scope)
                elif item.type == "namespace_import":
                    for ident in item.named_children:
                        self.add_import(node, mod, None, _text(ident), mod, scope)
                elif item.type == "named_imports":
                    for spec in item.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name = _text(spec.child_by_field_name("name"))
                        alias_node = spec.child_by_field_name("alias")
                        alias = _text(alias_node) if alias_node is not None else name
                        self.add_import(node, mod, name, alias, f"{mod}.{name}", scope)

    def export(self, node: Node, scope: Scope) -> None:
        source = node.child_by_field_name("source")
        decl = node.child_by_field_name("declaration")
        is_default = any(c.type == "default" for c in node.children)
        if source is not None:
            mod = self.source_module(_string(source))
            clause = [c for c in node.named_children if c.type == "export_clause"]
            if not clause:
                self.add_import(node, mod, None, "*", mod, scope)
            for spec in clause[0].named_children if clause else []:
                name = _text(spec.child_by_field_name("name"))
                alias_node = spec.child_by_field_name("alias")
                alias = _text(alias_node) if alias_node is not None else name
                self.out.imports.append(Import(node.start_point.row + 1, mod, name, alias,
                                               f"{mod}.{name}", scope.qualname))
            return
        if is_default:
            target = None
            if decl is not None and decl.child_by_field_name("name") is not None:
                target = self.q(scope.qualname, _text(decl.child_by_field_name("name")))
            else:
                value = node.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    found, bound = scope.lookup(_text(value))
                    target = bound if found else self.q(scope.qualname, _text(value))
            if target:
                self.out.imports.append(Import(node.start_point.row + 1, self.module,
                                               target.rpartition(".")[2], "default", target,
                                               scope.qualname))

    def candidates(self, text: str, scope: Scope) -> list[str]:
        head, _, rest = text.partition(".")
        if head == "this" and rest:
            cls, bases = scope.method_class()
            if cls is None:
                return []
            return [f"{cls}.{rest}", *(f"{b}.{rest}" for base in bases for b in base)]
        found, target = scope.lookup(head)
        if found:
            if not target:
                return []
            return [f"{target}.{rest}" if rest else target]
        return []

    def visit(self, node: Node, scope: Scope) -> None:
        kind = node.type
        if kind in ("function_declaration", "generator_function_declaration", "method_definition"):
            name = node.child_by_field_name("name")
            if name is None:
                self.walk(node, scope)
                return
            method = kind == "method_definition"
            self.function(node, _text(name), scope, "method" if method else "function",
                          node.child_by_field_name("body"))
        elif kind in _JS_CLASSES:
            self.klass(node, scope)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type != "variable_declarator":
                    continue
                name = decl.child_by_field_name("name")
                value = decl.child_by_field_name("value")
                if (name is not None and name.type == "identifier" and value is not None
                        and value.type in _JS_FUNCTION_VALUES):
                    self.function(node if len(node.named_children) == 1 else decl, _text(name),
                                  scope, "function", value.child_by_field_name("body"),
                                  params=value.child_by_field_name("parameters") or
                                  value.child_by_field_name("parameter"))
                elif value is not None:
                    self.visit(value, scope)
        elif kind == "import_statement":
            return
        elif kind in ("call_expression", "new_expression"):
            func = node.child_by_field_name("function" if kind == "call_expression"
                                            else "constructor")
            text = _chain(func) if func is not None else None
            if text == "require" and not scope.lookup("require")[0]:
                return  # an import (bound by the declaration), not a call into the tree
            if text is not None:
                self.reference(node, "call", scope, text, self.candidates(text, scope))
            elif func is not None:
                self.visit(func, scope)
            args = node.child_by_field_name("arguments")
            if args is not None:
                self.walk(args, scope)
        elif kind in ("comment", "string", "number"):
            return
        else:
            self.walk(node, scope)

    def function(self, node: Node, name: str, scope: Scope, kind: str, body: Node | None,
                 params: Node | None = None) -> None:
        head_end = body.start_byte if body is not None else node.end_byte
        signature = node.text[: max(head_end - node.start_byte, 0)].decode("utf-8", "replace")
        signature = signature.rstrip().removesuffix("=>").rstrip().removesuffix("{")
        qual = self.define(node, name, kind, scope, signature, _js_doc(node))
        cls = scope.qualname if scope.kind == "class" else None
        inner = Scope(qual, "function", scope, cls=cls, bases=scope.bases if cls else ())
        params = params if params is not None else node.child_by_field_name("parameters")
        if params is not None:
            for ident in _js_param_names(params):
                inner.bind(ident, None)
        if body is not None:
            if body.type == "statement_block":
                self.prescan(body, inner)
                self.walk(body, inner)
            else:
                self.visit(body, inner)

    def klass(self, node: Node, scope: Scope) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None:
            self.walk(node, scope)
            return
        bases: list[tuple[str, ...]] = []
        for heritage in node.named_children:
            if heritage.type in ("class_heritage", "extends_clause"):
                for clause in [heritage, *heritage.named_children]:
                    if clause.type != "extends_clause":
                        continue
                    value = clause.child_by_field_name("value")
                    text = _chain(value) if value is not None else None
                    if text is not None:
                        cands = self.candidates(text, scope)
                        if cands:
                            bases.append(tuple(cands))
                    elif value is not None and value.type == "identifier":
                        pass
            if heritage.type == "class_heritage" and heritage.named_children and \
                    heritage.named_children[0].type == "identifier":
                text = _text(heritage.named_children[0])
                cands = self.candidates(text, scope)
                if cands:
                    bases.append(tuple(cands))
        head_end = body.start_byte if body is not None else node.end_byte
        signature = node.text[: head_end - node.start_byte].decode("utf-8", "replace")
        kind = "class"
        qual = self.define(node, _text(name), kind, scope, signature, _js_doc(node),
                           bases=tuple(bases))
        inner = Scope(qual, "class", scope)
        inner.bases = tuple(bases)
        if body is not None:
            self.walk(body, inner)


def _string(node: Node) -> str:
    parts = [_text(c) for c in node.named_children if c.type == "string_fragment"]
    return "".join(parts) if parts else _text(node).strip("'\"`")


def _js_param_names(params: Node) -> list[str]:
    if params.type == "identifier":
        return [_text(params)]
    out = []
    for param in params.named_children:
        pattern = param.child_by_field_name("pattern") or param
        if pattern.type == "identifier":
            out.append(_text(pattern))
        elif pattern.type == "assignment_pattern":
            left = pattern.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                out.append(_text(left))
    return out


def _js_doc(node: Node) -> str:
    prev = node.prev_named_sibling
    target = node
    while prev is None and target.parent is not None and target.parent.type == "export_statement":
        target = target.parent
        prev = target.prev_named_sibling
    if prev is not None and prev.type == "comment" and _text(prev).startswith("/**") and \
            prev.end_point.row + 1 >= target.start_point.row:
        body = _text(prev)[3:].removesuffix("*/")
        lines = [re.sub(r"^\s*\* ?", "", line) for line in body.splitlines()]
        return inspect.cleandoc("\n".join(line.rstrip() for line in lines))
    return ""


# ---------------------------------------------------------------- Go


class _GoExtractor(_Extractor):
    lang = "go"

    def module_doc(self, root: Node) -> str:
        for child in root.named_children:
            if child.type == "package_clause":
                return _comment_doc(child, "//")
        return ""

    def run(self, root: Node) -> None:
        scope = self.root_scope
        for child in root.named_children:
            if child.type == "import_declaration":
                for spec in _descendants(child, "import_spec"):
                    path_node = spec.child_by_field_name("path")
                    name_node = spec.child_by_field_name("name")
                    path = _string_go(path_node)
                    alias = _text(name_node) if name_node is not None else path.split("/")[-1]
                    if alias in ("_",):
                        continue
                    if alias == ".":
                        self.add_import(spec, path, None, "*", path, scope)
                    else:
                        self.add_import(spec, path, None, alias, path, scope)
        for child in root.named_children:
            kind = child.type
            if kind == "function_declaration":
                name = _text(child.child_by_field_name("name"))
                self.func(child, name, scope, "function", None, None)
            elif kind == "method_declaration":
                receiver = child.child_by_field_name("receiver")
                recv_name, recv_type = _go_receiver(receiver)
                name = _text(child.child_by_field_name("name"))
                type_scope = Scope(self.q(self.module, recv_type), "class", scope)
                self.func(child, name, type_scope, "method", recv_name,
                          type_scope.qualname)
            elif kind == "type_declaration":
                for spec in child.named_children:
                    if spec.type in ("type_spec", "type_alias"):
                        name = spec.child_by_field_name("name")
                        if name is not None:
                            node = child if len(child.named_children) == 1 else spec
                            self.define(node, _text(name), "class", scope,
                                        "type " + _one_line(_text(spec)).split("{")[0].strip(),
                                        _comment_doc(child, "//"))
            else:
                self.calls(child, scope, None, None)

    def func(self, node: Node, name: str, scope: Scope, kind: str, recv: str | None,
             recv_type: str | None) -> None:
        body = node.child_by_field_name("body")
        head_end = body.start_byte if body is not None else node.end_byte
        signature = node.text[: head_end - node.start_byte].decode("utf-8", "replace")
        qual = self.define(node, name, kind, scope, signature, _comment_doc(node, "//"))
        inner = Scope(qual, "function", self.root_scope)
        params = node.child_by_field_name("parameters")
        for decl in _descendants(params, "parameter_declaration") if params is not None else []:
            for ident in decl.named_children:
                if ident.type == "identifier":
                    inner.bind(_text(ident), None)
        if body is not None:
            for decl in _descendants(body, "short_var_declaration"):
                left = decl.child_by_field_name("left")
                for ident in left.named_children if left is not None else []:
                    if ident.type == "identifier":
                        inner.bind(_text(ident), None, weak=True)
            self.calls(body, inner, recv, recv_type)

    def calls(self, node: Node, scope: Scope, recv: str | None, recv_type: str | None) -> None:
        for call in _descendants(node, "call_expression"):
            func = call.child_by_field_name("function")
            text = _chain(func) if func is not None else None
            if text is None:
                continue
            head, _, rest = text.partition(".")
            cands: list[str] = []
            if recv is not None and head == recv and rest:
                cands = [f"{recv_type}.{rest}"]
            else:
                found, target = scope.lookup(head)
                if found and target:
                    if rest:
                        cands = [f"{s}.{rest}" for s in _path_suffixes(target)]
                elif not found and text not in _GO_BUILTINS:
                    cands = [self.q(self.module, text)]
            self.reference(call, "call", scope, text, cands)


_GO_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
    "min", "new", "panic", "print", "println", "real", "recover", "string", "int", "int64",
    "int32", "uint", "uint64", "uint32", "byte", "rune", "float64", "float32", "bool", "error",
    "any",
})
_RUST_PRELUDE = frozenset({
    "Ok", "Err", "Some", "None", "drop", "Box", "Vec", "String", "Option", "Result", "Default",
    "Into", "From", "Iterator", "ToString", "ToOwned", "Clone", "Send", "Sync", "Sized",
})


def _path_suffixes(path: str) -> list[str]:
    """An import path and its shorter suffixes: the local package it names is not known here."""
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _go_receiver(receiver: Node | None) -> tuple[str | None, str]:
    if receiver is None:
        return None, "?"
    for decl in receiver.named_children:
        if decl.type == "parameter_declaration":
            name = decl.child_by_field_name("name")
            typ = decl.child_by_field_name("type")
            tname = _text(typ).lstrip("*").split("[")[0].strip() if typ is not None else "?"
            return (_text(name) if name is not None else None), tname
    return None, "?"


def _string_go(node: Node | None) -> str:
    return _text(node).strip('"`') if node is not None else ""


def _descendants(node: Node, kind: str) -> list[Node]:
    out = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            out.append(current)
        stack.extend(reversed(current.named_children))
    return out


def _comment_doc(node: Node, marker: str) -> str:
    lines: list[str] = []
    prev = node.prev_named_sibling
    row = node.start_point.row
    while prev is not None and prev.type in ("comment", "line_comment") and \
            prev.end_point.row >= row - 1:
        text = _text(prev)
        if not text.startswith(marker):
            break
        lines.insert(0, text[len(marker):].lstrip("/!").strip())
        row = prev.start_point.row
        prev = prev.prev_named_sibling
    return "\n".join(lines)


# ---------------------------------------------------------------- Rust

_RUST_TYPES = ("struct_item", "enum_item", "trait_item", "union_item", "type_item")


class _RustExtractor(_Extractor):
    lang = "rust"

    def crate_root(self) -> str:
        return self.module.split("::")[0]

    def module_doc(self, root: Node) -> str:
        lines = []
        for child in root.named_children:
            if child.type in ("line_comment", "comment") and _text(child).startswith("//!"):
                lines.append(_text(child)[3:].strip())
            elif child.type in ("inner_attribute_item",):
                continue
            else:
                break
        return "\n".join(lines)

    def absolute(self, path: str, scope: Scope) -> list[str]:
        parts = path.split("::")
        head = parts[0]
        rest = parts[1:]
        if head == "crate":
            base = self.crate_root()
        elif head == "self":
            base = scope.qualname
        elif head == "super":
            base = scope.qualname
            while parts and parts[0] == "super":
                base = base.rpartition("::")[0] or base
                parts = parts[1:]
            return ["::".join([base, *parts])]
        elif head == "Self":
            cls, _bases = scope.method_class()
            return ["::".join([cls, *rest])] if cls else []
        else:
            found, target = scope.lookup(head)
            if found:
                return ["::".join([target, *rest])] if target else []
            return ["::".join([self.module, *parts]), path]
        return ["::".join([base, *rest])]

    def uses(self, node: Node, prefix: str, scope: Scope, stmt: Node) -> None:
        kind = node.type
        if kind in ("scoped_identifier", "identifier", "crate", "self", "super"):
            path = _text(node)
            full = f"{prefix}::{path}" if prefix else path
            alias = path.split("::")[-1]
            if alias == "self":
                full = full.rpartition("::")[0]
                alias = full.split("::")[-1]
            target = self.absolute(full, scope)[0] if full.split("::")[0] in (
                "crate", "self", "super") else full
            self.add_import(stmt, full.rpartition("::")[0], alias, alias, target, scope)
        elif kind == "use_as_clause":
            path = _text(node.child_by_field_name("path"))
            alias = _text(node.child_by_field_name("alias"))
            full = f"{prefix}::{path}" if prefix else path
            target = self.absolute(full, scope)[0] if full.split("::")[0] in (
                "crate", "self", "super") else full
            self.add_import(stmt, full.rpartition("::")[0], path.split("::")[-1], alias, target,
                            scope)
        elif kind == "scoped_use_list":
            path_node = node.child_by_field_name("path")
            path = _text(path_node) if path_node is not None else ""
            full = f"{prefix}::{path}" if prefix and path else (path or prefix)
            use_list = node.child_by_field_name("list")
            if use_list is not None:
                for item in use_list.named_children:
                    self.uses(item, full, scope, stmt)
        elif kind == "use_list":
            for item in node.named_children:
                self.uses(item, prefix, scope, stmt)
        elif kind == "use_wildcard":
            inner = node.named_children[0] if node.named_children else None
            path = _text(inner) if inner is not None else ""
            full = f"{prefix}::{path}" if prefix and path else (path or prefix)
            target = self.absolute(full, scope)[0] if full.split("::")[0] in (
                "crate", "self", "super") else full
            self.add_import(stmt, target, None, "*", target, scope)

    def run(self, root: Node) -> None:
        self.items(root, self.root_scope)

    def items(self, node: Node, scope: Scope) -> None:
        for child in node.named_children:
            if child.type == "use_declaration":
                arg = child.child_by_field_name("argument")
                if arg is not None:
                    self.uses(arg, "", scope, child)
            elif child.type in ("function_item", *_RUST_TYPES, "mod_item"):
                name = child.child_by_field_name("name")
                if name is not None:
                    scope.bind(_text(name), self.q(scope.qualname, _text(name)))
        for child in node.named_children:
            kind = child.type
            if kind == "function_item":
                self.func(child, scope, "method" if scope.kind == "class" else "function")
            elif kind in _RUST_TYPES:
                name = child.child_by_field_name("name")
                body = child.child_by_field_name("body")
                head_end = body.start_byte if body is not None else child.end_byte
                signature = child.text[: head_end - child.start_byte].decode("utf-8", "replace")
                qual = self.define(child, _text(name), "class", scope, signature,
                                   _comment_doc(child, "///"))
                if kind == "trait_item" and body is not None:
                    inner = Scope(qual, "class", scope, cls=qual)
                    self.items(body, inner)
            elif kind == "impl_item":
                typ = child.child_by_field_name("type")
                tname = _text(typ).split("<")[0].strip() if typ is not None else "?"
                cands = self.absolute(tname, scope)
                qual = cands[0] if cands else self.q(scope.qualname, tname)
                inner = Scope(qual, "class", scope, cls=qual)
                body = child.child_by_field_name("body")
                if body is not None:
                    self.items(body, inner)
            elif kind == "mod_item":
                body = child.child_by_field_name("body")
                if body is not None:
                    inner = Scope(self.q(scope.qualname, _text(child.child_by_field_name("name"))),
                                  "module", scope)
                    self.items(body, inner)
            elif kind not in ("use_declaration", "line_comment", "block_comment"):
                self.calls(child, scope)

    def func(self, node: Node, scope: Scope, kind: str) -> None:
        name = _text(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        head_end = body.start_byte if body is not None else node.end_byte
        signature = node.text[: head_end - node.start_byte].decode("utf-8", "replace")
        start_node = node
        prev = node.prev_named_sibling
        while prev is not None and prev.type == "attribute_item":
            start_node = prev
            prev = prev.prev_named_sibling
        qual = self.define(node, name, kind, scope, signature, _comment_doc(start_node, "///"),
                           start_node=start_node)
        inner = Scope(qual, "function", scope, cls=scope.cls)
        if body is not None:
            for decl in _descendants(body, "let_declaration"):
                pattern = decl.child_by_field_name("pattern")
                if pattern is not None and pattern.type == "identifier":
                    inner.bind(_text(pattern), None, weak=True)
            self.items_in_body(body, inner)

    def items_in_body(self, body: Node, scope: Scope) -> None:
        for child in body.named_children:
            if child.type == "use_declaration":
                arg = child.child_by_field_name("argument")
                if arg is not None:
                    self.uses(arg, "", scope, child)
        self.calls(body, scope)

    def calls(self, node: Node, scope: Scope) -> None:
        for call in _descendants(node, "call_expression"):
            func = call.child_by_field_name("function")
            if func is None:
                continue
            if func.type == "generic_function":
                func = func.child_by_field_name("function") or func
            text = _chain(func)
            if text is None:
                continue
            cls, _bases = scope.method_class()
            if text.startswith("self.") and text.count(".") == 1:
                cands = [f"{cls}::{text[5:]}"] if cls else []
            elif "." in text:
                cands = []
            else:
                cands = self.absolute(text, scope)
                if "::" not in text:
                    found, _t = scope.lookup(text)
                    if not found:
                        cands = [] if text in _RUST_PRELUDE else [self.q(self.module, text)]
            self.reference(call, "call", scope, text, cands)
