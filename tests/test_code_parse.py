"""Parsing code into definitions, imports and references, and resolving them across files."""

from __future__ import annotations

import textwrap

from kenning.index.code import CodeFile, SymbolTable, module_name, parse_code


def _py(path: str, source: str, paths: set[str] | None = None) -> CodeFile:
    paths = paths or {path}
    data = textwrap.dedent(source).encode()
    return parse_code(path, data, "python", module_name(path, "python", paths))


PKG = {
    "src/shop/__init__.py": '''\
        """The shop."""
        from .cart import Cart
        from shop.prices import total as grand_total
        ''',
    "src/shop/cart.py": '''\
        """Carts."""
        import functools

        from . import prices
        from .base import Base


        class Cart(Base):
            """A cart."""

            def __init__(self, items):
                self.items = items

            @functools.cache
            def price(self) -> int:
                return prices.total(self.items) + self.fee()

            def check(self):
                self.save()
                return helper(self)


        def helper(cart):
            from shop.prices import total
            items = cart.items
            items.sort()
            return total(items)
        ''',
    "src/shop/base.py": '''\
        class Base:
            def save(self):
                pass

            def fee(self):
                return 1
        ''',
    "src/shop/prices.py": '''\
        def total(items):
            return sum(items)


        def helper():
            return 0
        ''',
    "src/app.py": '''\
        import shop
        import shop.prices as p
        from shop import Cart, grand_total


        def run(total):
            cart = Cart([1])
            shop.Cart([2])
            p.total([3])
            grand_total([4])
            total([5])
            return cart.price()


        def pay(c: "shop.Cart", other):
            c.price()
            other.price()
        ''',
}


def _pkg() -> dict[str, CodeFile]:
    paths = set(PKG)
    return {path: _py(path, src, paths) for path, src in PKG.items()}


def test_module_names_per_language() -> None:
    paths = {"src/shop/__init__.py", "src/shop/cart.py", "src/app.py", "tools/x.py"}
    assert module_name("src/shop/cart.py", "python", paths) == "shop.cart"
    assert module_name("src/shop/__init__.py", "python", paths) == "shop"
    assert module_name("src/app.py", "python", paths) == "app"
    assert module_name("web/src/util.ts", "typescript", set()) == "web/src/util"
    assert module_name("web/src/View.tsx", "tsx", set()) == "web/src/View"
    assert module_name("pkg/server/server.go", "go", set()) == "pkg/server"
    assert module_name("main.go", "go", set()) == "."
    assert module_name("src/a/b.rs", "rust", set()) == "crate::a::b"
    assert module_name("src/a/mod.rs", "rust", set()) == "crate::a"
    assert module_name("src/lib.rs", "rust", set()) == "crate"
    assert module_name("crates/x/src/a.rs", "rust", set()) == "crates/x/crate::a"


def test_python_definitions_lines_signatures_and_docs() -> None:
    cart = _pkg()["src/shop/cart.py"]
    defs = {d.qualname: d for d in cart.definitions}
    module = defs["shop.cart"]
    assert (module.kind, module.start_line, module.end_line, module.doc) == ("module", 1, 27,
                                                                            "Carts.")
    klass = defs["shop.cart.Cart"]
    assert (klass.kind, klass.start_line, klass.end_line, klass.doc) == ("class", 8, 20, "A cart.")
    assert klass.signature == "class Cart(Base)"
    assert klass.bases == (("shop.base.Base",),)
    price = defs["shop.cart.Cart.price"]
    assert price.kind == "method" and price.parent == "shop.cart.Cart"
    assert (price.start_line, price.end_line) == (14, 16)  # the decorator's line included
    assert price.signature == "def price(self) -> int"
    assert defs["shop.cart.helper"].kind == "function"
    assert [d.kind for d in cart.definitions].count("module") == 1
    assert cart.errors == []


