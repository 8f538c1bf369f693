"""Dream with an LLM: every reply is validated before anything is written, retried once with
the error fed back, and rejected for good after that."""

from __future__ import annotations

from collections.abc import Callable

from memcli.errors import ProviderError
from memcli.extraction.ask import Chat, ask
from memcli.extraction.dream import prompts
from memcli.extraction.dream.schema import Receipt, Topic, Unit, parse_receipt, parse_units
HINT = "check llm_model_config.model_name, or set llm_model_config.backend: none for the offline rules"


class Rejected(ProviderError):
    """The model answered twice, and neither answer passed validation."""


def _ask(chat: Chat, convo: list[dict], parse, keys: str, label: str):
    return ask(chat, convo, parse, lambda error: prompts.retry_prompt(error, keys), label=label,
               rejected=Rejected, hint=HINT)


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
