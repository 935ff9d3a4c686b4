"""What a search returns: results (pages or passages), their hits, and citations to lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hit:
    """One chunk that matched, cited by the lines that hold the evidence."""

    chunk_id: int
    start_line: int
    end_line: int
    heading: str
    score: float
    snippet: str
    # None when the cited lines hold the query's words; else what found the passage instead:
    # "name" (the page's title, alias or file name), "heading" (its section heading),
    # "meaning" (the dense arm alone) or "context" (the words of the passage next to it).
    found: str | None = None


@dataclass
class Result:
    """A page that matched, with its best chunks."""

    path: str
    title: str
    type: str | None
    score: float
    hits: list[Hit] = field(default_factory=list)
    exact: bool = False
    backlinks: int = 0
    matched: list[str] = field(default_factory=list)
    explain: dict[str, Any] | None = None
    factor: float = 1.0  # what the page's evidence is worth: coverage × superseded × named date
    bonus: float = 0.0   # what the page signals add (signal_bonus), in the mode's score units

    @property
    def citation(self) -> str:
        """``path#Lstart-Lend`` of the best evidence."""
        hit = self.hits[0] if self.hits else None
        return cite(self.path, hit.start_line, hit.end_line) if hit else self.path

    @property
    def snippet(self) -> str:
        """The best evidence as one short line of text."""
        return self.hits[0].snippet if self.hits else ""

    @property
    def found(self) -> str | None:
        """How the best evidence was found, when not by the words on its lines (see Hit)."""
        return self.hits[0].found if self.hits else None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form, each item once: the page's name and type, then its evidence, each
        hit cited ``path#Lstart-Lend`` (so the page's path is in every citation, not beside it).

        Left out when they say nothing: a title that is the file name, no type, a heading's H1
        when it is the title, a heading that is the previous hit's, ``exact`` when false.
        Scores, backlinks and matched terms are ranking detail, shown with ``explain``; the
        order of results is the rank."""
        out: dict[str, object] = {} if self.hits else {"path": self.path}
        if self.title != self.path.rsplit("/", 1)[-1].removesuffix(".md"):
            out["title"] = self.title
        if self.type:
            out["type"] = self.type
        if self.exact:
            out["exact"] = True
        if self.explain is not None:
            out["explain"] = {**self.explain, "backlink_count": self.backlinks,
                              "matched": self.matched,
                              "hit_scores": [float(f"{h.score:.4g}") for h in self.hits]}
        hits: list[dict[str, object]] = []
        shown = self.title
        for hit in self.hits:
            top, _, rest = hit.heading.partition(" > ")
            heading = rest if top and top in self.title else hit.heading  # the H1 is the title
            item: dict[str, object] = {"citation": cite(self.path, hit.start_line, hit.end_line)}
            if heading and heading != shown:
                item["heading"] = heading
            shown = heading or shown
            item["snippet"] = hit.snippet
            if hit.found:  # how it was found, when not by its words
                item["found"] = hit.found
            hits.append(item)
        out["hits"] = hits
        return out


def cite(path: str, start: int, end: int) -> str:
    """A citation a person can open: ``people/sarah.md#L4-L9``."""
    return f"{path}#L{start}-L{end}"


class Results(list):  # type: ignore[type-arg]
    """Ranked results, plus how they were found (mode actually used, vector coverage, notes)."""

    mode: str = "lexical"
    coverage: tuple[int, int] | None = None
    notes: list[str]
