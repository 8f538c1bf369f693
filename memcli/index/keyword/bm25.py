"""Okapi BM25 (k1 1.5, b 0.75, ReMe's idf): the scoring of a query over the postings of
the index's segments (memcli.index.keyword.segments.View), counting live chunks only.

idf = ln(1 + (N - df + 0.5) / (df + 0.5)); query terms de-duplicated; only
positive scores. Pure Python over memoryviews when the query's postings are few
(a cold search then never loads numpy); numpy, with top-k selection in numpy,
when they are many (common words in a 100k-chunk index).
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Callable
from typing import NamedTuple

from memcli.index.keyword import tokenizer

K1, B = 1.5, 0.75
NUMPY_POSTINGS = 40_000  # above this many postings numpy's import pays for itself
LOADED_POSTINGS = 2_000  # once numpy is imported anyway (hybrid search), its loop is cheaper


def header(n_docs: int, total_len: int) -> dict:
    """The BM25 parameters an index records (its scores are computed with them)."""
    return {"k1": K1, "b": B, "n_docs": n_docs, "total_len": total_len, "avgdl": total_len / n_docs if n_docs else 0.0}


def _norm_coefficients(snap) -> tuple[float, float]:
    """(k1, avgdl) of the live chunks: a chunk's length norm k1 * (1 - b + b * len / avgdl)
    is computed at search time, so an update changing avgdl rewrites no segment."""
    return float(snap.header.get("k1", K1)), float(snap.avgdl or 1.0)


def _numpy_pays(terms) -> bool:
    limit = LOADED_POSTINGS if "numpy" in sys.modules else NUMPY_POSTINGS
    return sum(z - a for spans, _ in terms for _, a, z in spans) > limit


def _terms(snap, query: str, extra=()) -> list:
    """(postings spans, idf * (k1 + 1) * weight) of each query term found in the index.

    `extra` = (index term, weight) pairs added to the query's own terms (weight 1)."""
    own, added, _ = _split_terms(snap, query, extra)
    return own + added


def _split_terms(snap, query: str, extra=(), sure=frozenset()):
    """_terms, as (the query's own terms, the `extra` ones, how many of the own terms lead:
    those a match needs, before the characters inside its CJK words, tokenizer.part_terms).
    An `extra` term in `sure` leads too: it counts as the query's own."""
    n = snap.n_docs
    k1 = float(snap.header.get("k1", K1))
    parts: tuple[list, list, list] = ([], [], [])
    pieces = tokenizer.part_terms(query)
    weighted = [(t, 1.0, 1 if t in pieces else 0) for t in tokenizer.query_terms(query)] + [
        (t, w, 0 if t in sure else 2) for t, w in extra
    ]
    for term, weight, part in weighted:
        h = tokenizer.term_hash(term)
        spans = snap.spans(h)
        df = snap.df(h, spans) if spans else 0
        if df:
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            if idf > 0:
                parts[part].append((spans, idf * (k1 + 1.0) * weight))
    return parts[0] + parts[1], parts[2], len(parts[0])


class Scored(NamedTuple):
    """A keyword search: its best chunks, and what it knows of any other chunk."""

    top: list[tuple[int, float]]  # the best k (chunk, BM25 score), highest first
    score: Callable[[int], float]  # any chunk's score (0.0 = no query term in it)
    matched: Callable[[int], bool]  # the chunk holds one of the query's own terms (not a piece of a CJK word)
    any_matched: bool  # some allowed chunk does (an expansion term alone is no match)


NOTHING = Scored([], lambda d: 0.0, lambda d: False, False)


def ideal(snap, query: str) -> float:
    """The BM25 score of a chunk of average length holding each of the query's own terms once:
    the sum of their idf (a term the index lacks counts the largest idf, as no chunk has it).
    A chunk's score over it says how much of the query it covers (memcli.retrieval.fusion)."""
    n = snap.n_docs
    total = 0.0
    for term in tokenizer.query_terms(query):
        df = snap.df(tokenizer.term_hash(term))
        total += math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return total


def search(snap, query: str, k: int, allowed=None, extra=()) -> list[tuple[int, float]]:
    """The best `k` (chunk, BM25 score), highest first; `allowed(doc) -> bool` filters chunks;
    `extra` adds weighted terms (query expansion)."""
    return scored(snap, query, k, allowed, extra).top


def scored(snap, query: str, k: int, allowed=None, extra=(), sure=frozenset()) -> Scored:
    """search(), plus every chunk's score and which chunks match a term of the query itself.

    A chunk that only an expansion term reaches is scored like any other, but it is
    not a match: what a search shows needs a real term (or a vector above the floor); so is
    one reached only by a character inside a CJK word of the query (tokenizer.part_terms).
    An expansion term in `sure` is a match like the query's own (a paraphrase two ways agree on,
    memcli.retrieval.expand.with_definitions)."""
    own, added, leading = _split_terms(snap, query, extra, sure) if snap.n_docs else ([], [], 0)
    terms = own + added
    if not terms:
        return NOTHING
    if not _numpy_pays(terms):
        acc, hit_own = _accumulate(snap, terms, leading)
        if allowed is not None:
            acc = {d: s for d, s in acc.items() if allowed(d)}
            hit_own = {d for d in hit_own if allowed(d)}
        return Scored(top(acc, k), lambda d: acc.get(d, 0.0), hit_own.__contains__, bool(hit_own))
    import numpy as np

    acc, own_mask = _accumulate_numpy(snap, terms, leading)
    hit = np.flatnonzero(acc > 0)
    if allowed is not None:
        hit = hit[np.fromiter((allowed(d) for d in hit.tolist()), dtype=bool, count=len(hit))]
    any_own = bool(own_mask[hit].any())
    if len(hit) > k:  # the best k, and every chunk tied with the k-th: top() orders ties by chunk
        kth = -np.partition(-acc[hit], k - 1)[k - 1]
        best = hit[acc[hit] >= kth]
    else:
        best = hit
    return Scored(
        top(dict(zip(best.tolist(), acc[best].tolist())), k),
        lambda d: float(acc[d]),
        lambda d: bool(own_mask[d]),
        any_own,
    )


