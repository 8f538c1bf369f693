"""Ollama embeddings (`/api/embed`, Ollama 0.3+)."""

from __future__ import annotations

from memcli.providers.embedding.remote import RemoteEmbedder


class OllamaEmbedder(RemoteEmbedder):
    """`POST {host}/api/embed`; no key needed (a key, when set, is sent as a bearer
    token for an authenticating proxy)."""

    backend = "ollama"
    default_base_url = "http://127.0.0.1:11434"
    path = "/api/embed"

    def _payload(self, texts: list[str]) -> dict:
        body: dict = {"model": self.model, "input": texts}
        if self.use_dimensions:
            body["dimensions"] = self.dims
        return body

    def _vectors(self, data: dict) -> list:
        return data["embeddings"]
