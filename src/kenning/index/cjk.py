"""Full-text search for Chinese, Japanese and Korean text, which has no spaces between words.

FTS5's unicode61 tokenizer would index a whole CJK run as one token, so 会議 could never find
定例会議. Kenning writes every CJK run into a separate column as overlapping bigrams
(定例会議 → 定例 例会 会議) and rewrites queries the same way: a two-character word is one bigram
and matches wherever it occurs; a longer word is a phrase of consecutive bigrams.
"""

from __future__ import annotations

import re

# Han, Hiragana, Katakana (incl. half-width and the prolonged sound mark), Hangul.
_CJK = (
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff66-\uff9f\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\u30fc\u3005\u3006\u3007"
)
CJK_RUN = re.compile(f"[{_CJK}]+")
HAS_CJK = re.compile(f"[{_CJK}]")


def bigrams(run: str) -> list[str]:
    """Overlapping bigrams of one CJK run; a single character stays as it is."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_column(text: str) -> str:
    """The text for the ``cjk`` FTS column: bigrams of every CJK run, runs separated by newlines."""
    if not HAS_CJK.search(text):
        return ""
    return "\n".join(" ".join(bigrams(run)) for run in CJK_RUN.findall(text))


def split_query(query: str) -> tuple[list[str], str]:
    """Split a query into its CJK runs and the rest of the text (CJK removed)."""
    runs = CJK_RUN.findall(query)
    rest = CJK_RUN.sub(" ", query) if runs else query
    return runs, rest


def run_to_fts(run: str) -> str:
    """The FTS5 expression for one CJK run: a phrase of its bigrams, or a prefix for one char."""
    if len(run) == 1:
        return f'"{run}"*'
    return '"' + " ".join(bigrams(run)) + '"'
