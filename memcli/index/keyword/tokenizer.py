"""Search tokenizer: words and identifiers for alphabetic scripts, n-grams for CJK.

- Words of two or more letters/digits (not CJK), lowercased, as `\\w\\w+` does;
  English stopwords dropped and plurals/-ed/-ing stripped (light_stem).
- Identifiers also count whole: `INV-20931-QX` adds `inv-20931-qx`, `7.4.119-beta`
  adds itself; camelCase and snake_case add their parts (`handleWebSocketReconnect`
  adds `handle`, `web`, `socket`, `reconnect`). So an exact identifier ranks first
  and its parts still match.
- CJK runs (Han, kana, hangul): every adjacent pair, so word order counts and a
  hangul word with a particle (`메모리를`) still matches `메모리`; plus every Han
  character (minus a few particles) and any lone kana/hangul character, so a one-
  character query matches.

Each rule is one regex pass in C: indexing 16 MB of notes must take well under a
second, so there is no per-token Python logic except for the rare identifiers.
"""

from __future__ import annotations

import re
import sys
from collections import _count_elements  # type: ignore[attr-defined]  # Counter's counting loop, in C, into a plain dict
from operator import add

try:  # hashlib's own blake2b, without hashlib's import of OpenSSL (4 ms of every search's start)
    from _blake2 import blake2b
except ImportError:  # (an interpreter built without it)
    from hashlib import blake2b


class _Lazy:
    """A regex compiled on first use: compiling these Unicode-heavy patterns costs ~7 ms,
    a visible share of a cold `mem search` whose query may need only two of them."""

    def __init__(self, pattern: str):
        self.pattern = pattern

    def __getattr__(self, name: str):
        method = getattr(re.compile(self.pattern), name)
        setattr(self, name, method)  # later calls skip __getattr__
        return method


