"""Fusion of the keyword and vector branches, and merging of neighbouring hits.

Both fusions score chunks (documents of the snapshot); merging then folds hits of
one file whose line ranges overlap or touch, within a token budget.
"""

from __future__ import annotations

from memcli.retrieval.hits import Hit

# Each branch hands at least its best POOL chunks to the fusion, and RRF counts ranks up to
# POOL only, whatever --limit asks for: a chunk's fused score depends on the query and the
# index alone, and the first hits of `-n 1` are those of `-n 10`.
POOL = 30
# the adaptive fusion's query-dependent weight (weak_keyword_weight): LoCoMo's median question
# has a chunk covering 0.89 of it, the paraphrase queries of bench/semantic_set at most 0.45;
# chosen by the sweep in docs/evaluation.md ("Fusion")
COVERED, PARTIAL, WEAK_WEIGHT = 0.75, 0.4, 0.8
MARGIN_LOW, MARGIN_HIGH = 0.05, 0.2


def file_docs(snap, path: str) -> range:
    """The chunks (documents) of the indexed file `path`, in order; empty when it is not indexed."""
    f = snap.file_index(path)
    if f is None:
        return range(0)
    rec = snap.record(f)
    return range(rec["first"], rec["first"] + rec.get("count", 0))


def doc_hit(snap, doc: int, score: float) -> Hit:
    fidx, start, end, crumb = snap.meta(doc)
    return Hit(snap.paths[fidx], start, end, snap.text(doc), score, docs=[doc])


def merge(snap, hits: list[Hit], max_tokens: float) -> list[Hit]:
    """Fold hits of one file whose line ranges overlap or touch into the better-ranked one.

    A fold that would grow the hit past `max_tokens` is not made: the lower hit is
    shown on its own. Unbounded folding turned long notes into whole-file results
    (LoCoMo turn-level Recall@5 0.46 instead of 0.83, docs/evaluation.md).
    """
    from memcli.index.notes.chunker import estimate_tokens

    kept: list[Hit] = []
    for h in hits:
        target = next(
            (k for k in kept if k.path == h.path and h.start_line <= k.end_line + 1 and h.end_line >= k.start_line - 1),
            None,
        )
        if target is None:
            kept.append(h)
            continue
        trial = Hit(
            target.path,
            target.start_line,
            target.end_line,
            target.text,
            target.score,
            target.vector,
            target.keyword,
            target.docs + h.docs,
        )
        rebuild_text(snap, trial)
        if sum(estimate_tokens(x) for x in trial.text.split("\n")) > max_tokens:
            kept.append(h)
            continue
        target.docs, target.start_line, target.end_line, target.text = (
            trial.docs,
            trial.start_line,
            trial.end_line,
            trial.text,
        )
        if target.vector is None or (h.vector is not None and h.vector > target.vector):
            target.vector = h.vector if h.vector is not None else target.vector
        if target.keyword is None or (h.keyword is not None and h.keyword > target.keyword):
            target.keyword = h.keyword if h.keyword is not None else target.keyword
    return kept


def rebuild_text(snap, hit: Hit) -> None:
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


def fuse_rrf(snap, vector, keyword, vector_weight: float, k: int, embedded=None, scores=None) -> list[Hit]:
    """Weighted reciprocal rank fusion keyed by chunk; a missing branch adds nothing.

    Ranks count within each branch's best POOL, so a chunk's score does not depend on
    how many results were asked for. Except for a chunk that has no vector yet (edited
    since the last embedding run): the vector branch could not see it, so instead of 0
    it is credited with its keyword rank. Otherwise every embedded chunk, however
    dissimilar, would outrank the best keyword match of a note written a minute ago.
    `scores` = (doc -> cosine, doc -> BM25) of every candidate (see candidates()).
    """
    rank_v = {d: r for r, (d, _) in enumerate(vector[:POOL], 1)}
    rank_k = {d: r for r, (d, _) in enumerate(keyword[:POOL], 1)}
    cos, bm = scores or candidates(vector, keyword)
    hits = []
    for d in dict.fromkeys([*(d for d, _ in vector), *(d for d, _ in keyword)]):
        rv = rank_v.get(d)
        if rv is None and d in rank_k and embedded is not None and not embedded(d):
            rv = rank_k[d]  # not embedded yet: the vector branch abstains
        score = (vector_weight / (k + rv) if rv else 0.0) + (
            (1.0 - vector_weight) / (k + rank_k[d]) if d in rank_k else 0.0
        )
        h = doc_hit(snap, d, score)
        h.vector, h.keyword = cos.get(d), bm.get(d)
        hits.append(h)
    return sorted(hits, key=lambda h: -h.score)  # stable: vector order breaks ties


