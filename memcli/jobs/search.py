"""Search job: keyword (BM25) and vector branches, fusion, merging, link expansion."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import NamedTuple

from memcli.errors import BadInput
from memcli.index.freshness import fresh_snapshot
from memcli.index import bm25
from memcli.retrieval import links as linkmod
from memcli.vault.workspace import Workspace

MAX_CANDIDATES = 200


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    vector: float | None = None
    keyword: float | None = None
    docs: list[int] = field(default_factory=list)
    links: dict = field(default_factory=dict)

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_json(self, citations: bool = False, max_chars: int | None = None) -> dict:
        out = {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
               "text": clip(self.text, max_chars), "score": self.score, "vector": self.vector,
               "keyword": self.keyword, "links": self.links}
        if max_chars is not None:
            out["truncated"] = len(self.text) > max_chars
        if citations:
            out["citation"] = self.citation
        return out


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
            out.extend(linkmod.render(h.links))
        return "\n".join(out)

    def to_json(self, citations: bool = False, max_chars: int | None = None) -> dict:
        return {"query": self.query, "results": [h.to_json(citations, max_chars) for h in self.hits],
                "counts": {"candidates": self.candidates, "vector": self.vector_hits,
                           "keyword": self.keyword_hits, "returned": len(self.hits), "hybrid": self.hybrid},
                "expansion": self.expansion, "log": self.log_line, "warnings": self.warnings}


def clip(text: str, max_chars: int | None) -> str:
    """A snippet cut to at most max_chars characters, ending in '…' when cut.

    The cut falls after the last whole word when one ends in the final fifth (text
    without spaces, such as Chinese, is cut exactly).
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    cut = text[:max_chars - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= 0.8 * len(cut):
        cut = cut[:space]
    return cut.rstrip() + "…"


def parse_date(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise BadInput(f"{flag} must be a date like 2026-05-18, got {value!r}") from None


def _doc_hit(snap, doc: int, score: float) -> Hit:
    fidx, start, end, crumb = snap.meta(doc)
    return Hit(snap.paths[fidx], start, end, snap.text(doc), score, docs=[doc])


def _merge(snap, hits: list[Hit], max_tokens: float) -> list[Hit]:
    """Fold hits of one file whose line ranges overlap or touch into the better-ranked one.

    A fold that would grow the hit past `max_tokens` is not made: the lower hit is
    shown on its own. Unbounded folding turned long notes into whole-file results
    (LoCoMo turn-level Recall@5 0.46 instead of 0.83, docs/evaluation.md).
    """
    from memcli.index.chunker import estimate_tokens

    kept: list[Hit] = []
    for h in hits:
        target = next((k for k in kept if k.path == h.path
                       and h.start_line <= k.end_line + 1 and h.end_line >= k.start_line - 1), None)
        if target is None:
            kept.append(h)
            continue
        trial = Hit(target.path, target.start_line, target.end_line, target.text, target.score,
                    target.vector, target.keyword, target.docs + h.docs)
        _rebuild_text(snap, trial)
        if sum(estimate_tokens(x) for x in trial.text.split("\n")) > max_tokens:
            kept.append(h)
            continue
        target.docs, target.start_line, target.end_line, target.text = \
            trial.docs, trial.start_line, trial.end_line, trial.text
        if target.vector is None or (h.vector is not None and h.vector > target.vector):
            target.vector = h.vector if h.vector is not None else target.vector
        if target.keyword is None or (h.keyword is not None and h.keyword > target.keyword):
            target.keyword = h.keyword if h.keyword is not None else target.keyword
    return kept


def _rebuild_text(snap, hit: Hit) -> None:
    """Text of merged chunks: the first chunk's breadcrumb, then the union of their lines."""
    by_line: dict[int, str] = {}
    crumb_of_first: list[str] = []
    first_start = None
    for d in hit.docs:
        _, start, end, crumb = snap.meta(d)
        lines = snap.text(d).split("\n")
        if first_start is None or start < first_start:
            first_start, crumb_of_first = start, lines[:crumb]
        for i, line in enumerate(lines[crumb:]):
            by_line.setdefault(start + i, line)
    lo, hi = min(by_line), max(by_line)
    hit.start_line, hit.end_line = lo, hi
    hit.text = "\n".join(crumb_of_first + [by_line.get(i, "") for i in range(lo, hi + 1)])


def run(ws: Workspace, query: str, *, limit: int | None = None, min_score: float = 0.0,
        since: str | None = None, until: str | None = None, links: bool = True,
        mode: str = "auto", auto_sync: bool = True, backend=None) -> SearchResult:
    """Search the workspace. `backend` (memcli.providers.embedding.space.Backend) lets a long-lived
    caller such as the MCP server keep its embedding model loaded between searches."""
    query = (query or "").strip()
    if not query:
        raise BadInput("query is empty", "pass the words to search for")
    cfg = ws.config["search"]
    limit = int(cfg["limit"]) if limit is None else limit
    if limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    if cfg["fusion"] not in ("minmax", "rrf"):
        from memcli.errors import ConfigError

        raise ConfigError(f"search.fusion must be minmax or rrf, got {cfg['fusion']!r}")
    if mode not in ("auto", "hybrid", "keyword", "vector"):
        raise BadInput(f"--mode must be hybrid, keyword or vector, got {mode!r}")
    since, until = parse_date(since, "--since"), parse_date(until, "--until")
    candidates = min(MAX_CANDIDATES, max(1, int(limit * float(cfg["candidate_multiplier"]))))
    result = SearchResult(query, [], candidates)
    snap = fresh_snapshot(ws, result.warnings, auto_sync=auto_sync)
    if snap is None or snap.n_docs == 0:
        return result
    allowed = None
    if since or until:
        lo, hi = since or "0000-00-00", until or "9999-99-99"
        ok_files = [bool((d := ws.date_of(p)) and lo <= d <= hi) for p in snap.paths]
        allowed = lambda doc: ok_files[snap.doc_meta[doc * 4]]  # noqa: E731

    branch = VectorBranch([], None, [])
    if mode != "keyword":  # first: its query embedding also gives the keyword expansion
        branch = _vector_branch(ws, snap, query, candidates, allowed, result.warnings,
                                required=mode != "auto", backend=backend, expand=mode != "vector")
    vector, embedded = branch.hits, branch.has_vector
    keyword: list[tuple[int, float]] = []
    if mode != "vector":
        keyword = bm25.search(snap, query, candidates, allowed, extra=branch.expansion)
    result.expansion = [t for t, _ in branch.expansion]
    result.keyword_hits, result.vector_hits = len(keyword), len(vector)

    if keyword and vector:
        result.hybrid = True
        if cfg["fusion"] == "rrf":
            hits = _fuse(snap, vector, keyword, float(cfg["vector_weight"]), int(cfg["rrf_k"]), embedded)
        else:
            hits = _fuse_minmax(snap, vector, keyword, float(cfg["vector_weight"]), embedded)
    else:
        hits = [_doc_hit(snap, d, s) for d, s in (keyword or vector)]
        for h in hits:
            if keyword:
                h.keyword = h.score
            else:
                h.vector = h.score
    if min_score > 0:
        hits = [h for h in hits if h.score >= min_score]
    max_tokens = float(cfg["merge_max_factor"]) * int(ws.config["chunking"]["target_tokens"])
    hits = _merge(snap, hits, max_tokens)[:limit]
    if links:
        expansion = linkmod.expand(snap, list(dict.fromkeys(h.path for h in hits)),
                                   int(cfg["max_links_per_direction"]))
        for h in hits:
            h.links = expansion.get(h.path, {})
    result.hits = hits
    return result


def _fuse(snap, vector, keyword, vector_weight: float, k: int, embedded=None) -> list[Hit]:
    """Weighted reciprocal rank fusion keyed by chunk; a missing branch adds nothing.

    Except for a chunk that has no vector yet (edited since the last embedding run):
    the vector branch could not see it, so instead of 0 it is credited with its
    keyword rank. Otherwise every embedded chunk, however dissimilar, would outrank
    the best keyword match of a note written a minute ago.
    """
    merged: dict[int, Hit] = {}
    for rank, (d, s) in enumerate(vector, 1):
        h = merged[d] = _doc_hit(snap, d, vector_weight / (k + rank))
        h.vector = s
    for rank, (d, s) in enumerate(keyword, 1):
        contrib = (1.0 - vector_weight) / (k + rank)
        h = merged.get(d)
        if h is None:
            abstained = embedded is not None and not embedded(d)
            h = merged[d] = _doc_hit(snap, d, vector_weight / (k + rank) if abstained else 0.0)
        h.score += contrib
        h.keyword = s
    return sorted(merged.values(), key=lambda h: -h.score)


def _fuse_minmax(snap, vector, keyword, vector_weight: float, embedded=None) -> list[Hit]:
    """Weighted sum of each branch's scores min-max normalised over its candidates.

    The default: on LoCoMo and a pydoc corpus it beat weighted RRF at every weight
    and k tried (docs/evaluation.md), because it keeps how far apart scores are,
    which RRF throws away. A chunk absent from a branch gets 0 from it, except a
    chunk with no vector yet, which is credited its keyword score (see _fuse).
    """
    def normalised(branch):
        if not branch:
            return {}
        lo, hi = min(s for _, s in branch), max(s for _, s in branch)
        return {d: (s - lo) / (hi - lo) if hi > lo else 1.0 for d, s in branch}

    nv, nk = normalised(vector), normalised(keyword)
    raw_v, raw_k = dict(vector), dict(keyword)
    hits = []
    for d in dict.fromkeys([*nv, *nk]):
        v = nv.get(d)
        if v is None and d in nk and embedded is not None and not embedded(d):
            v = nk[d]  # not embedded yet: the vector branch abstains
        h = _doc_hit(snap, d, vector_weight * (v or 0.0) + (1.0 - vector_weight) * nk.get(d, 0.0))
        h.vector, h.keyword = raw_v.get(d), raw_k.get(d)
        hits.append(h)
    return sorted(hits, key=lambda h: -h.score)  # stable: vector order breaks ties


class VectorBranch(NamedTuple):
    hits: list[tuple[int, float]]  # (doc, cosine), best first
    has_vector: object  # doc -> bool, or None when the branch did not run
    expansion: list[tuple[str, float]]  # weighted extra keyword terms (memcli.retrieval.expand)


def _vector_branch(ws: Workspace, snap, query: str, candidates: int, allowed, warnings: list[str],
                   required: bool, backend=None, expand: bool = True) -> VectorBranch:
    """Exact cosine over the chunks' passage vectors (a chunk's best), a has-a-vector test
    for chunks, and the query expansion computed from the same embedding request.

    Empty (with one warning) whenever it cannot run.

    Never an error unless the user forced --mode vector/hybrid without any backend:
    a failing provider, changed embedding settings or missing vectors degrade the
    search to keyword-only and say why on stderr.
    """
    from memcli.errors import ProviderError
    from memcli.index import vectors
    from memcli.providers.embedding import space as embedding

    space = vectors.active_space(ws.metadata)
    explicit = ws.config["embedding_model_config"].get("backend") not in ("", "none")
    if space is None and not required and not explicit:
        return VectorBranch([], None, [])  # keyword-only workspace: no vectors were ever computed
    owned = backend is None  # built here, so closed here; a caller's backend stays open
    backend = backend or embedding.configured(ws)
    if backend is None:
        if required:
            raise BadInput("vector search needs an embedding backend",
                           embedding.why_off(ws) or "set embedding_model_config in mem.yaml")
        return VectorBranch([], None, [])
    if space is None:
        warnings.append("no chunk has a vector yet; run `mem reindex` (results are keyword-only)")
        return VectorBranch([], None, [])
    if space["id"] != backend.space["id"]:
        warnings.append(f"embedding settings changed ({space.get('identity')} -> {backend.space['identity']}); "
                        "vector search paused until `mem reindex --scope embedding`")
        return VectorBranch([], None, [])
    from memcli.index import passages

    matrix = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", ""),
                                 passages.configured(ws.config))
    if matrix is None or matrix.n_docs != snap.n_docs:
        warnings.append("chunk vectors do not match the index; run `mem reindex` (results are keyword-only)")
        return VectorBranch([], None, [])
    words, vocab = _expansion_words(ws, space, query) if expand else ([], None)
    try:
        vecs = backend.embedder.embed_batch([query] + words)
    except ProviderError as exc:
        warnings.append(f"embedding provider failed ({exc.line()}); results are keyword-only")
        return VectorBranch([], None, [])
    finally:
        if owned:
            backend.embedder.close()
    from memcli.retrieval import expand as expmod
    from memcli.retrieval import vector as vecmod

    cfg = ws.config["search"]
    expansion = expmod.neighbours(query, vecs[1:], vocab, int(cfg["expand_terms"]),
                                  float(cfg["expand_min_similarity"]), float(cfg["expand_weight"])) if words else []
    mask = matrix.mask  # a chunk scores as its best passage
    return VectorBranch(vecmod.top(matrix.rows, mask, vecs[0], candidates, allowed, matrix.offsets,
                                   matrix.chunk_rows),
                        lambda d: bool(mask[d]), expansion)


def _expansion_words(ws: Workspace, space: dict, query: str) -> tuple[list[str], object]:
    """The query words to embed for expansion, and the vault's word vectors (or nothing)."""
    if int(ws.config["search"]["expand_terms"]) <= 0:
        return [], None
    from memcli.index import terms
    from memcli.retrieval import expand as expmod

    words = expmod.query_words(query)
    vocab = terms.load(ws.metadata, space) if words else None
    return (words, vocab) if vocab is not None else ([], None)
