"""Dream with an LLM: every reply is validated before anything is written, retried once with
the error fed back, and rejected for good after that."""

from __future__ import annotations

from collections.abc import Callable

from memcli.errors import ProviderError
from memcli.extraction.dream import prompts
from memcli.extraction.dream.schema import Receipt, Topic, Unit, parse_receipt, parse_units
from memcli.extraction.conversation.validate import Invalid

# chat(messages) -> (content, finish_reason); the job wires in a provider client
Chat = Callable[[list[dict]], tuple[str, str | None]]
HINT = "check llm_model_config.model_name, or set llm_model_config.backend: none for the offline rules"


class Rejected(ProviderError):
    """The model answered twice, and neither answer passed validation."""


def _ask(chat: Chat, convo: list[dict], parse, keys: str, label: str):
    content, finish = chat(convo)
    try:
        return parse(content, finish)
    except Invalid as first:
        # one more chance: models usually fix a named problem
        convo = convo + [{"role": "assistant", "content": content[:8000]},
                         {"role": "user", "content": prompts.retry_prompt(str(first), keys)}]
    content, finish = chat(convo)
    try:
        return parse(content, finish)
    except Invalid as second:
        raise Rejected(f"{label} reply rejected twice: {second}", HINT) from None


def extract(chat: Chat, day: str, dates: list[str], changed: list[str], texts: list[tuple[str, str]],
            max_units: int, label: str = "LLM") -> tuple[list[Unit], list[Topic]]:
    convo = prompts.extract_messages(day, dates, changed, texts, max_units)
    return _ask(chat, convo, lambda c, f: parse_units(c, f, changed, max_units), '{"units", "topics"}', label)


def integrate(chat: Chat, unit: Unit, digest_dir: str, texts: list[tuple[str, str]],
              recalled: list[tuple[str, str]], exists: Callable[[str], bool],
              old_body: Callable[[str], str | None], label: str = "LLM") -> Receipt:
    convo = prompts.integrate_messages(unit, digest_dir, texts, recalled)
    return _ask(chat, convo, lambda c, f: parse_receipt(c, f, unit, digest_dir, exists, old_body),
                '{"action", "target_path", "note", "description", "body"}', label)
