"""Okapi BM25 over the snapshot's postings (k1 1.5, b 0.75, ReMe's idf).

idf = ln(1 + (N - df + 0.5) / (df + 0.5)); query terms de-duplicated; only
positive scores. Pure Python over memoryviews: a cold search touches only the
postings of its own terms, so there is nothing worth loading numpy for.
"""

from __future__ import annotations

import heapq
import math

from memcli.retrieval import tokenizer


def score(snap, query: str, allowed=None) -> dict[int, float]:
    """BM25 score of every chunk matching `query`; `allowed(doc) -> bool` filters docs."""
    n = snap.n_docs
    if n == 0:
        return {}
    k1 = float(snap.header.get("k1", 1.5))
    b = float(snap.header.get("b", 0.75))
    avgdl = snap.avgdl or 1.0
    dl = snap.doc_len
    post_doc, post_tf = snap.post_doc, snap.post_tf
    scores: dict[int, float] = {}
    norm_cache: dict[int, float] = {}
    for term in tokenizer.query_terms(query):
        span = snap.postings(tokenizer.term_hash(term))
        if span is None:
            continue
        a, z = span
        df = z - a
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        if idf <= 0:
            continue
        up = idf * (k1 + 1.0)
        docs = post_doc[a:z].tolist()
        tfs = post_tf[a:z].tolist()
        for d, tf in zip(docs, tfs):
            if allowed is not None and not allowed(d):
                continue
            norm = norm_cache.get(d)
            if norm is None:
                norm = norm_cache[d] = k1 * (1.0 - b + b * dl[d] / avgdl)
            scores[d] = scores.get(d, 0.0) + up * tf / (tf + norm)
    return {d: s for d, s in scores.items() if s > 0}


def top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    """Best `k` (doc, score), highest first; ties by doc number for a stable order."""
    return heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))
