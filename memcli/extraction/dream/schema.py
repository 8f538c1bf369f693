"""What dream passes around: the statements of the notes (facts), units (the facts going into
one node) and interest topics."""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.extraction.dream import voice


@dataclass
class Fact:
    """One statement of a daily note (offline extraction), with where it came from."""

    text: str
    path: str
    speaker: str = ""
    section: str = ""
    numbered: bool = False
    errand: bool = False  # said in a conversation where the user asked the assistant for a task

    def line(self) -> str:
        """The statement as a node holds it: self-contained, the user in the third person
        (extraction/dream/voice.py); another speaker keeps the "Name: " prefix."""
        return voice.statement(self.text, self.speaker)

    def source(self) -> str:
        """The line as the note wrote it ("User: I prefer tea."): what reports quote and checkpoints key."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass
class Unit:
    name: str
    bucket: str
    summary: str
    paths: list[str]
    facts: list[Fact] = field(default_factory=list)  # offline only: the statements it holds
    title: str = ""  # offline only: the subject a new node is named for ("Leiden half marathon")

    def to_json(self) -> dict:
        return {"name": self.name, "bucket": self.bucket, "summary": self.summary, "paths": self.paths}


@dataclass
class Topic:
    title: str
    reason: str
    evidence: str = ""
    keywords: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "title": self.title,
            "reason": self.reason,
            "evidence": self.evidence,
            "keywords": self.keywords,
            "paths": self.paths,
        }
