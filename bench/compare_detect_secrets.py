#!/usr/bin/env python3
"""mem's redactor beside Yelp's detect-secrets on the same labelled sets: one JSON document on stdout.

    python3 -m venv .venv-ds && .venv-ds/bin/pip install detect-secrets
    PYTHONPATH=$PWD .venv-ds/bin/python bench/compare_detect_secrets.py

Both are scored by bench_secrets.score, the convention of bench/bench_secrets.py: a listed secret is
recalled when it no longer occurs once the detector's findings are replaced; precision is per
replacement. detect-secrets runs as `detect-secrets scan` does (SecretsCollection.scan_file, default
settings: every plugin, every filter) on each record written to a file, note.md. It reports a line
and, for most plugins, the secret value; two readings of that are scored:

- "detect-secrets (values)": every occurrence of a reported value on its line is replaced (as a
  redactor built on it would do); a value that is not on its line (a plugin that reports
  something else) falls back to the whole line, counted in `unmapped`;
- "detect-secrets (lines)": every flagged line is replaced whole (its natural unit: a line to audit).

Also the CPU time of each on one MiB of notes (the repo's Markdown, as bench_secrets.py measures it).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO / "tests" / "data" / "secrets"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_secrets", HERE / "bench_secrets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Span:
    kind: str
    start: int
    end: int


def _merge(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            if s.end > out[-1].end:
                out[-1] = Span(out[-1].kind, out[-1].start, s.end)
            continue
        out.append(s)
    return out


class DetectSecrets:
    """detect-secrets behind the redactor's interface (find, redact), so bench_secrets.score reads both."""

    def __init__(self, folder: Path, lines: bool):
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings

        self._collection, self._settings = SecretsCollection, default_settings
        self.path, self.lines, self.unmapped = folder / "note.md", lines, 0
        self._last: tuple[str, list[Span]] | None = None

    def _scan(self, text: str) -> list:
        self.path.write_text(text, encoding="utf-8")
        with self._settings():
            found = self._collection()
            found.scan_file(str(self.path))
        return [secret for _, secret in found]

    def find(self, text: str) -> list[Span]:
        if self._last and self._last[0] == text:
            return self._last[1]
        starts = [0]
        for line in text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        spans = []
        for secret in self._scan(text):
            n = secret.line_number - 1
            lo, hi = starts[n], starts[n + 1] - 1
            value = secret.secret_value or ""
            at = text.find(value, lo, hi) if value and not self.lines else -1
            if at < 0:
                self.unmapped += not self.lines
                spans.append(Span(secret.type, lo, hi))
            while at >= 0:
                spans.append(Span(secret.type, at, at + len(value)))
                at = text.find(value, at + len(value), hi)
        self._last = (text, _merge(spans))
        return self._last[1]

    def redact(self, text: str) -> tuple[str, list[str]]:
        parts, at = [], 0
        for s in self.find(text):
            parts += [text[at : s.start], "[REDACTED:ds]"]
            at = s.end
        return "".join(parts) + text[at:], [s.kind for s in self.find(text)]


def _notes_mib() -> str:
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    notes = "\n\n".join(p.read_text(encoding="utf-8") for p in docs if p.is_file())
    return (notes * (1 + (1 << 20) // len(notes)))[: 1 << 20]


def _ms_per_mib(detector, text: str, runs: int) -> float:
    """Best of `runs` (CPU time), each on a text the detector has not just seen."""
    best = float("inf")
    for i in range(runs):
        started = time.process_time()
        detector.find(text + "\n" * (i + 1))
        best = min(best, time.process_time() - started)
    return round(best * 1000, 1)


def main() -> int:
    bench = _bench()
    sys.path.insert(0, str(REPO))
    from memcli.secrets.redact import Redactor

    sets = {"generated": (bench.load_jsonl(CORPUS / "positives.jsonl"), bench.load_jsonl(CORPUS / "negatives.jsonl"))}
    for path in [CORPUS / "sentences.jsonl", *sorted(CORPUS.glob("heldout*.jsonl"))]:
        records = bench.load_jsonl(path)
        sets[path.stem] = ([r for r in records if "secrets" in r], [r for r in records if "secrets" not in r])
    keep = ("precision", "recall", "secrets", "replacements", "true_positives", "false_positives", "false_negatives")
    doc: dict = {"sets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        detectors = {
            "mem": Redactor.from_config(),
            "detect-secrets (values)": DetectSecrets(Path(tmp), lines=False),
            "detect-secrets (lines)": DetectSecrets(Path(tmp), lines=True),
        }
        for name, (positives, negatives) in sets.items():
            doc["sets"][name] = {"positives": len(positives), "negatives": len(negatives)}
            for label, detector in detectors.items():
                scored = bench.score(detector, positives, negatives)
                doc["sets"][name][label] = {k: scored[k] for k in keep}
                if label == "detect-secrets (values)":
                    doc["sets"][name][label]["unmapped"], detector.unmapped = detector.unmapped, 0
        notes = _notes_mib()
        doc["ms_per_mib_notes"] = {
            "mem": _ms_per_mib(detectors["mem"], notes, 3),
            "detect-secrets": _ms_per_mib(detectors["detect-secrets (lines)"], notes, 1),
        }
    from importlib.metadata import version

    doc["detect_secrets_version"] = version("detect-secrets")
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
