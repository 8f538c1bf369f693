"""The one HTTP client factory and JSON POST helper every provider uses.

httpx is imported inside the functions only: `mem search` without a remote
provider must not pay for it. Every failure becomes a one-line ProviderError
naming the endpoint and the HTTP status; secrets never appear in it.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from typing import TYPE_CHECKING, Any

from memcli import __version__
from memcli.errors import ProviderError

if TYPE_CHECKING:
    import httpx

RETRY_AFTER_CAP = 30.0  # seconds; a longer Retry-After is cut to this
MAX_DETAIL = 200  # characters of the server's error text quoted in a message
_SECRET_HEADERS = ("authorization", "x-goog-api-key", "api-key", "x-api-key", "proxy-authorization")


class ProviderTimeout(ProviderError):
    """The provider did not answer within `seconds`."""

    def __init__(self, message: str, seconds: float, hint: str | None = None):
        super().__init__(message, hint)
        self.seconds = seconds


def make_client(
    base_url: str,
    *,
    api_key: str | None = None,
    auth: str | None = "bearer",
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> httpx.Client:
    """An httpx.Client for `base_url`; `auth` is "bearer", "x-goog-api-key" or None.

    Extra `headers` come last, so a provider that wants e.g. an `api-key` header
    can be served with auth=None and the header given here.
    """
    import httpx

    merged = {"User-Agent": f"memcli/{__version__}", "Accept": "application/json"}
    if api_key:
        if auth == "bearer":
            merged["Authorization"] = f"Bearer {api_key}"
        elif auth == "x-goog-api-key":
            merged["x-goog-api-key"] = api_key
        elif auth is not None:
            raise ValueError(f"unknown auth scheme {auth!r}")
    merged.update(headers or {})
    # Building the default SSL context costs ~0.1 s, a large share of a cold hybrid
    # search; a plain-http endpoint (Ollama, vLLM on localhost) never needs it, and
    # with redirects off no request can be upgraded to https behind our back.
    plain = base_url.startswith("http://")
    return httpx.Client(
        base_url=base_url, headers=merged, timeout=httpx.Timeout(timeout), follow_redirects=False, verify=not plain
    )


def post_json(
    client: httpx.Client,
    url: str,
    payload: Any,
    *,
    max_retries: int = 3,
    backoff: float = 0.5,
    timeout: float | None = None,
) -> dict:
    """POST `payload` as JSON and return the decoded JSON object.

    Retries (at most `max_retries` times after the first attempt) on 429, 5xx and
    connection errors, waiting backoff * 2**n plus jitter, or the server's
    Retry-After (capped). Other 4xx fail at once. A timeout is not retried: the
    caller chose how long to wait, and the health check reports it as such.
    """
    import httpx

    secrets = _secrets(client)
    endpoint = _endpoint(client, url)
    seconds = float(timeout) if timeout is not None else (client.timeout.read or 0.0)
    attempts = max(0, int(max_retries)) + 1
    for attempt in range(attempts):
        last = attempt == attempts - 1
        try:
            resp = client.post(url, json=payload, timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout)
        except httpx.TimeoutException:
            raise ProviderTimeout(
                f"POST {endpoint} timed out after {seconds:g}s",
                seconds,
                "raise the provider's timeout or check that the server is up",
            ) from None
        except httpx.UnsupportedProtocol:
            raise ProviderError(
                _redact(f"cannot POST {endpoint}: the URL must start with http:// or https://", secrets), "fix base_url"
            ) from None
        except httpx.TransportError as exc:
            if last:
                msg = f"POST {endpoint} failed: cannot connect ({type(exc).__name__}: {exc})"
                if attempts > 1:
                    msg += f" after {attempts} attempts"
                raise ProviderError(_redact(msg, secrets), "check base_url and that the server is running") from None
            _sleep(_delay(backoff, attempt, None))
            continue
        status = resp.status_code
        if status == 429 or status >= 500:
            if not last:
                _sleep(_delay(backoff, attempt, resp.headers.get("retry-after")))
                continue
            raise _status_error(endpoint, resp, secrets, attempts)
        if status >= 400 or status < 200:
            raise _status_error(endpoint, resp, secrets, 1)
        try:
            data = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ProviderError(
                f"POST {endpoint} returned malformed JSON (HTTP {status})",
                "check base_url points at the provider's API",
            ) from None
        if not isinstance(data, dict):
            raise ProviderError(
                f"POST {endpoint} returned malformed JSON: expected an object, got {type(data).__name__}",
                "check base_url points at the provider's API",
            )
        return data
    raise AssertionError("unreachable")  # pragma: no cover


def _status_error(endpoint: str, resp: httpx.Response, secrets: list[str], attempts: int) -> ProviderError:
    status = resp.status_code
    msg = f"POST {endpoint} failed: HTTP {status}"
    if resp.reason_phrase:
        msg += f" {resp.reason_phrase}"
    if attempts > 1:
        msg += f" after {attempts} attempts"
    detail = _detail(resp)
    if detail:
        msg += f": {detail}"
    return ProviderError(_redact(msg, secrets), _HINTS.get(status, _HINTS[500] if status >= 500 else None))


_HINTS = {
    400: "check model_name, dimensions/use_dimensions and max_input_length",
    401: "check the api_key",
    403: "check the api_key and that it may use this model",
    404: "check base_url and model_name",
    413: "lower max_input_length or max_batch_size",
    429: "the provider is rate limiting; try again later or lower max_batch_size",
    500: "the provider is failing; try again later",
}


def _detail(resp: httpx.Response) -> str:
    """The provider's own error text, shortened to one line."""
    text = ""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("status") or "")
        elif isinstance(err, str):
            text = err
        text = text or str(body.get("message") or body.get("detail") or "")
    if not text:
        text = resp.text
    text = " ".join(text.split())
    return text[:MAX_DETAIL] + ("…" if len(text) > MAX_DETAIL else "")


