"""Rename, merge and split entity pages, rewriting every link to them in the vault.

Links rewritten (outside code blocks and inline code; in frontmatter values too): wikilinks
``[[target]]``, ``[[target|alias]]``, ``[[target#heading]]``, ``![[target]]``, table-escaped
``[[target\\|alias]]`` — where the target is the page's path, path without ``.md``, file stem or
title — and Markdown links ``[text](../people/sarah.md#x)`` that resolve to the page. The
raw layer (``sources/``) is append-only and is not rewritten. Each file is written atomically;
the new page is written before the old one is removed, so a crash loses nothing.

- **rename**: the page moves to the path of its new title, its H1 changes, the old title joins
  ``aliases``.
- **merge A B** (B into A): B's aliases, emails and domains (and its title, as an alias) join A's;
  B's facts and timeline lines are appended to A's sections; everything else in B's body, and
  any frontmatter key A lacks, moves to A (B's other body text under ``## Merged from B``); links
  to B point at A; B is removed.
- **split PAGE --name N**: the chosen aliases, emails, fact lines and timeline lines move from
  PAGE to a new page N of the same type (N gets a link back under ``## Split from``); links are
  not changed (the person decides which mentions meant N).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from kenning.builder import names as nm
from kenning.builder.pages import _list, current_summary, link, stem
from kenning.builder.state import BuildState
from kenning.builder.workspace import Workspace
from kenning.errors import KenningError
from kenning.vault import frontmatter as fmod
from kenning.vault.layout import entity_file_name, entity_path, free_path, name_key
from kenning.vault.markdown import WIKILINK, resolve_relative
from kenning.vault.page import (
    add_fact,
    append_timeline,
    parse_page,
    render_timeline,
    set_frontmatter,
)

_MDLINK = re.compile(r"(\[[^\]\n]*\]\()(<[^>\n]+>|[^)\s]+)(\))")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


class BuildCommandError(KenningError):
    """A merge, split or rename that cannot be done as asked."""


@dataclass
class Target:
    old_path: str
    new_path: str
    new_title: str
    names: set[str] = field(default_factory=set)   # folded forms that mean the old page
    old_title: str = ""
    bare: bool = False   # a link without text stays without text (the name is readable)


def _key(text: str) -> str:
    return " ".join(text.strip().casefold().removesuffix(".md").split())


def _targets_for(old_path: str, old_title: str) -> set[str]:
    base = old_path[:-3] if old_path.endswith(".md") else old_path
    return {_key(old_path), _key(base), _key(stem(old_path)), _key(old_title)}


class Targets:
    """Targets looked up by link name and old path, prepared once for many texts (a migration
    of thousands of pages rewrites every page against every target)."""

    # Up to this many targets, a text none of whose names it contains is skipped by substring
    # search; past it the search costs more than reading the text's links.
    SCAN_AT_MOST = 64

    def __init__(self, targets: list[Target]) -> None:
        self.targets = targets
        self.by_name: dict[str, Target] = {}
        for t in targets:
            for n in t.names:
                self.by_name.setdefault(n, t)
        self.by_path = {t.old_path: t for t in targets}
        self.needles = [n for t in targets for n in (stem(t.old_path).casefold(), *t.names)
                        if n] if len(targets) <= self.SCAN_AT_MOST else None
        # A wikilink's new text depends on the link alone (not on the page it is in): the same
        # link in a thousand pages is worked out once.
        self.wikilinks: dict[str, str] = {}

    def may_touch(self, text: str) -> bool:
        """False when ``text`` surely links none of the targets."""
        if not self.targets or "[" not in text:
            return False
        if self.needles is None:
            return True
        folded = text.casefold()
        return any(n in folded for n in self.needles)


def rewrite_text(text: str, page_path: str, targets: list[Target] | Targets) -> str:
    """``text`` with every link to a target's old page pointed at its new page."""
    prepared = targets if isinstance(targets, Targets) else Targets(targets)
    if not prepared.may_touch(text):
        return text
    by_name, by_path = prepared.by_name, prepared.by_path
    folder = page_path.rsplit("/", 1)[0] if "/" in page_path else ""
    done = prepared.wikilinks

    def wiki(m: re.Match[str]) -> str:
        whole = m.group(0)
        out = done.get(whole)
        if out is None:
            out = done[whole] = _wiki(m)
        return out

    def _wiki(m: re.Match[str]) -> str:
        bang, inner = m.group(1), m.group(2)
        escaped = "\\|" in inner
        target_part, sep, alias = (inner.partition("\\|") if escaped else inner.partition("|"))
        target, hsep, heading = target_part.partition("#")
        t = by_name.get(_key(target)) if target.strip() else None
        if t is None:
            return m.group(0)
        raw = target.strip()
        if "/" in raw:
            new_target = t.new_path if raw.endswith(".md") else t.new_path[:-3]
        else:
            new_target = stem(t.new_path)
        if not sep and t.bare:
            alias = ""
        elif not sep:
            shown = raw if _key(raw) not in (_key(stem(t.old_path)), _key(t.old_path[:-3]),
                                             _key(t.old_path)) else t.new_title
            alias = shown
        pipe = "\\|" if escaped else "|"
        if alias and alias == t.old_title:
            alias = t.new_title  # the title Kenning wrote as the link text
        out = new_target + (hsep + heading if hsep else "")
        if alias and alias != new_target:
            out += pipe + alias
        return f"{bang}[[{out}]]"

    def md(m: re.Match[str]) -> str:
        dest = m.group(2)
        angled = dest.startswith("<")
        raw = dest[1:-1] if angled else dest
        if re.match(r"^[a-zA-Z][\w+.-]*:|^//", raw):
            return m.group(0)
        path_part, hsep, frag = raw.partition("#")
        decoded = unquote(path_part)
        if not decoded:
            return m.group(0)
        resolved = resolve_relative(page_path, decoded)
        t = by_path.get(resolved) or by_path.get(resolved + ".md")
        if t is None:
            return m.group(0)
        rel = os.path.relpath(t.new_path, folder or ".").replace(os.sep, "/")
        if not decoded.endswith(".md"):
            rel = rel[:-3]
        new = rel if angled or ("%" not in path_part and " " not in rel) else quote(rel)
        new = new + (hsep + frag if hsep else "")
        return m.group(1) + (f"<{new}>" if angled else new) + m.group(3)

    def _links(piece: str) -> str:
        if "[[" in piece:
            piece = WIKILINK.sub(wiki, piece)
        return _MDLINK.sub(md, piece) if "](" in piece else piece

    out = []
    fence = None
    for line in text.split("\n"):
        f = _FENCE.match(line)
        if fence:
            if f and f.group(1) == fence:
                fence = None
            out.append(line)
            continue
        if f:
            fence = f.group(1)
            out.append(line)
            continue
        if "[" not in line:
            out.append(line)
            continue
        if "`" not in line:
            out.append(_links(line))
            continue
        pieces, pos = [], 0
        for c in _CODE.finditer(line):
            pieces.append(_links(line[pos:c.start()]))
            pieces.append(c.group(0))
            pos = c.end()
        pieces.append(_links(line[pos:]))
        out.append("".join(pieces))
    return "\n".join(out)


