"""k1=, b=: the BM25 parameters (index-time: chunk norms are precomputed, so an index variant).

The keyword tuning (stem+stop, no merging): k1 1.2 / b 0.5 instead of 1.5 / 0.75, no change
(session nDCG@10 0.809 / turn R@5 0.830). The passage tuning on the shipped keyword side
(1.2/0.5, 0.9/0.4, 2.0/0.75, 1.5/0.9): within +-0.002. memcli keeps 1.5 / 0.75.
"""

from __future__ import annotations


def install(spec: dict, patch) -> None:
    from memcli.index.keyword import bm25

    k1, b = float(spec.get("k1", bm25.K1)), float(spec.get("b", bm25.B))
    patch.set(bm25, "K1", k1)
    patch.set(bm25, "B", b)
