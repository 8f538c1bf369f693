"""Linux inotify through libc (ctypes: no dependency), and which filesystems it can be trusted on.

Used by `mem mcp` (memcli.mcp.watch: serve the last walk while no event came) and by
`mem watch` (memcli.watch.feed: the change journal), both through opened() and add_local(),
so the two agree on when inotify is not to be trusted. Events are read in the order the
kernel queued them, across every folder watched by one instance: a cookie file created
after an edit is always reported after that edit (memcli.watch.journal relies on it).

Why not a library (measured by `bench/libraries.py`; docs/architecture.md, Hand-written parts):
`watchfiles` reports a change 80 ms after the write (its batching; this: under 2 ms) as an
unordered set, which cannot keep the journal's cookie order, and adds a 3.6 MB compiled wheel;
`inotify_simple` is the same ctypes binding (same latency) and would leave the filesystem checks
here all the same.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import struct
import sys
from typing import NamedTuple

# <sys/inotify.h>
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, 0o2000000
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
# filesystems where every change goes through this kernel, so inotify sees it
LOCAL_FS = {
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "tmpfs",
    "ramfs",
    "f2fs",
    "zfs",
    "overlay",
    "jfs",
    "reiserfs",
    "bcachefs",
    "nilfs2",
}
_HEAD = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


class Event(NamedTuple):
    wd: int
    mask: int
    name: str  # "" for an event about the watched folder itself


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


def fs_type(folder: str, table: list[tuple[str, str]]) -> str | None:
    """The filesystem `folder` is on, by the longest mount point holding it (`table`: mounts())."""
    return next((t for point, t in table if folder == point or folder.startswith(point.rstrip("/") + "/")), None)


class Untrusted(Exception):
    """A folder whose changes inotify may not see (another machine can change it)."""


def opened() -> tuple[Inotify | None, str]:
    """(an inotify instance, "") or (None, why there is none here)."""
    if not sys.platform.startswith("linux"):
        return None, "inotify needs Linux"
    try:
        return Inotify(), ""
    except (OSError, AttributeError) as exc:  # AttributeError: a libc without inotify
        return None, f"no inotify ({exc})"


class Inotify:
    def __init__(self):
        self._mounts: list[tuple[str, str]] | None = None  # mounts(), read at the first add_local()
        libc = ctypes.CDLL(None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")

    def add(self, path: str) -> int:
        """The watch descriptor of folder `path` (the same one again for a folder already
        watched, under whatever name); -1 when it is gone (its parent reports that)."""
        wd = self._add(self.fd, os.fsencode(path), MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err not in (errno.ENOENT, errno.ENOTDIR):
                raise OSError(err, f"inotify_add_watch {path}: {os.strerror(err)}")
        return wd

    def add_local(self, path: str) -> int:
        """add(), for a folder on a filesystem whose every change goes through this kernel;
        Untrusted for any other (NFS, SMB, FUSE: a change made elsewhere raises no event)."""
        if self._mounts is None:
            self._mounts = mounts()
        kind = fs_type(path, self._mounts)
        if kind not in LOCAL_FS:
            raise Untrusted(f"{path} is on a {kind or 'unknown'} filesystem")
        return self.add(path)

    def pending(self) -> bool:
        """Whether any event came since the last call (the queue is drained)."""
        return bool(self.read())

    def read(self) -> list[Event]:
        """The events queued now, in order (none: an empty list)."""
        out = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            at = 0
            while at + _HEAD.size <= len(buf):
                wd, mask, _, size = _HEAD.unpack_from(buf, at)
                raw = buf[at + _HEAD.size : at + _HEAD.size + size]
                out.append(Event(wd, mask, os.fsdecode(raw.rstrip(b"\0"))))
                at += _HEAD.size + size

    def close(self) -> None:
        os.close(self.fd)