def rewrite_links(ws: Workspace, targets: list[Target], *, skip: set[str] = frozenset()) -> \
        list[str]:
    """Rewrite links in every page of the vault; returns the pages changed."""
    changed = []
    prepared = Targets(targets)
    for rel in ws.all_pages():
        if rel in skip:
            continue
        text = ws.read(rel)
        if text is None:
            continue
        new = rewrite_text(text, rel, prepared)
        if new != text and ws.write(rel, new):
            changed.append(rel)
    return changed


def _set_title(text: str, title: str) -> str:
    """``text`` with its first-line H1 (the name Kenning wrote) set to ``title``; a later H1 is
    a section of the page and stays."""
    lines = text.split("\n")
    fm = fmod.locate(text)
    start = fm.body_start - 1 if fm is not None and fm.close_line else 0
    for i in range(start, len(lines)):
        if not lines[i].strip():
            continue
        if lines[i].startswith("# "):
            cr = "\r" if lines[i].endswith("\r") else ""
            lines[i] = f"# {title}{cr}"
            return "\n".join(lines)
        break
    return text


def _free_path(ws: Workspace, kind: str, title: str, old: str) -> str:
    """Where a page titled ``title`` goes: its name, or ``… 2.md`` when another page (compared
    case-insensitively, as macOS and Windows do) holds it; ``old`` itself counts as free."""
    folder = kind_folder(kind, old)
    base = f"{folder}/{entity_file_name(title)}"
    mine = name_key(old)
    keys = {name_key(p) for p in ws.listdir(folder)} - {mine}
    return free_path(base, keys.__contains__)


