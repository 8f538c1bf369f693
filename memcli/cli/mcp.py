"""`mem mcp`: serve memory_search, memory_get, remember and ingest over MCP on stdio."""

import os
import sys

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import BadInput
from memcli.vault import lock

STOP_GRACE = 10.0  # seconds a SIGTERM leaves for clean-up before the process exits anyway

HELP = """Run an MCP server on stdin/stdout for agent hosts that speak the Model Context Protocol.

Tools: memory_search, memory_get, remember and ingest, answering with the same text as
`mem search --citations --max-chars N`, `mem get`, `mem remember` and `mem ingest`. The
workspace stays open between calls, and each search first indexes files changed since the
last one: on Linux the server keeps a change journal as `mem watch` does (unless a watcher
already keeps one), so it reads only those files. Messages are newline-delimited JSON-RPC
2.0; logs go to stderr. It runs until stdin closes (exit 0). mem.yaml is read at start: restart the server after changing it."""


def execute(ctx: Context, max_chars: int = 700, wait: float = lock.WAIT) -> int:
    import signal
    import threading

    from memcli.mcp import server, tools
    from memcli.mcp.schemas import Folders, guidance
    from memcli.mcp.watch import WatchedWorkspace

    if max_chars < 1:
        raise BadInput(f"--max-chars must be at least 1, got {max_chars}")
    from memcli.watch.feed import Feed

    # The kernel hands a process signal to any thread that does not block it, and Python runs
    # handlers only in the main thread: a SIGTERM taken by the feed or refiner thread would leave
    # the main thread asleep in read(stdin) for good. Threads inherit the mask they start with,
    # so they start with these blocked and only the main thread takes them.
    stoppers = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stoppers)

    # one file watch: the change journal (every sync here and beside it reads what changed), or,
    # where this process cannot keep it, the last walk served while inotify reports nothing
    plain = ctx.open()
    journal, _ = Feed.start(plain, count=False)
    if journal is not None and not journal.journaling:  # another watcher keeps it
        journal.close()
        journal = None
    ws = plain if journal is not None else WatchedWorkspace.of(plain)
    memory = tools.Tools(ws, max_chars=max_chars, wait=wait)
    session = server.Session(memory, ctx.stderr, ctx.verbose, instructions=guidance(max_chars, Folders.of(ws.settings)))
    wire_in, wire_out = sys.stdin.buffer, sys.stdout.buffer
    # stdout belongs to the protocol: anything else printed by accident goes to the log
    sys.stdout = sys.stderr

    def stop(signum, frame):
        # a host stopping its server is a normal end, not an error; clean-up that hangs must
        # not keep the host waiting (every write is atomic, so leaving at once loses nothing)
        deadline = threading.Timer(STOP_GRACE, os._exit, (0,))
        deadline.daemon = True  # a clean exit does not wait for it
        deadline.start()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    session.say(f"serving {ws.root} on stdio (tools: {', '.join(memory.table)})")
    memory.start_refiner(log=session.say)  # embeds in the background while the host is idle
    why_not = getattr(ws, "why_not", "")
    if why_not:
        session.logged_why_not = why_not
        session.say(f"every search walks the workspace for changes: {why_not}")
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stoppers)  # one sent meanwhile arrives here
    try:
        return server.serve(session, wire_in, wire_out)
    finally:
        if journal is not None:
            journal.close()


def register(app) -> None:
    import typer

    @app.command("mcp", help=HELP)
    def mcp_cmd(
        tctx: typer.Context,
        max_chars: int = typer.Option(
            700, "--max-chars", metavar="N", help="Cut each memory_search snippet to N characters."
        ),
        wait: float = options.wait_seconds("How long remember and ingest wait for another writer."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, max_chars, wait))