def test_python_imports_are_absolute_with_their_binding() -> None:
    files = _pkg()
    imports = {(i.alias, i.target, i.scope) for i in files["src/shop/cart.py"].imports}
    assert ("prices", "shop.prices", "shop.cart") in imports
    assert ("Base", "shop.base.Base", "shop.cart") in imports
    assert ("total", "shop.prices.total", "shop.cart.helper") in imports  # function-local
    init = {(i.alias, i.target) for i in files["src/shop/__init__.py"].imports}
    assert init == {("Cart", "shop.cart.Cart"), ("grand_total", "shop.prices.total")}
    app = {(i.alias, i.module, i.name, i.target) for i in files["src/app.py"].imports}
    assert ("p", "shop.prices", None, "shop.prices") in app
    assert ("shop", "shop", None, "shop") in app


def test_python_reference_candidates() -> None:
    cart = _pkg()["src/shop/cart.py"]
    calls = {(r.line, r.text): r for r in cart.references if r.kind == "call"}
    assert calls[(16, "prices.total")].candidates == ("shop.prices.total",)
    assert calls[(16, "self.fee")].candidates == ("shop.cart.Cart.fee", "shop.base.Base.fee")
    assert calls[(16, "self.fee")].scope == "shop.cart.Cart.price"
    assert calls[(19, "self.save")].candidates[0] == "shop.cart.Cart.save"
    assert calls[(20, "helper")].candidates == ("shop.cart.helper",)
    assert calls[(27, "total")].candidates == ("shop.prices.total",)
    assert calls[(26, "items.sort")].candidates == ()  # a local variable: no guess
    refs = {(r.line, r.text) for r in cart.references if r.kind == "ref"}
    assert (14, "functools.cache") in refs


def test_cross_file_resolution_through_imports_and_reexports() -> None:
    files = _pkg()
    table = SymbolTable.build(files.values())
    app = {r.text: r for r in files["src/app.py"].references if r.kind == "call"}
    assert table.resolve(app["Cart"]) == "shop.cart.Cart"  # via shop/__init__ re-export
    assert table.resolve(app["shop.Cart"]) == "shop.cart.Cart"
    assert table.resolve(app["p.total"]) == "shop.prices.total"
    assert table.resolve(app["grand_total"]) == "shop.prices.total"  # alias of an alias
    pay = {r.text: r for r in files["src/app.py"].references if r.scope == "app.pay"}
    assert table.resolve(pay["c.price"]) == "shop.cart.Cart.price"  # by its annotation
    assert pay["other.price"].candidates == ()  # an object of unknown class: no guess
    assert table.resolve(app["total"]) is None  # a parameter shadows nothing it could name
    assert table.resolve(app["cart.price"]) == "shop.cart.Cart.price"  # cart = Cart(...)
    cart = {(r.line, r.text): r for r in files["src/shop/cart.py"].references}
    assert table.resolve(cart[(16, "self.fee")]) == "shop.base.Base.fee"  # via the base class
    assert table.resolve(cart[(20, "helper")]) == "shop.cart.helper"  # not prices.helper
    (path, definition), = table.locate("shop.base.Base.fee")
    assert path == "src/shop/base.py" and definition.start_line == 5 and definition.end_line == 6


def test_incremental_remove_and_add_one_file() -> None:
    files = _pkg()
    table = SymbolTable.build(files.values())
    ref = next(r for r in files["src/app.py"].references if r.text == "p.total")
    provided = table.remove("src/shop/prices.py")
    assert "shop.prices.total" in provided
    assert table.resolve(ref) is None
    moved = _py("src/shop/prices.py", "def other():\n    pass\n\n\ndef total(x):\n    pass\n",
                set(PKG))
    table.add(moved)
    assert table.resolve(ref) == "shop.prices.total"
    assert table.locate("shop.prices.total")[0][1].start_line == 5
    rebuilt = SymbolTable.from_parts(
        [(f.path, d) for f in [*files.values()] if f.path != "src/shop/prices.py"
         for d in f.definitions] + [(moved.path, d) for d in moved.definitions],
        table.aliases())
    assert rebuilt.resolve(ref) == "shop.prices.total"


def test_syntax_error_keeps_the_rest_of_the_file() -> None:
    code = _py("m.py", "def good():\n    pass\n\ndef bad(:\n    pass\n\nclass After:\n"
                       "    def m(self):\n        return good()\n")
    names = [d.qualname for d in code.definitions]
    assert "m.good" in names and "m.After.m" in names
    assert code.errors and code.errors[0][0] == 4
    assert "syntax error" in code.errors[0][1]
    assert any(r.text == "good" and r.candidates == ("m.good",) for r in code.references)


