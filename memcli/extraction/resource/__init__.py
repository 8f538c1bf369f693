"""Resource extraction: an external file read (data.py), summarised offline
(digest.py) or interpreted by an LLM (llm.py) into a daily note's text. The offline
summary of every format is a Digest, defined here so that the format readers and the
dispatcher in digest.py import it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Digest:
    kind: str  # "Markdown", "CSV", ...
    title: str
    facts: str = ""  # one line: "240 rows × 4 columns"
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    problem: str | None = None  # why the file was read as plain text instead (bad JSON, ...)
