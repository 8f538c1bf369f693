"""Exact cosine search over the passage matrix, scored block by block with one matmul each.

A chunk scores as its best passage: the passage rows are multiplied in blocks (so
memory stays one float per row plus one block), then reduced per chunk with one
maximum over each chunk's row range.
"""

from __future__ import annotations

BLOCK = 32768


def top(rows, mask, query, k: int, allowed=None, offsets=None) -> list[tuple[int, float]]:
    """Best `k` (doc, cosine) among docs with vectors; rows and query are L2-normalised.

    `offsets` (n_docs + 1): doc d owns rows offsets[d]..offsets[d+1] (at least one) and
    scores as their maximum; None = one row per doc.
    """
    import numpy as np

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if rows.shape[0] == 0 or norm == 0 or rows.shape[1] != q.shape[0]:
        return []
    q /= norm
    scores = np.empty(rows.shape[0], dtype=np.float32)
    for a in range(0, rows.shape[0], BLOCK):
        scores[a:a + BLOCK] = np.asarray(rows[a:a + BLOCK], dtype=np.float32) @ q  # no copy for float32
    if offsets is not None:
        scores = np.maximum.reduceat(scores, np.asarray(offsets[:-1], dtype=np.intp))
    scores[np.asarray(mask) == 0] = -np.inf
    if allowed is not None:
        keep = np.fromiter((allowed(d) for d in range(len(scores))), dtype=bool, count=len(scores))
        scores[~keep] = -np.inf
    k = min(k, int(np.isfinite(scores).sum()))
    if k <= 0:
        return []
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.lexsort((idx, -scores[idx]))]
    return [(int(d), float(scores[d])) for d in idx]
