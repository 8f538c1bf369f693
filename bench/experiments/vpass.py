"""vpass=<tokens>: the vector branch scored per chunk as the best cosine of its own passages.

The passage tuning's prototype of passage vectors: each chunk's lines cut into windows of at most
`tokens` estimated tokens (memcli.index.vectors.passages.split), embedded, and a chunk scored by
its best one: the keyword tuning's sub-chunk vectors (vsub) made local to the chunk. Shipped as
chunking.passage_tokens (100); the shipped code on the previous default, LoCoMo session
nDCG@10 / turn R@5: 0.816 / 0.841 against 0.811 / 0.832 (passages of 60 / 150: 0.816 /
0.834, 0.819 / 0.838). Kept to reproduce the passage tuning; run it with --set chunking.passage_tokens=0.
"""

from __future__ import annotations

from bench.harness.embeddings import embedder

_PASS_CACHE: dict = {}


def _passage_rows(ws, snap, target: int):
    """(unit passage vectors, the chunk of each) of the snapshot, embedded once."""
    import numpy as np

    from memcli.index.vectors.passages import split as split_passages

    key = (str(ws.root), snap.header.get("generation"), target)
    entry = _PASS_CACHE.get(key)
    if entry is None:
        texts, owners = [], []
        for d in range(snap.n_docs):
            _, _, _, crumb = snap.meta(d)
            for t in split_passages(snap.text(d), crumb, target):
                texts.append(t)
                owners.append(d)
        emb = embedder()
        rows = np.concatenate([emb.embed_batch(texts[i : i + 64]) for i in range(0, len(texts), 64)])
        emb.cache.save()
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        entry = _PASS_CACHE[key] = (rows, np.array(owners))
    return entry


def best_per_chunk(n_docs: int, owners, cos, candidates: int, allowed):
    """The best `candidates` (chunk, best cosine of its rows), best first."""
    import numpy as np

    best = np.full(n_docs, -np.inf, dtype=np.float32)
    np.maximum.at(best, owners, cos)
    if allowed is not None:
        best[[not allowed(d) for d in range(n_docs)]] = -np.inf
    k = min(candidates, int(np.isfinite(best).sum()))
    idx = np.argsort(-best, kind="stable")[:k]
    return [(int(d), float(best[d])) for d in idx]


def make_passage_vector_branch(target: int):
    """A replacement for memcli.jobs.searchers.local._vector_branch."""
    import numpy as np

    def branch(ws, snap, req, allowed, warnings, **_):
        from memcli.retrieval import rank

        rows, owners = _passage_rows(ws, snap, target)
        q = embedder().embed_batch([req.asked])[0]
        cos = rows @ (q / (np.linalg.norm(q) or 1.0))
        return rank.VectorBranch(best_per_chunk(snap.n_docs, owners, cos, req.depth, allowed), None, [])

    return branch


def install(spec: dict, patch) -> None:
    from memcli.jobs.searchers import local

    patch.set(local, "_vector_branch", make_passage_vector_branch(int(spec["vpass"])))