def test_non_utf8_source_is_decoded_with_an_error_on_its_line() -> None:
    data = b"def f():\n    return 1\n\ns = '\xff\xfe'\n\ndef g():\n    return f()\n"
    code = parse_code("latin.py", data, "python", "latin")
    assert code.errors[0] == (4, "not valid UTF-8: decoded with replacement characters")
    assert {d.qualname for d in code.definitions} == {"latin", "latin.f", "latin.g"}


def test_typescript_definitions_imports_and_calls() -> None:
    app = parse_code("src/app.ts", textwrap.dedent("""\
        import { helper as h } from './util';
        import Main from './util';
        /** Adds things. */
        export function add(a: number, b: number): number {
          return h(a) + Main();
        }
        export class Box extends Base {
          open(): void { this.close(); }
          close(): void {}
        }
        export const arrow = (x: number) => add(x, 1);
        """).encode(), "typescript", "src/app")
    util = parse_code("src/util.ts", b"export function helper(x: number) { return x; }\n"
                      b"export default function main() { return 1; }\n", "typescript",
                      "src/util")
    defs = {d.qualname: d for d in app.definitions}
    assert defs["src/app.add"].doc == "Adds things."
    assert (defs["src/app.add"].start_line, defs["src/app.add"].end_line) == (4, 6)
    assert defs["src/app.Box.close"].kind == "method"
    assert defs["src/app.arrow"].kind == "function"
    table = SymbolTable.build([app, util])
    resolved = {r.text: table.resolve(r) for r in app.references}
    assert resolved == {"h": "src/util.helper", "Main": "src/util.main",
                        "this.close": "src/app.Box.close", "add": "src/app.add"}


def test_javascript_require_and_tsx() -> None:
    js = parse_code("lib/a.js", b"const { run } = require('./b');\nfunction go() { run(); }\n",
                    "javascript", "lib/a")
    b = parse_code("lib/b.js", b"function run() {}\nmodule.exports = { run };\n", "javascript",
                   "lib/b")
    assert SymbolTable.build([js, b]).resolve(js.references[0]) == "lib/b.run"
    tsx = parse_code("ui/V.tsx", b"export function View() { return <div>{fmt()}</div>; }\n"
                     b"function fmt() { return 'x'; }\n", "tsx", "ui/V")
    assert [d.qualname for d in tsx.definitions] == ["ui/V", "ui/V.View", "ui/V.fmt"]
    assert tsx.references[0].candidates == ("ui/V.fmt",)


def test_go_definitions_and_calls_by_package() -> None:
    server = parse_code("srv/server.go", textwrap.dedent("""\
        // Package srv serves.
        package srv

        import (
        \t"fmt"
        \tu "example.com/m/util"
        )

        // Server is a server.
        type Server struct{}

        func (s *Server) Run() { s.stop(); u.Help(); fmt.Println(); local() }
        func (s *Server) stop() {}
        """).encode(), "go", "srv")
    other = parse_code("srv/other.go", b"package srv\nfunc local() {}\n", "go", "srv")
    util = parse_code("util/u.go", b"package util\nfunc Help() {}\n", "go", "util")
    defs = {d.qualname: d for d in server.definitions}
    assert defs["srv"].doc == "Package srv serves."
    assert defs["srv.Server"].doc == "Server is a server." and defs["srv.Server"].kind == "class"
    assert defs["srv.Server.Run"].kind == "method"
    table = SymbolTable.build([server, other, util])
    resolved = {r.text: table.resolve(r) for r in server.references}
    assert resolved == {"s.stop": "srv.Server.stop", "u.Help": "util.Help",
                        "fmt.Println": None, "local": "srv.local"}  # same package, other file


