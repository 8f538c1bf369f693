"""Keep the search snapshot current before reading it, when that is cheap.

A user who edits a note and searches must not get silently stale results. Up to
`sync_before_search_max_files` changed files are synced in place (only if no
other rebuild holds the index lock); beyond that, or when busy, the search
answers from the last complete snapshot and says so on stderr. In a vault of more
than a few thousand files the check is memcli.index.quick's (folder mtimes and the
recently modified files) when that shows nothing changed. While `mem watch` runs, its
change journal answers instead, exactly and without a stat (memcli.watch.journal).
"""

from __future__ import annotations

from memcli.errors import Busy, CorruptStore
from memcli.index import currency, quick, sources, sync
from memcli.vault import lock
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace
from memcli.watch import journal

REBUILD_BUSY = "Memory index rebuild is already running"


def index_lock(ws: Workspace, job: str, wait: float = 0.0) -> Lock:
    return Lock(ws.lock_path(lock.INDEX), job, wait=wait, busy_message=REBUILD_BUSY)


def _journaled(ws: Workspace, snap) -> int | None:
    """How many paths the running watcher journaled since the index's mark (memcli.watch.journal),
    None when it cannot say: then the files are checked."""
    now = journal.confirm(ws.metadata)
    got = journal.since(ws.metadata, snap.header.get("watch"), now) if now is not None else None
    return None if got is None else len(got[0]) + len(got[1])


def fresh_snapshot(ws: Workspace, warnings: list[str], *, auto_sync: bool = True):
    """The index, brought up to date first when that is cheap (module docstring)."""
    try:
        snap = sync.open_snapshot(ws)
    except CorruptStore as exc:
        warnings.append(f"{exc}; rebuilding it")
        snap = None
    if snap is not None and snap.header.get("chunking") != sync.chunking_params(ws):
        warnings.append("chunking settings or mem version changed; rebuilding the index")
        snap.close()
        snap = None  # treated like a first build: nothing it holds can be reused
    # how many files changed: a running `mem watch` says (its journal), else a large vault's
    # folders and recent files, else a stat of every file (the sync below finds them again)
    stale = _journaled(ws, snap) if snap is not None else None
    walked: list[tuple[str, str]] = []
    behind = currency.outdated(ws.metadata)  # written by other rules: the sync below works it out again
    if stale is None:
        if snap is not None and quick.unchanged(snap) and not behind:
            return snap
        stale = len(sync.stale_paths(snap, sync.scan(ws, snap=snap, problems=walked)))
        stale += len(sources.notes_of_changed_logs(ws, snap))
    if not stale and not behind:
        # what the walk went round is named as a sync would name it: a search finds its notes not
        warnings.extend(f"skipped {path}: {why}" for path, why in walked)
        return snap
    limit = ws.settings.search.sync_before_search_max_files
    first_build = snap is None
    if auto_sync and (first_build or stale <= limit):
        try:
            # a first build has nothing to fall back on, so it may wait for a running one
            with index_lock(ws, "search-sync", wait=lock.WAIT if first_build else 0.0):
                if snap is not None:
                    snap.close()
                rep = sync.sync(ws)
                warnings.extend(f"skipped {path}: {why}" for path, why in rep.skipped)
                warnings.extend(f"{path}: {why}" for path, why in rep.warnings)
                return sync.open_snapshot(ws)
        except Busy:
            pass
        except OSError as exc:  # read-only workspace: answer from what is there
            warnings.append(f"could not update the index ({exc.strerror}); results may be stale")
            return snap
    if snap is not None and stale:
        warnings.append(f"{stale} file(s) changed since the last index; results may be stale (run `mem reindex`)")
    return snap
