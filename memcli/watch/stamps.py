"""Stamps of folders and files: what they looked like, and whether they still do, with no
content read unless it changed within the clock tick.

A folder's stamp is its mtime_ns: a file added, deleted, renamed or saved by replacement
(as mem and most editors save) in it moves that. A file's is its (mtime_ns, size). Either
can change again within the filesystem's clock tick without the stamp moving (git's "racy"
entries), so one stamped within RACY_NS of the observation also records the folder's list of
names or the file's sha256, compared too. Which folders and files are worth stamping is the
caller's policy (memcli.index.quick: the folders a search's index walked and its most
recently modified files); this module only takes and checks the stamps.
"""

from __future__ import annotations

import os

RACY_NS = 2_000_000_000  # the one clock-tick margin (also memcli.index.sync's and the resource catalog's)


def take(files: dict[str, tuple[tuple[int, int] | None, str]], dirs: dict[str, int], racy_from: int) -> dict | None:
    """The stamps of `files` (absolute path -> ((mtime_ns, size) as observed or None when it
    is absent, the sha256 of the content read then or "")) and `dirs` (absolute folder ->
    mtime_ns, -1 when absent). `racy_from`: RACY_NS before the observation began. None when a
    racy file's content was not read: there is nothing to compare it with."""
    stamped: dict[str, list | None] = {}
    for path, (st, sha) in files.items():
        if st is None:
            stamped[path] = None
        elif st[0] >= racy_from and not sha:
            return None
        else:
            stamped[path] = [*st] + ([sha] if st[0] >= racy_from else [])
    folders = {}
    for path, mtime in dirs.items():
        folders[path] = [mtime] + ([_listing(path)] if mtime >= racy_from else [])
    return {"dirs": folders, "files": stamped}


def unchanged(rec: dict) -> bool:
    """True when every folder and file of `rec` (a take()) is as it was."""
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


def _listing(path: str) -> str:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return ""
    import hashlib  # (only for a folder changed within the clock tick: 3 ms of a search's start)

    return hashlib.sha1("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _sha(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return ""
