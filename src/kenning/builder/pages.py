"""Entity pages: the compact index read from them, and the edits a batch's decisions make.

Pages are edited only through :mod:`kenning.vault.page` (``new_page``, ``set_frontmatter``,
``add_fact``, ``append_timeline``, ``set_summary``), so every byte a person wrote outside the
parts Kenning owns stays. On top of that the build is careful with the owned parts too:

- ``aliases``, ``emails``, ``domains`` only grow; ``first_seen``/``last_seen`` only widen;
- ``organization``, ``role`` and the summary are rewritten only while they still hold what the
  build last wrote (kept in the build state); a value a person changed is theirs;
- timeline entries are appended once per (page, source); facts once per (page, relation, target).

Links to pages are written ``[[file-stem|Title]]`` so Obsidian resolves them by file name.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from kenning import vocabulary
from kenning.builder import names as nm
from kenning.builder.mentions import ORGANIZATION, PERSON, PROJECT, TOPIC, Mention, SourceInfo
from kenning.builder.resolve import Decision, Entity, EntityIndex, identity_keys
from kenning.builder.state import BuildState
from kenning.builder.workspace import Workspace
from kenning.errors import VocabularyError
from kenning.vault import frontmatter as fmod
from kenning.vault.layout import entity_path, free_path, meeting_file_name, name_key
from kenning.vault.page import (
    Fact,
    TimelineEntry,
    add_fact,
    append_timeline,
    new_page,
    render_timeline,
    set_frontmatter,
    set_summary,
)

INDEX_FOLDERS = {"people": PERSON, "organizations": ORGANIZATION, "projects": PROJECT,
                 "topics": TOPIC}
_H1 = re.compile(r"^# (.+?)\s*#*\s*$")
_LINK_VALUE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_TL_SOURCE = re.compile(r"^[-*+] \d{4}.*\[source:: \[\[sources/(email|meetings|chats|calendar)/"
                        r"([^\]#|]+)")
_TL_LINE = re.compile(r"^[-*+] \d{4}(?:-\d{2}){0,2} ")  # a timeline entry, not a fact
_TL_MONTH = re.compile(r"^- \d{4}-\d{2} — ")  # a month line (timeline.py)
_CITED_SOURCE = re.compile(r"\[\[(sources/(?:meetings|calendar)/[^\]#|]+)")
_WORKS_AT = re.compile(r"^[-*+] works_at:: \[\[([^\]|#]+)")
_ATTENDING = frozenset({"attendee", "speaker"})
# Unresolved attendee mentions that name nobody, so they are no attendee either.
_NO_ATTENDEE = frozenset({"not-a-name", "unknown-kind", "none"})


def _same_person_name(name: str, title: str) -> bool:
    """True when ``name`` is ``title`` or its first word ("sam" for [[Sam Whitaker]]): the
    attendee is already listed by their link."""
    a, b = nm.fold(name).split(), nm.fold(title).split()
    if not a or not b:
        return False
    return a == b or (len(a) == 1 and a[0] == b[0])


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def link(path: str, title: str) -> str:
    s = stem(path)
    return f"[[{s}]]" if s == title else f"[[{s}|{title}]]"


def cite(source: str, line: int | None = None) -> str:
    base = source[:-3] if source.endswith(".md") else source
    return f"[[{base}#L{line}]]" if line else f"[[{base}]]"


def _clean(text: str) -> str:
    text = " ".join(str(text).split())
    return text.replace("[", "(").replace("]", ")").replace("::", ":")


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value).strip()] if str(value).strip() else []


def first_h1(text: str, body_start: int) -> str | None:
    """The H1 on the first non-blank line of the body (where Kenning writes a page's name), or
    None; a later H1 is a section, never a name."""
    for line in text.split("\n")[body_start - 1:]:
        if line.strip():
            m = _H1.match(line.rstrip("\r"))
            return m.group(1).strip() if m else None
    return None


def title_of(text: str, body_start: int, data: dict[str, Any], path: str) -> str:
    """The name an entity goes by: the page's first-line H1 (the file name may carry a ` 2`
    suffix or a character no file system holds), else its title by the one rule (``title:``,
    else the file name)."""
    from kenning.vault.page import page_title

    return first_h1(text, body_start) or page_title(data, path)


# -- the compact entity index --------------------------------------------------------------


class IndexLoader:
    """Builds the :class:`EntityIndex` from pages on disk, re-reading only changed files.

    Within a build a page is read again when its stamp (mtime, size, inode) changes; across
    builds its entry comes from ``.kenning/build/cache/pages.json`` when the page's text has the
    hash the entry was computed from (:mod:`kenning.builder.cache`), else from its YAML."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.cache: dict[str, tuple[object, Entity | None]] = {}
        self.disk: dict[str, Any] | None = None   # the cache file's entries, read lazily
        self.known: dict[str, list[Any]] = {}     # rel → [key, entry] computed this build
        self.loaded = False

    def _stored(self, rel: str, key: str) -> Any:
        if self.disk is None:
            from kenning.builder import cache

            self.disk = cache.load(self.ws.root, "pages")
        hit = self.disk.get(rel)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == key:
            return hit[1]
        return _MISS

    def entity(self, rel: str, folder_type: str) -> Entity | None:
        stamp = self.ws.stamp(rel)
        hit = self.cache.get(rel)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        text = self.ws.read(rel)
        e = None
        if text is not None:
            key = _page_key(text, folder_type)
            stored = self._stored(rel, key)
            if stored is not None:  # None: the cache knows this text is no entity
                e = _entity_from(rel, stored) if stored is not _MISS else None
                if e is None:
                    e = read_entity(rel, text, folder_type)
            self.known[rel] = [key, _entity_entry(e)]
        self.cache[rel] = (stamp, e)
        return e

    def prime(self, rel: str, text: str, data: dict[str, Any], folder_type: str) -> None:
        """Remember a page this build just wrote (after commit), without reading it again."""
        self.cache[rel] = (self.ws.stamp(rel), read_entity(rel, text, folder_type, data))

    def save_cache(self) -> dict[str, Any]:
        """Write ``pages.json``: the entry of every entity page on disk, for its text now (a
        pure function of the pages, so the same vault gives the same bytes). Only after a build
        that loaded the index, never in a dry run."""
        from kenning.builder import cache

        entries: dict[str, Any] = {}
        if self.ws.dry_run or not self.loaded:
            return entries
        for folder, kind in INDEX_FOLDERS.items():
            for rel in self.ws.listdir(folder):
                text = self.ws.read(rel)
                if text is None:
                    continue
                key = _page_key(text, kind)
                mine = self.known.get(rel)
                if mine is not None and mine[0] == key:
                    entries[rel] = mine
                    continue
                stored = self._stored(rel, key)
                if stored is _MISS or (stored is not None and _entity_from(rel, stored) is None):
                    stored = _entity_entry(read_entity(rel, text, kind))
                entries[rel] = [key, stored]
        cache.save(self.ws.root, "pages", entries)
        return entries

    def load(self) -> EntityIndex:
        self.loaded = True
        entities = []
        for folder, kind in INDEX_FOLDERS.items():
            for rel in self.ws.listdir(folder):
                e = self.entity(rel, kind)
                if e is not None:
                    entities.append(e)
        index = EntityIndex(entities)
        # Organization values are links or names; point them at org pages where possible.
        by_stem = {stem(e.page).lower(): e.page for e in index.entities
                   if e.type == ORGANIZATION}
        def page_of(value: str) -> str | None:
            if value in index.by_page:
                return value
            return by_stem.get(value.lower()) or next(
                (o.page for o in index.by_org_key.get(nm.org_key(value), [])), None)

        for e in index.entities:
            if e.organization and e.organization not in index.by_page:
                e.organization = page_of(e.organization) or e.organization
            if e.orgs:
                e.orgs = tuple(page_of(o) or o for o in e.orgs)
        return index


