"""The Kenning MCP server on the official ``mcp`` SDK (low-level ``Server``).

One process serves one vault with one profile. Tools come from ``kenning.serve.tools``; every
call is checked (NUL bytes, argument size, vocabulary folding, JSON schema, caller policy) before
its handler runs on a worker thread: writes on one write thread (so they never overlap inside one
process; between processes the memory module's vault write lock serialises them), reads on one
read thread with their own connection to the index, so a long write never holds up another
client's search (SQLite's WAL lets a reader go on while the writer writes).

Resources: ``kenning://page/{path}`` (any Markdown page inside the vault; ``memory.md`` is
listed). Prompts: ``session-start`` and ``session-close``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from kenning import __version__, answers
from kenning.errors import KenningError
from kenning.serve import trust
from kenning.serve.tokens import Identity
from kenning.serve.tools import Runtime, ToolSpec, fold_vocabulary, needed_scope, offered
from kenning.serve.trust import Caller
from kenning.vault.fsio import is_utf8_name, utf8_data, utf8_text
from kenning.vault.mounts import VAULT_MOUNT

log = logging.getLogger("kenning.serve")

PAGE_URI = "kenning://page/"
RESOURCE_NOT_FOUND = -32002
INSUFFICIENT_SCOPE = -32003  # the caller's token lacks the scope the tool needs
INSTRUCTIONS = (
    "Kenning is the user's memory: Markdown pages of people, projects, decisions and facts, "
    "each answer cited path#Lstart-Lend. Search or recall before asking the user; record what "
    "you learn.")


class KenningMCP:
    """The server's state: the vault, the caller policy, the profile and its tools."""

    def __init__(self, root: Path, *, profile: str, caller: Caller) -> None:
        from kenning.api import Vault

        self.vault = Vault.open(root)
        self.read_vault = Vault.open(root)  # reads: a connection of their own, see _run
        self.caller = caller
        self.profile = profile
        self.tools: dict[str, ToolSpec] = {t.name: t for t in offered(profile, caller)}
        # Every tool of the profile, for callers a token makes trusted (an admin token).
        self.profile_tools = {t.name: t for t in offered(profile, Caller(caller.transport, True))}
        self.every_tool = {t.name for t in offered("full", Caller("stdio", True))}
        self.last_index = [0.0]
        self._limiter: anyio.CapacityLimiter | None = None  # the write thread
        self._read_limiter: anyio.CapacityLimiter | None = None
        self._validators: dict[str, Any] = {}
        self.server: Server[Any] = Server(
            "kenning", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt)

    def close(self) -> None:
        self.vault.close()
        self.read_vault.close()

    # -- tools -----------------------------------------------------------------------------

    def tool_list(self) -> list[types.Tool]:
        """The tools this server lists, as MCP ``Tool`` objects."""
        return mcp_tools(self.tools.values())

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        identity = _identity(ctx)
        if identity is None:
            return types.ListToolsResult(tools=self.tool_list())
        return types.ListToolsResult(tools=mcp_tools(self.visible(identity)))

    def caller_for(self, identity: Identity | None) -> Caller:
        """The caller policy for a request: an admin token has the owner's rights."""
        if identity is not None and identity.named and identity.scope == "admin":
            return Caller(self.caller.transport, trusted=True, mounts=identity.mounts)
        if identity is not None and identity.mounts is not None:
            return Caller(self.caller.transport, self.caller.trusted, mounts=identity.mounts)
        return self.caller

    def visible(self, identity: Identity) -> list[ToolSpec]:
        """The tools ``identity`` sees: the profile's, within its scope and caller policy."""
        caller = self.caller_for(identity)
        return [t for t in self.profile_tools.values()
                if trust.may_call(caller, t.name) and identity.allows(needed_scope(t))]

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams
                         ) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        identity = _identity(ctx)
        caller = self.caller_for(identity)
        spec = self.profile_tools.get(name)
        if spec is not None and identity is not None \
                and not identity.allows(needed := needed_scope(spec)):
            # A JSON-RPC error, not a tool result: the call was never made.
            raise MCPError(INSUFFICIENT_SCOPE, f"`{name}` needs a token with the `{needed}` "
                           f"scope; the token {identity.name!r} has `{identity.scope}` (ask "
                           f"the vault's owner: kenning token add NAME --scope {needed})")
        try:
            spec = self._lookup(name, caller)
            args = self._check(spec, args, caller)
            rt = Runtime(self.vault if not spec.read_only else self.read_vault, caller,
                         last_index=self.last_index)
            data = await self._run(spec, rt, args, identity)
        except (KenningError, ValueError, LookupError) as exc:
            return _error(str(exc))
        except Exception as exc:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return _error(f"internal error in {name}: {type(exc).__name__}: {exc}")
        text = answers.dumps(data)
        if not is_utf8_name(text):
            # A lone surrogate (a file name that is not UTF-8, a "\ud800" in a source) cannot
            # be sent: escape it rather than fail the call after its work was done.
            text = answers.dumps(utf8_data(json.loads(text)))
        # The answer once, as text: without an output schema a structured copy is optional,
        # and clients that pass both to the model would pay for it twice.
        return types.CallToolResult(content=[types.TextContent(text=text)])

    def _lookup(self, name: str, caller: Caller | None = None) -> ToolSpec:
        caller = caller or self.caller
        spec = self.profile_tools.get(name)
        if spec is not None and trust.may_call(caller, name):
            return spec
        if name in trust.TRUSTED_ONLY and caller.remote:
            trust.refuse_unless_allowed(caller, name)
        if name in self.every_tool:
            raise trust.Refused(f"`{name}` is not in the {self.profile} profile; start the "
                                "server with a larger --profile to offer it")
        raise trust.Refused(f"unknown tool {name!r}; this server offers: "
                            + ", ".join(self.tools))

    def _check(self, spec: ToolSpec, args: dict[str, Any], caller: Caller | None = None
               ) -> dict[str, Any]:
        caller = caller or self.caller
        size = len(json.dumps(args, ensure_ascii=False).encode("utf-8"))
        if size > caller.max_argument_bytes:
            raise trust.Refused(f"arguments of {size:,} bytes are over the "
                                f"{caller.max_argument_bytes:,}-byte limit of one call")
        trust.check_strings(args)
        args = fold_vocabulary(args)
        validator = self._validators.get(spec.name)
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = self._validators[spec.name] = Draft202012Validator(spec.schema)
        problems = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
        if problems:
            raise trust.Refused("invalid arguments: " + "; ".join(
                f"{_where(e.absolute_path)}: {_short(e.message)}" for e in problems[:10]))
        return args

    async def _run(self, spec: ToolSpec, rt: Runtime, args: dict[str, Any],
                   identity: Identity | None = None) -> Any:
        # Not cancellable: a client that leaves mid-call does not cut a write in half.
        return await anyio.to_thread.run_sync(self._handle, spec, rt, args, identity,
                                              limiter=self._worker(spec.read_only))

    def _handle(self, spec: ToolSpec, rt: Runtime, args: dict[str, Any],
                identity: Identity | None = None) -> Any:
        """Run one handler on the worker thread: a remote caller's writes are noted as its
        (vault.provenance); an HTTP caller's writes are audited under its name and, for a
        person's token, cited as ``mcp:NAME`` (vault.writes.acting_as); what remote callers
        wrote is marked in every answer; the answer is made lean (``kenning.answers``) and,
        with a budget, fitted to it as a whole."""
        from kenning.vault import provenance, writes

        actor = (writes.acting_as(identity.name, spec.name, self.vault.store,
                                  named=identity.named)
                 if identity is not None and not spec.read_only else contextlib.nullcontext())
        confined = rt.caller.mounts
        if confined is not None and not spec.read_only and VAULT_MOUNT not in confined:
            raise trust.Refused(f"`{spec.name}` writes to the vault; this token may read only "
                                f"{', '.join(confined)}")
        with provenance.remote_writes(rt.caller.remote), actor:
            data = spec.handler(rt, args)
        if not isinstance(data, dict):
            data = {"result": data}
        if confined is not None:
            data = trust.confine(data, confined)
        if rt.notes:
            data = {**data, "notes": [*data.get("notes", []), *rt.notes]}
        data = answers.lean(provenance.mark(self.vault.root, data))
        if rt.budget is not None and spec.cut is not None:
            data = answers.fit(data, rt.budget, spec.cut)
        return data

    async def run_sync(self, fn: Any, *args: Any) -> Any:
        """Run ``fn`` (a read) on the vault's read thread."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._worker(True))

    def _worker(self, read: bool) -> anyio.CapacityLimiter:
        """The read or the write thread's limiter (one call at a time on each): a write of a
        thousand observations must not make every other client's search wait for it."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)
            self._read_limiter = anyio.CapacityLimiter(1)
        assert self._read_limiter is not None
        return self._read_limiter if read else self._limiter

    # -- resources -------------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        resources = []
        if (self.vault.root / "memory.md").is_file():
            resources.append(types.Resource(
                name="memory.md", uri=PAGE_URI + "memory.md", mime_type="text/markdown",
                description="Core memory: durable facts and preferences, always loaded."))
        return types.ListResourcesResult(resources=resources)

    async def _list_templates(self, ctx: Any, params: Any
                              ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            name="page", uri_template=PAGE_URI + "{path}", mime_type="text/markdown",
            description="A Markdown page of the vault by its vault path.")])

    async def _read_resource(self, ctx: Any, params: types.ReadResourceRequestParams
                             ) -> types.ReadResourceResult:
        uri = str(params.uri)
        path = self._resource_path(uri)
        text = await self.run_sync(_read_page, path, self.vault.root)
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="text/markdown", text=text)])

    def _resource_path(self, uri: str) -> Path:
        if not uri.startswith(PAGE_URI):
            raise MCPError(RESOURCE_NOT_FOUND, f"unknown resource {uri!r}; pages are "
                           f"{PAGE_URI}<vault path>")
        relative = unquote(uri[len(PAGE_URI):])
        try:
            trust.check_strings(relative, "uri")
            path = trust.safe_path(self.vault.root, relative)
        except KenningError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        rel_parts = path.relative_to(self.vault.root).parts
        if any(p.startswith(".") for p in rel_parts) or path.suffix.lower() != ".md":
            raise MCPError(types.INVALID_PARAMS, f"not a Markdown page of the vault: {relative!r}")
        if not path.is_file():
            raise MCPError(RESOURCE_NOT_FOUND, f"no page at {relative!r}")
        return path

    # -- prompts ---------------------------------------------------------------------------

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        project = types.PromptArgument(name="project", description="project name",
                                       required=False)
        return types.ListPromptsResult(prompts=[
            types.Prompt(name="session-start", arguments=[project],
                         description="Load core memory, the last handoff and recent changes."),
            types.Prompt(name="session-close", arguments=[project],
                         description="Save what this session learned and write the handoff."),
        ])

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams
                          ) -> types.GetPromptResult:
        args = params.arguments or {}
        try:
            trust.check_strings(args)
        except KenningError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        project = args.get("project") or None
        if params.name == "session-start":
            text = await self.run_sync(self._start_text, project)
            description = "What Kenning remembers for this session."
        elif params.name == "session-close":
            text = _close_text(project, set(self.tools))
            description = "Save what this session learned."
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; prompts: "
                           "session-start, session-close")
        return types.GetPromptResult(description=description, messages=[types.PromptMessage(
            role="user", content=types.TextContent(text=text))])

    def _start_text(self, project: str | None) -> str:
        if hasattr(self.read_vault, "session_start"):
            rt = Runtime(self.read_vault, self.caller, last_index=self.last_index)
            rt.fresh()
            data = self.read_vault.session_start(project, budget=2000)
            body = data.get("text") or json.dumps(data, ensure_ascii=False, default=str)
        else:
            path = self.vault.root / "memory.md"
            body = path.read_text(encoding="utf-8") if path.is_file() else "(no memory.md yet)"
        return ("Here is what Kenning remembers" + (f" for {project}" if project else "")
                + ". Use it; search or recall for more, cite what you use.\n\n" + body)


