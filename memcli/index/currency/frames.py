"""Value frames: a short clause holding one value, its other content words the subject.

The last way memcli.index.currency.subjects reads a claim, for what no shaped pattern
recognises: "its a 25m pool" and "it's a 50m pool" both set the frame "pool"; "ochieng says
shift starts 5:30 not 6" sets "shift start" to 5:30, replacing 6 (who said it is left out). A
frame is one token of the subject key, so only an identical frame is the same subject
(docs/currency.md).
"""

from __future__ import annotations

import re

from memcli.index.currency.compare import DAYS, FILLER, MONTHS, NOT_SUBJECT, Claim
from memcli.index.currency.reading import words

# words of a clause that name no subject: time adverbs, hedges, chat, light verbs ("still going
# for 200" and "going with plainsman m390" share no subject)
_FRAME_NOISE = frozenset(
    "every like about around only just really also already ok yeah yes lol tho morn even "
    "today tonight yesterday tomorrow going gonna doing got".split()
)
_VALUE_TOKEN = re.compile(rf"^(?:[\w.:/-]*\d[\w.:/-]*|(?:{DAYS}|{MONTHS})s?)$")
_PLACE = re.compile(r"\s(?:at|near|by|from)\s[^\d]*$")  # a trailing place without a value
# who said it: "ochieng says shift starts 5:30" sets the shift, not something of ochieng's
_REPORTED = re.compile(r"^(?:[a-z]+ )?(?:says|said|reckons|thinks|told (?:me|us))(?: that)? ")
# the value it replaces: "starts 5:30 not 6"
_NOT_PREVIOUS = re.compile(r"(?<=\d) not (?P<old>[\w.:/-]*\d[\w.:/-]*)\b")
# units a value is counted in: alone they name no subject
_MEASURES = frozenset(
    "day week month year hour minute min second sec night time lap length rep km mile "
    "meter metre kilometer person people euro dollar "
    "yr yrs hr hrs h mins secs wk wks c f kg g lb lbs cm mm m ml l hl litre liter per".split()  # "4 yrs", "134 °C", "25 hl", "20 g per litre"
)
# verbs telling what was done: a clause with one is an event ("did a 10k trial", "ran 18km")
_DONE = frozenset("did ran swam raced rode walked hiked cycled finished completed".split())
MAX_FRAME_WORDS = 8  # longer clauses say more than one value of one thing


def framed(clause: str) -> Claim | None:
    """A short clause holding one value: its other content words are its subject, compared as a
    whole ("its a 25m pool" and "it's a 50m pool": the frame "pool"; "a long run on sunday" and
    "so long runs on saturdays": "long run"). The frame is one token of the key, so only an
    identical frame is the same subject: "pool size is 20" is not "a 25m pool"."""
    clause = _PLACE.sub("", _REPORTED.sub("", clause))  # "a 25m pool at sportcentrum kralingen": the pool
    replaced = _NOT_PREVIOUS.search(clause)
    if replaced:
        clause = clause[: replaced.start()] + clause[replaced.end() :]
    toks = [t.strip("'.-!?") for t in clause.split()]
    toks = [t for t in toks if t and t not in FILLER]
    if not toks or len(toks) > MAX_FRAME_WORDS:
        return None
    if _DONE & set(toks):
        return None  # "did a 5k trial": an event, not a value that holds until changed
    flags = [bool(_VALUE_TOKEN.match(t)) and t != "1:1" for t in toks]
    # a unit after a number is the value's ("a 25 hl brewhouse": 25 hl of a brewhouse), not a subject
    flags = [f or (k > 0 and flags[k - 1] and t in _MEASURES) for k, (t, f) in enumerate(zip(toks, flags))]
    if sum(1 for k, f in enumerate(flags) if f and (k == 0 or not flags[k - 1])) != 1:
        return None  # one value, maybe of several words ("tuesday 14:00"), or no frame
    frame = [w for t, f in zip(toks, flags) if not f for w in words(t) if w not in FILLER | _FRAME_NOISE]
    if not frame or frame[0] in NOT_SUBJECT or set(frame) <= _MEASURES:
        return None  # "10 days" and "90 days" are two quantities, not one subject
    value = " ".join(t for t, f in zip(toks, flags) if f)
    old = replaced.group("old") if replaced else ""
    return Claim(("~" + " ".join(sorted(set(frame))),), " ".join(dict.fromkeys(frame)), value, old)
