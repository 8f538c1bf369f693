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
from collections.abc import Callable, Iterator
from typing import Any

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


def in_two(watched: Callable[..., Stats], dirs: dict | None, problems: list | None = None) -> Stats:
    """`watched(dirs, half, problems)`'s files, half of them stat-ed by a forked child (module
    docstring); `problems` receives both halves' (see walk), once each."""
    found: list[tuple[str, str]] = []
    if not _can_fork():
        yield from watched(dirs, None, found)
        _extend(problems, found)
        return

    def theirs():
        half, their_dirs, their_problems = Half(1), ({} if dirs is not None else None), []
        rels, mtimes, sizes = [], [], []
        for rel, (mtime, size) in watched(their_dirs, half, their_problems):
            rels.append(rel)
            mtimes.append(mtime)
            sizes.append(size)
        return rels, mtimes, sizes, their_dirs, half.listed, their_problems

    child = _Child(theirs)
    try:
        half, given = Half(0), set()
        for rel, st in watched(dirs, half, found):
            given.add(rel)
            yield rel, st
        got = child.result()
        if got is None or got[4] != half.listed:  # failed, or listed otherwise: all walked here
            rest = watched(dirs, None, found)
        else:
            rels, mtimes, sizes, their_dirs, _, theirs_found = got
            if dirs is not None:
                dirs.update(their_dirs)
            found += [tuple(p) for p in theirs_found]
            rest = zip(rels, zip(mtimes, sizes))
        for rel, st in rest:
            if rel not in given:
                yield rel, st
    finally:
        child.reap()
    _extend(problems, found)


def _extend(problems: list | None, found: list) -> None:
    if problems is not None:
        problems.extend(p for p in dict.fromkeys(found) if p not in problems)


def shown(name: str) -> str:
    """A path as it can be printed: the bytes of a name that is not UTF-8 as \\x escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def utf8_name(name: str) -> bool:
    """True when `name` came from valid UTF-8 (os.scandir keeps other bytes as surrogates,
    which no store, JSON document or terminal can take)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk(
    base: str,
    vbase: str,
    seen: set[str],
    skip: frozenset,
    dirs: dict | None = None,
    half: Half | None = None,
    problems: list | None = None,
) -> Stats:
    """(indexed path, (mtime_ns, size)) of the Markdown files below the folder `base`, named
    `vbase/<path below it>` (only those of `half`); `dirs` receives the mtimes of the folders
    below it, `problems` (indexed path, why) for what is there but cannot be walked: a folder
    this user cannot list (`memory/private/`, with its slash) or a name that is not UTF-8.
    The walk goes round them: one folder never hides the others."""
    cut = len(base)
    stack = [(base, half is not None)]  # (folder, shared: listed by both halves of a split walk)
    skipped: dict[str, set[str]] = {}  # folder -> the names in it to skip (no path built per file)
    said = problems if problems is not None else []
    for path in skip:
        skipped.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
    while stack:
        d, shared = stack.pop()
        here = skipped.get(d, ())
        prefix = vbase + d[cut:].replace(os.sep, "/") + "/"  # once per folder, not per file
        it, fd = _listing(d, prefix, said)
        if it is None:
            continue
        subs: list[str] = []
        blocked = False
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
                            if not utf8_name(name):
                                said.append((shown(rel), "file name is not valid UTF-8; rename it"))
                                continue
                            st = e.stat(follow_symlinks=False)
                            yield rel, (st.st_mtime_ns, st.st_size)
                    elif e.is_dir(follow_symlinks=False):
                        if not utf8_name(name):
                            said.append((shown(prefix + name) + "/", "folder name is not valid UTF-8; rename it"))
                            continue
                        path = os.path.join(d, name)
                        subs.append(path)
                        if dirs is not None:
                            dirs[path] = e.stat(follow_symlinks=False).st_mtime_ns
                except FileNotFoundError:
                    continue  # deleted while listed
                except OSError as exc:  # listed but not searchable (mode r--): its files cannot be read
                    if not blocked:
                        said.append((shown(prefix), f"folder cannot be searched ({exc.strerror})"))
                    blocked = True
        if shared and half is not None:  # only a split walk shares folders
            subs.sort()
            half.listed.append(subs)
            subs = subs[half.part :: 2]
        stack.extend((path, False) for path in subs)


def _listing(d: str, prefix: str, problems: list):
    """(scandir iterator, descriptor or -1) of the folder `d`, or (None, -1) when it cannot
    be listed (named in `problems` unless it vanished meanwhile)."""
    fd = -1
    try:  # listed through a descriptor: each stat then resolves one name, not the whole path
        if _BY_FD:
            fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        return os.scandir(fd if _BY_FD else d), fd
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            problems.append((shown(prefix), f"folder cannot be read ({exc.strerror})"))
        return None, -1


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
    return (
        hasattr(os, "fork")
        and sys.platform != "win32"
        and cores > 1
        and (threading is None or threading.active_count() == 1)
    )


class _Child:
    """A forked run of `work()`, its (marshal-able) answer left in an anonymous file."""

    def __init__(self, work: Callable[[], Any]):
        self.pid = 0
        try:
            if hasattr(os, "memfd_create"):
                self.fd = os.memfd_create("mem-walk")
            else:
                import tempfile

                with tempfile.TemporaryFile() as tmp:  # the dup outlives it: unlinked, it lives as long as fd
                    self.fd = os.dup(tmp.fileno())
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
                    view = view[os.write(self.fd, view) :]
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
