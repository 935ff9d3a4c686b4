"""The local web view (``kenning web``): server-rendered HTML over the ``Vault`` API.

A thin layer like the CLI and the MCP server: every view asks ``Vault`` and renders what it
says; no query of its own. ``app`` builds the Starlette app (guards, routes, errors),
``render`` the templates, filters and the Markdown renderer, ``views/`` one module per view.
Everything the browser loads (``static/``) ships in the wheel; no script a vault page carries
ever runs (the Markdown renderer drops raw HTML, and the Content-Security-Policy allows only
Kenning's own script).
"""
