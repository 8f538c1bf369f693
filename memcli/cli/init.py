"""`mem init`: create a workspace."""

from memcli.cli import options
from memcli.cli.context import Context, invoke

HELP = """Create a workspace at PATH (default: the resolved workspace): its folders and a commented mem.yaml.

Existing files are left alone, so running it on a QwenPaw agent workspace is safe."""


def execute(ctx: Context, path: str | None, as_json: bool = False) -> int:
    from memcli.jobs import init
    from memcli.vault.workspace import find_root, open_workspace

    root = find_root(path or ctx.workspace, ctx.env, ctx.cwd, create=True)
    # an existing agent.json or mem.yaml may rename the folders: create those, not the defaults
    settings = open_workspace(root, ctx.env).settings if root.is_dir() else None
    rep = init.run(root, settings)
    if as_json:
        ctx.json(rep.to_json())
    elif rep.created:
        ctx.out(f"Initialized workspace {root} (created {', '.join(rep.created)})")
    else:
        ctx.out(f"Workspace {root} already initialized")
    return 0


def register(app) -> None:
    import typer

    @app.command("init", help=HELP)
    def init_cmd(
        tctx: typer.Context,
        path: str = typer.Argument(None, metavar="PATH", help="Folder to create or complete."),
        as_json: bool = options.json_flag("Print what was created as JSON."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, path, as_json))