def kind_folder(kind: str, old: str) -> str:
    """The folder a page of ``kind`` lives in: where it is now, else its type's folder."""
    if "/" in old:
        return old.rsplit("/", 1)[0]
    return entity_path(kind, "x").rsplit("/", 1)[0]


def _same_person(index: Any, old: str, title: str, emails: list[str]) -> str | None:
    """The one other person page already called ``title`` whose mail domains fit ``emails``
    (the resolver's exact-name rule, applied when a name is learned after the address)."""
    if index is None:
        return None
    q = nm.parse_person(title)
    if q is None or not q.full:
        return None
    doms = {nm.org_domain(e.rsplit("@", 1)[-1]) for e in emails if "@" in e}
    fits = []
    for e in index.by_name.get(nm.fold(title), []):
        if e.type != "person" or e.page == old or not ws_exists(index, e.page):
            continue
        theirs = {nm.org_domain(x.rsplit("@", 1)[-1]) for x in e.emails}
        if not theirs or not doms or theirs & doms or all(nm.is_freemail(d) for d in doms):
            fits.append(e.page)
    return fits[0] if len(fits) == 1 else None


def _same_org(index: Any, old: str, title: str, domains: list[str]) -> str | None:
    """The one other organization page already called ``title`` (same organization key) with
    no mail domain of another organization: a page named from prose ("Northwind Freight GmbH")
    that the domain page (northwind.test) is learning the name of."""
    if index is None:
        return None
    key = nm.org_key(title)
    mine = {nm.org_domain(d) for d in domains}
    fits = []
    for e in index.by_org_key.get(key, []):
        if e.type != "organization" or e.page == old or not ws_exists(index, e.page):
            continue
        theirs = {nm.org_domain(d) for d in e.domains}
        if not theirs or theirs & mine:
            fits.append(e.page)
    return fits[0] if len(fits) == 1 else None


def ws_exists(index: Any, page: str) -> bool:
    return page in index.by_page


def rename_pages(ws: Workspace, state: BuildState, renames: list[tuple[str, str]],
                 index: Any = None) -> list[tuple[str, str]]:
    """Rename pages to fuller titles; one vault scan rewrites the links for all of them.

    When the fuller name is exactly another person's page and their mail domains fit, the page
    is merged into that one instead (the same evidence would have linked it on first sight).
    """
    targets: list[Target] = []
    done = []
    for old, title in renames:
        text = ws.read(old)
        if text is None:
            continue
        fm = fmod.read(text)
        if fm.error:
            continue
        kind = str(fm.data.get("type") or "person")
        if kind in ("person", "organization"):
            same = _same_person(index, old, title, _list(fm.data.get("emails"))) \
                if kind == "person" else _same_org(index, old, title,
                                                   _list(fm.data.get("domains")))
            if same is not None and ws.exists(same):
                merge_pages(ws, state, same, old)
                done.append((old, same))
                continue
        old_title = _title(text, old)
        new_path = _free_path(ws, kind, title, old)
        aliases = _list(fm.data.get("aliases"))
        if old_title and nm.fold(old_title) not in {nm.fold(a) for a in aliases} \
                and "@" not in old_title:
            aliases.append(old_title)
        aliases = [a for a in aliases if nm.fold(a) != nm.fold(title)]
        new_text = _set_title(set_frontmatter(text, {"aliases": aliases}) if aliases
                              else text, title)
        ws.write(new_path, new_text)
        if new_path != old:
            ws.delete(old)
            if old in state.pages:
                state.pages[new_path] = state.pages.pop(old)
            state.renamed[old] = new_path
        targets.append(Target(old, new_path, title, _targets_for(old, old_title), old_title))
        done.append((old, new_path))
    if targets:
        rewrite_links(ws, targets)
        _rewrite_state(state, targets)
    return done


