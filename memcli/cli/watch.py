"""`mem watch`: keep the index and the resource notes current, in the foreground."""

import signal
import threading

from memcli.cli.context import Context, invoke
from memcli.errors import INTERRUPTED, OK

HELP = """Watch the workspace and keep memory current as files change: a foreground loop for a
terminal or a systemd service.

On Linux it is told of changes by inotify (on local filesystems, without extra paths
outside the workspace) and keeps a change journal in mem_metadata/watch/: while it runs,
`mem reindex`, every write and `mem search` ask it what changed instead of checking every
file (a one-file update of 100,000 notes stats one file). Elsewhere it polls memory/,
digest/, MEMORY.md (and extra_paths) and resource/ every --interval seconds; the first
log line says which. Once changes have settled for 1.5 s it runs `mem resource scan` when
resource/ changed and an incremental index update, and logs one line per batch on stderr. A first
batch at start-up catches up with changes made while nothing watched. Locks are taken per
batch only, so `mem search` and `mem ingest` keep working beside it; a failed batch is
retried later. Ctrl-C stops it (exit 130), SIGTERM too (exit 0, for systemd); a second
signal stops at once. Configuration is read at start-up: restart it after editing mem.yaml."""


def execute(ctx: Context, interval: float = 1.0) -> int:
    from memcli.jobs import watch

    ws = ctx.open()
    stop = threading.Event()
    code = {"value": OK}

    def on_signal(signum, _frame) -> None:
        if stop.is_set():  # asked twice: do not wait for the batch to finish
            raise KeyboardInterrupt
        code["value"] = OK if signum == signal.SIGTERM else INTERRUPTED
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        watch.run(ws, interval=interval, stop=stop, log=_logger(ctx))
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    ctx.info("stopped")
    return code["value"]


def _logger(ctx: Context):
    def log(line: str) -> None:
        ctx.info(line)
        ctx.stderr.flush()  # a pipe (journald, a test) sees each line as it happens

    return log


def register(app) -> None:
    import typer

    @app.command("watch", help=HELP)
    def watch_cmd(
        tctx: typer.Context,
        interval: float = typer.Option(
            1.0,
            "--interval",
            metavar="SECONDS",
            help="How often to look for changes when polling (0 < SECONDS <= 3600).",
        ),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, interval))
