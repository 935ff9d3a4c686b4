"""One MCP tool call against `kenning serve`, printed as JSON: ``{"error": bool, "text": str}``.

    python mcp_call.py @mcp ROOT TOOL JSON_ARGS          # stdio, a local caller
    python mcp_call.py @mcp-remote ROOT TOOL JSON_ARGS   # HTTP on loopback with a token: remote

JSON_ARGS may be ``@FILE`` (the arguments read from a file) when they are too long for a
command line (over 128 KB).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio


def kenning() -> str:
    return str(Path(sys.executable).with_name("kenning"))


async def call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with client:
        result = await client.call_tool(tool, args)
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return {"error": bool(result.is_error), "text": text}


def main() -> None:
    mode, root, tool, raw = sys.argv[1:5]
    if raw.startswith("@"):  # arguments too long for a command line: read from a file
        raw = Path(raw[1:].replace("{root}", root)).read_text(encoding="utf-8")
    args = json.loads(raw)
    env = {**os.environ}
    if mode == "@mcp":
        from mcp import Client, StdioServerParameters

        client = Client(StdioServerParameters(command=kenning(), env=env,
                                              args=["-C", root, "serve", "--profile", "full"]))
        print(json.dumps(anyio.run(call, client, tool, args)))
        return
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    token = secrets.token_urlsafe(24)
    proc = subprocess.Popen(
        [kenning(), "-C", root, "serve", "--http", "--port", "0", "--host", "0.0.0.0",
         "--profile", "full"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**env, "KENNING_MCP_TOKEN": token})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if " at http://" not in line:
            raise SystemExit(f"serve did not start: {line}{proc.stderr.read()}")
        url = line.rsplit(" at ", 1)[1].strip().replace("//0.0.0.0:", "//127.0.0.1:")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=100)
        client = Client(streamable_http_client(url, http_client=http))
        print(json.dumps(anyio.run(call, client, tool, args)))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
