"""`mem backup`: create, list, verify, restore, roll back and prune workspace backups."""

import sys
from pathlib import Path

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.cli.progress import progress_bar
from memcli.errors import BadInput, JobFailed, MemError

HELP = """Back up the workspace into one self-describing zip, check backups, restore them.

Modules: vault (MEMORY.md, memory/, digest/), sessions (mem_session/), resources (resource/),
metadata (mem_metadata/, rebuildable), config (mem.yaml, agent.json without API keys) and,
only when asked, secrets (those API keys). Backups go to backup_dir (MEM_BACKUP_DIR, default
~/.mem/backups) as <workspace>-<UTC time>.zip; meta.json inside lists every file's size and
sha256."""

MODULES_HELP = "Comma-separated modules: vault, sessions, resources, metadata, config, secrets."


def folder(ctx: Context, ws) -> Path:
    """backup_dir with ~ taken from the CLI's HOME; relative to the workspace, like other folders."""
    raw = ws.settings.backup_dir or "~/.mem/backups"
    if raw == "~" or raw.startswith("~/"):
        raw = (ctx.env.get("HOME") or str(Path.home())) + raw[1:]
    path = Path(raw)
    return path if path.is_absolute() else ws.root / path


def locate(ctx: Context, file: str) -> Path:
    """FILE as given, else a name inside the backup folder (or its snapshots/)."""
    path = ctx.cwd / Path(file).expanduser()
    if path.exists() or "/" in file:
        return path
    try:
        base = folder(ctx, ctx.open())
    except MemError:
        return path  # no workspace to say where backups live: report the path as given
    return next((p for p in (base / file, base / "snapshots" / file) if p.exists()), path)


def confirm(ctx: Context, what: str, detail: str, yes: bool, warnings=()) -> None:
    """Ask on a terminal; elsewhere only --yes may replace files. The plan's warnings come
    first, so what is asked is what will happen (with --yes they come with the report)."""
    if yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        raise BadInput(f"{what} needs confirmation", "pass --yes to confirm; stdin is not a terminal")
    for w in warnings:
        ctx.warn(w)
    ctx.stderr.write(f"{what[:1].upper()}{what[1:]}{detail}? [y/N] ")
    ctx.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise JobFailed("restore cancelled; nothing was changed")


def do_create(ctx: Context, modules, out, note, allow_unreadable, as_json) -> int:
    from memcli.jobs import backup

    ws = ctx.open()
    with progress_bar(ctx, "Backup") as progress:
        rep = backup.create(
            ws,
            ctx.cwd / out if out else folder(ctx, ws),
            backup.parse_modules(modules),
            note=note,
            progress=progress,
            allow_unreadable=allow_unreadable,
        )
    data = rep.to_json()
    for s in data["skipped"]:
        ctx.warn(f"skipped {s['path']}: {s['reason']}")
    for s in data["missing"]:
        ctx.warn(f"not saved, cannot be read: {s['path']}: {s['reason']} (the backup is marked incomplete)")
    if "secrets" in data["modules"]:
        ctx.warn("this backup holds API keys (secrets module): keep it private")
    elif data["secrets_left_out"]:
        ctx.info(f"{data['secrets_left_out']} API key(s) left out (add secrets to --modules to keep them)")
    if as_json:
        ctx.json(data)
    else:
        ctx.out(rep.line())
    return 0


def do_list(ctx: Context, as_json) -> int:
    from memcli.jobs import backup
    from memcli.jobs.backup import report as backup_report

    base = folder(ctx, ctx.open())
    items = backup.listing(base)
    if as_json:
        ctx.json({"backup_dir": str(base), "backups": items})
    else:
        ctx.out("\n".join(map(backup_report.list_line, items)) if items else f"(no backups in {base})")
    return 0


def do_verify(ctx: Context, file, as_json) -> int:
    from memcli.jobs import backup
    from memcli.jobs.backup import report as backup_report

    path = locate(ctx, file)
    with progress_bar(ctx, "Verify") as progress:
        data = backup_report.verify_json(path, backup.verify(path, progress))
    if as_json:
        ctx.json(data)
    else:
        ctx.out("\n".join(backup_report.verify_lines(data)))
    return 0


def render_restore(ctx: Context, rep, as_json: bool, verb: str) -> None:
    ctx.report(rep, as_json, rep.lines(verb))


