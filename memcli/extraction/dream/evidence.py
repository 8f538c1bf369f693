"""Whether two statements are about one subject: shared words, and meaning when vectors are given.

Words: the content words and identifiers two statements share, each weighed by how much it
says about a subject. Names and identifiers (Brompton, handleWebSocketReconnect, FG830)
weigh 1.5; ordinary content words 1; weekday, month and cue words ("prefers", "Tuesdays"),
and words that many digest nodes use, 0.5; generic words ("user", "team", "today") and the
speakers' names nothing. Meaning: the cosine of the statements' embeddings (the job embeds
`plain(text)` for every fact and candidate statement in one batch and hands the vectors in).

`Evidence.link` turns both into a score, or None when they are too weak for one subject;
the thresholds (WORDS, MEANING) were chosen on the labelled set bench/dream_set/ (see
bench/dream_eval.py): precision first, since a digest node is recalled as knowledge and a
wrong merge misleads every later search, while a missed merge only leaves two nodes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memcli.extraction.conversation import glossary
from memcli.extraction.conversation import rules as conversation_rules
from memcli.extraction.dream.rules import CUE_WORDS, EXTRA_STOP, HAN_KANA, SPEAKER, stem_of

# Thresholds, chosen on bench/dream_set/set.yaml (bench/dream_set/README.md has the sweep): the
# middle of the region where pair precision stayed >= 0.95 with recall >= 0.7 (local model).
WORDS = 2.5  # without vectors: shared word weight that links (a name and a word, or three words)
MEANING = {
    "alone": 0.55,  # cosine that links on meaning alone; each unit of shared word weight lowers it by
    "per_word": 0.08,  # this much (a name: 0.43, two content words: 0.39), down to
    "floor": 0.25,  # the cosine below which even shared words do not link (they are incidental)
    "centroid": 0.30,  # cosine with the mean of a cluster that a fact joining it must reach
    "join": 0.50,  # cosine with the mean of a cluster of two or more that joins it without a pair link
    "context": 0.10,  # cosine that links two facts under one heading of an agent's note
    # the same under one heading of a conversation note: a conversation wanders, and one session's
    # "Facts" hold the brewer's job, her brew days and the Helles's temperature (cosine 0.34 apart)
    "session": 0.40,
}
MARGIN = 0.10  # a runner-up cluster this close to the best one: the fact is in doubt
WORD_BONUS = 0.1  # per unit of shared word weight, added to the cosine to rank clusters
SAME_FACT = 0.7  # Jaccard of word bags: the same statement in other words
SAME_MEANING = 0.92  # cosine: the same statement in other words
COMMON_NODES = (5, 0.05)  # a word in at least this many nodes and this share of them is weak

# words that say who or when, not what: never evidence of a subject
GENERIC = frozenset(
    """user users team teams household assistant someone everybody today yesterday tomorrow tonight day days
week weeks weekly month months monthly year years yearly time times thing things way ways lot lots bit part
minute minutes hour hours second seconds new old next last first one two three four five six ten also now still
just really every each need needs want wants said says say told asked note notes""".split()
)
WEAK = CUE_WORDS | frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
thursdays fridays saturdays sundays january february march april may june july august september october november
december morning evening afternoon night nights start starts started use uses used using work works""".split()
)
# ingest's stopwords less the nouns among them: "planning" names a subject
STOP = conversation_rules.STOP - {"plan", "planned", "planning", "draft"}
# a side clause ("after Lena goes to bed", "when it rains") says when or why, not what the statement is about
_SIDE = re.compile(r"(?<=\w) (?:after|before|when|while|until|since|because|once|whenever) (?=\w)", re.IGNORECASE)
# "Wei and I fly to Osaka", "Kenji takes her to the pool": the name is a companion or the one
# acting for the subject, who is the user or someone the statement before names
_NOT_LEAD = re.compile(r"(?:\w+: )?[A-Z][a-z][\w'’-]* (?:(?:and|&) (?:I|me|the user)|\w+s (?:her|him|them))\b")
_GLOSS_LABEL = re.compile(r"\((?:keywords|about):")  # ingest's glosses: "(keywords: flight, May 2)"
_USER = re.compile(r"\b(?:[Tt]he user(?:['’]s)?|[Tt]heir) ")