_MISS = object()
_ENTRY_FIELDS = ("type", "name", "aliases", "emails", "domains", "organization", "role",
                 "last_seen", "orgs")


def _page_key(text: str, folder_type: str) -> str:
    """What a page's index entry is a function of (besides its path): its folder's type and
    its exact text."""
    import hashlib

    return f"{folder_type}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"


def _entity_entry(e: Entity | None) -> list[Any] | None:
    """An index entry as JSON, as :func:`read_entity` made it."""
    if e is None:
        return None
    return [e.type, e.name, list(e.aliases), list(e.emails), list(e.domains), e.organization,
            e.role, e.last_seen, list(e.orgs)]


def _entity_from(rel: str, entry: Any) -> Entity | None:
    """The :class:`Entity` of a cached entry (None for an entry that does not have the shape
    :func:`_entity_entry` writes: the page is read)."""
    if not isinstance(entry, list) or len(entry) != len(_ENTRY_FIELDS):
        return None
    kind, name, aliases, emails, domains, organization, role, last_seen, orgs = entry
    if not (isinstance(kind, str) and isinstance(name, str)
            and all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                    for v in (aliases, emails, domains, orgs))
            and all(v is None or isinstance(v, str) for v in (organization, role, last_seen))):
        return None
    return Entity(page=rel, type=kind, name=name, aliases=tuple(aliases), emails=tuple(emails),
                  domains=tuple(domains), organization=organization, role=role,
                  last_seen=last_seen, orgs=tuple(orgs))


def read_entity(rel: str, text: str, folder_type: str,
                data: dict[str, Any] | None = None) -> Entity | None:
    body_start = 1
    if data is None:
        fm = fmod.read(text)
        data, body_start = fm.data, fm.body_start
    else:
        block = fmod.locate(text)
        body_start = block.body_start if block is not None else 1
    raw_type = data.get("type")
    kind = folder_type
    if isinstance(raw_type, str):
        try:
            kind = vocabulary.entity_type(raw_type)
        except Exception:
            kind = folder_type
    if kind not in INDEX_FOLDERS.values():
        return None
    org = data.get("organization")
    organization = None
    if isinstance(org, str) and org.strip():
        m = _LINK_VALUE.search(org)
        organization = m.group(1).strip() if m else org.strip()
    orgs: list[str] = []
    if kind == PERSON and "works_at::" in text:
        for line in text.split("\n"):
            w = _WORKS_AT.match(line.strip())
            if w and w.group(1).strip() not in orgs:
                orgs.append(w.group(1).strip())
    return Entity(
        page=rel, type=kind, name=title_of(text, body_start, data, rel),
        aliases=tuple(_list(data.get("aliases"))),
        emails=tuple(e.lower() for e in _list(data.get("emails"))),
        domains=tuple(d.lower().lstrip("@") for d in _list(data.get("domains"))),
        organization=organization,
        role=str(data["role"]) if isinstance(data.get("role"), str) else None,
        last_seen=str(data.get("last_seen")) if data.get("last_seen") else None,
        orgs=tuple(orgs))


# -- applying decisions ----------------------------------------------------------------------


@dataclass
class Update:
    """Everything one batch adds to one page."""

    path: str
    type: str
    title: str
    new: bool = False
    aliases: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    organization: tuple[str, str] | None = None   # (date, org page path)
    role: tuple[str, str] | None = None            # (date, role)
    first_seen: str | None = None
    last_seen: str | None = None
    facts: list[Fact] = field(default_factory=list)
    timeline: dict[str, TimelineEntry] = field(default_factory=dict)  # source path → entry
    attendees: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)  # a meeting's ``## Topics`` lines
    rename_to: str | None = None

    def seen(self, day: str | None, last: str | None = None) -> None:
        for d in (day, last):
            if not d:
                continue
            if self.first_seen is None or d < self.first_seen:
                self.first_seen = d
            if self.last_seen is None or d > self.last_seen:
                self.last_seen = d

    def add(self, bucket: list[str], value: str | None) -> None:
        if value and value.casefold() not in {v.casefold() for v in bucket}:
            bucket.append(value)