def fuse_minmax(
    snap, vector, keyword, vector_weight: float, embedded=None, scores=None, floor: float | None = None
) -> list[Hit]:
    """Weighted sum of each branch's scores min-max normalised with a fixed minimum:
    w * (cos - floor) / (best cos - floor) + (1 - w) * bm25 / best bm25, each part clipped
    to 0..1. The best candidate of a branch counts 1 from it, a cosine at the space's
    noise floor (or a chunk without the query's terms) 0, whatever the limit.

    The default: on LoCoMo and a pydoc corpus it beat weighted RRF at every weight
    and k tried (docs/evaluation.md), because it keeps how far apart scores are,
    which RRF throws away; anchoring the minimum at the floor and at 0 instead of the
    worst candidate measured as well or better (docs/evaluation.md, "Scores that do not depend on `--limit`"). A chunk
    without a vector yet is credited its keyword part (see fuse_rrf). `scores` = (doc ->
    cosine, doc -> BM25) of every candidate; `floor` None = the worst candidate's cosine.
    """
    cos, bm = scores or candidates(vector, keyword)
    lo = floor if floor is not None else min((s for _, s in vector), default=0.0)
    nv, nk = _scaled(vector, lo), _scaled(keyword, 0.0)
    hits = []
    for d in dict.fromkeys([*(d for d, _ in vector), *(d for d, _ in keyword)]):
        v = nv(cos[d]) if d in cos else None
        k = nk(bm[d]) if d in bm else 0.0
        if v is None and d in bm and embedded is not None and not embedded(d):
            v = k  # not embedded yet: the vector branch abstains
        h = doc_hit(snap, d, vector_weight * (v or 0.0) + (1.0 - vector_weight) * k)
        h.vector, h.keyword = cos.get(d), bm.get(d)
        hits.append(h)
    return sorted(hits, key=lambda h: -h.score)  # stable: vector order breaks ties


def adaptive_weight(snap, vector, keyword, base: float, ideal: float, floor: float | None) -> float:
    """The vector weight for this query (search.fusion: adaptive, the default): `base`
    (search.vector_weight) raised towards WEAK_WEIGHT when no chunk covers most of the query's
    words and the vector branch's best note is clearly ahead of the next (weak_keyword_weight).

    fuse_minmax scales BM25 to the branch's best candidate, so with a fixed weight a chunk
    sharing one common word with the query counts as a full keyword match whenever nothing
    shares more, and outranks a clear paraphrase (`Database choice for the project`: a note
    on the choice of a font beat `replace MySQL with PostgreSQL`). `ideal` is the query's
    BM25 against a chunk holding each of its terms once (memcli.index.keyword.bm25.ideal); a chunk
    holding the whole query (an identifier, a name) keeps the base weight. Measured on
    LoCoMo, pydoc and bench/semantic_set (docs/evaluation.md, "Fusion").
    """
    lo = floor if floor is not None else min((s for _, s in vector), default=0.0)
    return weak_keyword_weight(base, coverage(keyword, ideal), clear_margin(snap, vector, lo))


def coverage(keyword: list[tuple[int, float]], ideal: float) -> float:
    """How much of the query its best keyword chunk holds: that chunk's BM25 (`keyword` is best
    first) over the query's ideal (memcli.index.keyword.bm25.ideal); 1 for a query without terms."""
    best = keyword[0][1] if keyword else 0.0
    return best / ideal if ideal > 0 else 1.0


def weakly_covered(keyword: list[tuple[int, float]], ideal: float) -> bool:
    """Whether no chunk holds most of the query's words (coverage under COVERED): then the
    words whose definition says what the query asks are added (memcli.retrieval.expand.defined).
    A query whose words are all there needs no dictionary, and on LoCoMo and pydoc adding it
    anyway only reshuffled near ties."""
    return coverage(keyword, ideal) < COVERED


def weak_keyword_weight(base: float, coverage: float, margin: float) -> float:
    """The vector weight for a query whose best keyword match covers `coverage` of it and whose
    best vector match leads by `margin` (clear_margin): raised from `base` towards
    WEAK_WEIGHT only when both say so. No chunk holding most of the query's words means the
    keyword branch has partial matches only; a vector winner well clear of the next note
    is right far more often than a close one (LoCoMo, all-MiniLM-L6-v2: margin >= 0.5 right
    93% of the time, < 0.1 29%), so a clear semantic match wins and a close call stays with
    the keywords."""
    weak = max(base, WEAK_WEIGHT)
    by_coverage = _ramp(COVERED - coverage, COVERED - PARTIAL)
    by_margin = _ramp(margin - MARGIN_LOW, MARGIN_HIGH - MARGIN_LOW)
    return base + (weak - base) * by_coverage * by_margin


def _ramp(x: float, width: float) -> float:
    """0 at x <= 0, 1 from x >= width, linear between (a step when width is 0)."""
    if width <= 0:
        return 1.0 if x >= 0 else 0.0
    return min(1.0, max(0.0, x / width))


def clear_margin(snap, vector, floor: float) -> float:
    """How far the best vector hit leads the best hit of another file, as a share of its
    height above the floor (0 = a tie, 1 = nothing else above the floor)."""
    if not vector or vector[0][1] <= floor:
        return 0.0
    first, top = vector[0]
    own = snap.meta(first)[0]
    second = next((s for d, s in vector[1:] if snap.meta(d)[0] != own), floor)
    return min(1.0, max(0.0, (top - max(second, floor)) / (top - floor)))


def candidates(vector, keyword) -> tuple[dict[int, float], dict[int, float]]:
    """(doc -> cosine, doc -> BM25) as the two lists know them (the search job adds the
    score each branch gives the other's candidates)."""
    return dict(vector), dict(keyword)


def _scaled(branch, lo: float):
    """score -> (s - lo) / (best - lo), clipped to 0..1; the best is the branch's first."""
    if not branch:
        return lambda s: 0.0
    hi = branch[0][1]
    if hi <= lo:
        return lambda s: 1.0 if s >= hi else 0.0
    return lambda s: min(1.0, max(0.0, (s - lo) / (hi - lo)))
