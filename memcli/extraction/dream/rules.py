"""Offline dream rules: the facts of the changed notes, their buckets, and their words. No model.

A fact is a bullet or a sentence of a daily note, kept verbatim (speaker prefixes of
ingest notes recognised); acknowledgements, small talk and, in a conversation, requests to
the assistant are no facts (extraction/conversation/chatter.py). Its bucket comes from cues: preferences and identity are
personal; imperative or numbered steps and "how to" are procedure; the rest is wiki.
A resource note (frontmatter `source_resource`) gives facts only from what it quotes of
the file: its structural sections and lines (the file's link, shape, counts) are skipped.
Which facts belong together, and in which node, is decided by extraction/dream/group.py.
"""

from __future__ import annotations

import re
from collections import Counter

from memcli.extraction.conversation import chatter, rules
from memcli.extraction.dream import voice
from memcli.extraction.dream.node import LONGEST_STATEMENT
from memcli.extraction.dream.schema import Fact, Topic, Unit
from memcli.extraction.resource import digest as resource_digest

MIN_WORDS = 3
HAN_KANA = "\u3040-\u30ff\u3400-\u9fff"  # Chinese characters and Japanese kana: no spaces between words
SPEAKER = re.compile(r"^([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}): ")  # "User: ", "Dr Haddad: "
_IMAGE = re.compile(r"\s*\[image: [^\]]*\]")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
EXTRA_STOP = frozenset(
    """gonna wanna gotta yeah yep nope stuff pretty kinda sorta awesome amazing glad happy cool
super totally hey thanks thank cause lol wow haha bit little big lots tons honestly literally basically actually
definitely probably especially sometimes often usually recently lately already everyone anyone people person
guy guys girl girls hope hoping hoped glad wish feel feeling felt makes making keep kept getting doing done
able sure true right wrong best better worse worst fun cool nice lovely beautiful great good bad sad went gone
try tried trying started finally anyway bunch whole thing kind hard easy lucky spoke speak talk talked talking
taking show showed shown important share shared sharing provide provided together bring brought seeing moment
help helped helping forget forgot check checked creating create understand understanding difference different
mean means meant remind reminds reminded found find finding told tell telling looked learn learned learning
stay stayed keep keeps whole special huge tough awesome incredible super favorite fave chat chatting catch
mel toward towards another forward closer""".split()
)
# cue and time words say what kind of statement it is or when, not what it is about: never a unit's subject
CUE_WORDS = frozenset(
    """keen passionate interested favorite favourite prefer prefers preferred fond like likes liked
love loves loved enjoy enjoys enjoyed hate hates dislike want wants wanted wish rather usually always never
name live lives work works working mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday
friday saturday sunday january february march april june july august september october november december weekend
tonight morning evening afternoon""".split()
)
IMPERATIVE = re.compile(
    r"^(?:please )?(?!check out\b)(?:run|use|install|open|set|deploy|merge|check|add|create|remove|delete|restart|"
    r"build|push|pull|"
    r"configure|enable|disable|update|upgrade|copy|move|start|stop|call|send|write|make sure|ensure|avoid|don't|"
    r"do not|never|always|roll back|rollback|promote|tag|release|verify|test|wait|log in|login|click|select|type|"
    r"press|go to|download|upload|backup|back up|restore|export|import|fill|submit|reset|clean|drain)\b",
    re.IGNORECASE,
)
PROCEDURE = re.compile(
    r"\bhow to\b|\bsteps? (?:to|for)\b|\brunbook\b|\bprocedure\b|\bworkflow\b|"
    r"\b(?:first|then|after that|finally),? (?:run|open|click|install|set|use|deploy|merge|check)\b"
    r"|步骤|流程|先.{1,12}再",
    re.IGNORECASE,
)
PERSONAL = re.compile(
    "|".join(
        [
            rules.CUES["Preferences"].pattern,
            rules.IDENTITY.pattern,
            r"\b(?:i|we)(?:'m| am| are|'re) (?:keen on|passionate about|interested in|into)\b",
            r"\bmy (?:goal|dream|hobby|passion|job|role|team|partner|wife|husband|kids?)\b",
            r"\b(?:i|we) (?:always|never|usually) \w+",
            r"\bconvention\b",
            r"\bthe user (?:prefers|likes|wants|is|works|lives)\b",
        ]
    ),
    re.IGNORECASE,
)
SECTION_BUCKET = {
    "preferences": "personal",
    "procedures": "procedure",
    "procedure": "procedure",
    "steps": "procedure",
    "how to": "procedure",
}
BUCKET_RANK = {"personal": 0, "procedure": 1, "wiki": 2}


