"""The LLM extractor: prompt, repair and validate, retry once with the validation error fed back.

A conversation longer than the model's window is sent in consecutive parts: the first
part's reply makes the note, each later part sees that note as the existing one and
adds to it (memcli.extraction.ask.budget sizes the parts from `context_tokens`).
"""

from __future__ import annotations

from dataclasses import replace

from memcli.extraction.ask import Chat, ask, budget, reply_budget
from memcli.extraction.conversation import Draft, Existing, Request, prompts
from memcli.extraction.conversation.validate import items_schema, parse_reply

HINT = "check llm_model_config.model_name, or set llm_model_config.backend: none for the offline extractor"


def _one(req: Request, chat: Chat, label: str, room: int, existing_limit: int) -> Draft | None:
    convo = [
        {"role": "system", "content": prompts.SYSTEM},
        {"role": "user", "content": prompts.user_prompt(req, room, existing_limit)},
    ]
    return ask(
        chat,
        convo,
        lambda content, finish: parse_reply(content, finish, req.existing),
        prompts.retry_prompt,
        label=label,
        hint=HINT,
        schema=items_schema(reply_budget(chat)),
    )


def extract(req: Request, chat: Chat, label: str = "LLM") -> Draft | None:
    messages = prompts.recent(req.messages)
    fixed = budget(chat, prompts.SYSTEM, prompts.frame(replace(req, existing=None), 0))
    existing_limit = max(128, fixed // 3)  # an existing note is shown up to a third of the room
    room = max(256, fixed - existing_limit - 32)
    draft, existing = None, req.existing
    for part in prompts.split(messages, room):
        got = _one(Request(part, req.day, req.session_id, existing, req.context), chat, label, room, existing_limit)
        if got is not None:
            draft = got
            existing = Existing(got.name, got.description, got.body)
    return draft
