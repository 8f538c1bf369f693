"""How the currency rules read a statement: its cleaned text and its content words.

`clean` drops a list marker, a speaker prefix and ingest's glosses, lowers the case and reads
a note's third person as the first ("The user's goal" as "my goal"); `words` are the content
words, stemmed, CJK runs kept whole; `vocabulary` is the words of many statements at once.
Statements are cleaned again and again (by claims, retired, adopted and words), and a vault
holds a hundred thousand: hence the caches and the guards before each rewrite.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memcli.index.currency import gloss
from memcli.index.keyword.tokenizer import STOPWORDS, light_stem

_PREFIX = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:user|assistant|me|i)\s*:\s*(?:\*\*)?", re.I)
_UNIT = re.compile(r"(\d)\s+(m|km|kg|min|mins|h|hrs?|gb|tb|cm|ms|s|k|gi|mb)\b")
_MARKUP = re.compile(r"\*\*|__|`")
_DIGIT = re.compile(r"\d")
_THE_USER = re.compile(r"\bthe user('s\b)?\b")
_EMOJI = re.compile(r"\s*[\U0001F000-\U0001FAFF\u2600-\u27BF]+[\ufe0f\u200d]*\s*")


def _clean(sentence: str) -> str:
    """A statement as the rules read it: no list marker or speaker prefix, lower case, the
    third person of a note ("The user's goal") read as the first ("my goal")."""
    s = _PREFIX.sub("", gloss.bare(sentence).strip()).strip().lower().replace("’", "'")
    # each rewrite only where it can apply: a vault has a hundred thousand statements
    if "*" in s or "_" in s or "`" in s:
        s = _MARKUP.sub("", s)
    if _DIGIT.search(s):
        s = _UNIT.sub(r"\1\2", s)  # "50 m" is one value, as "50m"
    if not s.isascii():  # an emoji ends a clause as a full stop does ("moved to thika 😢 my new supervisor is faith")
        s = _EMOJI.sub(". ", s)
    if "the user" in s:
        s = _THE_USER.sub(lambda m: "my" if m.group(1) else "i", s)
    return s


clean = lru_cache(maxsize=8192)(_clean)  # one statement is cleaned by claims, retired, adopted and words


def statement_words(sentence: str) -> set[str]:
    """A statement's words as the rules read it (ingest's "(about: ...)" gloss names the
    conversation's topics, not the statement's), and a CJK statement's English keywords."""
    return set(words(clean(sentence))) | {w for k in gloss.keywords(sentence) for w in words(k)}


def words(text: str) -> list[str]:
    """The content words of a text, stemmed (CJK runs kept whole)."""
    return list(_words(text))


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    text = _UNIT.sub(r"\1\2", text.lower())
    return tuple(w for tok in _TOKEN.findall(text) for w in _token_words(tok))


_TOKEN = re.compile(r"[\w:'+.-]+")


@lru_cache(maxsize=1 << 17)  # a vault repeats its tokens: a lookup instead of string work
def _token_words(tok: str) -> tuple[str, ...]:
    w = tok.strip("'.-")
    if w.endswith("'s") and len(w) > 3:
        w = w[:-2]  # a possessive is its noun: "mum's surgery" is about mum
    parts = w.split("-") if "-" in w and not any(c.isdigit() for c in w) else [w]
    return tuple(_stem(p) for p in parts if p and p not in STOPWORDS)


def vocabulary(sentences: list[str]) -> str:
    """Every content word of the sentences, as " w1 w2 ... " (distinct, sorted): a superset of
    `words(clean(s))` for each, found in one pass over all of them, so a note can be asked
    whether it may hold a word (`f" {w} " in vocabulary`) without keeping each sentence's words.
    The joint " ( . " opens no gloss and closes none, so no rewrite reaches from one sentence
    into the next."""
    text = _clean(" ( . ".join(sentences))
    found = {w for tok in set(_TOKEN.findall(text)) for w in _token_words(tok)}
    found.update(w for s in sentences if "(keywords:" in s for k in gloss.keywords(s) for w in words(k))
    return " " + " ".join(sorted(found)) + " "


@lru_cache(maxsize=65536)  # a vault repeats its words: a lookup instead of regexes
def _stem(w: str) -> str:
    """light_stem, with a plural -es stripped only where English adds it ("shoes" -> "shoe",
    like "shoe"; "boxes" -> "box")."""
    if len(w) > 3 and w.isascii() and w.isalpha() and w.endswith("s") and not w.endswith("ss"):
        w = w[:-2] if re.search(r"(?:[sxz]|[cs]h)es$", w) else (w[:-3] + "y" if w.endswith("ies") else w[:-1])
    return light_stem(w) if not w.endswith("s") else w
