"""A change told by its values alone: "the 7:37 was brutal, going with the 7:45 from now on".

Chats often change a value without naming what it is the value of: the subject is in the
older statement ("the user is on the 7:37 metro"), the new sentence names the old value and
the new one. `pairs` reads such a sentence as (old, new) candidates: a change cue ("going
with", "back to", "instead", "from now on", "switched to"...) and two values of one kind (two
times, two weekdays, two numbers) on either side of it; relate (memcli.index.currency.relate)
then looks for a live claim holding the old value exactly and, when one is there, reads the
sentence as a new value of that claim's subject. Nothing is superseded on a value alone: the
older statement must be a claim (a subject set to that value), and the old value particular
(a clock time, a date, a number of two digits or with a unit: not "friday" or "4", which
unrelated subjects share), so "75" in a sentence about something else is never taken for a
hydration of 75%. A number also needs a word the two statements share besides the values (`tied`):
"caustic goes to 80 instead of 70" is no new price of the IBC tank "found on kleinanzeigen for 70".
"""

from __future__ import annotations

import re
from functools import lru_cache

from memcli.index.currency import gloss, reading
from memcli.index.currency.compare import DAYS, day_stem

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_KINDS = (
    ("time", r"\b\d{1,2}[:h]\d\d\b|\b\d{1,2}\s?(?:am|pm)\b"),
    ("date", rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b"),
    ("day", rf"\b(?:{DAYS})s?\b"),
    ("number", r"(?<![\d:.,])\d+(?:[.,]\d+)?(?:\s?%|[a-z]{1,3}\b)?(?![\d:])"),
)
_VALUE = re.compile("|".join(f"(?P<{k}>{rx})" for k, rx in _KINDS))
_CUE = re.compile(
    r"\b(?:going with|go with|went with|gone with|going for|went for|back to|switch\w* to|chang\w* to|"
    r"mov\w* to|push\w* to|bump\w* to|mak\w* it|from now on|instead(?: of)?|rather than|now|anymore|no longer)\b|"
    r"改到|改成|改为|改為|换成|換成|变成|變成|推迟到|提前到|変わ|変更|に変え|바꿨|바뀌|변경|미뤄"
)
# a statement telling a change at all, its values named or not ("the sunday class folded",
# "Japanese update: ...", "swapped with Ana"): search lets such a newer note go first (memcli.retrieval.currency)
_TOLD = re.compile(
    _CUE.pattern + r"|\b(?:changed|swapped|replaced|update|updated|folded|ditched|dropped|"
    # a thing moved in time, its new value anywhere after ("moved all the cell groups to mondays")
    r"moved|pushed|postponed|rescheduled|delayed|brought forward|scrapped|cancell?ed)\b"
    # a count gone down or up ("down to 12"), someone or something new in a role ("my new supervisor is")
    r"|\b(?:down|up) to(?= \d)|\bnew \w+(?: \w+)? (?:is|are)\b"
)
_MONTH_NO = {m[:3]: i for i, m in enumerate(gloss.MONTHS, 1)}
_INSTEAD = re.compile(r"\b(?:instead of|rather than)\b")  # the clearest cue, wherever it is


def values(sentence: str) -> list[tuple[int, str, str]]:
    """(position, kind, value) of each value in a cleaned sentence, in order (a CJK date read
    as its English words first: "12月5号" is "december 5", as gloss.dates reads it)."""
    return [(m.start(), m.lastgroup or "", m.group(0)) for m in _VALUE.finditer(gloss.dates(sentence))]


def _specific(kind: str, value: str) -> bool:
    """A value too particular to be shared by chance: a clock time, a date, a number of two
    digits or more or with a unit ("7:37", "12 may", "75", "72%"); not a weekday or a digit
    ("friday", "4": the vet on Friday and the carpool's Friday are two subjects)."""
    if kind in ("time", "date"):
        return True
    return kind == "number" and (len(re.sub(r"\D", "", value)) >= 2 or not value.isdigit())


@lru_cache(maxsize=8192)  # relate compares the same claim values again and again
def _read(value: str) -> tuple[tuple[int, str, str], ...]:
    """The values a claim's value holds, as `values` reads them."""
    return tuple(values(reading.clean(value)))


def tied(old: str, new: str, a: list[str], b: list[str]) -> bool:
    """Whether statements of words `a` and `b` may be one subject's `old` and `new` values: a clock
    time or a date is particular enough alone, a number needs another word of both."""
    if any(k in ("time", "date") for _, k, _ in _read(old)):
        return True
    return bool(set(a) & set(b) - set(reading.words(old)) - set(reading.words(new)))


def digit(*values: str) -> bool:
    """One of the values is a bare digit ("terminal 1", "4 fermenters"): too common a value to tie two
    clauses by the one word they share."""
    return any(re.fullmatch(r"\d", v.strip()) for v in values)


def held(value: str) -> list[str]:
    """The keys of the values a claim's value holds ("thursdays 2pm": "thursday", "2pm")."""
    return [key(v) for _, _, v in _read(value)]


def key(value: str) -> str:
    """A value as compared across statements: "7:45", "75%" and "75 %" alike, "thursdays" as
    "thursday", a date as month-day ("28 november", "november 28th" and "11月28号": "11-28")."""
    date = re.fullmatch(
        r"(\d{1,2})(?:st|nd|rd|th)? ([a-z]{3})[a-z]*\.?|([a-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?", value.lower()
    )
    if date and (month := _MONTH_NO.get(date.group(2) or date.group(3) or "")):
        return f"{month:02d}-{int(date.group(1) or date.group(4)):02d}"
    return day_stem(re.sub(r"\s+", "", value.lower()).rstrip("%"))


def pairs(sentence: str) -> list[list[str]]:
    """[old, new] candidates of a sentence changing a value without its subject: each value
    with the value of the same kind nearest the change cue on the cue's other side ("the 7:37
    ... going with the 7:45": 7:37 and 7:45 both ways; relate keeps the pair whose first value
    an older claim holds); with no value of its kind before the cue, the first one after it is
    the new value ("改到12月5号了，因为教堂在11月28号有婚礼": 11月28号 -> 12月5号). [] without a
    cue or two values of one kind."""
    s = gloss.dates(reading.clean(sentence))
    cue = _INSTEAD.search(s) or _CUE.search(s)
    if cue is None:
        return []
    found = values(s)
    out: list[list[str]] = []
    for at, kind, old in found:
        if not _specific(kind, old):
            continue
        before = at < cue.start()
        other = [v for a, k, v in found if k == kind and (a >= cue.start()) == before and key(v) != key(old)]
        if not other and not before and not any(k == kind and a < cue.start() for a, k, _ in found):
            other = [v for a, k, v in found if k == kind and a >= cue.start() and key(v) != key(old)][:1]
        if other:
            out.append([old, other[0] if before or len(other) == 1 else other[-1]])
    return out if len(out) <= 4 else []  # a list of many values is a table, not a change


def same_kind(a: str, b: str) -> bool:
    """Two values could be one attribute's: not a clock time against a bare count ("first
    class is 8:30" and "class is only 6" are two subjects that share a word). Values of no
    recognised kind (names) are never told apart here."""
    ka = {k for _, k, _ in _read(a)}
    kb = {k for _, k, _ in _read(b)}
    return not ka or not kb or bool(ka & kb)


_IDENTIFIER_NUMBER = re.compile(r"[A-Za-z][-_/#]?\d$")  # a number written onto letters: part of a name


def same_unit(a: str, b: str) -> bool:
    """Two values of one kind and, for numbers, one unit ("60" and "72"; "25m" and "50m"; not
    "25m" and "50"): the test for one subject said in two different clauses."""
    va, vb = _read(a), _read(b)
    if not va or not vb or va[0][1] != vb[0][1]:
        return False
    if va[0][1] != "number":
        return True
    if any(_IDENTIFIER_NUMBER.search(reading.clean(x)[: v[0][0] + 1]) for x, v in ((a, va), (b, vb))):
        return False  # "se-17" names a bus, "2" counts buses
    return unit(va[0][2]) == unit(vb[0][2])


def unit(value: str) -> str:
    """A number's unit: what is left without its digits ("m" of "25m", "" of "$36" and "75%")."""
    return re.sub(r"[\d.,\s%]", "", value)


def tells_change(sentence: str) -> bool:
    """`sentence` tells that something changed: a cue of `pairs` or a verb of change."""
    return bool(_TOLD.search(reading.clean(sentence)))


_DAY_OF_MONTH = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b")  # "moved to the 21st"


def counted(sentence: str) -> bool:
    """`sentence` holds a number that is no time or date ("down to 12", "$39 a bin")."""
    return any(kind == "number" for _, kind, _ in values(reading.clean(sentence)))


def timed(sentence: str) -> bool:
    """`sentence` holds a clock time, a weekday or a date (a day of the month alone included)."""
    s = reading.clean(sentence)
    return any(kind in ("time", "day", "date") for _, kind, _ in values(s)) or bool(_DAY_OF_MONTH.search(s))
