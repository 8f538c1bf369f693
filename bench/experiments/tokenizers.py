"""tok=: English stemming and stopwords in the index and query tokenizer (keyword tuning).

`tok=` is a `+` list of: stem (Snowball English, snowballstemmer from bench/out/pylib),
lightstem (memcli's light suffix stripper: plurals, -ed, -ing), stop (English stopwords
dropped at index and query time), stopq (from queries only); 'base' = memcli's own.
An index variant: its own metadata folder and tokenizer fingerprint.

Measured against memcli's tokenizer of the time (no stemming, no stopwords), LoCoMo 400/80 without
merging, session nDCG@10 / turn R@5: base 0.763 / 0.782, stem 0.786 / 0.810, lightstem
0.780 / 0.798, stop 0.785 / 0.796, stopq 0.784 / 0.794, stem+stop 0.810 / 0.827; with
the recommended merge rule stem+stop 0.812 / 0.832, lightstem+stop 0.807 / 0.824.
Shipped: lightstem+stop (no dependency), so today these apply on top of it.
"""

from __future__ import annotations

import hashlib
import sys

from bench.harness.indexes import index_tag
from bench.harness.paths import PYLIB


def _stemmer():
    if str(PYLIB) not in sys.path and PYLIB.exists():
        sys.path.append(str(PYLIB))
    try:
        import snowballstemmer
    except ImportError:
        raise SystemExit(
            "tok=stem needs snowballstemmer: pip install --target bench/out/pylib snowballstemmer"
        ) from None
    st = snowballstemmer.stemmer("english")
    memo: dict[str, str] = {}

    def stem(w: str) -> str:
        s = memo.get(w)
        if s is None:
            s = memo[w] = st.stemWord(w) if w.isascii() and w.isalpha() else w
        return s

    return stem


def tokenizer_variant(name: str):
    """(index tokenize, query_terms) replacing memcli.index.keyword.tokenizer's, or None for 'base'."""
    from memcli.index.keyword import tokenizer as tk
    from memcli.index.keyword.tokenizer import STOPWORDS

    base = tk.tokenize
    if name in ("base", ""):
        return None
    parts = set(name.split("+"))
    stem = _stemmer() if "stem" in parts else tk.light_stem if "lightstem" in parts else None
    stop = "stop" in parts

    def tokenize(text: str) -> list[str]:
        toks = base(text)
        if stop:
            toks = [t for t in toks if t not in STOPWORDS]
        if stem is not None:
            toks = [stem(t) for t in toks]
        return toks

    def query_terms(text: str) -> list[str]:
        toks = tokenize(text)
        if "stopq" in parts:
            toks = [t for t in toks if t not in STOPWORDS]
        return list(dict.fromkeys(toks))

    return tokenize, query_terms


def install(spec: dict, patch) -> None:
    from memcli.index.keyword import tokenizer as tk

    tv = tokenizer_variant(spec["tok"])
    if tv is None:
        return
    patch.set(tk, "tokenize", tv[0])
    patch.set(tk, "query_terms", tv[1])
    tag = index_tag({"tok": spec["tok"]})
    if tag != "base":
        patch.set(tk, "FINGERPRINT", hashlib.sha1(f"{tk.FINGERPRINT}+{tag}".encode()).hexdigest()[:10])
