"""How a statement reads in a digest node: self-contained, third person, no transcript voice.

A conversation note may quote the user ("User: I'm changing my goal to 1:52 then.") or state
the fact already ("The user's half-marathon goal is now 1:52."). A node says the second:
`statement` drops a leading filler ("Right, ...") and turns the user's first person into
"the user" with the same rules as offline ingest (extraction/conversation/person.py: "I
prefer" -> "the user prefers", "my" -> "the user's"). Other named speakers keep their prefix
("Caroline: ..."): in a conversation between two people the name is what says whose
statement it is. Which lines hold no knowledge at all (requests to the assistant,
acknowledgements, small talk) is extraction/conversation/chatter.py's call.
"""

from __future__ import annotations

import re

from memcli.extraction.conversation import chatter, dialogue, person

USER_SPEAKERS = frozenset({"user", "me", "i"})


def is_user(speaker: str) -> bool:
    return speaker.strip().lower() in USER_SPEAKERS


def statement(text: str, speaker: str = "") -> str:
    """The self-contained statement a node holds for a line a speaker said."""
    text = chatter.strip_lead(text) or text.strip()
    if speaker and not is_user(speaker):
        return f"{speaker}: {text}" if speaker != "Assistant" else text
    if speaker:
        # "we" is the team at work, the household at home, else the user alone: "We rehearse
        # taiko" is the user's rehearsal, not the household's (ingest reads "we" the same way)
        we = "the user's team" if person.about_work(text) else dialogue.group_for(text, [], "the user")
        text = person.convert(text, group=we)
    # a sentence opens with a capital, an identifier keeps its case ("wal_level needs a restart")
    return text[:1].upper() + text[1:] if re.match(r"[a-z]+\b(?![_.-]\w)", text) else text
