"""DashScope (Alibaba Model Studio) native text-embedding API."""

from __future__ import annotations

from memcli.providers.embedding.base import ordered
from memcli.providers.embedding.openai import OpenAIEmbedder
from memcli.providers.embedding.remote import RemoteEmbedder


class DashScopeEmbedder(RemoteEmbedder):
    """`POST {base}/api/v1/services/embeddings/text-embedding/text-embedding`."""

    backend = "dashscope"
    default_base_url = "https://dashscope.aliyuncs.com"
    path = "/api/v1/services/embeddings/text-embedding/text-embedding"

    def __init__(self, cfg: dict, *, timeout: float | None = None):
        super().__init__(cfg, timeout=timeout)
        # A QwenPaw config may point backend dashscope at the OpenAI-compatible mode
        # (…/compatible-mode/v1); speak that protocol there instead of failing with 404.
        self.compatible = "/compatible-mode/" in f"{self.base_url}/"
        if self.compatible:
            self.path = OpenAIEmbedder.path

    def _payload(self, texts: list[str]) -> dict:
        if self.compatible:
            return OpenAIEmbedder._payload(self, texts)  # type: ignore[arg-type]  # the same fields
        return {"model": self.model, "input": {"texts": texts}, "parameters": {"dimension": self.dims}}

    def _vectors(self, data: dict) -> list:
        if self.compatible:
            return OpenAIEmbedder._vectors(self, data)  # type: ignore[arg-type]  # the same fields
        return [item["embedding"] for item in ordered(data["output"]["embeddings"], "text_index")]
