"""A scripted OpenAI-compatible chat server on loopback, for tests of the optional LLM path.

``POST /v1/chat/completions`` answers from ``script``, a FIFO: each entry is a reply (see the
helpers :func:`answer`, :func:`tool_call`, :func:`http_error`, :func:`slow`) or a callable
``(body) -> reply`` that can look at the request (e.g. to answer every mention id it was sent).
When the script is empty the server answers HTTP 500. ``GET /v1/models`` lists ``model``.
Every request is recorded (path, headers, parsed body) so tests can assert on what was sent.
With ``key`` set, a request without ``Authorization: Bearer <key>`` gets HTTP 401; with
``json_schema=False`` a request asking for ``response_format: json_schema`` gets HTTP 400, the
way servers without structured output answer.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]
Script = list[Reply | Callable[[dict[str, Any]], Reply]]


def answer(content: str | dict[str, Any] | list[Any]) -> Reply:
    """An assistant message with this content (a dict or list is sent as JSON text)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return {"kind": "message", "message": {"role": "assistant", "content": text}}


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Reply:
    """An assistant message calling one tool."""
    return {"kind": "message", "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}]}}


def http_error(status: int, message: str = "scripted error") -> Reply:
    return {"kind": "error", "status": status, "message": message}


def slow(seconds: float, then: Reply | None = None) -> Reply:
    """Wait before answering (longer than the client's timeout: a timeout)."""
    return {"kind": "slow", "seconds": seconds, "then": then or answer("{}")}


def _system(body: Any) -> str | None:
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        return messages[0].get("content")
    return None


class ChatServer:
    def __init__(self, *, key: str | None = None, model: str = "test-chat",
                 json_schema: bool = True) -> None:
        self.key = key
        self.model = model
        self.json_schema = json_schema
        self.script: Script = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with server.lock:
                    server.requests.append({"method": "GET", "path": self.path,
                                            "headers": dict(self.headers), "body": None})
                if self.path != "/v1/models":
                    return server.send(self, 404, {"error": {"message": f"no route {self.path}"}})
                if not server.authorized(self):
                    return server.send(self, 401, {"error": {"message": "invalid api key"}})
                server.send(self, 200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "owned_by": "test"}]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server.lock:
                    server.requests.append({"method": "POST", "path": self.path,
                                            "headers": dict(self.headers), "body": body})
                server.handle(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that gave up
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    # -- recording -------------------------------------------------------------------------------

    def chats(self, system: str | None = None) -> list[dict[str, Any]]:
        """Bodies of the chat completion requests, in order (with ``system``: only those whose
        first message is that system prompt — one stage's requests when several use the model
        in one build)."""
        return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions"
                and (system is None or _system(r["body"]) == system)]

    # -- answering -------------------------------------------------------------------------------

    def authorized(self, h: BaseHTTPRequestHandler) -> bool:
        return self.key is None or h.headers.get("Authorization") == f"Bearer {self.key}"

    @staticmethod
    def send(h: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass  # the client timed out and left

    def handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        if h.path != "/v1/chat/completions":
            return self.send(h, 404, {"error": {"message": f"no route {h.path}"}})
        if not self.authorized(h):
            return self.send(h, 401, {"error": {"message": "invalid api key"}})
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self.send(h, 400, {"error": {"message": "expected {model, messages}"}})
        fmt = body.get("response_format") or {}
        if not self.json_schema and fmt.get("type") == "json_schema":
            return self.send(h, 400, {"error": {"message": "response_format json_schema is "
                                                           "not supported"}})
        with self.lock:
            step = self.script.pop(0) if self.script else None
        if step is None:
            return self.send(h, 500, {"error": {"message": "the script is empty"}})
        reply = step(body) if callable(step) else step
        if reply["kind"] == "slow":
            time.sleep(reply["seconds"])
            reply = reply["then"]
        if reply["kind"] == "error":
            return self.send(h, reply["status"], {"error": {"message": reply["message"]}})
        message = reply["message"]
        self.send(h, 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if isinstance(message, dict)
                         and message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
