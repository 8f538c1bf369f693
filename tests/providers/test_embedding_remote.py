"""Every HTTP embedding backend against a real local server speaking its protocol."""

from __future__ import annotations

import time

import numpy as np
import pytest
from fake_provider import KEY, PROTOCOLS, Reply, fake_vector

from memcli.errors import ProviderError
from memcli.providers.embedding.registry import get_embedder
from memcli.providers.http import ProviderTimeout

BACKENDS = sorted(PROTOCOLS)


def make(provider, backend, **over):
    provider.protocol = PROTOCOLS[backend]
    emb = get_embedder(PROTOCOLS[backend].cfg(provider.url, **over))
    emb.backoff = 0.001  # keep retry tests fast; Retry-After is still honoured
    return emb


def expected(texts, dims=8):
    rows = np.array([fake_vector(t, dims) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def assert_no_key(exc: BaseException) -> None:
    assert KEY not in str(exc)
    assert KEY not in exc.line()
    assert KEY not in repr(exc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_request_shape_path_and_auth(provider, backend):
    with make(provider, backend) as emb:
        vecs = emb.embed_batch(["alpha", "beta"])
    assert vecs.dtype == np.float32 and vecs.shape == (2, 8)
    np.testing.assert_allclose(vecs, expected(["alpha", "beta"]), rtol=1e-6)
    (seen,) = provider.seen
    assert seen.path == PROTOCOLS[backend].path
    assert seen.headers["content-type"] == "application/json"
    header, value = PROTOCOLS[backend].auth
    assert seen.headers[header] == value
    assert ("x-goog-api-key" if header == "authorization" else "authorization") not in seen.headers
    body = seen.body
    if backend == "openai":
        assert body == {"model": "test-model", "input": ["alpha", "beta"], "encoding_format": "float"}
    elif backend == "dashscope":
        assert body == {"model": "test-model", "input": {"texts": ["alpha", "beta"]}, "parameters": {"dimension": 8}}
    elif backend == "gemini":
        assert body == {
            "requests": [
                {"model": "models/test-model", "content": {"parts": [{"text": "alpha"}]}},
                {"model": "models/test-model", "content": {"parts": [{"text": "beta"}]}},
            ]
        }
    elif backend == "ollama":
        assert body == {"model": "test-model", "input": ["alpha", "beta"]}
    elif backend == "voyage":
        assert body == {"model": "test-model", "input": ["alpha", "beta"], "input_type": "document"}


def test_ollama_needs_no_key(provider):
    with make(provider, "ollama", api_key="") as emb:
        emb.embed_batch(["a"])
    assert "authorization" not in provider.seen[0].headers


@pytest.mark.parametrize(
    "backend,key,value", [("openai", "dimensions", 8), ("voyage", "output_dimension", 8), ("ollama", "dimensions", 8)]
)
def test_use_dimensions_sends_the_size(provider, backend, key, value):
    with make(provider, backend, use_dimensions=True) as emb:
        emb.embed_batch(["x"])
    assert provider.seen[0].body[key] == value


def test_gemini_use_dimensions_and_models_prefix(provider):
    with make(provider, "gemini", use_dimensions=True, model_name="models/test-model") as emb:
        emb.embed_batch(["x"])
    seen = provider.seen[0]
    assert seen.path == "/v1/models/test-model:batchEmbedContents"
    assert seen.body["requests"][0] == {
        "model": "models/test-model",
        "content": {"parts": [{"text": "x"}]},
        "outputDimensionality": 8,
    }


def test_dashscope_compatible_mode_speaks_openai(provider):
    provider.protocol = PROTOCOLS["openai"]
    cfg = PROTOCOLS["dashscope"].cfg(provider.url, base_url=provider.url + "/compatible-mode/v1")
    with get_embedder(cfg) as emb:
        assert emb.embed_batch(["x"]).shape == (1, 8)
    assert provider.seen[0].path == "/compatible-mode/v1/embeddings"
    assert provider.seen[0].body["encoding_format"] == "float"


@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_by_max_batch_size(provider, backend):
    texts = [f"text {i}" for i in range(7)]
    with make(provider, backend, max_batch_size=3) as emb:
        vecs = emb.embed_batch(texts)
    assert [len(PROTOCOLS[backend].texts(s.body)) for s in provider.seen] == [3, 3, 1]
    np.testing.assert_allclose(vecs, expected(texts), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_429_then_success_honours_retry_after(provider, backend):
    provider.script(Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.3"}))
    with make(provider, backend) as emb:
        start = time.monotonic()
        vecs = emb.embed_batch(["a"])
        waited = time.monotonic() - start
    assert vecs.shape == (1, 8) and len(provider.seen) == 2
    assert waited >= 0.3


@pytest.mark.parametrize("backend", BACKENDS)
def test_500_then_success(provider, backend):
    provider.script(Reply(500, "oops"), Reply(503, "busy"))
    with make(provider, backend) as emb:
        assert emb.embed_batch(["a"]).shape == (1, 8)
    assert len(provider.seen) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_persistent_500_is_a_provider_error(provider, backend):
    provider.script(*[Reply(500, {"error": {"message": f"broken, key {KEY}"}})] * 10)
    with make(provider, backend, max_retries=2) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a"])
    assert len(provider.seen) == 3
    msg = str(info.value)
    assert "HTTP 500" in msg and PROTOCOLS[backend].path in msg and "after 3 attempts" in msg
    assert "\n" not in msg
    assert_no_key(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_client_errors_are_not_retried_and_hide_the_key(provider, backend):
    # the server echoes the key back, as some providers do in 401 bodies
    provider.script(Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    with make(provider, backend) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a"])
    assert len(provider.seen) == 1
    assert "HTTP 401" in str(info.value) and "Incorrect API key" in str(info.value)
    assert info.value.hint == "check the api_key"
    assert_no_key(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeout_is_provider_timeout(provider, backend):
    provider.script(Reply(delay=1.0))
    with make(provider, backend, timeout=0.2, max_retries=3) as emb, pytest.raises(ProviderTimeout) as info:
        emb.embed_batch(["a"])
    assert info.value.seconds == pytest.approx(0.2)
    assert "timed out after 0.2s" in str(info.value)
    assert len(provider.seen) == 1  # a timeout is not retried
    assert_no_key(info.value)


def test_get_embedder_timeout_overrides_config(provider):
    provider.protocol = PROTOCOLS["openai"]
    provider.script(Reply(delay=1.0))
    emb = get_embedder(PROTOCOLS["openai"].cfg(provider.url, timeout=30.0), timeout=0.2)
    start = time.monotonic()
    with emb, pytest.raises(ProviderTimeout) as info:
        emb.embed_batch(["ping"])
    assert info.value.seconds == pytest.approx(0.2) and time.monotonic() - start < 0.9


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_dimension_names_both_numbers(provider, backend):
    provider.script(Reply(dims=6))
    with make(provider, backend) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a", "b"])
    assert str(info.value) == "embedding dimension mismatch: 6 != 8"
    assert_no_key(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_malformed_json(provider, backend):
    provider.script(Reply(200, "<html>not json</html>"))
    with make(provider, backend) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a"])
    assert "returned malformed JSON" in str(info.value)
    assert PROTOCOLS[backend].path in str(info.value)
    assert_no_key(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unexpected_shape(provider, backend):
    provider.script(Reply(200, {"something": "else"}))
    with make(provider, backend) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a"])
    assert "unexpected shape" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_count_names_both_numbers(provider, backend):
    provider.script(Reply(drop=1))
    with make(provider, backend) as emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a", "b", "c"])
    assert str(info.value) == "embedding count mismatch: 2 != 3"


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncates_to_max_input_length_with_cjk_wider(provider, backend):
    with make(provider, backend, max_input_length=100) as emb:
        emb.embed_batch(["a" * 500, "記憶" * 100])
    sent = PROTOCOLS[backend].texts(provider.seen[0].body)
    assert sent == ["a" * 90, "記憶" * 15]  # budget 90 units; a CJK character costs 3


def test_extra_headers_are_sent(provider):
    with make(provider, "openai", headers={"X-Tenant": "t1"}) as emb:
        emb.embed_batch(["a"])
    assert provider.seen[0].headers["x-tenant"] == "t1"


def test_empty_input_sends_nothing(provider):
    with make(provider, "openai") as emb:
        vecs = emb.embed_batch([])
    assert vecs.shape == (0, 8) and vecs.dtype == np.float32 and provider.seen == []


def test_connection_refused_is_retried_then_a_provider_error():
    cfg = PROTOCOLS["openai"].cfg("http://127.0.0.1:9", max_retries=1)  # discard port: nothing listens
    emb = get_embedder(cfg)
    emb.backoff = 0.001
    with emb, pytest.raises(ProviderError) as info:
        emb.embed_batch(["a"])
    assert "cannot connect" in str(info.value) and "127.0.0.1:9/v1/embeddings" in str(info.value)
    assert "after 2 attempts" in str(info.value)
    assert_no_key(info.value)


def test_repr_and_identity_hide_the_key(provider):
    emb = make(provider, "openai")
    assert KEY not in repr(emb) and KEY not in emb.identity
    assert emb.identity == f"openai:test-model:8:{provider.url}/v1"