def _prose(lines: list[str]) -> list[tuple[str, bool, bool]]:
    """(text, is_bullet, numbered) items of a note body: bullets whole, paragraphs as sentences."""
    out: list[tuple[str, bool, bool]] = []
    para: list[str] = []
    fence = False

    def flush():
        if para:
            out.extend((s, False, False) for s in rules.sentences(" ".join(para)))
            para.clear()

    for raw in lines:
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fence = not fence
            flush()
            continue
        if fence or not line or line.startswith(("#", "<!--", "|")):
            flush()
            continue
        line = line.lstrip("> ").strip()
        if _BULLET.match(line):
            flush()
            out.append((_BULLET.sub("", line), True, bool(_NUMBERED.match(line))))
        else:
            para.append(line)
    flush()
    return out


def _resource_lines(lines: list[str]) -> list[str]:
    """A resource note's lines with those about the file blanked: structural sections, the
    source line, counts of what was left out."""
    out, skip = [], False
    for line in lines:
        if line.startswith("## "):
            skip = resource_digest.structural_section(line[3:])
            out.append(line)
        else:
            out.append("" if skip or resource_digest.structural_line(line) else line)
    return out


def facts_of(path: str, body: str, meta: dict) -> list[Fact]:
    """The statements of one note worth considering (day index lines and links skipped)."""
    spoken = bool(meta.get("session_id") or meta.get("source_conversation"))
    # an errand's note (ingest: the chat only asked the assistant for something) founds no node
    section, out, errand = "", [], bool(meta.get("errand"))
    lines = body.split("\n")
    if meta.get("source_resource"):
        lines = _resource_lines(lines)
    heads = {i: ln.lstrip("#").strip().lower() for i, ln in enumerate(lines) if ln.startswith("## ")}
    start = 0
    for i in [*sorted(heads), len(lines)]:
        # ingest's `## Topics` is what the chat was about, keywords for search: no statement
        items = _prose(lines[start:i]) if section != "topics" else []
        for k, (text, _bullet, numbered) in enumerate(items):
            if text.endswith(":") and k + 1 < len(items) and items[k + 1][2]:
                continue  # "Updated plan (in order):": what the steps below are, no statement of its own
            speaker = ""
            m = SPEAKER.match(text) if spoken else None
            if m and text[m.end() :]:
                speaker, text = m.group(1), text[m.end() :]
            text = _IMAGE.sub("", text).strip()
            if "[[" in text or not text or text.endswith(("?", "？")) or len(text) > LONGEST_STATEMENT:
                continue
            # a run of Chinese or Japanese is many words: count its characters in pairs
            size = len(re.findall(rf"[^\W{HAN_KANA}]+", text)) + len(re.findall(rf"[{HAN_KANA}]{{2}}", text))
            if size < MIN_WORDS or chatter.chit_chat(text):
                continue
            if spoken and (not speaker or voice.is_user(speaker)) and chatter.is_request(text):
                errand = True
                continue  # "Write me a limerick about ...": a request, nothing to remember
            # after a request, the text to translate or the pick among rephrasings is the task's material
            out.append(Fact(text, path, speaker, section, numbered, errand))
        section, start = heads.get(i, ""), i + 1
    return out


def bucket_of(fact: Fact) -> str:
    if fact.numbered or PROCEDURE.search(fact.text) or IMPERATIVE.match(fact.text):
        return "procedure"
    if SECTION_BUCKET.get(fact.section) == "procedure":
        return "procedure"
    if PERSONAL.search(fact.text) or SECTION_BUCKET.get(fact.section) == "personal":
        return "personal"
    return "wiki"


