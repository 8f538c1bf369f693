"""The cheap freshness check of a large vault: is the index still current, without a stat
of every file?

Stat-ing 20,000 notes costs a cold search 60-130 ms on this 2-core machine, more
than the rest of the search. So an index of more than QUICK_MIN_FILES files records,
when it is written, the mtime of every folder it walked and the stat of its HOT_FILES
most recently modified files (and MEMORY.md and single-file extra paths). A search
that finds all of them unchanged trusts the index; any difference falls back to the
full check (memcli.index.freshness). A file changed within RACY_NS of the index
time could have changed again in the same clock tick, so its content hash is
recorded and compared too; a folder changed then, its list of names. A file added, deleted, renamed or saved by replacement (as
mem and most editors save) changes its folder's mtime and is always seen; an edit
made in place to a file outside the hot set is seen by the next `mem reindex`,
write or `mem watch`, which always compare every file.
"""

from __future__ import annotations

import heapq
import os
import time

QUICK_MIN_FILES = 3_000
HOT_FILES = 1_000
RACY_NS = 2_000_000_000


def record(ws, current: dict[str, tuple[int, int]], hashes: dict[str, str], dirs: dict | None = None) -> dict | None:
    """What a later search checks (written into the manifest), or None for a small vault.
    `hashes`: sha256 of the files this update read (every racy file is among them); `dirs`:
    the folders' mtimes from the scan that gave `current` (else they are walked again)."""
    if len(current) <= QUICK_MIN_FILES:
        return None
    racy = time.time_ns() - RACY_NS
    locate = ws.resolver()
    mtimes = [st[0] for st in current.values()]
    cut = heapq.nlargest(HOT_FILES, mtimes)[-1] if len(mtimes) > HOT_FILES else 0
    hot = [p for p, st in current.items() if st[0] >= cut][:2 * HOT_FILES]  # (ties kept, bounded)
    extra = [r.file_rel() for r in ws.extra_roots() if not r.problem and r.file_rel() in current]
    files = {}
    for rel in dict.fromkeys([*hot, "MEMORY.md", *extra]):
        st = current.get(rel)
        if st is None:
            files[str(locate(rel))] = None
        elif st[0] >= racy and not hashes.get(rel):
            return None  # racy and not read by this update: nothing to compare it with
        else:
            files[str(locate(rel))] = [*st] + ([hashes[rel]] if st[0] >= racy else [])
    folders = {}
    for path, mtime in (dirs if dirs else ws.watched_dirs()).items():
        folders[path] = [mtime] + ([_listing(path)] if mtime >= racy else [])
    return {"dirs": folders, "files": files}


def _listing(path: str) -> str:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return ""
    import hashlib  # (only for a folder changed within the clock tick: 3 ms of a search's start)

    return hashlib.sha1("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def unchanged(snap) -> bool:
    """True when the recorded folders and hot files are as they were (see the docstring)."""
    rec = snap.header.get("quick")
    if not rec:
        return False
    for path, was in rec.get("dirs", {}).items():
        try:
            now = os.lstat(path).st_mtime_ns
        except OSError:
            now = -1
        if now != was[0] or (len(was) > 1 and _listing(path) != was[1]):
            return False
    for path, was in rec.get("files", {}).items():
        try:
            st = os.lstat(path)
        except OSError:
            if was is not None:
                return False
            continue
        if was is None or [st.st_mtime_ns, st.st_size] != was[:2]:
            return False
        if len(was) > 2 and _sha(path) != was[2]:
            return False
    return True


def _sha(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return ""
