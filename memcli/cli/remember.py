"""`mem remember`: write one fact straight into today's note."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.vault import lock

HELP = """Write TEXT as one fact into today's note of a manual session (memory/<today>/remembered-facts.md).

For "remember this": no model and no cadence; the fact is kept verbatim, tagged with --tag,
and searchable as soon as the command returns. Remembering the same fact twice on a day
writes nothing."""


def execute(
    ctx: Context,
    text: list[str],
    tags: list[str] | None = None,
    session_id: str = "manual",
    as_json: bool = False,
    wait: float = lock.WAIT,
) -> int:
    from memcli.jobs import remember

    ws = ctx.open()
    rep = remember.run(ws, " ".join(text), tags or [], session_id=session_id, wait=wait)
    ctx.report(rep, as_json, [f"{'Remembered' if rep.new else 'Already remembered'} in {rep.path}"])
    return 0


def register(app) -> None:
    import typer

    @app.command("remember", help=HELP)
    def remember_cmd(
        tctx: typer.Context,
        text: list[str] = typer.Argument(..., metavar="TEXT", help="The fact to remember."),
        tags: list[str] = typer.Option(None, "--tag", "-t", metavar="TAG", help="A tag for the fact (repeatable)."),
        session_id: str = typer.Option(
            "manual", "--session-id", "-s", metavar="ID", help="Session whose note of today receives the fact."
        ),
        as_json: bool = options.json_flag(),
        wait: float = options.wait_seconds(),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, text, tags, session_id, as_json, wait))
