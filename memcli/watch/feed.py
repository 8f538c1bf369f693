"""What `mem watch` learns from inotify: which notes and resources changed, without
stat-ing the vault, and the change journal other commands read (memcli.watch.journal).

Polling stats every file each interval: at 100,000 notes ~0.4 s of CPU a second. Here
one inotify instance watches every folder the index walks, the resource folder and the
journal's cookie folder; a thread reads its events as they come, answers cookies at
once (even while the watcher's own batch is running) and journals the indexed paths.
A folder created or moved in is watched before it is journaled, so a file made in it
is either journaled itself or found by the walk of the folder that the journal asks for.

start() says why not when it cannot be trusted, and the caller polls instead: not
Linux, a folder on a filesystem whose changes can come from elsewhere (NFS, SMB, FUSE),
extra paths outside the workspace, the watch limit. Lost events (a queue overflow)
start a new journal session, which voids every index's mark, and are reported as
`lost` so the caller catches up with a full walk.

Built on memcli.vault.inotify rather than a watching library: the journal needs the kernel's
event order across folders, which watchfiles does not keep (measured there).
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time

from memcli.watch import journal, walk
from memcli.watch.inotify import (
    IN_CREATE,
    IN_DELETE_SELF,
    IN_IGNORED,
    IN_ISDIR,
    IN_MOVE_SELF,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    Inotify,
    Untrusted,
    opened,
)

ROTATE_BYTES = 8 << 20  # a longer journal starts a new session (the next sync walks once)
POLL = 0.2  # the thread's longest wait, so close() is quick


class Feed:
    """The watch of one workspace (`ws`: a memcli.vault.workspace.Workspace, which names the
    folders to watch and the indexed paths; this package sits below it and does not import it)."""

    def __init__(self, ws, ino: Inotify, writer: journal.Writer | None, count: bool = True):
        self.ws, self._writer, self._count = ws, writer, count
        self._ino: Inotify | None = ino  # None once closed
        self._root = os.path.realpath(ws.root)
        self._resource = os.path.relpath(os.path.realpath(ws.resource), self._root).replace(os.sep, "/")
        self._tops = ws.watched_roots()
        self._wd: dict[int, str] = {}  # watch descriptor -> folder, relative ("" = the root)
        self._cookie_wd = -1
        self._lock = threading.Lock()
        self._indexed: set[str] = set()
        self._resources: set[str] = set()
        self._lost = False
        self._noted: set[bytes] = set()  # journaled since the last cookie (one line each is enough)
        self.failed = ""  # why the feed stopped: the caller polls from then on
        self.moved = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, ws, count: bool = True) -> tuple[Feed | None, str]:
        """(a running feed, "") or (None, why it cannot be trusted here). `count`: keep the
        changed paths for changes() (`mem mcp` only keeps the journal)."""
        if not sys.platform.startswith("linux"):
            return None, "inotify needs Linux"
        if any(not r.inside and not r.problem for r in ws.extra_roots()):
            return None, "extra paths outside the workspace are polled"
        ino, why = opened()
        if ino is None:
            return None, why
        feed = cls(ws, ino, None, count)
        try:
            for folder in [*ws.watched_folders(), *feed._resource_folders()]:
                feed._watch(folder, local=True)
            feed._writer = journal.Writer.open(ws.metadata)  # None: another watcher keeps it
            if feed._writer is not None:
                feed._cookie_wd = ino.add(str(feed._writer.cookies))
        except (OSError, Untrusted) as exc:
            feed.close()
            return None, str(exc)
        feed._thread = threading.Thread(target=feed._run, name="mem-feed", daemon=True)
        feed._thread.start()
        return feed, ""

    @property
    def journaling(self) -> bool:
        return self._writer is not None

    def changes(self) -> tuple[set[str], set[str], bool]:
        """(indexed paths, resource paths, lost) since the last call; whatever is queued in
        the kernel now is read first, so a change made before this call is in the answer."""
        with self._lock:
            if self._ino is not None and not self.failed:
                self._handle(self._ino.read())
            out = self._indexed, self._resources, self._lost
            self._indexed, self._resources, self._lost = set(), set(), False
            self.moved.clear()
        return out

    def wait(self, stop: threading.Event, seconds: float, tick: float = POLL) -> None:
        """Until a change comes, `stop` is set or `seconds` pass (`stop` looked at every `tick`)."""
        end = time.monotonic() + seconds
        while not stop.is_set() and not self.moved.is_set() and (left := end - time.monotonic()) > 0:
            self.moved.wait(min(left, tick))

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._ino is not None:
                self._ino.close()
                self._ino = None

    # the thread ---------------------------------------------------------------
    def _run(self) -> None:
        ino = self._ino  # close() clears it after this thread stops; a closed fd fails select below
        try:
            while ino is not None and not self._stop.is_set():
                ready, _, _ = select.select([ino.fd], [], [], POLL)
                if ready:
                    with self._lock:
                        if self._ino is not None:
                            self._handle(self._ino.read())
        except (OSError, ValueError) as exc:  # e.g. the journal's disk is full
            with self._lock:
                self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """Stop journaling (every mark goes with the session) and tell the caller to poll."""
        self.failed = f"file watch stopped: {exc}"
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.moved.set()

    def _handle(self, events) -> None:
        out: list[bytes] = []
        for ev in events:
            if ev.mask & IN_Q_OVERFLOW:  # events were lost: no mark of this session holds
                self._lost = True
                if self._writer is not None:
                    self._writer.restart()
                self._noted.clear()
                out = []  # (the old session's lines; a cookie among them is simply not answered)
                continue
            if ev.wd == self._cookie_wd:
                if ev.mask & (IN_CREATE | IN_MOVED_TO) and ev.name:
                    out.append(journal.line("c", ev.name))
                    self._noted.clear()
                continue
            where = self._wd.get(ev.wd)
            if where is None:
                continue
            if ev.mask & IN_IGNORED:
                del self._wd[ev.wd]
            elif not ev.name:  # the folder itself went away or moved
                if ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF) and where:
                    self._note(where, True, out)
            else:  # a dot name is not indexed, but its folder's mtime moved (the quick record)
                rel = f"{where}/{ev.name}" if where else ev.name
                is_dir = bool(ev.mask & IN_ISDIR) and not ev.name.startswith(".")
                if is_dir and ev.mask & (IN_CREATE | IN_MOVED_TO) and self._wanted(rel, True):
                    try:
                        self._watch_tree(rel)  # first: a file made in it from now on has its own event
                    except OSError as exc:  # e.g. the watch limit: this folder would go unseen
                        self._fail(exc)
                        return
                self._note(rel, is_dir, out)
        if out and self._writer is not None:
            self._writer.append(b"".join(out))
            if self._writer.size() > ROTATE_BYTES:
                self._writer.restart()
        if out or self._lost or self._resources or self._indexed:
            self.moved.set()

    def _note(self, rel: str, is_dir: bool, out: list[bytes]) -> None:
        # what the watch loop counts: files, as polling would (a folder's, when it holds some)
        resource = rel == self._resource or rel.startswith(self._resource + "/")
        if not resource and not self._wanted(rel, is_dir):
            return
        if self._count:
            self._counted(rel, is_dir, resource)
        if not resource:
            entry = journal.line("d" if is_dir else "f", rel)
            if entry not in self._noted:
                self._noted.add(entry)
                out.append(entry)

    def _counted(self, rel: str, is_dir: bool, resource: bool) -> None:
        counted = self._resources if resource else self._indexed
        if is_dir:  # an empty new folder is no change; one gone or moved away is
            gone = not os.path.isdir(os.path.join(self._root, rel))
            counted.update([rel] if gone else self._files_in(rel, resource))
        elif resource or (rel.endswith(".md") and not rel.rsplit("/", 1)[-1].startswith(".")):
            counted.add(rel)

    def _files_in(self, rel: str, resource: bool) -> list[str]:
        out = []
        for folder, names in walk.folders(os.path.join(self._root, rel)):
            inner = os.path.relpath(folder, self._root).replace(os.sep, "/")
            out += [f"{inner}/{n}" for n in names if not n.startswith(".") and (resource or n.endswith(".md"))]
        return out

    def _wanted(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is, or (a folder) holds or may hold, indexed files or resources."""
        if is_dir:
            return (
                self.ws.is_watched_path(rel)
                or any(t.startswith(rel + "/") for t in self._tops)
                or rel == self._resource
                or rel.startswith(self._resource + "/")
            )
        return self.ws.is_watched_path(rel)  # any name: even one not indexed moves its folder's mtime

    def _watch(self, folder: str, local: bool = False) -> None:
        """Watch `folder`; `local`: first make sure inotify sees every change made to it."""
        assert self._ino is not None  # folders are watched only while the feed is open
        wd = self._ino.add_local(folder) if local else self._ino.add(folder)
        if wd >= 0:  # the same descriptor again for a folder renamed since: its name is updated
            self._wd[wd] = "" if folder == self._root else os.path.relpath(folder, self._root).replace(os.sep, "/")

    def _watch_tree(self, rel: str) -> None:
        for folder, _ in walk.folders(os.path.join(self._root, rel)):
            self._watch(folder)

    def _resource_folders(self):
        top = os.path.join(self._root, self._resource)
        if self._resource.startswith("..") or not os.path.isdir(top) or os.path.islink(top):
            return
        yield from (folder for folder, _ in walk.folders(top))
