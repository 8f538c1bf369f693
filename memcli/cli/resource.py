"""`mem resource scan`: files under resource/ into dated, source-linked daily notes."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.vault import lock

HELP = """Work with resource/: external files (reports, exports, notes) interpreted into daily notes."""

SCAN_HELP = """Scan resource/ and interpret added or modified files into daily notes; remove the
notes of deleted files.

Watched suffixes (any case): md, markdown, txt, json, jsonl, csv, yaml, yml, html, htm. A file in
resource/YYYY-MM-DD/ (at any depth) is dated that day; any other file keeps the date its
note already has, else today. Each file gets one note, memory/<date>/<stem>.md, whose
frontmatter source_resource: '[[resource/...]]' links back to it. With llm_model_config set
an LLM writes a structured summary (validated; a reply rejected twice falls back to the
offline digest); otherwise an offline digest is written: outline and opening paragraphs,
CSV columns and first rows, JSON/JSONL/YAML key structure, HTML title and text.

Files over 10 MiB, binary or not UTF-8, empty or unreadable are listed as skipped and
never stop the scan. The day index pages and the search index are updated, and the inbox
gets a record when notes changed. A note edited by hand is never overwritten or removed."""


def execute(
    ctx: Context, dry_run: bool = False, no_interpret: bool = False, as_json: bool = False, wait: float = lock.WAIT
) -> int:
    from memcli.jobs import resource

    ws = ctx.open()
    rep = resource.run(ws, dry_run=dry_run, interpret=not no_interpret, wait=wait)
    ctx.report(rep, as_json)
    return 0


def register(app) -> None:
    import typer

    group = typer.Typer(name="resource", help=HELP, no_args_is_help=True, rich_markup_mode=None)

    @group.command("scan", help=SCAN_HELP)
    def scan_cmd(
        tctx: typer.Context,
        dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change; write nothing, call no model."),
        no_interpret: bool = typer.Option(
            False, "--no-interpret", help="Update the catalog only; notes are written by a later scan."
        ),
        as_json: bool = options.json_flag(),
        wait: float = options.wait_seconds("How long to wait for another writer or scan before exiting 75."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, dry_run, no_interpret, as_json, wait))

    app.add_typer(group, name="resource")
