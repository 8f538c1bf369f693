"""Which chat backend `llm_model_config` asks for; None means the offline extractor.

No backend and no model, or backend `none`, is offline (the default). A model
without a backend means an OpenAI-compatible server. A backend without a model
is a configuration error rather than a silent fallback: the user asked for a
model and would otherwise get rule-based notes without noticing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcli.config.settings import LLM, as_mapping
from memcli.errors import ConfigError
from memcli.providers.llm.chat import ChatClient

# name -> default base URL ("" = base_url is required)
BACKENDS = {
    "openai": "https://api.openai.com/v1",
    "dashscope": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",  # llama.cpp's llama-server (or xllamacpp), docs/local-models.md
    "vllm": "",
}
OFFLINE = ("none", "rules")


def get_chat(cfg: Mapping[str, Any] | LLM) -> ChatClient | None:
    """The chat client `cfg` (the llm settings section, or a mapping of its keys) asks for."""
    cfg = as_mapping(cfg)
    name = str(cfg.get("backend") or "").strip().lower()
    model = str(cfg.get("model_name") or "").strip()
    if name in OFFLINE or (not name and not model):
        return None
    name = name or "openai"
    if name not in BACKENDS:
        raise ConfigError(
            f"unknown LLM backend '{name}'", f"use one of: {', '.join([*BACKENDS, 'none'])} (llm_model_config.backend)"
        )
    if not model:
        raise ConfigError(
            f"LLM backend '{name}' needs llm_model_config.model_name",
            "set it (or MEM_LLM_MODEL), or set backend: none for the offline extractor",
        )
    base = str(cfg.get("base_url") or "").strip() or BACKENDS[name]
    if not base:
        raise ConfigError(f"LLM backend '{name}' needs llm_model_config.base_url", "set it (or MEM_LLM_BASE_URL)")
    return ChatClient(name, cfg, base)