def _secrets(client: httpx.Client) -> list[str]:
    found = []
    for name in _SECRET_HEADERS:
        value = client.headers.get(name)
        if value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _redact(message: str, secrets: list[str]) -> str:
    for secret in secrets:
        message = message.replace(secret, "***")
    return message.replace("\n", " ")


def _endpoint(client: httpx.Client, url: str) -> str:
    """The request URL as shown in messages: no user info, no query string."""
    full = client.build_request("POST", url).url  # the URL httpx will request
    return str(full.copy_with(username=None, password=None, query=None, fragment=None))


def _delay(backoff: float, attempt: int, retry_after: str | None) -> float:
    server = _parse_retry_after(retry_after)
    if server is not None:
        return min(server, RETRY_AFTER_CAP)
    base = backoff * (2**attempt)
    return base + random.uniform(0, base * 0.25)


def _parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def notify(url: str, payload: Any, *, timeout: float = 5.0) -> None:
    """POST a JSON event once (webhooks): any 2xx is success, the body is ignored.

    Raises ProviderError naming the endpoint without user info or query string
    (where webhook tokens usually live)."""
    import httpx

    try:
        shown = str(httpx.URL(url).copy_with(username=None, password=None, query=None, fragment=None))
    except (httpx.InvalidURL, TypeError, ValueError):
        raise ProviderError("webhook URL is not a valid URL") from None
    try:
        with make_client("", timeout=timeout) as client:
            resp = client.post(url, json=payload)
    except httpx.TimeoutException:
        raise ProviderTimeout(f"webhook {shown} timed out", timeout) from None
    except httpx.HTTPError as exc:
        raise ProviderError(f"webhook {shown} failed: {type(exc).__name__}") from None
    if resp.status_code >= 300:
        raise ProviderError(f"webhook {shown} failed: HTTP {resp.status_code}")
