"""The list of memory files, walked again only when the kernel says something changed.

Every search first checks which indexed files changed (memcli.index.freshness): one
stat per file, about 20 ms of a 25 ms warm search over 2,100 notes. A one-shot
`mem search` has to pay that; a long-lived server need not. On Linux it asks inotify
to report any change in the folders that hold indexed files (and in the workspace
root, for MEMORY.md) and serves the previous walk while no event came. The walk
itself is Workspace.iter_watched, unchanged, so what counts as a memory file stays
decided in one place.

Anything doubtful falls back to walking on every call, as `mem search` does: no
inotify (not Linux), a filesystem whose changes may be made elsewhere (NFS, SMB,
FUSE: their events are not reliable), a watch limit reached, a queue overflow (any
event, overflow included, means "walk again"). Which of these hold is decided by
memcli.watch.inotify, as for `mem watch`; what is MCP's own is serving the last walk.
"""

from __future__ import annotations

import dataclasses

from memcli.vault.workspace import Workspace
from memcli.watch.inotify import Inotify, Untrusted, opened


@dataclasses.dataclass
class WatchedWorkspace(Workspace):
    """A Workspace whose iter_watched() is served from the last walk while nothing changed."""

    walks: int = 0  # full walks so far (logged with -v; tests read it)
    why_not: str = ""  # why the watch is off, when it is
    _inotify: Inotify | None = dataclasses.field(default=None, repr=False)
    _files: list | None = dataclasses.field(default=None, repr=False)
    _dirs: dict = dataclasses.field(default_factory=dict, repr=False)
    _problems: list = dataclasses.field(default_factory=list, repr=False)  # what the last walk went round

    @classmethod
    def of(cls, ws: Workspace) -> WatchedWorkspace:
        fields = {f.name: getattr(ws, f.name) for f in dataclasses.fields(ws) if f.init}
        watched = cls(**fields)
        watched.start()
        return watched

    def start(self) -> None:
        self._inotify, self.why_not = opened()

    def iter_watched(self, dirs: dict | None = None, split: bool = False, problems: list | None = None):
        if self._inotify is None:
            self.walks += 1
            return super().iter_watched(dirs, split, problems)
        # drain first, then watch, then walk: a change after the drain is either seen by
        # this walk or left as an event for the next call, never lost
        if self._files is None or self._inotify.pending():
            self._files = None
            try:
                for folder in self.watched_folders():
                    self._inotify.add_local(folder)
            except (OSError, Untrusted) as exc:
                self.stop(str(exc))
                return self.iter_watched(dirs, split, problems)
            self.walks += 1
            self._dirs, self._problems = {}, []
            self._files = list(super().iter_watched(self._dirs, split, self._problems))
        if dirs is not None:
            dirs.update(self._dirs)
        if problems is not None:
            problems.extend(self._problems)
        return iter(self._files)

    def stop(self, why: str) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._inotify, self._files, self.why_not = None, None, why