def _rewrite_state(state: BuildState, targets: list[Target]) -> None:
    """The values the build remembers having written (``organization``) follow the links they
    hold, as the pages did; else a rewritten link would read as a person's edit."""
    for path, rec in state.pages.items():
        value = rec.get("organization")
        if isinstance(value, str) and "[[" in value:
            rec["organization"] = rewrite_text(value, path, targets)


def _title(text: str, path: str) -> str:
    return parse_page(text, path).title


# -- merge ------------------------------------------------------------------------------------


def merge_pages(ws: Workspace, state: BuildState, keep: str, other: str) -> dict[str, Any]:
    """Merge page ``other`` into page ``keep``; returns what moved."""
    if keep == other:
        raise BuildCommandError("cannot merge a page into itself")
    a_text, b_text = ws.read(keep), ws.read(other)
    if a_text is None or b_text is None:
        raise BuildCommandError(f"no such page: {keep if a_text is None else other}")
    a, b = parse_page(a_text, keep), parse_page(b_text, other)
    if (a.problems and any(p.code == "frontmatter" for p in a.problems)) or \
            any(p.code == "frontmatter" for p in b.problems):
        raise BuildCommandError("a page has malformed frontmatter; fix it first "
                                "(see `kenning doctor`)")
    if a.type and b.type and a.type != b.type:
        raise BuildCommandError(f"cannot merge a {b.type} into a {a.type}")
    updates: dict[str, Any] = {}
    aliases = list(a.aliases)
    for name in (b.title, *b.aliases):
        if nm.fold(name) != nm.fold(a.title) and nm.fold(name) not in \
                {nm.fold(x) for x in aliases}:
            aliases.append(name)
    if aliases != list(a.aliases):
        updates["aliases"] = aliases
    for key in ("emails", "domains"):
        merged = _list(a.frontmatter.get(key))
        for v in _list(b.frontmatter.get(key)):
            if v.casefold() not in {m.casefold() for m in merged}:
                merged.append(v)
        if merged != _list(a.frontmatter.get(key)):
            updates[key] = merged
    conflicts = []
    for key, value in b.frontmatter.items():
        if key in ("aliases", "emails", "domains", "type"):
            continue
        if key not in a.frontmatter:
            updates[key] = value
        elif a.frontmatter[key] != value:
            mine = str(a.frontmatter[key])
            if (key == "first_seen" and str(value) < mine) or \
                    (key == "last_seen" and str(value) > mine):
                updates[key] = value
            elif key in ("first_seen", "last_seen"):
                pass  # the wider span is kept: not a conflict
            else:
                conflicts.append((key, value))
    text = set_frontmatter(a_text, updates) if updates else a_text
    lines_b = b_text.split("\n")
    moved: set[int] = set()
    for fact in b.facts:
        line = lines_b[fact.line - 1].rstrip("\r")
        merged = _merge_works_at(text, keep, fact)
        text = merged if merged is not None else add_fact_line(text, line)
        moved.add(fact.line)
    for entry in sorted(b.timeline, key=lambda e: e.date):
        text = append_timeline(text, entry) if render_timeline(entry) == \
            lines_b[entry.line - 1].strip() else _append_raw_timeline(
                text, lines_b[entry.line - 1].rstrip("\r"), entry)
        moved.add(entry.line)
    rest = _rest_of_body(b_text, b, moved)
    extra = []
    if b.summary and b.summary.strip() != (state.pages.get(other, {}).get("summary") or ""):
        extra.append(b.summary.strip())
    if conflicts:
        extra.append("Frontmatter of the merged page that differed from this one:")
        extra.extend(f"- `{k}`: {v!r}" for k, v in conflicts)
    if rest.strip():
        extra.append(rest.strip("\n"))
    if extra:
        nl = "\r\n" if "\r\n" in text else "\n"
        block = f"## Merged from {b.title}{nl}{nl}" + f"{nl}{nl}".join(
            e.replace("\n", nl) for e in extra) + nl
        text = text.rstrip("\r\n") + nl + nl + block
    text = _resummarize(text, keep, a.type, a.title, state)
    ws.write(keep, text)
    ws.delete(other)
    rec_b = state.pages.pop(other, None)
    if rec_b:
        rec_a = state.pages.setdefault(keep, {})
        rec_a["keys"] = sorted(set(rec_a.get("keys", [])) | set(rec_b.get("keys", [])))
        # The merged page's month lines moved with its timeline: what they stand for too
        # (builder/timeline.py; a month KEEP folded itself stays KEEP's).
        for month, folded in (rec_b.get("folded") or {}).items():
            rec_a.setdefault("folded", {}).setdefault(month, folded)
    state.renamed[other] = keep
    targets = [Target(other, keep, a.title, _targets_for(other, b.title), b.title)]
    changed = rewrite_links(ws, targets)
    _rewrite_state(state, targets)
    return {"kept": keep, "removed": other, "aliases": aliases, "facts": len(b.facts),
            "timeline": len(b.timeline), "links_rewritten": changed}