def test_rust_definitions_uses_and_calls() -> None:
    lib = parse_code("src/lib.rs", textwrap.dedent("""\
        //! The crate.
        use crate::util::{help, other as o};
        mod util;
        pub struct Foo;
        impl Foo {
            /// Makes one.
            #[inline]
            pub fn new() -> Self { Self::make(); help(); o(); util::deep(); Foo::make() }
            fn make() -> Self { Foo }
        }
        fn main() { let f = Foo::new(); f.go(); }
        """).encode(), "rust", "crate")
    util = parse_code("src/util.rs", b"pub fn help() {}\npub fn other() {}\npub fn deep() {}\n",
                      "rust", "crate::util")
    defs = {d.qualname: d for d in lib.definitions}
    assert defs["crate"].doc == "The crate."
    assert (defs["crate::Foo::new"].start_line, defs["crate::Foo::new"].doc) == (7, "Makes one.")
    table = SymbolTable.build([lib, util])
    resolved = {r.text: table.resolve(r) for r in lib.references}
    assert resolved == {"Self::make": "crate::Foo::make", "help": "crate::util::help",
                        "o": "crate::util::other", "util::deep": "crate::util::deep",
                        "Foo::make": "crate::Foo::make", "Foo::new": "crate::Foo::new",
                        "f.go": None}


def test_find_a_symbol_as_a_person_writes_it() -> None:
    table = SymbolTable.build(_pkg().values())
    assert table.find("shop.prices.total") == ["shop.prices.total"]
    assert table.find("shop.Cart") == ["shop.cart.Cart"]  # through the re-export
    assert table.find("total") == ["shop.prices.total"]
    assert table.find("helper()") == ["shop.cart.helper", "shop.prices.helper"]
    assert table.find("Cart.price") == ["shop.cart.Cart.price"]
    assert table.find("art.price") == []  # only at a name boundary
    assert table.find("nothing") == []


def test_star_reexports_and_async_defs_resolve() -> None:
    paths = {"p/__init__.py", "p/a.py", "main.py"}
    init = _py("p/__init__.py", "from .a import *\n", paths)
    a = _py("p/a.py", "async def fetch():\n    pass\n", paths)
    main = _py("main.py", "from p import fetch\n\nasync def go():\n    await fetch()\n", paths)
    table = SymbolTable.build([init, a, main])
    assert a.definitions[1].qualname == "p.a.fetch" and a.definitions[1].kind == "function"
    call = next(r for r in main.references if r.kind == "call")
    assert table.resolve(call) == "p.a.fetch"
    index = parse_code("lib/index.ts", b"export * from './impl';\n", "typescript", "lib/index")
    impl = parse_code("lib/impl.ts", b"export function run() {}\n", "typescript", "lib/impl")
    app = parse_code("app.ts", b"import { run } from './lib';\nrun();\n", "typescript", "app")
    table = SymbolTable.build([index, impl, app])
    assert table.resolve(app.references[0]) == "lib/impl.run"  # ./lib → lib/index → export *


def test_a_local_from_a_call_is_typed_by_the_class_or_the_return_annotation() -> None:
    paths = {"m/__init__.py", "m/kinds.py", "m/use.py"}
    kinds = _py("m/kinds.py", '''\
        class Box:
            def open(self):
                pass


        def make() -> "Box":
            return Box()


        def plain():
            return Box()
        ''', paths)
    use = _py("m/use.py", '''\
        from m.kinds import Box, make, plain


        def go():
            a = Box()
            b = make()
            c = plain()
            a.open()
            b.open()
            c.open()
        ''', paths)
    assert next(d for d in kinds.definitions if d.name == "make").returns == ("m.kinds.Box",)
    table = SymbolTable.build([kinds, use])
    calls = {r.text: r for r in use.references if r.kind == "call"}
    assert calls["a.open"].candidates == ("m.kinds.Box().open",)
    assert table.resolve(calls["a.open"]) == "m.kinds.Box.open"
    assert table.resolve(calls["b.open"]) == "m.kinds.Box.open"  # make() -> "Box"
    assert table.resolve(calls["c.open"]) is None  # no annotation: not guessed


def test_a_qualname_defined_twice_resolves_to_the_nearest_file() -> None:
    paths = {"tests/conftest.py", "tests/test_a.py", "bench/conftest.py"}
    a = _py("tests/conftest.py", "def tool():\n    pass\n", paths)
    b = _py("bench/conftest.py", "\n\ndef tool():\n    pass\n", paths)
    user = _py("tests/test_a.py", "from conftest import tool\n\ntool()\n", paths)
    table = SymbolTable.build([b, a, user])
    call = next(r for r in user.references if r.kind == "call")
    assert table.resolve(call) == "conftest.tool"
    assert len(table.locate("conftest.tool")) == 2
    where, definition = table.resolve_definition(call, "tests/test_a.py")
    assert where == "tests/conftest.py" and definition.start_line == 1


