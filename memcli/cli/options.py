"""Options several commands share, declared once so their flags and defaults never drift.

typer is imported when an option is declared, not with this module: the fast path
of `mem search`/`get` (cli/fast.py) imports the command modules without typer.
"""

from __future__ import annotations

from memcli.vault.lock import WAIT


def json_flag(help: str = "Print the report as JSON.") -> bool:
    """`--json`: stdout becomes one JSON document (stderr keeps the talk)."""
    import typer

    return typer.Option(False, "--json", help=help)


def wait_seconds(help: str = "How long to wait for another writer before exiting 75.", default: float = WAIT) -> float:
    """`--wait SECONDS`: how long a job waits for a lock held by another mem job (then exit 75)."""
    import typer

    return typer.Option(default, "--wait", metavar="SECONDS", help=help)
