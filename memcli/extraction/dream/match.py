"""Offline integration: what a unit's facts do to the node they were placed in (group.py).

Fact by fact, oldest first, against the node's statements (and the unit's earlier facts),
`judge` gives one verdict with its reason:
- the same statement again (perhaps in other words, but with the same numbers, names, days
  and identifiers) corroborates it: its line cites the new source first;
- a statement that gives what the node says now another value is a correction: it becomes
  the node's first line and the old line moves to `## History` (node.supersede). Replacing
  is either an exclusive frame with another value (prefers X, favourite Y is X, X is
  <value>, lives/works in X, a deadline) or an explicit change ("no longer", "now prefers",
  "replaced", "moved ... to", "raised from ... to", "from now on") about what an old
  statement names, where a value actually changes: the value the change says it replaces
  is in the old statement, or each holds a value the other lacks. A later statement that
  keeps the old values and adds detail ("now takes a per-key lock (`SET NX PX 5000`)" after
  "under a per-key lock (`SET NX PX`)") agrees: it refines;
- anything else refines the node (a new line).
The node's action: CREATE for a new node; else CORRECT when a fact replaced a statement,
REFINE when one was added, CORROBORATE when only sources were added; nothing when the node
already says it all with these sources. `judge` is the offline answer to "what does this
statement do to this node?"; a model asked the same question falls back to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcli.extraction.dream.change import changes, holds, old_value, raw_words, same_quantity, value_changed
from memcli.extraction.dream.evidence import GENERIC, Evidence
from memcli.extraction.dream.node import Node, cited, current, statements
from memcli.extraction.dream.rules import SPEAKER, terms, values
from memcli.extraction.dream.schema import Fact, Unit

# what a value looks like: a number, a date or day, a name, an identifier (case matters for names)
_VALUE = re.compile(
    r"\d|\b[A-Z][a-z]|\w+[_.]\w+|(?i:\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|"
    r"june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b)"
)
_CHANGE = re.compile(
    r"^(?P<subj>.*?)\b(?:(?:was |is |has been |got |been )?(?:moved|changed|switched|postponed|"
    r"pushed|rescheduled|updated|renamed|reset|set|bumped) (?:back |out )?to|is now|are now|now "
    r"(?:is|are|prefers?|uses?|lives? in|works? (?:at|for))|no longer|instead of)\b(?P<val>.*)$",
    re.IGNORECASE,
)
_FRAMES = [
    re.compile(r"^(?P<subj>.*?)\bfavou?rite (?P<what>[\w ]{1,30}?) (?:is|are|was|has become)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>.*?)\b(?:prefer|prefers|preferred|would rather|'d rather)\b(?P<val>.+)$", re.I),
    re.compile(r"^(?P<subj>.*?)\b(?:lives? in|moved to|works? (?:at|for|as)|is based in)\b(?P<val>.+)$", re.I),
    re.compile(
        r"^(?P<subj>.*?\b(?:deadline|due date|launch|release|meeting|cut-?over|appointment)\b.*?)"
        r"\b(?:is|was|on|by|at|for)\b(?P<val>.+)$",
        re.I,
    ),
    re.compile(
        r"^(?P<subj>(?:the user['’]s |the |our |my |their |his |her )[\w -]{2,40}?) (?:is|are|was|were)\b(?P<val>.+)$",
        re.I,
    ),
    # "Koen Bakker is my new manager": a name in a role; the role is the slot, the name its value
    re.compile(
        r"^(?P<val>[A-Z][\w'’.-]*(?: (?:[A-Z][\w'’.-]*|de|van|von|der|den|da|di|du|del|le|la|ter|ten)){0,4}) "
        r"(?:is|are) (?:now )?(?:the user's |my |our |their )"
        r"(?:new )?(?P<subj>[a-z][\w-]*(?: (?!(?:on|at|in|for|since|of|from|with|and|but|because|who)\b)"
        r"[a-z][\w-]*){0,2})(?=[ .,;]|$)",
        0,
    ),
]
_VERSUS = re.compile(r"\b(?:over|instead of|rather than|than)\b.*$", re.IGNORECASE)


CHANGE_COSINE = 0.45  # without a shared word, a changed value must be this close in meaning


@dataclass
class Decision:
    action: str  # CREATE | CORROBORATE | REFINE | CORRECT, or "" when nothing changes
    node: Node | None  # the node to update (None for CREATE)
    new_facts: list[Fact] = field(default_factory=list)  # facts the node does not state yet
    contradictions: list[tuple[Fact, str]] = field(default_factory=list)  # (fact, the statement it replaces)
    corroborations: list[tuple[Fact, str]] = field(default_factory=list)  # (fact, the statement it states again)
    uncited: list[str] = field(default_factory=list)  # unit paths the node's Sources do not cite yet
    reasons: list[tuple[Fact, Verdict]] = field(default_factory=list)  # each fact's verdict, in order


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _bag(text: str) -> set[str]:
    """Content words and values of a statement, its "Speaker: " prefix left out."""
    text = SPEAKER.sub("", text)
    return (set(terms(text)) - GENERIC) | set(values(text))


def head(value: str) -> str:
    """The first content word or value of a slot's value: "coffee" of "my coffee black, no sugar"."""
    for tok in re.findall(r"\w[\w.:/'-]*", value.lower()):
        found = values(tok) or terms(tok)  # "db-staging-3" is a value, not the word "db-staging"
        if found:
            return found[0]
    return ""


