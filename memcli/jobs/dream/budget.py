"""--max-units with an LLM: the units over the budget stay for the next run, per unit.

The model is asked for a few more units than the budget (extraction/dream/llm.ask_count).
The first max_units are integrated; a note that a left-over unit cites is not checkpointed:
the dream state's `pending` keeps `{path: ["u:<unit name>", ...]}` for the units already
integrated from it, and the next run reads the note again (even when it has left the scan
window), tells the model which units are done and takes the rest. A note whose units were
all taken is checkpointed as before. The offline path does the same per fact (offline.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.extraction.dream.schema import Unit

PREFIX = "u:"  # pending entries of the LLM path; the offline path keeps fact hashes there


def done_names(state: dict, paths: list[str]) -> dict[str, list[str]]:
    """path -> names of the units an earlier run integrated from it (the LLM path's pending)."""
    pending = state.get("pending") if isinstance(state.get("pending"), dict) else {}
    out = {}
    for path in paths:
        names = [k[len(PREFIX):] for k in pending.get(path) or [] if isinstance(k, str) and k.startswith(PREFIX)]
        if names:
            out[path] = names
    return out


@dataclass
class UnitProgress:
    """The LLM path's budget: units taken this run, units left over, names done before."""

    changed: list[str] = field(default_factory=list)  # the notes read this run
    before: dict[str, list[str]] = field(default_factory=dict)
    taken: list[Unit] = field(default_factory=list)
    remaining: list[Unit] = field(default_factory=list)

    def finish(self, failed: list[Unit]) -> tuple[list[str], dict[str, list[str]]]:
        """(paths with nothing left, pending {path: done unit keys} for the notes a left unit cites);
        the notes of a failed unit are neither (they are read again in full)."""
        failed_names = {u.name for u in failed}
        failed_paths = {p for u in failed for p in u.paths}
        pending = {}
        for path in self.remaining_paths():
            names = set(self.before.get(path, ()))
            names |= {u.name for u in self.taken if path in u.paths and u.name not in failed_names}
            pending[path] = sorted(PREFIX + n for n in names)
        left = set(pending)
        return [p for p in self.changed if p not in left and p not in failed_paths], pending

    def remaining_paths(self) -> list[str]:
        return sorted({p for u in self.remaining for p in u.paths})
