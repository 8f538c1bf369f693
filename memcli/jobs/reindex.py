"""Reindex job: make the derived state current (or rebuild it) from the Markdown.

The keyword index is brought up to date first and never waits for embeddings;
then, with an embedding backend configured, chunks without a vector are
embedded (resumable; see memcli.index.embed). A whole run holds the rebuild
lock, so a second reindex exits at once (or after `wait` seconds, when asked to
wait); the index lock is taken only while derived files are written, so
searches and ingests carry on meanwhile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memcli.errors import BadInput
from memcli.index import sync
from memcli.index.freshness import REBUILD_BUSY, index_lock
from memcli.jobs import owner
from memcli.vault import atomic, lock
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

if TYPE_CHECKING:
    from memcli.index.embed import EmbedReport

SCOPES = ("all", "bm25", "embedding")


@dataclass
class ReindexReport:
    sync: sync.SyncReport
    seconds: float
    scope: str
    embed: EmbedReport | None = None  # memcli.index.embed (imported only when vectors are on)
    embedding_note: str = ""
    terms: tuple[int, ...] | None = None  # (words embedded now, words with a vector[, definitions: the same])
    first_pass: EmbedReport | None = None  # the static first pass, when one ran
    shared: Any = None  # memcli.team.publish.Published, when team memory is on and reachable
    shared_warnings: list = field(default_factory=list)

    def embedding_lines(self) -> list[str]:
        """What was embedded, one line per model that did something (nothing: no line)."""
        out = []
        for label, e in (("first pass", self.first_pass), ("", self.embed)):
            if e is None or (e is self.first_pass and label == "") or not (e.embedded or e.switched):
                continue
            state = "searched" if e.active else f"{e.with_vectors}/{e.total} chunks, not searched yet"
            out.append(
                f"Embedded {e.embedded} passage(s) ({e.reused} known) in {e.seconds:.2f}s"
                f"{' - ' + label if label else ''} [{state}]"
            )
        return out

    def to_json(self) -> dict:
        s = self.sync
        out: dict[str, Any] = {
            "scope": self.scope,
            "full": s.full,
            "files": s.files,
            "chunks": s.chunks,
            "added": s.added,
            "changed": s.changed,
            "deleted": s.deleted,
            "skipped": [{"path": p, "reason": r} for p, r in s.skipped],
            "warnings": [{"path": p, "reason": r} for p, r in s.warnings],
            "rebuild_reason": s.reason,
            "seconds": round(self.seconds, 3),
            "embedding": None,
        }
        if self.embed is not None:
            e = self.embed
            out["embedding"] = {
                "space": e.space,
                "switched": e.switched,
                "embedded": e.embedded,
                "reused": e.reused,
                "chunks_with_vectors": e.with_vectors,
                "chunks": e.total,
                "seconds": round(e.seconds, 3),
            }
            out["embedding"]["complete"], out["embedding"]["searched"] = e.complete, e.active
            if self.terms is not None:
                out["embedding"]["words_embedded"], out["embedding"]["words"] = self.terms[:2]
                if len(self.terms) > 2:
                    out["embedding"]["definitions_embedded"], out["embedding"]["definitions"] = self.terms[2:]
            f = self.first_pass
            if f is not None and f is not e:
                out["embedding"]["first_pass"] = {
                    "space": f.space,
                    "embedded": f.embedded,
                    "reused": f.reused,
                    "chunks_with_vectors": f.with_vectors,
                    "chunks": f.total,
                    "seconds": round(f.seconds, 3),
                }
        elif self.embedding_note:
            out["embedding"] = {"skipped": self.embedding_note}
        if self.shared is not None or self.shared_warnings:
            out["shared"] = self.shared.to_json() if self.shared is not None else {"error": self.shared_warnings[0]}
        return out


def run(
    ws: Workspace, *, full: bool = False, scope: str = "all", wait: float = 0.0, progress=None, refine: bool = True
) -> ReindexReport:
    """`refine` False stops after the first pass (the configured model's refinement is left to
    `mem watch`, `mem mcp` or the next reindex)."""
    if scope not in SCOPES:
        raise BadInput(f"--scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    t0 = time.perf_counter()
    with Lock(ws.lock_path(lock.REBUILD), "reindex", wait=wait, busy_message=REBUILD_BUSY):
        with index_lock(ws, "reindex", wait=max(wait, lock.WAIT)):
            atomic.clean_temp_files(ws.metadata)
            report = sync.sync(ws, full=full and scope != "embedding", progress=progress, strict=True)
        owner.rebuild(ws)  # the owner's names, when mem_metadata/ lost them
        report.warnings += ws.config_warnings()  # extra paths giving no files, OpenClaw settings left out
        rep = ReindexReport(report, 0.0, scope)
        if scope != "bm25":
            from memcli.jobs import embedding

            done = embedding.update(ws, progress=progress, refine=refine, full=full)
            rep.embed, rep.first_pass, rep.terms = done.target or done.first_pass, done.first_pass, done.terms
            rep.embedding_note = done.note
        if ws.settings.shared.enabled:  # after the vectors, so that they go with the chunks
            from memcli.jobs import team

            rep.shared = team.publish(ws, rep.shared_warnings)
    rep.seconds = time.perf_counter() - t0
    return rep
