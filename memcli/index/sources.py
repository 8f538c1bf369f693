"""Conversation logs as what an indexed note depends on (memcli.index.notes.source).

A note indexed with its source conversation must be read again when the log changes while
the note does not (ingest appends messages without writing a note until its trigger; a crash
can fall between the two writes), or an update would keep what a clean build no longer reads.
A log whose mtime is at or after the index's clock tick makes the notes linking it stale.
In a vault large enough for the quick freshness check (memcli.index.quick: folder mtimes and
recent notes) a search does not stat the logs, so a log changed alone is read at the next
sync (`mem reindex`, ingest, remember, `mem watch`), not before that search.
"""

from __future__ import annotations

import os
from pathlib import Path

from memcli.index.notes.source import log_of
from memcli.vault.workspace import Workspace
from memcli.watch.stamps import RACY_NS


def notes_of_changed_logs(ws: Workspace, snap) -> set[str]:
    """The indexed notes whose source conversation changed since `snap` was written."""
    if snap is None or not ws.settings.search.source_conversations:
        return set()
    since = snap.header.get("indexed_at_ns", 0) - RACY_NS
    try:
        entries = list(os.scandir(ws.sessions))
    except OSError:
        return set()
    changed = set()
    for e in entries:
        try:
            if e.name.endswith(".jsonl") and e.stat(follow_symlinks=False).st_mtime_ns >= since:
                changed.add(ws.rel(Path(e.path)))
        except OSError:
            continue
    if not changed:
        return set()
    out = set()
    for i, path in enumerate(snap.paths):
        fm = snap.record(i).get("fm") or {}
        if isinstance(fm, dict) and log_of(fm) in changed:
            out.add(path)
    return out
