"""A search query parsed: terms (stopwords dropped), quoted phrases and CJK words.

:meth:`Query.text_query` gives the structured full-text query the store matches
(:class:`kenning.index.store.base.TextQuery`); no engine syntax is built here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.index.cjk import query_words, split_query
from kenning.index.store.base import TextQuery

STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have how i if in into is it its
    me my of on or our so that the their them then there these they this to was we were what when
    where which who whom why will with you your about tell show find""".split()
)


_TOKEN = re.compile(r"[\w]+(?:[.'’][\w]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$")  # "Sarah's" asks about Sarah: the term is "sarah"
_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class Query:
    """A parsed query: plain terms, phrases and CJK runs."""

    terms: tuple[str, ...]
    phrases: tuple[str, ...]
    cjk: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """True when nothing searchable is left."""
        return not (self.terms or self.phrases or self.cjk)

    def text_query(self, *, all_terms: bool = False) -> TextQuery:
        """The query as the store matches it: any term (default) or every term."""
        return TextQuery(self.terms, self.phrases, self.cjk, all_terms)

    @property
    def size(self) -> int:
        """How many separate things the query asks for."""
        return len(self.terms) + len(self.phrases) + len(self.cjk)


def parse_query(text: str) -> Query:
    """Split user text into terms (stopwords dropped unless nothing else is left)."""
    phrases = tuple(p.strip() for p in _PHRASE.findall(text) if p.strip() and '"' not in p)
    rest = _PHRASE.sub(" ", text)
    runs, rest = split_query(rest)
    tokens = [_POSSESSIVE.sub("", t.casefold()) for t in _TOKEN.findall(rest)]
    terms = [t for t in tokens if t not in STOPWORDS] or tokens
    seen: dict[str, None] = dict.fromkeys(terms)
    clean_phrases = tuple(" ".join(_TOKEN.findall(p)) for p in phrases)
    words = [w for run in runs for w in query_words(run)]
    return Query(tuple(seen), tuple(p for p in clean_phrases if p), tuple(dict.fromkeys(words)))