def frame(text: str) -> tuple[set[str], str, bool] | None:
    """(subject words, value head, explicit change) of a statement with an exclusive slot, or None."""
    found = framed(text)
    return found[:3] if found else None


def framed(text: str) -> tuple[set[str], str, bool, set[str]] | None:
    """`frame` and the words of the value besides its head ("morning" of "tea in the morning")."""
    m = _CHANGE.match(text)
    if m and head(_VERSUS.sub("", m.group("val"))):
        val = _VERSUS.sub("", m.group("val"))
        return _bag(m.group("subj")), head(val), True, _bag(val) - {head(val)}
    for i, rx in enumerate(_FRAMES):
        m = rx.match(text)
        if not m:
            continue
        val = _VERSUS.sub("", m.group("val"))
        if i >= 3 and not _VALUE.search(val):
            continue  # "painting is a fun way to relax" is a property, not a value that can change
        subj = (
            _bag(m.group("subj"))
            | ({f"fav:{w}" for w in terms(m.group("what"))} if "what" in rx.groupindex else set())
            | {f"frame:{i}"}
        )
        if head(val):
            return subj, head(val), False, _bag(val) - {head(val)}
    return None


def slot(new: Fact, old: str) -> str | None:
    """ "other" when `new` gives a different value for the exclusive slot `old` fills, "same" when it
    gives the same value (it says more about it: "coffee black" after "coffee in the morning"),
    None when they fill no common slot."""
    a, b = framed(new.text), framed(SPEAKER.sub("", old))
    if a is None or b is None:
        return None
    (s1, v1, change, t1), (s2, v2, _, t2) = a, b
    s1, s2 = (
        {w for w in s1 if not w.startswith("frame:")} if change else s1,
        {w for w in s2 if not w.startswith("frame:")} if change else s2,
    )
    if not ((s1 == s2) or jaccard(s1, s2) >= 0.5 or (change and bool(s1 & s2))):
        return None
    if not change and (s1 < s2 or s2 < s1):
        return None  # "the editor font is Iosevka" says something of the editor, not which editor
    c1, c2 = {w for w in s1 if ":" not in w}, {w for w in s2 if ":" not in w}
    if bool(c1) != bool(c2):
        return None  # "the user's guitar is ..." and "the user is ...": one names a subject, the other none
    if not c1 and (t1 or t2) and v1 != v2 and not t1 & t2:
        return None  # "prefers vim for editing", "prefers zsh for shells": no subject, other contexts
    if v1 != v2 and v1 in raw_words(SPEAKER.sub("", old)):
        return "same"  # the old statement names the new value too ("green tea over coffee"): it agrees
    return "other" if v1 != v2 else "same"


def contradicts(new: Fact, old: str) -> bool:
    """True when `new` gives a different value for the slot `old` fills (a value that starts the
    same, "coffee black" after "coffee in the morning", refines it instead)."""
    return slot(new, old) == "other"


