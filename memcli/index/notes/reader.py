"""Read one indexed Markdown file into what the index keeps: frontmatter, links, chunks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from memcli.index.notes.chunker import Chunk, chunk_lines
from memcli.vault import frontmatter
from memcli.vault import wikilinks as linkmod

MAX_NOTE_BYTES = 10 * 1024 * 1024


@dataclass
class ParsedNote:
    sha: str
    front_matter: dict = field(default_factory=dict)
    links: list[list[str]] = field(default_factory=list)  # [target_path, target_anchor]
    chunks: list[Chunk] = field(default_factory=list)
    problem: str | None = None  # why the file is not (fully) indexed
    skipped: bool = False


def read_note(rel: str, data: bytes, target: int, overlap: int, sha: str | None = None) -> ParsedNote:
    """`sha`: the sha256 of `data` when the caller has it already."""
    sha = sha or hashlib.sha256(data).hexdigest()
    if len(data) > MAX_NOTE_BYTES:
        return ParsedNote(sha, problem="larger than 10 MiB", skipped=True)
    if b"\0" in data[:8192]:
        return ParsedNote(sha, problem="binary content", skipped=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1  # (worded as resource scan and dream word it)
        return ParsedNote(sha, problem=f"not valid UTF-8 (line {line}, byte {exc.start})", skipped=True)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    fm_src, fm_lines = frontmatter.split(text)
    fm, problem = frontmatter.parse(fm_src)
    body = lines[fm_lines:]
    note = ParsedNote(sha, front_matter=fm, problem=problem)
    note.links = [[ln["target_path"], ln["target_anchor"]] for ln in linkmod.extract(rel, body)]
    note.chunks = chunk_lines(_without_generated(lines) if AUTO_OPEN in text else lines, fm_lines, target, overlap)
    return note


AUTO_OPEN, AUTO_CLOSE = "<!-- notes:auto -->", "<!-- /notes:auto -->"


def _without_generated(lines: list[str]) -> list[str]:
    """Blank the generated list of a day index page (between the notes:auto markers).

    It repeats every note's name and description, so indexing it as text makes
    the day page outrank the notes themselves; its wikilinks still enter the graph,
    so the page still shows up as an inlink of each note.
    """
    out, inside = [], False
    for line in lines:
        s = line.strip()
        if s == AUTO_OPEN:
            inside = True
            out.append("")
        elif s == AUTO_CLOSE:
            inside = False
            out.append("")
        else:
            out.append("" if inside else line)
    return out
