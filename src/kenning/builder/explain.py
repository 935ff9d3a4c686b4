"""`kenning why`: which sources built a page, from the build's mention log, and why each alias
and email joined it."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any


def explain(root: Path, path: str) -> dict[str, Any]:
    """The `why` data: sources, rules, and the first mention behind each alias and email."""
    from kenning.builder import names as nm
    from kenning.builder import state as st
    from kenning.vault import frontmatter as fmod

    rows = st.read_log(root)
    mine = [r for r in rows if r.get("page") == path]
    per_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in mine:
        per_source[r["source"]].append(r)
    sources = [{"source": s, "first_line": min(r["line"] for r in rs),
                "rules": dict(Counter(r["rule"] for r in rs))}
               for s, rs in sorted(per_source.items())]
    text = (root / path).read_text(encoding="utf-8") if (root / path).is_file() else ""
    data = fmod.read(text).data if text else {}

    def first(match: Any) -> dict[str, Any] | None:
        for r in mine:
            if match(r):
                return {"source": r["source"], "line": r["line"], "rule": r["rule"],
                        "confidence": r["confidence"], "text": r["text"]}
        return None

    aliases = []
    raw_aliases = data.get("aliases") or []
    for a in raw_aliases if isinstance(raw_aliases, list) else [raw_aliases]:
        key = nm.fold(str(a))
        aliases.append({"value": a, "first": first(
            lambda r, key=key: nm.fold(r.get("text") or "") == key
            or nm.fold(nm.clean_display_name(r.get("text")) or "") == key)})
    emails = []
    raw_emails = data.get("emails") or []
    for e in raw_emails if isinstance(raw_emails, list) else [raw_emails]:
        low = str(e).lower()
        emails.append({"value": e, "first": first(lambda r, low=low: r.get("email") == low)})
    possibly = [{"source": r["source"], "line": r["line"], "text": r["text"], "rule": r["rule"]}
                for r in rows if not r.get("page") and path in (r.get("candidates") or [])]
    return {"page": path, "mentions": len(mine), "sources": sources, "aliases": aliases,
            "emails": emails, "possibly": possibly}
