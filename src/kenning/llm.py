"""A small client for OpenAI-compatible ``/v1/chat/completions`` endpoints (the optional LLM).

Every Kenning pipeline works without a model; when the vault config has an ``llm:`` section,
stages that can use one (the build's entity resolution now; reflect and session close later) talk
to it through :class:`ChatClient`::

    llm:
      url: http://127.0.0.1:11434/v1   # the API base: Ollama, llama.cpp, vLLM, LM Studio, OpenAI …
      model: qwen2.5:14b-instruct
      api_key_env: OPENAI_API_KEY      # the key is read from this variable, never stored
      timeout: 120                     # seconds per request
      max_retries: 1                   # extra tries on HTTP 429 / 5xx
      temperature: 0
      max_tool_rounds: 6               # tool calls the model may make before it must answer
      response_format: auto            # auto | json_schema | json_object | none

The standard library's ``urllib`` sends the requests (no HTTP dependency, like the embedders).
``response_format: auto`` asks for OpenAI's structured output (``json_schema``) and, when the
server refuses that with HTTP 400/422, for ``json_object``, then for nothing (plain JSON asked for
in the prompt); the first form the server accepts is kept for the client's life. Replies are
parsed by the caller, which must validate them: a model's output is never trusted.

Errors are :class:`LLMError` subclasses with one line naming the URL or the config field:
:class:`LLMUnavailable` (timeouts, refused connections, HTTP errors — the caller falls back to
its deterministic path) and :class:`LLMBadReply` (an answer that does not follow the protocol).
The key is read from the environment on every request, sent only as ``Authorization: Bearer``,
and never kept on the object, put in a message or written anywhere.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.errors import KenningError

CONFIG_FILE = ".kenning/config.yaml"
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")
DISABLE_ENV = "KENNING_LLM"  # KENNING_LLM=none turns the configured model off for one run
MAX_RETRY_PAUSE = 2.0


class LLMError(KenningError):
    """Something went wrong talking to the model (one line, no key in it)."""


class LLMUnavailable(LLMError):
    """The server could not be reached or refused the request (timeouts, HTTP errors)."""


class LLMBadReply(LLMError):
    """The server answered, but not with an OpenAI-style chat completion."""


@dataclass(frozen=True)
class LLMConfig:
    """The ``llm`` section of ``.kenning/config.yaml``."""

    url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 120.0
    max_retries: int = 1
    temperature: float = 0.0
    max_tool_rounds: int = 6
    response_format: str = "auto"

    @classmethod
    def from_raw(cls, raw: Any) -> LLMConfig | None:
        """Read and check the section; ``None`` when it is absent. Errors name the field."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise LLMError("config field 'llm' must be a mapping (url, model, api_key_env, …)",
                           path=CONFIG_FILE, field="llm")
        known = {"url", "model", "api_key_env", "timeout", "max_retries", "temperature",
                 "max_tool_rounds", "response_format"}
        unknown = sorted(str(k) for k in raw if k not in known)
        if unknown:
            raise LLMError(f"config field 'llm.{unknown[0]}' is not known; allowed: "
                           f"{', '.join(sorted(known))}", path=CONFIG_FILE,
                           field=f"llm.{unknown[0]}")

        def text(key: str, required: bool) -> str | None:
            value = raw.get(key)
            if value is None or (isinstance(value, str) and not value.strip()):
                if required:
                    raise LLMError(f"config field 'llm.{key}' is missing", path=CONFIG_FILE,
                                   field=f"llm.{key}")
                return None
            if not isinstance(value, str):
                raise LLMError(f"config field 'llm.{key}' must be a string", path=CONFIG_FILE,
                               field=f"llm.{key}")
            return value.strip()

        def number(key: str, default: float, low: float, high: float, whole: bool = False
                   ) -> float:
            value = raw.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or (
                    whole and not float(value).is_integer()) or not low <= value <= high:
                kind = "a whole number" if whole else "a number"
                raise LLMError(f"config field 'llm.{key}' is {value!r}; it must be {kind} from "
                               f"{low:g} to {high:g}", path=CONFIG_FILE, field=f"llm.{key}")
            return float(value)

        url = text("url", True)
        model = text("model", True)
        assert url is not None and model is not None
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LLMError(f"config field 'llm.url' is {url!r}; it must be an http:// or "
                           "https:// API base, e.g. http://127.0.0.1:11434/v1",
                           path=CONFIG_FILE, field="llm.url")
        if "@" in parts.netloc:
            raise LLMError("config field 'llm.url' holds credentials (user:password@); put the "
                           "key in an environment variable named by llm.api_key_env",
                           path=CONFIG_FILE, field="llm.url")
        if url.rstrip("/").endswith("/chat/completions"):
            raise LLMError("config field 'llm.url' must be the API base (…/v1), without "
                           "/chat/completions", path=CONFIG_FILE, field="llm.url")
        fmt = text("response_format", False) or "auto"
        if fmt not in RESPONSE_FORMATS:
            raise LLMError(f"config field 'llm.response_format' is {fmt!r}; allowed: "
                           f"{', '.join(RESPONSE_FORMATS)}", path=CONFIG_FILE,
                           field="llm.response_format")
        return cls(url=url.rstrip("/"), model=model, api_key_env=text("api_key_env", False),
                   timeout=number("timeout", 120.0, 0.001, 3600.0),
                   max_retries=int(number("max_retries", 1, 0, 10, whole=True)),
                   temperature=number("temperature", 0.0, 0.0, 2.0),
                   max_tool_rounds=int(number("max_tool_rounds", 6, 0, 50, whole=True)),
                   response_format=fmt)


