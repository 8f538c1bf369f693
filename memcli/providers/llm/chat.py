"""An OpenAI-compatible chat-completions client: `POST {base_url}/chat/completions`.

Structured replies: a request that carries a JSON schema asks for it with
`response_format: {"type": "json_schema"}` (llama.cpp, Ollama, vLLM and OpenAI turn
it into constrained decoding, so a small model cannot break the JSON); a server that
answers 400/422, or names response_format in its error, is asked again with
`{"type": "json_object"}`, then with no response_format at all, and the client
remembers the level that worked for the rest of its life.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcli.errors import ProviderError
from memcli.providers import http

if TYPE_CHECKING:
    import httpx

DEFAULT_CONTEXT = 8192
LOCAL = ("llamacpp", "ollama", "vllm")  # servers that get max_tokens: a small model may never stop
FORMATS = ("json_schema", "json_object", "plain")
_FORMAT_ERROR = re.compile(r"HTTP 4(?:00|22)\b|response_format|json_schema", re.IGNORECASE)


@dataclass
class Completion:
    content: str
    finish_reason: str | None


def reply_tokens(context_tokens: int, max_output_tokens: int = 0) -> int:
    """Tokens a reply may use: the setting, else a quarter of the window (256-4096)."""
    return int(max_output_tokens) if max_output_tokens else max(256, min(4096, int(context_tokens) // 4))


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
        # the extraction layer reads these two to size its prompts (memcli.extraction.ask.budget)
        self.context_tokens = int(cfg.get("context_tokens") or DEFAULT_CONTEXT)
        self.reply_tokens = reply_tokens(self.context_tokens, int(cfg.get("max_output_tokens") or 0))
        self.send_max_tokens = backend in LOCAL or bool(cfg.get("max_output_tokens"))
        # llama.cpp reuses a cached prompt prefix, which can change a reply's tokens; off = repeatable
        self.extra_body = {"cache_prompt": False} if backend == "llamacpp" and cfg.get("cache_prompt") is False else {}
        self.format_level = 0  # index into FORMATS: lowered for good when a server refuses one
        self._client: httpx.Client | None = None

    @property
    def identity(self) -> str:
        return f"{self.backend}:{self.model}"

    def __repr__(self) -> str:  # never show the key
        return f"<ChatClient {self.identity} {self.base_url}>"

    def chat(
        self, messages: list[dict], schema: dict | None = None, max_tokens: int | None = None
    ) -> tuple[str, str | None]:
        """(content, finish_reason): the chat(messages, schema) callable the extraction layer takes;
        `max_tokens` lowers the reply cap for this request (a short receipt need not wait for a loop)."""
        reply = self.complete(messages, schema=schema, max_tokens=max_tokens)
        return reply.content, reply.finish_reason

    __call__ = chat

    def _payload(
        self, messages: list[dict], schema: dict | None, level: int, json_mode: bool, max_tokens: int | None = None
    ) -> dict:
        payload = {"model": self.model, "messages": messages, "temperature": 0}
        if self.send_max_tokens:
            payload["max_tokens"] = min(self.reply_tokens, max_tokens or self.reply_tokens)
        if json_mode and FORMATS[level] == "json_schema" and schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": False},
            }
        elif json_mode and FORMATS[level] != "plain":
            # the prompt still asks for JSON in words, so a server without it loses little
            payload["response_format"] = {"type": "json_object"}
        return {**payload, **self.extra_body}

    def complete(
        self, messages: list[dict], *, schema: dict | None = None, json_mode: bool = True, max_tokens: int | None = None
    ) -> Completion:
        if self._client is None:
            self._client = http.make_client(
                self.base_url, api_key=self.api_key, headers=self.headers, timeout=self.timeout
            )
        level = self.format_level if schema is not None else max(self.format_level, 1)
        first: ProviderError | None = None
        while True:
            payload = self._payload(messages, schema, level, json_mode, max_tokens)
            try:
                data = http.post_json(
                    self._client, self.path, payload, max_retries=self.max_retries, backoff=self.backoff
                )
                break
            except ProviderError as exc:
                # a server that does not take this response_format: one level down, remembered
                # only once a request succeeds (a 400 for a too-long prompt must not downgrade)
                if "response_format" not in payload or not _FORMAT_ERROR.search(str(exc)):
                    raise (first or exc) from None
                first = first or exc
                level += 1
        if first is not None:
            self.format_level = max(self.format_level, level)
        return self._parse(data)

    def _parse(self, data: dict) -> Completion:
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content")
            if isinstance(content, list):  # some servers send content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return Completion(content if isinstance(content, str) else "", choice.get("finish_reason"))
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError(
                f"{self.backend} reply from {self.base_url}{self.path} has an unexpected shape "
                f"({type(exc).__name__}: {exc})",
                "check llm_model_config.base_url points at an OpenAI-compatible API",
            ) from None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