def _fuller(title: str, name: str | None, kind: str) -> bool:
    """The page's title is a shorter form of ``name`` (rename when a fuller name is learned)."""
    if not name or name == title:
        return False
    if kind == PERSON:
        new = nm.parse_person(name)
        if new is None or not new.full:
            return False
        if "@" in title:
            return True
        old = nm.parse_person(title)
        if old is None:
            return False
        if old.full:
            return False
        if old.first and not old.last:
            return nm.first_names_match(old.first, new.first) in ("exact", "nickname")
        return bool(old.last and old.last == new.last)
    return False


class Applier:
    """Turns one batch's decisions into page edits (and log rows)."""

    def __init__(self, ws: Workspace, index: EntityIndex, state: BuildState,
                 infos: dict[str, SourceInfo]) -> None:
        self.ws, self.index, self.state, self.infos = ws, index, state, infos
        self.updates: dict[str, Update] = {}
        self.taken: set[str] = set()   # name keys of paths this batch took
        self.folder_keys: dict[str, set[str]] = {}
        self.meeting_paths: dict[str, str] = {}  # meeting source → its page
        self.owned: set[str] | None = None  # pages Kenning created (None: every page)
        self.final: dict[str, tuple[str, dict[str, Any]]] = {}  # path → (text, frontmatter)
        self.claimed: dict[str, set[str]] | None = None  # folded name → pages holding it
        self._citing: dict[str, str] | None = None  # meeting source → the page citing it
        self.meeting_titles: dict[str, str] = {}  # meeting page → its title

    # -- targets ---------------------------------------------------------------------------

    def _taken(self, key: str) -> bool:
        """A path already used, as a case-insensitive file system sees it."""
        folder = key.rsplit("/", 1)[0]
        keys = self.folder_keys.get(folder)
        if keys is None:
            keys = self.folder_keys[folder] = {name_key(p) for p in self.ws.listdir(folder)} | {
                name_key(p) for p in self.index.by_page if p.rsplit("/", 1)[0] == folder}
        return key in keys or key in self.taken

    def _unique_path(self, kind: str, title: str) -> str:
        path = free_path(entity_path(kind, title), self._taken)
        self.taken.add(name_key(path))
        return path

    def _update(self, path: str, kind: str, title: str, new: bool = False) -> Update:
        u = self.updates.get(path)
        if u is None:
            u = self.updates[path] = Update(path, kind, title, new=new)
        return u

    def apply(self, mentions: list[Mention], decisions: list[Decision]) -> list[dict[str, Any]]:
        new_paths: dict[str, str] = {}
        targets: list[str | None] = []
        for m, d in zip(mentions, decisions, strict=True):
            path = None
            if d.action == "link" and d.page and self.index.get(d.page) is not None:
                path = d.page
                e = self.index.get(d.page)
                assert e is not None
                self._update(path, e.type, e.name)
            elif d.action == "link" and d.page:
                d.action, d.rule = "unresolved", "unknown-page"  # another resolver's mistake
            elif d.action == "create" and d.new_key:
                path = new_paths.get(d.new_key)
                if path is None:
                    title = nm.normalize_space(d.name or m.name or m.text) or m.text
                    path = new_paths[d.new_key] = self._unique_path(m.kind, title)
                    self._update(path, m.kind, title, new=True)
            targets.append(path)
        # Each source: which organization page each mail domain (and signature) resolved to.
        domain_org: dict[tuple[str, str], str] = {}
        for m, path in zip(mentions, targets, strict=True):
            if path and m.kind == ORGANIZATION and m.domain:
                domain_org.setdefault((m.source, m.domain), path)
        sig_org: dict[tuple[str, str], str] = {}
        for m, path in zip(mentions, targets, strict=True):
            if path and m.kind == ORGANIZATION and m.via == "signature":
                sig_org[(m.source, m.text.rstrip(".,"))] = path
        for m, d, path in zip(mentions, decisions, targets, strict=True):
            if path is None:
                continue
            self._collect(self.updates[path], m, d, domain_org, sig_org)
        self._meetings(mentions, decisions, targets)
        rows = []
        first_of: set[str] = set()
        for m, d, path in zip(mentions, decisions, targets, strict=True):
            row = self._row(m, d, path)
            if row.pop("created", False) and d.new_key not in first_of:
                first_of.add(d.new_key or "")
                row["created"] = True
            rows.append(row)
        return rows

    @staticmethod
    def _row(m: Mention, d: Decision, path: str | None) -> dict[str, Any]:
        row: dict[str, Any] = {"source": m.source, "line": m.line, "text": m.text,
                               "kind": m.kind, "email": m.email, "page": path,
                               "confidence": round(d.confidence if path else 0.0, 3),
                               "rule": d.rule}
        if d.candidates and path is None:
            row["candidates"] = list(d.candidates)
        if d.action == "create" and path:
            row["created"] = True
        if m.kind == PERSON and "from" in m.roles:
            row["wrote"] = True
        return row

    def _collect(self, u: Update, m: Mention, d: Decision,
                 domain_org: dict[tuple[str, str], str],
                 sig_org: dict[tuple[str, str], str]) -> None:
        info = self.infos.get(m.source)
        u.seen(m.date, m.last_date)
        header = m.via in ("participant", "attendee", "speaker", "chat", "calendar")
        if u.type == PERSON and m.kind == PERSON:
            u.add(u.emails, m.email)
            if header and m.name:
                q = nm.parse_person(m.name)
                shown = q.display if q is not None and q.full else m.name
                if _fuller(u.title, shown, PERSON) and u.rename_to is None:
                    u.rename_to = shown
                elif nm.fold(shown) != nm.fold(u.title) and "@" not in shown:
                    u.add(u.aliases, shown)
            org_path = None
            if m.email and "@" in m.email:
                org_path = domain_org.get((m.source, nm.org_domain(m.email.rsplit("@", 1)[1])))
            if org_path is None and m.org:
                org_path = sig_org.get((m.source, m.org.rstrip(".,")))
            if org_path and (u.organization is None or (m.date or "") >= u.organization[0]):
                u.organization = (m.date or "", org_path)
                if m.title:
                    u.role = (m.date or "", _clean(m.title))
                # The date is when the evidence first shows the job, not when it began.
                u.facts.append(Fact(0, "works_at", stem(org_path), self._org_text(
                    org_path, m.title), seen=m.date, source=cite(m.source, m.line)))
            elif m.title and (u.role is None or (m.date or "") >= u.role[0]):
                u.role = (m.date or "", _clean(m.title))
        elif u.type == ORGANIZATION and m.kind == ORGANIZATION:
            own = m.via == "signature" and not m.unit
            if m.domain and (m.via == "domain" or nm.org_name_fits_domain(m.text, m.domain,
                                                                          own=own)):
                u.add(u.domains, m.domain)
            if m.via == "domain" and m.name and m.domain and u.title != m.name \
                    and u.title == nm.name_from_domain(m.domain) and u.rename_to is None:
                u.rename_to = m.name  # the name people write for a page made from a domain
            if m.via in ("signature", "text") and m.text:
                name = m.text.rstrip(".,")
                title = nm.strip_legal(name)
                if u.domains and nm.org_name_fits_domain(name, u.domains[0], own=own) and \
                        u.title == nm.name_from_domain(u.domains[0]) and title != u.title \
                        and nm.fold(title) != nm.fold(u.title):
                    u.rename_to = u.rename_to or title
                    if title != name:
                        u.add(u.aliases, name)
                elif nm.fold(name) != nm.fold(u.title):
                    u.add(u.aliases, name)
            return
        elif u.type in (PROJECT, TOPIC) and m.via == "tag":
            u.add(u.aliases, "#" + m.text)
        if info is not None and m.source not in u.timeline:
            entry = self._timeline(u, m, info)
            if entry is not None:
                u.timeline[m.source] = entry

    def _org_text(self, org_path: str, role: str | None) -> str:
        e = self.index.get(org_path)
        title = e.name if e is not None else self.updates[org_path].title \
            if org_path in self.updates else stem(org_path)
        text = link(org_path, title)
        return f"{text} {_clean(role)}" if role else text

    def _timeline(self, u: Update, m: Mention, info: SourceInfo) -> TimelineEntry | None:
        day = m.date or info.date
        if not day:
            return None
        if u.type == PERSON and info.kind == "email" and (
                m.via != "participant" or "from" not in m.roles):
            # A person's timeline is what they did: the threads they wrote. Being copied on
            # a thread, or named in one, is counted in the summary, not listed (the email is
            # the place for its own subject; see docs/build.md).
            return None
        subject = f"“{_clean(info.title)}”"
        if m.via == "participant":
            verb = "Wrote in" if "from" in m.roles else "Copied on" if (
                "cc" in m.roles or "bcc" in m.roles) and "to" not in m.roles else "Received"
            text = f"{verb} email {subject}"
        elif m.via in ("attendee", "speaker"):
            text = f"Attended {self._meeting_link(info) or subject}"
        elif m.via == "chat":
            text = f"Chat {subject}"
        elif m.via == "calendar":
            text = ("Organized" if "organizer" in m.roles else "Invited to") + \
                f" {self._meeting_link(info) or subject}"
        else:
            text = f"Mentioned in {subject}"
        return TimelineEntry(0, day, text, cite(m.source, m.line))

    def _meeting_link(self, info: SourceInfo) -> str | None:
        # Called for a resolved attendee, so _meetings writes this page in the same batch.
        if info.kind not in ("meeting", "calendar") or info.bulk:
            return None
        path = self.meeting_path(info)
        return link(path, self._meeting_title(path, info))

    def _meeting_title(self, path: str, info: SourceInfo) -> str:
        """The title of a meeting's page: the page's own, else the first source's that took
        the path (an event and its transcript may be titled differently)."""
        if path in self.updates:
            return self.updates[path].title
        title = self.meeting_titles.get(path)
        if title is None:
            text = self.ws.read(path)
            title = None if text is None else first_h1(text, fmod.read(text).body_start)
            title = self.meeting_titles[path] = title or _clean(info.title) or stem(path)
        return title

    def _meetings(self, mentions: list[Mention], decisions: list[Decision],
                  targets: list[str | None]) -> None:
        # Every attendee and speaker, in order: a link to their page, or, when the build could
        # not tell whose page it is (a first name alone, the owner), their name as plain text —
        # an attendee all the same, never a guessed link.
        by_source: dict[str, list[tuple[str | None, str]]] = defaultdict(list)
        for m, d, path in zip(mentions, decisions, targets, strict=True):
            if m.kind != PERSON or not (m.via in _ATTENDING or m.via == "calendar" or (
                    m.via == "owner" and _ATTENDING.intersection(m.roles))):
                continue
            if path is None and (d.rule in _NO_ATTENDEE or str(d.rule).startswith("not-a-")
                                 or not (m.name or m.text).strip()):
                continue
            entry = (path, "" if path else nm.normalize_space(m.name or m.text))
            if entry not in by_source[m.source]:
                by_source[m.source].append(entry)
        # A transcript naming no one still joins the page of its one-off event (and the
        # event the page of its transcript).
        for source, info in self.infos.items():
            if source not in by_source and info.kind in ("meeting", "calendar") and \
                    not info.bulk and self._joins(info):
                by_source[source] = []
        for source, people in by_source.items():
            info = self.infos[source]
            path = self.meeting_path(info)
            if info.bulk or (path not in self.updates and not self.ws.exists(path)
                             and not any(p for p, _ in people)):
                continue
            u = self._update(path, "meeting", self._meeting_title(path, info),
                             new=not self.ws.exists(path))
            u.seen(info.date)
            linked = {p for p, _ in people if p}
            for p, name in people:
                if p is None:
                    if not any(_same_person_name(name, self.updates[q].title
                                                 if q in self.updates else stem(q))
                               for q in linked):
                        u.add(u.attendees, name)
                    continue
                title = self.updates[p].title if p in self.updates else stem(p)
                u.add(u.attendees, link(p, title))
            if info.kind == "calendar":
                # One line per occurrence (a series' page lists its dates; a one-off event's
                # page, which its transcript shares, has one).
                for day, line, note in info.occurrences:
                    what = "Calendar event" + (f" ({_clean(note)})" if note else "")
                    u.timeline.setdefault(f"{source}#L{line}",
                                          TimelineEntry(0, day, what, cite(source, line)))
                continue
            for event in info.linked:
                entry = self._series_occurrence(event, info)
                if entry is not None:
                    u.timeline.setdefault(f"{event}#series", entry)
            if info.topics:
                from kenning.builder.meetings import topic_lines

                for line in topic_lines(source, info.topics):
                    if line not in u.topics:
                        u.topics.append(line)
            if info.date:  # a timeline line needs a date; an undated transcript has none
                u.timeline.setdefault(source, TimelineEntry(0, info.date, "Transcript",
                                                            cite(source, info.first_line)))

    def meeting_path(self, info: SourceInfo) -> str:
        """The page of a meeting source: the one that already cites it (its transcript line),
        else ``meetings/<date> <title>.md`` (``… 2.md`` when another meeting has that name)."""
        hit = self.meeting_paths.get(info.path)
        if hit is not None:
            return hit
        # A transcript and the one-off calendar event sync linked to it are one meeting: the
        # page of either is the page of both (a recurring series has a page of its own).
        same = self._same_meeting(info)
        if same:
            pages = self._pages_citing()
            found = sorted({pages[s[:-3]] for s in same if s[:-3] in pages})
            if found:
                self.meeting_paths[info.path] = found[0]
                return found[0]
            for other in same:
                if other in self.meeting_paths:
                    self.meeting_paths[info.path] = self.meeting_paths[other]
                    return self.meeting_paths[other]
        cites = re.compile(re.escape(f"[[{info.path[:-3]}") + r"[#|\]]")
        # An older Kenning named the page after the source file; the build moves it first.
        legacy = "meetings/" + info.path.rsplit("/", 1)[-1]
        text = self.ws.read(legacy)
        if text is not None and cites.search(text):
            self.meeting_paths[info.path] = legacy
            return legacy
        day = None if info.kind == "calendar" and info.recurring else info.date
        base = "meetings/" + meeting_file_name(day, _clean(info.title) or stem(info.path))
        path, n = base, 1
        while True:
            text = self.ws.read(path)
            if text is None and not self._taken(name_key(path)):
                break  # free
            if text is not None and cites.search(text):
                break  # this meeting's page
            n += 1
            path = f"{base[:-3]} {n}.md"
        self.meeting_paths[info.path] = path
        self.taken.add(name_key(path))
        if self.ws.read(path) is None:
            self.meeting_titles.setdefault(path, _clean(info.title) or stem(info.path))
        return path

    def _same_meeting(self, info: SourceInfo) -> list[str]:
        """The sources that are the same meeting as ``info``: a one-off event's linked
        transcripts, a transcript's linked event when that event is one-off."""
        if info.kind == "calendar":
            return [] if info.recurring else list(info.linked)
        out = []
        for event in info.linked:
            other = self.infos.get(event)
            if other is not None:
                if not other.recurring:
                    out.append(event)
                continue
            text = self.ws.read(event)
            if text is None:
                continue
            data = fmod.read(text).data
            if not data.get("recurrence") and str(data.get("occurrences") or "1") == "1":
                out.append(event)
        return out

    def _series_occurrence(self, event: str, info: SourceInfo) -> TimelineEntry | None:
        """For a transcript sync linked to a recurring series: the line citing the series'
        occurrence on the transcript's date, linking the series' page when there is one (a
        one-off event shares the transcript's page instead)."""
        from kenning.builder.meetings import occurrences

        if not info.date or event in self._same_meeting(info):
            return None
        other = self.infos.get(event)
        if other is None:
            text = self.ws.read(event)
            if text is None:
                return None
            fm = fmod.read(text)
            title = str(fm.data.get("title") or stem(event))
            other = SourceInfo(event, "calendar", title, None, recurring=True,
                               occurrences=occurrences(text.split("\n"), fm.body_start))
        line = next((n for day, n, _ in other.occurrences if day == info.date), None)
        if line is None:
            return None
        series = self.meeting_paths.get(event) or "meetings/" + meeting_file_name(
            None, _clean(other.title) or stem(event))
        name = _clean(other.title) or stem(event)
        shown = link(series, name) if series in self.updates or (
            self.ws.read(series) is not None and re.search(
                re.escape(f"[[{event[:-3]}") + r"[#|\]]", self.ws.read(series) or "")) \
            else f"“{name}”"
        return TimelineEntry(0, info.date, f"Calendar event, one of {shown}", cite(event, line))

    def _joins(self, info: SourceInfo) -> bool:
        """A page of the same meeting exists or is being written."""
        same = self._same_meeting(info)
        return bool(same) and (any(s in self.meeting_paths for s in same) or any(
            s[:-3] in self._pages_citing() for s in same))

    def _pages_citing(self) -> dict[str, str]:
        """Meeting and calendar source (path without ``.md``) → the meeting page citing it."""
        if self._citing is None:
            self._citing = {}
            for rel in sorted(self.ws.listdir("meetings")):
                text = self.ws.read(rel) or ""
                for m in _CITED_SOURCE.finditer(text):
                    self._citing.setdefault(m.group(1), rel)
        return self._citing

    # -- writing ---------------------------------------------------------------------------

    def write(self) -> list[tuple[str, str]]:
        """Stage every page; returns the renames wanted: (path, new title)."""
        renames = []
        for path in sorted(self.updates):
            u = self.updates[path]
            if u.type == "meeting":
                text = self._meeting_text(u)
            elif u.new:
                text = self._new_text(u)
            else:
                text = self.ws.read(path)
                text = None if text is None or not self._may_edit(path, text) \
                    else self._edit(u, text)
            if text is None:
                continue
            if u.type == PERSON and u.new:
                text = supersede_works_at(text, path)
            data = fmod.read(text).data
            text = self._summarize(u, text, data)
            self.ws.write(path, text)
            self._remember(u, text, data)
            self.final[path] = (text, data)
            if u.rename_to:
                renames.append((path, u.rename_to))
        return renames

    def _may_edit(self, path: str, text: str) -> bool:
        """A page Kenning created, or a typed entity page; a person's untyped note is only
        read (its mentions still resolve to it)."""
        from kenning.vault.created import may_write

        if self.owned is None or path in self.owned:
            return True  # no frontmatter to read
        raw = fmod.read(text).data.get("type")
        try:
            folded = vocabulary.entity_type(raw) if isinstance(raw, str) else None
        except VocabularyError:
            folded = None  # a type outside the vocabulary: not Kenning's format
        return may_write(path, folded, self.owned)

    def _free_aliases(self, u: Update, items: list[str]) -> list[str]:
        """The aliases the build may write on ``u``'s page: none another page already holds as
        title or alias (the first page to hold a name keeps it, so a link or recall by that
        name stays one page's), and on a person none that names a desk ("Legal")."""
        if self.claimed is None:
            self.claimed = {}
            for key, entities in self.index.by_name.items():
                self.claimed.setdefault(key, set()).update(e.page for e in entities)
            for other in self.updates.values():
                self.claimed.setdefault(nm.fold(other.title), set()).add(other.path)
        out = []
        for alias in items:
            key = nm.fold(alias)
            if self.claimed.get(key, set()) - {u.path}:
                continue
            if u.type == PERSON and nm.role_name(alias):
                continue
            self.claimed.setdefault(key, set()).add(u.path)
            out.append(alias)
        return out

    def _frontmatter(self, u: Update) -> dict[str, Any]:
        data: dict[str, Any] = {"type": u.type}
        aliases = self._free_aliases(u, u.aliases)
        if aliases:
            data["aliases"] = aliases
        if u.type == PERSON:
            if u.emails:
                data["emails"] = list(u.emails)
            if u.organization:
                data["organization"] = self._org_value(u.organization[1])
            if u.role:
                data["role"] = u.role[1]
        if u.type == ORGANIZATION and u.domains:
            data["domains"] = list(u.domains)
        if u.first_seen:
            data["first_seen"] = u.first_seen
            data["last_seen"] = u.last_seen
        return data

    def _org_value(self, org_path: str) -> str:
        e = self.index.get(org_path)
        title = e.name if e is not None else self.updates[org_path].title \
            if org_path in self.updates else stem(org_path)
        return link(org_path, title)

    def _facts(self, u: Update, text: str | None) -> list[Fact]:
        have = set()
        if text:
            for line in text.split("\n"):
                m = _WORKS_AT.match(line)
                if m:
                    have.add(m.group(1).strip().lower())
        out = []
        for f in u.facts:
            key = (f.target or "").lower()
            if key in have:
                continue
            have.add(key)
            out.append(f)
        return out

    def _entries(self, u: Update, text: str | None,
                 refresh: list[TimelineEntry] | None = None) -> list[TimelineEntry]:
        """The timeline entries of ``u`` the page does not list yet; those of sources it
        already cites go to ``refresh`` (they replace their line when the source's lines
        moved)."""
        from kenning.builder.timeline import folded_sources, folded_texts

        rec = self.state.pages.get(u.path, {})
        have = folded_sources(rec) if text else set()
        if text:
            for line in text.split("\n"):
                m = _TL_SOURCE.match(line)
                if m:
                    have.add(f"sources/{m.group(1)}/{m.group(2)}")
                elif _TL_LINE.match(line) and "[source:: [[sources/" in line:
                    have.add(line.split("[source:: [[", 1)[1].split("#", 1)[0].split("]", 1)[0])
        # A person's page lists a subject once: the first thread of it they wrote (a weekly
        # meeting, a message filed twice, a thread split in two are counted, not repeated).
        # Every other line is written; older months fold into one line each (timeline.py),
        # so a prolific writer's page stays a page without losing a thread.
        said: set[str] | None = None
        if u.type == PERSON:
            said = folded_texts(rec) if text else set()
            for line in (text or "").split("\n"):
                if _TL_LINE.match(line) and " — " in line:
                    said.add(line.split(" — ", 1)[1].split(" [source::", 1)[0].strip())
        out = []
        for source, entry in sorted(u.timeline.items(), key=lambda kv: (kv[1].date, kv[0])):
            if source[:-3] in have or source in have:
                if refresh is not None:
                    refresh.append(entry)
                continue
            if said is not None:
                if entry.text in said:
                    continue
                said.add(entry.text)
            out.append(entry)
        return sorted(out, key=lambda e: (e.date, e.source or ""))

    def _fold(self, u: Update, text: str, entries: list[TimelineEntry],
              refresh: list[TimelineEntry] | None = None) -> str:
        """The page with ``entries`` added to its timeline and its old months folded
        (:mod:`.timeline`)."""
        from kenning.builder.timeline import fold

        return fold(text, self.state.pages.setdefault(u.path, {}), entries, refresh or ())

    def _new_text(self, u: Update) -> str:
        return self._fold(u, new_page(title=u.title, frontmatter=self._frontmatter(u),
                                      facts=self._facts(u, None)), self._entries(u, None))

    def _edit(self, u: Update, text: str) -> str:
        fm = fmod.read(text)
        if fm.error:
            return text  # the person's frontmatter is broken: leave the page as it is
        data = fm.data
        rec = self.state.pages.get(u.path, {})
        updates: dict[str, Any] = {}
        # Facts first: the latest active works_at says since when the current job holds, and
        # older evidence (a second pass, a late source) never moves organization or role back.
        for fact in self._facts(u, text):
            text = add_fact(text, fact)
        since = ""
        if u.type == PERSON:
            from kenning.builder.moves import current_works_at

            text = supersede_works_at(text, u.path)
            job = current_works_at(text, u.path)
            since = job[1] if job is not None else ""
        for key, items in (("aliases", u.aliases), ("emails", u.emails),
                           ("domains", u.domains)):
            current = _list(data.get(key))
            folded = {c.casefold() for c in current}
            if key == "aliases":
                folded.add(nm.fold(u.title))
                folded |= {nm.fold(c) for c in current}
            added = [i for i in items if i.casefold() not in folded
                     and nm.fold(i) not in folded]
            if key == "aliases":
                added = self._free_aliases(u, added)
            if added:
                updates[key] = current + added
        if u.type == PERSON and u.organization and u.organization[0] >= since:
            value = self._org_value(u.organization[1])
            if data.get("organization") in (None, "", rec.get("organization")) and \
                    data.get("organization") != value:
                updates["organization"] = value
        if u.role and u.role[0] >= since and data.get("role") in (None, "", rec.get("role")) \
                and data.get("role") != u.role[1]:
            updates["role"] = u.role[1]
        if u.first_seen:
            first = str(data.get("first_seen") or "") or None
            last = str(data.get("last_seen") or "") or None
            if first is None or u.first_seen < first:
                updates["first_seen"] = u.first_seen
            if last is None or (u.last_seen or "") > last:
                updates["last_seen"] = u.last_seen
        if updates:
            text = set_frontmatter(text, updates)
        refresh: list[TimelineEntry] = []
        entries = self._entries(u, text, refresh)
        return self._fold(u, text, entries, refresh) if entries or refresh else text

    def _summarize(self, u: Update, text: str, data: dict[str, Any]) -> str:
        if u.type == PERSON and not u.new:
            return text  # rewritten once at the end of the build (write_person_summaries)
        summary = summary_for(u.type, u.title, text, data,
                              folded=_folded(self.state.pages.get(u.path, {})))
        if summary is None:
            return text
        new = own_summary_replaced(text, summary, self.state.pages.get(u.path, {}))
        return text if new is None else new

    def _meeting_text(self, u: Update) -> str | None:
        from kenning.builder.meetings import set_topics

        rec = self.state.pages.setdefault(u.path, {})
        text = self.ws.read(u.path)
        if text is None:
            data: dict[str, Any] = {"type": "meeting"}
            if u.first_seen:
                data["date"] = u.first_seen
            if u.attendees:
                data["attendees"] = list(u.attendees)
            text = set_topics(new_page(title=u.title, frontmatter=data), u.topics, rec)
            return self._fold(u, text, self._entries(u, None))
        fm = fmod.read(text)
        if fm.error:
            return None
        current = _list(fm.data.get("attendees"))
        added = [a for a in u.attendees if a not in current]
        if added:
            text = set_frontmatter(text, {"attendees": current + added})
        if u.first_seen and not fm.data.get("date"):
            text = set_frontmatter(text, {"date": u.first_seen})
        if u.topics:
            now = {t.split("[source:: [[", 1)[1].split("#", 1)[0] for t in u.topics}
            have = [t for t in rec.get("topics") or [] if not any(f"[[{n}#" in t for n in now)]
            text = set_topics(text, have + u.topics, rec)
        refresh: list[TimelineEntry] = []
        entries = self._entries(u, text, refresh)
        return self._fold(u, text, entries, refresh) if entries or refresh else text

    def _remember(self, u: Update, text: str, data: dict[str, Any]) -> None:
        rec = self.state.pages.setdefault(u.path, {})
        current = current_summary(text)
        # Only a summary the build wrote is the build's to rewrite later: a summary that was on
        # a page before the build first touched it is the person's.
        if current is not None and (u.new or
                                    current.strip() == summary_for(
                                        u.type, u.title, text, data, folded=_folded(rec))):
            rec["summary"] = current.strip()
        for key in ("organization", "role"):
            if u.type == PERSON and key == "organization" and u.organization:
                rec[key] = self._org_value(u.organization[1])
            elif key == "role" and u.role:
                rec[key] = u.role[1]
        keys: list[str] = []
        for email in _list(data.get("emails")):
            keys.extend(identity_keys(u.type, None, email=email))
        for domain in _list(data.get("domains")):
            keys.extend(identity_keys(u.type, None, domain=domain))
        keys.extend(identity_keys(u.type, u.title))
        rec["keys"] = sorted(set(keys))
        if data.get("last_seen"):
            rec["last_seen"] = str(data.get("last_seen"))


