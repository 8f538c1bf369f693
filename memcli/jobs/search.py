"""Search job: runs the keyword (BM25) and vector branches over the local index (or the team's),
hands them to memcli.retrieval.rank for the order, and adds link expansion."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from memcli.errors import BadInput
from memcli.index.freshness import fresh_snapshot
from memcli.index import bm25
from memcli.retrieval import framing, fusion, rank
from memcli.retrieval import links as linkmod
from memcli.retrieval.hits import Hit, clip  # noqa: F401 - the result types callers use
from memcli.retrieval.rank import VectorBranch
from memcli.vault.workspace import Workspace

MAX_CANDIDATES = 200


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    candidates: int
    vector_hits: int = 0
    keyword_hits: int = 0
    hybrid: bool = False
    warnings: list[str] = field(default_factory=list)
    expansion: list[str] = field(default_factory=list)  # index terms the query was expanded with

    @property
    def log_line(self) -> str:
        return (f"[SearchStep] query={self.query!r} candidates={self.candidates} "
                f"vector_hits={self.vector_hits} keyword_hits={self.keyword_hits}")

    def text(self, citations: bool = False, max_chars: int | None = None) -> str:
        """ReMe's exact text format; `(no memory results)` when empty.

        For agents (--citations, --max-chars): each snippet capped at max_chars and
        followed by OpenClaw's `Source: <path>#L<start>-L<end>` line.
        """
        if not self.hits:
            return "(no memory results)"
        out: list[str] = []
        for h in self.hits:
            if self.hybrid:
                v = f"{h.vector:.4f}" if h.vector is not None else "-"
                k = f"{h.keyword:.4f}" if h.keyword is not None else "-"
                scores = f"score={h.score:.4f} vector={v} keyword={k}"
            else:
                scores = f"score={h.score:.4f}"
            out.append(f"========== {h.path}:{h.start_line}-{h.end_line} [{scores}] ==========\n"
                       f"{clip(h.text, max_chars)}")
            if citations:
                out.append(f"Source: {h.citation}")
            if h.superseded_by:
                out.append(h.superseded_line)
            out.extend(linkmod.render(h.links))
        return "\n".join(out)

    def to_json(self, citations: bool = False, max_chars: int | None = None) -> dict:
        return {"query": self.query, "results": [h.to_json(citations, max_chars) for h in self.hits],
                "counts": {"candidates": self.candidates, "vector": self.vector_hits,
                           "keyword": self.keyword_hits, "returned": len(self.hits), "hybrid": self.hybrid},
                "expansion": self.expansion, "log": self.log_line, "warnings": self.warnings}


def parse_date(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise BadInput(f"{flag} must be a date like 2026-05-18, got {value!r}") from None


def run(ws: Workspace, query: str, *, limit: int | None = None, min_score: float = 0.0,
        since: str | None = None, until: str | None = None, links: bool = True,
        mode: str = "auto", auto_sync: bool = True, backend=None) -> SearchResult:
    """Search the workspace. `backend` (memcli.providers.embedding.space.Backend) lets a long-lived
    caller such as the MCP server keep its embedding model loaded between searches."""
    query = (query or "").strip()
    if not query:
        raise BadInput("query is empty", "pass the words to search for")
    cfg = ws.settings.search
    limit = cfg.limit if limit is None else limit
    if limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    if mode not in ("auto", "hybrid", "keyword", "vector"):
        raise BadInput(f"--mode must be hybrid, keyword or vector, got {mode!r}")
    since, until = parse_date(since, "--since"), parse_date(until, "--until")
    if since and until and since > until:
        raise BadInput(f"--since {since} is later than --until {until}, so no note can match")
    candidates = min(MAX_CANDIDATES, max(1, int(limit * cfg.candidate_multiplier)))
    depth = max(candidates, fusion.POOL)  # what each branch retrieves: at least the fusion's pool
    result = SearchResult(query, [], candidates)
    asked = framing.topic(query)  # what both branches search: the query without "discussed last time"
    voiced = framing.first_person(query)  # embedded with it (query_vectors)
    snap = local = fresh_snapshot(ws, result.warnings, auto_sync=auto_sync)
    shared = None
    if ws.settings.shared.enabled:  # team memory: PostgreSQL ranks; the local index answers when it cannot
        from memcli.jobs import team

        shared = team.candidates(ws, asked, depth, since, until, mode, backend, result.warnings, voiced)
    if shared is not None:
        snap, branch, keyword = shared  # snap: the candidates, read like a snapshot (memcli.team.search.View)
    elif snap is None or snap.n_docs == 0:
        return result
    else:
        branch, keyword = _local_branches(ws, snap, asked, depth, since, until, mode, backend, result.warnings,
                                          voiced)
    result.expansion = [t for t, _ in branch.expansion]
    ranking = rank.order(snap, cfg, branch, keyword, asked, candidates, min_score=min_score,
                         max_tokens=cfg.merge_max_factor * ws.settings.chunking.target_tokens,
                         metadata=ws.metadata if shared is None else None)  # the team index keeps no statements
    result.vector_hits, result.keyword_hits, result.hybrid = ranking.vector_hits, ranking.keyword_hits, ranking.hybrid
    hits = ranking.hits[:limit]
    if links and local is not None:  # (another agent's files have no links here)
        expansion = linkmod.expand(local, [p for p in dict.fromkeys(h.path for h in hits)
                                           if local.file_index(p) is not None], cfg.max_links_per_direction)
        for h in hits:
            h.links = expansion.get(h.path, {})
    result.hits = hits
    return result


def _local_branches(ws: Workspace, snap, query: str, depth: int, since, until, mode: str, backend,
                    warnings: list[str], voiced: str = "") -> tuple[VectorBranch, bm25.Scored]:
    """The vector and keyword branches over the local index; `voiced`: the query as its owner
    asks it (memcli.retrieval.framing.first_person), embedded with it."""
    allowed = None
    if since or until:
        lo, hi = since or "0000-00-00", until or "9999-99-99"
        ok_files = [bool((d := ws.date_of(p)) and lo <= d <= hi) for p in snap.paths]
        allowed = lambda doc: ok_files[snap.meta(doc)[0]]  # noqa: E731
    branch = VectorBranch([], None, [])
    if mode != "keyword":  # first: its query embedding also gives the keyword expansion
        branch = _vector_branch(ws, snap, query, depth, allowed, warnings, required=mode != "auto",
                                backend=backend, expand=mode != "vector", voiced=voiced)
    keyword = bm25.NOTHING
    if mode != "vector":
        branch, keyword = rank.keyword(snap, query, depth, allowed, branch)
    return branch, keyword


SEARCH_EMBED_SECONDS = 2.0  # at most this of a search goes to embedding chunks it just synced


def _vector_branch(ws: Workspace, snap, query: str, candidates: int, allowed, warnings: list[str],
                   required: bool, backend=None, expand: bool = True, embed_new: bool = True,
                   voiced: str = "") -> VectorBranch:
    """Exact cosine over the chunks' passage vectors (a chunk's best), a has-a-vector test
    for chunks, the query expansion computed from the same embedding request, and the
    space's noise floor (measured here, in that request, if no embedding run has yet).

    Chunks without vectors in an aligned matrix (a note this search synced, or left by an
    earlier command) are embedded first, for at most SEARCH_EMBED_SECONDS (`embed_new`;
    memcli.jobs.embedding); a search never starts a vault's embedding from nothing.
    The query is embedded by whichever model made the vectors searched now: the
    configured one, the first pass while the configured model refines the vault, or the
    previous local model while a new one has not embedded everything yet.

    Empty (with one warning) whenever it cannot run. Never an error unless the user forced
    --mode vector/hybrid without any backend: a failing provider, changed embedding
    settings or missing vectors degrade the search to keyword-only and say why on stderr.
    """
    from memcli.errors import ProviderError
    from memcli.index import noise as noisemod
    from memcli.index import vectors
    from memcli.providers.embedding import space as embedding

    space = vectors.active_space(ws.metadata)
    explicit = ws.settings.embedding.backend not in ("", "none")
    if space is None and not required and not explicit:
        return VectorBranch([], None, [])  # keyword-only workspace: no vectors were ever computed
    owned = backend is None  # built here, so closed here; a caller's backend stays open
    backend = backend or embedding.configured(ws)
    if backend is None:
        if required:
            raise BadInput("vector search needs an embedding backend",
                           embedding.why_off(ws) or "set embedding_model_config in mem.yaml")
        return VectorBranch([], None, [])
    use = None
    try:
        size = ws.settings.chunking.passage_tokens
        if embed_new and space is not None:
            from memcli.jobs import embedding as embedjob

            if embedjob.unembedded(ws, space):  # e.g. a note this search synced
                embedjob.after_write(ws, warnings, backend=backend,
                                     budget=min(ws.settings.embedding.embed_budget_seconds, SEARCH_EMBED_SECONDS))
        space = vectors.active_space(ws.metadata)
        use = embedding.for_space(ws, space, target=backend)
        if space is None or use is None:
            warnings.append("no chunk has a vector yet; run `mem reindex` (results are keyword-only)" if space is None
                            else f"embedding settings changed ({space.get('identity')} -> {backend.space['identity']}); "
                                 "vector search paused until `mem reindex --scope embedding`")
            return VectorBranch([], None, [])
        matrix = vectors.open_vectors(snap, space, size)
        if matrix is None or (not matrix.usable and snap.n_docs):
            warnings.append("chunk vectors do not match the index; run `mem reindex` (results are keyword-only)")
            return VectorBranch([], None, [])
        words, vocab = _expansion_words(ws, space, query) if expand else ([], None)
        noise = vectors.load_noise(ws.metadata, space)
        probes = noisemod.missing(noise, query)  # {script: texts}: a floor this query needs, not measured yet
        vecs = query_vectors(use.embedder, query, voiced, words + [t for texts in probes.values() for t in texts])
    except ProviderError as exc:
        warnings.append(f"embedding provider failed ({exc.line()}); results are keyword-only")
        return VectorBranch([], None, [])
    finally:
        if owned:
            backend.embedder.close()
        if use is not None and use is not backend:
            use.embedder.close()
    return _scored(ws, space, matrix, query, vecs, words, vocab, noise, probes, candidates, allowed, expand)


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
    return np.vstack([mean / max(float(np.linalg.norm(mean)), 1e-12), np.asarray(vecs[2:], dtype=np.float32)
                      .reshape(-1, len(mean))])


def _scored(ws: Workspace, space, matrix, query, vecs, words, vocab, noise, probes, candidates,
            allowed, expand: bool = True) -> VectorBranch:
    from memcli.index import noise as noisemod
    from memcli.retrieval import expand as expmod
    from memcli.retrieval import vector as vecmod

    if probes:  # measured from this request's probe vectors, in the order they were sent
        at, sent = 1 + len(words), {}
        for script, texts in probes.items():
            sent[script], at = vecs[at:at + len(texts)], at + len(texts)
        noise = noisemod.keep(ws, space, noise, sent, matrix)
    cfg = ws.settings.search
    expansion = expmod.neighbours(query, vecs[1:1 + len(words)], vocab, cfg.expand_terms,
                                  cfg.expand_min_similarity, cfg.expand_weight) if words else []
    defined = definitions(ws, space, query, vecs[0]) if expand else None
    # a chunk scores as its best passage
    return VectorBranch(vecmod.search(matrix, vecs[0], candidates, allowed), matrix.has, expansion,
                        lambda docs: vecmod.view_cosines(matrix, vecs[0], docs), noisemod.floor_for(noise, query),
                        defined)


def definitions(ws: Workspace, space: dict, query: str, query_vec):
    """() -> (term, weight) of the vault's words whose definition is near the query
    (memcli.retrieval.expand.defined), asked only for a query its own words cover weakly: the
    definitions (memcli.index.glosses) are read only then. None when they are off. Local and
    team search share it."""
    cfg = ws.settings.search
    if cfg.define_terms <= 0:
        return None

    def ask() -> list[tuple[str, float]]:
        from memcli.index import glosses
        from memcli.retrieval import expand as expmod

        return expmod.defined(query, query_vec, glosses.load(ws.metadata, space), cfg.define_terms,
                              cfg.define_min_similarity, cfg.define_weight)
    return ask


def _expansion_words(ws: Workspace, space: dict, query: str) -> tuple[list[str], object]:
    """The query words to embed for expansion, and the vault's word vectors (or nothing)."""
    if ws.settings.search.expand_terms <= 0:
        return [], None
    from memcli.index import terms
    from memcli.retrieval import expand as expmod

    words = expmod.query_words(query)
    vocab = terms.load(ws.metadata, space) if words else None
    return (words, vocab) if vocab is not None else ([], None)
