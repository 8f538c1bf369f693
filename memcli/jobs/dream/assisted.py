"""Dream with an LLM: the offline pipeline, with a small model deciding one statement at a time.

The facts are the offline rules' (extraction/dream/rules.py), checkpointed per fact as offline
(offline.py). For each fact, oldest first (a numbered list moves as one):
1. The model names its subject and says whether it is lasting knowledge (judge.classify);
   a "no" leaves it in its daily note, said in the report.
2. The closest clusters (digest nodes, and groups formed earlier in this run) are found by
   the offline evidence (meaning and words, group.link), and by the subject's name; when
   there are any, the model picks the one holding the fact's subject, or a new node, and the
   action (judge.file). With none, the fact founds a new node named for its subject.
3. A reply the model cannot get right twice (judge.Rejected) is decided by the offline rules
   instead: the closest cluster, CORROBORATE/CORRECT/REFINE by match.py. Every fact's
   decision names who made it (`decided_by`: model or rules) and why, in `mem dream --json`.
Then each cluster that received facts is one unit, written by the offline node writer
(write.py): the model chooses, the writer quotes the statements with their sources. Once
`max_units` clusters received facts, the remaining facts wait for the next run unasked (their
notes stay pending), so a run's model calls stay within its budget.
A transport error (the server down) is no reply to judge: it fails the run, nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.extraction.ask import kebab
from memcli.extraction.dream import group as dream_group
from memcli.extraction.dream import judge
from memcli.extraction.dream import rules as dream_rules
from memcli.extraction.dream import write as dream_write
from memcli.extraction.dream.evidence import Evidence
from memcli.extraction.dream.match import Decision, replaced
from memcli.extraction.dream.match import judge as rules_judge
from memcli.extraction.dream.node import BUCKETS, Node, cited, current, statements
from memcli.extraction.dream.schema import Fact, Unit
from memcli.jobs.dream.integrate import Digest, Plan, Result, first_words
from memcli.jobs.dream.offline import Progress, evidence, fact_key, parse_notes, pending_facts
from memcli.vault.workspace import Workspace

MAX_CANDIDATES = 3  # nodes shown to the model for one statement
NOT_KNOWLEDGE = "the model judged it no lasting knowledge (small talk, thanks or a request to the assistant)"


@dataclass
class Filed:
    """One fact's decision: what it does in its cluster, who decided, and why."""

    fact: Fact
    action: str  # CREATE | CORROBORATE | REFINE | CORRECT
    statement: str | None  # CORRECT: the statement it replaces; CORROBORATE: the one it states again
    decided_by: str  # "model" | "rules"
    reason: str

    def to_json(self) -> dict:
        return {"fact": self.fact.source(), "action": self.action, "decided_by": self.decided_by, "reason": self.reason}


@dataclass
class Group:
    cluster: dream_group.Cluster
    title: str  # the node's name, or the subject of a group formed in this run
    now: list[str] = field(default_factory=list)  # what it states as true now (History left out)
    filed: list[Filed] = field(default_factory=list)
    order: int = -1  # the position of its first fact in this run


def plan(
    ws: Workspace,
    texts: dict[str, str],
    max_units: int,
    state: dict,
    warnings: list[str],
    chat,
    label: str = "LLM",
    dry_run: bool = False,
) -> tuple[list[Unit], list, Plan, Progress]:
    """(units integrated, topic candidates, the plan, the progress), as offline.plan returns them."""
    pending = given if isinstance(given := state.get("pending"), dict) else {}
    notes = parse_notes(texts)
    facts, prog = pending_facts(notes, pending)
    out = Plan()
    digest = Digest(ws, out)
    ev, nodes, found = evidence(ws, notes, facts, digest.nodes(), warnings, dry_run)
    prog.grouping, prog.model = found.grouping, found.model
    contexts = dream_rules.contexts(notes)
    groups = [Group(dream_group.Cluster(n, statements(n.body)), n.name, current(n.body)) for n in nodes]
    items, waiting = dream_group.items(facts), []
    for pos, item in enumerate(items):
        if sum(1 for g in groups if g.filed) >= max_units:
            # the budget is full: the rest is asked about next run (model calls stay within the budget)
            waiting = [f for it in items[pos:] for f in it]
            break
        why = _file(chat, ev, item, groups, contexts, pos, label)
        if why is not None:
            prog.kept += [(f, why) for f in item]
            for f in item:
                prog.done[f.path].add(fact_key(f))
    placed = sorted((g for g in groups if g.filed), key=lambda g: g.order)
    taken, left = placed[:max_units], placed[max_units:]
    prog.remaining = [x.fact for g in left for x in g.filed] + waiting
    prog.left_units = len(left) + len(items) - pos if waiting else len(left)  # (each item asked later: a unit at most)
    units = []
    for g in taken:
        unit = _unit(g, ev)
        units.append(unit)
        _integrate(ws, digest, g, unit, out)
        for x in g.filed:
            prog.done[x.fact.path].add(fact_key(x.fact))
    skip = dream_rules.speaker_words(facts)
    return units, [dream_rules.topic(u, skip) for u in units], out, prog