def _merge_works_at(text: str, path: str, fact: Any) -> str | None:
    """``text`` with an active ``works_at`` fact for the same organization as ``fact`` widened
    to cover it (earliest ``from`` and ``seen``, the later fact's text and source); None when
    there is no such fact (``fact`` is then appended as it is)."""
    from dataclasses import replace

    from kenning.vault.layout import slug
    from kenning.vault.page import replace_fact

    if fact.relation != "works_at" or fact.status != "active" or not fact.target:
        return None
    org = slug(fact.target)
    same = [f for f in parse_page(text, path).facts if f.relation == "works_at"
            and f.status == "active" and f.target and slug(f.target) == org]
    if not same:
        return None
    mine = same[0]
    froms = [d for d in (mine.valid_from, fact.valid_from) if d]
    seen = [d for d in (mine.seen, fact.seen) if d]
    later = fact if (fact.valid_from or fact.seen or "") > (mine.valid_from or mine.seen or "") \
        else mine
    ends = [mine.valid_to, fact.valid_to]
    widened = replace(mine, text=later.text, valid_from=min(froms) if froms else None,
                      seen=min(seen) if seen else None,
                      valid_to=None if None in ends else max(e for e in ends if e),
                      source=later.source or mine.source or fact.source)
    return replace_fact(text, mine.line, widened)


def _resummarize(text: str, path: str, kind: str | None, title: str, state: BuildState) -> str:
    """A merged page's summary counted again from its merged timeline, while it is still the
    one the build wrote (a person's summary stays)."""
    from kenning.builder.pages import own_summary_replaced, summary_for

    fm = fmod.read(text)
    if kind is None or fm.error:
        return text
    summary = summary_for(kind, title, text, fm.data)
    new = own_summary_replaced(text, summary, state.pages.get(path, {})) if summary else None
    if new is None:
        return text
    state.pages.setdefault(path, {})["summary"] = summary
    return new


def add_fact_line(text: str, line: str) -> str:
    """Append a raw fact line (kept byte for byte) to the Facts section."""
    from kenning.vault.page import Fact

    marker = Fact(0, None, None, "\u2063kenning-merge\u2063")
    text = add_fact(text, marker)
    return text.replace("- \u2063kenning-merge\u2063", line.lstrip(), 1)


def _append_raw_timeline(text: str, line: str, entry: Any) -> str:
    text = append_timeline(text, entry)
    rendered = render_timeline(entry)
    idx = text.rfind(rendered)
    return text[:idx] + line.lstrip() + text[idx + len(rendered):] if idx >= 0 else text


def _rest_of_body(text: str, page: Any, moved: set[int]) -> str:
    """Body text of a page without its H1, summary, the moved lines and empty owned sections."""
    lines = text.split("\n")
    start = page.body_start
    skip = set(moved)
    if page.title_line:
        skip.add(page.title_line)
    if page.summary_lines:
        skip.update(range(page.summary_lines[0], page.summary_lines[1] + 1))
    kept = [lines[i - 1].rstrip("\r") for i in range(start, len(lines) + 1) if i not in skip]
    # Drop Facts/Timeline headings whose sections are now empty.
    out: list[str] = []
    for i, line in enumerate(kept):
        if re.match(r"^#{2,6}\s+(facts|timeline)\s*$", line.strip(), re.IGNORECASE):
            following = []
            for nxt in kept[i + 1:]:
                if nxt.startswith("#"):
                    break
                following.append(nxt)
            if not any(x.strip() for x in following):
                continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


