"""A search hit: one chunk (or several merged chunks of one file) with its scores."""

from __future__ import annotations

from dataclasses import dataclass, field

# the line text output prints under a note found through its source conversation
VIA_SOURCE = "Matched: the conversation this note was written from (its source_conversation)"


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    vector: float | None = None
    keyword: float | None = None
    docs: list[int] = field(default_factory=list)
    links: dict = field(default_factory=dict)
    # what holds the value of a statement in these lines now (memcli.retrieval.currency), or None
    superseded_by: dict | None = None
    # found through the note's source conversation, not its own lines (memcli.retrieval.sources)
    via_source: bool = False

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_json(self, citations: bool = False, max_chars: int | None = None) -> dict:
        out = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "text": clip(self.text, max_chars),
            "score": self.score,
            "vector": self.vector,
            "keyword": self.keyword,
            "links": self.links,
            "superseded_by": self.superseded_by,
            "via_source": self.via_source,
        }
        if max_chars is not None:
            out["truncated"] = len(self.text) > max_chars
        if citations:
            out["citation"] = self.citation
        return out

    @property
    def superseded_line(self) -> str:
        """The one line text output prints under a hit holding a superseded statement."""
        s = self.superseded_by
        return f"Superseded: {s['text']} ({s['path']}, {s['date']})" if s else ""


def clip(text: str, max_chars: int | None) -> str:
    """A snippet cut to at most max_chars characters, ending in '…' when cut.

    The cut falls after the last whole word when one ends in the final fifth (text
    without spaces, such as Chinese, is cut exactly).
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= 0.8 * len(cut):
        cut = cut[:space]
    return cut.rstrip() + "…"
