"""Voyage AI embeddings."""

from __future__ import annotations

from memcli.providers.embedding.base import ordered
from memcli.providers.embedding.remote import RemoteEmbedder


class VoyageEmbedder(RemoteEmbedder):
    """`POST {base_url}/embeddings` with input_type "document"; `output_dimension` is sent
    only with use_dimensions."""

    backend = "voyage"
    default_base_url = "https://api.voyageai.com/v1"
    path = "/embeddings"

    def _payload(self, texts: list[str]) -> dict:
        body: dict = {"model": self.model, "input": texts, "input_type": "document"}
        if self.use_dimensions:
            body["output_dimension"] = self.dims
        return body

    def _vectors(self, data: dict) -> list:
        return [item["embedding"] for item in ordered(data["data"], "index")]
