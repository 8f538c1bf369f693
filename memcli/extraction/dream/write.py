"""Offline node text: a new node shaped by its bucket, or the additive update of an existing one.

Facts are quoted verbatim (nothing is paraphrased, so nothing is invented); the
template words around them give the shape DESIGN §6 asks for: personal = rule, Why,
How to apply; procedure = trigger, steps, preconditions, failure modes; wiki =
definition, properties. The abstract stays within 50-200 words: template sentences
pad a short one, and facts that no longer fit are quoted in their Sources line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memcli.extraction.dream.match import Decision
from memcli.extraction.dream.node import (NOTE_MARK, Node, abstract_words, add_lines, add_related, add_sources,
                                          cited, split, words)
from memcli.extraction.dream.schema import Fact, Unit

MAX_WORDS = 200
MIN_WORDS = 50
WHY = re.compile(r"\b(?:because|since|so that|that's why|which is why|reason|important to|helps? me|made me)\b",
                 re.IGNORECASE)
PRECONDITION = re.compile(r"\b(?:before|requires?|needs? to|must have|make sure|ensure|only if|prerequisite)\b",
                          re.IGNORECASE)
FAILURE = re.compile(r"\b(?:fail\w*|error|broke|breaks|roll ?back|if .{0,40}(?:down|wrong|slow)|never|don't|"
                     r"do not|avoid|caveat|warning)\b", re.IGNORECASE)
PAD = ["These lines are quoted as they were written in the daily notes; the sources below hold the context.",
       "When a later note disagrees, the newest source wins and the disagreement is noted here.",
       "Check the cited notes before acting on a detail that matters."]
VERB = {"CREATE": "Stated", "CORROBORATE": "Corroborated", "REFINE": "Refined", "CORRECT": "Corrected"}

DateOf = Callable[[str], "str | None"]


def _title(name: str) -> str:
    t = name.replace("-", " ")
    return t[:1].upper() + t[1:]


def _topic(unit: Unit) -> str:
    who = {w.lower() for f in unit.facts for w in f.speaker.split()}
    rest = [w for w in unit.name.split("-") if w not in who]
    return " ".join(rest) or unit.name.replace("-", " ")


def source_line(verb: str, path: str, date_of: DateOf, fact: Fact | None = None) -> str:
    when = date_of(path)
    head = f"- {verb}{f' on {when}' if when else ''} in [[{path}]]"
    return f"{head}: {fact.line()}" if fact else f"{head}."


def _shape(unit: Unit, facts: list[Fact]) -> list[str]:
    first, rest = facts[0], facts[1:]
    topic, who = _topic(unit), (facts[0].speaker if facts[0].speaker not in ("", "User") else "the user")
    if unit.bucket == "personal":
        why = next((f for f in rest if WHY.search(f.text)), None)
        apply = [f"- {f.line()}" for f in rest if f is not why]
        return [f"Rule: {first.line()}", "",
                f"Why: {why.line() if why else f'{who} said so directly; the sources below give the context.'}", "",
                "How to apply:", *apply,
                f"- Keep this in mind whenever {topic} comes up with {who}, and follow the newest source."]
    if unit.bucket == "procedure":
        pre = [f for f in facts if PRECONDITION.search(f.text)]
        fail = [f for f in facts if FAILURE.search(f.text) and f not in pre]
        steps = [f for f in facts if f not in pre and f not in fail] or [first]
        when = first.section if first.section and all(f.section == first.section for f in facts) else ""
        out = [f"Trigger: {when[:1].upper()}{when[1:]}." if when else f"Trigger: use this when {topic} comes up.",
               "", "Steps:"]
        out += [f"{i}. {f.line()}" for i, f in enumerate(steps, 1)]
        out += ["", "Preconditions:", *[f"- {f.line()}" for f in pre]] if pre else \
            ["", "Preconditions: none recorded yet."]
        out += ["", "Failure modes:", *[f"- {f.line()}" for f in fail]] if fail else \
            ["", "Failure modes: none recorded yet."]
        return out
    out = [first.line()]
    return out + (["", "Properties:", *[f"- {f.line()}" for f in rest]] if rest else [])


def create(unit: Unit, path: str, date_of: DateOf, related: list[str]) -> Node:
    """A new node for the unit at `path`."""
    facts, overflow = list(unit.facts), []
    head = ["# " + _title(unit.name), "", *_shape(unit, facts)]
    while len(facts) > 1 and sum(words(x) for x in head) > MAX_WORDS:
        overflow.insert(0, facts.pop())  # the weakest facts move to their Sources line
        head = ["# " + _title(unit.name), "", *_shape(unit, facts)]
    pad, at = iter(PAD), 2  # an intro under the title: the lists stay last, so updates extend them
    while sum(words(x) for x in head[1:]) < MIN_WORDS:
        head[at:at] = [next(pad, PAD[-1]), ""]
        at += 2
    body = "\n".join(head) + "\n"
    body = add_related(body, related)
    body = add_sources(body, [source_line("Stated", p, date_of) for p in unit.paths]
                       + [source_line("Also stated", f.path, date_of, f) for f in overflow])
    first = facts[0].line()
    meta = {"name": path.rsplit("/", 1)[-1][:-3],
            "description": first if len(first) <= 160 else first[:159].rstrip() + "…"}
    return Node(path, meta, body, existed=False)


def _step_line(body: str, fact: Fact, procedure: bool) -> tuple[str, str | None]:
    """The line a new fact gets, and the line it goes after (numbered steps continue their list)."""
    head, _ = split(body)
    numbered = [x for x in head if re.match(r"^\d+[.)]\s", x)]
    if procedure and numbered and not (PRECONDITION.search(fact.text) or FAILURE.search(fact.text)):
        n = int(re.match(r"^(\d+)", numbered[-1]).group(1))
        return f"{n + 1}. {fact.line()}", numbered[-1]
    return f"- {fact.line()}", None


def update(node: Node, unit: Unit, decision: Decision, date_of: DateOf, related: list[str]) -> Node | None:
    """The node with the unit's news added (never anything removed); None when nothing is new."""
    body, overflow = node.body, []
    verb = VERB[decision.action]
    procedure = "/procedure/" in node.path and unit.bucket == "procedure"  # only steps continue a step list
    for f in decision.new_facts:
        line, after = _step_line(body, f, procedure)
        if abstract_words(body) + words(line) <= MAX_WORDS:
            body = add_lines(body, [line], after=after)
        else:
            overflow.append(f)
    for f, old in decision.contradictions:
        note = f"{NOTE_MARK}[[{f.path}]] - {f.line()}"
        body = add_lines(body, [note], after=old)
    have = cited(body)
    lines = [source_line(verb, p, date_of) for p in decision.uncited if p not in have]
    lines += [source_line(verb, f.path, date_of, f) for f in overflow]
    body = add_sources(body, lines)
    if body == node.body:
        return None  # nothing new: related links alone do not make an update (re-runs change nothing)
    body = add_related(body, related)
    return Node(node.path, dict(node.meta), body, node.existed)


def ensure_sources(body: str, paths: list[str], verb: str, date_of: DateOf) -> str:
    """Cite every unit path in `## Sources` (an LLM body may forget one)."""
    have = cited(body)
    return add_sources(body, [source_line(verb, p, date_of) for p in paths if p not in have])
