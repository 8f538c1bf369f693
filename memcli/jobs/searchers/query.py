"""The query side both searchers share: which model embeds the query, its vectors, the
words it is expanded with, and the one error and the warnings that embedding can give.

The local and the team searcher embed the query alike and expand it alike (the vault's
words nearest the query's, memcli.retrieval.expand, from the same embedding request),
so their rankings of the same chunks agree; only where the vectors are scored differs.
"""

from __future__ import annotations

from memcli.errors import BadInput, ProviderError
from memcli.jobs.searchers import Request
from memcli.vault.workspace import Workspace


def embedder(ws: Workspace, req: Request, vectors_here: bool):
    """The embedding backend for the query (memcli.providers.embedding.space.Backend): the
    caller's, else the configured one; None when the search is keyword-only. `vectors_here`:
    whether the searched index has vectors (a keyword-only workspace with no backend
    configured loads no model). BadInput only when --mode hybrid/vector forced a vector
    branch that no backend can run."""
    from memcli.providers.embedding import space as embedding

    explicit = ws.settings.embedding.backend not in ("", "none")
    if not vectors_here and not req.forced and not explicit:
        return None
    backend = req.embedding or embedding.configured(ws)
    if backend is None and req.forced:
        raise BadInput(
            "vector search needs an embedding backend",
            embedding.why_off(ws) or "set embedding_model_config in mem.yaml",
        )
    return backend


def release(req: Request, backend) -> None:
    """Close a backend this search built (a caller's stays open for its next search)."""
    if backend is not None and backend is not req.embedding:
        backend.embedder.close()


def provider_failed(exc: ProviderError) -> str:
    """The warning of a failed embedding request: the search goes on with keywords only."""
    return f"embedding provider failed ({exc.line()}); results are keyword-only"


def query_vectors(embedder, query: str, voiced: str, more: list[str]):
    """The query's vector, then those of `more`, from one request. A query asked about the
    memory's owner (`voiced`, its first-person phrasing, memcli.retrieval.framing) is the
    mean direction of both phrasings: without the owner the question reads ungrammatical
    ("How does usually travel to work?"), in the first person it leans towards notes in the
    first person ("My preferred commute…") and away from those naming the owner; together
    they reach the paraphrase (bench/semantic_set: vector hit@1 0.76 -> 0.81, the same on
    the held-out split; docs/evaluation.md)."""
    also = [voiced] if voiced and voiced != query else []
    vecs = embedder.embed_batch([query] + also + more)
    if not also:
        return vecs
    import numpy as np

    mean = np.asarray(vecs[0], dtype=np.float32) + np.asarray(vecs[1], dtype=np.float32)
    return np.vstack(
        [mean / max(float(np.linalg.norm(mean)), 1e-12), np.asarray(vecs[2:], dtype=np.float32).reshape(-1, len(mean))]
    )


def expansion_words(ws: Workspace, space: dict, query: str) -> tuple[list[str], object]:
    """The query words to embed for expansion, and the vault's word vectors (or nothing)."""
    if ws.settings.search.expand_terms <= 0:
        return [], None
    from memcli.index.vectors import terms
    from memcli.retrieval import expand as expmod

    words = expmod.query_words(query)
    vocab = terms.load(ws.metadata, space) if words else None
    return (words, vocab) if vocab is not None else ([], None)


def expansion(ws: Workspace, query: str, word_vecs, words: list[str], vocab) -> list[tuple[str, float]]:
    """(term, weight) of the vault's words nearest the query's words (their vectors `word_vecs`)."""
    if not words:
        return []
    from memcli.retrieval import expand as expmod

    cfg = ws.settings.search
    return expmod.neighbours(query, word_vecs, vocab, cfg.expand_terms, cfg.expand_min_similarity, cfg.expand_weight)


def definitions(ws: Workspace, space: dict, query: str, query_vec):
    """() -> (term, weight) of the vault's words whose definition is near the query
    (memcli.retrieval.expand.defined), asked only for a query its own words cover weakly: the
    definitions (memcli.index.vectors.glosses) are read only then. None when they are off."""
    cfg = ws.settings.search
    if cfg.define_terms <= 0:
        return None

    def ask() -> list[tuple[str, float]]:
        from memcli.index.vectors import glosses
        from memcli.retrieval import expand as expmod

        return expmod.defined(
            query,
            query_vec,
            glosses.load(ws.metadata, space),
            cfg.define_terms,
            cfg.define_min_similarity,
            cfg.define_weight,
        )

    return ask
