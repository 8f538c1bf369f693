"""Which subject a statement sets, and to what value: the offline rules of currency.

Pure functions over one sentence (docs/currency.md). A *claim* is (subject key, value): the
subject is the thing and attribute the sentence sets ("half-marathon goal", "editor",
"1:1", "dog food"), the value what it is set to ("1:52", "Zed", "thursdays 11:00"). Only
sentences that state a value in a recognisable shape give a claim: a possessive copula ("my
editor is Zed", "The user's half-marathon goal is now 1:52."), a change ("I'm changing my
goal to 1:52", "she moved our 1:1 to thursdays", "switched editor from Helix to Zed"), a
use-as ("uses Zed as their editor"), an apposition ("Sanne de Vries, my manager"), a bare
copula whose value looks like one (a number, a time, a weekday or month: "pool size is 20"),
the Chinese/Japanese/Korean change shapes (把X换成Y, XはAからBに変わりました, X를 Y로 바꿨다),
and a value frame: a short clause holding one value, its other words the subject ("its a 25m
pool"). `retired` reads what a statement gives up ("the pegasus are retired", "i left helix").
Sentences merely sharing a word ("the swimming pool" and "the connection pool") name
different subjects, so neither supersedes the other.

Whether two claims share a subject or a value is memcli.index.currency.compare's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memcli.index.currency import compare, gloss
from memcli.index.currency.compare import DAYS, FILLER, MONTHS, NOT_SUBJECT, SOFT, Claim, subject_key
from memcli.index.currency.frames import framed
from memcli.index.currency.reading import clean, words

_WORD = r"[a-z0-9](?:[\w'’/+-]|[:.](?=\w))*"  # a colon or dot only inside ("1:1", "v2.1")
_NP = rf"{_WORD}(?: {_WORD}){{0,3}}?(?: (?:of|for) (?:the |my |our )?{_WORD}(?: {_WORD})?)?"
_DET = r"(?:my|our|the|his|her|their|[a-z]+'s)"  # "tofu's dog food" as "my dog food"
_CHANGE = r"(?:chang|switch|mov|rais|lower|bump|increas|decreas|reduc|push|shift|updat|set|cut|drop)\w*"
# words after a verb of change that are no subject ("moved back to", "switched over to")
_ADVERB = r"(?:back|over|up|down|in|out|away|off|on|it|them|everything|things|stuff|that|this|him|her|us|me|from)"
_CHAT = r"(?:ugh|ok|okay|so|oh|lol|well|yeah|also|btw|and|but|anyway)"  # chat words opening a terse line
# where a value stops: a clause boundary, or words that only say when the change happened
_VALUE = r"(?P<val>[^,;.!?()]+?)"
_STOP = (
    r"(?=\s*(?:$|[,;.!?()]|\s(?:because|since|so|but|and|as|when|after|before|until|from now on|now|then|"
    r"this (?:morning|week|month|year)|today|yesterday|last (?:week|month)|for now|instead|again|though|tho)\b))"
)

# (pattern, needs a value-like value, what the sentence must hold for the pattern to match): tried
# in order, the first match wins. The last is a cheap test of the cleaned sentence (a substring
# or two) that saves running the pattern over the nine statements in ten that set no value: the
# rules cost ~70 us a statement before, and a vault has a hundred thousand (docs/currency.md, cost).
_RULES = [
    (
        re.compile(rf"\b{_CHANGE} (?:{_DET} )?(?P<attr>{_NP}) from (?P<old>[^,;.!?()]+?) to {_VALUE}{_STOP}"),
        False,
        lambda s, f: f.change and " from " in s and " to " in s,
    ),
    (
        re.compile(rf"\b{_CHANGE} {_DET} (?P<attr>{_NP}) to {_VALUE}{_STOP}"),
        False,
        lambda s, f: f.change and " to " in s,
    ),
    # terse: "helen moved lab meeting to thursdays", "deadline pushed to 25 june" (no determiner)
    (
        re.compile(rf"\b{_CHANGE} (?!{_ADVERB}\b)(?P<attr>{_NP}) to {_VALUE}{_STOP}"),
        False,
        lambda s, f: f.change and " to " in s,
    ),
    (
        re.compile(
            rf"(?:\b{_DET} |(?:^|[:;,.] )(?:{_CHAT} )*)(?P<attr>{_NP}) (?:has |have |was |were |got |is |are )?"
            rf"{_CHANGE} (?:again )?(?:from (?P<old>[^,;.!?()]+?) )?to {_VALUE}{_STOP}"
        ),
        False,
        lambda s, f: f.change and " to " in s,
    ),
    # "grant due 18 june": a deadline (compare.subject_key reads "due" as "deadline")
    (
        re.compile(
            rf"(?:\b{_DET} |(?:^|[:;,.] )(?:{_CHAT} )*)(?P<attr>{_NP}) (?:is |are |was |were )?(?P<due>due) "
            rf"(?:on |by |in )?{_VALUE}{_STOP}"
        ),
        True,
        lambda s, f: f.value_like and " due " in s,
    ),
    (
        re.compile(rf"\b{_CHANGE} (?:from (?P<old>[^,;.!?()]+?) )?to (?P<val>{_NP}) as {_DET} (?P<attr>{_NP}){_STOP}"),
        False,
        lambda s, f: f.change and " to " in s and " as " in s,
    ),
    (
        re.compile(rf"\b(?:use|uses|using|used|run|runs|running|on) (?P<val>{_NP}) as {_DET} (?P<attr>{_NP}){_STOP}"),
        False,
        lambda s, f: " as " in s,
    ),
    (
        re.compile(
            rf"\b(?:my|our) (?P<attr>{_NP}) (?:is|are|was|were|became|has become|will be|stays|remains)"
            rf"(?: now| currently| still| officially)?(?: at| on| in)? {_VALUE}{_STOP}"
        ),
        False,
        lambda s, f: ("my " in s or "our " in s) and any(c in s for c in _COPULAS),
    ),
    (
        re.compile(rf"^(?:\(\s*)?(?P<val>[a-z][\w'’ .-]{{1,40}}?), (?:my|our) (?P<attr>{_NP})\s*\)?\W*$"),
        False,
        lambda s, f: ", my " in s or ", our " in s,
    ),
    (
        re.compile(
            rf"(?:^|[:;,.] )(?:the )?(?P<attr>{_NP}) (?:is|are|stays|remains)(?: now| currently)?(?: at| on)? {_VALUE}{_STOP}"
        ),
        True,
        lambda s, f: f.value_like and any(c in s for c in _COPULAS[:2] + _COPULAS[-2:]),
    ),
]
# someone in a role: "tevita runs the crew", later "sione's running the bay harvest crew": the
# subject is who leads the thing (a key of its own: the crew's size is another subject), the value
# the person
_ROLE = re.compile(
    r"(?:^|[:;,.] |\b(?:so|and|but|now|then) )(?P<val>[a-z][\w'’-]*(?: [a-z][\w'’-]*)?)(?:['’]s| is| are)? "
    r"(?:now |currently |still |also )?(?:runs|running|leads|leading|manages|managing|coaches|coaching|"
    r"teaches|teaching|heads|chairs|chairing|organi[sz]es|organi[sz]ing|hosts|hosting) "
    rf"(?:the |our |my |his |her |their )(?P<attr>{_NP})"
    r"(?=\s*(?:$|[,;.!?()]|\s(?:this|next|last|from|on|at|in|for|while|when|because|since|so|but|and|now|again|today|these)\b))"
)
_ROLE_VERBS = frozenset(
    "runs running leads leading manages managing coaches coaching teaches teaching heads chairs chairing "
    "organises organising organizes organizing hosts hosting".split()
)
LEAD = "·lead"  # the key word of a role's subject: never a word of a text
_NOT_PERSON = frozenset("user users team who which that someone everyone nobody one".split())
_CHANGE_STEMS = tuple("chang switch mov rais lower bump increas decreas reduc push shift updat set cut drop".split())
# (the stems of _CHANGE, as substrings)
_COPULAS: tuple[str, ...] = tuple(
    f" {c} " for c in ("is", "are", "was", "were", "became", "has become", "will be", "stays", "remains")
)


class _Cues(NamedTuple):
    change: bool  # a verb of change may be there
    value_like: bool  # a number, a time, a weekday or a month is there


def _cues(s: str) -> _Cues:
    return _Cues(any(c in s for c in _CHANGE_STEMS), bool(_VALUE_LIKE.search(s)))


_INSTEAD = re.compile(r"\binstead of (?P<old>[^,;.!?()]+?)(?=\s*(?:$|[,;.!?()]|\s(?:so|because|since|but)\b))")
_CJK_RULES = [  # (pattern, the characters it needs: one of each group)
    (
        re.compile(r"把(?P<attr>[^，。,、！？]{1,12}?)(?:换成|改成|改为|换为|变成)了?(?P<val>[^，。,、！？（(]{1,24})"),
        (("把",),),
    ),
    (
        re.compile(
            r"(?:の)?(?P<attr>[^はがの、。！？\s]{1,12})[はが](?:(?P<old>[^、。！？]{1,16})から)?"
            r"(?P<val>[^、。！？]{1,16}?)に(?:変わ|変更|な[りっ]|替え)"
        ),
        (("は", "が"), ("に",)),
    ),
    (
        re.compile(r"(?P<attr>[^\s을를,.]{1,12})[을를] (?P<val>[^\s,.]{1,16}?)(?:으로|로) (?:바꿨|바꾸|변경|옮겼)"),
        (("을", "를"), ("로",)),
    ),
]
_VALUE_LIKE = re.compile(rf"\d|\b(?:{DAYS}|{MONTHS})s?\b")
_DIGIT = re.compile(r"\d")
_DAY_OR_MONTH = re.compile(
    "mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
)  # (_VALUE_LIKE's, fast)


# Words one of the patterns needs as a word of its own (spaces on both sides): a claim's "to",
# "as", "from" or copula, a verb of giving up (_RETIRED) or of adopting (memcli.index.kinds).
# A sentence holding none, no value-like token and none of the CJK patterns' particles can set nothing: `may_set` says
# so in a microsecond, where the patterns take tens (a vault has a hundred thousand statements).
_CUES = (
    frozenset(
        "from to as is are was were became become be stays remains my our got been went retired ditched "
        "sold returned stopped no gave switched replaced left quit dropped bought ordered picked chose "
        "moved 'm am started now upgraded off going sticking switching old".split()
    )
    | _ROLE_VERBS
)


def may_set(sentence: str) -> bool:
    """False when `sentence` can set no value, give up nothing and adopt nothing."""
    s = clean(sentence)
    if not _CUES.isdisjoint(s.split()) or _DIGIT.search(s) or (_DAY_OR_MONTH.search(s) and _VALUE_LIKE.search(s)):
        return True
    return not s.isascii() and any(all(any(c in s for c in group) for group in needs) for _, needs in _CJK_RULES)


def claim(sentence: str) -> Claim | None:
    """The first subject and value `sentence` sets, or None when it sets none the rules recognise."""
    found = claims(sentence)
    return found[0] if found else None


def claims(sentence: str) -> list[Claim]:
    """Every subject and value `sentence` sets: the first shaped claim (the table in the module
    docstring), then a value frame (`framed`) of each clause it does not cover."""
    s = clean(sentence)
    if not s:
        return []
    if " as of " in s or "from " in s or "starting " in s:
        s = _FROM_WHEN.sub("", s).strip()
    shaped, span = _shaped(s)
    if shaped is not None and _CJK.search(shaped.label):  # its subject in English, for older English notes
        shaped = shaped._replace(also=tuple(dict.fromkeys(w for k in gloss.keywords(sentence) for w in words(k))))
    out = [shaped] if shaped is not None else []
    at = 0
    for clause in _CLAUSE.split(s) if _VALUE_LIKE.search(s) else ():  # a frame holds a value (framed)
        start = s.find(clause, at)
        at = start + len(clause)
        if span is not None and start < span[1] and at > span[0]:
            continue
        f = framed(clause)
        if f is not None:
            out.append(f)
    return out


def _role(s: str) -> tuple[Claim | None, tuple[int, int] | None]:
    """Who leads a thing ("tevita runs the crew"): the person is the value."""
    if _ROLE_VERBS.isdisjoint(s.split()):
        return None, None
    for m in _ROLE.finditer(s):
        who, attr = re.sub(r"['’](?:s|m|re)$", "", m.group("val")), m.group("attr")  # "sione's", "i'm"
        names = who.split()
        if names[0] in NOT_SUBJECT or _NOT_PERSON & set(names) or _DIGIT.search(who):
            continue
        key = subject_key(attr)
        if key and not compare.is_frame(key):
            return Claim(tuple(sorted({*key, LEAD})), attr.strip(" .,:;"), who), m.span()
    return None, None


def _shaped(s: str) -> tuple[Claim | None, tuple[int, int] | None]:
    for rule, needs in _CJK_RULES if _CJK.search(s) else ():
        m = rule.search(s) if all(any(c in s for c in group) for group in needs) else None
        if m:
            old = gloss.dates(m.groupdict().get("old") or "")
            return _made(m.group("attr"), gloss.dates(m.group("val")), old), m.span()
    cues = _cues(s)
    role = _role(s)
    if role[0] is not None:
        return role
    for rule, value_like, may in _RULES:
        if not may(s, cues):
            continue
        for m in rule.finditer(s):
            val = m.group("val")
            if value_like and not _VALUE_LIKE.search(val):
                continue
            old = m.groupdict().get("old") or ""
            if not old and (inst := _INSTEAD.search(s, m.end("val"))):
                old = inst.group("old")
            made = _made(m.group("attr") + (" due" if m.groupdict().get("due") else ""), val, old)
            if made is not None:
                return made, m.span()
    return None, None


# from when it holds: "from next monday shift starts 5:30" (a weekday that is no value of it)
_FROM_WHEN = re.compile(
    rf"\b(?:from|starting|as of) (?:next |this |the )?(?:today|tomorrow|tonight|now on|week|month|(?:{DAYS})s?)\b(?! to\b)"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CLAUSE = re.compile(r"[,;!?()]|:\s|\s(?:and|but|so|because|since|though|tho|while)\s")
_GIVEN_UP = re.compile(r"^(?:now )?(?:retired|sold|returned|replaced|gone|dead|over|switched off|decommissioned)\b")


# "is moving everything to dagster", "is just thinking": an act, not a value ("is dying" stays one)
_DOING = re.compile(r"^(?:(?:just|still|already|really|actually|busy|also)\s+[a-z]{2,}ing\b|[a-z]{2,}ing\s+(?!\S*\d))")


def _made(attr: str, value: str, old: str) -> Claim | None:
    key = subject_key(attr)
    if re.search(r"\b(?:is|are|was|were)\b", attr):
        return None  # "not yet, my team is just thinking": a clause, not a subject
    if all(re.fullmatch(r"\d[\d.,]*[a-z]{0,2}", w) for w in key):
        return None  # "my 1500m is only 30 lengths": a quantity, not a subject
    value = _trimmed(value)
    head = words(attr)[-1:]
    if head and not _VALUE_LIKE.search(value) and words(value)[-1:] == head:
        return None  # "my team is a small team": a description of the subject, not a value of it
    if not key or not value or len(value) > 60 or _GIVEN_UP.match(value) or _DOING.match(value):
        return None  # "my pegasus shoes are retired": no value, a thing given up (retired())
    return Claim(key, attr.strip(" .,:;"), value, _trimmed(old))


def _trimmed(value: str) -> str:
    words = value.strip(" '\"").split()
    while words and words[-1] in FILLER:
        words.pop()
    while words and words[0] in ("a", "an", "the"):
        words.pop(0)
    return " ".join(words)


_THING = rf"{_WORD}(?: {_WORD}){{0,3}}?"  # a thing given up: a name, no "of"/"for" phrase
_THING_END = r"(?=\s*(?:$|[,;.!?()]|\s(?:for|with|to|in|on|at|after|because|since|so|but|and|when|last|this|today|till|until)\b))"
# (nor a time: "got the user's old tuesday slot" gives up no tuesday)
_NOT_OLD = r"(?:days?|times?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|slots?|friends?|school|town|city|man|lady|age|habits?|ways?|ones?|self|place|boss|manager|teacher|coach|tutor|doctor|colleagues?|neighbou?rs?|[a-z]*mates?|partner|girlfriend|boyfriend|team|job)"
_BARE = r"(?!(?:off|at|to|by|from)\b)" + _WORD + r"(?: (?!(?:off|at|to|by|from)\b)" + _WORD + r"){0,3}?"  # no place
# a change naming only its values, made by the user: "i officially switched from avimark to ezyvet"
# gives up avimark ("the 1:1 moved from 9 to 10" names its subject: a claim, not a thing given up)
_SWITCH = re.compile(
    rf"(?:^|[:;,.] |\b(?:i|we)(?: (?:have|had|'ve|just|finally|officially|fully|now|all))* )"
    rf"(?:{_CHAT} )*(?:switch|mov|chang|migrat|transition)\w* (?:(?:over|across|everything|it|us) )?from "
    rf"(?:{_DET} )?(?P<x>(?!(?:it|them)\b){_BARE}) to (?:{_DET} |a |an )?{_VALUE}{_STOP}"
)
_RETIRED = [  # a value given up: "the pegasus are retired", "i left helix", "stopped using airflow"
    re.compile(
        rf"(?:^|[:;,.] |\b(?:{_DET}|and|but|so) )(?P<x>{_THING}) (?:is|are|was|were|got|has been|have been) "
        r"(?:now )?(?:retired|sold|returned|replaced|gone for good|switched off|decommissioned)\b"
    ),
    re.compile(rf"(?:^|[:;,.] |\b(?:{_DET}|and|but|so) )(?P<x>{_THING}) went back to\b"),
    re.compile(
        rf"\b(?:i|we) (?:have |had |'ve )?(?:retired|ditched|sold|returned|stopped using|no longer use|"
        rf"gave up on|switched off|got rid of|replaced) (?:{_DET} )?(?P<x>{_THING}){_THING_END}"
    ),
    # "left" and "quit" give up a name ("i left helix"), never a place with an article ("left the office")
    re.compile(
        rf"\b(?:i|we) (?:have |'ve )?(?:left|quit|dropped) (?P<x>(?!(?:the|a|an|my|our|work|home|early|it|"
        rf"them|for)\b){_THING}){_THING_END}"
    ),
    # a terse line without its "I": "dropped the tuesday class", "ditched mamba" ("dropped the kids off" drops none)
    re.compile(
        rf"(?:^|[:;,.] |\b(?:i|we) (?:have |'ve )?)(?:{_CHAT} )*(?:ditched|dropped|sold|quit|stopped using|gave up on|"
        rf"got rid of|no longer using) (?:{_DET} )?(?P<x>(?!(?:it|them|by|in|off|out)\b){_BARE}){_THING_END}"
        r"(?!\s(?:off|at)\b)"
    ),
    # "done with the train till october", "the user is done with mamba" ("done with it" gives up nothing)
    re.compile(
        rf"(?:^|[:;,.] |\b(?:i|we)(?:'m| am| is| are|'re)? )(?:{_CHAT} )*(?:so |finally |officially )?done with "
        rf"(?:{_DET} )?(?P<x>(?!(?:it|them|that|this|work|school)\b){_BARE}){_THING_END}"
    ),
    _SWITCH,
    # a thing in use before the one now, by its head ("than the old hilux ever did"); not "the old days", "my old boss"
    re.compile(rf"\b(?:my|our|the|his|her|their) old (?P<x>(?!{_NOT_OLD}\b){_WORD})(?![\w'’/+-])"),
    # "switching her off the hills", "took him off the kibble", "came off the pill"
    re.compile(
        rf"\b(?:switch|tak|took|com|came|get|got|wean)\w* (?:(?:him|her|them|me|us|it) )?off (?:{_DET} )?(?P<x>{_THING}){_THING_END}"
    ),
]


# the words one of _RETIRED needs, as substrings: most statements hold none and skip the patterns
_GIVING_UP = tuple(
    "retir|sold|return|replac|gone for good|switched off|decommission|went back to|ditch|stopped using|no longer us|"
    "gave up on|got rid of|left|quit|dropped| off |done with|old ".split("|")
)
_SWITCHING = ("switch", "mov", "chang", "migrat", "transition")  # _SWITCH's verbs, before its " from "


def given_up(sentence: str) -> tuple[str, str]:
    """(what `sentence` says was given up, else ""; what it switched to when it is a change naming
    only its values, else ""): "the pegasus are retired" -> ("pegasus", ""), "i switched from
    avimark to ezyvet" -> ("avimark", "ezyvet"), which relate gives the subject of the older
    claim holding avimark."""
    s = clean(sentence)
    switching = " from " in s and any(v in s for v in _SWITCHING)
    for rule in _RETIRED if switching or any(c in s for c in _GIVING_UP) else ():
        m = rule.search(s)
        if m:
            x = re.sub(rf"^{_DET} ", "", _trimmed(m.group("x")))
            if x and x.split()[0] not in NOT_SUBJECT and words(x):
                return x, _trimmed(m.group("val")) if rule is _SWITCH else ""
    return "", ""


def retired(sentence: str) -> str:
    """What `sentence` says was given up ("the pegasus are retired" -> "pegasus"), else ""."""
    return given_up(sentence)[0]


_ADOPT = re.compile(
    r"\b(?:use|uses|using|used|switched to|moved to|bought|got|stick with|sticking with|chose|"
    r"picked|went with|run in|runs in|running in)\s+(?:the |a |an |my |our |his |her |their )?$"
)


def holds(sentence: str, thing: str) -> bool:
    """`sentence` holds `thing` as what it is about or uses: among the first words of a clause ("the xps is
    from 2021", "runs in nike pegasus 40 shoes") or after a verb of use ("stick with the pegasus"); "vs
    code was too slow on the xps" only mentions it."""
    want = [w for w in words(thing) if w not in SOFT]
    if not want:
        return False
    s = clean(sentence)
    for clause in _CLAUSE.split(s):
        have = words(clause)
        if set(want) <= set(have) and want[0] in have[:3]:  # among the clause's first words
            return True
    return any(_ADOPT.search(s[: m.start()]) for m in re.finditer(rf"\b{re.escape(thing)}\b", s))
