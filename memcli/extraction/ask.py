"""Ask a model for one JSON object: validate the reply, retry once with the error fed back.

Ingest, dream and resource interpretation all talk to a model this way. A reply
that fails validation is answered once with what was wrong (models usually fix a
named problem, and a retry is cheaper than losing the work); a second failure is
a clean provider error, and nothing has been written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TypeVar

from memcli.errors import ProviderError

# chat(messages) -> (content, finish_reason); the job wires in a provider client
Chat = Callable[[list[dict]], tuple[str, str | None]]
T = TypeVar("T")

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


class Invalid(ValueError):
    """Why a reply cannot be used; the text is fed back to the model once."""


def decode_object(content: str) -> dict:
    text = content.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1)
    try:
        data = json.loads(text)
    except RecursionError:
        raise Invalid("the JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        a, b = text.find("{"), text.rfind("}")
        try:
            data = json.loads(text[a:b + 1]) if 0 <= a < b else None
        except (json.JSONDecodeError, RecursionError):
            data = None
        if data is None:
            raise Invalid(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise Invalid(f"expected a JSON object, got {type(data).__name__}")
    return data


def ask(chat: Chat, convo: list[dict], parse: Callable[[str, str | None], T], retry_prompt: Callable[[str], str],
        *, label: str = "LLM", rejected: type[ProviderError] = ProviderError, hint: str | None = None) -> T:
    """parse(content, finish_reason) of the model's reply, with one retry on Invalid.

    `rejected` (a ProviderError subclass) is raised, with `hint`, when the second reply
    fails too; transport errors from `chat` pass through as they are."""
    content, finish = chat(convo)
    try:
        return parse(content, finish)
    except Invalid as first:
        convo = convo + [{"role": "assistant", "content": content[:8000]},
                         {"role": "user", "content": retry_prompt(str(first))}]
    content, finish = chat(convo)
    try:
        return parse(content, finish)
    except Invalid as second:
        raise rejected(f"{label} reply rejected twice: {second}", hint) from None