def _latin(inner: str) -> re.Pattern[str]:
    """A Latin word with `inner` marks inside it; it ends where CJK begins ("Wambui上一年级" names
    Wambui: a word character alone would run on)."""
    w = rf"[^\W{HAN_KANA}\uac00-\ud7af]"
    return re.compile(rf"[A-Za-z](?:{w}|[{inner}])*(?:{w}|!)|[A-Za-z]")


_TOKEN = _latin("'’.&!-")  # a name's token keeps its apostrophe ("O'Brien")
_LATIN_WORD = _latin(".&!-")
_IDENT = re.compile(r"[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|_|\w\.\w")


def plain(text: str) -> str:
    """A statement without its "Speaker: " prefix and without "the user" (a node's statements all
    speak of the user: those words would make any two of them alike): what is embedded and compared."""
    text = _USER.sub("", SPEAKER.sub("", text.strip()))
    return text[:1].upper() + text[1:]


def speaker(text: str) -> str:
    m = SPEAKER.match(text.strip())
    return m.group(1) if m else ""


def _names(text: str) -> set[str]:
    """Lowercased names and identifiers: capitalised words inside a sentence, camelCase, words
    with digits or inner dots ("Node.js"), acronyms."""
    out = set()
    for m in _TOKEN.finditer(text):
        tok = m.group(0).rstrip(".!")
        i = m.start() - 1  # the character before the token, spaces skipped (no prefix copy: a long line)
        while i >= 0 and text[i].isspace():
            i -= 1
        starts = i < 0 or text[i] in ".!?:;\"'(“"
        if _IDENT.search(tok) or (tok[:1].isupper() and not starts) or (len(tok) > 1 and tok.isupper()):
            out.add(tok.lower())
    return out


def names(text: str) -> set[str]:
    """Lowercased names and identifiers of a statement (see `_names`)."""
    return _names(text)


# Chinese, Japanese and Korean are written without spaces between words: two statements about
# one thing share pairs of characters (送货 "delivery", 研修 "training", 林先生 "Mr Lin"), which
# count as half a word each; pairs of kana alone are grammar (ました, です) and do not count.
_CJK_RUN = re.compile(rf"[{HAN_KANA}\uac00-\ud7af]{{2,}}")
_KANA = re.compile(r"^[\u3040-\u309f\u30fc]+$")
CJK_PAIR = 0.5


def cjk_pairs(text: str) -> set[str]:
    """The character pairs of a statement's Chinese, Japanese or Korean runs."""
    return {
        run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1) if not _KANA.match(run[i : i + 2])
    }


# a person named with a title: 林先生, 周老师, 田中先生, 森大輔さん; the surname is the Han run before
# the title when it stands apart (Japanese: kana or punctuation around it), else its last character
# (Chinese runs on: 下个星期开始是周老师 is 周)
_TITLED = re.compile(
    r"([\u3400-\u9fff]+)(先生|老师|老師|医生|醫生|教授|小姐|女士|太太|阿姨|师傅|師傅|さん|様|くん|ちゃん)"
)


def cjk_names(text: str) -> set[str]:
    """People named with a title in Chinese or Japanese, as written (林先生, 森大輔さん)."""
    return {(run if len(run) <= 3 else run[-1]) + title for run, title in _TITLED.findall(text)}


def is_pair(word: str) -> bool:
    """A word of a bag that is a pair of CJK characters (cjk_pairs), not a word of its own."""
    return len(word) == 2 and bool(_CJK_RUN.fullmatch(word)) and not _KANA.match(word)


