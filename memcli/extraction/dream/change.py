"""What a statement says changed: the cue that tells a change ("moved to", "no longer", "dropped
the pottery class", "it's now"), the value it says it replaces, and whether it gives an older
statement another value. match.py judges with these; group.py links a change to the statement
holding the value it replaces.
"""

from __future__ import annotations

import re

from memcli.extraction.conversation import rules as conversation_rules
from memcli.extraction.dream.evidence import GENERIC, plain
from memcli.extraction.dream.evidence import names as evidence_names
from memcli.extraction.dream.rules import number_words, stem_of, values
from memcli.extraction.dream.schema import Fact

# giving a thing up names it: its object ("dropped the pottery class", "scrap Wednesdays") or, for a
# thing that ended, its subject ("the Wednesday group at Campanhã closed", "Sunday ice is gone")
_GIVE_UP_VERB = (
    r"\b(?:dropped|dropping|sold|quit|quitting|cancell?ed|cancelling|ditched|ditching|scrap|scrapped|"
    r"gave up(?: on)?|giving up(?: on)?|stopped|done with)\s+"
)
_ENDED_VERB = r"\s+(?:closed|folded|is gone|are gone|was cancell?ed|were cancell?ed|is over|ended|shut down)\b"
_GIVE_UP = (
    _GIVE_UP_VERB + r"(?:the |my |our |his |her |their |a |an )?(?P<given>[\w'’.-]+(?: [\w'’.-]+){0,2}?)"
    r"(?=[,.;:!]|\s+(?:and|but|because|for|since|as|so|entirely|till|until|over|after|due|last|this|today|"
    r"yesterday)\b|$)"
)
_ENDED = r"^(?:the |our |my |his |her |their )?(?P<ended>[\w'’.-]+(?: [\w'’.-]+){0,4}?)" + _ENDED_VERB
# a change in Chinese, Japanese or Korean: the cues currency reads too (index/currency/shift.py; the
# two layers do not import each other). Those before the value ("改成星期四") and after it ("7시로 바꿨어요")
_CJK_AFTER = r"改到|改成|改为|改為|换成|換成|变成|變成|推迟到|提前到|改在"
_CJK_CHANGE = _CJK_AFTER + r"|変わ|変更|に変え|になりました|になった|바꿨|바뀌|변경|미뤄"
_CJK_TO = re.compile(
    rf"(?:{_CJK_AFTER})([^，。、,.!！？?；;]{{1,12}})|((?:\S{{1,12}} ){{0,2}}\S{{1,12}}?)(?:으로|로|に) ?(?:바꿨|바뀌|변경|変え|変わ)"
)
# weekdays in Chinese (星期二, 周四), Japanese (日曜日) and Korean (수요일), as the English days are read
_CJK_DAY = re.compile(r"(?:星期|周|週|礼拜|禮拜)([一二三四五六日天])|([月火水木金土日])曜|([월화수목금토일])요일")
_CJK_DAYS = dict(
    zip(  # 日 and 天 are Sunday in Chinese (星期日, 星期天); 日曜 in Japanese reads the same
        "一二三四五六日天月火水木金土월화수목금토일",
        "mon tue wed thu fri sat sun sun mon tue wed thu fri sat mon tue wed thu fri sat sun".split(),
    )
)
# an explicit change of a value: the old value is named by a statement the node makes
CHANGE = re.compile(
    r"\b(?:no longer|not any ?more|from now on|anymore|now(?=[,.;!]|$)|now (?:[a-z]+s|is|are|has|"
    r"have|takes?|goes|wants?)|is now|are now|(?:has|have) been (?:replaced|moved|changed|switched|raised|lowered|cut|"
    r"retired)|(?:was|were|got|been|is being) (?:replaced|moved|changed|switched|swapped|upgraded|raised|lowered|cut|"
    r"reduced|increased|retired|dropped|stopped|discontinued|postponed|rescheduled|pushed (?:back|out)|renamed)|"
    # "replaced the Brompton", not "gets his hip replaced on Thursday" (a thing replaced, no value)
    r"(?:replaced|swapped|traded|switched) (?:the |my |our |his |her |their |a |an )?"
    r"(?!(?:on|at|in|by|for|during|after|before|last|next|this|today|yesterday|tomorrow)\b)\w|"
    r"(?:moved|moving|switch|switched|switching|changed|changing|raised|lowered|cut|reduced|increased|bumped|upgraded|"
    r"downgraded|postponed|rescheduled|renamed) (?:[\w:.'’-]+ ){0,4}?(?:from|to|back to)\b|"
    # "staff meal moves to 16:30", "going with the m390 instead", "18 hours it is"
    r"(?:moves|changes|switches) to|going with|back to|instead\b|(?<=\w) it is(?=\s*[.!]?\s*$)|"
    # "we rehearse on Tuesdays from next week", "make it HSK 3"
    r"(?:from|starting|as of) (?:next|this coming) (?:week|month|year|term|season|[a-z]+day)\b|(?:^|[.;!] )make it\b|"
    # "bumping the goal to 200", "went up to 75%", "it's now May 26"
    r"(?:bumping|upping|upped|raising|lowering|cutting|pushing|dropping) (?:[\w:.'’-]+ ){0,4}?to\b|"
    r"(?:went|gone|goes|going|came|come) (?:up|down) to\b|(?:it|that)(?:['’]s| is) now\b|"
    # "we're down to 12"; "the new GM, Philippe Roy, starts"; "Pushed again, ..." (a clause without
    # its subject: what was pushed is what the note is about)
    r"\b(?:down|up) to(?= \d)|\bnew [a-z]+(?: [a-z]+)?, (?-i:[A-Z][a-z])|"
    r"(?:^|[.;,!] )(?:pushed|postponed|rescheduled)(?: (?:again|back|out))?(?=[,.;!]| to\b)|"
    # a thing given up: "dropped the pottery class", "sold the Clio", "Sunday ice is gone" (the verb
    # only: the thing it names is what the statement shares with the one it changes)
    + _GIVE_UP_VERB
    + "|"
    + _ENDED_VERB
    + ")|"
    + _CJK_CHANGE,
    re.IGNORECASE,
)
# a change told in a side clause ("since I moved from my home country") changes nothing it is said about
_SIDE_CLAUSE = re.compile(
    r"\b(?:when|because|while|until|once|if|that|who|which|where)\b|"
    r"\b(?:since|after|before) (?:i|we|you|he|she|they|it|my|our)\b",
    re.IGNORECASE,
)
# where a change names the value it replaces: "from X to", "replaced X with", "X was replaced by",
# "no longer likes X"
_OLD_VALUE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bfrom (?P<old>[\w:.,%$'’-]+(?: [\w:.,%$'’-]+){0,2}?) (?:to|back to)\b",
        r"\b(?:replaced|swapped|traded) (?:the |my |our |his |her |their |a |an )?(?P<old>[\w'’.-]+(?: [\w'’.-]+){0,2}?) "
        r"(?:with|for|by)\b",
        r"^(?P<old>.{3,60}?) (?:was|were|has been|have been|got) (?:replaced|swapped|retired)\b",
        r"\bno longer (?:\w+ )?(?P<old>[\w'’.-]+(?: [\w'’.-]+){0,2})",
        # "carprofen was stopped", "..., so the Tuesday run was dropped": the thing stopped
        r"(?:^|[,;] (?:so |and |but )?)(?:the |my |our |his |her |their )?(?P<old>[\w'’.-]+(?: [\w'’.-]+){0,2}) "
        r"(?:was|were|got|has been|have been) (?:stopped|discontinued|dropped|cancell?ed)\b",
    )
]


