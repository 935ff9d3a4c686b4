#!/usr/bin/env python3
"""Which links of a vault would Obsidian show as unresolved? An independent check for doctor.

    python bench/obsidian_links.py VAULT                 # counts, and the unresolved links
    python bench/obsidian_links.py VAULT --json          # the same as JSON
    python bench/obsidian_links.py VAULT --compare DOCTOR.json   # vs `kenning doctor --json`

Written from Obsidian's documented and observed behaviour, sharing no code with Kenning (it imports
nothing from it): every file of the vault is a link target (dot-folders are hidden, as in
Obsidian); ``[[name]]`` finds files by file name, case-insensitively, with ``.md`` added when the
name has no extension of its own; a path in the link must be a suffix of the file's path
(``./`` and ``../`` are relative to the note, a leading ``/`` is the vault root); several matches
are narrowed to the linking note's folder first, then the shortest path, then alphabetical
order. ``#Heading`` and ``#^block`` never make a link unresolved. Markdown links resolve the
same way after URL-decoding. Wikilinks in frontmatter values count; plain names there do not.
Links in fenced or indented code, inline code, ``$$`` math and HTML comments are not links.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote

WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MDLINK = re.compile(r"(!?)\[[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*\]\(\s*(<[^<>\n]*>|[^\s()<>]+"
                    r"(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+\"[^\"\n]*\"|\s+'[^'\n]*')?\s*\)")
SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:|//)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# Inline math: "$" with a non-space right after it, closed by a "$" with a non-space right before
# it and no digit after it (so "$5 or $6" is prose); "$$…$$" on one line too.
INLINE_MATH = re.compile(r"\$\$.+?\$\$"
                         r"|(?<![\w$\\])\$(?![\s$])(?:\\.|[^$\\])*?(?<![\s\\])\$(?![\d$])")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


@dataclass(frozen=True)
class Found:
    """One link in a note: where, as written, and what it resolved to (None: unresolved)."""

    path: str
    line: int
    kind: str          # wikilink | embed | markdown | frontmatter
    target: str        # the link path, without #subpath and |alias
    resolved: str | None


def vault_files(root: Path) -> list[str]:
    """Every file Obsidian would see: all but dot-files and anything inside dot-folders."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in files:
            if not name.startswith("."):
                out.append(unicodedata.normalize("NFC", name if rel == "." else f"{rel}/{name}"))
    return sorted(out)


class Resolver:
    """Obsidian's rules for finding the file a link path means."""

    def __init__(self, files: list[str]) -> None:
        self.by_name: dict[str, list[str]] = {}
        for path in files:
            self.by_name.setdefault(path.rsplit("/", 1)[-1].lower(), []).append(path)

    def resolve(self, link: str, source: str) -> str | None:
        """The file ``link`` (a link path, no ``#…``) leads to from note ``source``, or None."""
        if link == "":
            return source
        low = link.lower()
        name = low.rsplit("/", 1)[-1]
        found = self.by_name.get(name) if "." in name else None
        if not found:
            low = (link + ".md").lower()
            name = low.rsplit("/", 1)[-1]
            found = self.by_name.get(name)
        if not found:
            return None
        if name == low and len(found) == 1:
            return found[0]
        folder = source.rsplit("/", 1)[0].lower() if "/" in source else ""
        if low.startswith(("./", "../")):
            want = low[2:] if low.startswith("./") else low
            base = folder
            while want.startswith("../"):
                want = want[3:]
                base = base.rsplit("/", 1)[0] if "/" in base else ""
            want = f"{base}/{want}" if base else want
            for path in found:
                if path.lower() == want:
                    return path
            low = want
        stripped = low[1:] if low.startswith("/") else low
        for path in found:
            if path.lower() == stripped:
                return path
        if link.startswith("/"):
            return None
        near = sorted((p for p in found if p.lower().endswith(stripped)
                       and folder and p.lower().startswith(folder + "/")), key=_order)
        far = sorted((p for p in found if p.lower().endswith(stripped) and p not in near),
                     key=_order)
        ranked = near + far
        return ranked[0] if ranked else None


def _order(path: str) -> tuple[int, str]:
    return len(path), path.lower()


