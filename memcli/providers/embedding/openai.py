"""OpenAI-compatible embeddings (OpenAI, vLLM, DashScope compatible mode, LM Studio…)."""

from __future__ import annotations

from typing import Any

from memcli.providers.embedding.base import ordered
from memcli.providers.embedding.remote import RemoteEmbedder


class OpenAIEmbedder(RemoteEmbedder):
    """`POST {base_url}/embeddings`; `dimensions` is sent only with use_dimensions
    (some vLLM models reject it)."""

    backend = "openai"
    default_base_url = "https://api.openai.com/v1"
    path = "/embeddings"

    def _payload(self, texts: list[str]) -> dict:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.use_dimensions:
            body["dimensions"] = self.dims
        return body

    def _vectors(self, data: dict) -> list:
        return [item["embedding"] for item in ordered(data["data"], "index")]
