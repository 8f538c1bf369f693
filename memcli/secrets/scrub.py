"""Scrub what a job is about to write: secret-shaped values out, a tally of what went.

Every writer of memory (ingest, remember, resource scan, dream) passes its input
through one Scrubber before anything is written or sent to a model, so notes,
session logs, stores and the inbox never hold a secret the rules recognise
(memcli.secrets.redact). The tally goes into the job's report and a warning line.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memcli.secrets.redact import Redactor


def redactor(redaction) -> Redactor:
    """The redactor the `redaction` settings ask for (memcli.config.settings.Redaction)."""
    return Redactor.from_config(redaction.enabled, dict(redaction.patterns), list(redaction.disabled_kinds))


class Scrubber:
    def __init__(self, redaction):
        self._redactor = redactor(redaction)
        self.kinds: list[str] = []

    def text(self, text: str) -> str:
        clean, kinds = self._redactor.redact(text)
        self.kinds += kinds
        return clean

    def value(self, obj: Any) -> Any:
        """A JSON-like value with its strings scrubbed (a secret-named key's value too)."""
        return self._redactor.redact_value(obj, self.kinds)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(self.kinds).items()))

    def warning(self) -> str | None:
        if not self.kinds:
            return None
        kinds = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in self.counts().items())
        return f"redacted {len(self.kinds)} secret-shaped value(s) before writing ({kinds})"
