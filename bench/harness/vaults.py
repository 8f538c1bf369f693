"""A vault under evaluation: a folder of notes and the questions asked of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Question:
    qid: str
    text: str
    category: int
    evidence: list[tuple[str, int, int]]  # (vault path, first line, last line) of each evidence item

    @property
    def sessions(self) -> set[str]:
        return {e[0] for e in self.evidence}


@dataclass
class Vault:
    name: str
    root: Path
    questions: list[Question] = field(default_factory=list)
    now: str = ""  # date of the latest session: "today" for recency decay


def write_if_changed(path: Path, text: str) -> None:
    """Keep mtimes of unchanged notes, so existing indexes stay current."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
