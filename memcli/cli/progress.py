"""Progress on stderr: a bar on a terminal; off a terminal (a log, cron, an agent's pipe) a plain
line every PLAIN_SECONDS while the job runs, so a long run is never silent. Jobs just call back."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from memcli.cli.context import Context

LABELS = {
    "scan": "Scanning",
    "chunk": "Chunking",
    "write": "Writing",
    "embed": "Embedding",
    "first-pass": "Embedding (first pass)",
    "terms": "Embedding words",
    "definitions": "Embedding definitions",
}
PLAIN_SECONDS = 10.0  # off a terminal: at most this long without a line (MEM_PROGRESS_SECONDS)
# stages after which nothing forks (memcli.watch.walk, the parse workers): the clock may start
# its thread (a thread's lock copied held into a child could hang it)
THREAD_STAGES = frozenset({"embed", "first-pass", "terms", "definitions"})


@contextmanager
def progress_bar(ctx: Context, title: str):
    if not ctx.tty:
        with plain_lines(ctx, title) as plain:
            yield plain
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=ctx.stderr),
        transient=True,
    )
    task = bar.add_task(title, total=None)
    shown = False

    def update(stage: str, done: int, total: int) -> None:
        nonlocal shown
        if not shown:
            if stage == "scan":  # the walk: quick, and it may fork (memcli.watch.walk), which a drawing thread forbids
                return
            bar.start()
            shown = True
        bar.update(task, description=f"{title}: {LABELS.get(stage, stage)}", completed=done, total=total or None)

    try:
        yield update
    finally:
        if shown:
            bar.stop()


def interval(ctx: Context) -> float:
    """MEM_PROGRESS_SECONDS (a positive number), else PLAIN_SECONDS."""
    try:
        value = float(ctx.env.get("MEM_PROGRESS_SECONDS", "") or PLAIN_SECONDS)
    except ValueError:
        return PLAIN_SECONDS
    return value if value > 0 else PLAIN_SECONDS


class _Lines:
    """The last stage reported, written as one line once `every` seconds passed without one."""

    def __init__(self, ctx: Context, title: str, every: float):
        self.ctx, self.title, self.every = ctx, title, every
        self.t0 = self.last = time.monotonic()
        self.state: tuple[str, int, int] | None = None
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.clock: threading.Thread | None = None

    def update(self, stage: str, done: int, total: int) -> None:
        self.state = (stage, done, total)
        self.due()
        if self.clock is None and stage in THREAD_STAGES:
            # a batch of a slow model can outlast the interval: the clock writes meanwhile
            self.clock = threading.Thread(target=self._tick, name="progress", daemon=True)
            self.clock.start()

    def due(self) -> None:
        with self.lock:
            now = time.monotonic()
            if self.state is None or now - self.last < self.every:
                return
            stage, done, total = self.state
            what = f"{done:,}/{total:,} ({100 * done // total}%)" if total else f"{done:,}"
            try:
                self.ctx.stderr.write(f"{self.title}: {LABELS.get(stage, stage)} {what}, {now - self.t0:.0f} s\n")
                self.ctx.stderr.flush()
            except (OSError, ValueError):  # a closed pipe: the job goes on
                pass
            self.last = now

    def _tick(self) -> None:
        while not self.stop.wait(min(1.0, self.every / 4)):
            self.due()

    def close(self) -> None:
        self.stop.set()
        if self.clock is not None:
            self.clock.join()


@contextmanager
def plain_lines(ctx: Context, title: str):
    """progress_bar's callback off a terminal: a line such as `Indexing: Embedding
    1,200/14,067 (8%), 40 s` whenever `interval(ctx)` seconds passed without one; a run shorter
    than that prints none."""
    lines = _Lines(ctx, title, interval(ctx))
    try:
        yield lines.update
    finally:
        lines.close()
