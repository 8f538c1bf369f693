"""What every command needs: global options, the environment, streams, the workspace.

Settings are resolved here once and passed down; nothing below the CLI reads the
environment.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


@dataclass
class Context:
    workspace: str | None = None
    verbose: bool = False
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=Path.cwd)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)

    def open(self, overrides: dict[str, Any] | None = None):
        from memcli.vault.workspace import find_root, open_workspace

        root = find_root(self.workspace, self.env, self.cwd)
        return open_workspace(root, self.env, overrides)

    def out(self, text: str) -> None:
        self.stdout.write(text if text.endswith("\n") else text + "\n")

    def json(self, data: Any) -> None:
        self.out(json.dumps(data, ensure_ascii=False, indent=2))

    def report(self, rep, as_json: bool, lines: list[str] | None = None) -> None:
        """A job's report: its warnings on stderr, then JSON or its lines (`lines`, else
        rep.lines()) on stdout."""
        for w in getattr(rep, "warnings", ()):
            self.warn(w)
        if as_json:
            self.json(rep.to_json())
        else:
            self.out("\n".join(rep.lines() if lines is None else lines))

    def warn(self, text: str) -> None:
        self.stderr.write(f"mem: warning: {text}\n")

    def info(self, text: str) -> None:
        self.stderr.write(f"{text}\n")

    @property
    def tty(self) -> bool:
        try:
            return self.stderr.isatty()
        except (AttributeError, ValueError):
            return False


def invoke(tctx, fn, *args, **kwargs) -> int:
    """Run a command's `execute` under the single error mapping; returns its exit code."""
    from memcli.cli.errors import guarded

    ctx: Context = tctx.obj
    with guarded(ctx.verbose):
        return fn(ctx, *args, **kwargs)
