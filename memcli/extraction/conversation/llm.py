"""The LLM extractor: prompt, validate, and retry once with the validation error fed back."""

from __future__ import annotations

from collections.abc import Callable

from memcli.errors import ProviderError
from memcli.extraction.conversation import Draft, Request, prompts
from memcli.extraction.conversation.validate import Invalid, parse_reply

# chat(messages) -> (content, finish_reason); the job wires in a provider client
Chat = Callable[[list[dict]], tuple[str, str | None]]


def extract(req: Request, chat: Chat, label: str = "LLM") -> Draft | None:
    convo = [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": prompts.user_prompt(req)}]
    content, finish = chat(convo)
    try:
        return parse_reply(content, finish, req.existing)
    except Invalid as first:
        # one more chance: models usually fix a named problem, and a retry is cheaper than losing the turn
        convo += [{"role": "assistant", "content": content[:8000]},
                  {"role": "user", "content": prompts.retry_prompt(str(first))}]
    content, finish = chat(convo)
    try:
        return parse_reply(content, finish, req.existing)
    except Invalid as second:
        raise ProviderError(f"{label} reply rejected twice: {second}",
                            "check llm_model_config.model_name, or set llm_model_config.backend: none "
                            "for the offline extractor") from None