def raw_words(text: str) -> set[str]:
    """Every word and value of a statement (stopwords out): breaks ties between equally related lines."""
    return {w for w in re.findall(r"\w[\w:]*", plain(text).lower()) if w not in conversation_rules.STOP}


def changes(text: str) -> bool:
    """Whether a statement says, in its main clause, that something changed."""
    m = CHANGE.search(text)
    return m is not None and not _SIDE_CLAUSE.search(text[: m.start()])


_GIVEN_UP = [re.compile(_GIVE_UP, re.IGNORECASE), re.compile(_ENDED, re.IGNORECASE)]


def old_value(text: str) -> set[str]:
    """The words and values of what an explicit change says it replaces ({"30"} of "cut retention
    from 30 to 14 days"); of a thing given up, its values if it has some ({"wed"} of "the
    Wednesday group closed": a day, a name, a number), else its words."""
    line = plain(text)
    for rx in _OLD_VALUE:
        m = rx.search(line)
        if m:
            return raw_words(re.sub(r"['’]s\b", "", m.group("old"))) - GENERIC
    for rx in _GIVEN_UP:
        m = rx.search(line)
        if m:
            thing = re.sub(r"['’]s\b", "", m.group(m.lastgroup or 0))
            return _values(thing) or raw_words(thing) - GENERIC
    return set()


