"""Dream with an LLM: every reply is repaired where that is mechanical and validated before
anything is written, retried once with the error fed back, and rejected for good after that.

Changed notes that do not fit the model's window together are sent in batches: each batch
yields units, units of the same name are merged, and the units are taken from the batches in
turn; a few more than max_units are asked for, so the job knows what it leaves for the next run. Integration shows the recalled nodes and the unit's notes cut to fit.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclasses import replace

from memcli.errors import ProviderError
from memcli.extraction.ask import Chat, ask, budget
from memcli.extraction.dream import prompts
from memcli.extraction.dream.evidence import STOP, words
from memcli.extraction.dream.schema import (Receipt, Topic, Unit, extract_schema, integrate_schema, merge_units,
                                            new_path, parse_receipt, parse_units)
HINT = "check llm_model_config.model_name, or set llm_model_config.backend: none for the offline rules"
MAX_TOPICS = 3
EXTRACT_REPLY = 1536  # tokens: a few units and topics
FILLER = frozenset("today yesterday tomorrow now currently user users note notes".split())
INTEGRATE_REPLY = 1024  # tokens: a receipt and a node of at most 200 words (a longer reply is a loop)


class Rejected(ProviderError):
    """The model answered twice, and neither answer passed validation."""


def _ask(chat: Chat, convo: list[dict], parse, keys: str, label: str, schema: dict, max_tokens: int):
    return ask(chat, convo, parse, lambda error: prompts.retry_prompt(error, keys), label=label,
               rejected=Rejected, hint=HINT, schema=schema, max_tokens=max_tokens)


def _room(chat: Chat, convo: list[dict]) -> int:
    return max(256, budget(chat, *(m["content"] for m in convo)))


def ask_count(max_units: int) -> int:
    """Units to ask for when `max_units` are integrated: a few more, so what is over the budget
    is known and its notes stay changed for the next run instead of being dropped unseen."""
    return max(max_units, min(max_units + 5, 12))


def extract(chat: Chat, day: str, dates: list[str], changed: list[str], texts: list[tuple[str, str]],
            max_units: int, label: str = "LLM", done: dict[str, list[str]] | None = None
            ) -> tuple[list[Unit], list[Topic]]:
    """Units of the changed notes, up to ask_count(max_units), taken from the batches in turn;
    units already integrated from all their notes by an earlier run (`done`: path -> unit names)
    are left out. The caller integrates the first max_units and leaves the rest for later."""
    done = done or {}
    want = ask_count(max_units)
    room = _room(chat, prompts.extract_messages(day, dates, changed, [], want, done))
    per_batch: list[list[Unit]] = []
    topics: list[Topic] = []
    for batch in prompts.batches([(p, t) for p, t in texts if p in set(changed)], room):
        paths = [p for p, _ in batch]
        convo = prompts.extract_messages(day, dates, paths, batch, want, done)
        units, found = _ask(chat, convo, lambda c, f, paths=paths: parse_units(c, f, paths, want),
                            '{"units", "topics"}', label, extract_schema(paths, want), EXTRACT_REPLY)
        units = [grounded(u, dict(batch)) for u in units]
        per_batch.append([u for u in units if not all(u.name in done.get(p, ()) for p in u.paths)])
        topics += found
    turns = [u for i in range(want) for units in per_batch if i < len(units) for u in [units[i]]]
    return merge_units(turns)[:want], topics[:MAX_TOPICS]


def grounded(unit: Unit, texts: dict[str, str]) -> Unit:
    """`unit` citing only the notes its summary comes from, named without filler words.

    A small model often lists every changed note as the source of every unit; a node
    citing a note that says nothing of it is a false source. A path is kept when its note
    holds at least half as many of the summary's subject words as the best note does (all
    paths when none holds any). "today-i-prefer-oolong-tea" becomes "prefer-oolong-tea"."""
    want = set(words(unit.summary + " " + unit.name.replace("-", " ")))
    shared = {p: len(want & set(words(texts[p]))) for p in unit.paths if p in texts}
    best = max(shared.values(), default=0)
    paths = [p for p in unit.paths if best == 0 or shared.get(p, best) * 2 >= best]
    parts = unit.name.split("-")
    kept = [w for w in parts if w not in STOP and w not in FILLER]
    name = "-".join(kept) if len(kept) >= 2 else unit.name
    return replace(unit, name=name, paths=paths)


def integrate(chat: Chat, unit: Unit, digest_dir: str, texts: list[tuple[str, str]],
              recalled: list[tuple[str, str]], exists: Callable[[str], bool],
              old_body: Callable[[str], str | None], label: str = "LLM") -> Receipt:
    new = new_path(unit, digest_dir, exists)
    room = _room(chat, prompts.integrate_messages(unit, digest_dir, [], [], new_path=new))
    convo = prompts.integrate_messages(unit, digest_dir, texts, recalled, room, new)
    shown = [p for p, _ in recalled if p in convo[1]["content"]]
    return _ask(chat, convo, lambda c, f: parse_receipt(c, f, unit, digest_dir, exists, old_body, new),
                '{"action", "target_path", "note", "description", "body"}', label,
                integrate_schema([new, *shown]), INTEGRATE_REPLY)
