"""Credentials inside connection strings and URLs (memcli.secrets.redact runs these with the format rules).

- Azure connection strings: AccountKey=… (storage, Cosmos DB) and SharedAccessKey=… (Service Bus,
  Event Hubs, IoT Hub) up to the `;`; SharedAccessKeyName and the endpoint stay
- signed URLs: Azure SAS and Logic Apps `sig=`, AWS `X-Amz-Signature=` and `X-Amz-Security-Token=`,
  Google `X-Goog-Signature=`, the older `Signature=`; only the signature goes, the rest of the URL stays
- webhook URLs whose path is the credential: Discord, Microsoft Teams (webhook.office.com), Mattermost
  and any random segment after /hooks/ or /webhooks/ (Slack's are a format rule of their own)
- `?key=` and `?code=` (Azure Functions) holding a random value; `?token=` is a key rule's
Placeholders (<signature>, ${KEY}, …) and words stay: every value must be random_like.
"""

from __future__ import annotations

import re

from memcli.secrets.shapes import Spans, placeholder, positions, random_like

__all__ = ["LINK_RULES"]

_B64_VALUE = re.compile(r"[ \t]*=[ \t]*([A-Za-z0-9+/]{20,200}={0,2})(?![A-Za-z0-9+/=])")
_AZURE_NAMES = ("account", "sharedaccess")  # AccountKey=, SharedAccessKey=


def _azure_keys(text: str, low: str) -> Spans:
    for i in positions(low, ("key=",)):
        if (
            not any(low.startswith(name, i - len(name)) for name in _AZURE_NAMES)
            or (m := _B64_VALUE.match(text, i + 3)) is None
        ):
            continue
        before = low[i - 13 : i - 12] if low.startswith("sharedaccess", i - 12) else low[i - 8 : i - 7]
        if not before.isalnum() and random_like(m[1]):
            yield m.span(1)


_PARAM_VALUE = re.compile(r"[A-Za-z0-9%+/=_.~-]{16,4096}")
_SIGNATURES = frozenset({"sig", "signature", "x-amz-signature", "x-goog-signature", "x-amz-security-token"})
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def _param(low: str, at: int) -> tuple[str, int] | None:
    """(name, offset of its `=`) of the query parameter holding the word at `at`, when ?, & or ; starts it."""
    start, eq = at, at
    while start > 0 and at - start < 24 and low[start - 1] in _NAME_CHARS:
        start -= 1
    while eq < len(low) and eq - at < 24 and low[eq] in _NAME_CHARS:
        eq += 1
    return (low[start:eq], eq) if start and low[start - 1] in "?&;" and low[eq : eq + 1] == "=" else None


_WITH_EQ: dict[str, str | tuple[str, ...]] = {
    "k": "key=",
    "c": "code=",
    "s": ("sig=", "signature=", "security-token="),
}  # a cheap look first


def _values(text: str, low: str, words: tuple[str, ...], names: frozenset, least: int) -> Spans:
    for i in positions(low, words):
        if not low.startswith(_WITH_EQ[low[i]], i) or (param := _param(low, i)) is None or param[0] not in names:
            continue
        m = _PARAM_VALUE.match(text, param[1] + 1)
        value = m[0] if m else ""
        hexed = len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value)
        if m and len(value) >= least and not placeholder(value) and (hexed or _random(value)):
            yield m.span()


def _signatures(text: str, low: str) -> Spans:
    yield from _values(text, low, ("sig",), _SIGNATURES - {"x-amz-security-token"}, 16)
    yield from _values(text, low, ("security-token=",), frozenset({"x-amz-security-token"}), 16)


def _url_keys(text: str, low: str) -> Spans:
    yield from _values(text, low, ("key=", "code="), frozenset({"key", "code"}), 16)


_NAMED = re.compile(r"(?:[A-Za-z]{2,}|v?\d{1,4})(?:[-_.](?:[A-Za-z]{2,}|v?\d{1,4}))+")  # stripe_payment_succeeded_v2


def _random(value: str) -> bool:
    """A credential's characters rather than words joined by - _ . (an event name, a slug with a version)."""
    return random_like(value) and not _NAMED.fullmatch(value)


_URL_STOP = frozenset(" \t\r\n\"'<>()[]`")
_PATH = re.compile(r"[^\s\"'<>()\[\]`?#]{0,2048}")
_SEGMENT = re.compile(r"[^/@]+")


def _webhooks(text: str, low: str) -> Spans:
    """Random path segments of 20+ characters after the /hooks/ or /webhooks/ (webhookb2, webhook) of a URL."""
    done = 0
    for i in positions(low, ("hook",)):
        if i < done:
            continue
        lo = i
        while lo > 0 and i - lo < 512 and low[lo - 1] not in _URL_STOP:
            lo -= 1
        if "://" not in low[lo:i]:
            continue
        seg_end = low.find("/", i)  # the segment holding "hook" (hooks, webhooks, webhookb2, hooks.slack.com)
        if seg_end < 0 or low[seg_end - 1 : seg_end] == ":" or any(c in _URL_STOP for c in low[i:seg_end]):
            continue
        path = _PATH.match(text, seg_end)
        done = path.end() if path else seg_end  # never None: the pattern matches "" too
        random = [seg.span() for seg in _SEGMENT.finditer(text, seg_end, done) if len(seg[0]) >= 20 and _random(seg[0])]
        if random:  # Teams: tenant@group/IncomingWebhook/id/owner: the path from the first to the last, whole
            yield random[0][0], random[-1][1]


LINK_RULES = (
    ("azure_key", _azure_keys),
    ("signed_url", _signatures),
    ("webhook_url", _webhooks),
    ("url_key", _url_keys),
)