def supersede_works_at(text: str, path: str) -> str:
    from kenning.builder.moves import supersede_works_at as supersede

    return supersede(text, path)


def append_entries(text: str, entries: list[TimelineEntry]) -> str:
    """Append several timeline entries with one section lookup (after the first one)."""
    if not entries:
        return text
    text = append_timeline(text, entries[0])
    if len(entries) == 1:
        return text
    first = render_timeline(entries[0])
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split("\n")
    at = max(i for i, line in enumerate(lines) if line.rstrip("\r") == first)
    rest = [render_timeline(e) + ("\r" if nl == "\r\n" else "") for e in entries[1:]]
    return "\n".join(lines[: at + 1] + rest + lines[at + 1:])


def current_summary(text: str) -> str | None:
    """The summary region (between the H1 and the next heading); None without a plain H1."""
    lines = text.split("\n")
    fm = fmod.locate(text)
    start = fm.body_start - 1 if fm is not None and fm.close_line else 0
    for i in range(start, len(lines)):
        if _H1.match(lines[i].rstrip("\r")):
            out = []
            for line in lines[i + 1:]:
                if line.startswith("#"):
                    break
                if line.lstrip().startswith(("```", "~~~")):
                    return None  # not a plain region: leave it alone
                out.append(line.rstrip("\r"))
            return "\n".join(out)
        if lines[i].strip():
            return None
    return None


