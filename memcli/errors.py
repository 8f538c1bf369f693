"""Typed errors. The CLI maps each one to an exit code and a one-line message."""

from __future__ import annotations

OK = 0
JOB_FAILED = 1
BAD_INPUT = 2
CONFIG = 3
PROVIDER = 4
UNHEALTHY = 5  # `mem health` found a failing check: its report is the output, not an error line
BUSY = 75
INTERRUPTED = 130


class MemError(Exception):
    """Base of every error a user may see; `exit_code` says how the process ends."""

    exit_code = JOB_FAILED

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

    def line(self) -> str:
        """The one line printed on stderr: what went wrong, then what to try next."""
        msg = str(self).replace("\n", " ")
        return f"{msg} ({self.hint})" if self.hint else msg


class JobFailed(MemError):
    exit_code = JOB_FAILED


class CorruptStore(JobFailed):
    """A derived file under mem_metadata/ (index segment, manifest, store, vectors) that does not
    decode: the caller rebuilds it from the Markdown rather than work from half of it."""


class BadInput(MemError):
    exit_code = BAD_INPUT


class ConfigError(MemError):
    exit_code = CONFIG


class ProviderError(MemError):
    exit_code = PROVIDER


class Busy(MemError):
    exit_code = BUSY
