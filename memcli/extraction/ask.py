"""Ask a model for one JSON object: repair, validate, retry once with the error fed back.

Ingest, dream and resource interpretation all talk to a model this way. A reply is
first repaired where the fix is mechanical (code fences and prose around the JSON,
trailing commas, raw newlines in strings, a name to slugify, duplicate units to
merge): the parse functions return the repaired value. What cannot be repaired is
Invalid: it is answered once with what was wrong (models usually fix a named
problem, and a retry is cheaper than losing the work); a second failure is a clean
provider error, and nothing has been written.

The chat callable takes (messages, schema) and returns (content, finish_reason); it, or
the object it is a method of (the provider's ChatClient), may carry `context_tokens` and
`reply_tokens`, which size the prompts: `budget(chat)` is what a prompt may use
(docs/local-models.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from memcli.errors import ProviderError

T = TypeVar("T")
DEFAULT_CONTEXT = 8192
TEMPLATE_TOKENS = 96  # chat-template tokens around the messages, and a margin for the estimate

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_ASCII = re.compile(r"[\x00-\x7f]")


class Chat(Protocol):
    def __call__(
        self, messages: list[dict], schema: dict | None = None, max_tokens: int | None = None
    ) -> tuple[str, str | None]: ...


class Invalid(ValueError):
    """Why a reply cannot be used; the text is fed back to the model once."""


def tokens(text: str) -> int:
    """A cautious token estimate: ~3 characters of ASCII per token, one token per other character
    (CJK is about one token per character; accents cost less, and the surplus is the margin)."""
    ascii_chars = len(_ASCII.findall(text))
    return ascii_chars // 3 + (len(text) - ascii_chars) + 1


def _window(chat) -> tuple[int, int]:
    owner = getattr(chat, "__self__", chat)  # a bound ChatClient.chat carries its client
    window = int(getattr(owner, "context_tokens", 0) or DEFAULT_CONTEXT)
    return window, int(getattr(owner, "reply_tokens", 0) or max(256, min(4096, window // 4)))


def budget(chat, *prompts: str) -> int:
    """Tokens left for material in a prompt to `chat` once `prompts` (the fixed parts) are counted."""
    window, reply = _window(chat)
    return window - reply - TEMPLATE_TOKENS - sum(tokens(p) for p in prompts)


def reply_budget(chat) -> int:
    """Tokens a reply from `chat` may use (a schema's list sizes are chosen to fit in it)."""
    return _window(chat)[1]


def clip(text: str, limit: int, marker: str = "\n[…cut…]") -> str:
    """`text` cut to about `limit` tokens (at a line end where one is near), with `marker`."""
    if tokens(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix within the limit
        mid = (lo + hi + 1) // 2
        if tokens(text[:mid]) + tokens(marker) <= limit:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    nl = cut.rfind("\n")
    return (cut[:nl] if nl > lo * 0.8 else cut).rstrip() + marker


def _loads(text: str):
    # strict=False: raw newlines and tabs inside strings, which small models write
    return json.loads(_TRAILING_COMMA.sub(r"\1", text), strict=False)


def salvage(content: str) -> dict | None:
    """The JSON object a reply cut off by the token limit began, closed after its last complete
    value (complete list items are kept, a half-written one is dropped); None if there is none."""
    text = content.strip()
    start = text.find("{")
    if start < 0:
        return None
    stack, in_string, escape, ends = [], False, False, []
    for i, ch in enumerate(text[start:], start):
        if in_string:
            escape, in_string = (not escape and ch == "\\"), in_string and (escape or ch != '"')
            if not in_string:
                ends.append((i, "".join(stack)))
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            ends.append((i, "".join(stack)))
    for i, open_ in reversed(ends[-200:]):
        try:
            data = _loads(text[start : i + 1] + open_[::-1])
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(data, dict):
            return data
    return None


def decode_object(content: str) -> dict:
    """The reply's JSON object, repaired: fences and prose around it, trailing commas, raw
    control characters in strings, a one-object list. Invalid when there is none."""
    text = content.strip()
    m = _FENCE.search(text)
    if m and "{" in m.group(1):
        text = m.group(1).strip()
    try:
        data = json.loads(text)
    except RecursionError:
        raise Invalid("the JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        a, b = text.find("{"), text.rfind("}")
        data = None
        for candidate in [text] + ([text[a : b + 1]] if 0 <= a < b else []):
            try:
                data = _loads(candidate)
                break
            except (json.JSONDecodeError, RecursionError):
                continue
        if data is None:
            raise Invalid(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        raise Invalid(f"expected a JSON object, got {type(data).__name__}")
    return data


# a phrase said three times or more in a row, and the half-word a length limit left after it
_PHRASE_LOOP = re.compile(r"(\b[^,;.!?\n]{2,60}?)(?:[,;]?\s+\1\b){2,}[,;]?(?:\s+\w{0,12}[,;]?\s*$)?")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def unloop(text: str) -> str:
    """`text` with what a small model repeated in a loop kept once: a sentence said again (in
    any order) and a phrase repeated three times or more in a row."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        sentence = _PHRASE_LOOP.sub(r"\1", sentence).rstrip(" ,;")
        if sentence and sentence.lower() not in {x.lower() for x in out}:
            out.append(sentence)
    return " ".join(out)


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of Markdown `text` that is not a heading, at most `limit` characters."""
    for line in text.split("\n"):
        line = re.sub(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)", "", line).strip().replace("**", "")
        if not line or line.startswith(("#", "|", "```", "[[")):
            continue
        m = re.match(r"(.+?[.!?。！？])(?:\s|$)", line)
        return shorten(m.group(1) if m else line, limit)
    return ""


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut[: cut.rfind(" ")] if " " in cut[limit // 2 :] else cut).rstrip(" ,;:") + "…"


def ask(
    chat: Chat,
    convo: list[dict],
    parse: Callable[[str, str | None], T],
    retry_prompt: Callable[[str], str],
    *,
    label: str = "LLM",
    rejected: type[ProviderError] = ProviderError,
    hint: str | None = None,
    schema: dict | None = None,
    max_tokens: int | None = None,
) -> T:
    """parse(content, finish_reason) of the model's reply, with one retry on Invalid.

    `schema` (JSON Schema of the reply) is passed to `chat`, which asks the server for it;
    `max_tokens` lowers the reply cap of a reply that is always short.
    `rejected` (a ProviderError subclass) is raised, with `hint`, when the second reply
    fails too; transport errors from `chat` pass through as they are."""

    def call(messages: list[dict]) -> tuple[str, str | None]:
        return chat(messages, schema) if max_tokens is None else chat(messages, schema, max_tokens)

    content, finish = call(convo)
    try:
        return parse(content, finish)
    except Invalid as first:
        again = retry_prompt(str(first))
        # the rejected answer is shown as far as the window allows (a long prompt leaves no room)
        room = budget(chat, again, *(str(m.get("content", "")) for m in convo))
        fits = room >= min(64, tokens(content[:8000]))
        shown = [{"role": "assistant", "content": clip(content[:8000], room)}] if fits else []
        convo = convo + shown + [{"role": "user", "content": again}]
    content, finish = call(convo)
    try:
        return parse(content, finish)
    except Invalid as second:
        raise rejected(f"{label} reply rejected twice: {second}", hint) from None


_DATE = re.compile(r"(?:19|20)\d{2}-?\d{2}(?:-?\d{2})?|\d{8}")


def kebab(text: str, limit: int = 60) -> str:
    """`text` as a kebab-case name ("Night Shift Nurse" -> "night-shift-nurse"): lowercase words
    of any script, no dates or bare numbers, at most `limit` characters; "" when none is left."""
    text = re.sub(r"['’]s\b", "", _DATE.sub(" ", str(text)))  # "nurse's rota" -> "nurse rota"
    words = [w for w in re.findall(r"[^\W_]+", text.lower().replace("'", "").replace("’", "")) if not w.isdigit()]
    out = ""
    for w in words:
        cand = f"{out}-{w}" if out else w
        if len(cand) > limit:
            break
        out = cand
    return out
