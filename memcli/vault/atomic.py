"""Atomic file writes: temp file in the same folder, fsync, rename, fsync the folder.

A crash at any instant leaves either the old file or the new one under the final
name; a leftover temp file is a dot-file that no walker treats as a note.
"""

from __future__ import annotations

import os
from pathlib import Path

TEMP_MARK = ".mem-tmp-"


def fsync_dir(folder: Path) -> None:
    """Make renames and links in `folder` durable (best effort: some filesystems refuse it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    write_parts(path, (data,), mode=mode)


def write_parts(path: Path, parts, *, mode: int | None = None) -> None:
    """Atomically write the concatenation of `parts` without joining them in memory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TEMP_MARK}{path.name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        with open(tmp, "wb") as fh:
            for data in parts:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    write_bytes(path, text.encode("utf-8"), mode=mode)


def append_bytes(path: Path, data: bytes) -> None:
    """Append to an existing file and fsync it (append-only logs; a torn tail is the
    reader's to skip, the writer's next full rewrite repairs it)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    """Delete a file if present and make the deletion durable."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(Path(path).parent)


ABANDONED_AFTER = 60.0  # seconds untouched before a dead writer's temp file is removed


def clean_temp_files(folder: Path) -> int:
    """Remove temp files a killed writer left behind; returns how many.

    Only abandoned ones: the pid in the name is not running and the file is a minute
    old. A live writer's temp file (an ingest writing its state while reindex cleans)
    must survive until its rename, and a writer in another container sharing the
    folder has a pid this machine does not know, hence the age too."""
    import time

    n = 0
    if not folder.is_dir():
        return 0
    for p in folder.rglob(f"{TEMP_MARK}*"):
        try:
            if _writer_alive(p.name) or time.time() - p.stat().st_mtime < ABANDONED_AFTER:
                continue
            p.unlink()
            n += 1
        except OSError:
            pass
    return n


def _writer_alive(name: str) -> bool:
    """True when the pid in a temp file's name (`<mark><name>.<pid>.<hex>`) is running."""
    try:
        pid = int(name.rsplit(".", 2)[-2])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux renameat2 RENAME_EXCHANGE), so a crash leaves
    one or the other, never neither. False when this system or filesystem cannot: the caller
    then falls back to two renames."""
    import ctypes
    import errno
    import sys

    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False  # not glibc ≥ 2.28 (macOS, old musl)
    # it is a rename: announce it as one, so audit hooks (the crash harness among them) see it
    sys.audit("os.rename", os.fspath(a), os.fspath(b), -1, -1)
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(a), None, os.fspath(b))
