"""Organization names from how people write them, and which mail domains are organizations.

A page made from a mail domain is titled with the name people write for it: the words of the
domain's own label as they appear in the text of this build's sources ("Arthur Andersen" for
``arthurandersen.com``, "BC Hydro" for ``bchydro.bc.ca``, "White & Case" for
``whitecase.com``, "CAISO" for ``caiso.com``), the most frequent form, a form that splits the
label into several words first; else a readable form of the registrable domain
(:func:`~kenning.builder.names.name_from_domain`).

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

from kenning.builder import names as nm

# A word: letters and digits, with an inner & or apostrophe ("PG&E", "AT&T"); or a lone &.
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[&'][A-Za-z0-9]+)*|&")
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
            joined = first.lower().replace("&", "").replace("'", "")
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
                if not (nxt[0].isupper() or nxt in _INNER) or len(nxt) < 2:
                    break  # "B C Hydro" is not a way to write a name
                trial = joined + nxt.lower().replace("&", "").replace("'", "")
                if trial not in prefixes:
                    break
                joined = trial
                words.append(nxt)
    return out


def best_form(forms: Counter[str] | None) -> str | None:
    """The name to show from the written forms of one label: the most frequent, written in
    capitals only when it is short enough to be an acronym (CERA, PJM; "MCKINSEY" is shown
    "Mckinsey"); forms differing in case only count as one."""
    if not forms:
        return None
    by_case: dict[str, Counter[str]] = defaultdict(Counter)
    for form, n in forms.items():
        by_case[form.lower()][form] += n
    key = max(by_case, key=lambda k: (sum(by_case[k].values()), len(k.split()) > 1, k))
    variants = by_case[key]
    mixed = [f for f in variants if not f.isupper()]
    form = max(mixed or variants, key=lambda f: (variants[f], f))
    if form.isupper() and len(form.replace(" ", "").replace("&", "")) > 5:
        form = " ".join(w if w == "&" else w[:1] + w[1:].lower() for w in form.split())
    return form


def org_domain_evidence(domain_people: dict[str, set[str]], forms: dict[str, Counter[str]],
                        named_domains: set[str]) -> dict[str, bool]:
    """Per organization domain: whether it may make a page (two people, or a written name)."""
    out = {}
    for domain, people in domain_people.items():
        label = nm.registrable_label(domain).replace("-", "")
        out[domain] = len(people) >= 2 or bool(forms.get(label)) or domain in named_domains
    return out