def _statement(item: list[Fact]) -> str:
    """What the model is shown of an item: the fact, or a numbered list's heading and first steps."""
    if len(item) == 1:
        return item[0].line()
    head = f"{item[0].section}: " if item[0].section else ""
    return head + "; ".join(f.line() for f in item[:4])


def _file(
    chat, ev: Evidence, item: list[Fact], groups: list[Group], contexts: dict[str, str], pos: int, label: str
) -> str | None:
    """Place `item` into a group (a new one if need be); None, or why it stays in its daily note."""
    text = _statement(item)
    f0 = item[0]
    # an agent's note heading says what its lines are about; a session note's ("Facts") does not
    heading = f0.section if contexts.get(f0.path) == "note" and len(item) == 1 else ""
    try:
        verdict, subject_why = judge.classify(chat, text, label), ""
    except judge.Rejected as exc:
        verdict, subject_why = None, f"model reply invalid: {exc}; "
    subject = verdict.subject if verdict else ""
    ranked = _ranked(ev, item, groups, contexts, subject)
    if verdict is not None and not verdict.remember:
        old = next((x for i in ranked if (x := replaced(f0, groups[i].now, ev)) is not None), None)
        if old is None:
            return NOT_KNOWLEDGE
        # left out, the digest would go on stating the value this statement changes
        subject_why = f"the model judged it no lasting knowledge, but by the rules it changes {first_words(old, 8)!r}; "
    shown = [judge.Candidate(groups[i].title.replace("-", " "), _closest(ev, f0, groups[i])) for i in ranked]
    filing, by, reason = None, "rules", subject_why + "no node shares words or meaning with it: a new node"
    if ranked:
        try:
            filing = judge.file(chat, f0, shown, ev, label, heading)
            by, reason = "model", subject_why + (filing.repaired or f"the model chose {filing.action}")
        except judge.Rejected as exc:
            reason = subject_why + f"model reply invalid: {exc}; decided by the offline rules"
            filing, why = _by_rules(ev, f0, groups[ranked[0]])
            reason += f" ({why})"
    if filing is None or filing.node is None:
        if sum(ev.substance(f.line()) for f in item) < dream_group.MIN_SUBSTANCE:
            return "too few words to say what it is about"
        groups.append(Group(dream_group.Cluster(None), subject or dream_group.name(item, ev)))
        target, action, statement = groups[-1], "CREATE", None
    else:
        target, action, statement = groups[ranked[filing.node]], filing.action, filing.statement
    if target.order < 0:
        target.order = pos
    target.now = [x for x in target.now if x != statement] if action == "CORRECT" else target.now
    target.now += [f.line() for f in item] if action != "CORROBORATE" else []
    target.cluster.facts += item
    target.filed.append(Filed(item[0], action, statement, by, reason))
    target.filed += [
        Filed(
            f,
            "REFINE" if target.cluster.node or len(target.filed) > 1 else "CREATE",
            None,
            by,
            "a step of the same list",
        )
        for f in item[1:]
    ]
    return None


def _ranked(ev: Evidence, item: list[Fact], groups: list[Group], contexts: dict[str, str], subject: str) -> list[int]:
    """The groups worth asking about, closest first: those the offline evidence links the item to,
    and those named like its subject."""
    scored = []
    name = kebab(subject) if subject else ""
    for i, g in enumerate(groups):
        links = [
            x.score
            for f in item
            for m in g.cluster.members()
            if (x := dream_group.link(ev, f, m, contexts)) is not None
        ]
        named = bool(name) and name == kebab(g.title)
        if links or named:
            scored.append((max(links, default=0.0) + (1.0 if named else 0.0), -i))
    return [-i for _, i in sorted(scored, reverse=True)][:MAX_CANDIDATES]


