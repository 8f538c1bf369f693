"""The local searcher: both branches over this workspace's index (memcli.index).

Keyword: BM25 over the segment index (memcli.index.keyword.bm25, through memcli.retrieval.rank.keyword).
Vector: exact cosine over the chunks' passage vectors (a chunk scores as its best passage),
with the space's noise floor, measured in the query's own request when no embedding run
measured it yet. A search embeds the chunks it just synced, within SEARCH_EMBED_SECONDS.
"""

from __future__ import annotations

from memcli.errors import ProviderError
from memcli.index.keyword import bm25
from memcli.jobs.searchers import Candidates, Request, query
from memcli.retrieval import rank
from memcli.retrieval.rank import VectorBranch
from memcli.vault.workspace import Workspace

SEARCH_EMBED_SECONDS = 2.0  # at most this of a search goes to embedding chunks it just synced
NO_VECTORS = VectorBranch([], None, [])


class Local:
    """The searcher of the local index, open as `snap` (None: never indexed)."""

    def __init__(self, snap):
        self.snap = snap

    def candidates(self, ws: Workspace, req: Request, warnings: list[str]) -> Candidates | None:
        snap = self.snap
        if snap is None or snap.n_docs == 0:
            return None
        allowed = None
        if req.since or req.until:
            lo, hi = req.since or "0000-00-00", req.until or "9999-99-99"
            ok_files = [bool((d := ws.date_of(p)) and lo <= d <= hi) for p in snap.paths]
            allowed = lambda doc: ok_files[snap.meta(doc)[0]]  # noqa: E731
        branch = NO_VECTORS
        if req.vector:  # first: its query embedding also gives the keyword expansion
            branch = _vector_branch(ws, snap, req, allowed, warnings)
        keyword = bm25.NOTHING
        if req.keyword:
            narrower = ws.settings.search.narrower_terms
            branch, keyword = rank.keyword(snap, req.asked, req.depth, allowed, branch, narrower)
        return Candidates(snap, branch, keyword, ws.metadata)


def _vector_branch(ws: Workspace, snap, req: Request, allowed, warnings: list[str]) -> VectorBranch:
    """Exact cosine over the chunks' passage vectors (a chunk's best), a has-a-vector test
    for chunks, the query expansion computed from the same embedding request, and the
    space's noise floor (measured here, in that request, if no embedding run has yet).

    Chunks without vectors in an aligned matrix (a note this search synced, or left by an
    earlier command) are embedded first, for at most SEARCH_EMBED_SECONDS
    (memcli.jobs.embedding); a search never starts a vault's embedding from nothing.
    The query is embedded by whichever model made the vectors searched now: the
    configured one, the first pass while the configured model refines the vault, or the
    previous local model while a new one has not embedded everything yet.

    Empty (with one warning) whenever it cannot run. Never an error unless the user forced
    --mode vector/hybrid without any backend (query.embedder): a failing provider, changed
    embedding settings or missing vectors degrade the search to keyword-only and say why.
    """
    from memcli.index.vectors import noise as noisemod
    from memcli.index.vectors import vectors
    from memcli.providers.embedding import space as embedding

    space = vectors.active_space(ws.metadata)
    backend = query.embedder(ws, req, vectors_here=space is not None)
    if backend is None:
        return NO_VECTORS
    use = None
    try:
        if space is not None:
            from memcli.jobs import embedding as embedjob

            if embedjob.unembedded(ws, space):  # e.g. a note this search synced
                embedjob.after_write(
                    ws,
                    warnings,
                    backend=backend,
                    budget=min(ws.settings.embedding.embed_budget_seconds, SEARCH_EMBED_SECONDS),
                )
        space = vectors.active_space(ws.metadata)
        use = embedding.for_space(ws, space, target=backend)
        if space is None or use is None:
            warnings.append(
                "no chunk has a vector yet; run `mem reindex` (results are keyword-only)"
                if space is None
                else f"embedding settings changed ({space.get('identity')} -> {backend.space['identity']}); "
                "vector search paused until `mem reindex --scope embedding`"
            )
            return NO_VECTORS
        matrix = vectors.open_vectors(snap, space, ws.settings.chunking.passage_tokens)
        if matrix is None or (not matrix.usable and snap.n_docs):
            warnings.append("chunk vectors do not match the index; run `mem reindex` (results are keyword-only)")
            return NO_VECTORS
        words, vocab = query.expansion_words(ws, space, req.asked) if req.keyword else ([], None)
        noise = noisemod.load_noise(ws.metadata, space)
        probes = noisemod.missing(noise, req.asked)  # {script: texts}: a floor this query needs, not measured yet
        vecs = query.query_vectors(
            use.embedder, req.asked, req.voiced, words + [t for texts in probes.values() for t in texts]
        )
    except ProviderError as exc:
        warnings.append(query.provider_failed(exc))
        return NO_VECTORS
    finally:
        query.release(req, backend)
        if use is not None and use is not backend:
            use.embedder.close()
    return _scored(ws, req, space, matrix, vecs, words, vocab, noise, probes, allowed)


def _scored(ws: Workspace, req: Request, space, matrix, vecs, words, vocab, noise, probes, allowed) -> VectorBranch:
    from memcli.index.vectors import noise as noisemod
    from memcli.retrieval import vector as vecmod

    if probes:  # measured from this request's probe vectors, in the order they were sent
        at, sent = 1 + len(words), {}
        for script, texts in probes.items():
            sent[script], at = vecs[at : at + len(texts)], at + len(texts)
        noise = noisemod.keep(ws, space, noise, sent, matrix)
    expansion = query.expansion(ws, req.asked, vecs[1 : 1 + len(words)], words, vocab)
    defined = query.definitions(ws, space, req.asked, vecs[0]) if req.keyword else None
    # a chunk scores as its best passage
    floor = noisemod.floor_for(noise, req.asked)
    return VectorBranch(
        vecmod.search(matrix, vecs[0], req.depth, allowed),
        matrix.has,
        expansion,
        lambda docs: vecmod.view_cosines(matrix, vecs[0], docs),
        floor,
        defined,
        noisemod.near_floor(floor, req.asked),
    )
