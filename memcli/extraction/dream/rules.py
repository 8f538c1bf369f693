"""Offline dream extraction: units from the fact lines of the changed notes. No model, no guessing.

A fact is a bullet or a sentence of a daily note, kept verbatim (speaker prefixes of
ingest notes recognised). Its bucket comes from cues: preferences and identity are
personal; imperative or numbered steps and "how to" are procedure; the rest is wiki.
Facts of one speaker and bucket are grouped by the content word most of them share
(the unit's subject); the strongest groups become units named `<speaker>-<word>`,
so the same subject gets the same name run after run.
"""

from __future__ import annotations

import re
from collections import Counter

from memcli.extraction.conversation import rules
from memcli.extraction.dream.node import slugify
from memcli.extraction.dream.schema import Fact, Topic, Unit

MAX_FACTS_PER_UNIT = 6
MIN_WORDS = 3
_SPEAKER = re.compile(r"^([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}): (.+)$")
_IMAGE = re.compile(r"\s*\[image: [^\]]*\]")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
EXTRA_STOP = frozenset("""gonna wanna gotta yeah yep nope stuff pretty kinda sorta awesome amazing glad happy cool
super totally hey thanks thank cause lol wow haha bit little big lots tons honestly literally basically actually
definitely probably especially sometimes often usually recently lately already everyone anyone people person
guy guys girl girls hope hoping hoped glad wish feel feeling felt makes making keep kept getting doing done
able sure true right wrong best better worse worst fun cool nice lovely beautiful great good bad sad went gone
try tried trying started finally anyway bunch whole thing kind hard easy lucky spoke speak talk talked talking
taking show showed shown important share shared sharing provide provided together bring brought seeing moment
help helped helping forget forgot check checked creating create understand understanding difference different
mean means meant remind reminds reminded found find finding told tell telling looked learn learned learning
stay stayed keep keeps whole special huge tough awesome incredible super favorite fave chat chatting catch
mel toward towards another forward closer""".split())
# cue and time words say what kind of statement it is or when, not what it is about: never a unit's subject
CUE_WORDS = frozenset("""keen passionate interested favorite favourite prefer prefers preferred fond like likes liked
love loves loved enjoy enjoys enjoyed hate hates dislike want wants wanted wish rather usually always never
name live lives work works working mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday
friday saturday sunday january february march april june july august september october november december weekend
tonight morning evening afternoon""".split())
IMPERATIVE = re.compile(
    r"^(?:please )?(?!check out\b)(?:run|use|install|open|set|deploy|merge|check|add|create|remove|delete|restart|"
    r"build|push|pull|"
    r"configure|enable|disable|update|upgrade|copy|move|start|stop|call|send|write|make sure|ensure|avoid|don't|"
    r"do not|never|always|roll back|rollback|promote|tag|release|verify|test|wait|log in|login|click|select|type|"
    r"press|go to|download|upload|backup|back up|restore|export|import|fill|submit|reset|clean|drain)\b",
    re.IGNORECASE)
PROCEDURE = re.compile(r"\bhow to\b|\bsteps? (?:to|for)\b|\brunbook\b|\bprocedure\b|\bworkflow\b|"
                       r"\b(?:first|then|after that|finally),? (?:run|open|click|install|set|use|deploy|merge|check)\b"
                       r"|步骤|流程|先.{1,12}再", re.IGNORECASE)
PERSONAL = re.compile("|".join([rules.CUES["Preferences"].pattern, rules.IDENTITY.pattern,
                                r"\b(?:i|we)(?:'m| am| are|'re) (?:keen on|passionate about|interested in|into)\b",
                                r"\bmy (?:goal|dream|hobby|passion|job|role|team|partner|wife|husband|kids?)\b",
                                r"\b(?:i|we) (?:always|never|usually) \w+", r"\bconvention\b",
                                r"\bthe user (?:prefers|likes|wants|is|works|lives)\b"]), re.IGNORECASE)
SECTION_BUCKET = {"preferences": "personal", "procedures": "procedure", "procedure": "procedure",
                  "steps": "procedure", "how to": "procedure"}
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


def facts_of(path: str, body: str, meta: dict) -> list[Fact]:
    """The statements of one note worth considering (day index lines and links skipped)."""
    spoken = bool(meta.get("session_id") or meta.get("source_conversation"))
    section, out = "", []
    lines = body.split("\n")
    heads = {i: ln.lstrip("#").strip().lower() for i, ln in enumerate(lines) if ln.startswith("## ")}
    start = 0
    for i in [*sorted(heads), len(lines)]:
        for text, _bullet, numbered in _prose(lines[start:i]):
            speaker = ""
            m = _SPEAKER.match(text) if spoken else None
            if m:
                speaker, text = m.group(1), m.group(2)
            text = _IMAGE.sub("", text).strip()
            if "[[" in text or not text or text.endswith(("?", "？")):
                continue
            size = len(re.findall(r"\w+", text))
            if size < MIN_WORDS or (rules.SMALL_TALK.search(text) and size < 8):
                continue
            out.append(Fact(text, path, speaker, section, numbered))
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


