"""Index-layer queries: one module per area, portable SQL through a :class:`Store`."""
