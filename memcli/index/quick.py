"""The cheap freshness check of a large vault: is the index still current, without a stat
of every file?

Stat-ing 20,000 notes costs a cold search 60-130 ms on this 2-core machine, more
than the rest of the search. So an index of more than QUICK_MIN_FILES files records,
when it is written, the mtime of every folder it walked and the stat of its HOT_FILES
most recently modified files (and MEMORY.md and single-file extra paths). A search
that finds all of them unchanged trusts the index; any difference falls back to the
full check (memcli.index.freshness). The stamps themselves, and why a file or folder
changed within the clock tick also records its hash or its names, are memcli.watch.stamps;
this module is the index's policy: when to keep them, which files, where. A file added,
deleted, renamed or saved by replacement (as mem and most editors save) changes its folder's
mtime and is always seen; an edit made in place to a file outside the hot set is seen by the
next `mem reindex`, write or `mem watch`, which always compare every file.
"""

from __future__ import annotations

import heapq
import time

from memcli.watch import stamps

QUICK_MIN_FILES = 3_000
HOT_FILES = 1_000


def record(ws, current: dict[str, tuple[int, int]], hashes: dict[str, str], dirs: dict | None = None) -> dict | None:
    """What a later search checks (written into the manifest), or None for a small vault.
    `hashes`: sha256 of the files this update read (every racy file is among them); `dirs`:
    the folders' mtimes from the scan that gave `current` (else they are walked again)."""
    if len(current) <= QUICK_MIN_FILES:
        return None
    racy_from = time.time_ns() - stamps.RACY_NS
    locate = ws.resolver()
    mtimes = [st[0] for st in current.values()]
    cut = heapq.nlargest(HOT_FILES, mtimes)[-1] if len(mtimes) > HOT_FILES else 0
    hot = [p for p, st in current.items() if st[0] >= cut][: 2 * HOT_FILES]  # (ties kept, bounded)
    extra = [r.file_rel() for r in ws.extra_roots() if not r.problem and r.file_rel() in current]
    files = {
        str(locate(rel)): (current.get(rel), hashes.get(rel) or "")
        for rel in dict.fromkeys([*hot, "MEMORY.md", *extra])
    }
    return stamps.take(files, dirs if dirs else ws.watched_dirs(), racy_from)


def unchanged(snap) -> bool:
    """True when the recorded folders and hot files are as they were (see the docstring)."""
    rec = snap.header.get("quick")
    return bool(rec) and stamps.unchanged(rec)
