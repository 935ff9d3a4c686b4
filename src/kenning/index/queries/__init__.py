"""The index layer's queries, one module per area (recall, graph, memory, health, pages).

Every function takes a :class:`kenning.index.store.Store` and returns plain Python values
(tuples, dicts, dataclasses). The SQL here is portable (see ``store/base.py``); what differs
between the engines is a ``Store`` method. Nothing above ``kenning.index`` writes SQL: it calls
these.
"""
