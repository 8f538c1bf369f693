"""Common ground of the HTTP embedding backends: config, one lazy client, retries."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memcli.errors import ProviderError
from memcli.providers import http
from memcli.providers.embedding.base import BaseEmbedder

if TYPE_CHECKING:
    import httpx


class RemoteEmbedder(BaseEmbedder):
    """An embedding API reached over HTTP. Subclasses set the class attributes and
    implement `_payload` (request body) and `_vectors` (response -> vectors in order)."""

    default_base_url = ""
    path = ""  # request path, appended to the base URL
    auth: str | None = "bearer"
    backoff = 0.5  # seconds before the first retry; doubles each time

    def __init__(self, cfg: dict, *, timeout: float | None = None):
        base = (str(cfg.get("base_url") or "") or self.default_base_url).strip().rstrip("/")
        super().__init__(
            model=str(cfg.get("model_name") or ""),
            dims=int(cfg.get("dimensions") or 0),
            endpoint=base,
            max_input_length=int(cfg.get("max_input_length") or 0),
            max_batch_size=int(cfg.get("max_batch_size") or 1),
        )
        self.base_url = base
        self.api_key = str(cfg.get("api_key") or "") or None
        self.use_dimensions = bool(cfg.get("use_dimensions"))
        self.headers = dict(cfg.get("headers") or {})
        self.timeout = float(timeout if timeout is not None else cfg.get("timeout") or 30.0)
        retries = cfg.get("max_retries")
        self.max_retries = 3 if retries is None else max(0, int(retries))
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:  # never show the key
        return f"<{type(self).__name__} {self.identity}>"

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = http.make_client(
                self.base_url, api_key=self.api_key, auth=self.auth, headers=self.headers, timeout=self.timeout
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _embed(self, texts: list[str]) -> Sequence[Sequence[float]]:
        data = http.post_json(
            self.client, self.path, self._payload(texts), max_retries=self.max_retries, backoff=self.backoff
        )
        try:
            return self._vectors(data)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError(
                f"{self.backend} response from {self.base_url}{self.path} has an unexpected "
                f"shape ({type(exc).__name__}: {exc})",
                "check backend and base_url match the server's API",
            ) from None

    @abstractmethod
    def _payload(self, texts: list[str]) -> dict[str, Any]:
        """The provider's request body for one batch."""

    @abstractmethod
    def _vectors(self, data: dict) -> Sequence[Sequence[float]]:
        """The vectors in the provider's response, in input order."""