NAME = "mixcjk"
# CJK scripts, without the CJK punctuation block (U+3000-303F), which separates words
_CJK_CLASS = r"\u2e80-\u2fff\u3040-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WIDE_SPLIT = _Lazy(rf"([{_CJK_CLASS}]+)")
_WORD = _Lazy(r"\w\w+")
# \b anchors and possessive quantifiers keep these linear on long texts
_COMPOUND = _Lazy(r"\b\w++(?:[-.:/@+#]\w++)+")
_CAMEL_TOKEN = _Lazy(r"\b\w*[a-z][A-Z]\w*")
_SNAKE_TOKEN = _Lazy(r"\b\w*[^\W_]_[^\W_]\w*")  # the definition _snake_words implements
_WORD_RUN = _Lazy(r"\w+")
# what _hints() answers, as regexes: the definitions it implements (tests compare them), never
# compiled when indexing
_COMPOUND_HINT = _Lazy(r"\w[-.:/@+#]\w")
_CAMEL_HINT = _Lazy(r"[a-z][A-Z]")
_CAMEL_PART = _Lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAN = r"\u3400-\u9fff\uf900-\ufaff"
_HAN_CHAR = _Lazy(rf"[{_HAN}]")
_PAIRS = _Lazy(r"(?=(\S\S))")  # (the definition _raw's pairs implement)
# English stopwords, dropped at index and query time (measured on LoCoMo and a pydoc
# corpus, docs/evaluation.md: with the light stemmer below, +0.05 session nDCG@10).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she
she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves""".split()
)
STOPWORDS = STOPWORDS | {w.replace("'", "") for w in STOPWORDS} | {"ll", "ve", "re"}
_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def light_stem(w: str) -> str:
    """Strip an English plural/-ed/-ing from an ASCII word (`running` -> `run`, `notes` -> `note`).

    No stemmer library: this keeps most of Snowball's measured gain at a dict lookup
    per token (results are cached), and leaves identifiers and other scripts alone."""
    if len(w) <= 4 or not (w.isascii() and w.isalpha()) or w.endswith("ss"):
        return w
    for suf, rep in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + rep
            if suf in ("ing", "ed") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            return w
    return w


def indexed_form(tok: str) -> str:
    """What the index keeps of a raw token: "" for a stopword, else its light stem."""
    return "" if tok in STOPWORDS else light_stem(tok)


class _Normal(dict):
    """token -> indexed form ("" = dropped), filled on first sight of each token."""

    def __missing__(self, tok: str) -> str:
        norm = self[tok] = indexed_form(tok)
        return norm


_NORMAL = _Normal()

# Han characters too common to mean anything on their own (still used in pairs).
HAN_STOP = frozenset("的了是在和有我你他她它们这那也就都而及与或之于以其被把给")


def _without(ranges: list[tuple[int, int]], chars) -> str:
    """A regex class of `ranges` minus `chars`."""
    out = []
    for lo, hi in ranges:
        for c in sorted(ord(x) for x in chars if lo <= ord(x) <= hi) + [hi + 1]:
            if lo < c:
                out.append(f"\\u{lo:04x}-\\u{c - 1:04x}")
            lo = c + 1
    return "".join(out)


# the Han characters kept as unigrams: _HAN_CHAR minus HAN_STOP in one class (a filter in Python cost twice as much)
_HAN_KEPT = _Lazy(f"[{_without([(0x3400, 0x9FFF), (0xF900, 0xFAFF)], HAN_STOP)}]")

SPEC = (
    "mixcjk;v4;word2+;compound[-.:/@+#];camel;snake;stop-en176;lightstem;"
    f"han=uni+bi-stop{''.join(sorted(HAN_STOP))};kana=bi;hangul=bi"
)
FINGERPRINT = "cde242361a"  # sha1(SPEC)[:10], checked by tests/test_tokenizer.py: a literal spares hashlib


def tokenize(text: str) -> list[str]:
    return [t for t in map(_NORMAL.__getitem__, _raw(text)) if t]


class _Hashed(dict):
    """token -> term_hash of its indexed form as 8 array("Q") bytes (b"" = dropped), filled
    on first sight: a build counts terms by these, so it never looks a term up twice."""

    def __missing__(self, tok: str) -> bytes:
        # (a one-letter ASCII word is one only the loose split lets through: dropped)
        norm = "" if len(tok) == 1 and tok.isascii() else indexed_form(tok)
        h = term_hash(norm).to_bytes(8, sys.byteorder) if norm else b""
        self[tok] = h
        return h


_HASHED = _Hashed()
KEEP_HASHED = 2_000_000  # tokens learnt by _HASHED before it starts over (a long-lived worker's memory)


def hashed_counts(text: str) -> dict[bytes, int]:
    """tokenize(text) counted (what the index stores per chunk), each term as its term_hash
    in 8 array("Q") bytes, in order of first occurrence; counted in C: a full build counts
    about 20 million tokens."""
    raw = _raw(text, loose=True)
    out: dict = {}
    _count_elements(out, map(_HASHED.get, raw))  # (dict.get: a third cheaper per token than [] on the subclass)
    if None in out:  # tokens never seen before: counted again, learning their forms on the way
        if len(_HASHED) > KEEP_HASHED:
            _HASHED.clear()
        out = {}
        _count_elements(out, map(_HASHED.__getitem__, raw))
    out.pop(b"", None)  # stopwords, one-letter words
    return out


def _raw(text: str, loose: bool = False) -> list[str]:
    """The tokens before stopwords and stemming. `loose`: ASCII words are split off by one
    translation (twice as quick as \\w\\w+'s scan) and one-letter words left in, for the
    caller to drop."""
    plain, runs = text, None
    if not text.isascii():
        parts = _WIDE_SPLIT.split(text)  # (one scan: pieces between the CJK runs, and the runs)
        if len(parts) > 1:
            plain, runs = " ".join(parts[0::2]), parts[1::2]  # = _WIDE.sub(" ", text)
    low = None
    if loose and plain.isascii():
        out = plain.translate(_FOLD).split()
    else:
        low = plain.lower()
        out = _WORD.findall(low)
    # cheap one-pass hints first: most prose has no identifiers at all
    compound, camel = _hints(text)
    if compound:
        low = low or plain.lower()
        out += _compounds(low)
    if camel:
        for tok in _CAMEL_TOKEN.findall(plain):
            out += [p.lower() for p in _CAMEL_PART.findall(tok) if len(p) > 1]
    if "_" in plain:
        for tok in _snake_words(low or plain.lower()):
            out += [p for p in tok.split("_") if len(p) > 1]
    if runs:
        out += _HAN_KEPT.findall(" ".join(runs))
        for run in runs:  # every adjacent pair, run by run (as _PAIRS finds them in the runs joined)
            out += map(add, run, run[1:])
        out += [r for r in runs if len(r) == 1 and not _HAN_CHAR.match(r)]  # lone kana/hangul
    return out


# ASCII folded for the loose split: letters lowercased, digits and "_" kept (\w), the rest a space
_FOLD = str.maketrans({i: chr(i).lower() if chr(i).isalnum() or i == 95 else " " for i in range(128)})


# The hints' classes of ASCII: a (a-z), A (A-Z), w (digits, "_", and "?", which stands for
# every non-ASCII character after encode(errors="replace")), p (compound separators), " "
_CLASSES = bytes(
    97
    if 97 <= i <= 122
    else 65
    if 65 <= i <= 90
    else 119
    if 48 <= i <= 57 or i in (95, 63)
    else 112
    if chr(i) in "-.:/@+#"
    else 32
    for i in range(256)
)
_WORDISH = bytes.maketrans(b"aA", b"ww")


def _hints(text: str) -> tuple[bool, bool]:
    """(may hold a compound, holds camelCase): one translation of the text, three times
    cheaper than the two regex scans it stands for (every chunk asks). The camelCase
    answer is _CAMEL_HINT's exactly (its classes are ASCII); the compound one may say yes
    for a "?" or a non-ASCII neighbour that \\w would not match, which only costs the exact scan."""
    cls = text.encode("ascii", "replace").translate(_CLASSES)
    return b"wpw" in cls.translate(_WORDISH), b"aA" in cls


# ASCII as w (\w), p (compound separators) or " " (anything else), for _compounds
_EXACT_CLASSES = bytes(
    119 if i < 128 and (chr(i).isalnum() or i == 95) else 112 if chr(i) in "-.:/@+#" else 32 for i in range(256)
)


def _compounds(low: str) -> list[str]:
    """_COMPOUND.findall(low): each match starts at the word before a separator that joins
    two words, so it is matched from there, the joints found in one translation of an ASCII
    text (the regex tries every word of the text: 2.5 times as slow on the 2,000-note bench vault)."""
    if not low.isascii():
        return _COMPOUND.findall(low)
    cls = low.encode("ascii").translate(_EXACT_CLASSES)
    out: list[str] = []
    i = cls.find(b"wpw")
    while i != -1:
        start = max(cls.rfind(b" ", 0, i), cls.rfind(b"p", 0, i)) + 1  # (after the previous match's end)
        found = _COMPOUND.match(low, start)
        out.append(found.group())
        i = cls.find(b"wpw", found.end())
    return out


def _snake_words(low: str) -> list[str]:
    """_SNAKE_TOKEN.findall(low): the words holding a letter or digit, "_", a letter or digit.
    Found from each "_" outwards, twenty times faster than the regex, which backtracks
    through every word of the text."""
    out: list[str] = []
    end, n = -1, len(low)
    i = low.find("_")
    while i != -1:
        if i >= end and 0 < i < n - 1 and low[i - 1].isalnum() and low[i + 1].isalnum():
            s = i - 1
            while s > 0 and (low[s - 1].isalnum() or low[s - 1] == "_"):  # back to the word's start
                s -= 1
            word = _WORD_RUN.match(low, s)
            end = word.end()
            out.append(word.group())
        i = low.find("_", i + 1)
    return out


def query_terms(text: str) -> list[str]:
    """Query tokens, de-duplicated, first occurrence order kept."""
    return list(dict.fromkeys(tokenize(text)))


# particles that join words (Chinese 的 了, Japanese の は を に が で と へ も): a pair holding one
# spans two words, `の予` of `猫の予防接種` and `出張の予定`
PARTICLES = frozenset("的了のはをにがでとへも")


def part_terms(text: str) -> frozenset[str]:
    """The terms of a query that are pieces of its CJK words: each Han character of a longer
    CJK run, and each pair holding a particle. They score like its other terms, but a chunk
    holding them and nothing else of the query is no match: one character of `量子计算机` is a
    piece of a word (`量` of `流量`, traffic), as a syllable of an English word is; the run's
    other pairs are its words. A character standing alone is a word, and so are the pieces of
    a query that has nothing else."""
    if text.isascii():
        return frozenset()
    runs = _WIDE_SPLIT.split(text)[1::2]
    pieces = {c for r in runs if len(r) > 1 for c in _HAN_KEPT.findall(r)}
    pieces.update(p for r in runs for p in map(add, r, r[1:]) if not PARTICLES.isdisjoint(p))
    pieces.difference_update(r for r in runs if len(r) == 1)
    return frozenset() if pieces.issuperset(query_terms(text)) else frozenset(pieces)


def term_hash(term: str) -> int:
    """Stable 64-bit id of a term; the index stores ids, not strings."""
    return int.from_bytes(blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")
