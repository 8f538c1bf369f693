"""Run the real `mem` CLI with a fault at the N-th file operation (a test harness, run as a script).

    python killpoint.py <mem arguments...>

An audit hook (sys.addaudithook) watches every file operation on a path under
KILLPOINT_ROOT: opens for writing, renames/replaces, removals, mkdir/rmdir,
links, truncates and rmtree. Audit hooks run *before* the operation, so the
N-th operation can be stopped exactly at its start. Nothing of memcli is
replaced; the process simply dies, or the operating system's error is raised
from the operation, as a full disk or a read-only mount would.

Environment:
  KILLPOINT_ROOT    only operations on paths under this folder count (required)
  KILLPOINT_AT      1-based number of the operation to act on (0 or unset: never)
  KILLPOINT_MATCH   count only operations whose "event relative-path" contains this text
                    (KILLPOINT_AT then numbers the matching ones, default 1)
  KILLPOINT_ACTION  count (default) | kill | enospc | erofs | eio | eacces | pause:SECONDS
                    kill: SIGKILL this process at operation N;
                    enospc/erofs/eio/eacces: raise that OSError at operation N and every later
                    write operation (a disk stays full, a permission stays taken);
                    pause: sleep at operation N (widens a race window for another process)
  KILLPOINT_LOG     append "seconds-since-start event path" per counted operation
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time

T0 = time.monotonic()
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
EVENTS = {
    "open",
    "os.rename",
    "os.remove",
    "os.rmdir",
    "os.mkdir",
    "os.link",
    "os.symlink",
    "os.truncate",
    "shutil.rmtree",
    "os.chmod",
    "os.utime",
}
ERRORS = {"enospc": errno.ENOSPC, "erofs": errno.EROFS, "eio": errno.EIO, "eacces": errno.EACCES}


def _path(arg) -> str | None:
    if isinstance(arg, int):
        return None  # an fd: its open was counted already
    try:
        return os.path.abspath(os.fsdecode(arg))
    except (TypeError, ValueError):
        return None


def install() -> None:
    root = os.path.abspath(os.environ["KILLPOINT_ROOT"])
    match = os.environ.get("KILLPOINT_MATCH") or ""
    at = int(os.environ.get("KILLPOINT_AT") or (1 if match else 0))
    action = os.environ.get("KILLPOINT_ACTION", "count")
    log_path = os.environ.get("KILLPOINT_LOG")
    log = open(log_path, "a", buffering=1, encoding="utf-8") if log_path else None  # noqa: SIM115 - opened before the hook, for the process
    state = {"n": 0, "failing": False, "busy": False}

    def hook(event: str, args: tuple) -> None:
        if event not in EVENTS or state["busy"]:
            return
        if event == "open":
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            if not (flags & WRITE_FLAGS) and not any(c in mode for c in "wax+"):
                return
        path = _path(args[0]) if args else None
        if path is None or not (path == root or path.startswith(root + os.sep)):
            return
        if event == "os.mkdir" and os.path.isdir(path):
            return  # mkdir(exist_ok=True) of a folder that is there: the OS would say EEXIST first
        what = f"{event} {os.path.relpath(path, root)}"
        if event == "os.rename" and len(args) > 1 and _path(args[1]):
            what += f" -> {os.path.relpath(_path(args[1]), root)}"
        if match and match not in what and not state["failing"]:
            return
        state["n"] += 1
        if log is not None:
            state["busy"] = True
            try:
                log.write(f"{time.monotonic() - T0:.6f} {what}\n")
            finally:
                state["busy"] = False
        if state["failing"] or (at and state["n"] == at):
            if action == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif action.startswith("pause:"):
                time.sleep(float(action.split(":", 1)[1]))
            elif action in ERRORS:
                state["failing"] = True
                if event in ("os.remove", "os.rmdir", "shutil.rmtree") and action == "enospc":
                    return  # freeing space never fails for lack of it; the next write will
                code = ERRORS[action]
                raise OSError(code, os.strerror(code), path)

    sys.addaudithook(hook)


if __name__ == "__main__":
    install()
    from memcli.cli.main import main

    main(sys.argv[1:])
