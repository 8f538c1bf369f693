"""Definitions of the vault's words, for the reverse-dictionary expansion of a query.

A question often says in a phrase what its note says in one word: "How does the user
usually travel to work?" against "My preferred commute is a lightweight bicycle". The
local model does not relate the phrase to the word (it puts "travel to work" nearer
"trip" than "commute", and "The user travels to Osaka…" above the commute note), but a
dictionary does: WordNet defines a commute as "a regular journey of some distance to and
from your place of work". So the embedding run also embeds, for each word of the word
store (memcli.index.vectors.terms) that WordNet knows, the word with its definitions
("commute: a regular journey …; exchange positions …"), and a search compares the query
with them (memcli.retrieval.expand.defined): the words whose definition says what the
query asks become keyword terms. Measured on bench/semantic_set, LoCoMo and pydoc
(docs/evaluation.md).

The dictionary is data/glosses.tsv.zst, built from WordNet 3.0 by bench/make_wordnet.py
(Princeton University's licence: data/WORDNET-LICENSE): the commonest sense's definition
in each part of speech of 77,197 single-word lemmas, 1.3 MB. Read only by an embedding
run, never by a search. The vectors are stored as `embedding_store/glosses_<space>.f32m`,
in the word store's format and from the same words (its `source`), derived state like the rest.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from memcli.index.vectors import terms
from memcli.vault import atomic

DICTIONARY = Path(__file__).resolve().parents[1] / "data" / "glosses.tsv.zst"  # (memcli/index/data/, package data)
# the nouns and verbs filed under each word (memcli.retrieval.narrower): the same format, read
# by a search whose words barely cover it (the definitions above are read only by an embedding run)
NARROWER = DICTIONARY.with_name("narrower.tsv.zst")
# regular inflections back to a WordNet lemma, tried in order after the word itself
# (WordNet's own morphy, without its exception lists: "went" finds no "go")
SUFFIXES = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ing", ""),
    ("ing", "e"),
    ("ed", ""),
    ("ed", "e"),
    ("er", ""),
    ("est", ""),
)


def store_path(metadata: Path, space: str) -> Path:
    return metadata / "embedding_store" / f"glosses_{space}.f32m"


@lru_cache(maxsize=2)
def dictionary(path: Path = DICTIONARY) -> list[bytes]:
    """The lines of a WordNet table (`lemma<TAB>...`, sorted by lemma), [] when the data
    file is missing or damaged. Searched by bisection: a dict of the 77,197 lemmas took
    longer to build than the file takes to decompress."""
    import zstandard

    try:
        return zstandard.ZstdDecompressor().decompress(path.read_bytes()).split(b"\n")
    except (OSError, zstandard.ZstdError):
        return []


def lookup(lemma: str, path: Path = DICTIONARY) -> str | None:
    """The definitions of a WordNet lemma ("; "-joined), or another table's entry; None."""
    lines = dictionary(path)
    key = lemma.encode("utf-8") + b"\t"  # a tab sorts before any letter: "commute\t" < "commuter"
    i = bisect.bisect_left(lines, key)
    if i < len(lines) and lines[i].startswith(key):
        return lines[i][len(key) :].decode("utf-8", "replace")
    return None


def definition(word: str) -> str | None:
    """ "word: its definitions" for a vault word (lowercase), or None when WordNet lacks it."""
    for form in base_forms(word):
        found = lookup(form)
        if found:
            return f"{word}: {found}"
    return None


def base_forms(word: str) -> list[str]:
    out = [word]
    for suffix, repl in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            out.append(word[: -len(suffix)] + repl)
    return out


def inflections(lemma: str) -> list[str]:
    """The words base_forms takes back to `lemma`: the lemma and its regular inflections."""
    out = [lemma]
    for suffix, repl in SUFFIXES:
        if lemma.endswith(repl) and len(lemma) - len(repl) >= 3:
            out.append(lemma[: len(lemma) - len(repl)] + suffix)
    return out


def load(metadata: Path, space: dict | None):
    """(words, unit vectors of their definitions as an mmap view, source), or None."""
    return terms.read(store_path(metadata, space["id"]), space) if space else None


def update(
    metadata: Path,
    space: dict,
    snap,
    limit: int,
    embed_batch: Callable[[list[str]], object],
    batch_size: int,
    progress=None,
    before=None,
) -> tuple[int, int]:
    """Embed the definitions of the vault's words (the word store's, or with no word store the
    same `limit` words of the index `snap`) that have none yet; drop those of words it no
    longer holds. (definitions embedded now, definitions stored); nothing is read or written
    when the words have not changed since. `before`: the word store as it was (terms.load)
    before its last update; when these definitions were made from it, only the words new
    since are looked up in the dictionary (a one-file update need not load it)."""
    path = store_path(metadata, space["id"])
    old = load(metadata, space)
    source = terms.source_of(snap, limit)
    if old and old[2] == source:
        return 0, len(old[0])
    words = terms.load(metadata, space)
    if words is None or words[2] != source:  # word vectors off (search.expand_terms: 0): just the words
        words = (terms.vocabulary(snap, limit), None, source)
    if not words[0]:
        atomic.remove(path)
        return 0, 0
    if old and before and old[2] == before[2]:  # words known before keep their answer (defined or not)
        had, known = set(old[0]), set(before[0])
        wanted = [w for w in words[0] if w in had or (w not in known and definition(w))]
    else:
        wanted = [w for w in words[0] if definition(w)]
    return terms.refresh(
        path, wanted, lambda w: definition(w) or "", old, source, embed_batch, batch_size, progress, "definitions"
    )
