"""A recall query's topic: the query without the words that frame it as a question about memory.

"Performance issue discussed last time" asks about a performance issue; "discussed last time"
says where to look, not what, and as search terms it matches any note with "last time" in it
("Last time we visited grandma…"). "The user" in "What music does the user like?" is whoever
the memory belongs to: most personal notes do not name them ("I love jazz"), and those that
do ("The user travels to Osaka…") are not more relevant for it. Both branches search the
topic, so the framing neither adds keyword matches nor pulls the query's vector towards every
note that shares it (measured in docs/evaluation.md). English only; a query that is all
framing is searched as it is.
"""

from __future__ import annotations

import re

from memcli.index import tokenizer

# nouns after "user" that make it a thing: "the user interface" is searched as it is
_USER_NOUNS = ("account", "agent", "base", "data", "documentation", "experience", "feedback", "group", "groups",
               "guide", "id", "input", "interface", "journey", "list", "manual", "model", "name", "profile",
               "research", "role", "session", "settings", "space", "stories", "story", "table", "testing")
_FRAMING = re.compile(
    # the memory's owner, but not "the user manual"
    r"\b(?:the user(?:'s|’s)?+(?!\s+(?:" + "|".join(_USER_NOUNS) + r")\b)"
    r"|discuss(?:ed|es|ing)?|mention(?:ed|s|ing)?|talk(?:ed|s|ing)? about"  # the conversation itself
    r"|last time|the other day)\b",
    re.IGNORECASE)


def topic(query: str) -> str:
    """The query's words without its recall framing; the query itself if nothing else is left."""
    rest = " ".join(_FRAMING.sub(" ", query).split())
    return rest if rest != query and tokenizer.query_terms(rest) else query
