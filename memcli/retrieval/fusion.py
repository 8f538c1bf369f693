"""Fusion of the keyword and vector branches, and merging of neighbouring hits.

Both fusions score chunks (documents of the snapshot); merging then folds hits of
one file whose line ranges overlap or touch, within a token budget.
"""

from __future__ import annotations

from memcli.retrieval.hits import Hit


def doc_hit(snap, doc: int, score: float) -> Hit:
    fidx, start, end, crumb = snap.meta(doc)
    return Hit(snap.paths[fidx], start, end, snap.text(doc), score, docs=[doc])


def merge(snap, hits: list[Hit], max_tokens: float) -> list[Hit]:
    """Fold hits of one file whose line ranges overlap or touch into the better-ranked one.

    A fold that would grow the hit past `max_tokens` is not made: the lower hit is
    shown on its own. Unbounded folding turned long notes into whole-file results
    (LoCoMo turn-level Recall@5 0.46 instead of 0.83, docs/evaluation.md).
    """
    from memcli.index.chunker import estimate_tokens

    kept: list[Hit] = []
    for h in hits:
        target = next((k for k in kept if k.path == h.path
                       and h.start_line <= k.end_line + 1 and h.end_line >= k.start_line - 1), None)
        if target is None:
            kept.append(h)
            continue
        trial = Hit(target.path, target.start_line, target.end_line, target.text, target.score,
                    target.vector, target.keyword, target.docs + h.docs)
        rebuild_text(snap, trial)
        if sum(estimate_tokens(x) for x in trial.text.split("\n")) > max_tokens:
            kept.append(h)
            continue
        target.docs, target.start_line, target.end_line, target.text = \
            trial.docs, trial.start_line, trial.end_line, trial.text
        if target.vector is None or (h.vector is not None and h.vector > target.vector):
            target.vector = h.vector if h.vector is not None else target.vector
        if target.keyword is None or (h.keyword is not None and h.keyword > target.keyword):
            target.keyword = h.keyword if h.keyword is not None else target.keyword
    return kept


def rebuild_text(snap, hit: Hit) -> None:
    """Text of merged chunks: the first chunk's breadcrumb, then the union of their lines."""
    by_line: dict[int, str] = {}
    crumb_of_first: list[str] = []
    first_start = None
    for d in hit.docs:
        _, start, end, crumb = snap.meta(d)
        lines = snap.text(d).split("\n")
        if first_start is None or start < first_start:
            first_start, crumb_of_first = start, lines[:crumb]
        for i, line in enumerate(lines[crumb:]):
            by_line.setdefault(start + i, line)
    lo, hi = min(by_line), max(by_line)
    hit.start_line, hit.end_line = lo, hi
    hit.text = "\n".join(crumb_of_first + [by_line.get(i, "") for i in range(lo, hi + 1)])


def fuse_rrf(snap, vector, keyword, vector_weight: float, k: int, embedded=None) -> list[Hit]:
    """Weighted reciprocal rank fusion keyed by chunk; a missing branch adds nothing.

    Except for a chunk that has no vector yet (edited since the last embedding run):
    the vector branch could not see it, so instead of 0 it is credited with its
    keyword rank. Otherwise every embedded chunk, however dissimilar, would outrank
    the best keyword match of a note written a minute ago.
    """
    merged: dict[int, Hit] = {}
    for rank, (d, s) in enumerate(vector, 1):
        h = merged[d] = doc_hit(snap, d, vector_weight / (k + rank))
        h.vector = s
    for rank, (d, s) in enumerate(keyword, 1):
        contrib = (1.0 - vector_weight) / (k + rank)
        h = merged.get(d)
        if h is None:
            abstained = embedded is not None and not embedded(d)
            h = merged[d] = doc_hit(snap, d, vector_weight / (k + rank) if abstained else 0.0)
        h.score += contrib
        h.keyword = s
    return sorted(merged.values(), key=lambda h: -h.score)


def fuse_minmax(snap, vector, keyword, vector_weight: float, embedded=None) -> list[Hit]:
    """Weighted sum of each branch's scores min-max normalised over its candidates.

    The default: on LoCoMo and a pydoc corpus it beat weighted RRF at every weight
    and k tried (docs/evaluation.md), because it keeps how far apart scores are,
    which RRF throws away. A chunk absent from a branch gets 0 from it, except a
    chunk with no vector yet, which is credited its keyword score (see fuse_rrf).
    """
    def normalised(branch):
        if not branch:
            return {}
        lo, hi = min(s for _, s in branch), max(s for _, s in branch)
        return {d: (s - lo) / (hi - lo) if hi > lo else 1.0 for d, s in branch}

    nv, nk = normalised(vector), normalised(keyword)
    raw_v, raw_k = dict(vector), dict(keyword)
    hits = []
    for d in dict.fromkeys([*nv, *nk]):
        v = nv.get(d)
        if v is None and d in nk and embedded is not None and not embedded(d):
            v = nk[d]  # not embedded yet: the vector branch abstains
        h = doc_hit(snap, d, vector_weight * (v or 0.0) + (1.0 - vector_weight) * nk.get(d, 0.0))
        h.vector, h.keyword = raw_v.get(d), raw_k.get(d)
        hits.append(h)
    return sorted(hits, key=lambda h: -h.score)  # stable: vector order breaks ties
