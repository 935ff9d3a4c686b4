"""The entity page: the page rendered, its facts with status, timeline, items, backlinks by
type and the sources that built it; and ``/file/<path>``, the images a page embeds.

Everything comes from ``Vault`` (``show``, ``read``, ``why``, ``find``; never with
``record=True``: browsing is not recall). Links are resolved once per target per render.
"""

from __future__ import annotations

import contextlib
import mimetypes
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from kenning.api import Vault
from kenning.errors import AmbiguousPage, KenningError, PageNotFound, UnsafePath
from kenning.vault.fsio import resolve_inside
from kenning.vault.markdown import resolve_relative
from kenning.web import markdown
from kenning.web.render import html, vault

HL = re.compile(r"^\s*(\d{1,9})(?:\s*-\s*L?(\d{1,9}))?\s*$")
LIST_CAP = 300  # rows of one list (facts, backlinks) shown before "and N more"
IMAGE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
NOT_SHOWN: tuple[str, ...] = ()  # frontmatter keys left out of the property table


def parse_hl(raw: str | None) -> tuple[tuple[int, int] | None, str | None]:
    """``?hl=S-E`` (or ``S``) as (start, end), or a note saying why it was ignored."""
    if not raw:
        return None, None
    m = HL.match(raw)
    if not m:
        return None, f"ignored ?hl={raw!r}: expected START-END line numbers"
    start = int(m.group(1))
    end = int(m.group(2) or start)
    return (min(start, end), max(start, end)), None


def check_path(raw: str) -> str:
    """A path from the URL, refused when it could lead out of the vault."""
    parts = raw.replace("\\", "/").split("/")
    if raw.startswith(("/", "\\", "~")) or ".." in parts or "\x00" in raw:
        raise UnsafePath(f"path leads outside the vault: {raw!r}")
    return raw


class Links:
    """Page names resolved to paths, once each per render."""

    def __init__(self, v: Vault) -> None:
        self.vault = v
        self.cache: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        key = name.strip()
        if key not in self.cache:
            try:
                self.cache[key] = self.vault.find(key).path if key else None
            except (KenningError, ValueError):
                self.cache[key] = None
        return self.cache[key]


def _attachments(v: Vault, page_path: str) -> Callable[[str], str | None]:
    """Where an embedded image lives: next to the page, at that vault path, or in a common
    attachments folder (no walk over the vault)."""
    def find(name: str) -> str | None:
        folder = page_path.rsplit("/", 1)[0] if "/" in page_path else ""
        candidates = [resolve_relative(page_path, name), name.lstrip("/"),
                      *(f"{d}/{name}" for d in ("attachments", "assets", "images")),
                      *((f"{folder}/attachments/{name}",) if folder else ())]
        for rel in dict.fromkeys(candidates):
            with contextlib.suppress(KenningError, ValueError, OSError):
                if resolve_inside(v.root, rel).is_file():
                    return "/file/" + quote(rel)
        return None
    return find


def _close_names(v: Vault, name: str) -> list[str]:
    """Pages whose words come close to a name no page has (a lexical search)."""
    words = re.sub(r"[/_.\-]+", " ", name.removesuffix(".md")).strip()
    if not words:
        return []
    try:
        return [r.path for r in v.search(words, mode="lexical", limit=5)]
    except (KenningError, ValueError):
        return []


