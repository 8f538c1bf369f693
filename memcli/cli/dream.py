"""`mem dream`: consolidate recent daily notes into digest nodes (ReMe's auto_dream)."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.vault import lock

HELP = """Consolidate the daily notes of the last --scan-days days into digest nodes
(digest/personal|procedure|wiki/<slug>.md).

Only notes that changed since the last dream are read (the dream catalog). At most --max-units
units are extracted; each one corroborates, refines or corrects the existing node on its subject,
or creates one, with its sources cited. Also writes memory/<date>/interests.yaml and an inbox
record of what changed and why (`mem inbox`). Offline rules group facts by meaning (the embedding
model, when one is configured) and by the words they share, keep a fact that fits no node clearly
in its daily note, and leave the facts of units over --max-units for the next run. A new node
needs dream_min_statements (mem.yaml, default 2) statements about its subject: a lone one waits
in its note, read again each night, up to 30 days for a second. With
llm_model_config set, a model is asked about one statement at a time (its subject, whether to keep
it, which close node it belongs to and what it does there); an answer that fails its checks twice
is decided by the rules, and --json says who decided each statement and why.

--if-due runs only when a time named by dream_cron has passed since the last successful run
(within 600 s), after a random delay of up to 60 s: start it every 5 minutes from cron or a
systemd timer (`mem schedule`). Without --if-due, dream runs at once."""


def execute(
    ctx: Context,
    date: str | None = None,
    scan_days: int = 2,
    max_units: int = 5,
    dry_run: bool = False,
    if_due: bool = False,
    no_jitter: bool = False,
    as_json: bool = False,
    wait: float = lock.WAIT,
) -> int:
    from memcli.jobs import dream

    ws = ctx.open()
    if if_due and not no_jitter and ctx.verbose:
        ctx.info("mem dream: checking dream_cron (a due run starts after up to 60 s)")
    rep = dream.run(
        ws,
        day=date,
        scan_days=scan_days,
        max_units=max_units,
        dry_run=dry_run,
        if_due=if_due,
        jitter=not no_jitter,
        wait=wait,
    )
    if rep.status == "not_due" and not as_json:
        # cron mails whatever a job prints: a check that runs every 5 minutes stays quiet
        for w in rep.warnings:
            ctx.warn(w)
        if ctx.verbose:
            ctx.info("\n".join(rep.lines()))
    else:
        ctx.report(rep, as_json)
    return 0


def register(app) -> None:
    import typer

    @app.command("dream", help=HELP)
    def dream_cmd(
        tctx: typer.Context,
        date: str = typer.Option(
            None,
            "--date",
            metavar="YYYY-MM-DD",
            help="Last day of the scan window, and the day of interests.yaml (default: today).",
        ),
        scan_days: int = typer.Option(
            2, "--scan-days", metavar="N", help="How many days, ending with --date, to scan."
        ),
        max_units: int = typer.Option(5, "--max-units", metavar="N", help="At most this many units per run."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Decide and report, but write nothing."),
        if_due: bool = typer.Option(
            False, "--if-due", help="Run only when dream_cron is due (for cron and systemd timers)."
        ),
        no_jitter: bool = typer.Option(
            False, "--no-jitter", help="With --if-due: start a due run without the random delay of up to 60 s."
        ),
        as_json: bool = options.json_flag(),
        wait: float = options.wait_seconds(),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, date, scan_days, max_units, dry_run, if_due, no_jitter, as_json, wait))
