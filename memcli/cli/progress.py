"""Progress on stderr, drawn only when stderr is a terminal; jobs just call back."""

from __future__ import annotations

from contextlib import contextmanager

from memcli.cli.context import Context

LABELS = {"scan": "Scanning", "chunk": "Chunking", "write": "Writing", "embed": "Embedding",
          "first-pass": "Embedding (first pass)", "terms": "Embedding words",
          "definitions": "Embedding definitions"}


@contextmanager
def progress_bar(ctx: Context, title: str):
    if not ctx.tty:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(file=ctx.stderr), transient=True)
    task = bar.add_task(title, total=None)
    shown = False

    def update(stage: str, done: int, total: int) -> None:
        nonlocal shown
        if not shown:
            if stage == "scan":  # the walk: quick, and it may fork (memcli.vault.walk), which a drawing thread forbids
                return
            bar.start()
            shown = True
        bar.update(task, description=f"{title}: {LABELS.get(stage, stage)}", completed=done,
                   total=total or None)

    try:
        yield update
    finally:
        if shown:
            bar.stop()