def _closest(ev: Evidence, fact: Fact, g: Group) -> list[str]:
    """What the group states now, the statements closest to `fact` first, at most judge.SHOWN."""
    said = list(dict.fromkeys(g.now))
    said.sort(key=lambda s: -(ev.shared(fact.line(), s) + (ev.cosine(fact.line(), s) or 0.0)))
    return said[: judge.SHOWN]


def _by_rules(ev: Evidence, fact: Fact, g: Group) -> tuple[judge.Filing, str]:
    """The offline rules' filing into the closest group (match.judge), and their reason."""
    said = [m if isinstance(m, str) else m.line() for m in g.cluster.members()]
    v = rules_judge(fact, said, g.now, ev)
    return judge.Filing(0, v.action, v.statement), v.reason


def _unit(g: Group, ev: Evidence) -> Unit:
    facts = g.cluster.facts
    node = g.cluster.node
    if node is not None:
        parts = node.path.split("/")
        name, bucket = node.name, parts[-2] if len(parts) >= 2 and parts[-2] in BUCKETS else dream_group.bucket(facts)
    else:
        name, bucket = kebab(g.title) or dream_group.name(facts, ev), dream_group.bucket(facts)
    summary = " ".join(f.line().rstrip(".") + "." for f in facts)[:1200]
    title = g.title[:1].upper() + g.title[1:] if node is None and kebab(g.title) == name else ""
    return Unit(name, bucket, summary, list(dict.fromkeys(f.path for f in facts)), list(facts), title)


def _decision(g: Group, unit: Unit) -> Decision:
    node = g.cluster.node
    cites = cited(node.body) if node is not None else set()
    d = Decision("CREATE" if node is None else "", node)
    for x in g.filed:
        if x.action == "CORRECT" and x.statement:
            d.contradictions.append((x.fact, x.statement))
        elif x.action == "CORROBORATE" and x.statement:
            if x.fact.path not in cites:
                d.corroborations.append((x.fact, x.statement))
        else:
            d.new_facts.append(x.fact)
    touched = {f.path for f in d.new_facts} | {f.path for f, _ in d.contradictions + d.corroborations}
    d.uncited = [p for p in unit.paths if p not in cites and p in touched]
    if node is not None:
        d.action = (
            "CORRECT" if d.contradictions else "REFINE" if d.new_facts else "CORROBORATE" if d.corroborations else ""
        )
    return d


def _integrate(ws: Workspace, digest: Digest, g: Group, unit: Unit, out: Plan) -> None:
    decision = _decision(g, unit)
    by = sorted({x.decided_by for x in g.filed})
    who, why = "+".join(by), [x.to_json() for x in g.filed]
    told = "; ".join(f"{x.action} by the {x.decided_by}: {x.reason}" for x in g.filed[:3])
    if not decision.action:
        out.skipped.append((unit, "already in the digest"))
        return
    node: Node | None
    if g.cluster.node is None:
        path = digest.free_path(unit.bucket, unit.name)
        node = dream_write.create(unit, decision, path, ws.date_of, [])
        result = Result(
            unit,
            "CREATE",
            path,
            f"new {unit.bucket} node: {first_words(g.filed[0].fact.line())}",
            f"a new node about {unit.title or unit.name!r}: {told}",
            who,
            why,
        )
    else:
        target = digest.read(g.cluster.node.path) or g.cluster.node
        node = dream_write.update(target, unit, decision, ws.date_of, [])
        if node is None:
            out.skipped.append((unit, "already in the digest"))
            return
        result = Result(
            unit, decision.action, node.path, _note(decision), f"about the subject of {node.path}: {told}", who, why
        )
    out.nodes[node.path] = node
    out.results.append(result)


def _note(d: Decision) -> str:
    if d.action == "CORRECT":
        f, old = d.contradictions[0]
        return f"superseded: {first_words(old, 12)!r} -> {first_words(f.line(), 12)!r}"
    if d.action == "CORROBORATE":
        return f"stated again in {len(d.corroborations) or 1} more source(s)"
    return f"added {len(d.new_facts)} statement(s): {first_words(d.new_facts[0].line())}"