def _grouped(edges: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Edges grouped by relation (typed relations first, ``mentions`` last), each page once."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for e in edges:
        groups.setdefault(e["rel"], {}).setdefault(e["path"], e)
    order = sorted(groups, key=lambda r: (r == "mentions", r == "related_to", r))
    return [(rel, list(groups[rel].values())) for rel in order]


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def page(request: Request) -> Response:
    """``/page/<path>?hl=S-E``: one entity page."""
    v = vault(request)
    raw = check_path(request.path_params["path"])
    try:
        shown = v.show(raw, record=False)
    except PageNotFound as exc:
        return html(request, "error.html", status=404, title="Not found", message=exc.message,
                    choices=_close_names(v, raw))
    except AmbiguousPage as exc:
        return html(request, "error.html", status=404, title="Several pages have this name",
                    message=exc.message, choices=exc.candidates)
    path = shown["path"]
    hl, hl_note = parse_hl(request.query_params.get("hl"))
    at = None
    with contextlib.suppress(ValueError):
        at = int(request.query_params.get("at", "") or 0) or None
    text = v.read(path, record=False)
    links = Links(v)
    attachment = _attachments(v, path)

    def embed(target: str, heading: str | None) -> str | None:
        if target == path:
            return None
        try:
            inner = v.read(target, record=False)
        except (KenningError, ValueError, OSError):
            return None
        return markdown.render_embed(inner, path=target, heading=heading, resolve=links,
                                     attachment=_attachments(v, target))

    if shown.get("type") == "code":
        body = markdown.render_code(text, hl=hl, at=at)
    else:
        body = markdown.render_page(text, path=path, resolve=links, attachment=attachment,
                                    embed=embed, hl=hl, at=at, title=shown["title"])
    facts = []
    for f in shown["facts"][:LIST_CAP]:
        successor = markdown.plain_snippet(f["successor"] or "") or None
        facts.append({**f, "target_path": links(f["target"]) if f["target"] else None,
                      "successor_name": successor,
                      "successor_path": links(successor) if successor else None,
                      "source_html": markdown.inline_links(f["source"] or "", links),
                      "text_html": markdown.inline_links(f["text"] or "", links)})
    timeline = [{**t, "text_html": markdown.inline_links(t["text"] or "", links)}
                for t in shown["timeline"][:LIST_CAP]]
    props = [(k, _prop(val, links)) for k, val in shown["frontmatter"].items()
             if k not in NOT_SHOWN]
    table = markdown.properties(text, props, hl)
    why = v.why(path)
    window = None
    if body.cut:
        step = markdown.MAX_LINES // 2
        window = {"earlier": max(1, body.first_line - step) if body.first_line > 1 else None,
                  "later": body.last_line + 1 if body.last_line < body.total_lines else None}
    return html(request, "page.html", title=shown["title"], page=shown, body=body,
                props_html=table, facts=facts, more_facts=max(0, len(shown["facts"]) - LIST_CAP),
                timeline=timeline, props=props, items=shown["items"],
                links_in=_grouped(shown["links_in"]), links_out=_grouped(shown["links_out"]),
                sources=why.get("sources") or [], why=why, hl=hl, hl_note=hl_note,
                window=window, name=_name)


def _prop(value: Any, links: Links) -> Any:
    """A frontmatter value for the property table: text with its [[links]] made links."""
    if isinstance(value, list):
        return markdown.Markup(", ").join(_prop(x, links) for x in value)
    if isinstance(value, dict):
        return markdown.Markup("; ").join(
            markdown.Markup("{}: {}").format(k, _prop(x, links)) for k, x in value.items())
    return markdown.inline_links("" if value is None else str(value), links)


def file(request: Request) -> Response:
    """``/file/<path>``: an image inside the vault, for embeds; anything else is 404."""
    v = vault(request)
    raw = check_path(request.path_params["path"])
    if not markdown.is_image(raw):
        raise HTTPException(404, "only images inside the vault are served")
    try:
        real = resolve_inside(v.root, raw)
    except KenningError as exc:
        raise HTTPException(404, exc.message) from None
    if not real.is_file():
        raise HTTPException(404, f"no file {raw!r} in the vault")
    kind = mimetypes.guess_type(real.name)[0] or "application/octet-stream"
    return FileResponse(real, media_type=kind, headers={
        "content-security-policy": IMAGE_CSP, "x-content-type-options": "nosniff",
        "content-disposition": "inline"})


ROUTES = [Route("/page/{path:path}", page), Route("/file/{path:path}", file)]
