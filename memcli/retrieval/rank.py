"""The order of search results: which candidates are shown and in what order.

A search job runs two branches over an index (the local one or the team's) and hands
their candidates here: the vector branch as a VectorBranch, the keyword branch as a
memcli.index.keyword.bm25.Scored. `order` applies the relevance floor, fuses the branches
(memcli.retrieval.fusion), folds neighbouring hits of one file, and places a current
statement above the ones it superseded (memcli.retrieval.currency). `keyword` scores
the keyword branch, adding the words whose definition is near the query when the
query's own words are weakly covered.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from memcli.index.keyword import bm25
from memcli.retrieval import fusion, sources
from memcli.retrieval.hits import Hit


class VectorBranch(NamedTuple):
    hits: list[tuple[int, float]]  # (doc, cosine), best first
    has_vector: Any  # doc -> bool, or None when the branch did not run
    expansion: list[tuple[str, float]]  # weighted extra keyword terms (memcli.retrieval.expand)
    cosines: Any = None  # docs -> {doc: cosine} of any chunks with vectors (those of the other branch)
    floor: float | None = None  # the space's noise floor: a vector match scores above it
    # () -> (term, weight) of the words whose definition is near the query (expand.defined), asked
    # only for a query its own words cover weakly: the definitions' pages are read only then
    defined: Any = None
    # the cosine above which a chunk only an expansion term reaches is a match (noise.near_floor)
    near: float | None = None


class Ranking(NamedTuple):
    hits: list[Hit]  # best first, at most `candidates` (before the caller's limit)
    vector_hits: int  # vector candidates above the noise floor, among the first `candidates`
    keyword_hits: int  # keyword candidates with a query term of their own, among the first `candidates`
    hybrid: bool  # both branches fused


def keyword(
    snap, query: str, depth: int, allowed, branch: VectorBranch, narrower: int = 0
) -> tuple[VectorBranch, bm25.Scored]:
    """The keyword branch over `snap`, expanded with the vector branch's words; when no chunk
    holds most of the query's words (fusion.weakly_covered) also with the words whose
    definition is near the query (branch.defined), and when the best holds hardly any
    (narrower.COVERAGE) with the vault words a query word is a broader name for, up to
    `narrower` per query word (memcli.retrieval.narrower; 0: none). Either joins the branch's
    expansion."""
    scored = bm25.scored(snap, query, depth, allowed, extra=branch.expansion)
    ideal = bm25.ideal(snap, query)
    covered = fusion.coverage(scored.top, ideal)
    sure: frozenset[str] = frozenset()
    if branch.defined is not None and covered < fusion.COVERED:
        from memcli.retrieval.expand import with_definitions

        defined = branch.defined()
        if defined:
            expansion, sure = with_definitions(branch.expansion, defined)
            branch = branch._replace(expansion=expansion)
            scored = bm25.scored(snap, query, depth, allowed, extra=branch.expansion, sure=sure)
            covered = fusion.coverage(scored.top, ideal)
    if narrower > 0:
        from memcli.retrieval import narrower as narrow

        found = narrow.terms(snap, query, narrower) if covered < narrow.COVERAGE else []
        if found:
            from memcli.retrieval.expand import joined

            branch = branch._replace(expansion=joined(branch.expansion, found))
            sure = sure | {t for t, _ in found}
            scored = bm25.scored(snap, query, depth, allowed, extra=branch.expansion, sure=sure)
    return branch, scored


def order(
    snap,
    cfg,
    branch: VectorBranch,
    scored: bm25.Scored,
    asked: str,
    candidates: int,
    *,
    min_score: float = 0.0,
    max_tokens: float,
    metadata=None,
    daily_dir: str = "memory",
    question: str = "",
) -> Ranking:
    """The hits worth showing, best first: relevance floor and fusion (`fused`), then those
    scoring at least `min_score`, the best `candidates` folded where one file's line ranges
    meet (fusion.merge, within `max_tokens`), and with `metadata` (the local index's folder;
    the team index keeps no statements) each current statement placed above the ones it
    superseded (docs/currency.md), dated by `daily_dir`; `question`: the query as asked, whose
    tense says whether it asks what holds now (`asked` is its topic). `cfg` is the search settings (mem.yaml `search`)."""
    ranking = fused(snap, cfg, branch, scored, asked, candidates)
    hits = ranking.hits
    if min_score > 0:
        hits = [h for h in hits if h.score >= min_score]
    hits = fusion.merge(snap, sources.as_notes(snap, hits)[:candidates], max_tokens)  # the best `candidates` fold
    if metadata is not None:
        from memcli.retrieval import currency

        near = [t for t, w in branch.expansion if w >= currency.NEAR * cfg.expand_weight]  # fly: flight
        hits = currency.annotate_and_rank(snap, metadata, hits, asked, near, daily_dir, question)
    return ranking._replace(hits=hits)


def fused(snap, cfg, branch: VectorBranch, scored: bm25.Scored, asked: str, candidates: int) -> Ranking:
    """The hits worth showing, best first, each scored independently of the limit.

    Relevance floor: a chunk is shown only with a real match, a query term of its own (an
    expansion term alone is none) or a cosine above the space's noise floor, or both weak signals
    at once (an expansion term and a cosine above `branch.near`), so a query
    that nothing matches gives no results in every mode. When the vector branch has such
    a match and the keyword branch any candidate, every candidate of both is fused; else
    the branch with matches ranks alone by its own scores (raw cosine or BM25)."""
    vector, floor, c = branch.hits, branch.floor, candidates
    cos = dict(vector)

    def above(d) -> bool:
        return d in cos and (floor is None or cos[d] > floor)

    near = branch.near
    if near is not None and branch.cosines is not None:  # the cosines of chunks only an expansion reached
        cos.update(branch.cosines([d for d, _ in scored.top[:c] if not scored.matched(d) and d not in cos]))

    def agreed(d) -> bool:  # an expansion term (the chunk scores) and a cosine near the floor
        return near is not None and d in cos and cos[d] > near and scored.score(d) > 0

    vector_hits = sum(1 for d, _ in vector[:c] if above(d))
    keyword_hits = sum(1 for d, _ in scored.top[:c] if scored.matched(d))
    vector_matched = bool(vector) and above(vector[0][0])  # the list is best first
    if vector_matched and scored.top:
        docs = list(dict.fromkeys([*(d for d, _ in vector), *(d for d, _ in scored.top)]))
        if branch.cosines is not None:  # each branch's score of the other's candidates
            cos.update(branch.cosines([d for d in docs if d not in cos]))
        bm = dict(scored.top)
        bm.update((d, s) for d in docs if d not in bm and (s := scored.score(d)) > 0)
        if cfg.fusion == "rrf":
            hits = fusion.fuse_rrf(
                snap, vector, scored.top, cfg.vector_weight, cfg.rrf_k, branch.has_vector, scores=(cos, bm)
            )
        else:
            weight = (
                cfg.vector_weight
                if cfg.fusion == "minmax"
                else fusion.adaptive_weight(snap, vector, scored.top, cfg.vector_weight, bm25.ideal(snap, asked), floor)
            )
            hits = fusion.fuse_minmax(
                snap, vector, scored.top, weight, branch.has_vector, scores=(cos, bm), floor=floor
            )
        shown = [h for h in hits if scored.matched(h.docs[0]) or above(h.docs[0]) or agreed(h.docs[0])]
        return Ranking(shown, vector_hits, keyword_hits, True)
    hits = []
    if vector_matched:
        for d, s in vector:
            if above(d):
                hits.append(fusion.doc_hit(snap, d, s))
                hits[-1].vector = s
    else:
        for d, s in scored.top:
            if scored.matched(d) or agreed(d):
                hits.append(fusion.doc_hit(snap, d, s))
                hits[-1].keyword = s
    return Ranking(hits, vector_hits, keyword_hits, False)
