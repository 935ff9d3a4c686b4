"""The one vocabulary: entity types, domains, relation types, statuses.

Every list is closed. Known synonyms fold into a canonical term; anything else is rejected with an
error that lists the allowed values, because an open vocabulary makes a graph unqueryable.
"""

from __future__ import annotations

import re

from kenning.errors import VocabularyError

ENTITY_TYPES: tuple[str, ...] = (
    "person",
    "organization",
    "project",
    "topic",
    "meeting",
    "decision",
    "concept",
    "finding",
    "rule",
    "open-question",
    "artifact",
    "insight",
    "task",
    "event",
    "thing",
    # Pages Kenning itself keeps, not built from sources.
    "daily",
    "source",
    "session",
    "note",
    "code",  # a source file of a code mount (kenning mount add NAME PATH --kind code)
)

ENTITY_TYPE_SYNONYMS: dict[str, str] = {
    "people": "person",
    "human": "person",
    "contact": "person",
    "org": "organization",
    "organisation": "organization",
    "company": "organization",
    "team": "organization",
    "institution": "organization",
    "initiative": "project",
    "subject": "topic",
    "theme": "topic",
    "call": "meeting",
    "adr": "decision",
    "idea": "concept",
    "question": "open-question",
    "open_question": "open-question",
    "doc": "artifact",
    "document": "artifact",
    "todo": "task",
    "daily-log": "daily",
    "journal": "daily",
    "transcript": "source",
}

# Which folder holds each entity type by default (DESIGN.md "The vault").
TYPE_FOLDERS: dict[str, str] = {
    "person": "people",
    "organization": "organizations",
    "project": "projects",
    "topic": "topics",
    "meeting": "meetings",
    "decision": "decisions",
    "concept": "concepts",
    "finding": "findings",
    "rule": "rules",
    "open-question": "questions",
    "artifact": "artifacts",
    "insight": "insights",
    "task": "tasks",
    "event": "events",
    "thing": "things",
    "daily": "memory",
    "source": "sources",
    "session": "sessions",
}
FOLDER_TYPES: dict[str, str] = {folder: t for t, folder in TYPE_FOLDERS.items()}

DOMAINS: tuple[str, ...] = (
    "work",
    "personal",
    "engineering",
    "product",
    "design",
    "research",
    "sales",
    "marketing",
    "finance",
    "operations",
    "legal",
    "people",
    "health",
    "learning",
    "general",
    # RAWThink's domains, so its agent prompts work unchanged (docs/decisions.md).
    "music",
    "history",
    "philosophy",
    "writing",
    "neuroscience",
    "galaxy",
)

DOMAIN_SYNONYMS: dict[str, str] = {
    "eng": "engineering",
    "tech": "engineering",
    "business": "work",
    "ops": "operations",
    "hr": "people",
    "recruiting": "people",
    "money": "finance",
    "private": "personal",
    "life": "personal",
    "science": "research",
    "education": "learning",
    "misc": "general",
    "software": "engineering",
    "neuro": "neuroscience",
}

RELATION_TYPES: tuple[str, ...] = (
    "works_at",
    "founded",
    "invested_in",
    "advises",
    "attended",
    "member_of",
    "part_of",
    "depends_on",
    "supports",
    "contradicts",
    "supersedes",
    "evolved_into",
    "caused_by",
    "enables",
    "exemplifies",
    "informs",
    "uses",
    "investigates",
    "reports_to",
    "owns",
    "decided",
    "related_to",
    "mentions",
)

RELATION_SYNONYMS: dict[str, str] = {
    "connected_to": "related_to",
    "relates_to": "related_to",
    "related": "related_to",
    "see_also": "related_to",
    "aspect_of": "part_of",
    "belongs_to": "part_of",
    "component_of": "part_of",
    "employed_by": "works_at",
    "works_for": "works_at",
    "employee_of": "works_at",
    "cofounded": "founded",
    "co_founded": "founded",
    "founder_of": "founded",
    "invests_in": "invested_in",
    "investor_in": "invested_in",
    "advisor_to": "advises",
    "advisor_of": "advises",
    "participated_in": "attended",
    "attendee_of": "attended",
    "requires": "depends_on",
    "needs": "depends_on",
    "backs": "supports",
    "refutes": "contradicts",
    "conflicts_with": "contradicts",
    "replaces": "supersedes",
    "became": "evolved_into",
    "because_of": "caused_by",
    "example_of": "exemplifies",
    "instance_of": "exemplifies",
    "influences": "informs",
    "uses_tool": "uses",
    "built_with": "uses",
    "researches": "investigates",
    "studies": "investigates",
    "manager": "reports_to",
    "owner_of": "owns",
    "mentioned": "mentions",
    "references": "mentions",
    "links_to": "mentions",
}

FACT_STATUSES: tuple[str, ...] = ("active", "superseded", "invalidated")
EPISTEMIC_STATUSES: tuple[str, ...] = ("assertion", "hypothesis", "speculation", "unknown")
EPISTEMIC_DEFAULT = "unknown"
RETAIN_KINDS: dict[str, str] = {
    "W": "world fact",
    "B": "experience",
    "O": "opinion",
    "S": "summary",
}
LINK_KINDS: tuple[str, ...] = ("wikilink", "markdown", "frontmatter", "fact", "manual")

_SEPARATORS = re.compile(r"[\s\-]+")


def _key(value: str, *, keep_hyphen: bool = False) -> str:
    text = value.strip().lower()
    return _SEPARATORS.sub("-" if keep_hyphen else "_", text)


def _fold(value: str, allowed: tuple[str, ...], synonyms: dict[str, str], what: str,
          *, keep_hyphen: bool = False) -> str:
    key = _key(value, keep_hyphen=keep_hyphen)
    if key in allowed:
        return key
    alt = key.replace("_", "-") if keep_hyphen else key.replace("-", "_")
    for candidate in (key, alt):
        if candidate in allowed:
            return candidate
        if candidate in synonyms:
            return synonyms[candidate]
    raise VocabularyError(
        f"unknown {what} {value!r}; allowed: {', '.join(allowed)}", field=what, value=value
    )


def entity_type(value: str) -> str:
    """Canonical entity type for ``value`` (synonyms folded) or raise VocabularyError."""
    return _fold(value, ENTITY_TYPES, ENTITY_TYPE_SYNONYMS, "entity type", keep_hyphen=True)


def domain(value: str) -> str:
    """Canonical domain for ``value`` or raise VocabularyError."""
    return _fold(value, DOMAINS, DOMAIN_SYNONYMS, "domain", keep_hyphen=True)


def relation(value: str) -> str:
    """Canonical relation type for ``value`` (e.g. employed_by → works_at) or raise."""
    return _fold(value, RELATION_TYPES, RELATION_SYNONYMS, "relation type")


def fact_status(value: str) -> str:
    """Canonical fact status (active | superseded | invalidated) or raise."""
    return _fold(value, FACT_STATUSES, {"current": "active", "replaced": "superseded",
                                         "retracted": "invalidated", "invalid": "invalidated"},
                 "fact status")


def epistemic(value: str) -> str:
    """Canonical epistemic status (assertion | hypothesis | speculation | unknown) or raise."""
    return _fold(value, EPISTEMIC_STATUSES, {"fact": "assertion", "asserted": "assertion",
                                              "guess": "speculation", "maybe": "hypothesis"},
                 "epistemic status")


def is_relation(value: str) -> bool:
    """True when ``value`` names a relation type or a known synonym of one."""
    try:
        relation(value)
    except VocabularyError:
        return False
    return True
