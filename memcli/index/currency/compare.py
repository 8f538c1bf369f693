"""A claim, and when two claims speak of the same subject or give it the same value (memcli.index.currency.subjects
makes the claims; docs/currency.md).

Two keys name the same subject when the words of one are all words of the other ("goal" and
"half-marathon goal"); two values agree when the content tokens of one are all in the other
("20" and "20 for now"): a restatement, not a change. The word lists the claim rules share
with these comparisons live here too.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memcli.index.currency import gloss
from memcli.index.currency.reading import clean, words


class Claim(NamedTuple):
    key: tuple[str, ...]  # the subject's words, stemmed and sorted (the comparison form)
    label: str  # the subject as written ("half-marathon goal")
    value: str  # the value as written ("1:52")
    old: str = ""  # the previous value when the sentence names it ("from 9:30", "instead of 9:30")
    also: tuple[str, ...] = ()  # a CJK claim's English words, from its statement's keywords gloss


# words of a subject that do not change which subject it is ("my new manager" is "my manager")
SOFT = frozenset("new current old previous latest usual regular own actual whole main first".split())
NOT_SUBJECT = frozenset(
    "it its it's this that these those he she they we i you there here what everything "
    "something nothing anything one thing lot bit".split()
)
DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun"
MONTHS = "|".join(gloss.MONTHS)
FILLER = frozenset("now then again still currently anyway instead actually entirely completely altogether".split())
DUE = {words("due")[0]: words("deadline")[0]}  # "the grant is due 18 june" sets the grant's deadline


def subject_key(attr: str) -> tuple[str, ...]:
    """The comparison form of a subject: its words without softeners, stemmed, sorted."""
    raw = attr.lower().split()
    if not raw or raw[0] in NOT_SUBJECT:
        return ()
    ws = [DUE.get(w, w) for w in words(attr) if w not in SOFT]
    if not ws:
        return ()
    return tuple(sorted(set(ws)))


def is_frame(key) -> bool:
    """A frame's key: one token, its words after a "~" ("~long run", subjects.framed)."""
    return bool(key) and str(key[0]).startswith("~")


def key_words(key) -> list[str]:
    """The words of a subject key (a frame's key is one token: "~long run")."""
    return str(key[0])[1:].split() if is_frame(key) else list(key)


def same_subject(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """One key's words are all words of the other ("goal" and "goal half marathon"). A frame is
    the same subject only as an identical frame, or as a subject of the same two or more words
    ("a long run on sunday" and "the user's long runs are on saturdays"): a one-word frame
    ("a 25m pool") is never matched to another kind of claim ("raised the pool to 50")."""
    if not a or not b:
        return False
    fa, fb = is_frame(a), is_frame(b)
    if fa or fb:
        wa, wb = set(key_words(a)), set(key_words(b))
        return a == b if fa and fb else (wa == wb and len(wa) >= 2)
    sa, sb = set(a), set(b)
    return sa <= sb or sb <= sa


def same_value(a: str, b: str) -> bool:
    """The values agree: the content tokens of one are all in the other ("20" and "20 for now"),
    weekdays and plurals compared by stem ("thursdays" and "thursday")."""
    ta = {day_stem(w) for w in words(a) if w not in FILLER}
    tb = {day_stem(w) for w in words(b) if w not in FILLER}
    if not ta or not tb:
        return a.strip().lower() == b.strip().lower()
    return ta <= tb or tb <= ta


def value_holds(value: str, thing: str) -> bool:
    """A claim's value holds a thing given up: all its words are in the value ("nike pegasus 40"
    holds "pegasus"; "tuesdays" does not hold "the tuesday class")."""
    want = {day_stem(w) for w in words(thing) if w not in FILLER}
    return bool(want) and want <= {day_stem(w) for w in words(value)}


def day_stem(w: str) -> str:
    """A weekday without its plural ("thursdays" -> "thursday"); any other word as it is."""
    return w[:-1] if w.endswith("s") and re.fullmatch(rf"(?:{DAYS})s", w) else w


# words of a question that name no subject ("what is the user's current editor now")
GENERIC = frozenset("user assistant now current currently today new latest still".split())


def needs(claim_key: list | None, label: str) -> list[list[str]]:
    """Word sets of which a query must hold one to ask about a claim's subject: two words of a
    frame (all of a shorter one), else the subject's head word ("goal" of "half-marathon goal":
    "when is the half marathon" is not about the goal; "1:1" of "1:1 with sanne")."""
    if claim_key and is_frame(claim_key):
        got = str(claim_key[0])[1:].split()
        return [got] if len(got) <= 2 else [[a, b] for k, a in enumerate(got) for b in got[k + 1 :]]
    head = re.split(r"\s(?:of|for|with|to|at|in|on|from)\s", label.lower())[0]  # "1:1 with sanne": "1:1"
    got = [w for w in words(head) if w not in GENERIC]
    return [got[-1:]] if got else []


def mentions(sentence: str, key: tuple[str, ...], value: str) -> bool:
    """`sentence` speaks of the subject and holds the value: an older statement that a claim
    naming its previous value ("standup is now at 10:15 instead of 9:30") supersedes."""
    s = clean(sentence)
    have = set(words(s))
    if not value or not set(key) & have:
        return False
    tokens = [w for w in words(value) if w not in FILLER]
    return bool(tokens) and all(t in have for t in tokens)


def restates(a: dict, b: dict) -> bool:
    """One statement is a digest node's copy of the other (it cites the other's note): written
    again in other words ("I" made "the user"), read again, not a newer value."""
    return a["path"] in b.get("cites", ()) or b["path"] in a.get("cites", ())
