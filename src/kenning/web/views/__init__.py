"""One module per view; each exposes ``ROUTES`` (Starlette routes) and renders a template of the
same name through :func:`kenning.web.render.html`."""
