"""`mem reindex`: make the search index current, or rebuild it."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.cli.progress import progress_bar

HELP = """Index changed Markdown files (added, edited, deleted), or rebuild everything with --full.

Then embed what has no vector. A vault with no usable vectors first gets a fast first pass
(static word vectors: a 2,000-note vault in about half a minute, searchable by meaning from
then on), which the configured model then refines; its vectors replace the first pass once
every chunk has them. Ctrl-C keeps what was embedded; `mem watch`, `mem mcp` or the next
reindex go on from there (--no-refine leaves the refinement to them). Off a terminal, a
progress line goes to stderr at least every 10 seconds (MEM_PROGRESS_SECONDS).

Only one rebuild runs at a time: a second exits 75 with `Memory index rebuild is
already running` (at once, or after --wait SECONDS). Searches keep answering from the
previous index meanwhile."""


# The option table the fast path parses; a test keeps it equal to the typer command.
OPTIONS = {
    "--full": ("full", bool),
    "--scope": ("scope", ("all", "bm25", "embedding")),
    "--json": ("as_json", bool),
    "--wait": ("wait", float),
    "--no-refine": ("no_refine", bool),
}


def execute(
    ctx: Context,
    full: bool = False,
    scope: str = "all",
    as_json: bool = False,
    wait: float = 0.0,
    no_refine: bool = False,
) -> int:
    from memcli.jobs import reindex

    ws = ctx.open()
    with progress_bar(ctx, "Indexing") as progress:
        rep = reindex.run(ws, full=full, scope=scope, wait=wait, progress=progress, refine=not no_refine)
    for path, reason in rep.sync.skipped:
        ctx.warn(f"skipped {path}: {reason}")
    for path, reason in rep.sync.warnings:
        ctx.warn(f"{path}: {reason}")
    for w in getattr(rep, "shared_warnings", ()):
        ctx.warn(w)
    if ctx.verbose and rep.sync.reason:
        ctx.info(f"full rebuild: {rep.sync.reason}")
    if as_json:
        ctx.json(rep.to_json())
    else:
        s = rep.sync
        kind = "Rebuilt" if s.full else "Indexed"
        ctx.out(
            f"{kind} {s.files} files, {s.chunks} chunks ({len(s.added)} added, {len(s.changed)} changed, "
            f"{len(s.deleted)} deleted, {len(s.skipped)} skipped) in {rep.seconds:.2f}s"
        )
        for line in rep.embedding_lines():
            ctx.out(line)
        if getattr(rep, "shared", None) is not None:
            p = rep.shared
            ctx.out(
                f"Published {p.files} files, {p.chunks} chunks to namespace {p.namespace} as {p.agent_id} "
                f"({len(p.added)} added, {len(p.changed)} changed, {len(p.deleted)} deleted"
                f"{f', {len(p.failed)} refused' if p.failed else ''})"
            )
    return 0


def register(app) -> None:
    import enum

    import typer

    Scope = enum.Enum("Scope", {m: m for m in ("all", "bm25", "embedding")}, type=str)  # type: ignore[misc]  # members from a list; mypy cannot name them

    @app.command("reindex", help=HELP)
    def reindex_cmd(
        tctx: typer.Context,
        full: bool = typer.Option(False, "--full", help="Rebuild everything from the Markdown."),
        scope: Scope = typer.Option(
            "all", "--scope", help="What to bring up to date: all, bm25 (keyword) or embedding."
        ),
        as_json: bool = options.json_flag(),
        wait: float = options.wait_seconds("How long to wait for a running rebuild before exiting 75.", default=0.0),
        no_refine: bool = typer.Option(
            False,
            "--no-refine",
            help="Stop after the fast first pass; `mem watch`, "
            "`mem mcp` or the next reindex refine with the configured model.",
        ),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, full, scope.value, as_json, wait, no_refine))
