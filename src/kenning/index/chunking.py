"""Heading-aware chunking with exact line ranges.

A chunk is a run of whole lines, so a citation ``path#Lstart-Lend`` points at exactly what was
indexed. Chunks start at headings when the previous chunk is big enough to stand alone, aim at
about 300 words, and overlap by about 50 words so a sentence cut at a border is found from both
sides. Code blocks are not split unless they alone exceed the maximum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TARGET_WORDS = 300
MIN_WORDS = 120
OVERLAP_WORDS = 50


@dataclass(frozen=True)
class Chunk:
    """A run of lines ``start_line..end_line`` (1-based, inclusive) under ``heading``."""

    ord: int
    heading: str
    start_line: int
    end_line: int
    text: str
    words: int


def chunk_lines(
    lines: Sequence[str],
    headings: Sequence[tuple[int, int, str]],
    code_ranges: Sequence[tuple[int, int]] = (),
    *,
    target: int = TARGET_WORDS,
    minimum: int = MIN_WORDS,
    overlap: int = OVERLAP_WORDS,
) -> list[Chunk]:
    """Split a file's ``lines`` into chunks; ``headings`` are (line, level, text) triples."""
    n = len(lines)
    if n == 0:
        return []
    words = [len(line.split()) for line in lines]
    heading_at = {line: (level, text) for line, level, text in headings}
    in_code = [False] * (n + 2)
    for start, end in code_ranges:
        for i in range(max(start, 1), min(end, n) + 1):
            in_code[i] = True

    # The heading path in force at each line, e.g. "Decisions > Caching".
    path: list[tuple[int, str]] = []
    heading_path = [""] * (n + 1)
    for i in range(1, n + 1):
        if i in heading_at:
            level, text = heading_at[i]
            path = [p for p in path if p[0] < level] + [(level, text)]
        heading_path[i] = " > ".join(text for _, text in path)

    chunks: list[Chunk] = []
    start = 1
    count = 0
    i = 1
    while i <= n:
        starts_section = i in heading_at and i > start
        if starts_section and count >= minimum:
            chunks.append(_make(chunks, lines, words, heading_path, start, i - 1))
            start, count = i, 0
        count += words[i - 1]
        if count >= target and not (in_code[i] and in_code[i + 1] and count < 3 * target):
            chunks.append(_make(chunks, lines, words, heading_path, start, i))
            if i == n:
                return chunks
            # Overlap: step back over whole lines worth about `overlap` words, never to `start`.
            back, j = 0, i
            while j > start + 1 and back + words[j - 1] <= overlap and j - 1 not in heading_at:
                back += words[j - 1]
                j -= 1
            next_start = j if back else i + 1
            next_start = max(next_start, start + 1)
            start, count = next_start, sum(words[next_start - 1 : i])
        i += 1
    if start <= n:
        tail = _make(chunks, lines, words, heading_path, start, n)
        if tail.words or not chunks:
            chunks.append(tail)
    return chunks


def _make(chunks: list[Chunk], lines: Sequence[str], words: Sequence[int],
          heading_path: Sequence[str], start: int, end: int) -> Chunk:
    return Chunk(
        ord=len(chunks),
        heading=heading_path[start],
        start_line=start,
        end_line=end,
        text="\n".join(lines[start - 1 : end]),
        words=sum(words[start - 1 : end]),
    )