def test_a_global_declaration_keeps_the_module_binding() -> None:
    code = _py("g.py", "from os import path\n\n\ndef f():\n    global path\n    path = 1\n"
                       "    path.join()\n\n\ndef h():\n    path = 2\n    path.join()\n")
    calls = [r.candidates for r in code.references if r.kind == "call"]
    assert calls == [("os.path.join",), ()]


def test_a_very_deep_expression_does_not_exhaust_the_stack() -> None:
    terms = " + ".join(["1"] * 6000)
    code = parse_code("deep.py", f"x = {terms} + f()\n\ndef f():\n    return 1\n".encode(),
                      "python", "deep")
    assert [r.candidates for r in code.references if r.kind == "call"] == [("deep.f",)]
    js = parse_code("deep.js", f"const x = {terms} + f();\nfunction f() {{}}\n".encode(),
                    "javascript", "deep")
    assert [r.candidates for r in js.references] == [("deep.f",)]
    go = parse_code("d/deep.go", f"package d\nvar x = {terms} + f()\nfunc f() int {{ return 1 }}\n"
                    .encode(), "go", "d")
    assert [r.candidates for r in go.references] == [("d.f",)]
    rust = parse_code("src/lib.rs", f"fn g() -> i32 {{ {terms} + f() }}\nfn f() -> i32 {{ 1 }}\n"
                      .encode(), "rust", "crate")
    assert [r.candidates for r in rust.references] == [("crate::f",)]


def test_root_packages_builtins_and_preludes() -> None:
    go = parse_code("main.go", b"package main\nfunc main() { run(); x := make([]int, len(a)) }\n"
                    b"func run() {}\n", "go", module_name("main.go", "go", set()))
    assert [d.qualname for d in go.definitions] == [".", ".main", ".run"]
    assert [(r.text, r.candidates) for r in go.references] == [
        ("run", (".run",)), ("make", ()), ("len", ())]
    rust = parse_code("src/lib.rs", b"fn f() -> Option<u8> { drop(1); g(); Some(1) }\nfn g() {}\n",
                      "rust", "crate")
    assert [(r.text, r.candidates) for r in rust.references] == [
        ("drop", ()), ("g", ("crate::g",)), ("Some", ())]
    test = parse_code("test/app.js", b"const app = require('..');\napp.listen();\n",
                      "javascript", "test/app")
    index = parse_code("index.js", b"function listen() {}\nmodule.exports = { listen };\n",
                       "javascript", "index")
    assert SymbolTable.build([test, index]).resolve(test.references[0]) == "index.listen"
    call = parse_code("test/b.js", b"const express = require('..');\nexpress();\n", "javascript",
                      "test/b")
    assert call.references[0].candidates == ("index",)
    assert SymbolTable.build([call, index]).resolve(call.references[0]) is None  # not a module


def test_attributes_of_self_typed_by_what_init_assigns() -> None:
    paths = {"s/__init__.py", "s/store.py", "s/app.py"}
    store = _py("s/store.py", "class Store:\n    def close(self):\n        pass\n", paths)
    app = _py("s/app.py", '''\
        from s.store import Store


        class App:
            cache: Store

            def stop(self):
                self.store.close()
                self.other.close()
                self.cache.close()
                self.mixed.close()

            def __init__(self, backup: Store, x):
                self.store = Store()
                self.other = backup
                self.mixed = Store()
                self.mixed = x
        ''', paths)
    table = SymbolTable.build([store, app])
    got = {r.text: table.resolve(r) for r in app.references if r.kind == "call"}
    assert got["self.store.close"] == "s.store.Store.close"  # used before __init__ assigns it
    assert got["self.other.close"] == "s.store.Store.close"  # a parameter annotated Store
    assert got["self.cache.close"] == "s.store.Store.close"  # a class-body annotation
    assert got["self.mixed.close"] is None  # assigned two kinds of thing: no guess
