"""`mem get`: print a memory file or a line range of it (OpenClaw's memory_get)."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import BadInput

HELP = """Print the memory file PATH (workspace-relative), or --lines N lines of it from --from.

Only Markdown files under MEMORY.md, the daily folder and the digest folder are
readable; absolute paths, `..` and symlinks are refused. With team memory, a hit of
another agent's, `@<agent_id>/<path>`, prints that file as the shared index stores it."""

POSITIONAL = "path"
OPTIONS = {"--from": ("start", int), "--lines": ("lines", int), "--json": ("as_json", bool)}


def execute(
    ctx: Context, path: str | list[str], start: int = 1, lines: int | None = None, as_json: bool = False
) -> int:
    from memcli.jobs import get

    if isinstance(path, list):  # from the fast path, which collects every word
        if len(path) != 1:
            raise BadInput("give exactly one PATH")
        path = path[0]
    excerpt = get.run(ctx.open(), path, start=start, lines=lines)
    if as_json:
        ctx.json(excerpt.to_json())
    else:  # stdout stays the file's text; what superseded a statement of it goes to stderr
        ctx.out(excerpt.text)
        for line in excerpt.superseded_lines():
            ctx.info(line)
    return 0


def register(app) -> None:
    import typer

    @app.command("get", help=HELP)
    def get_cmd(
        tctx: typer.Context,
        path: str = typer.Argument(
            ..., metavar="PATH", help="Workspace-relative path, e.g. memory/2026-05-18/plan.md."
        ),
        start: int = typer.Option(1, "--from", metavar="N", help="First line to print (1-based)."),
        lines: int = typer.Option(None, "--lines", metavar="N", help="How many lines to print (default: to the end)."),
        as_json: bool = options.json_flag("Print path, range and text as JSON."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, path, start, lines, as_json))
