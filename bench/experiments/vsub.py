"""vsub=<tokens>: the vector branch scored on smaller chunks of the same file (keyword tuning).

Keep one chunking for what is shown and fused, but score each chunk's vector as the best
cosine of the `tokens`-token (20% overlap) chunks of the same file that overlap its lines;
those small chunks live in their own index (metadata folder) of the same vault.
LoCoMo: vector-only session R@5 0.728 (vs 0.685), fused min-max 0.3 session nDCG@10 /
turn R@5 0.823 / 0.842 (+0.007 / +0.003); vsub=50 the same; on pydoc the clearest gain of the
keyword tuning (section nDCG@10 0.748 vs 0.734). The passage tuning shipped it made local to the chunk:
passage vectors (see vpass). Run it with --set chunking.passage_tokens=0 to compare.
"""

from __future__ import annotations

from bench.experiments.common import overlaps
from bench.experiments.vpass import best_per_chunk
from bench.harness.embeddings import embedder
from bench.harness.indexes import ensure_index, workspace

_SUB_CACHE: dict = {}


def _sub_rows(ws, snap, target: int):
    """(unit vectors of the small chunks, owner chunk, small chunk) for every overlapping pair."""
    import numpy as np

    from memcli.index import sync
    from memcli.index.vectors import vectors as vecmod

    key = (str(ws.root), snap.header.get("generation"), target)
    entry = _SUB_CACHE.get(key)
    if entry is None:
        sub_ws = workspace(
            ws.root,
            {"chunking.target_tokens": target, "chunking.passage_tokens": 0, "chunking.overlap_tokens": target // 5},
            {},
        )
        ensure_index(sub_ws, vectors=True)
        sub = sync.open_snapshot(sub_ws)
        m = vecmod.open_vectors(sub, vecmod.active_space(sub_ws.metadata), 0)
        rows = np.asarray([m.chunk_row(d) for d in range(sub.n_docs)], dtype=np.float32)  # one row per small chunk
        m.close()
        pairs = list(overlaps(snap, sub))
        entry = _SUB_CACHE[key] = (rows, np.array([d for d, _ in pairs]), np.array([sd for _, sd in pairs]))
        sub.close()
    return entry


def make_sub_vector_branch(spec: dict):
    """A replacement for memcli.jobs.searchers.local._vector_branch."""
    import numpy as np

    target = int(spec["vsub"])

    def branch(ws, snap, req, allowed, warnings, **_):
        from memcli.retrieval import rank

        rows, owners, members = _sub_rows(ws, snap, target)
        q = embedder().embed_batch([req.asked])[0]
        cos = rows @ (q / (np.linalg.norm(q) or 1.0))
        return rank.VectorBranch(best_per_chunk(snap.n_docs, owners, cos[members], req.depth, allowed), None, [])

    return branch


def install(spec: dict, patch) -> None:
    from memcli.jobs.searchers import local

    patch.set(local, "_vector_branch", make_sub_vector_branch(spec))
