"""What a group of statements is about, as a node title: a noun phrase, not a statement's first words.

The candidates are the noun phrases of the statements: runs of words between stopwords,
verbs and punctuation ("Leiden half marathon", "pgbouncer pool", "VS Code"). A verb is a word
right after its subject or an auxiliary ("the user *commutes*", "is *changing*", "Tofu
*eats*"), a past form, or a word the stop lists know; adjectives alone ("Small") and
adverbs never end a title. The phrase that most of the statements share wins, then the one
whose words weigh most (names and identifiers above ordinary words, weekdays and cue words
below), then the first seen: the same statements get the same title run after run.
`subject_title` is the offline answer to "what is this about?"; a model may give a better one.
"""

from __future__ import annotations

import re
from collections import Counter

from memcli.extraction.conversation import rules as conversation_rules
from memcli.extraction.dream.evidence import GENERIC, WEAK
from memcli.extraction.dream.rules import CUE_WORDS, EXTRA_STOP, HAN_KANA, SPEAKER, stem_of

MAX_WORDS = 3
SUBJECT_BONUS = 1.0
LONGER = 0.25
_TOKEN = re.compile(r"(?<![\w'’])(?:[A-Za-z][\w'’./+#-]*[\w+#]|[A-Za-z])|\d[\w:.,/-]*|[,;:()\"“”!?]|\.(?=\s|$)")
_SUBJECTS = frozenset("i we you he she they it user users team who which that".split())
_AUX = frozenset(
    "is am are was were be been being 'm 're 's has have had do does did will would can could should "
    "must may might".split()
)
_ADJECTIVES = frozenset(
    """small big large little new old good bad great quick slow easy hard high low long short main
best better worse full free fast early late open ready nice current daily weekly monthly yearly final local remote
first last next previous same other own whole real single double extra total usual regular simple general common
early quiet busy happy sure able likely favourite favorite dead tired sick sore""".split()
)
# units of measure name no subject ("km" of "runs 10 km")
_UNITS = frozenset(
    """km m cm mm kg g mg lb lbs gb mb kb tb ms sec secs min mins h hr hrs kw kwh mph kmh pm am""".split()
)
# a statement's first word in this list is an instruction, not a subject ("Eat oatmeal at 6:00")
_IMPERATIVE = frozenset(
    """eat drink wake sleep take bring pack put keep get go do run use install open set deploy merge
check add create remove delete restart build push pull configure enable disable update upgrade copy move start stop
call send write make ensure avoid verify test wait click select type press download upload restore export import fill
submit reset clean drain tag release promote roll rollback log stretch warm walk""".split()
)
_NEGATIONS = frozenset("don't doesn't didn't not never won't can't cannot no".split())
# chat words are no nouns: "yea", "pls" and "tho" titled nodes of their own
_CHAT = frozenset(
    "yea yeah yep yup pls plz tho btw lol thx ty ok okay gonna wanna gotta idk ugh imo lmao haha hmm "
    "nah nope ya".split()
) | frozenset(  # contractions typed without the apostrophe: no noun
    "thats whats its im ive id ill dont doesnt didnt cant wont isnt wasnt arent theres heres lets youre theyre".split()
)
# words that name no subject: interjections, someone and something, months and weekdays (when, not what)
_NO_SUBJECT = frozenset(
    "oh ah aw wow hey hmm nobody somebody someone anyone anybody everyone everybody nothing "
    "something anything everything jan feb mar apr jun jul aug sep sept oct nov dec "
    "mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday saturday sunday "
    "mondays tuesdays wednesdays thursdays fridays saturdays sundays january february march april june july "
    "august september october november december".split()
)
# a frequency adverb is followed by the verb: "the user always *takes* the aisle"
_FREQUENCY = frozenset("always usually often sometimes never rarely normally mostly".split())
_BREAK = (
    _CHAT
    | _NO_SUBJECT
    | _FREQUENCY
    | _NEGATIONS
    | frozenset({"either", "too", "instead", "about", "each", "way", "every"})
    | conversation_rules.STOP
    | EXTRA_STOP
    | CUE_WORDS
    | GENERIC
    | _SUBJECTS
    | _AUX
    | frozenset("""their them his her our your my its then also still now just really already very more most""".split())
)