def mostly_cjk(text: str) -> bool:
    """Written mostly in Chinese, Japanese or Korean: the default English model places any two such
    statements close, so their meaning is not compared (words decide)."""
    cjk = sum(len(r) for r in _CJK_RUN.findall(text))
    return cjk > 0 and cjk >= len(re.findall(r"[A-Za-z]", text))


def words(text: str, skip: frozenset[str] = frozenset(), known: frozenset[str] = frozenset()) -> dict[str, float]:
    """stem -> weight of the words that can tell a subject (before the digest-wide discount)."""
    text = re.sub(r"['’]s\b", "", plain(text))  # "Lena's" is Lena
    if "(keywords:" not in text and _CJK_RUN.search(text):
        # what ingest glosses a CJK statement with (a note written by hand or `mem remember` has
        # none): "研修は4月12日から" shares "training" with "the stage in Fukuoka starts April 5"
        text += " (keywords: " + ", ".join(glossary.gloss(text)) + ")"
    text = _GLOSS_LABEL.sub("(", text)  # the label is no word of the statement: every gloss has it
    names = _names(text) | proper_names(text, known)
    out: dict[str, float] = dict.fromkeys(cjk_pairs(text), CJK_PAIR) | dict.fromkeys(cjk_names(text), 1.5)
    side = _SIDE.search(text)
    for m in _LATIN_WORD.finditer(text):
        tok = m.group(0).rstrip(".!")
        aside = side is not None and m.start() >= side.end()
        low = tok.lower()
        # a compound counts by its parts ("e-bike" is a bike), unless they are too short to say anything
        parts = [p for p in re.split(r"[-.&!]", low) if len(p) > 2 and not p.isdigit()] or [low]
        whole = parts == [low]
        for part in parts:
            if part.isdigit() or (len(part) < 3 and not (whole and _IDENT.search(tok))):
                continue
            if part in GENERIC or part in skip or part in STOP or part in EXTRA_STOP:
                continue
            key = stem_of(part)
            if key in GENERIC or key in skip:
                continue
            weight = 0.5 if part in WEAK or key in WEAK or aside else 1.5 if low in names else 1.0
            out[key] = max(out.get(key, 0.0), weight)
    return out


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class Link:
    score: float  # to rank clusters: the cosine plus a bonus for shared words, or the word weight
    cosine: float | None
    weight: float  # shared word weight
    context: bool = False  # made by the note context (one heading of one note), not by the texts alone
    explicit: bool = False  # an explicit change of a value the member holds ("dropped the pottery class")


def proper_names(text: str, known: frozenset[str] = frozenset()) -> set[str]:
    """Capitalised words ("Marco", "Bangalore"; not acronyms or identifiers): inside a sentence, or
    at its start when the word is `known` as a name (seen capitalised inside a sentence)."""
    out = set()
    for m in re.finditer(r"(?<![\w'’.-])[A-Z][a-z][a-z'’-]+", text):
        if text[m.end() : m.end() + 1].isalnum():
            continue
        low = re.sub(r"['’]s$", "", m.group(0).lower())
        if low in STOP or low in EXTRA_STOP or low in GENERIC or low in WEAK:
            continue  # "The Three-Body Problem": a title's "The" is no name
        word = stem_of(low)
        before = text[: m.start()].rstrip()
        if (before and before[-1] not in ".!?:;\"'(“") or word in known:
            out.add(word)
    return out


TOPIC_WORDS = 3  # a name among a statement's first words is what it is about


def _topics(text: str) -> set[str]:
    """Stems of the words a statement is about: its identifiers, and its first words."""
    out = set()
    for i, m in enumerate(_TOKEN.finditer(plain(text))):
        tok = m.group(0).rstrip(".!")
        if i < TOPIC_WORDS or _IDENT.search(tok):
            out.add(stem_of(re.sub(r"['’]s$", "", tok.lower())))
    return out


