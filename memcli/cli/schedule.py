"""`mem schedule`: print ready-to-install crontab lines or systemd units for dream, resource scan, reindex."""

import os
import sys
from pathlib import Path

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import BadInput

HELP = """Print a schedule for this workspace's background jobs: `mem dream --if-due` every 5 minutes
(it runs when dream_cron is due), `mem resource scan` every 15 minutes and `mem reindex` nightly.

--cron (the default) prints crontab lines (`crontab -e`); --systemd prints user service and
timer units for ~/.config/systemd/user/ and the commands that enable them. Nothing is installed."""


def mem_command() -> list[str]:
    """How cron or systemd should start this mem: an absolute path, since they have a bare PATH."""
    import shutil

    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "mem" and argv0.is_file():
        return [os.path.abspath(argv0)]
    found = shutil.which("mem")
    if found:
        return [os.path.abspath(found)]
    return [sys.executable, "-m", "memcli"]


def execute(ctx: Context, systemd: bool = False, cron: bool = False, as_json: bool = False) -> int:
    from memcli.jobs import schedule

    if systemd and cron:
        raise BadInput("--systemd and --cron exclude each other", "pick one")
    ws = ctx.open()
    mem = mem_command()
    if systemd:
        if as_json:
            ctx.json({"format": "systemd", "files": schedule.systemd_units(ws, mem)})
        else:
            ctx.out(schedule.systemd_text(ws, mem))
    elif as_json:
        ctx.json({"format": "cron", "crontab": schedule.crontab(ws, mem)})
    else:
        ctx.out(schedule.crontab(ws, mem))
    return 0


def register(app) -> None:
    import typer

    @app.command("schedule", help=HELP)
    def schedule_cmd(
        tctx: typer.Context,
        systemd: bool = typer.Option(False, "--systemd", help="Print systemd user service and timer units."),
        cron: bool = typer.Option(False, "--cron", help="Print crontab lines (the default)."),
        as_json: bool = options.json_flag("Print the files as one JSON document."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, systemd, cron, as_json))
