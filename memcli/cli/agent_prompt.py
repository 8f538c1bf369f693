"""`mem agent-prompt`: ready-to-paste memory guidance and tool definitions for an agent."""

from memcli.cli.context import Context, invoke
from memcli.errors import BadInput

HELP = """Print what to give an agent so it uses this workspace as its memory: a system-prompt section
on when to search and when to write memory, and the tools memory_search, memory_get and
remember, each mapped to the exact `mem` command line it runs.

--format markdown (the default) prints it all for a prompt or an AGENTS.md; json prints one
document (system_prompt, OpenAI tools, the command behind each tool); openai-tools prints
only the list of OpenAI tool definitions, for the `tools` of a chat completion request."""


def execute(ctx: Context, fmt: str = "markdown", max_chars: int = 700) -> int:
    from memcli.cli.schedule import mem_command
    from memcli.mcp import schemas as agent_prompt

    if fmt not in agent_prompt.FORMATS:
        raise BadInput(f"--format must be one of {', '.join(agent_prompt.FORMATS)}, got {fmt!r}")
    if max_chars < 1:
        raise BadInput(f"--max-chars must be at least 1, got {max_chars}")
    ws = ctx.open()
    root, folders = str(ws.root), agent_prompt.Folders.of(ws.settings)
    mem = mem_command()
    if fmt == "markdown":
        ctx.out(agent_prompt.markdown(mem, root, max_chars, folders))
    elif fmt == "json":
        ctx.json(agent_prompt.document(mem, root, max_chars, folders))
    else:
        ctx.json([t.openai() for t in agent_prompt.memory_tools(max_chars, folders)])
    return 0


def register(app) -> None:
    import enum

    import typer

    Format = enum.Enum("Format", {m: m for m in ("markdown", "json", "openai-tools")}, type=str)  # type: ignore[misc]  # members from a list; mypy cannot name them

    @app.command("agent-prompt", help=HELP)
    def agent_prompt_cmd(
        tctx: typer.Context,
        fmt: Format = typer.Option("markdown", "--format", help="What to print: markdown, json or openai-tools."),
        max_chars: int = typer.Option(
            700, "--max-chars", metavar="N", help="Snippet size memory_search returns (its --max-chars)."
        ),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, fmt.value, max_chars))
