"""Resource notes: `memory/<date>/<stem>.md`, named, written, removed, and their day pages tidied.

A resource note is an ordinary daily note whose frontmatter `source_resource:
'[[resource/…]]'` says which file it interprets, so the existing index, day index
and search treat it like any other note. Callers hold the workspace lock.
"""

from __future__ import annotations

import hashlib
import re

from memcli.jobs.resource.catalog import OWNER_KEY, link
from memcli.vault import atomic, notes
from memcli.vault.workspace import Workspace

MAX_STEM = 80
# characters a file name or a wikilink cannot carry safely (synced folders, Windows, [[a#b]] anchors)
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|\[\]#^]+')
_NOT_WORD = re.compile(r"[\W_]+")


def stem(rel: str) -> str:
    """The note's file stem: the resource's stem with unsafe characters replaced."""
    name = rel.rsplit("/", 1)[-1]
    base = name.rsplit(".", 1)[0] if "." in name else name
    return _UNSAFE.sub("-", base).strip(" .-")[:MAX_STEM].strip(" .-") or "resource"


def slug(rel: str) -> str:
    """The frontmatter name: the stem in kebab-case."""
    return _NOT_WORD.sub("-", stem(rel).lower()).strip("-")[:64].strip("-") or "resource"


def choose_path(ws: Workspace, day: str, rel: str, taken: set[str] | None = None) -> str:
    """A free note path: `<stem>.md`, else `<stem>--<sha1(rel)[:8]>.md`, else `…-2.md`, `…-3.md`.

    `taken` holds paths already planned in this scan (a dry run writes nothing).
    """
    taken = taken or set()
    base = stem(rel)
    hashed = f"{base}--{hashlib.sha1(rel.encode('utf-8')).hexdigest()[:8]}"
    n = 1
    candidate = base
    while True:
        path = notes.day_dir(ws, day) / f"{candidate}.md"
        if not path.exists() and ws.rel(path) not in taken:
            return ws.rel(path)
        n += 1
        candidate = hashed if n == 2 else f"{hashed}-{n - 1}"


def with_source(body: str, rel: str) -> str:
    """The body with the source link in it: after the title when the text lacks it."""
    if link(rel) in body:
        return body
    lines = body.split("\n")
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join([*lines[:at], *([""] if at else []), f"Source: {link(rel)}", *lines[at:]])


def compose(ws: Workspace, note_rel: str, rel: str, description: str, body: str) -> notes.Note:
    """The note as `write` would write it (nothing written)."""
    path = ws.root / note_rel
    note = notes.read(path) if path.exists() else notes.Note(path)
    note.meta = {
        **note.meta,
        "description": description,
        "name": note.meta.get("name") or slug(rel),
        OWNER_KEY: link(rel),
    }
    note.body = with_source(body, rel)
    return note


def write(ws: Workspace, note_rel: str, rel: str, description: str, body: str) -> tuple[str, str] | None:
    """Create or update the note; (note path, "added" | "updated"), or None when its text is unchanged."""
    existed = (ws.root / note_rel).exists()
    if not notes.write(compose(ws, note_rel, rel, description, body)):
        return None
    return note_rel, "updated" if existed else "added"


def day_of(ws: Workspace, note_rel: str) -> str:
    return note_rel.split("/")[-2]


def refresh_day(ws: Workspace, day: str, warnings: list[str] | None = None) -> list[tuple[str, str]]:
    """Rebuild the day index; a page left listing no notes and holding nothing else is removed
    (one that cannot be rewritten without loss is left as it is, named in `warnings`)."""
    page, action = notes.update_day_index(ws, day, warnings)
    if action == "kept":
        return []
    if notes.day_notes(ws, day):
        return [] if action == "unchanged" else [(ws.rel(page), action)]
    current = notes.read(page)
    rest = [x for x in current.body.split("\n") if x.strip() not in ("", notes.AUTO_OPEN, notes.AUTO_CLOSE)]
    if rest or set(current.meta) - {"name", "description"}:
        return [] if action == "unchanged" else [(ws.rel(page), action)]
    atomic.remove(page)
    try:
        notes.day_dir(ws, day).rmdir()  # only when empty: dream's interests.yaml keeps it
    except OSError:
        pass
    return [(ws.rel(page), "deleted")] if action != "added" else []