# the label of ingest's gloss ("(keywords: flight, July 12)"): its words may title a node, the label never
_GLOSS = re.compile(r"\((?:keywords|about):", re.I)


def _verb_like(tok: str, prev: str, prev_cap: bool, verb_seen: bool, owner: bool = False) -> bool:
    low = tok.lower()
    if prev in _AUX and low.endswith(("ing", "ed")):
        return True  # "is changing", "was moved"
    if owner:
        return False  # "the user's shift": what someone has is a noun
    if prev in _NEGATIONS or prev in _SUBJECTS or prev in _FREQUENCY:
        return True  # "the user commutes", "doesn't eat", "always takes"
    if low in _IMPERATIVE and re.fullmatch(r"[a-z]+[^s]s", prev):
        return True  # "the buses go out", "the hens eat": a plain verb after a plural subject
    # "Tofu eats", "The ride takes": the first -s word after the subject (not after a number or a
    # code: "the 10B parents' evening", "2 hens" are nouns)
    if re.fullmatch(r"[a-z]+(?<![su])s", tok) and (
        prev_cap or (not verb_seen and prev[:1].isalpha() and prev not in _BREAK)
    ):
        return True
    return bool(re.fullmatch(r"[a-z]+ed", tok)) and len(tok) > 4


def phrases(text: str) -> list[list[str]]:
    """The noun-phrase runs of a statement, as surface words."""
    runs: list[list[str]] = [[]]
    prev, prev_cap, verb_seen, owner = "", False, False, False
    text = _GLOSS.sub("(", SPEAKER.sub("", text.strip()))
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        low = tok.lower().replace("’", "'")
        possessive = low.endswith("'s")
        low = re.sub(r"'s$", "", low)
        verb = tok[0].isalpha() and (
            _verb_like(tok, prev, prev_cap, verb_seen, owner) or (not prev and low in _IMPERATIVE)
        )
        owner = possessive
        verb_seen = verb_seen or verb or low in _AUX
        contracted = re.search(r"['’](?!s$)", tok)  # "I'll", "we're", "don't": no noun
        if not tok[0].isalpha() or low in _BREAK or low in _UNITS or verb or low.endswith("ly") or contracted:
            runs.append([])
        else:
            runs[-1].append(re.sub(r"['’]s$", "", tok))
        prev, prev_cap = low, tok[:1].isupper() and m.start() > 0
    return [r for r in runs if r]


def _capitals(span: tuple[str, ...]) -> int:
    """Capital letters of a phrase as written, a word in capitals (shouted) not counted."""
    return sum(sum(c.isupper() for c in w) for w in span if not (w.isupper() and len(w) > 4))


def _weight(tok: str) -> float:
    low = tok.lower()
    if low in WEAK or stem_of(low) in WEAK:
        return 0.3
    return 1.5 if (tok[:1].isupper() or re.search(r"\d|[a-z][A-Z]|[_.]", tok)) else 1.0


# "hardest", "cheapest", "easiest": a superlative never ends a title (nouns in -est are listed out)
_SUPERLATIVE = re.compile(
    r"(?!(?:inter|requ|for|cont|dig|harv|prot|sugg|manif|conqu|inqu|beh|interest|arr|"
    r"ingest|quest|gu|pri|nest|chest|test|west|vest|pest|zest|crest|jest|rest)est$)[a-z]{3,}est"
)


def _spans(run: list[str]) -> list[tuple[str, ...]]:
    out = []
    for n in range(1, MAX_WORDS + 1):
        for i in range(len(run) - n + 1):
            span = tuple(run[i : i + n])
            last = span[-1].lower()
            if last in _ADJECTIVES or _SUPERLATIVE.fullmatch(last) or span[0].lower() in {"and", "or"}:
                continue
            out.append(span)
    return out