def body_lines(text: str) -> tuple[list[tuple[int, str]], str]:
    """(line number, text) of the body lines that can hold links, and the frontmatter text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start, front = 0, ""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                front = "\n".join(lines[1:i])
                start = i + 1
                break
    out: list[tuple[int, str]] = []
    fence: str | None = None
    math = False
    previous_blank = True
    in_list = False
    for number in range(start, len(lines)):
        line = lines[number]
        if fence is not None:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = None
            previous_blank = False
            continue
        opened = FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        if line.strip() == "$$" or (line.strip().startswith("$$") and not math
                                     and not line.strip().endswith("$$", 2)):
            math = not math
            continue
        if math:
            if line.strip().endswith("$$"):
                math = False
            continue
        blank = not line.strip()
        if LIST_ITEM.match(line):
            in_list = True
        elif blank:
            pass
        elif not line.startswith((" ", "\t")):
            in_list = False
        indented = line.startswith(("    ", "\t"))
        if indented and previous_blank and not in_list:
            continue  # an indented code block
        previous_blank = blank
        out.append((number + 1, line))
    return out, front


def links_of(path: str, text: str, resolver: Resolver) -> list[Found]:
    """Every link of one note, resolved."""
    lines, front = body_lines(text)
    found: list[Found] = []
    for match in WIKI.finditer(front):
        target = _wiki_target(match.group(2))
        found.append(Found(path, 0, "frontmatter", target, resolver.resolve(target, path)))
    body = "\n".join(line for _, line in lines)
    numbers = [n for n, _ in lines]
    body = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), body)
    for index, line in enumerate(body.split("\n")):
        if "[" not in line:
            continue
        line = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        line = INLINE_MATH.sub(lambda m: " " * len(m.group(0)), line)
        for match in WIKI.finditer(line):
            target = _wiki_target(match.group(2))
            if not target and "#" in match.group(2):
                continue  # [[#Heading]]: this note
            kind = "embed" if match.group(1) else "wikilink"
            found.append(Found(path, numbers[index], kind, target,
                               resolver.resolve(target, path)))
        line = WIKI.sub(lambda m: " " * len(m.group(0)), line)
        for match in MDLINK.finditer(line):
            dest = match.group(2)
            if dest.startswith("<"):
                dest = dest[1:-1]
            if not dest or SCHEME.match(dest):
                continue
            target = unquote(dest.split("#", 1)[0])
            if not target:
                continue
            found.append(Found(path, numbers[index], "markdown", target,
                               resolver.resolve(target, path)))
    return found


def _wiki_target(inner: str) -> str:
    target = inner.replace("\\|", "|").split("|", 1)[0]
    return unicodedata.normalize("NFC", target.split("#", 1)[0].strip())


def check(root: Path, exclude: tuple[str, ...] = ()) -> list[Found]:
    """Every link of every note under ``root``; notes matching ``exclude`` globs are not read."""
    files = vault_files(root)
    resolver = Resolver(files)
    out: list[Found] = []
    for path in files:
        if not path.lower().endswith(".md") or any(fnmatch.fnmatch(path, g) for g in exclude):
            continue
        data = (root / path).read_bytes()
        if b"\0" in data:
            continue
        out.extend(links_of(path, data.decode("utf-8", errors="replace"), resolver))
    return out


DOCTOR_ITEM = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+))?(?P<field> \[[^\]]*\])? → "
                         r"(?:!?\[\[(?P<wiki>.*?)\]\]|\((?P<md>.*?)\))(?: → .*)?$")
# The findings in which doctor lists links Obsidian shows as unresolved.
DOCTOR_CHECKS = ("dangling-links", "ambiguous-links", "links-by-title")
Key = tuple[str, int, str]


def doctor_unresolved(doctor: dict, check: str) -> Counter[Key]:
    """(path, line, target) of the links one finding of ``kenning doctor --json`` lists.

    A frontmatter link has line 0 (doctor cites the line of its key, this check none)."""
    out: Counter[Key] = Counter()
    for finding in doctor["findings"]:
        if finding["check"] != check:
            continue
        if finding.get("cut"):
            raise SystemExit(f"doctor cut its {finding['check']} list; cannot compare")
        for item in finding["items"]:
            m = DOCTOR_ITEM.match(item)
            if not m:
                raise SystemExit(f"cannot read doctor item: {item!r}")
            target = m.group("wiki") if m.group("wiki") is not None else m.group("md")
            line = 0 if m.group("field") else int(m.group("line") or 0)
            out[(m.group("path"), line, target.casefold())] += 1
    return out


def main() -> None:
    """Command line: check a vault, optionally against a doctor report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--exclude", action="append", default=[],
                        help="glob of notes not read (Kenning's config exclusions)")
    parser.add_argument("--compare", type=Path, help="a `kenning doctor --json` report")
    parser.add_argument("--show", type=int, default=30, help="differences listed at most")
    args = parser.parse_args()
    found = check(args.vault, tuple(args.exclude))
    unresolved = [f for f in found if f.resolved is None]
    kinds = Counter(f.kind for f in unresolved)
    if args.json:
        print(json.dumps({"links": len(found), "unresolved": len(unresolved), "by_kind": kinds,
                          "items": [asdict(f) for f in unresolved]}, ensure_ascii=False,
                         indent=1))
        return
    print(f"{len(found)} links, {len(unresolved)} unresolved by Obsidian's rules "
          f"({', '.join(f'{n} {k}' for k, n in kinds.most_common()) or 'none'})")
    if not args.compare:
        for f in unresolved[: args.show]:
            print(f"  {f.path}:{f.line} → {f.target}")
        return
    report = json.loads(args.compare.read_text(encoding="utf-8"))
    doctor: Counter[Key] = Counter()
    parts = []
    for name in DOCTOR_CHECKS:
        listed = doctor_unresolved(report, name)
        doctor += listed
        parts.append(f"{sum(listed.values())} {name}")
    mine: Counter[Key] = Counter((f.path, f.line, f.target.casefold()) for f in unresolved)
    both = doctor & mine
    print(f"doctor lists {sum(doctor.values())} ({', '.join(parts)}); in both "
          f"{sum(both.values())}; only doctor {sum((doctor - mine).values())}; only Obsidian "
          f"{sum((mine - doctor).values())}")
    for title, items in (("only doctor", doctor - mine), ("only Obsidian", mine - doctor)):
        if items:
            print(f"{title}:")
            for (path, line, target), n in sorted(items.items())[: args.show]:
                print(f"  {path}:{line} → {target}" + (f" ×{n}" if n > 1 else ""))


if __name__ == "__main__":
    main()