def _speaker_ok(fact: Fact, old: str) -> bool:
    m = SPEAKER.match(old)
    return not (m and fact.speaker) or m.group(1) == fact.speaker


@dataclass
class Verdict:
    """What one statement does to a node: CORROBORATE (it states `statement` again), CORRECT (it
    replaces `statement`), REFINE (it adds to the node), and why."""

    action: str
    statement: str | None
    reason: str


def judge(fact: Fact, said: list[str], current: list[str], ev: Evidence | None = None) -> Verdict:
    """One candidate statement against a node's statements (`current`: those true now, the ones a
    correction may replace). The offline rule a model's answer for the same question falls back to."""
    ev = ev or Evidence()
    same = next(
        (s for s in said if _speaker_ok(fact, s) and ev.same(fact.line(), s) and not value_changed(fact, s)), None
    )  # 1:52 is not 1:55 in other words
    if same is not None:
        return Verdict("CORROBORATE", same, f"states again: {_short(same)}")
    old = replaced(fact, current, ev)
    if old is not None:
        return Verdict("CORRECT", old, f"gives a new value for: {_short(old)}")
    return Verdict("REFINE", None, "adds a statement about the same subject")


def _short(text: str, n: int = 10) -> str:
    w = text.split()
    return " ".join(w[:n]) + ("…" if len(w) > n else "")


def replaced(fact: Fact, said: list[str], ev: Evidence) -> str | None:
    """The statement of `said` that `fact` replaces, if any: the most related one whose value it
    changes, and first of all one that holds the value the fact says it replaces."""
    best, best_rank = None, 0.0
    change = changes(fact.text)
    was = old_value(fact.text) if change else set()
    if was and not any(holds(was, s) for s in said):
        change = False  # it replaces a value no statement here holds: nothing here is replaced
    for s in said:
        if not _speaker_ok(fact, s):
            continue
        framed = contradicts(fact, s)
        weight = ev.shared(fact.line(), s)
        cos = ev.cosine(fact.line(), s)
        # the statement holding the very value the change names ("Scrap Wednesdays" and "rehearses
        # on Wednesdays") is related to it, however few words they share
        related = weight >= 1.0 or (cos is not None and cos >= CHANGE_COSINE) or holds(was, s)
        if not (framed or (change and related and value_changed(fact, s))):
            continue
        rank = (
            weight
            + (cos or 0.0)
            + 0.5 * jaccard(raw_words(fact.line()), raw_words(s))
            + (1.0 if framed else 0.0)
            + (2.0 if holds(was, s) else 0.0)
            + (2.0 if same_quantity(fact.line(), s) else 0.0)
        )
        if rank > best_rank:
            best, best_rank = s, rank
    return best


def decide(unit: Unit, node: Node | None, ev: Evidence | None = None) -> Decision:
    """The action and the per-fact changes for `unit` in `node` (None: a new node)."""
    ev = ev or Evidence()
    said = statements(node.body) if node is not None else []
    now = current(node.body) if node is not None else []
    cites = cited(node.body) if node is not None else set()
    d = Decision("CREATE" if node is None else "", node)
    for f in unit.facts:
        v = judge(f, said, now, ev)
        d.reasons.append((f, v))
        if v.action == "CORROBORATE":
            assert v.statement is not None  # judge names the statement of a CORROBORATE and a CORRECT
            if node is not None and (f.path not in cites or v.statement not in statements(node.body)):
                d.corroborations.append((f, v.statement))
            continue
        if v.action == "CORRECT":
            assert v.statement is not None
            d.contradictions.append((f, v.statement))
            now = [x for x in now if x != v.statement]
        else:
            d.new_facts.append(f)
        said.append(f.line())
        now.append(f.line())
    d.uncited = [p for p in unit.paths if p not in cites]
    if node is not None:
        touched = {f.path for f in d.new_facts} | {f.path for f, _ in d.contradictions + d.corroborations}
        d.uncited = [p for p in d.uncited if p in touched]
        d.corroborations = [(f, s) for f, s in d.corroborations if f.path not in cites]
        d.action = (
            "CORRECT" if d.contradictions else "REFINE" if d.new_facts else "CORROBORATE" if d.corroborations else ""
        )
    elif not d.new_facts:
        d.action = ""
    return d
