"""Offline integration: which recalled digest node a unit belongs to, and which of the four actions.

- CORRECT when a fact changes a value a node states about the same subject: an
  exclusive frame (prefers X, favourite Y is X, X is <value>, lives/works in X, a
  deadline) with a different value, or an explicit change ("moved to", "now",
  "no longer", "instead of") on a subject the node talks about.
- CORROBORATE when a node already states every fact (high word overlap).
- REFINE when the facts add to a node on the same subject (same name, same
  subject word, or enough shared words).
- CREATE otherwise.
A unit whose facts and sources are all in the node already changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.extraction.dream.node import Node, cited, statements
from memcli.extraction.dream.rules import terms, values
from memcli.extraction.dream.schema import Fact, Unit

SAME_FACT = 0.7  # Jaccard of content words: the same statement in other words
SAME_SUBJECT = 0.3
_VALUE = re.compile(r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b[A-Z][a-z]|[\w]+[-_.][\w]+|"
                    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.IGNORECASE)
_CHANGE = re.compile(r"^(?P<subj>.*?)\b(?:(?:was |is |has been |got |been )?(?:moved|changed|switched|postponed|"
                     r"pushed|rescheduled|updated|renamed|reset|set|bumped) (?:back |out )?to|is now|are now|now "
                     r"(?:is|are|prefers?|uses?|lives? in|works? (?:at|for))|no longer|instead of)\b(?P<val>.*)$",
                     re.IGNORECASE)
_FRAMES = [
    re.compile(r"^(?P<subj>.*?)\bfavou?rite (?P<what>[\w ]{1,30}?) (?:is|are|was|has become)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>.*?)\b(?:prefer|prefers|preferred|would rather|'d rather)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>.*?)\b(?:lives? in|moved to|works? (?:at|for|as)|is based in)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>.*?\b(?:deadline|due date|launch|release|meeting|cut-?over|appointment)\b.*?)"
               r"\b(?:is|was|on|by|at|for)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>(?:the |our |my |their |his |her )[\w -]{2,40}?) (?:is|are|was|were)\b(?P<val>.+)$", re.I),
]
_VERSUS = re.compile(r"\b(?:over|instead of|rather than|than)\b.*$", re.IGNORECASE)


@dataclass
class Decision:
    action: str
    node: Node | None  # the node to update (None for CREATE)
    new_facts: list[Fact]  # facts the node does not state yet
    contradictions: list[tuple[Fact, str]]  # (fact, the statement it contradicts)
    uncited: list[str]  # unit paths the node does not cite yet


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


_SPEAKER = re.compile(r"^[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}: ")


def _bag(text: str) -> set[str]:
    """Content words and values of a statement, its "Speaker: " prefix left out."""
    text = _SPEAKER.sub("", text)
    return set(terms(text)) | set(values(text))


def head(value: str) -> str:
    """The first content word or value of a slot's value: "coffee" of "my coffee black, no sugar"."""
    for tok in re.findall(r"\w[\w.:/'-]*", value.lower()):
        found = values(tok) or terms(tok)  # "db-staging-3" is a value, not the word "db-staging"
        if found:
            return found[0]
    return ""


def frame(text: str) -> tuple[set[str], str, bool] | None:
    """(subject words, value head, explicit change) of a statement with an exclusive slot, or None."""
    m = _CHANGE.match(text)
    if m and head(_VERSUS.sub("", m.group("val"))):
        return _bag(m.group("subj")), head(_VERSUS.sub("", m.group("val"))), True
    for i, rx in enumerate(_FRAMES):
        m = rx.match(text)
        if not m:
            continue
        val = _VERSUS.sub("", m.group("val"))
        if i >= 3 and not _VALUE.search(val):
            continue  # "painting is a fun way to relax" is a property, not a value that can change
        subj = _bag(m.group("subj")) | ({f"fav:{w}" for w in terms(m.group("what"))} if "what" in rx.groupindex
                                         else set()) | {f"frame:{i}"}
        if head(val):
            return subj, head(val), False
    return None


