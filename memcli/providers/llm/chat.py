"""An OpenAI-compatible chat-completions client: `POST {base_url}/chat/completions`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcli.errors import ProviderError
from memcli.providers import http

if TYPE_CHECKING:
    import httpx


@dataclass
class Completion:
    content: str
    finish_reason: str | None


class ChatClient:
    path = "/chat/completions"
    backoff = 0.5  # seconds before the first retry of a 429/5xx; doubles each time

    def __init__(self, backend: str, cfg: dict, base_url: str):
        self.backend = backend
        self.model = str(cfg.get("model_name") or "")
        self.base_url = base_url.rstrip("/")
        self.api_key = str(cfg.get("api_key") or "") or None
        self.headers = dict(cfg.get("headers") or {})
        self.timeout = float(cfg.get("timeout") or 60.0)
        retries = cfg.get("max_retries")
        self.max_retries = 2 if retries is None else max(0, int(retries))
        self._client: httpx.Client | None = None

    @property
    def identity(self) -> str:
        return f"{self.backend}:{self.model}"

    def __repr__(self) -> str:  # never show the key
        return f"<ChatClient {self.identity} {self.base_url}>"

    def chat(self, messages: list[dict]) -> tuple[str, str | None]:
        """(content, finish_reason): the chat(messages) callable the extraction layer takes."""
        reply = self.complete(messages)
        return reply.content, reply.finish_reason

    def complete(self, messages: list[dict], *, json_mode: bool = True) -> Completion:
        if self._client is None:
            self._client = http.make_client(self.base_url, api_key=self.api_key, headers=self.headers,
                                            timeout=self.timeout)
        payload = {"model": self.model, "messages": messages, "temperature": 0}
        if json_mode:
            # every backend named here accepts it; the prompt still asks for JSON in words
            payload["response_format"] = {"type": "json_object"}
        data = http.post_json(self._client, self.path, payload, max_retries=self.max_retries, backoff=self.backoff)
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content")
            if isinstance(content, list):  # some servers send content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return Completion(content if isinstance(content, str) else "", choice.get("finish_reason"))
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError(f"{self.backend} reply from {self.base_url}{self.path} has an unexpected shape "
                                f"({type(exc).__name__}: {exc})",
                                "check llm_model_config.base_url points at an OpenAI-compatible API") from None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
