"""Narrower words: the vault's words that a word of the query names, or names as their kind.

A question often names a thing by another name or by its kind where the note names the thing
itself: "Who is the apiarist living nearby?" against "our neighbour the beekeeper", "Which
volumetric analysis do the students carry out?" against "the titration practical", "What
injury did he suffer in his tumble?" against "a sprained wrist". The local embedding model
rarely relates the two, and the reverse dictionary (memcli.index.vectors.glosses) only when the
thing's definition reads like the question. WordNet knows the relation:
memcli/index/data/narrower.tsv.zst (bench/make_wordnet.py) lists, for a word, the nouns whose
commonest sense it names or names one or two levels above (apiarist: beekeeper; volumetric
analysis: titration; injury: sprain) and the verbs whose commonest sense it names or names one
level above (buy: purchase). So for a query its own words barely cover (COVERAGE),
the vault's words under a query word (or under two neighbouring query words as one name)
become keyword terms, counted as a match of the query like its own words (`sure`). A query
word over more than `per_word` of the vault's words names a class the vault holds many of
("dog" in a vault of a kennel's notes) and adds none.

Measured on the tune recall sets, LoCoMo and pydoc (docs/evaluation.md, "A thing asked by its
kind").
"""

from __future__ import annotations

import re
from itertools import pairwise

from memcli.index.keyword import tokenizer

# the share of the query's BM25 ideal its best chunk covers under which narrower words are
# added: a question sharing no content word with its note. At fusion.COVERED (0.75) instead,
# questions with words of their own in the vault lost their first hit ("Which city does the user
# live in now?")
COVERAGE = 0.3
WEIGHT = 1.0  # a narrower word counts as a query word (BM25 weight 1)
# words of a question that ask nothing by themselves; the broader words of a noun hold some of
# them, then as noise ("type" of a blood group, "user" of a drug, "make" of a car)
_ASK = frozenset(
    "the what which who how does did is are was were for with from that this have has had user user's "
    "person people thing things something someone get got make made take go come give kind sort type".split()
)
_WORD = re.compile(r"[a-z]+")


def asked(query: str) -> set[str]:
    """The query's words in their WordNet base forms, and each two neighbouring words as one
    name ("volumetric_analysis")."""
    from memcli.index.vectors.glosses import base_forms

    words = _WORD.findall(query.lower())
    out = {f for w in words for f in base_forms(w)}
    out.update(f"{a}_{b}" for a, b in pairwise(words))
    return out - _ASK


def terms(snap, query: str, per_word: int) -> list[tuple[str, float]]:
    """(index term, weight) of the vault's words (memcli.index.vectors.terms.live_counts) that a
    word of `query` names or names up to two levels above, each query word reaching at most
    `per_word` of them; the query's own terms are left out."""
    from memcli.index.vectors import glosses
    from memcli.index.vectors.terms import live_counts

    if per_word <= 0:
        return []
    # the table first: most queries under the gate (nonsense, CJK) name no word of it, and then
    # the vault's word counts are never read
    listed = [u.split() for w in sorted(asked(query)) if (u := glosses.lookup(w, glosses.NARROWER))]
    if not listed:
        return []
    vault = live_counts(snap)
    own = set(tokenizer.query_terms(query))
    out: dict[str, float] = {}
    for under in listed:
        found = [f for lemma in under for f in glosses.inflections(lemma) if vault.get(f, 0) > 0]
        if len(found) > per_word:
            continue
        for f in found:
            t = tokenizer.query_terms(f)
            if t and t[0] not in own:
                out[t[0]] = WEIGHT
    return sorted(out.items())
