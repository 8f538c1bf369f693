"""Watch: keep the search index and the resource notes current while files change.

A foreground loop over the changes memcli.watch finds: inotify events where they can be
trusted (memcli.watch.feed), else polling (memcli.watch.polling: os.scandir stats, which
work on network and synced folders where inotify does not). A change starts a batch once nothing
has moved for DEBOUNCE seconds (an editor's save is several writes), or after
MAX_DEFER seconds of constant change. A batch runs the resource scan when
resource/ changed, then an incremental index sync under the index lock. Locks are
taken per batch only, so `mem search` and `mem ingest` work beside a watcher. The
caller decides when to stop (`stop`), and gets one log line per batch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcli.errors import BadInput, Busy, MemError
from memcli.index import sync
from memcli.index.freshness import index_lock
from memcli.jobs import resource
from memcli.jobs.resource import catalog as resource_catalog
from memcli.vault import lock
from memcli.vault.workspace import Workspace
from memcli.watch.polling import Polling, Stats

DEBOUNCE = 1.5
MAX_DEFER = 10.0
RETRY_FIRST, RETRY_MAX = 30.0, 600.0  # a failed batch is retried after this, doubling
INDEX_WAIT = lock.WAIT  # how long a batch waits for the index lock (tests shorten it)
TICK = 0.2  # the longest sleep, so a stop request is seen quickly


@dataclass
class Batch:
    indexed: int = 0  # watched Markdown files seen changing
    resources: int = 0  # resource files seen changing
    sync: Any = None  # memcli.index.sync.SyncReport
    scan: Any = None  # memcli.jobs.resource.ResourceReport
    error: str = ""
    busy: bool = False
    seconds: float = 0.0
    written: set[str] = field(default_factory=set)  # Markdown the batch itself wrote
    catch_up: bool = False

    def line(self, when: datetime | None = None) -> str:
        stamp = (when or datetime.now().astimezone()).strftime("%Y-%m-%dT%H:%M:%S")
        seen = f"{self.indexed} note(s), {self.resources} resource(s) changed"
        if self.catch_up:
            seen = "catch-up"
        parts = []
        if self.sync is not None:
            s = self.sync
            parts.append(
                f"index {len(s.added)} added, {len(s.changed)} changed, {len(s.deleted)} deleted"
                + (f", {len(s.skipped)} skipped" if s.skipped else "")
            )
        if self.scan is not None:
            s = self.scan
            parts.append(
                f"resources {len(s.added)} added, {len(s.modified)} modified, {len(s.deleted)} deleted, "
                f"{len(s.skipped)} skipped, {len(s.changes)} note file(s) written"
            )
        if self.error:
            parts.append(f"{'busy' if self.busy else 'error'}: {self.error}")
        return f"[{stamp}] {seen} -> {'; '.join(parts) or 'nothing to do'} ({self.seconds:.2f}s)"


def snapshot(ws: Workspace) -> tuple[Stats, Stats]:
    """(indexed Markdown, resource files): path -> (mtime_ns, size)."""
    indexed = dict(ws.iter_watched())
    resources = {p: (st.st_mtime_ns, st.st_size) for p, st in resource_catalog.walk(ws).items()}
    return indexed, resources


def run_batch(
    ws: Workspace, *, indexed: int = 0, resources: int = 0, scan: bool = True, catch_up: bool = False
) -> Batch:
    """One round of work; errors are reported in the batch, never raised (the loop goes on)."""
    b = Batch(indexed, resources, catch_up=catch_up)
    t0 = time.perf_counter()
    # the user's edits first; the scan then indexes the notes it writes itself
    b.sync = _attempt(b, lambda: _sync(ws))
    if scan:
        b.scan = _attempt(b, lambda: resource.run(ws, wait=INDEX_WAIT))
        b.written = {p for p, _ in b.scan.changes} if b.scan is not None else set()
    b.seconds = time.perf_counter() - t0
    return b


def _attempt(b: Batch, step: Callable[[], object]):
    """The step's result, or None with the failure noted in the batch."""
    try:
        return step()
    except Busy as exc:
        b.error, b.busy = exc.line(), True
    except MemError as exc:  # e.g. the LLM is down: the files wait for the retry
        b.error = exc.line()
    except OSError as exc:  # e.g. a read-only or vanished folder
        b.error = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    return None


def _sync(ws: Workspace):
    with index_lock(ws, "watch", wait=INDEX_WAIT):
        rep = sync.sync(ws)
    if rep.wrote:  # the changed notes by meaning too (what is left: the idle refiner)
        from memcli.jobs import embedding

        notes_: list[str] = []
        embedding.after_write(ws, notes_)
        rep.warnings += [("embedding", n) for n in notes_]
    if ws.settings.shared.enabled:  # every sync publishes (the database compares publish keys)
        from memcli.jobs import team

        notes: list[str] = []
        team.publish(ws, notes)
        rep.warnings += [("shared index", n) for n in notes]
    return rep


