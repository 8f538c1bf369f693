"""qx=<n>:<cos>:<w>: semantic query expansion with the local model (the passage tuning's prototype).

Each content word of the query adds up to n words of the vault's vocabulary whose
embedding (the local model on the single word) has cosine >= cos, each weighted
w x cos x its own idf. Keyword side alone, LoCoMo session nDCG@10 / turn R@5: 3:0.6:0.5
0.815 / 0.831, 5:0.5:0.3 0.817 / 0.841, 5:0.5:0.5 0.808 / 0.832, 8:0.45:0.3 0.813 / 0.839,
against BM25's 0.807 / 0.824: the largest single gain of the passage tuning. Shipped as
search.expand_terms / expand_min_similarity / expand_weight (5 / 0.5 / 0.3, computed from
the vector branch's own request: memcli/index/vectors/terms.py, memcli/retrieval/expand.py).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from bench.harness.context import Ctx
from bench.harness.embeddings import embedder

WORD = re.compile(r"[a-z]{3,}")
_VOCAB: dict = {}


def _vocabulary() -> dict:
    """The words of the vault being searched, their unit vectors and index terms."""
    import numpy as np

    from memcli.index.keyword import tokenizer as tk
    from memcli.index.keyword.tokenizer import STOPWORDS

    if Ctx.root not in _VOCAB:
        words: set[str] = set()
        for f in sorted(Path(Ctx.root).glob("[md]*/**/*.md")):
            words |= set(WORD.findall(f.read_text(encoding="utf-8").lower()))
        words = sorted(w for w in words if w not in STOPWORDS)
        emb = embedder()
        vecs = np.concatenate([emb.embed_batch(words[i : i + 256]) for i in range(0, len(words), 256)])
        emb.cache.save()
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        toks = [(tk.tokenize(w) or [w])[0] for w in words]
        _VOCAB[Ctx.root] = {"words": words, "vecs": vecs, "toks": toks}
    return _VOCAB[Ctx.root]


def _neighbours(query: str, m: int, tau: float) -> dict[str, float]:
    """index term -> best cosine to a query word, up to m per query word, query terms left out."""
    import numpy as np

    from memcli.index.keyword import tokenizer as tk
    from memcli.index.keyword.tokenizer import STOPWORDS

    V = _vocabulary()
    own = set(tk.query_terms(query))
    qwords = [w for w in WORD.findall(query.lower()) if w not in STOPWORDS]
    if not qwords:
        return {}
    qv = embedder().embed_batch(qwords)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    extra: dict[str, float] = {}
    for row in qv @ V["vecs"].T:
        took = 0
        for j in np.argsort(-row)[:50]:
            t = V["toks"][j]
            if row[j] < tau or took >= m:
                break
            if t in own:
                continue
            took += 1
            extra[t] = max(extra.get(t, 0.0), float(row[j]))
    return extra


def make_query_expansion(rule: str, terms_fn):
    """A replacement for memcli.index.keyword.bm25._terms adding the expansion terms."""
    from memcli.index.keyword import tokenizer as tk

    m, tau, beta = rule.split(":")
    m, tau, beta = int(m), float(tau), float(beta)

    def _terms(snap, query, extra=()):
        base = terms_fn(snap, query, extra)
        n = snap.n_docs
        k1 = float(snap.header.get("k1", 1.5))
        out = list(base)
        for t, c in _neighbours(query, m, tau).items():
            span = snap.postings(tk.term_hash(t))
            if span is None:
                continue
            a, z = span
            idf = math.log(1.0 + (n - (z - a) + 0.5) / ((z - a) + 0.5))
            out.append((a, z, beta * c * idf * (k1 + 1.0)))
        return out

    return _terms


def install(spec: dict, patch) -> None:
    from memcli.index.keyword import bm25

    patch.set(bm25, "_terms", make_query_expansion(spec["qx"], bm25._terms))
