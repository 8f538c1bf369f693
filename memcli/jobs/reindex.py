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
from dataclasses import dataclass

from memcli.errors import BadInput
from memcli.index import embed, sync
from memcli.providers.embedding import space as embedding
from memcli.index.freshness import REBUILD_BUSY, index_lock
from memcli.vault import atomic
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace
from memcli.vault import lock

SCOPES = ("all", "bm25", "embedding")


@dataclass
class ReindexReport:
    sync: sync.SyncReport
    seconds: float
    scope: str
    embed: embed.EmbedReport | None = None
    embedding_note: str = ""
    terms: tuple[int, int] | None = None  # (words embedded now, words with a vector)

    def to_json(self) -> dict:
        s = self.sync
        out = {"scope": self.scope, "full": s.full, "files": s.files, "chunks": s.chunks,
               "added": s.added, "changed": s.changed, "deleted": s.deleted,
               "skipped": [{"path": p, "reason": r} for p, r in s.skipped],
               "warnings": [{"path": p, "reason": r} for p, r in s.warnings],
               "rebuild_reason": s.reason, "seconds": round(self.seconds, 3), "embedding": None}
        if self.embed is not None:
            e = self.embed
            out["embedding"] = {"space": e.space, "switched": e.switched, "embedded": e.embedded,
                                "reused": e.reused, "chunks_with_vectors": e.with_vectors, "chunks": e.total,
                                "seconds": round(e.seconds, 3)}
            if self.terms is not None:
                out["embedding"]["words_embedded"], out["embedding"]["words"] = self.terms
        elif self.embedding_note:
            out["embedding"] = {"skipped": self.embedding_note}
        return out


def run(ws: Workspace, *, full: bool = False, scope: str = "all", wait: float = 0.0,
        progress=None) -> ReindexReport:
    if scope not in SCOPES:
        raise BadInput(f"--scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    t0 = time.perf_counter()
    with Lock(ws.lock_path(lock.REBUILD), "reindex", wait=wait, busy_message=REBUILD_BUSY):
        with index_lock(ws, "reindex", wait=max(wait, lock.WAIT)):
            atomic.clean_temp_files(ws.metadata)
            report = sync.sync(ws, full=full and scope != "embedding", progress=progress)
        report.warnings += ws.config_warnings()  # extra paths giving no files, OpenClaw settings left out
        rep = ReindexReport(report, 0.0, scope)
        if scope != "bm25":
            backend = embedding.configured(ws)
            if backend is None:
                rep.embedding_note = embedding.why_off(ws) or "no embedding backend configured"
            else:
                if full:
                    # recompute every chunk's vector, but keep the request cache: the same
                    # text in the same space gives the same vector, and paid providers bill
                    # per request (delete embedding_store/ by hand to force new requests)
                    from memcli.index import vectors

                    vectors.drop_matrix(ws.metadata)
                cfg = ws.settings.embedding
                rep.embed = embed.run(
                    ws, backend.space, backend.embedder.embed_batch, cfg.max_batch_size,
                    lambda: index_lock(ws, "embed-checkpoint", wait=lock.WAIT),
                    max_cache=cfg.max_cache_size, progress=progress)
                try:
                    rep.terms = _embed_terms(ws, backend, progress)
                finally:
                    backend.embedder.close()
    rep.seconds = time.perf_counter() - t0
    return rep


def _embed_terms(ws: Workspace, backend, progress) -> tuple[int, int] | None:
    """Word vectors for query expansion (memcli.index.terms), after the chunks' vectors."""
    from memcli.index import terms

    cfg = ws.settings.search
    if cfg.expand_terms <= 0:
        return None
    snap = sync.open_snapshot(ws)
    if snap is None:
        return None
    try:
        return terms.update(ws.metadata, backend.space, snap, backend.embedder.embed_batch,
                            ws.settings.embedding.max_batch_size,
                            cfg.expand_vocabulary, progress=progress)
    finally:
        snap.close()
