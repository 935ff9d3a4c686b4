"""The MCP server: ``kenning serve`` over stdio or streamable HTTP.

``trust`` holds the caller policy (who may call what, clamps, rate limits), ``tools`` the tool
table (schemas, annotations, profiles), ``mcp_server`` the server on the official ``mcp`` SDK,
``http`` the HTTP transport with its bearer-token, rate and size guards.
"""
