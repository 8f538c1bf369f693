"""`mem search`: hybrid/keyword memory search with ReMe's exact output format."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import BadInput

HELP = """Search memory (MEMORY.md, daily notes, digest) for QUERY.

Prints each hit as `========== path:start-end [score=…] ==========` followed by the
chunk text and its wikilink neighbours; `(no memory results)` when nothing matches: a hit
needs a word of the query or a cosine above the vector space's noise floor. With team memory
(`shared` in mem.yaml) the namespace's shared index ranks, and another agent's hit is
`@<agent_id>/<path>`; when it cannot answer in time, the local index does (one warning).

--min-score compares with the printed score: hybrid adaptive (the default) or min-max fusion 0..1, 1 = best
in both branches; rrf 0..1/61 (0.0164); one branch alone its raw BM25 score or cosine."""

# The option table the fast path parses; a test keeps it equal to the typer command.
POSITIONAL = "query"
OPTIONS = {
    "--limit": ("limit", int),
    "-n": ("limit", int),
    "--min-score": ("min_score", float),
    "--since": ("since", str),
    "--until": ("until", str),
    "--mode": ("mode", ("auto", "hybrid", "keyword", "vector")),
    "--json": ("as_json", bool),
    "--no-links": ("no_links", bool),
    "--no-sync": ("no_sync", bool),
    "--citations": ("citations", bool),
    "--max-chars": ("max_chars", int),
}


def execute(
    ctx: Context,
    query: list[str],
    limit: int | None = None,
    min_score: float = 0.0,
    since: str | None = None,
    until: str | None = None,
    mode: str = "auto",
    as_json: bool = False,
    no_links: bool = False,
    no_sync: bool = False,
    citations: bool = False,
    max_chars: int | None = None,
) -> int:
    from memcli.jobs import search

    if max_chars is not None and max_chars < 1:
        raise BadInput(f"--max-chars must be at least 1, got {max_chars}")
    ws = ctx.open()
    result = search.run(
        ws,
        " ".join(query),
        limit=limit,
        min_score=min_score,
        since=since,
        until=until,
        links=not no_links,
        mode=mode,
        auto_sync=not no_sync,
    )
    for w in result.warnings:
        ctx.warn(w)
    if ctx.verbose:
        ctx.info(result.log_line)
    if as_json:
        ctx.json(result.to_json(citations, max_chars))
    else:
        ctx.out(result.text(citations, max_chars))
    return 0


def register(app) -> None:
    import enum

    import typer

    Mode = enum.Enum("Mode", {m: m for m in ("auto", "hybrid", "keyword", "vector")}, type=str)  # type: ignore[misc]  # members from a list; mypy cannot name them

    @app.command("search", help=HELP)
    def search_cmd(
        tctx: typer.Context,
        query: list[str] = typer.Argument(..., metavar="QUERY", help="Words to search for."),
        limit: int = typer.Option(
            None, "--limit", "-n", metavar="N", help="Results to return (default 5, config search.limit)."
        ),
        min_score: float = typer.Option(
            0.0,
            "--min-score",
            metavar="X",
            help="Drop results scoring below X: adaptive or min-max fusion 0..1, rrf 0..0.0164, one branch its raw BM25 or cosine.",
        ),
        since: str = typer.Option(None, "--since", metavar="DATE", help="Only daily notes dated on/after YYYY-MM-DD."),
        until: str = typer.Option(None, "--until", metavar="DATE", help="Only daily notes dated on/before YYYY-MM-DD."),
        mode: Mode = typer.Option("auto", "--mode", help="Force a branch; auto = hybrid when vectors exist."),
        as_json: bool = options.json_flag("Print results as one JSON document."),
        no_links: bool = typer.Option(False, "--no-links", help="Do not list wikilink neighbours."),
        no_sync: bool = typer.Option(False, "--no-sync", help="Do not index changed files first."),
        citations: bool = typer.Option(
            False, "--citations", help="Follow each snippet with `Source: <path>#L<start>-L<end>`."
        ),
        max_chars: int = typer.Option(
            None,
            "--max-chars",
            metavar="N",
            help="Cut each snippet to N characters, ending in '…' (default: whole chunk).",
        ),
    ) -> None:
        raise typer.Exit(
            invoke(
                tctx,
                execute,
                query,
                limit,
                min_score,
                since,
                until,
                mode.value,
                as_json,
                no_links,
                no_sync,
                citations,
                max_chars,
            )
        )
