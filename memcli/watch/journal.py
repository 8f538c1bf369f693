"""The change journal of a running `mem watch`: which indexed files changed, so that a
command need not stat every file to find them (Watchman's cookies, git's fsmonitor).

At 100,000 notes the stat of every file is most of a one-file `mem reindex` (~0.35 s on
two cores here) and an edit made in place changes no folder's mtime, so nothing
cheaper than a journal can find it. A watcher (memcli.watch.feed) holds an exclusive
lock on mem_metadata/watch/lock while it watches, and appends to
mem_metadata/watch/<session>.journal one line per change inotify tells it of, in the
kernel's order: `f <path>` (an indexed file may have changed), `d <folder>` (anything
below a folder may have: it was created, moved or deleted), `c <cookie>`.

A command asks it to catch up (confirm): it creates a cookie file in
mem_metadata/watch/cookies/, a folder watched by the same inotify instance, and waits for
the cookie's line. One inotify queue keeps the order of events across folders, so every
change made before the cookie was created is above that line. The index's manifest
records the session and the offset it reflects (a Mark); the next sync stats only what
was journaled after it (since). Anything doubtful means the full walk, as without a
watcher: no watcher, another session (the watcher restarted or lost events), a cookie
not answered within ANSWER_SECONDS, an unreadable journal.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from pathlib import Path
from typing import NamedTuple

DIR = "watch"
ANSWER_SECONDS = 0.5  # a watcher slower than this to see a cookie is not waited for
MAX_READ = 32 << 20  # a journal range larger than this is not read: the walk is cheaper


class Mark(NamedTuple):
    """A point of one watcher session's journal: the index reflects every change above it."""

    session: str
    offset: int

    def record(self) -> dict:
        return {"session": self.session, "offset": self.offset}


def folder(metadata: Path) -> Path:
    return metadata / DIR


def confirm(metadata: Path) -> Mark | None:
    """The journal's end once the running watcher has caught up with every change made
    before this call, or None (no watcher, or no answer in time)."""
    base = folder(metadata)
    session = _live_session(base)
    if session is None:
        return None
    journal = base / f"{session}.journal"
    try:
        start = journal.stat().st_size
        name = f"{session}-{os.getpid()}-{os.urandom(4).hex()}"
        cookie = base / "cookies" / name
        os.close(os.open(cookie, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:  # e.g. a read-only workspace
        return None
    try:
        return _answer(journal, start, name, session)
    finally:
        try:
            os.unlink(cookie)
        except OSError:
            pass


def watcher(metadata: Path) -> int | None:
    """The pid of the watcher keeping the journal, or None when none runs."""
    base = folder(metadata)
    if _live_session(base) is None:
        return None
    try:
        pid = json.loads((base / "session").read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) else None


def since(metadata: Path, mark: dict | None, now: Mark) -> tuple[set[str], set[str]] | None:
    """(files, folders) journaled between the index's `mark` (a Mark.record()) and `now`,
    or None when they cannot be known: the mark is of another session, or the journal
    is gone, damaged or too long to be worth reading."""
    if not isinstance(mark, dict) or mark.get("session") != now.session:
        return None
    start = mark.get("offset")
    if not isinstance(start, int) or not 0 <= start <= now.offset or now.offset - start > MAX_READ:
        return None
    try:
        with open(folder(metadata) / f"{now.session}.journal", "rb") as fh:
            fh.seek(start)
            blob = fh.read(now.offset - start)
    except OSError:
        return None
    if len(blob) != now.offset - start or (blob and not blob.endswith(b"\n")):
        return None
    files: set[str] = set()
    folders: set[str] = set()
    try:
        for line in blob.decode("utf-8").splitlines():
            kind, path = line[:1], json.loads(line[2:])
            if kind == "f":
                files.add(path)
            elif kind == "d":
                folders.add(path)
    except (ValueError, TypeError):
        return None
    return files, folders


def line(kind: str, path: str) -> bytes:
    """One journal line: `kind` f, d or c, then the path as a JSON string (any name fits)."""
    return f"{kind} {json.dumps(path, ensure_ascii=False)}\n".encode()


def _live_session(base: Path) -> str | None:
    """The session of the watcher holding the lock, or None when none does."""
    try:
        fd = os.open(base / "lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
        else:
            return None  # nobody holds it: a session file left behind is stale
        try:
            session = json.loads((base / "session").read_text(encoding="utf-8")).get("session")
        except (OSError, ValueError, AttributeError):
            return None
        return session if isinstance(session, str) and session.isascii() and "/" not in session else None
    finally:
        os.close(fd)


def _answer(journal: Path, start: int, name: str, session: str) -> Mark | None:
    """Wait for the cookie's line after offset `start`; the Mark just past it."""
    want = line("c", name)
    deadline = time.monotonic() + ANSWER_SECONDS
    pause = 0.0002
    try:
        with open(journal, "rb") as fh:
            seen = b""
            while True:
                fh.seek(start + len(seen))
                seen += fh.read()
                at = seen.find(want)
                if at >= 0 and (at == 0 or seen[at - 1 : at] == b"\n"):
                    return Mark(session, start + at + len(want))
                if time.monotonic() > deadline:
                    return None
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
    except OSError:
        return None


def _exclusive(fd: int, wait: float = 1.0) -> None:
    """The watcher's lock. Every command's probe (_live_session) holds it shared for a few
    microseconds, so a start that meets one tries again; another watcher holds it for good."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class Writer:
    """The watcher's side: the lock, the session file and the journal it appends to."""

    def __init__(self, base: Path, fd: int):
        self.base, self._lock = base, fd
        self.session, self._out = "", -1
        self._new_session()

    @classmethod
    def open(cls, metadata: Path) -> Writer | None:
        """None when another watcher holds the journal (or the folder cannot be written)."""
        base = folder(metadata)
        try:
            (base / "cookies").mkdir(parents=True, exist_ok=True)
            fd = os.open(base / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return None
        try:
            _exclusive(fd)
            for old in [*base.glob("*.journal"), *base.glob(".session.*.tmp"), *(base / "cookies").iterdir()]:
                old.unlink(missing_ok=True)  # a dead watcher's
            return cls(base, fd)
        except OSError:
            os.close(fd)
            return None

    @property
    def cookies(self) -> Path:
        return self.base / "cookies"

    def append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]

    def size(self) -> int:
        return os.fstat(self._out).st_size

    def restart(self) -> None:
        """A new session, after events were lost: every mark of the old one is void."""
        self._new_session()

    def close(self) -> None:
        (self.base / "session").unlink(missing_ok=True)
        self._drop()
        (self.base / f"{self.session}.journal").unlink(missing_ok=True)
        os.close(self._lock)

    def _new_session(self) -> None:
        old = self.session
        self._drop()
        self.session = f"{os.getpid()}-{os.urandom(6).hex()}"
        self._out = os.open(
            self.base / f"{self.session}.journal", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
        )
        _replace(self.base / "session", json.dumps({"session": self.session, "pid": os.getpid()}))
        if old:
            (self.base / f"{old}.journal").unlink(missing_ok=True)

    def _drop(self) -> None:
        if self._out >= 0:
            os.close(self._out)
            self._out = -1


def _replace(path: Path, text: str) -> None:
    """Write `path` whole or not at all (a temp file renamed over it), so a command probing the
    session never reads half of one. Not fsync-ed, unlike a note (memcli.vault.atomic): after a
    crash nobody holds the lock, and a session file without its watcher is ignored anyway."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
