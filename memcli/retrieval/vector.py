"""Exact cosine search over the chunk matrix, scored block by block with one matmul each."""

from __future__ import annotations

BLOCK = 32768


def top(rows, mask, query, k: int, allowed=None) -> list[tuple[int, float]]:
    """Best `k` (doc, cosine) among rows with a vector; rows and query are L2-normalised."""
    import numpy as np

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if rows.shape[0] == 0 or norm == 0 or rows.shape[1] != q.shape[0]:
        return []
    q /= norm
    scores = np.empty(rows.shape[0], dtype=np.float32)
    for a in range(0, rows.shape[0], BLOCK):
        scores[a:a + BLOCK] = np.asarray(rows[a:a + BLOCK], dtype=np.float32) @ q  # no copy for float32
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
