"""Cosine search over passage vectors: a chunk scores as its best passage.

A vault has ~3-5 passages per chunk, and a cold search must not read all of
them (20,000 notes: 370k passage rows, 190 MB at 256 dims). So, above SHORTLIST
chunks, the chunk rows (each chunk's normalised mean passage) pick the SHORTLIST
most similar chunks first, and only their passages are scored; below it every
passage is. Above RESCORE chunks even the chunk rows are too many to read (70 MB
at 137,000 chunks), so the sign bits of each chunk row pick RESCORE chunks by
Hamming distance first (5 MB), and only those chunk rows are scored (binary
quantisation with rescoring, as vector engines do). Either way the score of a
returned chunk is its exact best-passage cosine.

`search` runs over a space's segment files (memcli.index.vectors.vectors.ViewVectors);
`top` over plain arrays (one matrix) is the same ranking, kept for measurements.
"""

from __future__ import annotations

BLOCK = 32768
SHORTLIST = 512  # chunks whose passages are scored (more than any candidate pool)
RESCORE = 4096  # chunks whose rows are scored after the Hamming stage (8x the shortlist)


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
    docs = np.argpartition(-coarse, min(SHORTLIST, live) - 1)[: min(SHORTLIST, live)]
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
        out[d] = float((np.asarray(rows[int(offsets[d]) : int(offsets[d + 1])], dtype=np.float32) @ q).max())
    return out


def _dot(rows, q):
    import numpy as np

    scores = np.empty(rows.shape[0], dtype=np.float32)
    for a in range(0, rows.shape[0], BLOCK):
        scores[a : a + BLOCK] = np.asarray(rows[a : a + BLOCK], dtype=np.float32) @ q  # no copy for float32
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


def search(vecs, query, k: int, allowed=None) -> list[tuple[int, float]]:
    """Best `k` (chunk, cosine) of a ViewVectors, in the view's numbering: the ranking of
    `top`, with the Hamming stage above RESCORE chunks."""
    import numpy as np

    from memcli.index.vectors.vecseg import passage_index

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if norm == 0 or q.shape[0] != vecs.dims:
        return []
    q = q / norm
    parts = []  # (VecSeg, live embedded local chunks, their numbers in the view)
    for seg, vs in vecs.parts:
        if vs is None:
            continue
        live = vecs.live(seg)
        live = live[vs.mask[live] == 1]
        glob = seg.doc_base + live - (np.searchsorted(seg.dead_docs, live) if seg.dead_docs else 0)
        if allowed is not None:
            keep = np.fromiter((allowed(int(d)) for d in glob), dtype=bool, count=len(glob))
            live, glob = live[keep], glob[keep]
        if len(live):
            parts.append((vs, live, glob))
    total = sum(len(live) for _, live, _ in parts)
    if total == 0:
        return []
    if total > RESCORE:
        parts = _hamming(parts, q, RESCORE)
    if total > SHORTLIST:
        parts = _rescored(parts, q, SHORTLIST)
    docs, scores = [], []
    for vs, live, glob in parts:
        picked, firsts, _ = passage_index(vs.offsets, live)
        scores.append(np.maximum.reduceat(np.asarray(vs.rows[picked], dtype=np.float32) @ q, firsts))
        docs.append(glob)
    return _ranked(np.concatenate(docs), np.concatenate(scores), k)


def _hamming(parts, q, keep: int):
    """The `keep` chunks of `parts` whose sign bits are nearest the query's."""
    import numpy as np

    code = np.packbits(q > 0)
    wide = code.size % 8 == 0
    dist = []
    for vs, live, _ in parts:
        codes = vs.codes[live]
        if wide:  # eight bytes at a time
            d = np.bitwise_count(codes.view(np.uint64) ^ code.view(np.uint64)).sum(axis=1, dtype=np.int32)
        else:
            d = np.bitwise_count(codes ^ code).sum(axis=1, dtype=np.int32)
        dist.append(d)
    return _pick(parts, np.concatenate(dist), keep)


def _rescored(parts, q, keep: int):
    """The `keep` chunks of `parts` whose chunk rows (mean passage) score best."""
    import numpy as np

    sims = [np.asarray(vs.chunk_rows[live], dtype=np.float32) @ q for vs, live, _ in parts]
    return _pick(parts, -np.concatenate(sims), keep)


def _pick(parts, cost, keep: int):
    import numpy as np

    if len(cost) <= keep:
        return parts
    chosen = np.zeros(len(cost), dtype=bool)
    chosen[np.argpartition(cost, keep - 1)[:keep]] = True
    out, at = [], 0
    for vs, live, glob in parts:
        sel = chosen[at : at + len(live)]
        at += len(live)
        if sel.any():
            out.append((vs, live[sel], glob[sel]))
    return out


def _ranked(docs, scores, k: int) -> list[tuple[int, float]]:
    import numpy as np

    k = min(k, len(scores))
    if k <= 0:
        return []
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.lexsort((docs[idx], -scores[idx]))]
    return [(int(docs[i]), float(scores[i])) for i in idx]


def view_cosines(vecs, query, docs) -> dict[int, float]:
    """`cosines` over a ViewVectors: the exact best-passage cosine of each of `docs` with vectors."""
    import numpy as np

    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if norm == 0 or q.shape[0] != vecs.dims:
        return {}
    q = q / norm
    out = {}
    for d in docs:
        if vecs.has(d):
            out[d] = float((np.asarray(vecs.doc_rows(d), dtype=np.float32) @ q).max())
    return out
