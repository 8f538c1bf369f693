"""The typer application: global options and the explicit list of commands."""

from __future__ import annotations

import typer

from memcli import __version__
from memcli.cli import (
    agent_prompt,
    backup,
    config_cmd,
    dream,
    get,
    health,
    inbox,
    ingest,
    init,
    mcp,
    reindex,
    remember,
    resource,
    schedule,
    search,
    watch,
)
from memcli.cli.context import Context
from memcli.cli.errors import report

COMMANDS = [
    init,
    config_cmd,
    reindex,
    search,
    get,
    health,
    ingest,
    remember,
    inbox,
    resource,
    watch,
    backup,
    dream,
    schedule,
    agent_prompt,
    mcp,
]

HELP = """mem: long-term memory for AI agents, kept as plain Markdown files.

Markdown is the source of truth (MEMORY.md, memory/YYYY-MM-DD/*.md daily notes,
digest/ nodes); mem_metadata/ holds derived state that `mem reindex` rebuilds."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mem {__version__}")
        raise typer.Exit(0)


def build() -> typer.Typer:
    app = typer.Typer(
        name="mem",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def main_options(
        tctx: typer.Context,
        workspace: str = typer.Option(
            None,
            "--workspace",
            "-w",
            metavar="PATH",
            help="Workspace folder (default: MEM_WORKSPACE, a parent with mem.yaml, "
            "mem_metadata/ or agent.json, the OpenClaw workspace holding "
            "it, else ~/.mem/workspace).",
        ),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Log steps on stderr; show tracebacks."),
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        tctx.obj = Context(workspace=workspace, verbose=verbose)

    for module in COMMANDS:
        module.register(app)
    return app


def run(argv: list[str]) -> int:
    verbose = "-v" in argv or "--verbose" in argv
    try:
        build()(args=argv, prog_name="mem")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - mapped in one place
        return report(exc, verbose)
    return 0
