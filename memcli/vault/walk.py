"""Walking a watched folder for its Markdown files: on two cores when the vault is large.

A cold `mem reindex` cannot know which file was edited in place (that leaves its
folder's mtime as it was), so it stats every file. A stat costs ~2 µs in the kernel
here and ~4 µs from Python; at 100,000 notes the walk was 0.8 s of a 1.0 s one-file
update. So when the caller expects at least SPLIT_MIN_FILES files, a forked child
walks half of the vault. Both processes list each watched root (the base of a walk);
its folders are shared out by position among their sorted names, each walked whole by
one process, and its own files by their name's hash parity. Two processes stat-ing
files of the same folder contend in the kernel (a 20,000-note walk took 54 ms alone,
73 ms beside its twin), apart they hardly do (37 and 43 ms). Positions balance the
halves whatever the names are; a folder created or removed between the two listings
would shift them, so the child hands back what it listed and a parent that listed
otherwise walks everything itself (a file reached twice, as through an extra path inside
a root, is given once: the parent drops the child's copy). The child hands back (path, mtime_ns, size) and the folders' mtimes
in one marshal blob through an anonymous file (a pipe would stall the child until this
process is done with its own half). A child that fails in any way leaves the whole walk
to this process: the walk's answer never depends on the split.

A file's stat is given as (st_mtime_ns, st_size), all the index keeps of it:
cheaper to build and to compare than an os.stat_result.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from typing import Callable, Iterator

SPLIT_MIN_FILES = 6_000  # below, a fork and the hand-back cost more than half a walk saves
_BY_FD = os.scandir in os.supports_fd

Stats = Iterator[tuple[str, tuple[int, int]]]


class Half:
    """One process's share of a split walk: `part` 0 (this process) or 1 (the child), and
    the sorted folder paths of every base it listed (the two must have listed alike)."""

    def __init__(self, part: int):
        self.part = part
        self.listed: list[list[str]] = []


def mine(name: str, half: Half | None) -> bool:
    """Whether the file `name`, directly in a walk's base, is stat-ed by the process walking
    `half` (None: the whole walk)."""
    return half is None or hash(name) & 1 == half.part


def in_two(watched: Callable[..., Stats], dirs: dict | None) -> Stats:
    """`watched(dirs, half)`'s files, half of them stat-ed by a forked child (module docstring)."""
    if not _can_fork():
        yield from watched(dirs, None)
        return

    def theirs():
        half, their_dirs = Half(1), ({} if dirs is not None else None)
        rels, mtimes, sizes = [], [], []
        for rel, (mtime, size) in watched(their_dirs, half):
            rels.append(rel)
            mtimes.append(mtime)
            sizes.append(size)
        return rels, mtimes, sizes, their_dirs, half.listed

    child = _Child(theirs)
    try:
        half, given = Half(0), set()
        for rel, st in watched(dirs, half):
            given.add(rel)
            yield rel, st
        got = child.result()
        if got is None or got[4] != half.listed:  # failed, or listed otherwise: all walked here
            rest = watched(dirs, None)
        else:
            rels, mtimes, sizes, their_dirs, _ = got
            if dirs is not None:
                dirs.update(their_dirs)
            rest = zip(rels, zip(mtimes, sizes))
        for rel, st in rest:
            if rel not in given:
                yield rel, st
    finally:
        child.reap()


def walk(base: str, vbase: str, seen: set[str], skip: frozenset, dirs: dict | None = None,
         half: Half | None = None) -> Stats:
    """(indexed path, (mtime_ns, size)) of the Markdown files below the folder `base`, named
    `vbase/<path below it>` (only those of `half`); `dirs` receives the mtimes of the folders
    below it."""
    cut = len(base)
    stack = [(base, half is not None)]  # (folder, shared: listed by both halves of a split walk)
    skipped: dict[str, set[str]] = {}  # folder -> the names in it to skip (no path built per file)
    for path in skip:
        skipped.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
    while stack:
        d, shared = stack.pop()
        here = skipped.get(d, ())
        prefix = vbase + d[cut:].replace(os.sep, "/") + "/"  # once per folder, not per file
        try:  # listed through a descriptor: each stat then resolves one name, not the whole path
            fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if _BY_FD else -1
        except OSError:
            continue
        try:
            it = os.scandir(fd if _BY_FD else d)
        except OSError:
            if fd >= 0:
                os.close(fd)
            continue
        subs: list[str] = []
        with it, _closing(fd):
            for e in it:
                name = e.name
                if name[0] == "." or name in here:
                    continue
                try:  # d_type answers is_file and is_dir without a system call
                    if name.endswith(".md") and e.is_file(follow_symlinks=False):
                        if shared and not mine(name, half):
                            continue
                        rel = prefix + name
                        if rel not in seen:
                            seen.add(rel)
                            st = e.stat(follow_symlinks=False)
                            yield rel, (st.st_mtime_ns, st.st_size)
                    elif e.is_dir(follow_symlinks=False):
                        path = os.path.join(d, name)
                        subs.append(path)
                        if dirs is not None:
                            dirs[path] = e.stat(follow_symlinks=False).st_mtime_ns
                except OSError:
                    continue
        if shared:
            subs.sort()
            half.listed.append(subs)
            subs = subs[half.part::2]
        stack.extend((path, False) for path in subs)


def folders(top: str) -> Iterator[tuple[str, list[str]]]:
    """(folder, names of the files in it) for `top` and every folder below it but dot ones;
    a symlinked folder is listed among the files' neighbours, never entered (os.walk's default):
    what a file watch has to watch."""
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        yield folder, names


@contextlib.contextmanager
def _closing(fd: int):
    try:
        yield
    finally:
        if fd >= 0:
            os.close(fd)


def _can_fork() -> bool:
    """Fork only a single-threaded process on a system with fork (a thread's lock could be
    copied held); and only with a second core to run the child."""
    threading = sys.modules.get("threading")  # (not imported: no thread was started through it)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return hasattr(os, "fork") and sys.platform != "win32" and cores > 1 and \
        (threading is None or threading.active_count() == 1)


class _Child:
    """A forked run of `work()`, its (marshal-able) answer left in an anonymous file."""

    def __init__(self, work: Callable[[], object]):
        self.pid = 0
        try:
            if hasattr(os, "memfd_create"):
                self.fd = os.memfd_create("mem-walk")
            else:
                import tempfile

                self.fd = os.dup(tempfile.TemporaryFile().fileno())
        except OSError:
            self.fd = -1
            return
        try:
            self.pid = os.fork()
        except OSError:
            return
        if self.pid == 0:
            code = 1
            try:
                view = memoryview(marshal.dumps(work()))
                while view:
                    view = view[os.write(self.fd, view):]
                code = 0
            finally:
                os._exit(code)  # no atexit handlers, no flushing the parent's buffers

    def result(self):
        """What the child's `work()` returned, or None when it failed."""
        if self.pid <= 0:
            return None
        try:
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                return None
            size = os.fstat(self.fd).st_size
            blob = os.pread(self.fd, size, 0)
            return marshal.loads(blob) if len(blob) == size else None
        except (OSError, ValueError, EOFError, TypeError):
            return None

    def reap(self) -> None:
        if self.pid > 0:  # the walk was abandoned half-way: the child's answer is not wanted
            try:
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = 0
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