# -- split ------------------------------------------------------------------------------------


def split_page(ws: Workspace, state: BuildState, page: str, name: str, *,
               aliases: tuple[str, ...] = (), emails: tuple[str, ...] = (),
               lines: tuple[int, ...] = (), match: tuple[str, ...] = ()) -> dict[str, Any]:
    """Move chosen aliases, emails and fact/timeline lines of ``page`` to a new page ``name``."""
    text = ws.read(page)
    if text is None:
        raise BuildCommandError(f"no such page: {page}")
    p = parse_page(text, page)
    if any(pr.code == "frontmatter" for pr in p.problems):
        raise BuildCommandError(f"{page}: malformed frontmatter; fix it first")
    kind = p.type or "person"
    owned = {f.line for f in p.facts} | {e.line for e in p.timeline}
    chosen = set()
    src = text.split("\n")
    for n in lines:
        if n not in owned:
            raise BuildCommandError(f"{page}:{n} is not a fact or timeline line")
        chosen.add(n)
    for needle in match:
        for n in owned:
            if needle.casefold() in src[n - 1].casefold():
                chosen.add(n)
    have_aliases = {a.casefold(): a for a in p.aliases}
    have_emails = {e.casefold(): e for e in _list(p.frontmatter.get("emails"))}
    for a in aliases:
        if a.casefold() not in have_aliases:
            raise BuildCommandError(f"{page} has no alias {a!r}")
    for e in emails:
        if e.casefold() not in have_emails:
            raise BuildCommandError(f"{page} has no email {e!r}")
    if not (chosen or aliases or emails):
        raise BuildCommandError("nothing to split: give --alias, --email, --line or --match")
    new_path = _free_path(ws, kind, name, "")
    fm: dict[str, Any] = {"type": kind}
    if aliases:
        fm["aliases"] = [have_aliases[a.casefold()] for a in aliases]
    if emails:
        fm["emails"] = [have_emails[e.casefold()] for e in emails]
    body_lines = [src[n - 1].rstrip("\r") for n in sorted(chosen)]
    facts = [ln for n, ln in zip(sorted(chosen), body_lines, strict=True)
             if n in {f.line for f in p.facts}]
    entries = [ln for n, ln in zip(sorted(chosen), body_lines, strict=True)
               if n in {e.line for e in p.timeline}]
    from kenning.vault.page import new_page

    new_text = new_page(title=name, frontmatter=fm)
    for line in facts:
        new_text = add_fact_line(new_text, line)
    for line in entries:
        entry = next(e for e in p.timeline if src[e.line - 1].rstrip("\r") == line)
        new_text = _append_raw_timeline(new_text, line, entry)
    new_text = new_text.rstrip("\n") + f"\n\n## Split from\n\n{link(page, p.title)}\n"
    ws.write(new_path, new_text)
    # Only now take the moved parts out of the original.
    updates: dict[str, Any] = {}
    if aliases:
        updates["aliases"] = [a for a in p.aliases if a.casefold() not in
                              {x.casefold() for x in aliases}]
    if emails:
        updates["emails"] = [e for e in _list(p.frontmatter.get("emails"))
                             if e.casefold() not in {x.casefold() for x in emails}]
    remaining = set_frontmatter(text, updates) if updates else text
    if chosen:
        fm_len = len(text.split("\n")) - len(remaining.split("\n"))
        kept = remaining.split("\n")
        remove = {n - 1 - fm_len for n in chosen}
        remaining = "\n".join(line for i, line in enumerate(kept) if i not in remove)
    ws.write(page, remaining)
    state.pages.pop(new_path, None)
    if current_summary(remaining) is None:
        pass
    return {"page": page, "new_page": new_path, "aliases": list(aliases),
            "emails": list(emails), "lines": sorted(chosen)}
