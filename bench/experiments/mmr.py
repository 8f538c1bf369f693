"""mmr=<lambda>: maximal marginal relevance over token sets (keyword tuning). Applied by `hits`.

Relevance = score / best score, similarity = Jaccard of the hits' token sets. LoCoMo,
stem+stop keyword side, mmr=0.7: session nDCG@10 0.812 / turn R@5 0.826, no gain (pydoc
section nDCG@10 0.706 vs 0.709; on min-max hybrid 0.817 / 0.840 vs 0.816 / 0.839). Off.
"""

from __future__ import annotations


def mmr_order(snap, hits, lam: float):
    """The hits reordered by MMR with weight lam on relevance."""
    from memcli.index.keyword import tokenizer as tk

    if len(hits) < 2:
        return hits
    best = max(h.score for h in hits) or 1.0
    toks = [set(tk.tokenize(h.text)) for h in hits]
    rel = [lam * h.score / best for h in hits]
    sim = [0.0] * len(hits)  # highest Jaccard similarity to anything already picked
    left = set(range(len(hits)))
    order: list[int] = []
    while left:
        i = max(left, key=lambda j: (rel[j] - (1 - lam) * sim[j], -j))
        order.append(i)
        left.discard(i)
        for j in left:
            sim[j] = max(sim[j], len(toks[i] & toks[j]) / (len(toks[i] | toks[j]) or 1))
    return [hits[i] for i in order]
