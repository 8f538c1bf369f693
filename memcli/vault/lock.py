"""Workspace locks built on flock(2).

The kernel drops an flock when its holder dies, so a lock left by a killed
process is never stale: the next taker simply gets it. The file also records
the holder's pid and job for the "busy" message.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from memcli.errors import Busy


class Lock:
    def __init__(self, path: Path, job: str, *, wait: float = 0.0, busy_message: str | None = None):
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

    def acquire(self) -> "Lock":
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
        return self

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> "Lock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def is_held(path: Path) -> bool:
    """True when some process holds the lock at `path` (checked without waiting)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
