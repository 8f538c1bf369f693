"""A sync's view of the vault from the change journal of a running `mem watch`, without a walk.

Only the files and folders the watcher journaled since the index's mark are looked at
(memcli.watch.journal); a journaled folder is walked again, a journaled file stat-ed.
Whichever way the vault was seen, the indexed files below a folder that cannot be read
stay as indexed (keep_unreadable).
"""

from __future__ import annotations

import os

from memcli.vault.workspace import Workspace
from memcli.watch import journal


def since(ws: Workspace, old, known: dict, now) -> tuple[dict, dict | None, set, list] | None:
    """(every indexed file's stat, the folders' mtimes for the quick record, the paths the
    journal names, what the walks of journaled folders went round) from the index and what
    the watcher journaled since its mark, without a walk; None: walk instead.
    A folder's mtime is taken before the stats below it, as a walk does."""
    got = journal.since(ws.metadata, old.header.get("watch"), now)
    if got is None:
        return None
    files, folders = got
    walked: list[tuple[str, str]] = []
    current = dict(known)
    rec = (old.header.get("quick") or {}).get("dirs")
    dirs = {p: v[0] for p, v in rec.items()} if isinstance(rec, dict) else None
    named = set(files)
    if folders:
        cuts = tuple(f + "/" for f in folders)
        for rel in [r for r in current if r in folders or r.startswith(cuts)]:
            del current[rel]
            named.add(rel)
        for folder in sorted(folders):
            top = str(ws.locate(folder))
            had = dirs is not None and top in dirs
            if dirs is not None:
                for p in [p for p in dirs if p == top or p.startswith(top + os.sep)]:
                    del dirs[p]
                if os.path.dirname(top) in dirs:  # it came or went from there
                    dirs[os.path.dirname(top)] = _mtime(os.path.dirname(top))
            found = dict(ws.watched_under(folder, dirs, walked))
            current.update(found)
            named.update(found)
            if had and dirs is not None and top not in dirs:  # a watched root gone: recorded missing, as a walk does
                dirs[top] = _mtime(top)
    for rel in files:
        if dirs is not None:
            parent = os.path.dirname(str(ws.locate(rel)))
            if parent in dirs:
                dirs[parent] = _mtime(parent)
        st = ws.watched_stat(rel)
        if st is None:
            current.pop(rel, None)
        else:
            current[rel] = st
    keep_unreadable(current, known, walked)
    return current, dirs, named, walked


def keep_unreadable(current: dict, known: dict, problems: list[tuple[str, str]]) -> None:
    """The indexed files below a folder that cannot be read now stay as they were indexed, as
    an unreadable file's do: a folder made unreadable for a moment (a permission change, a
    root-owned copy) does not empty the index of its notes."""
    cuts = tuple(p for p, _ in problems if p.endswith("/"))
    if cuts:
        current.update((p, st) for p, st in known.items() if p.startswith(cuts) and p not in current)


def _mtime(folder: str) -> int:
    try:
        return os.lstat(folder).st_mtime_ns
    except OSError:
        return -1
