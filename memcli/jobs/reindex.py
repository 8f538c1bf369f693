"""Reindex job: make the derived state current (or rebuild it) from the Markdown."""

from __future__ import annotations

import time
from dataclasses import dataclass

from memcli.errors import BadInput
from memcli.index import sync
from memcli.jobs.freshness import index_lock
from memcli.vault import atomic
from memcli.vault.workspace import Workspace

SCOPES = ("all", "bm25", "embedding")


@dataclass
class ReindexReport:
    sync: sync.SyncReport
    seconds: float
    scope: str

    def to_json(self) -> dict:
        s = self.sync
        return {"scope": self.scope, "full": s.full, "files": s.files, "chunks": s.chunks,
                "added": s.added, "changed": s.changed, "deleted": s.deleted,
                "skipped": [{"path": p, "reason": r} for p, r in s.skipped],
                "warnings": [{"path": p, "reason": r} for p, r in s.warnings],
                "rebuild_reason": s.reason, "seconds": round(self.seconds, 3)}


def run(ws: Workspace, *, full: bool = False, scope: str = "all", progress=None) -> ReindexReport:
    if scope not in SCOPES:
        raise BadInput(f"--scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    t0 = time.perf_counter()
    with index_lock(ws, "reindex"):
        atomic.clean_temp_files(ws.metadata)
        report = sync.sync(ws, full=full, progress=progress)
    return ReindexReport(report, time.perf_counter() - t0, scope)
