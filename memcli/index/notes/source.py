"""A note's source conversation, indexed with the note so the note is found by what was said.

A daily note written from a conversation links it (`source_conversation:
'[[mem_session/dialog/<id>.jsonl]]'`). The note keeps the knowledge; the conversation keeps
the words people used: the question an agent asks later is often worded like the chat (what
the assistant called "a good potluck dish"), not like the statement extraction wrote. So
the messages of the note's day are chunked and indexed as chunks of the note itself, with
line 0 (no line of the note): a search that matches them shows the note
(memcli.retrieval.sources), never the transcript. On the held-out recall set, whose wording
the extraction rules never saw, it raised session R@1 after ingest from 0.478 to 0.598 and R@5
from 0.891 to 0.935 (bench/recall_eval.py, docs/evaluation.md).

The conversation is read when the note is indexed: the note and its log are written
together by ingest and remember; a log edited alone is read again at the note's next change
or `mem reindex --force`. A log that is missing, unreadable or not a session log adds
nothing; a damaged line is skipped.
"""

from __future__ import annotations

import json
import os
import re

from memcli.index.notes.chunker import Chunk, chunk_lines
from memcli.vault.session import text_of

SOURCE_LINE = 0  # the line of a source chunk: none of the note's own (those are 1-based)
MAX_BYTES = 2 * 1024 * 1024  # a longer log is read this far: a note's day is a small part of it
MAX_MESSAGES = 400
_LINK = re.compile(r"\[\[([^\]|#]+\.jsonl)(?:[|#][^\]]*)?\]\]")
_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})")


def is_source(start_line: int) -> bool:
    return start_line == SOURCE_LINE


def log_of(front_matter: dict) -> str | None:
    """The workspace path of the note's source conversation (None: it names none)."""
    m = _LINK.search(str(front_matter.get("source_conversation") or ""))
    target = m.group(1).strip() if m else ""
    if not target or target.startswith("/") or ".." in target.split("/"):
        return None
    return target


def chunks(locate, rel: str, data: bytes, front_matter: dict, target: int, overlap: int) -> list[Chunk]:
    """The source chunks of the note `rel` whose content is `data` (none when it has no readable
    source conversation, or the note holds every message word for word, as `mem remember`'s do)."""
    log = log_of(front_matter) if getattr(locate, "sources", False) else None
    if log is None:
        return []
    try:  # not through a symlink: mem follows none (it could leave the workspace)
        fd = os.open(locate(log), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            log_data = fh.read(MAX_BYTES)
    except (OSError, ValueError):
        return []
    lines = said(log_data, _DAY.search(rel), _flat(data.decode("utf-8", errors="replace")))
    if not lines:
        return []
    return [
        Chunk(SOURCE_LINE, SOURCE_LINE, c.text, 0) for c in chunk_lines(lines, 0, target, overlap) if c.text.strip()
    ]


def said(data: bytes, day: re.Match | None, note: str = "") -> list[str]:
    """One line per message, `role: text`, blank lines between; the messages dated the note's
    day when any is (a long session is cut into one note per day), else all of them; none
    whose text the note holds word for word (`note`, flattened) adds nothing to find it by."""
    records = []
    for raw in data.decode("utf-8", errors="replace").split("\n"):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and (text := text_of(rec)):
            records.append((str(rec.get("role") or rec.get("name") or ""), str(rec.get("timestamp") or ""), text))
    if day is not None and any(ts.startswith(day.group(1)) for _, ts, _ in records):
        records = [r for r in records if r[1].startswith(day.group(1))]
    out: list[str] = []
    for role, _, text in records[:MAX_MESSAGES]:
        if _flat(text) not in note:
            out += [f"{role}: " + " ".join(text.split()), ""]
    return out


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()
