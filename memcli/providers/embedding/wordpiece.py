"""BERT's WordPiece tokenization of a short ASCII text in pure Python.

A cold hybrid search embeds one query. Loading the `tokenizers` library and its 700 KB
tokenizer.json for that took 0.1 s of the search (its import, then the Rust parse); the
query's few words need none of it. This is what `tokenizers` does with the
all-MiniLM-L6-v2 tokenizer.json (BertNormalizer with clean_text, Chinese characters padded,
accents stripped, lowercase; BertPreTokenizer; WordPiece, "##", words over 100 characters
unknown; added special tokens matched in the raw text), written for ASCII text only: no
Unicode table of Python's can then differ from the library's. Bulk embedding and any
other text still go through `tokenizers`; tests compare the two on many texts
(tests/providers/test_wordpiece.py).
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

MAX_WORD_CHARS = 100
# BertNormalizer's clean_text drops control characters (for ASCII: 0-31 and 127 but tab, line
# feed and carriage return, which become spaces as whitespace does); BertPreTokenizer splits
# on whitespace and isolates each punctuation character
_CLEAN = str.maketrans(
    {**{i: None for i in [*range(32), 127] if chr(i) not in "\t\n\r"}, **{ord(c): " " for c in "\t\n\r"}}
)
_SPLIT = re.compile("[" + re.escape(string.punctuation) + "]|[^ " + re.escape(string.punctuation) + "]+")


class NotSupported(ValueError):
    """The tokenizer.json is not the BERT WordPiece configuration this module reproduces."""


class WordPiece:
    def __init__(self, path: Path):
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
        norm, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
        if (
            norm.get("type"),
            norm.get("clean_text"),
            norm.get("handle_chinese_chars"),
            norm.get("strip_accents"),
            norm.get("lowercase"),
            pre.get("type"),
            model.get("type"),
            model.get("continuing_subword_prefix"),
            model.get("max_input_chars_per_word"),
        ) != ("BertNormalizer", True, True, None, True, "BertPreTokenizer", "WordPiece", "##", MAX_WORD_CHARS):
            raise NotSupported(f"{Path(path).name} is not a BERT WordPiece tokenizer")
        self.vocab: dict[str, int] = model["vocab"]
        self.unk = self.vocab[model["unk_token"]]
        special = {
            t["content"]: t["id"]
            for t in spec.get("added_tokens", ())
            if t.get("special")
            and not t.get("normalized")
            and not t.get("single_word")
            and not t.get("lstrip")
            and not t.get("rstrip")
        }
        self.special = special
        self._special = (
            re.compile("|".join(map(re.escape, sorted(special, key=len, reverse=True)))) if special else None
        )

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def encode(self, text: str) -> list[int]:
        """The ids of an ASCII text without [CLS]/[SEP] (encode(..., add_special_tokens=False))."""
        if not text.isascii():
            raise ValueError("WordPiece here tokenizes ASCII text only")
        ids: list[int] = []
        pos = 0
        for m in self._special.finditer(text) if self._special else ():
            ids += self._plain(text[pos : m.start()])
            ids.append(self.special[m.group()])
            pos = m.end()
        return ids + self._plain(text[pos:])

    def _plain(self, text: str) -> list[int]:
        out: list[int] = []
        for word in _SPLIT.findall(text.translate(_CLEAN).lower()):
            out += self._pieces(word)
        return out

    def _pieces(self, word: str) -> list[int]:
        """Greedy longest match first; a word any part of which has no piece is unknown."""
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        vocab, ids, start = self.vocab, [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    ids.append(vocab[piece])
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return ids
