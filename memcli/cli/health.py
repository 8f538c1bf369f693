"""`mem health`: check the embedding provider, the stores and the config."""

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import OK, UNHEALTHY, BadInput

HELP = """Check the workspace: one embedding request (`["ping"]`, dimension checked), store integrity,
graph/chunk consistency, files changed since indexing, notes whose frontmatter does not parse
(each named, with the reason), config and cron validity, secrets held in memory (every kind
redaction replaces, in notes, session logs, the inbox, interests.yaml and the chunk store; files
are named, values never), and with team memory the shared index (reachable, schema, files and
chunks published, lag).

Exit 0 when healthy (warnings included: a note holding a secret is one), 5 when not (a session log,
the inbox or interests.yaml holding one is). With no embedding backend the embedding line says so
and the workspace can still be healthy."""

MARK = {"ok": "OK", "warn": "WARN", "fail": "FAIL", "skip": "SKIP"}


def execute(ctx: Context, as_json: bool = False, timeout: float = 15.0) -> int:
    from memcli.jobs import health

    if timeout <= 0:
        raise BadInput("--timeout must be positive")
    rep = health.run(ctx.open(), timeout=timeout)
    if as_json:
        ctx.json(rep.to_json())
    else:
        lines = [rep.embedding_line]
        for c in rep.checks:
            if c.name == "embedding":
                continue
            listed = {k: v for k, v in c.figures.items() if _reasons(v)}  # one line each, below
            figs = " ".join(f"{k}={v}" for k, v in c.figures.items() if k != "store_bytes" and k not in listed)
            head = f"[{c.name.upper()}] {figs}".rstrip()
            lines.append(f"{head} -> {MARK[c.status]}{': ' + c.message if c.message else ''}")
            if "store_bytes" in c.figures:
                lines += [f"    {name} {size} bytes" for name, size in c.figures["store_bytes"].items()]
            lines += dict.fromkeys(
                f"    {item['path'] + ': ' if item['path'] else ''}{item['reason']}"
                for v in listed.values()
                for item in (v if isinstance(v, list) else [v])
            )
        lines.append(rep.verdict)
        ctx.out("\n".join(lines))
    return OK if rep.healthy else UNHEALTHY


def _reasons(value) -> bool:
    """A figure of (path, reason) items, or one: printed a line each, not as a Python value."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(x, dict) and {"path", "reason"} <= x.keys() for x in items)


def register(app) -> None:
    import typer

    @app.command("health", help=HELP)
    def health_cmd(
        tctx: typer.Context,
        as_json: bool = options.json_flag("Print the checks as JSON."),
        timeout: float = typer.Option(15.0, "--timeout", metavar="S", help="Embedding request timeout in seconds."),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, as_json, timeout))
