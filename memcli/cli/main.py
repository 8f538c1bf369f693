"""Entry point of the `mem` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    from memcli.cli import fast

    code = fast.run(argv)
    if code is None:
        from memcli.cli.app import run

        code = run(argv)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from memcli.cli.errors import _silence_stdout

        _silence_stdout()
    sys.exit(code)