def run(
    ws: Workspace,
    *,
    interval: float = 1.0,
    stop: threading.Event,
    log: Callable[[str], None],
    debounce: float = DEBOUNCE,
    retry_first: float = RETRY_FIRST,
) -> None:
    """Watch until `stop` is set. A catch-up batch runs first: files may have changed while no one watched."""
    if not 0 < interval <= 3600:
        raise BadInput(f"--interval must be more than 0 and at most 3600 seconds, got {interval:g}")
    source = _source(ws)
    how = (
        f"every {interval:g}s" + (f"; polling: {source.why}" if source.why else "")
        if isinstance(source, Polling)
        else "inotify" + (", change journal" if source.journaling else "")
    )
    log(f"watching {ws.root} ({how}; resource scan on changes under {ws.settings.resource_dir}/)")
    try:
        _loop(ws, source, interval, stop, log, debounce, retry_first)
    finally:
        source.close()


def _loop(
    ws: Workspace,
    source,
    interval: float,
    stop: threading.Event,
    log: Callable[[str], None],
    debounce: float,
    retry_first: float,
) -> None:
    todo_i: set[str] = set()
    todo_r: set[str] = set()
    catch_up = True  # files may have changed while no one watched
    refiner = _refiner(ws)
    redo = False  # a failed catch-up (or lost events) is tried again like a change
    first = last = not_before = 0.0
    retry = retry_first
    while not stop.is_set():
        if not catch_up:
            source.wait(stop, min(interval, TICK * 2) if todo_i or todo_r or redo else interval)
            if stop.is_set():
                break
            source, moved_i, moved_r, lost = _changes(ws, source, log)
            redo = redo or lost
            now = time.monotonic()
            if moved_i or moved_r:
                first = first if todo_i or todo_r else now
                last = now
                todo_i |= moved_i
                todo_r |= moved_r
            if not (todo_i or todo_r or redo) or now < not_before:
                _refine(refiner, log, stop)
                continue
            if now - last < debounce and now - first < MAX_DEFER:
                continue
        batch = run_batch(
            ws,
            indexed=len(todo_i),
            resources=len(todo_r),
            scan=catch_up or redo or bool(todo_r),
            catch_up=catch_up or redo,
        )
        log(batch.line())
        redo = (catch_up or redo) and bool(batch.error)
        catch_up = False
        # what the batch wrote itself is no news; anything else that moved meanwhile is
        source, late_i, late_r, lost = _changes(ws, source, log)
        late_i -= batch.written  # and a folder the batch made for them (inotify reports both)
        late_i -= {p for p in late_i if any(w.startswith(p + "/") for w in batch.written)}
        redo = redo or lost
        if batch.error:
            not_before, retry = time.monotonic() + retry, min(retry * 2, RETRY_MAX)
            todo_i |= late_i
            todo_r |= late_r
        else:
            not_before, retry = 0.0, retry_first
            todo_i, todo_r = late_i, late_r
        first = last = time.monotonic()


def _source(ws: Workspace):
    """inotify events where they can be trusted (memcli.watch.feed), else polling."""
    from memcli.watch import feed

    events, why = feed.Feed.start(ws)
    return events if events is not None else Polling(lambda: snapshot(ws), why)


def _changes(ws: Workspace, source, log: Callable[[str], None]):
    """(source, indexed paths, resource paths, lost) since the last call; a feed that
    stopped is replaced by polling, and everything counts as changed (lost)."""
    moved_i, moved_r, lost = source.changes()
    if source.failed:
        log(f"{source.failed}; polling from now on")
        source.close()
        return Polling(lambda: snapshot(ws), source.failed), moved_i, moved_r, True
    return source, moved_i, moved_r, lost


def _refiner(ws: Workspace):
    from memcli.jobs import embedding

    return embedding.Refiner(ws)


def _refine(refiner, log: Callable[[str], None], stop: threading.Event) -> None:
    """While nothing changed: a slice of embedding (chunks left without vectors, then the
    configured model refining a first pass), logged when it did something."""
    if refiner is None or stop.is_set():
        return
    try:
        line = refiner.slice()
    except MemError as exc:
        line = f"embedding: {exc.line()}"
    if line:
        stamp = datetime.now().astimezone().strftime("%Y-%m-%dT%H:%M:%S")
        log(f"[{stamp}] {line}")
