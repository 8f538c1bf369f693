"""The named sweeps: `--sweep NAME` runs each row (label, mode, --set overrides, --variant spec).

headline (what `make eval` reports), adaptive and passages (the passage tuning: passage vectors,
query expansion and what was tried beside them) measure today's code; the keyword-tuning
sweeps (chunking, vector-chunking, full, pydoc, extra) were measured on the code of their time
("shipped code" there meant no stemming or stopwords, unbounded merging and RRF), so today the
same rows measure something else where memcli's defaults have changed since: in particular
search.fusion is adaptive now (fixed-weight min-max before), so their "RRF" rows without
`--set search.fusion=rrf` fuse with it. Their figures are in docs/evaluation.md. prototypes runs every prototype
once (a smoke test: `--sweep prototypes --conversations 1`).
"""

from __future__ import annotations

VW = "search.vector_weight"
# the keyword tuning's recommended keyword side (since shipped as memcli's tokenizer and merge rule)
RECOMMENDED = "tok=stem+stop,merge=capkeep1.5"
STEM_STOP = "tok=stem+stop,merge=off"
# the default the keyword tuning shipped: one vector per chunk, no query expansion
PREVIOUS = {"chunking.passage_tokens": 0, "search.expand_terms": 0, "search.fusion": "minmax"}
MINMAX = {"search.fusion": "minmax"}  # the fixed-weight fusion shipped before the adaptive one


