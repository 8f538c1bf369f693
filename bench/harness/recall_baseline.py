"""The naive baseline of a recall run: no extraction, no notes, the raw conversation searched.

Every message (user and assistant) of every session is a document. BM25 (rank-bm25, the dev
extra) and the cosine of mem's default local embedding model (the same code path as
bench/semantic_eval.py: bench.harness.embeddings, cached by text hash in bench/out/embeddings)
each rank all messages; reciprocal rank fusion (k = 60) merges the two; a session takes the
rank of its best message.
"""

from __future__ import annotations

import re

from bench.harness.recall_score import score_question

RRF_K = 60
_TOKEN = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Lower-cased words; a CJK character is a token of its own (no segmenter here)."""
    return _TOKEN.findall(text.lower())


def run(rs, limit: int = 10) -> tuple[list[dict], dict]:
    import numpy as np

    try:
        from rank_bm25 import BM25Okapi
    except ImportError as exc:  # the dev extra
        raise SystemExit(f"--baseline needs rank-bm25 (pip install -e '.[dev]'): {exc}") from None
    from bench.harness.embeddings import embedder, record

    docs = [(s.id, m["content"]) for s in rs.in_order() for m in s.messages]
    bm25 = BM25Okapi([tokens(t) for _, t in docs])
    emb = embedder()
    doc_vecs = np.asarray(emb.embed_batch([t for _, t in docs]), dtype=np.float32)
    q_vecs = np.asarray(emb.embed_batch([q["question"] for q in rs.questions]), dtype=np.float32)
    rows = []
    for q, qv in zip(rs.questions, q_vecs):
        fused = np.zeros(len(docs))
        for scores in (bm25.get_scores(tokens(q["question"])), doc_vecs @ qv):
            order = np.argsort(-np.asarray(scores), kind="stable")
            fused[order] += 1.0 / (RRF_K + np.arange(1, len(docs) + 1))
        top = np.argsort(-fused, kind="stable")
        ranks: dict[str, int] = {}
        for i in top:
            if len(ranks) >= limit:
                break
            ranks.setdefault(docs[i][0], len(ranks) + 1)
        rows.append(score_question(q, ranks, [docs[i][1] for i in top[:5]]))
    info: dict = {"documents": len(docs)}
    record(info)
    return rows, info