@dataclass(frozen=True)
class Correspondence:
    """What the mention log says of one person page: in how many sources of each kind it
    appears, and the people it appears with most (page path, title, sources together)."""

    sources: dict[str, int]
    partners: tuple[tuple[str, str, int], ...] = ()
    wrote: int = 0  # email sources in which the person wrote


# A source naming more people than this says little about who works with whom.
_PARTNER_SOURCES_MAX = 15
PARTNERS_SHOWN = 5


def correspondence(rows: list[dict[str, Any]], titles: dict[str, str]) -> dict[str, Correspondence]:
    """Per person page: its sources by kind and its most frequent co-participants, from the
    mention log rows (``source``, ``page``, ``kind``)."""
    by_source: dict[str, set[str]] = defaultdict(set)
    wrote: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        page = r.get("page")
        if page and r.get("kind") == PERSON and str(page).startswith("people/"):
            by_source[str(r.get("source"))].add(str(page))
            if r.get("wrote"):
                wrote[str(page)].add(str(r.get("source")))
    sources: dict[str, Counter[str]] = defaultdict(Counter)
    partners: dict[str, Counter[str]] = defaultdict(Counter)
    for source, pages in by_source.items():
        parts = source.split("/")
        kind = parts[1] if len(parts) > 2 else "other"
        for p in pages:
            sources[p][kind] += 1
        if len(pages) > _PARTNER_SOURCES_MAX:
            continue
        for p in pages:
            for q in pages:
                if q != p:
                    partners[p][q] += 1
    out = {}
    for p, counts in sources.items():
        top = sorted(partners[p].items(), key=lambda kv: (-kv[1], titles.get(kv[0], kv[0])))
        out[p] = Correspondence(dict(counts), tuple(
            (q, titles.get(q, stem(q)), n) for q, n in top[:PARTNERS_SHOWN] if q in titles),
            len(wrote.get(p, ())))
    return out