def terms(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Content words of a statement, in order (stopwords, names in `skip` and bare numbers dropped);
    Han text as bigrams."""
    words = re.findall(r"[a-z][a-z'’-]*[a-z]|[a-z]", text.lower().replace("’", "'"))
    words = [_stem(w) for w in words if w not in rules.STOP and w not in EXTRA_STOP]
    out = [w for w in words if len(w) > 2 and "'" not in w and w not in rules.STOP and w not in EXTRA_STOP
           and w not in skip]
    for run in re.findall(r"[\u3400-\u9fff]+", text):
        out += [run[i:i + 2] for i in range(len(run) - 1) if not set(run[i:i + 2]) & rules.HAN_STOP]
    return list(dict.fromkeys(out))


def values(text: str) -> list[str]:
    """Numbers and identifiers (with digits) of a statement: they count as content too."""
    return re.findall(r"\b\w*\d[\w.:/-]*\b", text.lower())


def weight(fact: Fact) -> float:
    w = 1.0 + (1.5 if bucket_of(fact) != "wiki" else 0.0)
    if values(fact.text) or re.search(r"(?<=\w )[A-Z][a-z]", fact.text):
        w += 0.5
    return w


def extract(notes: list[tuple[str, str, dict]], max_units: int) -> tuple[list[Unit], list[Topic]]:
    """Units and topic candidates from [(path, body, frontmatter)] of the changed inputs."""
    facts = [f for path, body, meta in notes for f in facts_of(path, body, meta)]
    speakers = frozenset(w for f in facts for w in re.findall(r"[a-z]+", f.speaker.lower()))
    groups: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        groups.setdefault((f.speaker, bucket_of(f)), []).append(f)
    found: list[tuple[float, int, Unit]] = []
    for (speaker, bucket), members in groups.items():
        for anchor, cluster in _clusters(members, speakers):
            cluster = sorted(cluster, key=lambda f: -weight(f))[:MAX_FACTS_PER_UNIT]
            cluster.sort(key=lambda f: facts.index(f))
            who = "" if speaker.lower() in ("", "assistant") else speaker
            listed = len(cluster) > 1 and all(f.numbered and f.section == cluster[0].section for f in cluster)
            name = slugify(f"{who} {anchor}" if who else cluster[0].section if listed and cluster[0].section
                           else _noun_name(anchor, cluster, speakers))
            summary = " ".join(f.line().rstrip(".") + "." for f in cluster)[:1200]
            paths = list(dict.fromkeys(f.path for f in cluster))
            score = sum(weight(f) for f in cluster)
            found.append((score, facts.index(cluster[0]), Unit(name, bucket, summary, paths, cluster)))
    found.sort(key=lambda t: (-t[0], t[1]))
    units: list[Unit] = []
    for _, _, unit in found:
        if all(u.name != unit.name or u.bucket != unit.bucket for u in units):
            units.append(unit)
        if len(units) == max_units:
            break
    return units, [topic(u, speakers) for u in units]


def _clusters(members: list[Fact], skip: frozenset[str]) -> list[tuple[str, list[Fact]]]:
    """Greedy: the word most remaining facts share makes a cluster; strong singletons follow."""
    vocab = {id(f): terms(f.text, skip) for f in members}
    out = []
    lists: dict[tuple[str, str], list[Fact]] = {}
    for f in members:
        if f.numbered:
            lists.setdefault((f.path, f.section), []).append(f)
    for (_path, section), steps in lists.items():
        if len(steps) > 1:  # a numbered list is one procedure, named by its heading
            heading = terms(section, skip)
            anchor = (heading or sorted(vocab[id(steps[0])], key=_specific, reverse=True) or ["steps"])[0]
            out.append((anchor, steps))
    taken = {id(f) for _, steps in out for f in steps}
    left = [f for f in members if id(f) not in taken]
    while left:
        counts: Counter = Counter(t for f in left for t in vocab[id(f)] if t not in CUE_WORDS)
        if not counts:
            break
        best, n = max(counts.items(), key=lambda kv: (kv[1], -_first(kv[0], left, vocab)))
        if n < 2:
            break
        cluster = [f for f in left if best in vocab[id(f)]]
        out.append((best, cluster))
        left = [f for f in left if best not in vocab[id(f)]]
    for f in left:
        subject = sorted((t for t in vocab[id(f)] if t not in CUE_WORDS), key=_specific, reverse=True)
        if subject and (bucket_of(f) != "wiki" or weight(f) > 1.0):  # a plain remark alone is not a unit
            out.append((subject[0], [f]))
    return out


def _specific(term: str) -> tuple[bool, int]:
    """Nouns make subjects: a word not shaped like an adverb, participle or adjective, then the
    longest (usually the most specific: "pottery" over "kid")."""
    return not term.endswith(("ly", "ed", "ing", "ful", "ous", "ive", "ible", "able")), len(term)


def _first(term: str, facts: list[Fact], vocab: dict) -> int:
    return next(i for i, f in enumerate(facts) if term in vocab[id(f)])


def _noun_name(anchor: str, cluster: list[Fact], skip: frozenset[str]) -> str:
    counts = Counter(t for f in cluster for t in terms(f.text, skip) if t != anchor)
    second = max(counts.items(), key=lambda kv: kv[1])[0] if counts else ""
    return f"{anchor} {second}".strip()


def topic(unit: Unit, skip: frozenset[str] = frozenset()) -> Topic:
    counts = Counter(t for f in unit.facts for t in terms(f.text, skip))
    keywords = [t for t, _ in counts.most_common(5)]
    title = unit.name.replace("-", " ")
    first = unit.facts[0].line() if unit.facts else unit.summary
    return Topic(title[:1].upper() + title[1:],
                 f"{len(unit.facts)} {unit.bucket} statement(s) about it in the changed notes",
                 first[:300], keywords, unit.paths)
