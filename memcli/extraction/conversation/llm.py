"""The LLM extractor: prompt, validate, and retry once with the validation error fed back."""

from __future__ import annotations

from memcli.extraction.ask import Chat, ask
from memcli.extraction.conversation import Draft, Request, prompts
from memcli.extraction.conversation.validate import parse_reply


def extract(req: Request, chat: Chat, label: str = "LLM") -> Draft | None:
    convo = [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": prompts.user_prompt(req)}]
    return ask(chat, convo, lambda content, finish: parse_reply(content, finish, req.existing), prompts.retry_prompt,
               label=label, hint="check llm_model_config.model_name, or set llm_model_config.backend: none "
                                 "for the offline extractor")
