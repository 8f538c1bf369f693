"""The one place where errors become exit codes and one-line messages."""

from __future__ import annotations

import errno
import sys
from contextlib import contextmanager

from memcli import errors

SYSTEM_HINTS = {
    errno.ENOSPC: "free some disk space, then run it again; files were left as they were or complete",
    errno.EDQUOT: "the disk quota is used up; free some space, then run it again",
    errno.EROFS: "that file system is mounted read-only",
    errno.EACCES: "check the permissions of that path",
    errno.EPERM: "check the permissions of that path",
    errno.EIO: "the disk reported an I/O error; check it before running mem again",
    errno.EMFILE: "too many open files; raise the limit (ulimit -n)",
    errno.EFBIG: "the file is larger than the file system allows",
}


def _trace(stderr) -> None:
    import traceback  # (only with -v: 2 ms of every command's start otherwise)

    traceback.print_exc(file=stderr)


def report(exc: BaseException, verbose: bool, stderr=None) -> int:
    stderr = stderr or sys.stderr
    if isinstance(exc, KeyboardInterrupt):
        stderr.write("mem: interrupted\n")
        return errors.INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        return 0  # `mem search ... | head`: the reader left; not an error
    if isinstance(exc, errors.MemError):
        if verbose:
            _trace(stderr)
        stderr.write(f"mem: error: {exc.line()}\n")
        return exc.exit_code
    if isinstance(exc, OSError) and exc.errno in SYSTEM_HINTS:
        # the machine, not mem: a full disk, a read-only mount, permissions. Atomic writes left
        # every file whole (old or new), so say what failed and what to do, without a traceback
        if verbose:
            _trace(stderr)
        where = f": {exc.filename}" if exc.filename else ""
        stderr.write(f"mem: error: {exc.strerror or 'system error'}{where} ({SYSTEM_HINTS[exc.errno]})\n")
        return errors.JOB_FAILED
    if verbose:
        _trace(stderr)
    detail = str(exc).replace("\n", " ")[:300]
    stderr.write(f"mem: internal error: {type(exc).__name__}: {detail} (rerun with -v for details)\n")
    return errors.JOB_FAILED


@contextmanager
def guarded(verbose: bool):
    """Run a command body; map any exception to an exit code via SystemExit."""
    try:
        yield
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - this is the single mapping point
        code = report(exc, verbose)
        if isinstance(exc, BrokenPipeError):
            silence_stdout()
        raise SystemExit(code) from None


def silence_stdout() -> None:
    """Point stdout at /dev/null: a reader that closed the pipe (`mem search | head`) gets no
    second BrokenPipeError at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
