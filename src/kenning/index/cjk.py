"""Full-text search for Chinese, Japanese and Korean text, which has no spaces between words.

FTS5's unicode61 tokenizer would index a whole CJK run as one token, so 会議 could never find
定例会議. Kenning writes every CJK run into a separate column as overlapping bigrams
(定例会議 → 定例 例会 会議) and rewrites queries the same way: a two-character word is one bigram
and matches wherever it occurs; a longer word is a phrase of consecutive bigrams. A Japanese
question is split into its words first (:func:`query_words`), so it finds the notes that hold
them, not only a note that repeats the question word for word.
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


_HIRAGANA = re.compile("[\u3040-\u309f]+")


def query_words(run: str) -> list[str]:
    """The words of one CJK run of a query, each searched on its own (any of them, like English
    terms). Japanese writes particles and verb endings in hiragana between its kanji and katakana
    words (会議の議事録を共有する方法 → 会議, 議事録, 共有, 方法), so a run that mixes them is cut
    at the hiragana, which is dropped, as are single characters left over (送る → 送) when longer
    words remain. A run of one kind (a Chinese phrase, a hiragana word, Korean) stays whole."""
    parts = [p for p in _HIRAGANA.split(run) if p]
    if not parts or parts == [run]:
        return [run]
    words = [p for p in parts if len(p) > 1]
    return words or [max(parts, key=len)]


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
