"""What a note's line adds beside its own words: the topic and keyword glosses of offline
ingest, and the dates of Chinese, Japanese and Korean text (docs/currency.md).

Ingest ends a statement that leans on earlier turns with "(about: git, zed)" and frames a
CJK statement as 'The user said: 「...」 (keywords: flight, May 2, May 9)'. The "about"
gloss names the conversation's topics, not what the sentence sets: read as words of the
sentence it made "Its a 25m pool (about: pegasus, knees)" hold the Pegasus shoes. So the
rules read a statement without its glosses (`bare`), and a CJK statement's "keywords" are
its English reading (`keywords`): the words by which an older English statement of the same
subject is found. Dates are read the same way in every language ("5月9日", "5월 9일" and
"May 9" are "may 9"), so a value given in one language matches one given in another.
"""

from __future__ import annotations

import re

_GLOSS = re.compile(r"\s*\((?:about|keywords):[^()]*\)")
_KEYWORDS = re.compile(r"\(keywords:\s*([^()]*)\)")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_CJK_DATE = re.compile(r"(\d{1,2})\s*[월月]\s*(\d{1,2})\s*[일日号號]")
_WHEN = re.compile(r"^(?:%s)(?: \d{1,2})?$|^\d{4}$" % "|".join(MONTHS), re.I)  # noqa: UP031 - a regex's braces


def bare(sentence: str) -> str:
    """The sentence without ingest's glosses ("(about: git, zed)", "(keywords: ...)")."""
    return _GLOSS.sub("", sentence) if "(" in sentence else sentence


def keywords(sentence: str) -> list[str]:
    """The English keywords of a CJK statement's gloss that name things, not dates or times
    ("flight", "dog food"; not "May 9"), lower case; [] without a gloss."""
    m = _KEYWORDS.search(sentence)
    if not m:
        return []
    out = []
    for k in m.group(1).split(","):
        k = k.strip(" .…").lower()
        if k and not _WHEN.match(k) and not any(c.isdigit() for c in k):
            out.append(k)
    return out


def dates(text: str) -> str:
    """`text` with its CJK dates in English words ("5月9日" -> "may 9")."""

    def english(m: re.Match) -> str:
        month = int(m.group(1))
        return f" {MONTHS[month - 1]} {int(m.group(2))} " if 1 <= month <= 12 else m.group(0)

    return _CJK_DATE.sub(english, text).strip() if _CJK_DATE.search(text) else text