def contradicts(new: Fact, old: str) -> bool:
    """True when `new` gives a different value for the slot `old` fills (a value that starts the
    same, "coffee black" after "coffee in the morning", refines it instead)."""
    a, b = frame(new.text), frame(_SPEAKER.sub("", old))
    if a is None or b is None:
        return False
    (s1, v1, change), (s2, v2, _) = a, b
    s1, s2 = {w for w in s1 if not w.startswith("frame:")} if change else s1, \
        {w for w in s2 if not w.startswith("frame:")} if change else s2
    same_slot = (s1 == s2) or jaccard(s1, s2) >= 0.5 or (change and bool(s1 & s2))
    return same_slot and v1 != v2


def _speaker_ok(fact: Fact, old: str) -> bool:
    m = re.match(r"^([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}): ", old)
    return not (m and fact.speaker) or m.group(1) == fact.speaker


def states(fact: Fact, said: list[str]) -> bool:
    bag = _bag(fact.text)
    return any(jaccard(bag, _bag(s)) >= SAME_FACT or " ".join(fact.line().split()) == " ".join(s.split())
               for s in said)


def same_subject(unit: Unit, node: Node, said: list[str]) -> float:
    """How surely the node is about the unit's subject (0 = not at all)."""
    if node.name == unit.name:
        return 2.0  # the unit's own node beats any word overlap
    name_words = set(node.name.split("-"))
    unit_words = set(unit.name.split("-"))
    if len(unit_words) > 1 and unit_words <= name_words:
        return 0.9
    ours = set().union(*(_bag(f.text) for f in unit.facts)) if unit.facts else _bag(unit.summary)
    theirs = set().union(*(_bag(s) for s in said)) if said else set()
    score = jaccard(ours, theirs)
    return score if score >= SAME_SUBJECT else 0.0


def decide(unit: Unit, candidates: list[Node]) -> Decision:
    said = {c.path: statements(c.body) for c in candidates}
    for c in candidates:  # a changed value wins over everything else
        found = [(f, s) for f in unit.facts for s in said[c.path] if _speaker_ok(f, s) and contradicts(f, s)]
        if found:
            return _decision("CORRECT", unit, c, said[c.path], found, cited(c.body))
    stated = [c for c in candidates if unit.facts and all(states(f, said[c.path]) for f in unit.facts)]
    # the node that already holds the unit and cites its notes first: then a re-run changes nothing
    stated.sort(key=lambda c: not set(unit.paths) <= cited(c.body))
    if stated:
        return _decision("CORROBORATE", unit, stated[0], said[stated[0].path], [], cited(stated[0].body))
    scored = sorted(((same_subject(unit, c, said[c.path]), -i) for i, c in enumerate(candidates)), reverse=True)
    elsewhere = [s for c in candidates for s in said[c.path]]
    if scored and scored[0][0] > 0:
        c = candidates[-scored[0][1]]  # ties go to the better-recalled node
        # a fact another recalled node already states stays there: one place per statement
        d = _decision("REFINE", unit, c, elsewhere, [], cited(c.body))
        return d if d.new_facts else Decision("REFINE", c, [], [], [])  # nothing to add: leave it be
    fresh = [f for f in unit.facts if not states(f, elsewhere)]
    if unit.facts and not fresh:
        return Decision("CREATE", None, [], [], [])  # every fact is in the digest already: nothing to create
    return Decision("CREATE", None, list(unit.facts), [], list(unit.paths))


def _decision(action: str, unit: Unit, node: Node, said: list[str], found, cites: set[str]) -> Decision:
    contradicting = {id(f) for f, _ in found}
    new = [f for f in unit.facts if id(f) not in contradicting and not states(f, said)]
    # a contradiction already noted (same fact, same source) is not noted twice
    found = [(f, s) for f, s in found if not states(f, said) or f.path not in cites]
    return Decision(action, node, new, found, [p for p in unit.paths if p not in cites])


def related(unit: Unit, candidates: list[Node], target: str | None, limit: int = 3) -> list[str]:
    """Recalled nodes that share the unit's subject word or at least three content words with it
    (never the target itself): worth a link, not a merge."""
    ours = set().union(*(_bag(f.text) for f in unit.facts)) if unit.facts else _bag(unit.summary)
    anchor = set(unit.name.split("-")[-1:])
    out = []
    for c in candidates:
        theirs = set().union(_bag(c.description), *(_bag(s) for s in statements(c.body)))
        if c.path != target and (anchor & set(c.name.split("-")) or len(ours & theirs) >= 3):
            out.append(c.path)
    return out[:limit]