def load_llm_config(root: Path | str) -> LLMConfig | None:
    """The vault's ``llm`` config, or ``None`` when none is set (or ``KENNING_LLM=none``)."""
    from kenning.vault.layout import load_config

    if os.environ.get(DISABLE_ENV, "").strip().lower() in ("none", "off", "0", "false"):
        return None
    raw = load_config(Path(root)).raw or {}
    return LLMConfig.from_raw(raw.get("llm"))


@dataclass
class ToolCall:
    """One function call the model asked for."""

    id: str
    name: str
    arguments: str   # raw JSON text, as the model wrote it


@dataclass
class ChatReply:
    """One assistant turn."""

    content: str | None
    tool_calls: list[ToolCall]
    message: dict[str, Any]          # the assistant message, to send back in the next request
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


ToolHandler = Callable[[dict[str, Any]], Any]


def one_line(text: str, limit: int = 200) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ChatClient:
    """Chat completions from any server that speaks OpenAI's protocol."""

    retry_pause = 0.5  # seconds before a retry on 429 / 5xx (Retry-After wins, up to 2 s)

    def __init__(self, config: LLMConfig) -> None:
        from kenning.index.embedders_remote import local_opener

        self.config = config
        self.endpoint = config.url + "/chat/completions"
        self.format = config.response_format  # narrowed by "auto" as the server answers
        self.usage: dict[str, int] = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        if config.api_key_env:
            self._key()  # fail now, not on the first request, when the variable is unset
        self._opener = local_opener(config.url)

    def __repr__(self) -> str:
        return f"ChatClient({self.config.model!r} at {self.config.url!r})"

    # -- public ------------------------------------------------------------------------------

    def models(self) -> list[str]:
        """Model ids from ``GET {url}/models`` (a cheap check that the server is there)."""
        doc = self._json(self._send(self.config.url + "/models", None))
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, list):
            raise LLMBadReply(f"the LLM server at {self.config.url}/models returned JSON "
                              "without a 'data' list")
        return [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
             tool_choice: str | None = None, schema: dict[str, Any] | None = None,
             schema_name: str = "answer") -> ChatReply:
        """One request; ``schema`` asks for JSON in that shape (as the server supports)."""
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": self.config.temperature}
        if tools:
            body["tools"] = tools
            if tool_choice:
                body["tool_choice"] = tool_choice
        while True:
            fmt = self._format_for(schema)
            if fmt == "json_schema" and schema is not None:
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": schema_name, "strict": True, "schema": schema}}
            elif fmt == "json_object":
                body["response_format"] = {"type": "json_object"}
            else:
                body.pop("response_format", None)
            try:
                raw = self._send(self.endpoint, json.dumps(body).encode("utf-8"))
            except _FormatRefused:
                self.format = "json_object" if fmt == "json_schema" else "none"
                continue
            if self.config.response_format == "auto" and schema is not None:
                self.format = fmt  # this form works here: keep it
            return self._reply(self._json(raw))

    def run_tools(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                  handlers: Mapping[str, ToolHandler], *, schema: dict[str, Any] | None = None,
                  schema_name: str = "answer", max_rounds: int | None = None) -> ChatReply:
        """Chat, run the tools the model calls, and chat again until it answers.

        ``messages`` is extended in place with every assistant turn and tool result. After
        ``max_rounds`` rounds of tool calls the model is asked to answer without tools
        (``tool_choice: none``). A handler's exception becomes an ``error: …`` tool result,
        so the model can correct itself; results are sent as JSON text.
        """
        rounds = self.config.max_tool_rounds if max_rounds is None else max_rounds
        for n in range(rounds + 1):
            last = n == rounds
            reply = self.chat(messages, tools=tools or None,
                              tool_choice="none" if (last and tools) else None,
                              schema=schema, schema_name=schema_name)
            messages.append(reply.message)
            if not reply.tool_calls:
                return reply
            if last:
                raise LLMBadReply(f"the model at {self.endpoint} kept calling tools after "
                                  f"{rounds} round(s) (llm.max_tool_rounds)")
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": self._run_tool(call, handlers)})
        raise AssertionError("unreachable")  # pragma: no cover

    # -- internals -----------------------------------------------------------------------------

    def _format_for(self, schema: dict[str, Any] | None) -> str:
        if schema is None:
            return "none"
        return "json_schema" if self.format == "auto" else self.format

    @staticmethod
    def _run_tool(call: ToolCall, handlers: Mapping[str, ToolHandler]) -> str:
        handler = handlers.get(call.name)
        if handler is None:
            return json.dumps({"error": f"no tool {call.name!r}; tools: {sorted(handlers)}"})
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            return json.dumps({"error": "the arguments are not JSON"})
        if not isinstance(args, dict):
            return json.dumps({"error": "the arguments must be a JSON object"})
        try:
            result = handler(args)
        except (KenningError, ValueError, LookupError, OSError) as exc:
            return json.dumps({"error": one_line(str(exc))})
        return json.dumps(result, ensure_ascii=False)

    def _key(self) -> str | None:
        name = self.config.api_key_env
        if not name:
            return None
        key = os.environ.get(name, "").strip()
        if not key:
            raise LLMUnavailable(f"config field 'llm.api_key_env' names the environment "
                                 f"variable {name}, which is not set (export {name}=<key>, or "
                                 f"remove llm.api_key_env from {CONFIG_FILE})",
                                 field="llm.api_key_env")
        return key

    def _send(self, url: str, data: bytes | None) -> bytes:
        from kenning.index.embedders_remote import _error_detail, _pause

        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        attempts = 1 + self.config.max_retries
        for attempt in range(1, attempts + 1):
            request = urllib.request.Request(url, data=data, headers=headers,
                                             method="POST" if data is not None else "GET")
            self.usage["requests"] += 1
            try:
                with self._opener.open(request, timeout=self.config.timeout) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if attempt < attempts and (exc.code == 429 or exc.code >= 500):
                    time.sleep(_pause(exc.headers.get("Retry-After"), self.retry_pause))
                    continue
                if exc.code in (400, 422) and data is not None and "response_format" in \
                        json.loads(data) and self.config.response_format == "auto":
                    raise _FormatRefused() from None
                raise self._http_error(url, exc.code, detail) from None
            except urllib.error.URLError as exc:
                raise self._unreachable(url, exc.reason) from None
            except (TimeoutError, OSError, http.client.HTTPException) as exc:
                raise self._unreachable(url, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _unreachable(self, url: str, reason: Any) -> LLMUnavailable:
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            return LLMUnavailable(f"the LLM server at {url} did not answer within "
                                  f"{self.config.timeout:g} s (llm.timeout)")
        what = "connection refused" if isinstance(reason, ConnectionRefusedError) else \
            one_line(str(getattr(reason, "strerror", None) or reason))
        return LLMUnavailable(f"cannot reach the LLM server at {url}: {what} (llm.url)")

    def _http_error(self, url: str, code: int, detail: str) -> LLMUnavailable:
        said = f": {detail}" if detail else ""
        where = f"the LLM server at {url}"
        if code in (401, 403):
            if self.config.api_key_env:
                return LLMUnavailable(f"{where} rejected the API key from "
                                      f"{self.config.api_key_env} (HTTP {code}){said}")
            return LLMUnavailable(f"{where} wants an API key (HTTP {code}) and llm.api_key_env "
                                  f"is not set{said}")
        if code == 404:
            return LLMUnavailable(f"{where} answered HTTP 404: the model "
                                  f"{self.config.model!r} (llm.model) or the API base "
                                  f"(llm.url) is wrong{said}")
        if code == 429 or code >= 500:
            return LLMUnavailable(f"{where} failed with HTTP {code} (after "
                                  f"{self.config.max_retries} retr"
                                  f"{'y' if self.config.max_retries == 1 else 'ies'}){said}")
        return LLMUnavailable(f"{where} refused the request with HTTP {code}{said}")

    def _json(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise LLMBadReply(f"the LLM server at {self.config.url} returned something that is "
                              f"not JSON ({one_line(repr(raw[:60]))})") from None

    def _reply(self, doc: Any) -> ChatReply:
        def bad(what: str) -> LLMBadReply:
            return LLMBadReply(f"the LLM server at {self.endpoint} returned {what}; expected an "
                               "OpenAI chat completion {choices: [{message: …}]}")

        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            if isinstance(doc, dict) and doc.get("error"):
                err = doc["error"]
                msg = err.get("message") if isinstance(err, dict) else err
                raise LLMUnavailable(f"the LLM server at {self.endpoint} returned an error: "
                                     f"{one_line(str(msg))}")
            raise bad("no 'choices'")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise bad("a choice without a 'message'")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            if isinstance(content, list):  # content parts: keep the text ones
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            else:
                raise bad("a message 'content' that is not text")
        calls = []
        for n, call in enumerate(message.get("tool_calls") or []):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise bad(f"tool_calls[{n}] without a function name")
            args = fn.get("arguments")
            if isinstance(args, dict):  # some servers send an object, not a JSON string
                args = json.dumps(args)
            calls.append(ToolCall(str(call.get("id") or f"call_{n}"), fn["name"],
                                  args if isinstance(args, str) else "{}"))
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        for key in ("prompt_tokens", "completion_tokens"):
            if isinstance(usage.get(key), int):
                self.usage[key] += usage[key]
        sent: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            sent["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}}
                                  for c in calls]
        return ChatReply(content, calls, sent, choices[0].get("finish_reason"),
                         {k: v for k, v in usage.items() if isinstance(v, int)})


class _FormatRefused(Exception):
    """The server refused the response_format we asked for (auto mode tries a simpler one)."""


MAX_PROBLEMS_SHOWN = 20  # problems listed back to the model when its answer is retried


def retry_message(problems: list[str], *, rejected: str, again: str) -> str:
    """The user message that asks again after an invalid answer: what was rejected and why
    (the first ``MAX_PROBLEMS_SHOWN`` problems, one line each), then how to answer."""
    shown = problems[:MAX_PROBLEMS_SHOWN]
    more = f"\n- … and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    return (f"Your answer was rejected, {rejected}. Problems:\n"
            + "\n".join(f"- {one_line(p, 300)}" for p in shown) + more + "\n" + again)


MAX_FAILURES = 2  # transport failures in a row before a build's model pass leaves the model alone


class CheckedAsking:
    """The request loop a build's model pass shares: ask, parse the JSON answer, check all of
    it, ask once more listing the problems, else give up with one line saying why.

    ``failures`` counts transport failures in a row; after :data:`MAX_FAILURES` the pass sets
    ``disabled`` (the reason) and its later batches skip the model."""

    failures: int = 0
    disabled: str | None = None

    def ask_checked(self, messages: list[dict[str, Any]],
                    send: Callable[[list[dict[str, Any]]], ChatReply],
                    check: Callable[[Any], tuple[Any, list[str]]], *, again: str,
                    attempt: Callable[[int], None]) -> Any:
        """``check(doc)`` gives (the result, or None, and the problems); the result, or a
        string saying why there is none. ``send`` may extend ``messages`` itself (tool
        rounds); the answer's message is appended when it did not."""
        problem = ""
        for n in (1, 2):
            attempt(n)
            try:
                sent = len(messages)
                reply = send(messages)
            except LLMUnavailable as exc:
                self.failures += 1
                reason = one_line(exc.message, 300)
                if self.failures >= MAX_FAILURES:
                    self.disabled = f"the model was not reachable {self.failures} times in a row"
                    reason += "; later batches skip the model"
                return reason
            except LLMBadReply as exc:
                self.failures = 0
                errors = [exc.message]
            else:
                self.failures = 0
                if len(messages) == sent:
                    messages.append(reply.message)
                try:
                    doc = parse_json_reply(reply.content)
                except ValueError as exc:
                    errors = [str(exc)]
                else:
                    result, errors = check(doc)
                    if result is not None:
                        return result
            problem = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
            messages.append({"role": "user", "content": retry_message(
                errors, rejected="nothing was applied", again=again)})
        return f"the model's answer was invalid twice: {one_line(problem, 300)}"


def parse_json_reply(content: str | None) -> Any:
    """The JSON in a model's answer (a ```json fence around it is allowed); ValueError if none."""
    if content is None or not content.strip():
        raise ValueError("the answer is empty")
    text = content.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*?)\n?```\s*$", text, re.S)
    if fence:
        text = fence.group(1)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"the answer is not JSON ({exc.args[0] if exc.args else exc}): "
                         f"{one_line(text, 80)}") from None