# Chinese, Japanese and Korean write no spaces between words (Korean between phrases): a
# statement's topic is the run before its first particle ("クラスが変わりました": クラス;
# "森大輔さんの店で研修します": 森大輔さん; "사료를 아카나로 바꿨어요": 사료; "林先生的公司": 林先生)
_CJK_BREAK = re.compile(
    r"[\s、。，．！？!?,.:：;；「」『』（）()【】]|(?<=[\u3400-\u9fff\u30a0-\u30ffA-Za-z0-9])[はがをにでのもとへや]|"
    r"[的是在把了每和与]|(?<=[\uac00-\ud7af])(?:에서|으로|은|는|이|가|을|를|에|로|도|와|과|의)(?=\s|$)"
)
_CJK = re.compile(rf"[{HAN_KANA}\uac00-\ud7af]")
# a date or a time says when, not what: "7月6日にサンパウロを出発" is not about 7月6日
_WHEN = re.compile(r"^[\d年月日時分秒号號点半午前後년월일시분]+$")
_CONTENT = re.compile(r"[\u3400-\u9fff\u30a0-\u30ff\uac00-\ud7afA-Za-z0-9]")


def cjk_title(texts: list[str]) -> str:
    """The topic most of the CJK statements share, else the first one's ("" when none has one):
    a run of 2 to 10 characters holding Chinese characters, kana or Hangul, mostly content
    characters (not kana endings)."""
    runs = []
    for t in texts:
        mine = [r for r in _CJK_BREAK.split(_GLOSS.split(SPEAKER.sub("", t.strip()))[0]) if 2 <= len(r) <= 10]
        runs.append(
            [r for r in mine if len(_CONTENT.findall(r)) * 2 > len(r) and _CJK.search(r) and not _WHEN.match(r)]
        )
    found = [r for rs in runs for r in rs[:1]]
    if not found:
        return ""
    support = Counter(r for rs in runs for r in dict.fromkeys(rs))
    return max(found, key=lambda r: (support[r], -found.index(r)))


def subject_title(texts: list[str], least: int = 1) -> str:
    """A noun-phrase title for statements about one subject ("" when none has a noun phrase, or
    none is shared by `least` of them)."""
    bags = [{stem_of(w.lower()) for run in phrases(t) for w in run} for t in texts]
    support: Counter = Counter()
    weight: dict[tuple[str, ...], float] = {}
    surface: dict[tuple[str, ...], tuple[str, ...]] = {}
    order: dict[tuple[str, ...], int] = {}
    for t in texts:
        for i, run in enumerate(phrases(t)):
            for span in _spans(run):
                key = tuple(stem_of(w.lower()) for w in span)
                lead = SUBJECT_BONUS if i == 0 else 0.0  # a sentence's first phrase is usually its subject
                if key in surface:
                    weight[key] = max(weight[key], sum(_weight(w) for w in span) + lead)
                    if _capitals(span) > _capitals(surface[key]):
                        surface[key] = span  # "SoH report" over "soh report"
                    continue
                surface[key], order[key] = span, len(order)
                support[key] = sum(1 for b in bags if set(key) <= b)
                weight[key] = sum(_weight(w) for w in span) + lead
    if not surface:
        return cjk_title(texts) if least <= 1 else ""
    # support first (the phrase most statements share); a longer phrase is worth a little more support
    best = max(
        surface,
        key=lambda k: (
            support[k] * (1 + LONGER * (len(k) - 1)),
            weight[k] if len(k) > 1 or weight[k] > 0.3 else 0.0,
            -order[k],
        ),
    )
    if support[best] < least:
        return ""
    words = list(surface[best])
    if all(w.isupper() for w in words) and any(len(w) > 4 for w in words):
        words = [w.lower() for w in words]  # "JAPAN TRIP" is shouted, not an acronym
    title = " ".join(words)
    return title[:1].upper() + title[1:] if not re.search(r"[a-z][A-Z]|[_.]", words[0]) else title