def holds(was: set[str], statement: str) -> bool:
    """Whether `statement` holds every word or value of `was` (old_value)."""
    return bool(was) and was <= raw_words(statement) | _values(statement)


_WHEN = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|"
    r"sun|january|february|march|april|june|july|august|september|october|november|december)s?\b",
    re.IGNORECASE,
)


def _values(text: str) -> set[str]:
    """What a statement pins down: numbers (in digits or words), identifiers, names, days and
    months, code (`SET NX PX`)."""
    text = plain(text)
    code = {w.lower() for chunk in re.findall(r"`([^`]+)`", text) for w in re.findall(r"[\w.:/()-]+", chunk)}
    days = _days(text)
    days |= {_CJK_DAYS[next(g for g in m.groups() if g)] for m in _CJK_DAY.finditer(text)}
    names = {w for w in evidence_names(text) - GENERIC if not _WHEN.fullmatch(w)}
    return set(values(text)) | number_words(text) | names | code | days


def value_changed(new: Fact, old: str) -> bool:
    """Whether `new` gives `old` another value: the value an explicit change says it replaces is
    in `old`, or each holds a value the other does not. A later statement that keeps every value
    of the old one and adds detail ("now takes a per-key lock (`SET NX PX 5000`)" after "under a
    per-key lock (`SET NX PX`)") agrees with it: a refinement, not a correction."""
    change = changes(new.text)
    was = old_value(new.text) if change else set()
    if holds(was, old):
        return True
    # what a statement sets aside ("to Bioinformatics instead of Genome Research") is not a value it holds
    a, b = _values(_INSTEAD_OF.sub("", new.line())), _values(old)
    if change and b:  # "moved to Saturdays" after "on Sundays": the value it changes to is not the old one
        to = _to_values(plain(new.line()))
        if to and not to & b and kinds(to) & kinds(b):
            return True
        # "..., so they train on Thursdays at 7pm now" after "train Wednesdays at 7pm": the clause
        # telling the change names another day than the old statement does
        days, before = _days(_changing_clause(plain(new.line()))), _days(plain(old))
        if days and before and not days & before and kinds(days) & kinds(before):
            return True
    # each holds a value the other does not, of one kind: "fridays 3:30 from next week" changes no
    # "tournament on 18 april" (weekday and time against month and number)
    return bool(kinds(a - b) & kinds(b - a))


_WEEKDAYS = frozenset("mon tue wed thu fri sat sun".split())
_MONTHS = frozenset("jan feb mar apr may jun jul aug sep oct nov dec".split())
# 7pm, 19:30; 7시, 7時, 7点 (Korean, Japanese, Chinese hours)
_CLOCK = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm)|\d{1,2}:\d{2}|\d{1,2}(?:시|時|点|點)(?:半|반|\d{1,2}分)?")
_NUMBER = re.compile(r"[\d.,/%$-]+")


