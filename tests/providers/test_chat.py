"""The chat client against a fake OpenAI-compatible server: response_format levels, reply caps."""

from __future__ import annotations

import pytest
from fake_provider import Reply

from memcli.errors import ConfigError, ProviderError
from memcli.providers.llm.registry import get_chat

SCHEMA = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}


def ok(content='{"a": "x"}') -> Reply:
    return Reply(200, {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})


def client(provider, backend="openai", **cfg):
    return get_chat(
        {
            "backend": backend,
            "base_url": provider.url + "/v1",
            "model_name": "m",
            "max_retries": 0,
            "timeout": 5.0,
            **cfg,
        }
    )


def formats(provider) -> list:
    return [(s.body.get("response_format") or {}).get("type") for s in provider.seen]


def test_a_schema_is_asked_for_as_json_schema(provider):
    provider.script(ok())
    assert client(provider).chat([{"role": "user", "content": "hi"}], SCHEMA) == ('{"a": "x"}', "stop")
    [seen] = provider.seen
    assert seen.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
    }
    assert seen.body["temperature"] == 0 and "max_tokens" not in seen.body and "cache_prompt" not in seen.body


def test_a_server_refusing_json_schema_gets_json_object_and_it_is_remembered(provider):
    provider.script(Reply(400, {"error": {"message": "response_format type json_schema is not supported"}}), ok(), ok())
    chat = client(provider)
    assert chat([{"role": "user", "content": "hi"}], SCHEMA)[0] == '{"a": "x"}'
    assert chat([{"role": "user", "content": "again"}], SCHEMA)[0] == '{"a": "x"}'
    assert formats(provider) == ["json_schema", "json_object", "json_object"]


def test_a_server_refusing_every_response_format_gets_plain_requests(provider):
    refused = Reply(422, {"error": {"message": "unknown field"}})
    provider.script(refused, refused, ok(), ok())
    chat = client(provider)
    chat([{"role": "user", "content": "hi"}], SCHEMA)
    chat([{"role": "user", "content": "hi"}])  # no schema: json_object at most, and plain is remembered
    assert formats(provider) == ["json_schema", "json_object", None, None]


def test_a_400_for_another_reason_is_raised_and_not_remembered(provider):
    too_long = Reply(400, {"error": {"message": "the request exceeds the available context size"}})
    provider.script(too_long, too_long, too_long, ok())
    chat = client(provider)
    with pytest.raises(ProviderError, match="HTTP 400 Bad Request: the request exceeds the available context"):
        chat([{"role": "user", "content": "hi"}], SCHEMA)
    chat([{"role": "user", "content": "short"}], SCHEMA)
    assert formats(provider) == ["json_schema", "json_object", None, "json_schema"]


def test_local_backends_cap_the_reply_and_llamacpp_can_switch_off_its_prompt_cache(provider):
    provider.script(ok(), ok(), ok())
    client(provider, "llamacpp", context_tokens=4096, cache_prompt=False).chat([{"role": "user", "content": "x"}])
    client(provider, "ollama").chat([{"role": "user", "content": "x"}])
    client(provider, "openai", max_output_tokens=300).chat([{"role": "user", "content": "x"}])
    llamacpp, ollama, openai = (s.body for s in provider.seen)
    assert llamacpp["max_tokens"] == 1024 and llamacpp["cache_prompt"] is False
    assert ollama["max_tokens"] == 2048 and "cache_prompt" not in ollama
    assert openai["max_tokens"] == 300


def test_llamacpp_has_a_default_url_and_context_is_checked(ws, open_ws):
    chat = get_chat({"backend": "llamacpp", "model_name": "qwen"})
    assert chat.base_url == "http://127.0.0.1:8080/v1" and chat.context_tokens == 8192
    (ws / "mem.yaml").write_text("llm_model_config:\n  context_tokens: 1000\n")
    with pytest.raises(ConfigError, match="context_tokens must be at least 2048"):
        open_ws(ws)