def mcp_tools(specs: Iterable[ToolSpec]) -> list[types.Tool]:
    """Tool specs as MCP ``Tool`` objects, every annotation spelled out."""
    return [types.Tool(
        name=t.name, description=t.description, input_schema=t.schema,
        annotations=types.ToolAnnotations(
            read_only_hint=t.read_only, destructive_hint=t.destructive,
            idempotent_hint=t.idempotent, open_world_hint=False))
        for t in specs]


def _close_text(project: str | None, tools: set[str]) -> str:
    steps = []
    if "record" in tools:
        steps.append("record new people, projects and facts (entities, relations, "
                     "observations) with `record`; decisions with `decide`, including the "
                     "rejected options and why; changed beliefs with `revise`")
    if "session_close" in tools:
        steps.append("call `session_close` with this session's transcript (or your summary)"
                     + (f" and project={project!r}" if project else "")
                     + "; its handoff is loaded at the next session start")
    if not steps:
        steps.append("this server is read-only (profile recall): tell the user what is worth "
                     "keeping so they can record it")
    return ("This session is ending. Keep what the next one needs:\n"
            + "\n".join(f"{i}. {s}." for i, s in enumerate(steps, 1))
            + "\nWrite facts as dated, sourced statements; mark guesses as hypothesis.")


