"""Offline node text: a new node, or the update of an existing one. The node format:

    ---
    description: <the first statement of what is true now>
    name: half-marathon-training
    ---
    # Half-marathon training

    - The user's half-marathon goal is now 1:52. ([[memory/2026-09-14/goal.md]])
    - The user does their long runs on Sundays. ([[memory/2026-09-20/b.md]], [[memory/2026-09-01/a.md]])

    Related: [[digest/wiki/race-morning-routine.md]].

    ## History
    - Previously: The user's goal for the half marathon is 1:55, until 2026-09-14 ([[memory/2026-09-01/a.md]])

    ## Sources
    - Stated on 2026-09-01 in [[memory/2026-09-01/a.md]].
    - Corrected on 2026-09-14 in [[memory/2026-09-14/goal.md]].

The title names the subject (extraction/dream/subject.py). A node holds knowledge only: one
self-contained statement per line (extraction/dream/voice.py: the user in the third person,
no "User:" prefix), each with its sources, the note that states it most recently first;
the newest statement first (numbered steps stay numbered, in their order). The lines above
`## History` are what is true now. When a later note gives a statement a new value (CORRECT),
the new statement becomes the first line (what changed last comes first) and the old one
moves, with its sources, to the top of `## History` as `- Previously: <old statement>, until
<date of the newer note> (<its sources>)`. A statement stated again
(CORROBORATE) gets the new note as its first source; one that adds detail (REFINE) is a new
line. `## Sources` logs which note did what, once per note. The abstract stays within 200
words; statements that no longer fit are listed in `## Sources` in the same form. How to use
a node is the agent's business (`mem agent-prompt`), not the node's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memcli.extraction.dream.match import Decision
from memcli.extraction.dream.node import (
    Node,
    abstract_words,
    add_lines,
    add_related,
    add_source_to,
    add_sources,
    cited,
    current,
    sourced,
    split,
    strip_boilerplate,
    supersede,
    words,
)
from memcli.extraction.dream.schema import Fact, Unit

MAX_WORDS = 200
VERB = {"CREATE": "Stated", "CORROBORATE": "Corroborated", "REFINE": "Refined", "CORRECT": "Corrected"}
MAX_DESCRIPTION = 160

DateOf = Callable[[str], "str | None"]


def _title(name: str) -> str:
    t = name.replace("-", " ")
    return t[:1].upper() + t[1:]


def source_line(verb: str, path: str, date_of: DateOf, fact: Fact | None = None) -> str:
    when = date_of(path)
    head = f"- {verb}{f' on {when}' if when else ''} in [[{path}]]"
    return f"{head}: {fact.line()}" if fact else f"{head}."


def describe(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1].rstrip() + "…"


def _line(body: str, fact: Fact, procedure: bool) -> tuple[str, str | None]:
    """The line a new fact gets, and the line it goes after (numbered steps continue their list)."""
    head, _ = split(body)
    numbered = [x for x in head if re.match(r"^\d+[.)]\s", x)]
    text = sourced(fact.line(), [fact.path])
    if procedure and fact.numbered:
        if numbered:
            n = int(re.match(r"^(\d+)", numbered[-1]).group(1))  # type: ignore[union-attr]  # numbered lines start with digits
            return f"{n + 1}. {text}", numbered[-1]
        return f"1. {text}", None
    return f"- {text}", None


def _apply(body: str, decision: Decision, procedure: bool, date_of: DateOf) -> tuple[str, list[Fact]]:
    """The body with the decision's statements, history and sources in; (body, facts that did not fit)."""
    overflow: list[Fact] = []
    block: list[str] = []
    # newest statement first (a note's own statements in their order): where a later note changes
    # what an earlier one said in a way the rules cannot tell, the later one still reads first
    facts = decision.new_facts
    for f in facts if procedure else sorted(facts, key=lambda f: date_of(f.path) or "", reverse=True):
        line, after = _line(body, f, procedure)
        if abstract_words(body) + sum(map(words, block)) + words(line) > MAX_WORDS:
            overflow.append(f)
        elif line.startswith("- "):
            block.append(line)
        else:  # a numbered step continues its list
            body = add_lines(body, [line], after=after)
    body = add_lines(body, block, first=True)
    for f, old in decision.contradictions:  # in note order: in a chain, each value replaces the one before
        body = supersede(body, old, _line(body, f, False)[0], date_of(f.path))
    for f, same in decision.corroborations:
        body = add_source_to(body, same, f.path)
    return body, overflow


def _verbs(decision: Decision) -> dict[str, str]:
    """path -> what its facts did to the node (the Sources log line's verb)."""
    out: dict[str, str] = {}
    for verb, facts in (
        ("Corroborated", [f for f, _ in decision.corroborations]),
        ("Refined", decision.new_facts),
        ("Corrected", [f for f, _ in decision.contradictions]),
    ):
        for f in facts:
            out[f.path] = verb  # a later kind wins: a note that corrects is logged as correcting
    return out


def create(unit: Unit, decision: Decision, path: str, date_of: DateOf, related: list[str]) -> Node:
    """A new node for the unit at `path`."""
    body = f"# {unit.title or _title(unit.name)}\n\n"
    body, overflow = _apply(body, decision, unit.bucket == "procedure", date_of)
    body = add_related(body, related)
    body = add_sources(
        body,
        [source_line("Stated", p, date_of) for p in unit.paths]
        + [f"- {sourced(f.line(), [f.path])}" for f in overflow],
    )
    now = current(body)
    first = now[0] if now else unit.summary  # the description says what is true now
    meta = {"name": path.rsplit("/", 1)[-1][:-3], "description": describe(first)}
    return Node(path, meta, body, existed=False)


def update(node: Node, unit: Unit, decision: Decision, date_of: DateOf, related: list[str]) -> Node | None:
    """The node with the unit's news added (nothing of substance removed); None when nothing is new."""
    procedure = "/procedure/" in node.path and unit.bucket == "procedure"  # only steps continue a step list
    body, overflow = _apply(strip_boilerplate(node.body), decision, procedure, date_of)
    have = cited(body)
    verbs = _verbs(decision)
    verb = VERB[decision.action or "CORROBORATE"]
    lines = [source_line(verbs.get(p, verb), p, date_of) for p in decision.uncited if p not in have]
    lines += [f"- {sourced(f.line(), [f.path])}" for f in overflow]
    body = add_sources(body, lines)
    if body == node.body:
        return None  # nothing new: related links alone do not make an update (re-runs change nothing)
    body = add_related(body, related)
    meta = dict(node.meta)
    described = str(meta.get("description") or "")
    for f, old in decision.contradictions:  # the description says what is true now
        if described and (described == old or described == describe(old)):
            meta["description"] = describe(f.line())
    return Node(node.path, meta, body, node.existed)
