"""Workspace locks built on flock(2).

The kernel drops an flock when its holder dies, so a lock left by a killed
process is never stale: the next taker simply gets it. The file also records
the holder's pid and job for the "busy" message (a dead holder's line may stay
in the file; it means nothing once the flock is gone).

An flock belongs to the open file, which a forked child shares: a worker
process of a killed `mem reindex` would keep the lock for as long as it lives.
So a forked child closes its copies of the held lock files at once (closing,
never unlocking, which would release the parent's lock too).
"""

from __future__ import annotations

import fcntl
import math
import os
import time
import weakref
from pathlib import Path

from memcli.errors import BadInput, Busy

# The workspace's locks, one file each under mem_metadata/locks/:
WORKSPACE = "workspace"  # notes and session logs (ingest, remember, resource scan, dream, backup)
INDEX = "index"  # the search snapshot and stores (every sync and checkpoint)
REBUILD = "rebuild"  # one `mem reindex` (or restore) at a time
EMBED = "embed"  # one embedding run at a time (reindex, a write's new chunks, watch/mcp refining)
RESOURCE = "resource"  # one resource scan at a time
DREAM = "dream"  # one dream at a time
INBOX = "inbox"  # the inbox file
WAIT = 30.0  # seconds a writer waits for a lock another mem job holds before exiting 75 (--wait)

_HELD: weakref.WeakSet[Lock] = weakref.WeakSet()  # locks this process holds, for fork


class Lock:
    def __init__(self, path: Path, job: str, *, wait: float = 0.0, busy_message: str | None = None):
        if not math.isfinite(wait):  # `--wait inf` (or nan) would never give up: a wait must be bounded
            raise BadInput(f"--wait must be a number of seconds, got {wait}")
        self.path = Path(path)
        self.job = job
        self.wait = wait
        self.busy_message = busy_message
        self._fd: int | None = None

    def holder(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""

    def acquire(self) -> Lock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(0.0, self.wait)
        delay = 0.02
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    who = self.holder()
                    msg = self.busy_message or f"Workspace is busy: another mem job holds {self.path.name}"
                    if who:
                        msg += f" ({who})"
                    raise Busy(msg, "wait for it to finish or raise --wait") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid={os.getpid()} job={self.job}".encode())
        self._fd = fd
        _HELD.add(self)
        return self

    def release(self) -> None:
        _HELD.discard(self)
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Lock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _drop_in_child() -> None:
    for lock in list(_HELD):
        if lock._fd is not None:
            try:
                os.close(lock._fd)
            except OSError:
                pass
            lock._fd = None
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_in_child)