def _stem(w: str) -> str:
    """Plural to singular, roughly (kids -> kid, parties -> party, teaches -> teach)."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ys", "as", "os")):
        return w[:-1]
    return w


def stem_of(w: str) -> str:
    """A crude stem for matching words across forms: plural, -ing, -ed and a final e go
    ("commuting", "commutes" and "commute" meet at "commut"; "running" and "runs" at "run");
    accents too ("aréna" and "arena")."""
    w = _stem(rules.unaccented(w))
    for end in ("ing", "ed"):
        if w.endswith(end) and len(w) - len(end) >= 3:
            w = w[: -len(end)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]  # runn -> run, but not "call" -> "cal"
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") and not w.endswith(("ee", "ie")) else w


def terms(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Content words of a statement, in order (stopwords, names in `skip` and bare numbers dropped);
    Han text as bigrams."""
    words = re.findall(r"[a-z][a-z'’-]*[a-z]|[a-z]", text.lower().replace("’", "'"))
    words = [_stem(w) for w in words if w not in rules.STOP and w not in EXTRA_STOP]
    out = [
        w
        for w in words
        if len(w) > 2 and "'" not in w and w not in rules.STOP and w not in EXTRA_STOP and w not in skip
    ]
    for run in re.findall(r"[\u3400-\u9fff]+", text):
        out += [run[i : i + 2] for i in range(len(run) - 1) if not set(run[i : i + 2]) & rules.HAN_STOP]
    return list(dict.fromkeys(out))


def values(text: str) -> list[str]:
    """Numbers and identifiers (with digits) of a statement: they count as content too."""
    return re.findall(r"\b\w*\d[\w.:/-]*\b", text.lower())


# a count or frequency in words is the value it names ("Ten minutes" then "five minutes"; "every
# third weekend" then "every 4th weekend"); "one" alone and "first" name no number often enough
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split(),
        start=2,
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100"}
_ORDINALS = {"second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th", "other": "2nd"}
_NUMBER = re.compile(rf"\b(?:(?P<n>{'|'.join(_NUMBER_WORDS)})|every (?P<o>{'|'.join(_ORDINALS)}))\b", re.IGNORECASE)


def number_words(text: str) -> set[str]:
    """The numbers a statement writes in words, as digits ({"10"} of "Ten minutes", {"3rd"} of
    "every third weekend")."""
    return {
        _NUMBER_WORDS[m.group("n").lower()] if m.group("n") else _ORDINALS[m.group("o").lower()]
        for m in _NUMBER.finditer(text)
    }


def contexts(notes: list[tuple[str, str, dict]]) -> dict[str, str]:
    """path -> "note" for the notes an agent wrote (a heading there names what its lines are
    about), "session" for conversation notes (their headings are kinds of statement, and one
    conversation touches several things); resource notes and day pages have none."""
    out = {}
    for path, _body, meta in notes:
        if meta.get("source_resource") or re.search(r"/\d{4}-\d{2}-\d{2}\.md$", path):
            continue
        out[path] = "session" if meta.get("session_id") or meta.get("source_conversation") else "note"
    return out


def titles(notes: list[tuple[str, str, dict]]) -> dict[str, str]:
    """path -> the note's title (its first `# ` heading), for the notes that have one."""
    out = {}
    for path, body, _meta in notes:
        m = re.search(r"^# +(.+)$", body, re.M)
        if m:
            out[path] = m.group(1).strip()
    return out


def speaker_words(facts: list[Fact]) -> frozenset[str]:
    return frozenset(w for f in facts for w in re.findall(r"[a-z]+", f.speaker.lower()))


def topic(unit: Unit, skip: frozenset[str] = frozenset()) -> Topic:
    counts = Counter(t for f in unit.facts for t in terms(f.text, skip))
    keywords = [t for t, _ in counts.most_common(5)]
    title = unit.name.replace("-", " ")
    first = unit.facts[0].line() if unit.facts else unit.summary
    return Topic(
        title[:1].upper() + title[1:],
        f"{len(unit.facts)} {unit.bucket} statement(s) about it in the changed notes",
        first[:300],
        keywords,
        unit.paths,
    )