def _chunk(t: int, frac: int) -> dict:
    return {"chunking.target_tokens": t, "chunking.overlap_tokens": t * frac // 100}


CHUNKING = [
    (f"{mode} {t}/{t * frac // 100} merge={m}", mode, _chunk(t, frac), f"merge={m}")
    for mode in ("keyword",)
    for m in ("on", "off")
    for t in (100, 200, 400, 800)
    for frac in (0, 20)
]

VECTOR_CHUNKING = [
    (f"vector {t}/{t * frac // 100} merge={m}", "vector", _chunk(t, frac), f"merge={m}")
    for t, frac in [(200, 20), (100, 20), (400, 0), (800, 20), (400, 20)]
    for m in ("off", "on")
]

FULL = [("BM25 baseline (400/80, shipped code)", "keyword", {}, "")]
FULL += [
    (f"keyword tok={t} merge=off", "keyword", {}, f"tok={t},merge=off")
    for t in ("base", "stem", "lightstem", "stop", "stopq", "stem+stop")
]
FULL += [
    (f"keyword stem+stop merge={m}", "keyword", {}, f"tok=stem+stop,merge={m}")
    for m in ("on", "drop", "cap1.5", "capkeep1.5", "perfile1", "perfile2")
]
FULL += [
    ("keyword stem+stop k1=1.2 b=0.5", "keyword", {}, STEM_STOP + ",k1=1.2,b=0.5"),
    ("keyword stem+stop MMR 0.7", "keyword", {}, STEM_STOP + ",mmr=0.7"),
    ("keyword stem+stop recency 30d", "keyword", {}, STEM_STOP + ",recency=30"),
    ("keyword stem+stop recency 180d", "keyword", {}, STEM_STOP + ",recency=180"),
]
FULL += [
    (f"shipped keyword, candidate_multiplier {c}", "keyword", {"search.candidate_multiplier": c}, "")
    for c in (1, 5, 10)
]
FULL += [
    ("vector only (shipped code)", "vector", {}, ""),
    ("vector only merge=off", "vector", {}, "merge=off"),
    ("vector only 200/40 merge=off", "vector", _chunk(200, 20), "merge=off"),
    ("vector only 100/20 merge=on", "vector", _chunk(100, 20), ""),
]
FULL += [(f"hybrid RRF k=60 {w} (shipped code)", "hybrid", {VW: w}, "") for w in (0.7, 0.3)]
FULL += [(f"hybrid RRF k=60 {w}, rec. keyword side", "hybrid", {VW: w}, RECOMMENDED) for w in (0.7, 0.5, 0.3, 0.2, 0.1)]
FULL += [
    (f"hybrid RRF k={k} {w}, rec. keyword side", "hybrid", {VW: w, "search.rrf_k": k}, RECOMMENDED)
    for k, w in ((5, 0.2), (5, 0.3), (10, 0.3), (20, 0.3), (100, 0.3))
]
FULL += [
    (f"hybrid {f} {w}, rec. keyword side", "hybrid", {VW: w}, RECOMMENDED + f",fuse={f}")
    for f, w in (("minmax", 0.1), ("minmax", 0.2), ("minmax", 0.3), ("minmax", 0.5), ("maxnorm", 0.3), ("zscore", 0.3))
]
FULL += [
    ("hybrid minmax 0.3 merge=off", "hybrid", {VW: 0.3}, STEM_STOP + ",fuse=minmax"),
    ("hybrid minmax 0.3, rare query token -> 0.1", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,qdw=rare:0.7:0.1"),
    ("hybrid minmax 0.3, short query -> 0.5", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,qdw=len:3:0.5"),
    (
        "hybrid minmax 0.3 candidate_multiplier 1",
        "hybrid",
        {VW: 0.3, "search.candidate_multiplier": 1},
        RECOMMENDED + ",fuse=minmax",
    ),
    (
        "hybrid minmax 0.3 candidate_multiplier 10",
        "hybrid",
        {VW: 0.3, "search.candidate_multiplier": 10},
        RECOMMENDED + ",fuse=minmax",
    ),
    (
        "hybrid minmax 0.3 200/40 merge<=2x",
        "hybrid",
        dict(_chunk(200, 20), **{VW: 0.3}),
        "tok=stem+stop,merge=capkeep2,fuse=minmax",
    ),
    ("hybrid minmax 0.3 MMR 0.7", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,mmr=0.7"),
    ("vector only on 100-token sub-chunks", "vector", {}, "merge=capkeep1.5,vsub=100"),
    ("hybrid minmax 0.3, vectors on 100-token sub-chunks", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,vsub=100"),
    ("keyword rec. + PRF 3 docs 10 terms 0.3", "keyword", {}, RECOMMENDED + ",prf=3:10:0.3"),
]

HEADLINE = [
    ("BM25 (shipped keyword side)", "keyword", {}, ""),
    ("vector only, one vector per chunk", "vector", PREVIOUS, ""),
    ("vector only, passage vectors (shipped)", "vector", {}, ""),
    (
        "hybrid RRF k=60 0.7 (reference formula), one vector per chunk",
        "hybrid",
        dict(PREVIOUS, **{"search.fusion": "rrf", VW: 0.7}),
        "",
    ),
    ("hybrid min-max 0.3, one vector per chunk (previous default)", "hybrid", PREVIOUS, ""),
    ("+ passage vectors", "hybrid", {"search.expand_terms": 0, **MINMAX}, ""),
    ("+ query expansion (min-max, default before adaptive fusion)", "hybrid", MINMAX, ""),
    ("+ adaptive vector weight (shipped default)", "hybrid", {}, ""),
]

SEMANTIC_FUSION = [  # the sweep of the adaptive weight (bench/experiments/qcov.py)
    ("min-max 0.3 (before adaptive fusion)", "hybrid", MINMAX, ""),
    ("adaptive, shipped", "hybrid", {}, ""),
    ("adaptive 0.85:0.45:0.8, margin 0.05:0.2", "hybrid", {}, "qcov=0.85:0.45:0.8:0.05:0.2"),
    ("adaptive 0.9:0.4:0.8, margin 0.05:0.2", "hybrid", {}, "qcov=0.9:0.4:0.8:0.05:0.2"),
    ("adaptive 0.75:0.4:0.8, no margin condition", "hybrid", {}, "qcov=0.75:0.4:0.8:0:0"),
]

PASSAGE_TUNING = [
    ("previous default (hybrid min-max 0.3, one vector per chunk, no expansion)", "hybrid", PREVIOUS, ""),
    ("BM25 (shipped keyword side)", "keyword", {}, ""),
    ("keyword + best 100-token passage BM25 0.3", "keyword", {}, "ksub=100:0.3"),
    ("keyword + best 100-token passage BM25 0.5", "keyword", {}, "ksub=100:0.5"),
    ("keyword + best 50-token passage BM25 0.3", "keyword", {}, "ksub=50:0.3"),
    ("keyword, chunk overlap 160", "keyword", {"chunking.overlap_tokens": 160}, ""),
    ("keyword, chunk overlap 200", "keyword", {"chunking.overlap_tokens": 200}, ""),
]
PASSAGE_TUNING += [
    (f"keyword, BM25 k1={k1} b={b}", "keyword", {}, f"k1={k1},b={b}")
    for k1, b in ((1.2, 0.5), (0.9, 0.4), (2.0, 0.75), (1.5, 0.9))
]
PASSAGE_TUNING += [(f"keyword + adjacent-pair terms, weight {w}", "keyword", {}, f"bi={w}") for w in (0.3, 1.0)]
PASSAGE_TUNING += [
    (f"keyword + query expansion (prototype) {x}", "keyword", {}, f"qx={x}")
    for x in ("3:0.6:0.5", "5:0.5:0.3", "5:0.5:0.5", "8:0.45:0.3")
]
PASSAGE_TUNING += [
    (f"previous default, per-file score decay {f}", "hybrid", PREVIOUS, f"fdecay={f}") for f in (0.9, 0.75, 0.5)
]
PASSAGE_TUNING += [("previous default + vectors on 100-token sub-chunks of the file", "hybrid", PREVIOUS, "vsub=100")]
PASSAGE_TUNING += [
    (f"previous default + passage vectors {t}", "hybrid", dict(PREVIOUS, **{"chunking.passage_tokens": t}), "")
    for t in (60, 100, 150)
]
PASSAGE_TUNING += [
    ("previous default + query expansion", "hybrid", {"chunking.passage_tokens": 0}, ""),
    ("shipped default (passages 100 + expansion 5/0.5/0.3, vector 0.3)", "hybrid", {}, ""),
]
PASSAGE_TUNING += [(f"shipped, vector weight {w}", "hybrid", {VW: w}, "") for w in (0.2, 0.4)]
PASSAGE_TUNING += [
    (
        f"shipped, expansion {n} per word, similarity >= {m}, weight {x}",
        "hybrid",
        {"search.expand_terms": n, "search.expand_min_similarity": m, "search.expand_weight": x},
        "",
    )
    for n, m, x in ((3, 0.5, 0.3), (5, 0.6, 0.3), (5, 0.5, 0.2), (5, 0.5, 0.5), (8, 0.45, 0.3))
]
PASSAGE_TUNING += [
    ("shipped + adjacent-pair terms 0.3", "hybrid", {}, "bi=0.3"),
    ("shipped + per-file score decay 0.7", "hybrid", {}, "fdecay=0.7"),
    ("shipped + adjacent-pair terms 0.3, vector weight 0.2", "hybrid", {VW: 0.2}, "bi=0.3"),
]

PYDOC = [
    ("BM25 baseline (400/80, shipped code)", "keyword", {}, ""),
    ("keyword merge=off", "keyword", {}, "merge=off"),
    ("keyword stem merge=off", "keyword", {}, "tok=stem,merge=off"),
    ("keyword stop merge=off", "keyword", {}, "tok=stop,merge=off"),
    ("keyword stem+stop merge=off", "keyword", {}, "tok=stem+stop,merge=off"),
    ("keyword stem+stop merge<=1.5x (recommended)", "keyword", {}, RECOMMENDED),
    ("keyword lightstem+stop merge<=1.5x (no dependency)", "keyword", {}, "tok=lightstem+stop,merge=capkeep1.5"),
    ("keyword stem+stop 200/40 merge=off", "keyword", _chunk(200, 20), "tok=stem+stop,merge=off"),
    ("keyword stem+stop 800/160 merge=off", "keyword", _chunk(800, 20), "tok=stem+stop,merge=off"),
    ("keyword stem+stop MMR 0.7", "keyword", {}, RECOMMENDED + ",mmr=0.7"),
    ("vector only (shipped code)", "vector", {}, ""),
    ("vector only merge=off", "vector", {}, "merge=off"),
    ("hybrid RRF 0.7 (reference, shipped code)", "hybrid", {VW: 0.7}, ""),
    ("hybrid RRF 0.3 (shipped code)", "hybrid", {VW: 0.3}, ""),
    ("hybrid RRF k=60 0.3, stem+stop merge<=1.5x", "hybrid", {VW: 0.3}, RECOMMENDED),
    ("hybrid RRF k=5 0.2, stem+stop merge<=1.5x", "hybrid", {VW: 0.2, "search.rrf_k": 5}, RECOMMENDED),
    ("hybrid min-max 0.2, stem+stop merge<=1.5x", "hybrid", {VW: 0.2}, RECOMMENDED + ",fuse=minmax"),
    ("hybrid min-max 0.3, stem+stop merge<=1.5x (recommended)", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax"),
    ("+ vectors on 100-token sub-chunks", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,vsub=100"),
    ("hybrid min-max 0.5, stem+stop merge<=1.5x", "hybrid", {VW: 0.5}, RECOMMENDED + ",fuse=minmax"),
]

PYDOC_PASSAGE_TUNING = [
    r
    for r in PASSAGE_TUNING
    if not r[3].startswith(("k1", "ksub", "fdecay=0.", "qx")) or r[3] in ("ksub=100:0.3", "fdecay=0.7", "qx=5:0.5:0.3")
]

EXTRA = [("keyword rec. + file-level BM25 prior 0.2", "keyword", {}, RECOMMENDED + ",fileprior=0.2")]
EXTRA += [
    (f"keyword rec. {t}/{t * f // 100}", "keyword", _chunk(t, f), RECOMMENDED)
    for t, f in ((200, 20), (300, 20), (400, 0), (500, 20), (600, 20))
]
EXTRA += [
    ("hybrid minmax 0.3, vectors on 50-token sub-chunks", "hybrid", {VW: 0.3}, RECOMMENDED + ",fuse=minmax,vsub=50"),
    ("keyword lightstem+stop merge<=1.5x (no dependency)", "keyword", {}, "tok=lightstem+stop,merge=capkeep1.5"),
    (
        "hybrid minmax 0.3, lightstem+stop merge<=1.5x",
        "hybrid",
        {VW: 0.3},
        "tok=lightstem+stop,merge=capkeep1.5,fuse=minmax",
    ),
]

# every prototype once, on today's defaults (vpass and vsub against one vector per chunk)
PROTOTYPES = [
    ("tok=stem+stop", "keyword", {}, "tok=stem+stop"),
    ("tok=lightstem+stopq", "keyword", {}, "tok=lightstem+stopq"),
    ("k1=1.2 b=0.5", "keyword", {}, "k1=1.2,b=0.5"),
    ("prf=3:10:0.3", "keyword", {}, "prf=3:10:0.3"),
    ("fileprior=0.2", "keyword", {}, "fileprior=0.2"),
    ("bi=0.3", "keyword", {}, "bi=0.3"),
    ("qx=5:0.5:0.3", "keyword", {}, "qx=5:0.5:0.3"),
    ("ksub=100:0.3", "keyword", {}, "ksub=100:0.3"),
    ("merge=drop", "keyword", {}, "merge=drop"),
    ("merge=cap1.5", "keyword", {}, "merge=cap1.5"),
    ("merge=perfile2", "keyword", {}, "merge=perfile2"),
    ("mmr=0.7", "keyword", {}, "mmr=0.7"),
    ("recency=180", "keyword", {}, "recency=180"),
    ("fdecay=0.7", "hybrid", {}, "fdecay=0.7"),
    ("vprf=3:0.5", "hybrid", {}, "vprf=3:0.5"),
    ("vpass=100", "hybrid", {"chunking.passage_tokens": 0}, "vpass=100"),
    ("vsub=100", "hybrid", {"chunking.passage_tokens": 0}, "vsub=100"),
    ("fuse=zscore", "hybrid", {}, "fuse=zscore"),
    ("fuse=maxnorm (RRF configured)", "hybrid", {"search.fusion": "rrf"}, "fuse=maxnorm"),
    ("qdw=rare:0.7:0.1", "hybrid", {}, "qdw=rare:0.7:0.1"),
    ("qdw=len:3:0.5 (RRF configured)", "hybrid", {"search.fusion": "rrf"}, "qdw=len:3:0.5"),
]

# name -> rows; --sweep lists them in this order
SWEEPS: dict[str, list[tuple[str, str, dict, str]]] = {
    "chunking": CHUNKING,
    "vector-chunking": VECTOR_CHUNKING,
    "full": FULL,
    "headline": HEADLINE,
    "adaptive": SEMANTIC_FUSION,
    "passages": PASSAGE_TUNING,
    "pydoc": PYDOC,
    "one-vault": HEADLINE,
    "pydoc-passages": PYDOC_PASSAGE_TUNING,
    "extra": EXTRA,
    "prototypes": PROTOTYPES,
}
