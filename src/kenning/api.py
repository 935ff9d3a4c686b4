"""The Python API: one ``Vault`` object over the vault format, the index, recall and the graph.

The CLI, and later the MCP server and the web view, are thin layers over this class.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from kenning import vocabulary
from kenning.errors import AmbiguousPage, IndexMissing, KenningError, PageNotFound
from kenning.index.indexer import (
    Indexer,
    IndexReport,
    Progress,
    append_manual_links,
    manual_key,
    norm_name,
)
from kenning.index.store import Store, database_url, open_store
from kenning.index.store.base import IndexDamaged
from kenning.index.vectors import EmbedProgress
from kenning.vault.layout import STATE_DIR, Config, find_root, init_vault, load_config

W = TypeVar("W", bound=Callable[..., Any])
WRITE_EMBED_SECONDS = 1.0  # a write embeds its new chunks for about this long, then leaves them
WRITE_EMBED_TIMEOUT = 3.0  # seconds a write waits for an embedding server
WRITE_EMBED_PAUSE = 60.0  # after an embedder fails, writes leave it alone this long
READ_OWN_WRITES_SECONDS = 10.0  # a read replica without a position: primary this long after


def _after_write(method: W) -> W:
    """A write whose files landed never reports failure: when a follow-up (re-indexing, the
    journal, a registry) fails afterwards, the caller gets what was written and a warning, so a
    retrying agent does not write it twice."""
    @functools.wraps(method)
    def wrapper(self: Vault, *args: Any, **kwargs: Any) -> Any:
        from kenning.vault.writes import note_write, track_landed

        with track_landed() as landed:
            landed.memory_write = True
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                if not landed:
                    raise
                result = written_with_warning(landed.paths, exc)
                landed.warning, landed.result = result["note"], result
                return result
            finally:
                if landed:  # files and index written: this process now reads its own writes
                    note_write(self.root, self._store)
    return wrapper  # type: ignore[return-value]


def written_with_warning(landed: Sequence[str], exc: BaseException) -> dict[str, Any]:
    """The result of a write that landed and then failed in a follow-up step."""
    from kenning.vault.fsio import readable_name

    why = exc.message if isinstance(exc, KenningError) else f"{type(exc).__name__}: {exc}"
    # The pages, in a stable order; Kenning's own state files (.kenning/…) are not news.
    pages = sorted(readable_name(p) for p in landed if not p.startswith("."))
    shown = ", ".join(pages or sorted(readable_name(p) for p in landed))
    return {"written": pages, "indexed": False,
            "note": f"written ({shown}), but a step after the write failed: "
                    f"{readable_name(why)}; run `kenning index` (do not repeat the write)"}


class BadQuery(KenningError, ValueError):
    """An option of a query that cannot be read (not a date, not a kind): one line naming it."""


@dataclass(frozen=True)
class PageRef:
    """A page found by title, alias or path."""

    id: int
    path: str
    title: str
    type: str | None


class Vault:
    """A Kenning vault on disk and its index."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self._store: Store | None = None
        self._replica: Store | None = None  # database.read_url, opened on first search
        self._config: Config | None = None
        self._indexed = False
        self._embedder: Any = False
        self._reranker: Any = False
        self._pool: Any = None
        self._quick_embedder: Any = None
        self._embed_down: tuple[float, str] = (0.0, "")  # (until when, why): writes skip it

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None) -> Vault:
        """Open the vault containing ``path`` (default: the current folder); a batch of page
        writes a killed writer left half-done is finished first (see ``vault/writes.py``)."""
        vault = cls(find_root(Path(path or ".")))
        from kenning.vault.writes import finish_interrupted

        finish_interrupted(vault.root)
        return vault

    @classmethod
    def init(cls, path: str | Path) -> tuple[Vault, bool]:
        """Create a vault at ``path`` or adopt an existing one; returns (vault, adopted)."""
        root, adopted = init_vault(Path(path))
        return cls(root), adopted

    @property
    def config(self) -> Config:
        """The vault's configuration."""
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    @property
    def store(self) -> Store:
        """The index database behind the storage seam (opened and migrated on first use)."""
        if self._store is None:
            self._store = open_store(self.root, database_url(self.root, self.config.database))
        return self._store

    @property
    def read_store(self) -> Store:
        """The store searches read: ``database.read_url`` (a replica) when set, else
        :attr:`store`. After this process wrote, reads stay on the primary until the replica
        has replayed that write (read-your-own-writes; SQLite, which has no replication
        position: for ``READ_OWN_WRITES_SECONDS``)."""
        url = self.config.read_url
        if not url:
            return self.store
        from kenning.vault.writes import last_write

        if self._replica is None:
            self._replica = open_store(self.root, url)
        wrote = last_write(self.root)
        if wrote is not None:
            at, position = wrote
            caught_up = (time.monotonic() - at > READ_OWN_WRITES_SECONDS if position is None
                         else self._replica.replayed(position))
            if not caught_up:
                return self.store
        return self._replica

    @property
    def reader(self) -> Store:
        """The index for searches (a replica when one is set); raises IndexMissing when the
        vault was never indexed."""
        return self._indexed_store(self.read_store)

    def _indexed_store(self, store: Store) -> Store:
        """``store``, once it is known to hold an index; else IndexMissing."""
        from kenning.index.queries.recall import is_indexed

        if not self._indexed:
            if not is_indexed(store):
                raise IndexMissing(f"{self.root} has no index yet; run `kenning index` first")
            self._indexed = True
        return store

    def close(self) -> None:
        """Close the index database (and the query-embedding thread)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._replica is not None:
            self._replica.close()
            self._replica = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing --------------------------------------------------------------------------

    def index(self, progress: Progress | None = None, *, wait: float = 0.0, embed: bool = True,
              embed_progress: EmbedProgress | None = None) -> IndexReport:
        """Bring the index up to date with the files, then fill missing vectors (incremental)."""
        from kenning.vault.writes import check_format

        check_format(self.root)
        store = self.store
        with store.writer_lock(wait=wait):
            with contextlib.suppress(OSError):
                store.discard_fresh()  # what a killed rebuild left
            report = Indexer(self.root, store, self.config).run(progress)
            if embed:
                self._embed(report, embed_progress)
            return report

    def rebuild(self, progress: Progress | None = None, *, wait: float = 0.0, embed: bool = True,
                embed_progress: EmbedProgress | None = None) -> IndexReport:
        """Build the index again from the vault (vectors of unchanged text are kept).

        The new index is built beside the old one (``Store.fresh``: SQLite's
        ``.kenning/index.db.rebuild``) and replaces it in one transaction only when complete
        (``Store.replace_with``), so a rebuild that fails (or is killed) leaves the old index
        searchable, and open readers never see half of either. An index that cannot be read at
        all is removed first: there is nothing in it to keep.
        """
        from kenning.vault.writes import check_format

        check_format(self.root)
        try:
            store = self.store
        except IndexDamaged as exc:
            exc.clear()
            store = self.store
        with store.writer_lock(wait=wait):
            fresh: Store | None = None
            try:
                fresh = store.fresh()
                fresh.copy_vectors_from(store, self._storage())
                fresh.copy_team_state_from(store)  # the audit trail: not derivable from the vault
                report = Indexer(self.root, fresh, self.config).run(progress)
                if embed:
                    self._embed(report, embed_progress, fresh)
                store.replace_with(fresh)
            except BaseException as exc:
                if fresh is not None:
                    with contextlib.suppress(Exception):
                        fresh.close()
                with contextlib.suppress(Exception):
                    store.discard_fresh()
                if isinstance(exc, Exception) and not isinstance(exc, KenningError):
                    raise KenningError(f"rebuild failed, the old index is unchanged and still "
                                       f"searchable: {type(exc).__name__}: {exc}") from exc
                raise
            return report

    def _storage(self) -> str:
        """How vectors are stored (``embeddings.storage``); float32 when the config is bad."""
        try:
            return str(self.embedding_config.storage)
        except KenningError:
            return "float32"

    def _embed(self, report: IndexReport, progress: EmbedProgress | None,
               store: Store | None = None) -> None:
        from kenning.index.embedders import EmbedderUnavailable
        from kenning.index.vectors import embed_pending

        try:
            embedder = self.embedder()
            if embedder is not None:
                report.embedding = embed_pending(store or self.store, embedder,
                                                 progress=progress,
                                                 batch_size=self.embedding_config.batch_size,
                                                 storage=self.embedding_config.storage)
        except EmbedderUnavailable as exc:
            # A server that is down mid-run: what was embedded is kept, the rest waits.
            report.embed_error = f"{exc.message}; fix: {exc.fix}"

    def embed_written(self, paths: Sequence[str]) -> str | None:
        """Embed the new chunks of pages a write just indexed (for about a second at most), so
        recall finds them by meaning at once; a note when some stay found by their words only.

        Never raises: the write landed. An embedder that fails is left alone for a minute, so a
        server that is down costs each write nothing (docs/decisions.md).
        """
        from kenning.index.vectors import embed_pages

        pages = [p for p in paths if not p.startswith(".")]
        if not pages or self.store.get_meta("embed_model") is None:
            return None  # nothing written, or a vault searched by its words alone
        try:
            if not self.embedding_config.on_write:
                return None
        except KenningError as exc:  # a bad config: the write landed all the same
            return f"written and indexed, not embedded: {exc.message}"
        until, why = self._embed_down
        try:
            if time.monotonic() < until:
                raise KenningError(why)
            embedder = self._write_embedder()
            if embedder is None:
                return None
            config = self.embedding_config
            _, left = embed_pages(self.store, embedder, pages, seconds=WRITE_EMBED_SECONDS,
                                  batch_size=config.batch_size, storage=config.storage)
        except Exception as exc:
            why = exc.message if isinstance(exc, KenningError) else f"{type(exc).__name__}: {exc}"
            if time.monotonic() >= until:
                self._embed_down = (time.monotonic() + WRITE_EMBED_PAUSE, why)
            return (f"written and indexed, not embedded ({why}): found by its words until "
                    "`kenning index` embeds it")
        if left:
            return (f"{left} new passage{'s' if left > 1 else ''} found by words only until "
                    "`kenning index` embeds them")
        return None

    def _write_embedder(self) -> Any:
        """The configured embedder, with a short timeout when it is a server: a write waits
        seconds at most for its vectors, not the minute an index run may."""
        embedder = self.embedder()
        if embedder is None or getattr(embedder, "timeout", 0.0) <= WRITE_EMBED_TIMEOUT:
            return embedder
        if self._quick_embedder is None:
            import copy

            self._quick_embedder = copy.copy(embedder)
            self._quick_embedder.timeout = WRITE_EMBED_TIMEOUT
        return self._quick_embedder

    # -- finding pages ---------------------------------------------------------------------

    # -- mounts ----------------------------------------------------------------------------

    def mounts(self) -> tuple[Any, ...]:
        """The folders mounted into this vault's index (:class:`kenning.vault.mounts.Mount`)."""
        from kenning.vault.mounts import load_mounts

        return load_mounts(self.root)

    def mount_add(self, name: str, folder: Path | str, *, kind: str = "notes",
                  federated: bool = True, progress: Progress | None = None
                  ) -> tuple[Any, IndexReport]:
        """Mount ``folder`` under ``name`` (read, never written) and index it."""
        from kenning.vault.mounts import add_mount

        mount = add_mount(self.root, name, Path(folder), kind, federated)
        return mount, self.index(progress)

    def mount_remove(self, name: str) -> tuple[Any, IndexReport]:
        """Unmount ``name``: its pages, chunks, links and code graph leave the index now."""
        from kenning.vault.mounts import remove_mount

        mount = remove_mount(self.root, name)
        return mount, self.index()

    def mount_list(self) -> list[dict[str, Any]]:
        """Every mount with its kind, whether it joins default searches, and what it holds."""
        from kenning.index.queries.pages import mount_counts

        try:
            counts = mount_counts(self.reader)
        except IndexMissing:
            counts = {}
        return [{**m.as_dict(), "available": m.path.is_dir(),
                 "pages": counts.get(m.name, 0)} for m in self.mounts()]

    def code(self, action: str, symbol: str, *, depth: int = 1,
             mounts: Sequence[str] | None = None) -> dict[str, Any]:
        """The code graph about ``symbol``: ``def`` (where it is defined), ``refs`` (what
        refers to it, notes included), ``callers`` or ``callees`` (to ``depth``)."""
        from kenning.graph import code

        scope, db = self.scope(mounts), self.reader
        if action == "def":
            return code.definitions(db, symbol, scope)
        if action == "refs":
            return code.references(db, symbol, scope)
        if action == "callers":
            return code.callers(db, symbol, depth, scope)
        if action == "callees":
            return code.callees(db, symbol, depth, scope)
        raise ValueError(f"code action must be def, refs, callers or callees, not {action!r}")

    def scope(self, mounts: Sequence[str] | None = None) -> tuple[str, ...] | None:
        """The mounts a query reads: the named ones (``vault`` is this vault's own pages), else
        the vault and every federated mount; None when that is every page. Unknown names raise."""
        from kenning.vault.mounts import VAULT_MOUNT, MountError, mount_keys, unknown_mount

        known = self.mounts()
        if mounts:
            names = {m.name for m in known}
            for name in mounts:
                if name != VAULT_MOUNT and name not in names:
                    raise MountError(unknown_mount(self.root, name))
            return tuple(sorted(mount_keys(mounts)))
        if all(m.federated for m in known):
            return None
        return ("", *sorted(m.name for m in known if m.federated))

    def _in_scope(self, mounts: Sequence[str] | None) -> Callable[[str], bool]:
        """Whether a page path lies in the mounts a query reads (:meth:`scope`)."""
        from kenning.vault.mounts import split_mount

        scope = self.scope(mounts)
        if scope is None:
            return lambda path: True
        allowed = set(scope)
        return lambda path: split_mount(path or "")[0] in allowed

    def find(self, ref: str, *, mounts: Sequence[str] | None = None) -> PageRef:
        """The page a title, alias, file name or vault path names; raises if none or several.

        ``team:Ada`` names a page of mount ``team``; a plain name prefers the vault's own page,
        then the federated mounts' (``mounts`` narrows where it looks)."""
        from kenning.index.queries.recall import mount_sql, pages_named
        from kenning.vault.mounts import split_mount

        norm = norm_name(ref.strip().removeprefix("[[").removesuffix("]]").split("|")[0]
                         .split("#")[0])
        scope = self.scope(mounts)
        mount, rest = split_mount(norm)
        rows: list[Any] = []
        if mount and any(m.name == mount for m in self.mounts()):
            if scope is not None and mount not in scope and not mounts:
                scope = (*scope, mount)  # named in the reference: a mount searched when named
            if scope is None or mount in scope:
                # A mount's path names are NAME:REL; its titles and stems are plain.
                rows = (pages_named(self.reader, norm, *mount_sql((mount,)))
                        or pages_named(self.reader, rest, *mount_sql((mount,))))
        else:
            rows = pages_named(self.reader, norm, *mount_sql(scope))
        if not rows:
            raise PageNotFound(f"no page named {ref!r} (tried path, file name, title, alias)")
        best = rows[0][0]
        pages = {r[1]: r for r in rows if r[0] == best}
        own = {pid: r for pid, r in pages.items() if not split_mount(r[2])[0]}
        if own and len(own) < len(pages):
            pages = own  # the vault's own page wins over a mounted one of the same name
        if len(pages) > 1:
            paths = sorted(r[2] for r in pages.values())
            raise AmbiguousPage(f"{ref!r} names {len(paths)} pages: {', '.join(paths)};"
                                " give the path instead", paths)
        _, pid, path, title, ptype = next(iter(pages.values()))
        return PageRef(pid, path, title, ptype)

    def resolve_entity(self, question: str, *, tags: Sequence[str] = (),
                       mounts: Sequence[str] | None = None) -> PageRef:
        """The page a question names: exact names first, then a unique word or close match.

        With ``tags``, only pages that carry every one of them (or a tag nested in it) count.
        """
        import difflib
        import re

        from kenning.index.queries.recall import entity_names, mount_sql, pages_named, tag_sql
        from kenning.recall.entity import entity_name

        name = entity_name(question)
        wanted = _tag_filters(tags)
        if not wanted:
            try:
                return self.find(name, mounts=mounts)
            except PageNotFound:
                pass
        norm = norm_name(name)
        where, params = tag_sql(wanted)
        in_mounts, mount_args = mount_sql(self.scope(mounts))
        # A question names an entity, not a source file: code pages answer by exact name only.
        where, params = where + in_mounts + " AND COALESCE(p.type, '') != 'code'", [
            *params, *mount_args]
        exact = pages_named(self.reader, norm, where, params) if wanted else []
        if exact:
            best = {r[1]: r for r in exact if r[0] == exact[0][0]}
            if len(best) == 1:
                _, pid, path, title, ptype = next(iter(best.values()))
                return PageRef(pid, path, title, ptype)
            paths = sorted(r[2] for r in best.values())
            raise AmbiguousPage(f"{name!r} names {len(paths)} pages with these tags: "
                                f"{', '.join(paths)}; give the path instead", paths)
        rows = entity_names(self.reader, where, params)
        word = re.compile(rf"(?<!\w){re.escape(norm)}(?!\w)")
        pages = {r[1]: r for r in rows if word.search(r[0])}
        if not pages:
            close = set(difflib.get_close_matches(norm, [r[0] for r in rows], n=3, cutoff=0.8))
            pages = {r[1]: r for r in rows if r[0] in close}
        if len(pages) == 1:
            _, pid, path, title, ptype = next(iter(pages.values()))
            return PageRef(pid, path, title, ptype)
        if pages:
            paths = sorted(r[2] for r in pages.values())
            raise AmbiguousPage(f"{name!r} could be {len(paths)} pages: {', '.join(paths)}",
                                paths)
        tagged = f" tagged {', '.join('#' + t for t in wanted)}" if wanted else ""
        raise PageNotFound(f"no page{tagged} named {name!r} (tried titles, aliases, file names "
                           "and close spellings)")

    def recall(self, question: str, *, budget: int = 1500, overview: bool = False,
               tags: Sequence[str] = (), record: bool = True,
               mounts: Sequence[str] | None = None) -> Any:
        """Entity recall: summary, active facts, open items, latest timeline, strongest
        neighbours, cited.

        ``tags`` narrow which page the question names (every tag must be on it). A question
        about items ("what did I promise Sarah?", "what is Priya waiting on?") names its entity
        without the item words, and the entity's items lead the answer. ``record`` notes the
        recall in the activity that ranks results (a remote caller's must not).
        """
        from kenning.recall import items as item_answers
        from kenning.recall.entity import recall

        about_items, rest, kind = item_answers.intent(question)
        page = None
        if about_items and not tags:
            # A page whose very name holds an item word ("Decision log") is that page.
            from kenning.recall.entity import entity_name

            with contextlib.suppress(PageNotFound, AmbiguousPage):
                page = self.find(entity_name(question), mounts=mounts)
                about_items = False
        for name in item_answers.name_candidates(rest) if about_items and page is None else ():
            with contextlib.suppress(PageNotFound, AmbiguousPage):
                page = self.resolve_entity(name, tags=tags, mounts=mounts)
                break
        if page is None:
            try:
                page = self.resolve_entity(question, tags=tags, mounts=mounts)
            except PageNotFound as exc:
                if about_items and not rest:  # "what am I waiting on?": no one named
                    raise PageNotFound(
                        f"{question!r} names no page to recall; for the owner's own items run "
                        "`kenning items --who me` (or --to me, --overdue)") from exc
                raise
            about_items = False
        found = [] if overview else self._subject_items(
            page, kind if about_items else None, mine_first=about_items and
            item_answers.mine_first(question),
            everything=about_items and not item_answers.open_only(question))
        answer = recall(self.reader, page.id, budget=budget, overview=overview,
                        items=[item_answers.compact(i) for i in found],
                        items_first=about_items)
        if record:
            self.opened(page.path)
        return answer

    def _subject_items(self, page: PageRef, kind: str | None, *, mine_first: bool,
                       everything: bool) -> list[dict[str, Any]]:
        """The items that concern ``page``: its who or to is the page, they are about it, or
        they are written on it. Open ones (decisions too when ``kind`` asks for them); with
        ``everything`` (the question asked about items) the done ones after them; the owner's
        to the page first when ``mine_first``."""
        from kenning.index.queries.items import ItemFilter, item_copies
        from kenning.recall.items import merge, order

        store = self.reader
        today = _today()
        kinds = (kind,) if kind == "decision" else ()
        seen: dict[str, dict[str, Any]] = {}
        for f in (ItemFilter(kinds=kinds, who_pages=(page.id,)),
                  ItemFilter(kinds=kinds, to_pages=(page.id,)),
                  ItemFilter(kinds=kinds, about_pages=(page.id,)),
                  ItemFilter(kinds=kinds, page_id=page.id)):
            for item in merge(*item_copies(store, f), today):
                seen.setdefault(item["line"], item)
        wanted = [i for i in seen.values()
                  if i["status"] == "open" or (i["status"] == "decided" and kind == "decision")
                  or (everything and i["status"] == "done")]
        ranked = order(wanted)
        ranked.sort(key=lambda i: (
            not (mine_first and i["who"] == "me" and page.path in i["to"]),
            kind is not None and i["kind"] != kind, i["status"] == "done"))
        return ranked[: 12 if everything else 6]

    # -- items -----------------------------------------------------------------------------

    def items(self, *, kind: str | Sequence[str] | None = None, who: str | None = None,
              to: str | None = None, status: str | None = None,
              due_before: str | None = None, overdue: bool = False, since: str | None = None,
              page: str | None = None, limit: int | None = None, today: str | None = None,
              mounts: Sequence[str] | None = None, brief: bool = False
              ) -> list[dict[str, Any]]:
        """Commitments, asks and decisions written on pages (docs/vault-format.md §6b), one
        per item however many pages carry it (done when any copy is), overdue first, then due
        soonest, then newest.

        ``who``/``to`` are ``me`` or a page (name, alias or path); ``due_before``/``since``
        are dates; ``overdue`` means open with a due date before ``today`` (default: today,
        or ``KENNING_TODAY``). ``brief`` gives each item's key, kind, status, overdue, due,
        date, page, pages and line only (enough to count them by status; the web view's
        list), :meth:`item_details` the rest for those shown. With a ``limit`` only the items
        returned are read in full.
        """
        from kenning.index.queries.items import ItemFilter, item_copies, item_heads
        from kenning.recall import items as answers

        kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
        bad = [k for k in kinds if k not in answers.KINDS]
        if bad:
            raise BadQuery(f"--kind: {bad[0]!r} is not one of {', '.join(answers.KINDS)}")
        if status is not None and status not in answers.STATUSES:
            raise BadQuery(f"--status: {status!r} is not one of "
                           f"{', '.join(answers.STATUSES)}")
        due_before = _iso_day(due_before, "--due-before")
        since = _iso_day(since, "--since")
        today = _iso_day(today, "--today") or _today()
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise BadQuery(f"--limit: {limit!r} must be a whole number, at least 1")
        store = self._indexed_store(self.reader)
        who_pages, who_me = self._party_ref(who, "--who")
        to_pages, to_me = self._party_ref(to, "--to")
        page_id = self._page_ref(page, "--page").id if page else None
        if overdue:  # only items due before today can be overdue: let the index narrow
            due_before = min(due_before or today, today)
        f = ItemFilter(kinds=kinds, who_pages=who_pages, who_me=who_me, to_pages=to_pages,
                       to_me=to_me, since=since, due_before=due_before, page_id=page_id)
        scoped = self.scope(mounts) is not None
        keep = self._in_scope(mounts)

        def picked(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
            if overdue:
                found = [i for i in found if i["overdue"]]
            if status is not None:
                found = [i for i in found if answers.status_matches(i, status)]
            if scoped:
                found = [i for i in found if any(keep(p) for p in i.get("pages") or [""])]
            return answers.order(found)

        if brief or limit:
            # Picked and ordered from the few columns that decide it; read in full only the
            # ones returned (at 10,000 notes, 200 of 10,000 for the web view).
            found = picked(answers.heads(item_heads(store, f), today))[:limit]
            return found if brief else self.item_details(found, today=today)
        return picked(answers.merge(*item_copies(store, f), today))

    def item_details(self, items: Sequence[dict[str, Any]], *, today: str | None = None
                     ) -> list[dict[str, Any]]:
        """The full answers (as :meth:`items` gives them) of brief items (``items(...,
        brief=True)``), in their order; ``today`` as given to :meth:`items`."""
        from kenning.index.queries.items import copies_of
        from kenning.recall import items as answers

        today = _iso_day(today, "--today") or _today()
        store = self._indexed_store(self.reader)
        full = {i["line"]: i for i in answers.merge(
            *copies_of(store, [b["key"] for b in items]), today)}
        return [full[b["line"]] for b in items]

    def _page_ref(self, ref: str, option: str) -> PageRef:
        """The page ``ref`` names, or a one-line error naming ``option`` and close names."""
        try:
            return self.find(ref)
        except AmbiguousPage as exc:
            raise KenningError(f"{option}: {exc}") from None
        except PageNotFound:
            import difflib
            import re

            from kenning.index.queries.recall import entity_names

            rows = entity_names(self.reader)
            norm = norm_name(ref)
            word = re.compile(rf"(?<!\w){re.escape(norm)}(?!\w)")
            close = set(difflib.get_close_matches(norm, [r[0] for r in rows], n=5, cutoff=0.6))
            paths = sorted({r[2] for r in rows if r[0] in close or word.search(r[0])})[:5]
            hint = f"; close: {', '.join(paths)}" if paths else ""
            raise PageNotFound(f"{option}: no page named {ref!r} (tried path, file name, "
                               f"title, alias){hint}") from None

    def _party_ref(self, ref: str | None, option: str) -> tuple[tuple[int, ...], bool]:
        if ref is None:
            return (), False
        if norm_name(ref) == "me":
            return (), True
        return (self._page_ref(ref, option).id,), False

    def show(self, ref: str, *, record: bool = True,
             mounts: Sequence[str] | None = None) -> dict[str, Any]:
        """Everything the index knows about one page: fields, facts, timeline, links.

        Opening a page is deliberate use: ``record`` notes it in the recall activity.
        """
        from kenning.graph import queries
        from kenning.index.queries import pages
        from kenning.recall.items import compact as compact_item
        from kenning.recall.search import cite

        page = self.find(ref, mounts=mounts)
        if record:
            self.opened(page.path)
        store = self.store
        row = pages.page_detail(store, page.id)
        assert row is not None
        facts = [
            {"line": r[0], "relation": r[1], "target": r[2], "text": r[3], "valid_from": r[4],
             "valid_to": r[5], "status": r[6], "successor": r[7], "epistemic": r[8],
             "confidence": r[9], "source": r[10], "citation": cite(page.path, r[0], r[0])}
            for r in pages.page_facts(store, page.id)]
        timeline = [
            {"line": r[0], "date": r[1], "text": r[2], "source": r[3],
             "citation": cite(page.path, r[0], r[0])}
            for r in pages.page_timeline(store, page.id)]
        aliases = pages.page_aliases(store, page.id)
        tags = pages.page_tags(store, page.id)
        edges = queries.neighbors(store, page.id, direction="both")
        return {
            "path": row[0], "title": row[1], "type": row[2], "domain": row[3],
            "status": row[4], "summary": row[5],
            "summary_citation": cite(page.path, row[9], row[10]) if row[9] else None,
            "date": row[6], "aliases": aliases, "tags": tags,
            "frontmatter": json.loads(row[7]), "lines": row[8], "facts": facts,
            "timeline": timeline,
            "items": [compact_item(i) for i in self.items(page=page.path)],
            "links_out": [e.to_dict() for e in edges if e.direction == "out"],
            "links_in": [e.to_dict() for e in edges if e.direction == "in"],
        }

    def why(self, ref: str) -> dict[str, Any]:
        """Which sources built a page and why each alias and email joined it (the build's
        mention log; empty for a page no build wrote)."""
        from kenning.builder.explain import explain

        return explain(self.root, self.find(ref).path)

    def timeline(self, *, since: str | None = None, until: str | None = None,
                 entity: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """What happened and what changed between ``since`` and ``until`` (dates; either open),
        across the vault or on one entity's page, newest first, each line cited.

        Rows are ``event`` (a timeline line), ``began`` (a fact whose ``from::`` falls in the
        range) and ``ended`` (a fact whose ``to::`` does: superseded, expired or invalidated).
        """
        from kenning.index.queries import pages
        from kenning.recall.search import cite

        since = _iso_day(since, "--since")
        until = _iso_day(until, "--until")
        if since and until and since > until:
            raise BadQuery(f"--since {since} is after --until {until}")
        if not isinstance(limit, int) or limit < 1:
            raise BadQuery(f"--limit: {limit!r} must be a whole number, at least 1")
        store = self._indexed_store(self.reader)
        page_id = self._page_ref(entity, "--entity").id if entity else None
        out: list[dict[str, Any]] = []
        for path, title, kind, line, day, text, source in pages.timeline_rows(
                store, since=since, until=until, page_id=page_id, limit=limit):
            out.append({"kind": "event", "date": day, "path": path, "title": title,
                        "type": kind, "text": text, "source": source,
                        "citation": cite(path, line, line)})
        for (path, title, kind, line, rel, target, text, valid_from, valid_to, status,
             successor, source) in pages.fact_change_rows(
                store, since=since, until=until, page_id=page_id, limit=limit):
            fact = {"path": path, "title": title, "type": kind, "relation": rel,
                    "target": target, "text": text, "status": status, "successor": successor,
                    "source": source, "citation": cite(path, line, line)}
            if valid_to and (not since or valid_to[:10] >= since) and (
                    not until or valid_to[:10] <= until):
                out.append({"kind": "ended", "date": valid_to, **fact})
            if valid_from and (not since or valid_from[:10] >= since) and (
                    not until or valid_from[:10] <= until):
                out.append({"kind": "began", "date": valid_from, **fact})
        out.sort(key=lambda r: (r["date"][:10], r["kind"] != "event"), reverse=True)
        return out[:limit]

    def decisions(self, *, status: str | None = None, domain: str | None = None,
                  limit: int = 500) -> list[dict[str, Any]]:
        """Decision pages, newest decided first: what was decided, because, what was rejected (and
        why), and which decision replaced or was replaced by it, each cited; then the
        decisions recorded as items on meeting and topic pages (§6b)."""
        from kenning.index.queries import pages
        from kenning.recall.search import cite

        store = self._indexed_store(self.reader)
        rows = pages.pages_of_type(store, "decision", limit)
        found: list[dict[str, Any]] = []
        titles: dict[str, str] = {}
        for _id, path, title, page_status, page_domain, day, raw, summary, title_line in rows:
            fm = json.loads(raw or "{}")
            if status and (page_status or "active") != status:
                continue
            if domain and page_domain != vocabulary.domain(domain):
                continue
            rejected = fm.get("rejected") or []
            found.append({
                "path": path, "title": title, "status": page_status or "active",
                "domain": page_domain, "decided": str(fm.get("decided") or day or "") or None,
                "because": fm.get("because"), "summary": summary,
                "rejected": [_rejected(r) for r in
                             (rejected if isinstance(rejected, list) else [rejected])],
                "supersedes": _link_target(fm.get("supersedes")),
                "superseded_by": None, "citation": cite(path, title_line or 1, title_line or 1)})
            titles[title.casefold()] = path
        found.sort(key=lambda d: (d["decided"] or "", d["path"]), reverse=True)
        by_path = {d["path"]: d for d in found}
        for d in found:  # the replacing page, resolved, and the back-pointer on the old one
            target = d["supersedes"]
            if target:
                with contextlib.suppress(KenningError):
                    d["supersedes"] = self.find(target).path
                old = by_path.get(d["supersedes"])
                if old is not None:
                    old["superseded_by"] = d["path"]
        items = self.items(kind="decision", limit=limit) if not (status or domain) else []
        return found + [{"path": i["pages"][0] if i.get("pages") else None, "item": True, **i}
                        for i in items]

    def tags(self) -> dict[str, int]:
        """Every tag in the vault and how many pages carry it, most used first."""
        from kenning.index.queries import pages

        return dict(pages.tag_counts(self._indexed_store(self.store)))

    def read(self, ref: str, *, record: bool = True) -> str:
        """The Markdown text of a page; ``record`` notes the visit in the recall activity."""
        from kenning.vault.mounts import readable_file

        page = self.find(ref)
        text = readable_file(self.root, page.path).read_text(encoding="utf-8", errors="replace")
        if record:
            self.opened(page.path)
        return text

    def opened(self, path: str) -> None:
        """Note a deliberate use of a page (opened, recalled, cited): it feeds recency."""
        from kenning.recall import activity

        activity.record(self.root, [path])

    # -- recall ----------------------------------------------------------------------------

    def embedder(self) -> Any:
        """The configured embedder (None when switched off); raises EmbedderUnavailable."""
        if self._embedder is False:
            from kenning.index.embedders import load_embedder

            self._embedder = load_embedder(self.embedding_config)
        return self._embedder

    @property
    def embedding_config(self) -> Any:
        """The ``embeddings`` section of the config (env KENNING_EMBEDDINGS overrides provider)."""
        from dataclasses import replace

        from kenning.index.embedders import EmbeddingConfig

        config = EmbeddingConfig.from_raw((self.config.raw or {}).get("embeddings"))
        override = os.environ.get("KENNING_EMBEDDINGS")
        return replace(config, provider=override) if override else config

    def search(self, query: str, *, mode: str = "hybrid", types: Sequence[str] = (),
               domains: Sequence[str] = (), folders: Sequence[str] = (),
               since: str | None = None, until: str | None = None, entity: str | None = None,
               as_of: str | None = None, limit: int = 10, explain: bool = False,
               budget: int | None = None, group: str = "page",
               tags: Sequence[str] = (), mounts: Sequence[str] | None = None,
               near_symbol: str | None = None, walk_depth: int = 1) -> Any:
        """Search with filters: lexical, dense or hybrid (default); results cite their lines.

        ``tags``: only pages with every one of these tags (``a`` also matches ``a/b``). A search
        records no recall activity: asking again gives the same ranking (docs/decisions.md).
        """
        from kenning.recall import activity
        from kenning.recall.search import Filters, search

        filters = Filters(
            types=tuple(vocabulary.entity_type(t) for t in types),
            domains=tuple(vocabulary.domain(d) for d in domains),
            folders=tuple(folders), since=since, until=until,
            entity=self.find(entity, mounts=mounts).id if entity else None, as_of=as_of,
            tags=_tag_filters(tags), mounts=self.scope(mounts))
        db = self.reader
        near = None
        if near_symbol:
            from kenning.graph.code import near_chunks

            near = near_chunks(db, near_symbol, walk_depth, filters.mounts)
        dense, notes, coverage = self._dense_arm(query, mode)
        if dense is None and mode != "lexical" and notes:
            # The note says why there are no vectors; it is the only note for that cause.
            notes = [f"{notes[0]}; searched lexically", *notes[1:]]
            mode = "lexical"
        results = search(db, query, filters=filters, limit=limit, mode=mode, dense=dense,
                         signals=self.signals, activity=activity.last_recalled(self.root),
                         today=as_of or date.today().isoformat(), explain=explain,
                         budget=budget, group=group, reranker=self._reranker_or_note(notes),
                         near=near)
        results.notes = notes + results.notes
        results.coverage = coverage
        return results

    def reranker(self) -> Any:
        """The configured reranker (None when none is); raises RerankUnavailable."""
        if self._reranker is False:
            from kenning.recall.rerank import load_reranker

            self._reranker = load_reranker(self.rerank_config)
        return self._reranker

    @property
    def rerank_config(self) -> Any:
        """The ``rerank`` section of the config (env KENNING_RERANK overrides provider)."""
        from kenning.recall.rerank import RerankConfig

        raw = (self.config.raw or {}).get("rerank")
        override = os.environ.get("KENNING_RERANK")
        if override:
            raw = {**(raw if isinstance(raw, dict) else {}), "provider": override}
        return RerankConfig.from_raw(raw)

    def _reranker_or_note(self, notes: list[str]) -> Any:
        """The reranker, or None with a note saying why the configured one cannot run."""
        from kenning.recall.rerank import RerankUnavailable

        try:
            return self.reranker()
        except RerankUnavailable as exc:
            notes.append(f"{exc.message}: results are in fused order, not reranked "
                         f"(fix: {exc.fix})")
            return None

    def _dense_arm(self, query: str, mode: str) -> tuple[Any, list[str], Any]:
        """The query vector and matrix for dense/hybrid search, or notes on why there is none
        (see :func:`kenning.recall.dense.prepare`)."""
        from kenning.index import vectors
        from kenning.recall import dense

        if mode == "lexical" or not query.strip():
            return None, [], None

        def pool() -> Any:
            if self._pool is None:
                self._pool = dense.embedding_pool()
            return self._pool

        return dense.prepare(
            self.reader, self.embedder, query, mode, state_dir=self.root / STATE_DIR,
            context=self._search_number("context_weight", 1.0),
            ann_threshold=int(self._search_number("ann_threshold", vectors.ANN_THRESHOLD)),
            pool=pool)

    def _search_number(self, name: str, default: float) -> float:
        """A non-negative number from the ``search`` section of the config."""
        raw = (self.config.raw or {}).get("search") or {}
        value = raw.get(name, default) if isinstance(raw, dict) else default
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = -1.0
        if not number >= 0:  # also NaN
            raise KenningError(f"config field 'search.{name}' is {value!r}; "
                               "it must be a number ≥ 0", field=f"search.{name}")
        return number

    @property
    def signals(self) -> Any:
        """Ranking signals from the ``search`` section of the config."""
        from kenning.recall.search import Signals

        raw = (self.config.raw or {}).get("search") or {}
        if not isinstance(raw, dict):
            raw = {}
        fields = {k: raw[k] for k in ("rrf_k", "backlink_weight", "recency_weight",
                                      "half_life_days", "superseded_factor", "chunks_per_page",
                                      "passages_per_page", "date_weight", "type_weight",
                                      "speaker_factor", "page_weight",
                                      "lexical_context_weight")
                  if k in raw}
        # How far the page signals may move a page, in units of the query's evidence spread
        # (docs/cli.md "Search settings"); a bad value is a one-line error naming the field.
        defaults = Signals()
        fields["signal_reach"] = self._search_number("signal_reach", defaults.signal_reach)
        fields["spread_depth"] = max(2, int(self._search_number("spread_depth",
                                                                defaults.spread_depth)))
        weights = raw.get("arm_weights")
        if isinstance(weights, list) and len(weights) == 2:
            fields["arm_weights"] = (float(weights[0]), float(weights[1]))
        return Signals(folder_weights=self.config.folder_weights or {}, **fields)

    # -- graph -----------------------------------------------------------------------------

    def neighbors(self, ref: str, *, rels: Sequence[str] = (), direction: str = "both",
                  as_of: str | None = None, believed_on: str | None = None,
                  mounts: Sequence[str] | None = None) -> list[Any]:
        """Typed edges around a page (true on ``as_of``; believed on ``believed_on``)."""
        from kenning.graph import queries

        keep = self._in_scope(mounts)
        return [e for e in queries.neighbors(
            self.store, self.find(ref, mounts=mounts).id, rels=_rels(rels), direction=direction,
            as_of=as_of, believed_on=believed_on) if keep(e.other.path)]

    def traverse(self, ref: str, *, depth: int = 2, rels: Sequence[str] = (),
                 direction: str = "out", as_of: str | None = None,
                 believed_on: str | None = None, mounts: Sequence[str] | None = None) -> Any:
        """Pages within ``depth`` steps (clamped to 10)."""
        from kenning.graph import queries

        found = queries.traverse(self.store, self.find(ref, mounts=mounts).id, depth=depth,
                                 rels=_rels(rels), direction=direction, as_of=as_of,
                                 believed_on=believed_on)
        keep = self._in_scope(mounts)
        found.nodes = [n for n in found.nodes if keep(n.path)]
        ids = {found.start.id, *(n.id for n in found.nodes)}
        found.edges = [e for e in found.edges if e[0] in ids and e[2] in ids]
        return found

    def neighbourhood(self, ref: str, *, depth: int = 2, rels: Sequence[str] = (),
                      direction: str = "both", as_of: str | None = None,
                      believed_on: str | None = None, limit: int = 60) -> Any:
        """A graph picture's worth of pages around one: at most ``limit`` nearest pages, the
        typed edges among them with provenance, the pages left out, and the days the edges
        around them begin or end (:func:`kenning.graph.queries.neighbourhood`)."""
        from kenning.graph import queries

        return queries.neighbourhood(self.store, self.find(ref).id, depth=depth,
                                     rels=_rels(rels), direction=direction, as_of=as_of,
                                     believed_on=believed_on, limit=limit)

    def path(self, start: str, end: str, *, max_depth: int = 6, rels: Sequence[str] = (),
             direction: str = "both", as_of: str | None = None,
             believed_on: str | None = None, mounts: Sequence[str] | None = None) -> list[Any]:
        """A shortest path between two pages."""
        from kenning.graph import queries

        chain = queries.path(self.store, self.find(start, mounts=mounts).id,
                             self.find(end, mounts=mounts).id, max_depth=max_depth,
                             rels=_rels(rels), direction=direction, as_of=as_of,
                             believed_on=believed_on)
        keep = self._in_scope(mounts)
        return chain if all(keep(n.path) for n, _ in chain) else []

    def backlinks(self, ref: str, *, rels: Sequence[str] = (), as_of: str | None = None,
                  believed_on: str | None = None,
                  mounts: Sequence[str] | None = None) -> list[Any]:
        """Edges pointing at a page."""
        from kenning.graph import queries

        keep = self._in_scope(mounts)
        return [e for e in queries.backlinks(
            self.store, self.find(ref, mounts=mounts).id, rels=_rels(rels), as_of=as_of,
            believed_on=believed_on) if keep(e.other.path)]

    def orphans(self, *, types: Sequence[str] = (),
                mounts: Sequence[str] | None = None) -> list[Any]:
        """Pages with no links in or out."""
        from kenning.graph import queries

        keep = self._in_scope(mounts)
        return [n for n in queries.orphans(self._indexed_store(self.store),
                                           types=[vocabulary.entity_type(t) for t in types])
                if keep(n.path)]

    @_after_write
    def link(self, src: str, rel: str, dst: str, *, remove: bool = False,
             valid_from: str | None = None, valid_to: str | None = None) -> dict[str, Any]:
        """Add (or remove) a manual edge; kept in ``.kenning/manual-links.jsonl``.

        Manual edges are never removed by extraction; ``rebuild`` restores them from the file.
        """
        rel = vocabulary.relation(rel)
        a, b = self.find(src), self.find(dst)
        entry = {"op": "remove" if remove else "add", "src": a.path, "rel": rel, "dst": b.path,
                 "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if valid_from:
            entry["valid_from"] = valid_from
        if valid_to:
            entry["valid_to"] = valid_to
        store = self.store
        with store.writer_lock(wait=10.0):
            append_manual_links(self.root, [entry])
            indexer = Indexer(self.root, store, self.config)
            with store.transaction():
                indexer.sync_manual_links()
                indexer.resolve_links()
        return {"key": manual_key(a.path, rel, b.path), **entry}

    # -- memory writes (kenning.memory; signatures in its docstring) -------------------------

    @property
    def memory(self) -> Any:
        """What :mod:`kenning.memory` needs of this vault (a ``memory.common.Context``): the root,
        the store and config (opened on first use), and a write's re-index and embedding."""
        from kenning.memory.common import LOCK_WAIT, Context

        return Context(root=self.root, open_store=lambda: self.store,
                       load_config=lambda: self.config,
                       index=lambda: self.index(embed=False, wait=LOCK_WAIT),
                       embed_written=self.embed_written)

    @_after_write
    def record(self, entities: list[dict[str, Any]] | None = None,
               relations: list[dict[str, Any]] | None = None,
               observations: list[dict[str, Any]] | None = None, *,
               trusted: bool = True, key: str | None = None) -> dict[str, Any]:
        """Entities, relations and observations in one all-or-nothing call (validated first);
        ``key``, an idempotency key: a repeated call with it returns the first result."""
        from kenning.memory import write

        return write.record(self.memory, entities, relations, observations, trusted=trusted,
                            key=key)

    @_after_write
    def import_from(self, kind: str, path: str | Path, *, dry_run: bool = False
                    ) -> dict[str, Any]:
        """Import another tool's memory (``kind``: rawthink, basic-memory, gbrain, openclaw,
        mem0) from ``path``: every page, fact, link and decision written as one batch, each
        citing its original line; nothing written when the input has a problem, nothing
        added twice (:mod:`kenning.transfer.plan`). ``dry_run``: only the report.

        ``kind`` ``kenning`` restores a ``kenning export`` archive into this (new) vault
        instead (:meth:`restore`)."""
        from kenning.transfer import RESTORE_KIND
        from kenning.transfer.plan import run_import
        from kenning.vault.writes import check_format

        check_format(self.root)  # before the input is read: a newer vault is not written
        if kind == RESTORE_KIND:
            return self.restore(path, dry_run=dry_run)
        return run_import(self.memory, kind, path, dry_run=dry_run)

    def migrate(self, *, apply: bool = False) -> dict[str, Any]:
        """Bring the vault to this Kenning's format (:mod:`kenning.transfer.migrate`): without
        ``apply`` the plan (every change as a diff in ``diff``), nothing written; with it, a
        backup of every file it touches, then one journaled batch, then the index brought up to
        date (its schema migrated, a damaged or too-new one rebuilt) under ``index``."""
        from kenning.transfer import migrate as mig

        if not apply:
            return mig.plan(self.root).to_dict()
        report = mig.apply(self.root)
        self._config = None  # the format line changed
        report["index"] = self._after_migration(bool(report["applied"]))
        return report

    def rollback_migration(self, backup: str | None = None, *, force: bool = False
                           ) -> dict[str, Any]:
        """Undo a migration from its backup (default: the latest complete one) and re-index;
        refused when a file changed since the migration, unless ``force``."""
        from kenning.transfer import migrate as mig

        report = mig.rollback(self.root, backup, force=force)
        self._config = None
        report["index"] = self._after_migration(bool(report["restored"] or report["removed"]))
        return report

    def _after_migration(self, changed: bool) -> dict[str, Any]:
        """Index what a migration (or its rollback) changed, and a stale index schema; a write
        that landed never fails here: the reason is a note."""
        from kenning.index.store.diagnose import index_state
        from kenning.vault.writes import LOCK_WAIT

        url = database_url(self.root, self.config.database)
        state = index_state(self.root, url)
        if not state.present or not (changed or state.stale):
            return {"indexed": False, "state": state.describe()}
        try:
            try:
                report = self.index(embed=False, wait=LOCK_WAIT)
                how = "indexed"
            except IndexDamaged:
                self.close()
                report = self.rebuild(embed=False, wait=LOCK_WAIT)
                how = "rebuilt"
        except KenningError as exc:
            return {"indexed": False, "state": state.describe(),
                    "note": f"not indexed: {exc.message}; run `kenning index`"}
        return {"indexed": True, "how": how, "files": report.updated + report.added,
                "removed": report.deleted, "state": index_state(self.root, url).describe(),
                "note": "vectors of changed text are filled by the next `kenning index`"}

    def restore(self, archive: str | Path, *, dry_run: bool = False) -> dict[str, Any]:
        """Restore a ``kenning export`` archive into this vault: every file checked against
        the manifest's SHA-256 and written byte for byte, the index brought up to date, and
        the archive's vectors reused for every chunk whose text they were made from (nothing
        embedded again). Refused, nothing written, when a file of the vault differs from the
        archive's (restore into a new ``kenning init`` vault) or the archive is damaged."""
        from kenning.transfer import restore
        from kenning.vault.writes import write_lock

        path = Path(archive).expanduser()
        if not path.is_file():
            raise KenningError(f"{path}: no such archive")
        reader = restore.Reader(path)
        try:
            manifest = restore.manifest_of(reader)
            with write_lock(self.root):
                todo = restore.plan(self.root, reader, manifest)
                report: dict[str, Any] = {
                    "kind": "kenning", "path": str(path), "dry_run": dry_run,
                    "exported_at": manifest.get("exported_at"),
                    "files": {k: len(v) for k, v in todo.items()}, "replaced": todo["replace"],
                    "vectors": 0, "notes": []}
                if dry_run:
                    return report
                restore.write(self.root, reader, todo["write"] + todo["replace"])
                self._config = None  # the archive's config.yaml may differ from init's
                indexed = self.index(embed=False)
                report["index"] = {"added": indexed.added, "updated": indexed.updated}
                report["vectors"] = restore.reuse_vectors(self.store, reader, manifest)
        finally:
            reader.close()
        from kenning.index.vectors import coverage

        model = self.store.get_meta("embed_model")
        done, chunks = coverage(self.store, model)
        if chunks > done:
            report["notes"].append(f"{chunks - done} chunk(s) without a vector: `kenning "
                                   "index` embeds them")
        return report

    def export(self, dest: str | Path | None = None, *, vectors: bool = True,
               force: bool = False, wait: float = 60.0,
               progress: Callable[[int, int | None, str], None] | None = None
               ) -> dict[str, Any]:
        """Write the vault and its index as one portable archive at ``dest`` (default
        ``kenning-export-<vault>-<UTC date>.tar.gz`` in the current folder, beside the vault
        when that is inside it; ``.zip`` by name): every vault file byte for byte, and JSON
        Lines of pages, facts, links, items, timeline and (``vectors``) the vectors by the
        SHA-256 of their text (docs/export.md). The report: where, size, counts, skipped files.

        A consistent snapshot: the vault write lock and the index lock are held until every
        file is archived and the index dumped (writers wait up to ``wait`` seconds; the dumps
        are compressed after), and the index is first brought up to date with
        the files (lexically; chunks not embedded yet are counted, not embedded). Nothing is
        left at ``dest`` when it fails; an existing ``dest`` needs ``force``."""
        from kenning.transfer import export as archive
        from kenning.vault.writes import write_lock

        started = time.perf_counter()
        target, kind = archive.check_dest(
            self.root, Path(dest) if dest is not None else archive.default_dest(self.root),
            force=force)
        leave_out = archive.database_files(self.root, database_url(self.root,
                                                                  self.config.database))
        store = self.store
        with contextlib.ExitStack() as locks:
            locks.enter_context(write_lock(self.root, wait=wait, store=store))
            locks.enter_context(store.writer_lock(wait=wait))
            indexed = Indexer(self.root, store, self.config).run()
            report = archive.write_archive(self.root, store, target, kind, vectors=vectors,
                                           vault_format=self.config.format,
                                           leave_out=leave_out, progress=progress,
                                           release=locks.close)
        self._indexed = True
        report["index"] = {"added": indexed.added, "updated": indexed.updated,
                           "deleted": indexed.deleted}
        report["notes"] = notes = []
        missing = (report["embedding"] or {}).get("chunks_without_vector", 0)
        if vectors and missing:
            notes.append(f"{missing} chunk(s) have no vector yet (not embedded): `kenning "
                         "index` embeds them; a re-index after import embeds them there")
        if report["embedding"] is None:
            notes.append("no vectors: the index was never embedded")
        report["seconds"] = round(time.perf_counter() - started, 2)
        return report

    @_after_write
    def record_decision(self, name: str, domain: str, decided: str, because: str,
                        rejected: list[dict[str, str]] | None = None, *,
                        date: str | None = None, source: str | None = None,
                        trusted: bool = True, key: str | None = None) -> dict[str, Any]:
        """A decision page: what was decided, why, and each rejected option with its why."""
        from kenning.memory import write

        return write.record_decision(self.memory, name, domain, decided, because, rejected,
                                     date=date, source=source, trusted=trusted, key=key)

    @_after_write
    def revise(self, entity: str, observation: str, new_text: str | None = None, *,
               superseded_by: str | None = None, superseding_entity: str | None = None,
               valid_from: str | None = None, source: str | None = None,
               epistemic: str | None = None, confidence: float | None = None,
               trusted: bool = True, key: str | None = None) -> dict[str, Any]:
        """Supersede a fact (kept, dated, linked to its successor) with new text or a fact."""
        from kenning.memory import write

        return write.revise(self.memory, entity, observation, new_text,
                            superseded_by=superseded_by, superseding_entity=superseding_entity,
                            valid_from=valid_from,
                            source=source, epistemic_status=epistemic, confidence=confidence,
                            trusted=trusted, key=key)

    @_after_write
    def invalidate(self, entity: str, observation: str, *, reason: str,
                   source: str | None = None, trusted: bool = True,
                   key: str | None = None) -> dict[str, Any]:
        """Mark a fact invalidated (kept, dated; the reason goes on the timeline)."""
        from kenning.memory import write

        return write.invalidate(self.memory, entity, observation, reason=reason, source=source,
                                trusted=trusted, key=key)

    @_after_write
    def retain(self, kind: str, text: str, entities: list[str] | None = None,
               confidence: float | None = None, *, trusted: bool = True,
               key: str | None = None) -> dict[str, Any]:
        """Append a typed bullet (W, B, O, S) to today's daily log."""
        from kenning.memory import write

        return write.retain(self.memory, kind, text, entities, confidence, trusted=trusted,
                            key=key)

    @_after_write
    def note(self, text: str, *, title: str | None = None, trusted: bool = True,
             key: str | None = None) -> dict[str, Any]:
        """A quick free note under ``notes/``."""
        from kenning.memory import write

        return write.note(self.memory, text, title=title, trusted=trusted, key=key)

    @_after_write
    def delete(self, ref: str, *, trusted: bool = True) -> dict[str, Any]:
        """Move a page Kenning created to ``.trash/`` (never a person's note); refused for
        untrusted (remote) callers."""
        from kenning.memory import write

        return write.delete(self.memory, ref, trusted=trusted)

    def facts(self, entity: str, *, as_of: str | None = None, believed_on: str | None = None,
              history: bool = False) -> dict[str, Any]:
        """An entity's facts: true on ``as_of``, believed on ``believed_on``, or (history) all."""
        from kenning.memory.facts import facts

        return facts(self.memory, entity, as_of=as_of, believed_on=believed_on, history=history)

    def session_start(self, project: str | None = None, *, budget: int = 2000
                      ) -> dict[str, Any]:
        """Core memory, the last handoff and what changed since, and the owner's overdue and
        due-soon open items (and the project's), within a token budget."""
        from kenning import answers
        from kenning.memory import sessions

        lines = self._start_items(project)
        block = ""
        # Items take at most a quarter of the budget: the handoff and core memory come first.
        while lines:
            block = "\n\n## Open items (overdue, due soon)\n" + "\n".join(lines)
            if answers.tokens(block) + 2 <= budget // 4:
                break
            lines.pop()
            block = ""
        result = sessions.session_start(self.memory, project,
                                        budget=budget - (answers.tokens(block) + 2 if block else 0))
        if block:
            result["text"] = result["text"].rstrip("\n") + block
        return result

    def _start_items(self, project: str | None, soon_days: int = 7) -> list[str]:
        """Lines for session start: the owner's open items overdue or due within
        ``soon_days``, the newest open asks to the owner, others' overdue promises to the
        owner, then the project page's open items (when ``project`` names a page)."""
        from datetime import timedelta

        from kenning.recall.items import line

        today = _today()
        try:
            mine = self.items(who="me", status="open", today=today)
        except (IndexMissing, KenningError):
            return []
        soon = (date.fromisoformat(today) + timedelta(days=soon_days)).isoformat()
        picked = [i for i in mine if i["due"] and i["due"] <= soon]
        # What others asked of the owner and still wait for (newest three).
        with contextlib.suppress(KenningError):
            picked += self.items(to="me", kind="ask", status="open", today=today, limit=3)
        if project:
            with contextlib.suppress(KenningError):
                ref = self.find(project)
                for f in ({"page": ref.path}, {"who": ref.path}, {"to": ref.path}):
                    picked += self.items(status="open", today=today, **f)  # type: ignore[arg-type]
        # What others promised the owner and is overdue: what the owner is waiting on.
        with contextlib.suppress(KenningError):
            picked += self.items(to="me", kind="commitment", overdue=True, today=today, limit=3)
        out: list[str] = []
        for item in picked:
            text = "- " + line(item)
            if text not in out:
                out.append(text)
        return out[:10]

    @_after_write
    def session_close(self, transcript: str | list[dict[str, Any]], *,
                      project: str | None = None, summary: str | None = None,
                      trusted: bool = True, key: str | None = None) -> dict[str, Any]:
        """Export the transcript, record its explicit markers, write the next handoff."""
        from kenning.memory import sessions

        return sessions.session_close(self.memory, transcript, project=project, summary=summary,
                                      trusted=trusted, key=key)

    @_after_write
    def reflect(self, since: str = "7d", *, apply: bool = True) -> dict[str, Any]:
        """Fold retained bullets into entity pages; propose edits to memory.md."""
        from kenning.memory import reflect

        return reflect.reflect(self.memory, since, apply=apply)

    # -- health ----------------------------------------------------------------------------

    def doctor(self) -> Any:
        """Vault and index health: coverage, interrupted runs, links, aliases, vocabulary."""
        from kenning.health import Subject, check

        return check(Subject(root=self.root, config=self.config, open_store=lambda: self.store,
                             url=database_url(self.root, self.config.database),
                             embedder=self.embedder, reranker=self.reranker))


def _tag_filters(tags: Sequence[str] | str) -> tuple[str, ...]:
    """Tags to filter by, cleaned (``#`` dropped); a value that cannot be a tag is refused."""
    from kenning.vault.markdown import clean_tag

    out: list[str] = []
    for raw in [tags] if isinstance(tags, str) else tags:
        tag = clean_tag(str(raw))
        if tag is None:
            raise ValueError(f"tag {raw!r} is not a tag: letters, digits, _, - and / "
                             "(nested tags), not only digits")
        if tag.casefold() not in out:
            out.append(tag.casefold())
    return tuple(out)


def _today() -> str:
    """Today as YYYY-MM-DD; ``KENNING_TODAY`` overrides it (tests, back-filling)."""
    override = os.environ.get("KENNING_TODAY")
    return _iso_day(override, "KENNING_TODAY") or date.today().isoformat()


def _iso_day(value: str | None, option: str) -> str | None:
    """``value`` as a YYYY-MM-DD date, or a one-line error naming ``option``."""
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(str(value).strip()).isoformat()
    except ValueError:
        raise BadQuery(f"{option}: expected a date YYYY-MM-DD, got {value!r}") from None


def _rels(rels: Sequence[str]) -> list[str]:
    return [vocabulary.relation(r) for r in rels]


def _rejected(raw: Any) -> dict[str, str | None]:
    """A ``rejected:`` entry: "option — why" text or a mapping, as {option, why}."""
    from kenning.memory.write import rejected_option

    if isinstance(raw, dict):
        return {"option": str(raw.get("option") or ""), "why": raw.get("why")}
    return rejected_option(str(raw))


def _link_target(raw: Any) -> str | None:
    """The page a ``[[Target|alias]]`` frontmatter value names (None when empty)."""
    if not raw:
        return None
    text = str(raw[0] if isinstance(raw, list) and raw else raw).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    return text.split("|", 1)[0].split("#", 1)[0].strip() or None

