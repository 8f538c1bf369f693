"""fuse=, qdw=: fusion of the keyword and vector branches (keyword tuning).

fuse=minmax|maxnorm|zscore: weighted sum of per-branch normalised scores over the
candidates (min-max, divide by the max, z-score). qdw=: a query-dependent vector weight,
rare:<idf frac>:<w> (a query term with idf above frac x ln(N+1), a name, number or
identifier, sets it to w) or len:<n>:<w> (queries of at most n tokens get w).
With the recommended keyword side, LoCoMo session nDCG@10 / turn R@5: RRF k=60 0.3 0.756 /
0.791 (loses to BM25 alone at every weight), k=5 0.2 0.815 / 0.834; min-max 0.3 0.816 /
0.839 (0.2: 0.819 / 0.835, 0.5: 0.783 / 0.823); z-score 0.3 0.819 / 0.838; max 0.3 0.814 /
0.830. qdw rare -> 0.1: 0.815 / 0.833; short -> 0.5: 0.814 / 0.838; no help. Shipped:
min-max at 0.3 (search.fusion, memcli.retrieval.fusion.fuse_minmax).

Both fusions of memcli are replaced: fuse_rrf (search.fusion: rrf) when fuse names another
fusion or qdw is given, as in the keyword tuning; fuse_minmax (the default since) when fuse names
maxnorm or zscore, or qdw is given. fuse=rrf means the configured RRF (--set search.fusion=rrf).
"""

from __future__ import annotations

import math
import statistics

from bench.harness.context import Ctx


def _norm(pairs, how: str) -> dict[int, float]:
    if not pairs:
        return {}
    vals = [s for _, s in pairs]
    hi, lo = max(vals), min(vals)
    if how == "minmax":
        span = hi - lo
        return {d: (s - lo) / span if span > 0 else 1.0 for d, s in pairs}
    if how == "maxnorm":
        return {d: s / hi if hi > 0 else 0.0 for d, s in pairs}
    if how == "zscore":
        mu = statistics.fmean(vals)
        sd = statistics.pstdev(vals) or 1.0
        return {d: (s - mu) / sd for d, s in pairs}
    raise SystemExit(f"unknown fusion {how!r}")


def query_vector_weight(snap, base_w: float, rule: str) -> float:
    """Query-dependent weight of the vector branch (rare:<idf frac>:<w> or len:<n>:<w>)."""
    from memcli.index.keyword import tokenizer as tk

    kind, a, b = rule.split(":")
    terms = tk.query_terms(Ctx.query)
    if kind == "len":
        return float(b) if len(terms) <= int(a) else base_w
    n = snap.n_docs
    top = 0.0
    for t in terms:
        span = snap.postings(tk.term_hash(t))
        if span is None:
            continue
        df = span[1] - span[0]
        top = max(top, math.log(1.0 + (n - df + 0.5) / (df + 0.5)))
    return float(b) if top >= float(a) * math.log(n + 1.0) else base_w


def make_fuse(how: str, qdw: str | None, rrf):
    """A replacement for memcli.retrieval.fusion.fuse_rrf or fuse_minmax (the arguments
    after vector_weight, rrf's k and `embedded`, are passed on to rrf untouched; the
    score fusions here use none of them)."""
    from memcli.retrieval import fusion

    def fuse(snap, vector, keyword, vector_weight, *rest, **kw):
        w = query_vector_weight(snap, vector_weight, qdw) if qdw else vector_weight
        if how == "rrf":
            return rrf(snap, vector, keyword, w, *rest, **kw)
        nv, nk = _norm(vector, how), _norm(keyword, how)
        floor_v = min(nv.values()) if how == "zscore" and nv else 0.0
        floor_k = min(nk.values()) if how == "zscore" and nk else 0.0
        merged: dict[int, object] = {}
        for d in list(nv) + [d for d in nk if d not in nv]:
            merged[d] = fusion.doc_hit(snap, d, w * nv.get(d, floor_v) + (1 - w) * nk.get(d, floor_k))
        for d, s in vector:
            merged[d].vector = s
        for d, s in keyword:
            merged[d].keyword = s
        return sorted(merged.values(), key=lambda h: -h.score)

    return fuse


def install(spec: dict, patch) -> None:
    from memcli.retrieval import fusion

    how, qdw = spec.get("fuse"), spec.get("qdw")
    rrf = fusion.fuse_rrf
    if (how or "rrf") != "rrf" or qdw:
        patch.set(fusion, "fuse_rrf", make_fuse(how or "rrf", qdw, rrf))
    if how != "rrf" and ((how or "minmax") != "minmax" or qdw):
        patch.set(fusion, "fuse_minmax", make_fuse(how or "minmax", qdw, rrf))