def _folded(rec: dict[str, Any]) -> set[str]:
    from kenning.builder.timeline import folded_sources

    return folded_sources(rec)


def summary_for(kind: str, title: str, text: str, data: dict[str, Any],
                seen: Correspondence | None = None,
                folded: set[str] | None = None) -> str | None:
    """A short deterministic summary from the page itself (frontmatter and timeline) and, for a
    person, what the mention log says (``seen``): threads in all, how many they wrote, and who
    they appear with most."""
    from kenning.builder.timeline import month_counts

    # Sources its timeline cites; a month line stands for sources it does not all name: those
    # are ``folded`` (the build state's record, source paths), else the counts the line says.
    counts: dict[str, set[str]] = defaultdict(set)
    said: Counter[str] = Counter()
    for line in text.split("\n"):
        m = _TL_SOURCE.match(line)
        if m and _TL_MONTH.match(line):
            if folded is None:
                said.update(month_counts(line))
        elif m:
            counts[m.group(1)].add(m.group(2))
    for path in folded or ():
        parts = path.split("/", 2)
        if len(parts) == 3:
            counts[parts[1]].add(parts[2])
    last = data.get("last_seen")
    parts = []
    for key, word in (("email", "email thread"), ("meetings", "meeting"), ("chats", "chat"),
                      ("calendar", "calendar event")):
        n = len(counts.get(key, ())) + said.get(key, 0)
        if kind == PERSON and seen is not None:
            total = max(n, seen.sources.get(key, 0))
            if key == "email":
                n = max(n, seen.wrote)
            if total and key == "email":
                parts.append(f"{total} {word}{'s' if total != 1 else ''}"
                             + (f" (wrote {n})" if n else ""))
                continue
            n = total
        if n:
            parts.append(f"{n} {word}{'s' if n != 1 else ''}")
    if kind == PERSON and seen is not None and seen.partners:
        parts.append("most with " + ", ".join(f"{link(p, _clean(t))} ({k})"
                                              for p, t, k in seen.partners))
    if kind == PERSON:
        role = data.get("role") if isinstance(data.get("role"), str) else None
        org = data.get("organization") if isinstance(data.get("organization"), str) else None
        org_name = None
        if org:
            m = _LINK_VALUE.search(org)
            org_name = (m.group(2) or m.group(1)).strip() if m else org
        # No role or organization known: the counts say it ("Ann Lee — 2 email threads").
        head = f"{role} at {org_name}" if role and org_name else role or org_name or ""
    elif kind == ORGANIZATION:
        domains = _list(data.get("domains"))
        head = "organization" + (f" ({', '.join(domains)})" if domains else "")
    elif kind == "meeting":
        people = len(_list(data.get("attendees")))
        day = data.get("date")
        head = f"meeting{f' on {day}' if day else ''}" + (
            f" with {people} known attendee{'s' if people != 1 else ''}" if people else "")
        parts = []
        last = None
    else:
        head = kind
    tail = ", ".join(parts)
    if last:
        tail = f"{tail}, last seen {last}" if tail else f"last seen {last}"
    if not head:
        return f"{_clean(title)} — {tail or 'person'}."
    return f"{_clean(title)} — {head}" + (f"; {tail}." if tail else ".")


