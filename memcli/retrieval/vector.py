"""Cosine search over the passage matrix: a chunk scores as its best passage.

A vault has ~3-5 passages per chunk, and a cold search must not read all of
them (a 2,000-note vault: 40k passage rows, 62 MB). So, above SHORTLIST chunks,
the chunk rows (each chunk's normalised mean passage) pick the SHORTLIST most
similar chunks first, and only their passages are scored; below it every
passage is. Either way the score of a returned chunk is its exact best-passage
cosine. Rows are multiplied in blocks, so memory stays bounded.
"""

from __future__ import annotations

BLOCK = 32768
SHORTLIST = 512  # chunks whose passages are scored (more than any candidate pool)


def top(rows, mask, query, k: int, allowed=None, offsets=None, chunk_rows=None) -> list[tuple[int, float]]:
    """Best `k` (doc, cosine) among docs with vectors; rows and query are L2-normalised.

    `offsets` (n_docs + 1): doc d owns rows offsets[d]..offsets[d+1] (at least one) and
    scores as their maximum; None = one row per doc. `chunk_rows` (n_docs x dims), when
    given, shortlists the docs whose passages are scored.
    """
    import numpy as np

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if rows.shape[0] == 0 or norm == 0 or rows.shape[1] != q.shape[0]:
        return []
    q /= norm
    n_docs = len(mask)
    if offsets is None or chunk_rows is None or n_docs <= SHORTLIST:
        scores = _dot(rows, q)
        if offsets is not None:
            scores = np.maximum.reduceat(scores, np.asarray(offsets[:-1], dtype=np.intp))
        return _best(_filter(scores, mask, allowed), k)
    coarse = _filter(_dot(chunk_rows, q), mask, allowed)
    live = int(np.isfinite(coarse).sum())
    if live == 0:
        return []
    docs = np.argpartition(-coarse, min(SHORTLIST, live) - 1)[:min(SHORTLIST, live)]
    starts = np.asarray(offsets, dtype=np.intp)[docs]
    counts = np.asarray(offsets, dtype=np.intp)[docs + 1] - starts
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    picked = np.arange(int(counts.sum())) + np.repeat(starts - firsts, counts)
    best = np.maximum.reduceat(np.asarray(rows[picked], dtype=np.float32) @ q, firsts)
    scores = np.full(n_docs, -np.inf, dtype=np.float32)
    scores[docs] = best
    return _best(scores, k)


def cosines(rows, mask, query, docs, offsets=None) -> dict[int, float]:
    """The exact score top() gives each of `docs` that has a vector (its best passage's
    cosine), for chunks another branch found: fusion and the relevance floor see every
    candidate's real cosine, not only those of the vector branch's own list."""
    import numpy as np

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    docs = [d for d in docs if mask[d]]
    if not docs or rows.shape[0] == 0 or norm == 0 or rows.shape[1] != q.shape[0]:
        return {}
    q = q / norm
    if offsets is None:
        return {d: float(s) for d, s in zip(docs, np.asarray(rows[docs], dtype=np.float32) @ q)}
    out = {}
    for d in docs:
        out[d] = float((np.asarray(rows[int(offsets[d]):int(offsets[d + 1])], dtype=np.float32) @ q).max())
    return out


def _dot(rows, q):
    import numpy as np

    scores = np.empty(rows.shape[0], dtype=np.float32)
    for a in range(0, rows.shape[0], BLOCK):
        scores[a:a + BLOCK] = np.asarray(rows[a:a + BLOCK], dtype=np.float32) @ q  # no copy for float32
    return scores


def _filter(scores, mask, allowed):
    import numpy as np

    scores[np.asarray(mask) == 0] = -np.inf
    if allowed is not None:
        keep = np.fromiter((allowed(d) for d in range(len(scores))), dtype=bool, count=len(scores))
        scores[~keep] = -np.inf
    return scores


def _best(scores, k: int) -> list[tuple[int, float]]:
    import numpy as np

    k = min(k, int(np.isfinite(scores).sum()))
    if k <= 0:
        return []
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.lexsort((idx, -scores[idx]))]
    return [(int(d), float(scores[d])) for d in idx]
