"""Extraction: what is worth remembering from a conversation, as a daily note.

Two backends behind one interface: an LLM (prompts.py, validate.py, llm.py) and
an offline rule-based extractor (rules.py). Both take a Request and return a
Draft, or None when nothing is worth remembering.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Existing:
    """The session's note of that day, as it is now."""

    name: str
    description: str
    body: str


@dataclass
class Request:
    messages: list[dict]  # session-log records not extracted yet, in time order
    day: str
    session_id: str
    existing: Existing | None = None
    context: list[dict] = field(default_factory=list)  # earlier records of the session, for reference


@dataclass
class Draft:
    """A new note (name, description, body) or, for an existing one, its complete updated body."""

    name: str
    description: str
    body: str
    errand: bool = False  # the chat only asked the assistant for something (rules.read)
