"""`mem inbox`: what jobs changed in memory, newest last."""

from memcli.cli import options
from memcli.cli.context import Context, invoke

HELP = """List the inbox: one record per job run (ingest, remember, dream, resource scan) that changed
memory, with its time and changed files. --clear empties it after listing.

Records are kept in mem_metadata/inbox/inbox.jsonl when inbox_push_enabled (default true)."""


def render(rec: dict) -> list[str]:
    head = f"{rec.get('time', '?')} {rec.get('job', '?')}"
    if rec.get("summary"):
        head += f": {rec['summary']}"
    return [head] + [
        f"  - [{c.get('path')}][{str(c.get('action', '')).upper()}]" + (f": {c['note']}" if c.get("note") else "")
        for c in rec.get("changes", [])
        if isinstance(c, dict)
    ]


def execute(ctx: Context, clear: bool = False, as_json: bool = False) -> int:
    from memcli.jobs import inbox

    ws = ctx.open()
    records = inbox.read(ws)
    if as_json:
        ctx.json({"records": records})
    elif records:
        ctx.out("\n".join(line for rec in records for line in render(rec)))
    else:
        ctx.out("(inbox is empty)")
    if clear:
        ctx.info(f"Cleared {inbox.clear(ws, records)} record(s)")
    return 0


def register(app) -> None:
    import typer

    @app.command("inbox", help=HELP)
    def inbox_cmd(
        tctx: typer.Context,
        clear: bool = typer.Option(False, "--clear", help="Empty the inbox after listing it."),
        as_json: bool = options.json_flag("Print the records as one JSON document."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, clear, as_json))
