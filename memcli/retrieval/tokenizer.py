"""Search tokenizer: words and identifiers for alphabetic scripts, n-grams for CJK.

- Words of two or more letters/digits (not CJK), lowercased, as `\\w\\w+` does.
- Identifiers also count whole: `INV-20931-QX` adds `inv-20931-qx`, `7.4.119-beta`
  adds itself; camelCase and snake_case add their parts (`handleWebSocketReconnect`
  adds `handle`, `web`, `socket`, `reconnect`). So an exact identifier ranks first
  and its parts still match.
- Han: every character (minus a few particles) and every adjacent pair, so a one-
  character query matches and word order still counts; kana and hangul runs give
  pairs (a hangul word with a particle, `메모리를`, still matches `메모리`).

Each rule is one regex pass in C: indexing 16 MB of notes must take well under a
second, so there is no per-token Python logic except for the rare identifiers.
"""

from __future__ import annotations

import hashlib
import re

NAME = "mixcjk"
_CJK_CLASS = r"\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WIDE = re.compile(rf"[{_CJK_CLASS}]+")
_WORD = re.compile(r"\w\w+")
# \b anchors and possessive quantifiers keep these linear on long texts
_COMPOUND = re.compile(r"\b\w++(?:[-.:/@+#]\w++)+")
_CAMEL_TOKEN = re.compile(r"\b\w*[a-z][A-Z]\w*")
_SNAKE_TOKEN = re.compile(r"\b\w*[^\W_]_[^\W_]\w*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAN = r"\u3400-\u9fff\uf900-\ufaff"
_KANA = r"\u3040-\u30ff\uff66-\uff9f"
_HANGUL = r"\uac00-\ud7af"
_HAN_CHAR = re.compile(rf"[{_HAN}]")
_RUNS = re.compile(rf"[{_HAN}]{{2,}}|[{_KANA}]{{2,}}|[{_HANGUL}]{{2,}}")
_PAIRS = re.compile(r"(?=(\S\S))")
_LONE = re.compile(rf"(?<![{_KANA}])[{_KANA}](?![{_KANA}])|(?<![{_HANGUL}])[{_HANGUL}](?![{_HANGUL}])")
# Han characters too common to mean anything on their own (still used in pairs).
HAN_STOP = frozenset("的了是在和有我你他她它们这那也就都而及与或之于以其被把给")

SPEC = ("mixcjk;v2;word2+;compound[-.:/@+#];camel;snake;"
        f"han=uni+bi-stop{''.join(sorted(HAN_STOP))};kana=bi;hangul=bi")
FINGERPRINT = hashlib.sha1(SPEC.encode()).hexdigest()[:10]


def tokenize(text: str) -> list[str]:
    wide = not text.isascii() and _WIDE.search(text) is not None
    plain = _WIDE.sub(" ", text) if wide else text
    low = plain.lower()
    out = _WORD.findall(low)
    if "-" in plain or "." in plain or ":" in plain or "/" in plain or "@" in plain or "+" in plain or "#" in plain:
        out += _COMPOUND.findall(low)
    if not plain.islower():
        for tok in _CAMEL_TOKEN.findall(plain):
            out += [p.lower() for p in _CAMEL_PART.findall(tok) if len(p) > 1]
    if "_" in plain:
        for tok in _SNAKE_TOKEN.findall(low):
            out += [p for p in tok.split("_") if len(p) > 1]
    if wide:
        out += [c for c in _HAN_CHAR.findall(text) if c not in HAN_STOP]
        runs = _RUNS.findall(text)
        if runs:
            out += _PAIRS.findall(" ".join(runs))
        out += _LONE.findall(text)
    return out


def query_terms(text: str) -> list[str]:
    """Query tokens, de-duplicated, first occurrence order kept."""
    return list(dict.fromkeys(tokenize(text)))


def term_hash(term: str) -> int:
    """Stable 64-bit id of a term; the index stores ids, not strings."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")