def do_restore(ctx: Context, file, modules, yes, wait, as_json) -> int:
    from memcli.jobs import backup

    ws = ctx.open()
    path, chosen = locate(ctx, file), backup.parse_modules(modules)
    plan = backup.describe(ws, path, chosen)
    confirm(
        ctx,
        f"restoring {path.name} into {ws.root}",
        f" replaces {', '.join(plan.slots()) or 'nothing'} (a snapshot is taken first). Continue",
        yes,
        plan.warnings,
    )
    base = folder(ctx, ws)
    with progress_bar(ctx, "Restore") as progress:
        rep = backup.restore(ws, path, base / "snapshots", ctx.open, modules=chosen, wait=wait, progress=progress)
    render_restore(ctx, rep, as_json, "Restored")
    return 0


def do_rollback(ctx: Context, yes, wait, as_json) -> int:
    from memcli.jobs import backup

    ws = ctx.open()
    snapshots = folder(ctx, ws) / "snapshots"
    confirm(ctx, f"rolling {ws.root} back to {backup.latest_snapshot(ws, snapshots).name}", ". Continue", yes)
    with progress_bar(ctx, "Rollback") as progress:
        rep = backup.rollback(ws, snapshots, ctx.open, wait=wait, progress=progress)
    render_restore(ctx, rep, as_json, "Rolled back")
    return 0


def do_prune(ctx: Context, keep, as_json) -> int:
    from memcli.jobs import backup

    ws = ctx.open()
    rep = backup.prune(ws, folder(ctx, ws), keep)
    ctx.report(rep, as_json)
    return 0


def register(app) -> None:
    import typer

    sub = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode=None)
    as_json = options.json_flag("Print the result as one JSON document.")
    yes = typer.Option(False, "--yes", "-y", help="Do not ask; required when stdin is not a terminal.")
    wait = options.wait_seconds("How long to wait for another mem job before exiting 75.")

    @sub.command("create", help="Write a backup zip (all modules but secrets by default).")
    def create_cmd(
        tctx: typer.Context,
        modules: str = typer.Option(None, "--modules", "-m", metavar="LIST", help=MODULES_HELP),
        out: str = typer.Option(None, "--out", metavar="DIR", help="Folder for the zip (default: backup_dir)."),
        note: str = typer.Option("", "--note", metavar="TEXT", help="A note kept in meta.json and listed."),
        allow_unreadable: bool = typer.Option(
            False,
            "--allow-unreadable",
            help="Save what can be read and mark the backup incomplete, instead of failing on a "
            "file or folder this user cannot read.",
        ),
        json_: bool = as_json,
    ) -> None:
        raise typer.Exit(invoke(tctx, do_create, modules, out, note, allow_unreadable, json_))

    @sub.command("list", help="List the backups and pre-restore snapshots in backup_dir, oldest first.")
    def list_cmd(tctx: typer.Context, json_: bool = as_json) -> None:
        raise typer.Exit(invoke(tctx, do_list, json_))

    @sub.command(
        "verify",
        help="Check every file's sha256 and the zip's CRCs; exit 2 when damaged or unsafe. "
        "An incomplete backup (--allow-unreadable) is named so, with what it lacks.",
    )
    def verify_cmd(
        tctx: typer.Context,
        file: str = typer.Argument(..., metavar="FILE", help="A backup zip or its name."),
        json_: bool = as_json,
    ) -> None:
        raise typer.Exit(invoke(tctx, do_verify, file, json_))

    @sub.command(
        "restore",
        help="Restore a backup: full (replaces every module) or the --modules given. "
        "A snapshot of the current state is taken first; the index is rebuilt after. "
        "Another workspace's backup is restored into this one's folder names, with a "
        "warning.",
    )
    def restore_cmd(
        tctx: typer.Context,
        file: str = typer.Argument(..., metavar="FILE", help="A backup zip or its name."),
        modules: str = typer.Option(
            None, "--modules", "-m", metavar="LIST", help="Restore only these modules (custom restore). " + MODULES_HELP
        ),
        yes_: bool = yes,
        wait_: float = wait,
        json_: bool = as_json,
    ) -> None:
        raise typer.Exit(invoke(tctx, do_restore, file, modules, yes_, wait_, json_))

    @sub.command(
        "rollback",
        help="Undo the last restore: restore the newest pre-restore snapshot "
        "(itself snapshotted, so running it again redoes the restore).",
    )
    def rollback_cmd(tctx: typer.Context, yes_: bool = yes, wait_: float = wait, json_: bool = as_json) -> None:
        raise typer.Exit(invoke(tctx, do_rollback, yes_, wait_, json_))

    @sub.command("prune", help="Delete all but the N newest backups and N newest snapshots of this workspace.")
    def prune_cmd(
        tctx: typer.Context,
        keep: int = typer.Option(..., "--keep", metavar="N", min=1, help="How many of each to keep."),
        json_: bool = as_json,
    ) -> None:
        raise typer.Exit(invoke(tctx, do_prune, keep, json_))

    app.add_typer(sub, name="backup")
