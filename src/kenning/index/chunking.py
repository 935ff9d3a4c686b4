"""Chunking by whole lines, small and heading-aware, with exact line ranges.

A chunk is the shortest run of whole lines holding about 30 words: a paragraph, a few list items,
one or two chat turns. Small chunks make precise citations (``path#Lstart-Lend`` names the
evidence, not a screenful around it) and sharp vectors (a 4-bit small model blurs a 300-word
passage into its average); they were chosen on the LoCoMo evidence-recall benchmark, where
~30-word chunks beat ~100- and ~300-word ones at every budget (docs/benchmarks.md). A heading
starts a new chunk once the current one holds 10 words; a code block is split only past 90 words;
a single long line stays whole.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

TARGET_WORDS = 30
MIN_WORDS = 10
OVERLAP_WORDS = 0


@dataclass(frozen=True)
class Chunk:
    """A run of lines ``start_line..end_line`` (1-based, inclusive) under ``heading``.

    ``heading`` is the heading path in force at the first line (what the chunk is indexed and
    embedded under); a chunk that runs past a heading lists in ``sections`` each (line, heading
    path) that starts inside it, so a line it cites is named by its own section (``heading_at``).
    """

    ord: int
    heading: str
    start_line: int
    end_line: int
    text: str
    words: int
    sections: tuple[tuple[int, str], ...] = ()


def heading_at(heading: str, sections: Sequence[Sequence[Any]] | None, line: int) -> str:
    """The heading path of ``line`` in a chunk that starts under ``heading``."""
    for start, path in sections or ():
        if start > line:
            break
        heading = str(path)
    return heading


def chunk_lines(
    lines: Sequence[str],
    headings: Sequence[tuple[int, int, str]],
    code_ranges: Sequence[tuple[int, int]] = (),
    *,
    body_start: int = 1,
    target: int = TARGET_WORDS,
    minimum: int = MIN_WORDS,
    overlap: int = OVERLAP_WORDS,
) -> list[Chunk]:
    """Split a file's ``lines`` into chunks; ``headings`` are (line, level, text) triples.

    Lines before ``body_start`` (the frontmatter) open the first chunk without counting.
    """
    n = len(lines)
    if n == 0:
        return []
    # Frontmatter lines belong to the first chunk but do not fill it: it is not evidence.
    words = [len(line.split()) if i >= body_start - 1 else 0 for i, line in enumerate(lines)]
    heading_lines = {line: (level, text) for line, level, text in headings}
    in_code = [False] * (n + 2)
    for start, end in code_ranges:
        for i in range(max(start, 1), min(end, n) + 1):
            in_code[i] = True

    # The heading path in force at each line, e.g. "Decisions > Caching".
    path: list[tuple[int, str]] = []
    heading_path = [""] * (n + 1)
    current = ""
    for i in range(1, n + 1):
        if i in heading_lines:
            level, text = heading_lines[i]
            path = [p for p in path if p[0] < level] + [(level, text)]
            current = " > ".join(text for _, text in path)
        heading_path[i] = current

    starts = sorted(heading_lines)
    chunks: list[Chunk] = []
    make = partial(_make, chunks, lines, words, heading_path, starts)
    start = 1
    count = 0
    i = 1
    while i <= n:
        starts_section = i in heading_lines and i > start
        if starts_section and count >= minimum:
            chunks.append(make(start, i - 1))
            start, count = i, 0
        count += words[i - 1]
        if count >= target and not (in_code[i] and in_code[i + 1] and count < 3 * target):
            chunks.append(make(start, i))
            if i == n:
                return chunks
            # Overlap: step back over whole lines worth about `overlap` words, never to `start`.
            back, j = 0, i
            while j > start + 1 and back + words[j - 1] <= overlap and j - 1 not in heading_lines:
                back += words[j - 1]
                j -= 1
            next_start = j if back else i + 1
            next_start = max(next_start, start + 1)
            start, count = next_start, sum(words[next_start - 1 : i])
        i += 1
    if start <= n:
        tail = make(start, n)
        if tail.words or not chunks:
            chunks.append(tail)
    return chunks


def _make(chunks: list[Chunk], lines: Sequence[str], words: Sequence[int],
          heading_path: Sequence[str], starts: Sequence[int], start: int, end: int) -> Chunk:
    return Chunk(
        ord=len(chunks),
        heading=heading_path[start],
        start_line=start,
        end_line=end,
        text="\n".join(lines[start - 1 : end]),
        words=sum(words[start - 1 : end]),
        sections=tuple((h, heading_path[h])
                       for h in starts[bisect_right(starts, start):bisect_right(starts, end)])
        if starts and starts[-1] > start else (),
    )
