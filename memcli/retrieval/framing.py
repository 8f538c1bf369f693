"""A recall query's topic: the query without the words that frame it as a question about memory.

"Performance issue discussed last time" asks about a performance issue; "discussed last time"
says where to look, not what, and as search terms it matches any note with "last time" in it
("Last time we visited grandma…"). "The user" in "What music does the user like?" is whoever
the memory belongs to: most personal notes speak as them ("I love jazz"), and those that
name them ("The user travels to Osaka…") are not more relevant for it. So the query asks as
the owner would: "What music do I like?" (first-person words are stopwords: the keyword
branch searches "music like" either way). Both branches search the topic, so the framing
neither adds keyword matches nor pulls the query's vector towards every note that shares it
(measured in docs/evaluation.md). English only; a query that is all framing is searched as
it is.
"""

from __future__ import annotations

import functools
import re

from memcli.index.keyword import tokenizer

# nouns after "user" that make it a thing: "the user interface" is searched as it is
_USER_NOUNS = (
    "account",
    "agent",
    "base",
    "data",
    "documentation",
    "experience",
    "feedback",
    "group",
    "groups",
    "guide",
    "id",
    "input",
    "interface",
    "journey",
    "list",
    "manual",
    "model",
    "name",
    "profile",
    "research",
    "role",
    "session",
    "settings",
    "space",
    "stories",
    "story",
    "table",
    "testing",
)
_OWNER = r"the user(?!(?:'s|’s)?\s+(?:" + "|".join(_USER_NOUNS) + r")\b)"  # not "the user manual"
_SUBJECT = _OWNER + r"(?!'s|’s)"
_CONVERSATION = re.compile(
    r"\b(?:discuss(?:ed|es|ing)?|mention(?:ed|s|ing)?|talk(?:ed|s|ing)? about|last time|the other day)\b", re.IGNORECASE
)
# words that ask when a value holds, not what it is about: "How does the user get to work these
# days?" asks about the commute, and as search terms "days" found a note about days off first.
# Whether a question asks what holds now is read from the question itself (memcli.retrieval.currency).
VALIDITY = r"these days|nowadays|at the moment|at present|right now"
_VALIDITY = re.compile(rf"\s*\b(?:{VALIDITY})\b", re.IGNORECASE)
# the owner in the first person, as their own notes name them; the verb agrees (an embedding
# model reads "How do I usually travel to work?" closer to "My preferred commute is…" than
# the question without its subject, and both closer than with "the user")
_FIRST_PERSON = (
    (rf"\b(?:does|do) {_SUBJECT}\b", "do I"),
    (rf"\bis {_SUBJECT}\b", "am I"),
    (rf"\bhas {_SUBJECT}\b", "have I"),
    (rf"\b{_SUBJECT} is\b", "I am"),
    (rf"\b{_SUBJECT} has\b", "I have"),
    (rf"\b{_SUBJECT} does\b", "I do"),
    (rf"\b{_OWNER}(?:'s|’s)", "my"),
    (rf"\b(to|for|with|about|from|of|by|at|on|help|helped|tell|told|ask|asked|remind|reminded) {_OWNER}\b", r"\1 me"),
    (rf"\b{_OWNER}\b", "I"),
)


@functools.cache
def _owner_rules() -> tuple[re.Pattern, list[tuple[re.Pattern, str]]]:
    """(the owner's words, the first-person rewrites), compiled on the first query that names
    the owner: ~15 ms of a cold search that does not."""
    return (
        re.compile(rf"\b{_OWNER}(?:'s|’s)?+", re.IGNORECASE),
        [(re.compile(pattern, re.IGNORECASE), repl) for pattern, repl in _FIRST_PERSON],
    )


def _cased(found: str, repl: str) -> str:
    """`repl` capitalised like `found` ("Does the user" -> "Do I")."""
    return repl[0].upper() + repl[1:] if found[:1].isupper() else repl


def topic(query: str) -> str:
    """The query without its conversation framing and without its owner; the query itself
    if no search term is left."""
    rest = _VALIDITY.sub("", _CONVERSATION.sub(" ", query))
    if _names_owner(rest):
        rest = _owner_rules()[0].sub(" ", rest)
    return _kept(query, " ".join(rest.split()))


def first_person(query: str) -> str:
    """The query without its conversation framing, asked by its owner ("What music does the
    user like?" -> "What music do I like?"); the query itself if no search term is left."""
    rest = _VALIDITY.sub("", _CONVERSATION.sub(" ", query))
    for pattern, repl in _owner_rules()[1] if _names_owner(rest) else ():
        rest = pattern.sub(lambda m: _cased(m.group(0), m.expand(repl)), rest)  # noqa: B023 - called within this pass
    return _kept(query, " ".join(rest.split()))


def _names_owner(text: str) -> bool:
    """Whether any owner rule can match (every one holds "the user" between word bounds)."""
    return "the user" in " ".join(text.casefold().split())


def _kept(query: str, rest: str) -> str:
    return rest if rest != query and tokenizer.query_terms(rest) else query