def _read_page(path: Path, root: Path) -> str:
    from kenning.vault import provenance
    from kenning.vault.fsio import decode_markdown

    text = decode_markdown(path.read_bytes())
    rel = path.relative_to(root.resolve()).as_posix()
    return provenance.mark_markdown(rel, text, provenance.Ledger(root))


def _identity(ctx: Any) -> Identity | None:
    """The Identity ``http.Guard`` put in the HTTP request's state; None over stdio."""
    from kenning.serve.http import IDENTITY

    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    found = state.get(IDENTITY) if isinstance(state, dict) else None
    return found if isinstance(found, Identity) else None


def _error(message: str) -> types.CallToolResult:
    message = utf8_text(message)
    return types.CallToolResult(content=[types.TextContent(text=f"error: {message}")],
                                is_error=True)


def _where(path: Any) -> str:
    parts = list(path)
    if not parts:
        return "arguments"
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _short(message: str, limit: int = 600) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


def _rpc_error(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error for a line that could not be read as a message (id null)."""
    if "json_invalid" in str(exc) or "Invalid JSON" in str(exc):
        code, message = types.PARSE_ERROR, "Parse error: the line is not valid JSON"
    else:
        code, message = types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
    return types.JSONRPCError(jsonrpc="2.0", id=None,
                              error=types.ErrorData(code=code, message=message))


def page_uri(path: str) -> str:
    """The resource URI of a vault page."""
    return PAGE_URI + quote(path)


async def serve_stdio(root: Path, *, profile: str) -> None:
    """Serve the vault at ``root`` over stdin/stdout (a trusted, local caller)."""
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    app = KenningMCP(root, profile=profile, caller=Caller("stdio", trusted=True))
    try:
        async with stdio_server() as (read, write):
            # The SDK drops a line that is not JSON-RPC without a word; answer it with a
            # JSON-RPC parse error (id null) instead, and go on serving.
            send, receive = anyio.create_memory_object_stream[Any](0)

            async def relay() -> None:
                async with send:
                    async for item in read:
                        if isinstance(item, Exception):
                            await write.send(SessionMessage(_rpc_error(item)))
                        else:
                            await send.send(item)

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay)
                await app.server.run(receive, write, app.server.create_initialization_options())
                tg.cancel_scope.cancel()
    finally:
        app.close()
