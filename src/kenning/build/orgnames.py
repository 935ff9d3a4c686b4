"""Organization names from how people write them, and which mail domains are organizations.

A page made from a mail domain is titled with the name people write for it: the words of the
domain's own label as they appear in the text of this build's sources ("Arthur Andersen" for
``arthurandersen.com``, "BC Hydro" for ``bchydro.bc.ca``, "White & Case" for
``whitecase.com``, "CAISO" for ``caiso.com``), the most frequent form, a form that splits the
label into several words first; else a readable form of the registrable domain
(:func:`~kenning.build.names.name_from_domain`).

A domain becomes an organization page only with evidence that it is one: two people write
from it (or are written to there), or its name is written somewhere (the text, a signature,
an existing page). One person's address at a domain nobody names is as likely an internet
provider's as a company's (``maui.net``, ``c-zone.net``): that person's page keeps the
address, and no organization is guessed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from kenning.build import names as nm

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|&")
# Lower-case words that may sit inside a written name ("Bank of America").
_INNER = frozenset({"of", "and", "the", "de", "&"})
MAX_WORDS = 4


def written_forms(texts: Iterable[str], labels: Iterable[str]) -> dict[str, Counter[str]]:
    """For each label (a registrable label, hyphens removed), the capitalized word sequences
    of the texts whose letters, joined, are that label: ``arthurandersen`` ← "Arthur
    Andersen", ``whitecase`` ← "White & Case", ``calpine`` ← "Calpine"."""
    wanted = {x.replace("-", "").lower() for x in labels if len(x.replace("-", "")) >= 3}
    prefixes = {w[:i] for w in wanted for i in range(1, len(w) + 1)}
    out: dict[str, Counter[str]] = defaultdict(Counter)
    if not wanted:
        return out
    for text in texts:
        tokens = _TOKEN.findall(text)
        for i, first in enumerate(tokens):
            if not first[0].isupper():
                continue
            joined = first.lower()
            if joined not in prefixes:
                continue
            words = [first]
            j = i
            while True:
                if joined in wanted and words[-1] not in _INNER:
                    out[joined][" ".join(words)] += 1
                j += 1
                if j >= len(tokens) or len(words) >= MAX_WORDS:
                    break
                nxt = tokens[j]
                if nxt == "&":
                    words.append(nxt)
                    continue
                if not (nxt[0].isupper() or nxt in _INNER):
                    break
                trial = joined + nxt.lower()
                if trial not in prefixes:
                    break
                joined = trial
                words.append(nxt)
    return out


def best_form(forms: Counter[str] | None) -> str | None:
    """The name to show from the written forms of one label: one that splits the label into
    words beats one that does not, then the most frequent, then not shouting."""
    if not forms:
        return None
    return max(forms, key=lambda f: (len(f.split()) > 1, forms[f], not f.isupper(), f))


def org_domain_evidence(domain_people: dict[str, set[str]], forms: dict[str, Counter[str]],
                        named_domains: set[str]) -> dict[str, bool]:
    """Per organization domain: whether it may make a page (two people, or a written name)."""
    out = {}
    for domain, people in domain_people.items():
        label = nm.registrable_label(domain).replace("-", "")
        out[domain] = len(people) >= 2 or bool(forms.get(label)) or domain in named_domains
    return out