def _dot(va, vb) -> float | None:
    if va is None or vb is None:
        return None
    return float(sum(x * y for x, y in zip(va, vb))) if isinstance(va, list) else float(va @ vb)


class Evidence:
    """Word bags of every statement seen (cached), digest-wide word counts, and the vectors."""

    def __init__(
        self,
        vectors: Mapping[str, object] | None = None,
        skip: frozenset[str] = frozenset(),
        node_bags: list[set[str]] | None = None,
        texts: Sequence[str] = (),
    ):
        """`texts`: every statement of the run (facts and node statements), where names are learnt."""
        self.vectors = vectors or None
        self.skip = skip
        names = {w for t in texts for w in proper_names(plain(t))}
        for t in texts:  # "Priya Raman is ..." starts with a name
            m = re.match(r"([A-Z][a-z][\w'’-]*) [A-Z][a-z]", plain(t))
            if m and proper_names(f"x {m.group(1)}"):
                names.add(stem_of(m.group(1).lower()))
        self.names = frozenset(names)
        self._bags: dict[str, dict[str, float]] = {}
        self._nameless: dict[str, str] = {}  # every pair compared asks again: read each statement once
        counts: dict[str, int] = {}
        for bag in node_bags or []:
            for w in bag:
                counts[w] = counts.get(w, 0) + 1
        least, share = COMMON_NODES
        n = len(node_bags or [])
        self.common = frozenset(w for w, c in counts.items() if c >= least and c >= share * n)
        self.titles: dict[str, str] = {}  # note path -> its title ("# Titration practical prep")

    @property
    def semantic(self) -> bool:
        return self.vectors is not None

    def bag(self, text: str) -> dict[str, float]:
        if text not in self._bags:
            raw = words(text, self.skip, self.names)
            self._bags[text] = {w: (min(v, 0.5) if w in self.common else v) for w, v in raw.items()}
        return self._bags[text]

    def substance(self, text: str) -> float:
        return sum(self.bag(text).values())

    def vector(self, text: str):
        """The statement's embedding; None for a CJK statement (mostly_cjk: words decide there)."""
        if self.vectors is None or mostly_cjk(text):
            return None
        return self.vectors.get(plain(text))

    def cosine(self, a: str, b: str) -> float | None:
        va, vb = self.vector(a), self.vector(b)
        return _dot(va, vb)

    def nameless(self, text: str) -> str:
        """The statement as embedded without its names (identifiers stay: "MySQL" is what a statement
        is about), or "" when it names nothing: what it says apart from whom or where."""
        if text not in self._nameless:
            self._nameless[text] = self._without_names(text)
        return self._nameless[text]

    def _without_names(self, text: str) -> str:
        t = plain(text)
        found = _names(t)
        known = proper_names(t, self.names)

        def name(m: re.Match) -> bool:
            tok = m.group(0).rstrip(".!")
            low = tok.lower()
            if low in WEAK or _IDENT.search(tok):
                return False  # "on Wednesdays" says when, not who or where
            return low in found or stem_of(re.sub(r"['’]s$", "", low)) in known

        out = " ".join(_TOKEN.sub(lambda m: "" if name(m) else m.group(0), t).split())
        return out if out != t else ""

    def meaning(self, a: str, b: str) -> float | None:
        """The cosine of two statements; when they share a name neither is about ("Utawala" in "takes
        the matatu from Utawala" and "plays keeper for Utawala Queens"), at most that of their
        nameless forms: the default model puts any two sentences with one rare name close
        (0.50 there, 0.25 without it)."""
        c = self.cosine(a, b)
        if c is None or not self.shares_name(a, b):
            return c
        apart = _dot(self.nameless_vector(a), self.nameless_vector(b))
        return c if apart is None else min(c, apart)

    def nameless_vector(self, text: str):
        """The embedding of the nameless form (the statement's own when it names nothing)."""
        n = self.nameless(text)
        return self.vectors.get(n) if n and self.vectors is not None else self.vector(text)

    def shares_name(self, a: str, b: str) -> bool:
        """They share a name that neither statement is about: not an identifier, not among the first
        words of either ("Lena has swimming lessons", "The user's daughter Lena starts school")."""
        x, y = self.bag(a), self.bag(b)
        shared = {w for w in x.keys() & y.keys() if x[w] >= 1.5 and y[w] >= 1.5}
        return bool(shared - _topics(a) - _topics(b))

    def shared(self, a: str, b: str) -> float:
        x, y = self.bag(a), self.bag(b)
        return sum(min(x[w], y[w]) for w in x.keys() & y.keys())

    def same(self, a: str, b: str) -> bool:
        """The same statement, perhaps in other words."""
        if " ".join(plain(a).lower().split()).rstrip(".!") == " ".join(plain(b).lower().split()).rstrip(".!"):
            return True
        if jaccard(self.bag(a), self.bag(b)) >= SAME_FACT:
            return True
        c = self.cosine(a, b)
        return c is not None and c >= SAME_MEANING

    def link(self, a: str, b: str, context: str | None = None) -> Link | None:
        """How surely `a` and `b` are about one subject; None when the evidence is too weak.
        `context`: both are facts under one heading of one note, an agent's ("note") or a
        conversation's ("session"): likely, not surely, about one thing."""
        sa, sb = speaker(a), speaker(b)
        if sa and sb and sa != sb and "Assistant" not in (sa, sb):
            return None  # two people's statements are about two people
        weight = self.shared(a, b)
        if self.same(a, b):
            return Link(2.0 + weight, self.cosine(a, b), weight)
        if not self.semantic:
            if weight >= WORDS:
                return Link(weight, None, weight)
            if context == "note" and weight >= 1.0 and not self.named_apart(a, b):
                return Link(weight, None, weight, context=True)
            return None
        c = self.meaning(a, b)
        if c is None:  # no vector to compare (a CJK statement): shared words decide, as without vectors
            if weight >= WORDS:
                return Link(weight, None, weight)
            # under one heading of an agent's note ("Trip to Taiwan": 我爸爸7月5日滿80歲… and "flies
            # EVA to Taipei"), as the lowest cosine would have it for two statements in one language
            if context == "note" and not self.named_apart(a, b):
                return Link(weight, None, weight, context=True)
            return None
        m = MEANING
        if c >= max(m["floor"], m["alone"] - m["per_word"] * min(weight, 3.0)):
            return Link(c + WORD_BONUS * weight, c, weight)
        least = m["context"] if context == "note" else m["session"] if context == "session" else None
        if least is not None and (c >= least or (weight >= 1.0 and c >= m["floor"])) and not self.named_apart(a, b):
            return Link(c + WORD_BONUS * weight, c, weight, context=True)
        return None

    def leading_name(self, text: str) -> str:
        """The name a statement starts with ("Priya Raman is ...", "Miso needs ...", "Greg's dad
        ..."), or ""."""
        m = re.match(r"([A-Z][a-z][\w'’-]*)", plain(text))
        if m and _NOT_LEAD.match(text):
            return ""
        word = stem_of(re.sub(r"['’]s$", "", m.group(1).lower())) if m else ""
        if word and re.match(r"[A-Z][a-z]+['’]s ", plain(text)) and word not in STOP | GENERIC | WEAK:
            return word  # a possessive at the start is someone's, even a name not seen before
        return word if word in self.names else ""

    def named_apart(self, a: str, b: str) -> bool:
        """One is about someone or something named ("Priya works ..."), and the other names others but
        not that one ("The 1:1 with Marco ..."): under one heading, two subjects."""
        for x, y in ((a, b), (b, a)):
            lead = self.leading_name(x)
            names = proper_names(plain(y), self.names) - WEAK
            if lead and names and lead not in names:
                return True
        return False
