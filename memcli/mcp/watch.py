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
event, overflow included, means "walk again").
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import os
import re
import sys

from memcli.vault.workspace import Workspace

# <sys/inotify.h>
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, 0o2000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
# filesystems where every change goes through this kernel, so inotify sees it
LOCAL_FS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "zfs", "overlay", "jfs",
            "reiserfs", "bcachefs", "nilfs2"}


def mounts() -> list[tuple[str, str]]:
    """(mount point, filesystem type) from /proc/self/mountinfo, longest mount point first."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                head, _, tail = line.partition(" - ")
                fields = head.split()
                if len(fields) >= 5 and tail:
                    point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])  # \040: space
                    out.append((point, tail.split()[0]))
    except OSError:
        return []
    return sorted(out, key=lambda m: -len(m[0]))


class Inotify:
    def __init__(self):
        libc = ctypes.CDLL(None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")

    def add(self, path: str) -> None:
        if self._add(self.fd, os.fsencode(path), MASK) < 0:
            err = ctypes.get_errno()
            if err not in (errno.ENOENT, errno.ENOTDIR):  # gone since the walk: its parent reported it
                raise OSError(err, f"inotify_add_watch {path}: {os.strerror(err)}")

    def pending(self) -> bool:
        """Whether any event came since the last call (the queue is drained)."""
        seen = False
        while True:
            try:
                seen = bool(os.read(self.fd, 65536)) or seen
            except BlockingIOError:
                return seen

    def close(self) -> None:
        os.close(self.fd)


@dataclasses.dataclass
class WatchedWorkspace(Workspace):
    """A Workspace whose iter_watched() is served from the last walk while nothing changed."""

    walks: int = 0  # full walks so far (logged with -v; tests read it)
    why_not: str = ""  # why the watch is off, when it is
    _inotify: Inotify | None = dataclasses.field(default=None, repr=False)
    _files: list | None = dataclasses.field(default=None, repr=False)
    _dirs: dict = dataclasses.field(default_factory=dict, repr=False)
    _mounts: list = dataclasses.field(default_factory=list, repr=False)

    @classmethod
    def of(cls, ws: Workspace) -> WatchedWorkspace:
        fields = {f.name: getattr(ws, f.name) for f in dataclasses.fields(ws) if f.init}
        watched = cls(**fields)
        watched.start()
        return watched

    def start(self) -> None:
        if not sys.platform.startswith("linux"):
            self.why_not = "inotify needs Linux"
            return
        self._mounts = mounts()
        try:
            self._inotify = Inotify()
        except (OSError, AttributeError) as exc:  # AttributeError: a libc without inotify
            self.why_not = f"no inotify ({exc})"

    def iter_watched(self, dirs: dict | None = None, split: bool = False):
        if self._inotify is None:
            self.walks += 1
            return super().iter_watched(dirs, split)
        # drain first, then watch, then walk: a change after the drain is either seen by
        # this walk or left as an event for the next call, never lost
        if self._files is None or self._inotify.pending():
            self._files = None
            try:
                for folder in self._folders():
                    self._inotify.add(folder)
            except (OSError, _Remote) as exc:
                self.stop(str(exc))
                return self.iter_watched(dirs, split)
            self.walks += 1
            self._dirs = {}
            self._files = list(super().iter_watched(self._dirs, split))
        if dirs is not None:
            dirs.update(self._dirs)
        return iter(self._files)

    def stop(self, why: str) -> None:
        if self._inotify is not None:
            self._inotify.close()
        self._inotify, self._files, self.why_not = None, None, why

    def _folders(self):
        """The root and every folder iter_watched descends into (dot and symlinked ones excepted)."""
        root = os.path.realpath(self.root)
        yield self._local(root)
        for sub in self.watched_roots():
            base = os.path.normpath(os.path.join(root, sub))
            if not base.startswith(root + os.sep) or os.path.islink(base):
                continue
            while not os.path.isdir(base) and base != root:  # a file, or not there yet: watch what holds it
                base = os.path.dirname(base)
            for folder, dirs, _ in os.walk(base):
                dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d))]
                yield self._local(folder)
        for extra in self.extra_roots():  # extra paths outside the workspace (extra/<name>/...)
            if extra.inside or extra.problem or os.path.islink(extra.path):
                continue
            base = extra.path
            while not os.path.isdir(base) and os.path.dirname(base) != base:  # a file, or not there yet
                base = os.path.dirname(base)
            for folder, dirs, _ in os.walk(base):
                dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d))]
                yield self._local(folder)

    def _local(self, folder: str) -> str:
        kind = next((t for point, t in self._mounts if folder == point or folder.startswith(point.rstrip("/") + "/")),
                    None)
        if kind not in LOCAL_FS:
            raise _Remote(f"{folder} is on a {kind or 'unknown'} filesystem")
        return folder


class _Remote(Exception):
    """A folder whose changes inotify may not see."""
