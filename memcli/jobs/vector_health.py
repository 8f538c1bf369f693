"""What `mem health` says about vectors: which space searches use, how much of the vault
has vectors in it, and whether the matrix file is sound.

* a damaged or truncated matrix: FAIL, repaired by `mem reindex --scope embedding` (the
  matrix is rebuilt from the request cache, so nothing is sent to the provider again);
* chunks without vectors: WARN (found by keyword only until embedded);
* a searched space other than the configured one: WARN, with what happens meanwhile
  (the first pass or the previous local model answering, or vector search paused).
"""

from __future__ import annotations

from memcli.errors import CorruptStore, ProviderError
from memcli.jobs.check import FAIL, OK, WARN, Check
from memcli.vault.workspace import Workspace

REPAIR = "`mem reindex --scope embedding`"
FINISH = "`mem watch`, `mem mcp` or `mem reindex --scope embedding`"


def checks(ws: Workspace) -> list[Check]:
    """The vector checks; none when vectors are off and none exist."""
    from memcli.index import sync
    from memcli.index.vectors import vectors
    from memcli.providers.embedding import space as spaces

    active = vectors.active_space(ws.metadata)
    try:
        target = spaces.configured(ws)
    except ProviderError:
        target = None  # the embedding check reports it
    try:
        snap = sync.open_snapshot(ws)
    except CorruptStore:
        return []  # the index check reports it
    if snap is None or (active is None and target is None):
        if snap is not None:
            snap.close()
        return []
    try:
        if active is None:
            return [
                Check(
                    "vectors",
                    WARN,
                    f"no chunk has a vector yet ({snap.n_docs} chunks): search is keyword-only "
                    f"until {REPAIR} or any write embeds them",
                    {"chunks": snap.n_docs},
                )
            ]
        out = [_matrix_check(ws, active, snap)]
        space = _space_check(ws, active, target)
        return out + ([space] if space is not None else [])
    finally:
        snap.close()


def _matrix_check(ws: Workspace, active: dict, snap) -> Check:
    from memcli.index.vectors import vectors

    figures = {"space": active.get("identity"), "chunks": snap.n_docs}
    vecs = vectors.ViewVectors(snap, active, ws.settings.chunking.passage_tokens)
    try:
        if vecs.problems:
            return Check(
                "vectors",
                FAIL,
                f"{vecs.problems[0]}; run {REPAIR} (rebuilt from the request cache)",
                dict(figures, damaged_files=len(vecs.problems)),
            )
        if vecs.other_size:
            return Check(
                "vectors",
                WARN,
                "vectors were computed on passages of another size than "
                f"chunking.passage_tokens ({ws.settings.chunking.passage_tokens}); "
                f"vector search paused until {REPAIR}",
                figures,
            )
        if snap.n_docs and not vecs.usable:
            return Check("vectors", FAIL, f"the vector files of the index are missing; run {REPAIR}", figures)
        missing = int(snap.n_docs - vecs.with_vectors())
        figures.update(chunks_with_vectors=snap.n_docs - missing, passages=vecs.n_rows_embedded())
    finally:
        vecs.close()
    if missing:
        return Check(
            "vectors",
            WARN,
            f"{missing} of {snap.n_docs} chunks have no vector yet (found by keyword only); {FINISH} embeds them",
            figures,
        )
    return Check("vectors", OK, "", figures)


def _space_check(ws: Workspace, active: dict, target) -> Check | None:
    """WARN when searches use vectors of another space than the configured one."""
    from memcli.providers.embedding import space as spaces

    if target is None or active["id"] == target.space["id"]:
        return None
    figures = {
        "searched": active.get("identity"),
        "configured": target.space["identity"],
        "configured_passages_embedded": _cached(ws, target.space),
    }
    done = f"{figures['configured_passages_embedded']} passage(s) embedded with it so far"
    fast = spaces.first_pass(ws)
    if fast is not None and fast.space["id"] == active["id"]:
        return Check(
            "vectors",
            WARN,
            f"searches use the first pass ({active.get('identity')}) while "
            f"{target.space['identity']} refines the vault ({done}); {FINISH} finish it",
            figures,
        )
    if spaces.local_for(active) is not None:
        return Check(
            "vectors",
            WARN,
            f"searches use {active.get('identity')} until {target.space['identity']} "
            f"has embedded the vault ({done}); {FINISH} finish it",
            figures,
        )
    return Check(
        "vectors",
        WARN,
        f"vectors were computed with {active.get('identity')}, settings now say "
        f"{target.space['identity']}; vector search paused until {REPAIR}",
        figures,
    )


def _cached(ws: Workspace, space: dict) -> int:
    """Vectors the request cache of `space` holds (what a refinement has done so far)."""
    import numpy as np

    from memcli.index.vectors import vectors

    try:
        with np.load(vectors.cache_path(ws.metadata, space["id"]), allow_pickle=False) as data:
            return len(data["keys"])
    except (OSError, ValueError, KeyError, EOFError):
        return 0


__all__ = ["OK", "checks"]
