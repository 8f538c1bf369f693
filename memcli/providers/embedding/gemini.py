"""Google Gemini API embeddings (batchEmbedContents)."""

from __future__ import annotations

from memcli.providers.embedding.remote import RemoteEmbedder


class GeminiEmbedder(RemoteEmbedder):
    """`POST {base}/v1/models/<model>:batchEmbedContents` with an `x-goog-api-key` header;
    `outputDimensionality` is sent only with use_dimensions."""

    backend = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    auth = "x-goog-api-key"

    def __init__(self, cfg: dict, *, timeout: float | None = None):
        super().__init__(cfg, timeout=timeout)
        self.model = self.model.removeprefix("models/")
        # base_url may be the host or already an API version root (…/v1, …/v1beta).
        version = "" if self.base_url.rsplit("/", 1)[-1].startswith("v1") else "/v1"
        self.path = f"{version}/models/{self.model}:batchEmbedContents"

    def _payload(self, texts: list[str]) -> dict:
        requests = []
        for text in texts:
            req: dict = {"model": f"models/{self.model}", "content": {"parts": [{"text": text}]}}
            if self.use_dimensions:
                req["outputDimensionality"] = self.dims
            requests.append(req)
        return {"requests": requests}

    def _vectors(self, data: dict) -> list:
        return [item["values"] for item in data["embeddings"]]
