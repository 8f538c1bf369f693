"""mem's tokens as PostgreSQL full-text values, and vectors as pgvector's text form.

PostgreSQL's parsers do not segment Chinese or Japanese, and its stemmers are not mem's,
so the database never tokenizes: a chunk's tsvector is written literally from
memcli.index.tokenizer's tokens (what the 'simple' configuration would keep, with mem's
CJK pairs and identifiers), and each query term is a quoted lexeme of its own.
A lexeme's positions are 1..tf (for ts_rank and other tools; PostgreSQL keeps at most 256);
the BM25 in SQL reads tf from the `terms`/`tfs` arrays beside it, uncapped.
"""

from __future__ import annotations

from collections import Counter

from memcli.index.keyword import tokenizer

MAX_LEXEME_BYTES = 2046  # PostgreSQL refuses longer lexemes
MAX_POSITIONS = 256


def quote(term: str) -> str:
    """A lexeme as tsvector/tsquery input: quoted, quotes and backslashes doubled."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def usable(term: str) -> bool:
    return bool(term) and len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


def full_text(text: str) -> tuple[str, list[str], list[int]]:
    """(tsvector input, terms, their frequencies) of a chunk. The GIN index over the tsvector
    finds the chunks holding a term; the parallel arrays give BM25 its tf in C
    (`tfs[array_position(terms, t)]`), where unnesting every matched tsvector cost ~17 µs
    a chunk (a term in half of 100,000 chunks: most of a second)."""
    counts = Counter(t for t in tokenizer.tokenize(text) if usable(t))
    vec = " ".join(f"{quote(t)}:{','.join(map(str, range(1, min(n, MAX_POSITIONS) + 1)))}" for t, n in counts.items())
    return vec, list(counts), list(counts.values())


def weighted(query: str, extra=(), sure=frozenset()) -> list[tuple[str, float, bool]]:
    """(term, weight, a match) as memcli.index.bm25 reads a query: its own terms, de-duplicated,
    weight 1, each a match but a character inside a CJK word (tokenizer.part_terms); then the
    expansion's (index term, weight) pairs, a match only when in `sure` (a paraphrase two ways
    agree on, memcli.retrieval.expand.with_definitions)."""
    own = [t for t in tokenizer.query_terms(query) if usable(t)]
    mine, pieces = set(own), tokenizer.part_terms(query)
    return [(t, 1.0, t not in pieces) for t in own] + [
        (t, float(w), t in sure) for t, w in extra if usable(t) and t not in mine
    ]


def vector(row) -> str:
    """A vector as pgvector text, '[0.1,0.2,...]' (5 significant digits: float16's precision)."""
    return "[" + ",".join(f"{x:.5g}" for x in row.tolist()) + "]"


def vectors(rows) -> str:
    """An array of vectors as PostgreSQL array text, '{"[...]","[...]"}'."""
    return "{" + ",".join(f'"{vector(r)}"' for r in rows) + "}"
