"""Changes found by polling: a stat of every file, compared with the previous one.

What `mem watch` falls back on where inotify cannot be trusted (memcli.watch.feed says
why: not Linux, a network or synced folder, extra paths outside the workspace, a feed that
stopped). It answers with a Feed's methods (changes, wait, close), so the watch loop does
not care which it has. What is listed is the caller's: `listing` returns the stats of the
indexed files and of the resource files (path -> (mtime_ns, size)).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Stats = dict[str, tuple[int, int]]
TICK = 0.2  # the longest sleep, so a stop request is seen quickly


def changed(before: Stats, after: Stats) -> set[str]:
    """The paths added, removed or with another stat."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


class Polling:
    journaling = False
    failed = ""

    def __init__(self, listing: Callable[[], tuple[Stats, Stats]], why: str = ""):
        self.listing, self.why = listing, why
        self.base = listing()

    def changes(self) -> tuple[set[str], set[str], bool]:
        """(indexed paths, resource paths, lost: never) changed since the last call."""
        cur_i, cur_r = self.listing()
        out = changed(self.base[0], cur_i), changed(self.base[1], cur_r), False
        self.base = cur_i, cur_r
        return out

    def wait(self, stop: threading.Event, seconds: float) -> None:
        sleep(stop, seconds)

    def close(self) -> None:
        pass


def sleep(stop: threading.Event, seconds: float) -> None:
    """Until `seconds` pass or `stop` is set (looked at every TICK)."""
    end = time.monotonic() + seconds
    while not stop.is_set():
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, TICK))
