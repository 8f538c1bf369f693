"""`mem ingest`: a conversation into the session log and, on cadence, the session's daily note."""

import sys

from memcli.cli import options
from memcli.cli.context import Context, invoke
from memcli.errors import BadInput
from memcli.vault import lock

HELP = """Save a conversation to mem_session/dialog/<ID>.jsonl and extract what is worth remembering
into the session's daily note memory/<date>/<name>.md.

Input (FILE, or stdin when FILE is - or missing): AgentScope/QwenPaw Msg objects or OpenAI chat
messages, as a JSON array or JSONL. Tool results and base64 media are dropped. Extraction runs
every auto_memory_interval user turns (default 5), or now with --force; --flush extracts what is
pending before a context compaction. With llm_model_config set an LLM writes the note; otherwise
an offline rule-based extractor does. The note is searchable as soon as the command returns."""

FORMATS = ("auto", "agentscope", "openai", "jsonl")


def read_input(file: str | None) -> str:
    """The input as text; BadInput for a missing file, a terminal, or bytes that are not UTF-8."""
    if file in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise BadInput("no conversation given", "pass FILE or pipe JSON/JSONL messages into stdin")
        data = sys.stdin.buffer.read()
        where = "stdin"
    else:
        try:
            with open(file, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise BadInput(f"cannot read {file}: {exc.strerror}") from None
        where = file
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInput(f"{where} line {line} is not valid UTF-8 (byte {exc.start})", "send UTF-8 text") from None


def execute(
    ctx: Context,
    file: str | None,
    session_id: str,
    date: str | None = None,
    fmt: str = "auto",
    force: bool = False,
    flush: bool = False,
    as_json: bool = False,
    wait: float = lock.WAIT,
) -> int:
    from memcli.jobs import ingest

    ws = ctx.open()
    text = read_input(file)
    rep = ingest.run(ws, text, session_id, day=date, fmt=fmt, force=force, flush=flush, wait=wait)
    ctx.report(rep, as_json)
    return 0


def register(app) -> None:
    import enum

    import typer

    Format = enum.Enum("Format", {m: m for m in FORMATS}, type=str)  # type: ignore[misc]  # members from a list; mypy cannot name them

    @app.command("ingest", help=HELP)
    def ingest_cmd(
        tctx: typer.Context,
        file: str = typer.Argument(None, metavar="FILE", help="Messages to ingest; - or none reads stdin."),
        session_id: str = typer.Option(
            ...,
            "--session-id",
            "-s",
            metavar="ID",
            help="The conversation's session id (a file name: no / \\ : * ? \" < > |).",
        ),
        date: str = typer.Option(
            None,
            "--date",
            metavar="YYYY-MM-DD",
            help="Date of the note (default: the newest message's date, else today).",
        ),
        fmt: Format = typer.Option("auto", "--format", help="Input format; auto detects all of them."),
        force: bool = typer.Option(False, "--force", help="Extract now, whatever auto_memory_interval says."),
        flush: bool = typer.Option(
            False,
            "--flush",
            help="Extract what is pending, before a context compaction (honoured when summarize_when_compact).",
        ),
        as_json: bool = options.json_flag(),
        wait: float = options.wait_seconds(),
    ) -> None:
        raise typer.Exit(invoke(tctx, execute, file, session_id, date, fmt.value, force, flush, as_json, wait))
