"""Query expansion: add to a keyword query the vault's words nearest to its words, and
those whose definition is nearest the whole query (`defined`).

Each content word of the query is embedded (in the same request as the query
itself, so no extra round trip) and compared with the vault's word vectors
(memcli.index.vectors.terms). Up to `expand_terms` words at least `expand_min_similarity`
similar become extra BM25 terms, each weighted `expand_weight` x similarity:
`injured` brings `injury`, `hurt`, `accident`; `picture` brings `photo`, `pic`.
A neighbour that is already a query term adds nothing, so an exact match always
counts more than a paraphrase.
"""

from __future__ import annotations

from memcli.index.keyword import tokenizer
from memcli.index.vectors.terms import words_of

MAX_QUERY_WORDS = 12  # a pasted paragraph must not cost a large embedding request
SCAN = 64  # nearest words looked at per query word (most are skipped as the query's own)


def query_words(query: str) -> list[str]:
    return list(dict.fromkeys(words_of(query)))[:MAX_QUERY_WORDS]


def neighbours(
    query: str, word_vecs, vocab, per_word: int, min_similarity: float, weight: float
) -> list[tuple[str, float]]:
    """(index term, weight) of the expansion; `word_vecs` are the query words' vectors."""
    import numpy as np

    words, vecs, _ = vocab
    if per_word <= 0 or not len(word_vecs):
        return []
    q = np.asarray(word_vecs, dtype=np.float32)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    sims = q @ vecs.T
    own = set(tokenizer.query_terms(query))
    extra: dict[str, float] = {}
    scan = min(SCAN, sims.shape[1])
    for row in sims:
        near = np.argpartition(-row, scan - 1)[:scan]
        taken = 0
        for j in near[np.argsort(-row[near], kind="stable")].tolist():
            if row[j] < min_similarity or taken >= per_word:
                break
            terms = tokenizer.query_terms(words[j])
            if not terms or terms[0] in own:
                continue
            taken += 1
            extra[terms[0]] = max(extra.get(terms[0], 0.0), weight * float(row[j]))
    return sorted(extra.items())


def defined(
    query: str, query_vec, glossary, count: int, min_similarity: float, weight: float
) -> list[tuple[str, float]]:
    """(index term, weight) of the vault words whose definition is nearest the whole query
    (memcli.index.vectors.glosses: a reverse dictionary), up to `count` at least `min_similarity`
    similar, each weighted `weight` x similarity. The query's own terms are left out: they
    match already."""
    import numpy as np

    if count <= 0 or glossary is None:
        return []
    words, vecs, _ = glossary
    q = np.asarray(query_vec, dtype=np.float32)
    sims = vecs @ (q / max(float(np.linalg.norm(q)), 1e-12))
    own = set(tokenizer.query_terms(query))
    scan = min(len(words), SCAN)
    near = np.argpartition(-sims, scan - 1)[:scan]
    found: dict[str, float] = {}
    for j in near[np.argsort(-sims[near], kind="stable")].tolist():
        if sims[j] < min_similarity or len(found) >= count:
            break
        terms = tokenizer.query_terms(words[j])
        if terms and terms[0] not in own and terms[0] not in found:
            found[terms[0]] = weight * float(sims[j])
    return sorted(found.items())


def with_definitions(
    near: list[tuple[str, float]], defined_: list[tuple[str, float]]
) -> tuple[list[tuple[str, float]], frozenset[str]]:
    """The expansion `near` (a query word's neighbours) joined with the words defined like the
    query, and the terms both name: "feline" is near "cat", and "cat"'s definition near "What
    colour is the feline's fur?". Two ways agreeing on one word is a paraphrase, and a search
    shows the chunks it reaches like those holding a word of the query (memcli.index.keyword.
    bm25.scored); either way alone reaches some vault word for any query, nonsense included."""
    return joined(near, defined_), frozenset(t for t, _ in near) & frozenset(t for t, _ in defined_)


def joined(*expansions: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Expansions merged, a term found twice keeping its larger weight."""
    out: dict[str, float] = {}
    for part in expansions:
        for term, w in part:
            out[term] = max(out.get(term, 0.0), w)
    return sorted(out.items())