def own_summary_replaced(text: str, summary: str, rec: dict[str, Any]) -> str | None:
    """``text`` with ``summary`` under its H1 while the summary there is empty or still the one
    the build wrote (``rec``: the page's build state); None when a person wrote it, it already
    says ``summary``, or the page has no H1."""
    current = current_summary(text)
    if current is None or current.strip() == summary.strip():
        return None
    if current.strip() and current.strip() != (rec.get("summary") or "").strip():
        return None  # a person wrote this summary
    try:
        return set_summary(text, summary)
    except ValueError:
        return None


def write_person_summaries(ws: Workspace, state: BuildState, rows: list[dict[str, Any]],
                           paths: list[str], index: EntityIndex) -> int:
    """Rewrite the build-owned summary of each person page in ``paths`` with what the whole
    mention log says (threads in all, who they appear with); a summary a person wrote stays.
    Returns the number of pages changed."""
    titles = {e.page: e.name for e in index.entities if e.type == PERSON}
    stats = correspondence(rows, titles)
    changed = 0
    for path in paths:
        text = ws.read(path)
        if text is None or path not in titles:
            continue
        fm = fmod.read(text)
        rec = state.pages.get(path)
        if fm.error or rec is None:
            continue
        summary = summary_for(PERSON, titles[path], text, fm.data, stats.get(path),
                              folded=_folded(rec))
        new = None if summary is None else own_summary_replaced(text, summary, rec)
        if new is None:
            continue
        ws.write(path, new)
        rec["summary"] = summary
        changed += 1
    return changed
