"""Agent memory: the write path (record, decide, revise, invalidate, retain, note, delete),
bi-temporal facts, sessions with handoff, and reflect.

One implementation behind the Python API (``kenning.api.Vault``), the CLI and the MCP server.
Every call returns a JSON-ready dict; every write is validated as a whole first (one
``MemoryError_`` — a ``KenningError`` — lists every problem, and nothing is written), then applied
under the vault write lock (``.kenning/write.lock``) with atomic file writes, then indexed
incrementally so recall sees it at once.

Signatures (``Vault`` methods; the same names exist as functions here taking a
:class:`kenning.memory.common.Context` first: the vault root, the index store and config, and the
write's follow-ups, so nothing here imports ``kenning.api``):

    record(entities=None, relations=None, observations=None, *, trusted=True) -> dict
        entities:     [{name, type, domain?, aliases?: [str], summary?,
                        observations?: [str | {text, valid_from?, valid_to?, epistemic?,
                                               confidence?, source?}]}]
        relations:    [{from, rel, to, valid_from?, valid_to?, source?}]
        observations: [{entity, text, valid_from?, valid_to?, epistemic?, confidence?, source?}]
        -> {"created": [path], "updated": [path],
            "facts": [{"entity", "path", "id": "f3", "citation": "path#L12-L12", "text"}]}

    record_decision(name, domain, decided, because, rejected=None, *, date=None, source=None)
        rejected: [{option, why}]
        -> {"path", "title", "created": True,
            "citations": {"decided", "because", "rejected": [{"option", "why", "citation"}]}}

    revise(entity, observation, new_text=None, *, superseded_by=None, superseding_entity=None,
           valid_from=None, source=None, epistemic=None, confidence=None, trusted=True) -> dict
        observation: the fact's text (exact, or a unique case-insensitive substring) or its
        block id ("^f3" / "f3"). The old line stays, [status:: superseded] [expired:: today]
        [by:: [[stem#^fN]]]; the new fact gets a new id.
        -> {"path", "old": {"id", "citation"}, "new": {"id", "citation"}}

    invalidate(entity, observation, *, reason, source=None) -> dict
        -> {"path", "id", "citation"}

    retain(kind, text, entities=None, confidence=None) -> dict     # kind in W|B|O|S
        appends "- K(c=..) @Name: text" to today's memory/YYYY-MM-DD.md ## Retain
        -> {"path", "line", "citation"}

    note(text, *, title=None) -> dict                           # notes/YYYY-MM-DD Title.md
        -> {"path", "citation"}

    delete(ref, *, trusted=True) -> dict        # pages Kenning created; refused when not trusted
        -> {"deleted": path}

    session_start(project=None, *, budget=2000) -> dict
        -> {"project", "memory": str, "handoff": {"path", "text"} | None,
            "changed": [{"path", "title", "updated"}], "tokens": int, "text": str}

    session_close(transcript, *, project=None, summary=None) -> dict
        transcript: str, or [{"role", "content"}]
        -> {"project", "transcript": path, "handoff": path, "decisions": [...],
            "retained": [...], "todos": [{"text", "from"}], "changes": [journal entries],
            "errors": [str]}      # a marker that cannot be written is listed, not fatal

    reflect(since="7d", *, apply=True) -> dict
        -> {"folded": [{"from": "memory/D.md#L7", "to": path}], "confidence": [...],
            "summaries": [path], "proposed": "memory.proposed.md" | None, "skipped": [..]}

    facts(entity, *, as_of=None, believed_on=None, history=False)
        -> {"entity", "path", "as_of", "believed_on", "facts": [{..., "status_then",
            "citation"}]}
        as_of: what was true in the world on that day (valid_from <= D <= valid_to);
        believed_on: what Kenning believed on that day (recorded <= D < expired).

Writes reach only pages Kenning created (``.kenning/created.json``) and the owned sections of
typed entity pages; a person's own note is read, never written: a relation from it is kept in
``.kenning/manual-links.jsonl`` (result key ``links``), an observation on it, a revision of its
facts or deleting it is refused (see docs/decisions.md).

Every write takes ``trusted`` (default True). Untrusted (remote) callers may not write links
in free text, may cite as ``source`` only pages that exist, and cannot delete.
Every write result also has ``indexed`` (and ``note`` when indexing had to wait).

Fact lines carry two more inline fields besides the format's ``from``/``to``:
``[recorded:: YYYY-MM-DD]`` (when Kenning learned it) and ``[expired:: YYYY-MM-DD]`` (when it
was superseded or invalidated).
"""
