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


def as_owner(query: str, names: tuple[str, ...]) -> str:
    """The query with the owner's names read as "the user" ("Where does Ha-eun's mother live?"
    -> "Where does the user's mother live?"): the notes say "the user", and the few that hold the
    name (a letter the assistant signed for them) are no more about the question
    (memcli.vault.owner). A name of two words or with a hyphen or a non-Latin letter in any case
    ("xu qing", "ha-eun"); a plain word, and one word of a longer name, only capitalised ("Grace",
    not "grace"; "May" is a month) and alone ("Xu's parents"; not "Xu Jianguo", her father)."""
    for name in names:  # longest first
        if name.casefold() not in query.casefold() and not any(w in query for w in name.split()):
            continue
        distinct = " " in name or "-" in name or not name.isascii()
        if distinct or _MONTH_OR_DAY.fullmatch(name) is None:
            query = _owner_name(name, re.IGNORECASE if distinct else 0).sub(
                functools.partial(_as_user, alone=not distinct), query
            )
        for word in name.split() if " " in name else ():
            if len(word) > 1 and word.casefold() not in tokenizer.STOPWORDS and not _MONTH_OR_DAY.fullmatch(word):
                query = _owner_name(word, 0).sub(functools.partial(_as_user, alone=True), query)
    return query


# a name that is a month or a weekday is never one ("May"); spelled out here rather than taken from
# memcli.index.currency.compare, whose import (9 ms) a search without currency relations skips
_MONTH_OR_DAY = re.compile(
    r"(?:jan|febr)uary|march|april|may|june|july|august|(?:sept|nov|dec)ember|october|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day",
    re.IGNORECASE,
)


@functools.cache
def _owner_name(name: str, flags: int) -> re.Pattern:
    if re.search(r"[A-Za-z]", name):
        return re.compile(rf"(?<![\w-])({re.escape(name)})(?P<of>['’]s)?(?![\w-])", flags)
    return re.compile(rf"({re.escape(name)})(?P<of>)", flags)  # a CJK name has no word bounds


# a capitalised word before a word of the owner's name, not the query's first (unless a title)
_NAMED_BEFORE = re.compile(r"(?:(?<=\s)[A-Z][\w'’-]*|^(?:Mr|Mrs|Ms|Dr|Herr|Frau)\.?) $")
_NAMED_AFTER = re.compile(r"(?:['’]s)? [A-Z]")


def _as_user(m: re.Match, alone: bool = False) -> str:
    """ "the user" for the name matched; a word of the name beside another name is someone
    else's ("Xu Jianguo", "Mr Xu"), not after the query's first word ("Does Xu like ...");
    the query's first word is a name only with "'s" ("Will the flight move?")."""
    if alone and (
        _NAMED_BEFORE.search(m.string, 0, m.start())
        or _NAMED_AFTER.match(m.string, m.end(1))
        or (m.start() == 0 and not m.group("of"))
    ):
        return m.group(0)
    return "the user's" if m.group("of") else "the user"


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