def _by_segment(terms) -> list:
    """[(segment, [(term number, start, end, weight), ...])]: the postings grouped by segment,
    terms in query order, so that each segment's pages are read (and let go) once."""
    groups: dict[int, tuple] = {}
    for t, (spans, up) in enumerate(terms):
        for seg, a, z in spans:
            groups.setdefault(id(seg), (seg, []))[1].append((t, a, z, up))
    return list(groups.values())


def _live_postings(spans):
    """(chunk in the view's numbering, local chunk, tf, segment) of the live postings of `spans`."""
    for seg, a, z in spans:
        docs, tfs = seg.snap.post_doc[a:z].tolist(), seg.snap.post_tf[a:z].tolist()
        if not seg.dead_docs:
            base = seg.doc_base
            for d, tf in zip(docs, tfs):
                yield base + d, (d, tf, seg)
        else:
            dead = seg.dead_doc_set
            for d, tf in zip(docs, tfs):
                if d not in dead:
                    yield seg.global_doc(d), (d, tf, seg)


def _live_arrays(spans):
    """(chunks in the view's numbering, local chunks, tfs, segment) of `spans`, as numpy arrays."""
    import numpy as np

    for seg, a, z in spans:
        local = np.frombuffer(seg.snap.post_doc, dtype=np.uint32, count=z - a, offset=4 * a)
        tfs = np.frombuffer(seg.snap.post_tf, dtype=np.uint32, count=z - a, offset=4 * a)
        if seg.dead_docs:
            # (dead_docs is sorted: where a chunk would go among them says both whether it is
            # dead and how many dead ones precede it; np.isin sorted again and imported numpy.ma)
            dead = np.array(seg.dead_docs, dtype=np.int64)
            pos = np.searchsorted(dead, local)
            live = dead[np.minimum(pos, len(dead) - 1)] != local
            local, tfs = local[live], tfs[live]
            glob = seg.doc_base + local.astype(np.int64) - pos[live]
        else:
            glob = local + np.int64(seg.doc_base)
        yield glob, (local, tfs, seg)


def score(snap, query: str, allowed=None, terms=None) -> dict[int, float]:
    """BM25 score of every chunk matching `query`; `allowed(doc) -> bool` filters docs."""
    if terms is None:
        terms = _terms(snap, query) if snap.n_docs else []
    if not terms:
        return {}
    if _numpy_pays(terms):
        import numpy as np

        acc, _ = _accumulate_numpy(snap, terms, 0)
        hit = np.flatnonzero(acc > 0)
        scores = dict(zip(hit.tolist(), acc[hit].tolist()))
    else:
        scores, _ = _accumulate(snap, terms, 0)
    if allowed is not None:
        return {d: s for d, s in scores.items() if s > 0 and allowed(d)}
    return {d: s for d, s in scores.items() if s > 0}


def _accumulate(snap, terms, n_own: int) -> tuple[dict[int, float], set[int]]:
    """(chunk -> BM25 score, chunks holding one of the first `n_own` terms), in pure Python.
    A chunk's terms are added in query order: the same sums, to the bit, as numpy's."""
    k1, avgdl = _norm_coefficients(snap)
    acc: dict[int, float] = {}
    own: set[int] = set()
    get = acc.get
    for seg, parts in _by_segment(terms):
        doc_len = seg.snap.doc_len
        for t, a, z, up in parts:
            for d, (local, tf, _) in _live_postings([(seg, a, z)]):
                norm = k1 * (1.0 - B + B * doc_len[local] / avgdl)
                acc[d] = get(d, 0.0) + up * tf / (tf + norm)
                if t < n_own:
                    own.add(d)
        seg.snap.release_pages()
    return acc, own


def _accumulate_numpy(snap, terms, n_own: int):
    """(every chunk's BM25 score, which chunks hold one of the first `n_own` terms), in numpy."""
    import numpy as np

    k1, avgdl = _norm_coefficients(snap)
    acc = np.zeros(snap.n_docs, dtype=np.float64)
    own = np.zeros(snap.n_docs, dtype=bool)
    for seg, parts in _by_segment(terms):
        doc_len = np.frombuffer(seg.snap.doc_len, dtype=np.uint32)
        for t, a, z, up in parts:
            for glob, (local, tf, _) in _live_arrays([(seg, a, z)]):
                norm = k1 * (1.0 - B + B * doc_len[local] / avgdl)
                acc[glob] += up * tf / (tf + norm)  # a term lists each chunk once: no lost updates
                if t < n_own:
                    own[glob] = True
        seg.snap.release_pages()
    return acc, own


def top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    """Best `k` (doc, score), highest first; ties by doc number for a stable order."""
    return heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))
