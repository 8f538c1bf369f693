"""`mem config`: print the resolved configuration, secrets masked."""

from memcli.cli import options
from memcli.cli.context import Context, invoke

HELP = """Print the effective configuration of the workspace (flags > MEM_* > mem.yaml > OpenClaw's config > agent.json > defaults).

API keys are always shown masked."""


def execute(ctx: Context, as_json: bool = False) -> int:
    from memcli.config.layers import masked

    ws = ctx.open()
    shown = masked(ws.config)
    for key in ws.ignored_keys:
        ctx.warn(f"agent.json key '{key}' is not used by mem")
    claw = ws.openclaw
    if claw is not None:
        ctx.warn(f"OpenClaw settings from {claw.path}" + (f" (agent {claw.agent})" if claw.agent else ""))
        for key in claw.ignored:
            ctx.warn(f"OpenClaw key '{key}' is not used by mem")
    for entry, why in ws.config_warnings():
        ctx.warn(f"{entry}: {why}")
    if as_json:
        ctx.json(
            {
                "workspace": str(ws.root),
                "config": shown,
                "openclaw": {"path": claw.path, "agent": claw.agent} if claw is not None else None,
            }
        )
    else:
        import yaml

        ctx.out(f"# workspace: {ws.root}\n" + yaml.safe_dump(shown, sort_keys=False, allow_unicode=True))
    return 0


def register(app) -> None:
    import typer

    @app.command("config", help=HELP)
    def config_cmd(
        tctx: typer.Context,
        as_json: bool = options.json_flag("Print as JSON."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, as_json))