def kinds(vals: set[str]) -> set[str]:
    """The kinds of values (_values): weekday, month, time, number, or a name (anything else)."""
    out = set()
    for v in vals:  # _values gives days and months as three letters
        if v in _WEEKDAYS:
            out.add("weekday")
        elif v in _MONTHS:
            out.add("month")
        elif _CLOCK.fullmatch(v):
            out.add("time")
        elif _NUMBER.fullmatch(v):
            out.add("number")
        else:
            out.add("name")
    return out


def _days(text: str) -> set[str]:
    """The weekdays and months a statement (its plain text) names, as three letters ("Saturdays", "sat" and
    "Saturday" meet)."""
    return {m.group(0).lower()[:3] for m in _WHEN.finditer(text)}


def _changing_clause(line: str) -> str:
    """The clause of a statement that tells its change (clauses split at commas, semicolons and "so")."""
    for clause in re.split(r"[,;]|\bso\b", line):
        if CHANGE.search(clause.strip()):
            return clause
    return ""


_INSTEAD_OF = re.compile(r"\b(?:instead of|rather than)\b[^,.;!]*", re.IGNORECASE)
# a number and its unit: "75% hydration" (%), "200 species", "20 connections" (the noun after it)
_MEASURE = re.compile(r"(\d[\d.,]*)\s*(%|[a-z]{3,}\b)", re.IGNORECASE)
_TO_MEASURE = re.compile(r"\b(?:to|now|is now|are now)\s+(\d[\d.,]*\s*(?:%|[a-z]{3,}\b))", re.IGNORECASE)


def measures(text: str) -> set[tuple[str, str]]:
    """(number, unit) pairs of a statement."""
    return {(n.rstrip(".,"), u.lower().rstrip("s")) for n, u in _MEASURE.findall(plain(text))}


def changes_measure(new: str, old: str) -> bool:
    """A change naming its new value with a unit the old statement measures with another number
    ("went up to 75% hydration" after "I bake at 70% hydration"), or counting what the old one
    counts with another number ("got 4 more point-of-lay hens, so 14 now" after "I keep 10
    kienyeji hens"): the same quantity, changed."""
    if not changes(new):
        return False
    m = _TO_MEASURE.search(plain(new))
    if m is not None and same_quantity(m.group(1), old):
        return True
    return any(thing == was and n != k for n, thing in counts(new) for k, was in counts(old))


# a number and the plural it counts, up to two words between: "10 kienyeji hens", "4 more
# point-of-lay hens" (digits only: "two" of "two weeks" is too often no count of anything)
_COUNT = re.compile(r"\b(\d[\d,]*)\s+(?:[a-z][\w-]*\s+){0,2}?([a-z]{3,}s)\b", re.IGNORECASE)


def counts(text: str) -> set[tuple[str, str]]:
    """(number, what it counts) pairs of a statement: {("10", "hen")} of "I keep 10 kienyeji hens"."""
    return {(n.replace(",", ""), stem_of(w.lower())) for n, w in _COUNT.findall(plain(text))}


def same_quantity(new: str, old: str) -> bool:
    """Both measure something in one unit with other numbers ("flags buses below 82%" and "the
    threshold is now 80%"): what a change of that number replaces, rather than a line sharing words."""
    return any(u == unit and n != number for number, unit in measures(new) for n, u in measures(old))


# the value a change names as the new one: "moved to Saturdays", "raised to 50", "is now 1:52"
# ... or whom it names in a role: "the new head nurse, Oliver Grant, starts"
_TO_VALUE = re.compile(
    r"\b(?:to|now|is now|are now)\s+((?:[\w:.'’-]+ ?){1,3})|\bnew [a-z]+(?: [a-z]+)?, ((?-i:[A-Z][\w'’-]*)(?: (?-i:[A-Z][\w'’-]*)){0,2})",
    re.IGNORECASE,
)


def _to_values(line: str) -> set[str]:
    """The values of what a change names as the new value ("to Saturdays"; "改成星期四"; "수요일 저녁 7시로 바꿨어요")."""
    m = _TO_VALUE.search(line) or _CJK_TO.search(line)
    return _values(next((g for g in m.groups() if g), "")) if m else set()
