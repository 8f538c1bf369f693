"""Dream without a model: the changed notes' facts placed by meaning and words, one unit per node.

1. Facts of the changed notes (extraction/dream/rules.py), less those an earlier run
   already integrated (the per-fact checkpoint below).
2. Every digest node is a candidate (in a large digest, those sharing a word with a fact);
   facts and candidate statements are embedded in one batch (meaning.py), when a model is
   configured.
3. Facts are placed (extraction/dream/group.py): into the node they belong to, into a new
   group, or left in their daily note when in doubt. Each cluster is a unit, oldest first;
   at most `max_units` are integrated, the rest are left for the next run.
   A new node needs `dream_min_statements` statements (default 2): fewer about a subject no
   node holds wait in their notes (pending, read again each night) for more for WAIT_DAYS,
   then stay there. On a later night a waiting statement is held as the node it would have
   founded (group.place's seeds: later facts may join it, it joins nothing), so waiting
   changes which statements share a node no more than founding at once did. Things said once
   (a pun, the weather, a passing remark) were most of the nodes a night made, one statement
   each; what recurs is worth a node (OpenClaw's dreaming promotes only what was recalled more
   than once, for the same reason). Measured in docs/evaluation.md ("One statement founds no
   node").
4. Each unit's action and text (extraction/dream/match.py, write.py), planned in memory.

The checkpoint is per fact: a note is checkpointed in the dream catalog once each of its
facts is integrated or was left in the note on purpose; until then the dream state keeps
`pending: {path: [keys of its facts done]}`, and the next run reads the note again (even
when it has left the scan window) and takes only the facts not done.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date

from memcli.extraction.dream import candidates as dream_candidates
from memcli.extraction.dream import group as dream_group
from memcli.extraction.dream import match as dream_match
from memcli.extraction.dream import rules as dream_rules
from memcli.extraction.dream import write as dream_write
from memcli.extraction.dream.change import raw_words
from memcli.extraction.dream.evidence import Evidence
from memcli.extraction.dream.node import Node, statements
from memcli.extraction.dream.schema import Fact, Unit
from memcli.jobs.dream import meaning as dream_meaning
from memcli.jobs.dream.integrate import Digest, Plan, Result, first_words
from memcli.vault import frontmatter
from memcli.vault.workspace import Workspace

WAIT_DAYS = 30  # how long a lone statement waits in its note for a second one about its subject


def fact_key(f: Fact) -> str:
    return hashlib.sha1(" ".join(f.source().split()).encode("utf-8")).hexdigest()[:16]


@dataclass
class Progress:
    """Which facts of which changed notes this run saw, integrated, kept in the notes, or left."""

    keys: dict[str, set[str]] = field(default_factory=dict)  # path -> keys of all its facts
    done: dict[str, set[str]] = field(default_factory=dict)  # path -> keys done (earlier runs too)
    remaining: list[Fact] = field(default_factory=list)  # facts of units over max_units
    left_units: int = 0  # units over max_units
    kept: list[tuple[Fact, str]] = field(default_factory=list)  # facts left in their note, and why
    waiting: list[Fact] = field(default_factory=list)  # lone statements waiting for a second one
    facts: int = 0  # facts considered in this run
    grouping: str = "words"
    model: str = ""

    def finish(self, failed: list[Unit]) -> tuple[list[str], dict[str, list[str]]]:
        """(paths whose facts are all done, pending {path: done keys} for the others)."""
        for u in failed:  # a unit that could not be written is done again next run
            for f in u.facts:
                self.done.get(f.path, set()).discard(fact_key(f))
        complete, pending = [], {}
        for path, keys in self.keys.items():
            done = self.done.get(path, set()) & keys
            if keys <= done:
                complete.append(path)
            else:
                pending[path] = sorted(done)
        return complete, pending

    def remaining_paths(self) -> list[str]:
        return sorted({f.path for f in self.remaining})


def parse_notes(texts: dict[str, str]) -> list[tuple[str, str, dict]]:
    """(path, body, frontmatter) of each changed note (offline and LLM-assisted dream read them alike)."""
    out = []
    for rel, text in texts.items():
        src, n = frontmatter.split(text)
        meta, _ = frontmatter.parse(src)
        out.append((rel, "\n".join(text.split("\n")[n:]), meta))
    return out


def pending_facts(notes: list[tuple[str, str, dict]], pending: dict) -> tuple[list[Fact], Progress]:
    """The notes' statements not yet decided by an earlier night (`pending`: path -> decided keys)."""
    prog = Progress()
    fresh = []
    for path, body, meta in notes:
        facts = dream_rules.facts_of(path, body, meta)
        before = given if isinstance(given := pending.get(path), list) else []
        prog.keys[path] = {fact_key(f) for f in facts}
        prog.done[path] = set(before) & prog.keys[path]
        fresh += [f for f in facts if fact_key(f) not in prog.done[path]]
    prog.facts = len(fresh)
    return fresh, prog


def plan(
    ws: Workspace,
    texts: dict[str, str],
    max_units: int,
    state: dict,
    warnings: list[str],
    dry_run: bool = False,
    day: str | None = None,
) -> tuple[list[Unit], list, Plan, Progress]:
    """(units integrated, topic candidates, the plan, the progress) for the changed notes' texts;
    `day`: the night dreamt, which a lone statement's wait is counted to (None: no wait)."""
    pending = given if isinstance(given := state.get("pending"), dict) else {}
    # oldest note first (a pending note is read after the night's own): facts are placed in the
    # order they were said, so a later statement joins the older one rather than the reverse
    notes = sorted(parse_notes(texts), key=lambda n: ws.date_of(n[0]) or "")
    facts, prog = pending_facts(notes, pending)
    out = Plan()
    digest = Digest(ws, out)
    nodes = digest.nodes()
    ev, candidates, found = evidence(ws, notes, facts, nodes, warnings, dry_run)
    prog.grouping, prog.model = found.grouping, found.model
    waiting = given if isinstance(given := state.get("waiting"), dict) else {}
    seeds = frozenset(id(f) for f in facts if fact_key(f) in (waiting.get(f.path) or ()))
    placement = dream_group.place(facts, candidates, ev, dream_rules.contexts(notes), seeds)
    prog.kept = placement.kept
    for f, _ in placement.kept:
        prog.done[f.path].add(fact_key(f))
    placed = _second_statement(ws, placement.placed, day, prog)
    taken, left = placed[:max_units], placed[max_units:]
    prog.remaining, prog.left_units = [f for p in left for f in p.unit.facts], len(left)
    for p in taken:
        _integrate(ws, digest, p, ev, out)
        for f in p.unit.facts:
            prog.done[f.path].add(fact_key(f))
    if not dry_run:  # the lone statements the next night holds as nodes (dream_group.place's seeds)
        state["waiting"] = {}
        for f in prog.waiting:
            state["waiting"].setdefault(f.path, []).append(fact_key(f))
        if not state["waiting"]:
            del state["waiting"]
    units = [p.unit for p in taken]
    return units, [dream_rules.topic(u, ev.skip) for u in units], out, prog


def _second_statement(ws: Workspace, placed: list, day: str | None, prog: Progress) -> list:
    """The placed units less new nodes with fewer statements than `dream_min_statements`: those
    wait in their notes (not done: read again next night) until WAIT_DAYS after their newest
    note's day, then stay there. Statements of notes with no date found at once, as before."""
    least = ws.settings.dream_min_statements
    out = []
    for p in placed:
        facts = p.unit.facts
        days = [ws.date_of(f.path) for f in facts]
        if not day or p.target is not None or len(facts) >= least or None in days:
            out.append(p)
        elif (date.fromisoformat(day) - date.fromisoformat(max(d for d in days if d))).days < WAIT_DAYS:
            prog.waiting += facts
        else:
            why = f"stated {len(facts)} time(s): fewer than dream_min_statements ({least}) within {WAIT_DAYS} days"
            for f in facts:
                prog.kept.append((f, why))
                prog.done[f.path].add(fact_key(f))
    return out


def _integrate(ws: Workspace, digest: Digest, p: dream_group.Placed, ev: Evidence, out: Plan) -> None:
    unit = p.unit
    target = digest.read(p.target.path) if p.target is not None else None  # as planned so far in this run
    decision = dream_match.decide(unit, target, ev)
    if not decision.action:
        out.skipped.append((unit, "already in the digest: the node states every statement with these sources"))
        return
    node: Node | None
    if target is None:
        path = digest.free_path(unit.bucket, unit.name)
        node = dream_write.create(unit, decision, path, ws.date_of, p.related)
        result = Result(
            unit,
            "CREATE",
            path,
            f"new {unit.bucket} node: {first_words(decision.new_facts[0].line())}",
            _created(unit, decision),
        )
    else:
        node = dream_write.update(target, unit, decision, ws.date_of, p.related)
        if node is None:
            out.skipped.append((unit, "already in the digest: the node states every statement with these sources"))
            return
        result = Result(unit, decision.action, node.path, _note(decision), _merged(unit, target, decision, ev))
    out.nodes[node.path] = node
    out.results.append(result)


def _created(unit: Unit, d: dream_match.Decision) -> str:
    about = unit.title or unit.name.replace("-", " ")
    notes = len(unit.paths)
    why = f"no node is about {about!r} yet: {len(unit.facts)} statement(s) from {notes} note(s) about it"
    fixed = [v for _, v in d.reasons if v.action == "CORRECT"]
    return why + (f"; {len(fixed)} later value(s) replace earlier ones (in History)" if fixed else "")


def _merged(unit: Unit, node, d: dream_match.Decision, ev: Evidence) -> str:
    """Why the unit joined this node (the words or meaning they share) and what each statement did."""
    said = statements(node.body)
    shared = sorted({w for f in unit.facts for s in said for w in raw_words(f.line()) & raw_words(s) if ev.bag(w)})
    link = f"shares {', '.join(shared[:5])!s} with it" if shared else "close in meaning to its statements"
    verdicts = "; ".join(f"{v.action}: {v.reason}" for _, v in d.reasons[:3])
    return f"about the subject of {node.path} ({link}); {verdicts}"


def _note(d: dream_match.Decision) -> str:
    if d.action == "CORRECT":
        f, old = d.contradictions[0]
        return f"superseded: {first_words(old, 12)!r} -> {first_words(f.line(), 12)!r}"
    if d.action == "CORROBORATE":
        return f"stated again in {len(d.corroborations) or 1} more source(s)"
    return f"added {len(d.new_facts)} statement(s): {first_words(d.new_facts[0].line())}"


def evidence(ws: Workspace, notes: list, facts: list[Fact], nodes: list, warnings: list[str], dry_run: bool):
    """The evidence facts are grouped on (with vectors when an embedding model is configured, and
    the titles of the `notes` they come from), the candidate nodes among `nodes`, and what gave the
    meaning (offline and model-assisted dream alike)."""
    skip = dream_rules.speaker_words(facts)
    bags = [set().union(*(Evidence().bag(s) for s in statements(n.body))) for n in nodes]
    said = [f.line() for f in facts] + [s for n in nodes for s in statements(n.body)]
    lexical = Evidence(None, skip, bags, said)
    candidates = dream_candidates.candidates(facts, nodes, lexical)
    found = (
        dream_meaning.vectors_for(
            ws, dream_candidates.texts_to_embed(facts, candidates, lexical), warnings, save=not dry_run
        )
        if facts
        else dream_meaning.Meaning(None, "words")
    )
    ev = Evidence(found.vectors, skip, bags, said) if found.vectors is not None else lexical
    ev.titles = dream_rules.titles(notes)  # a list goes where its note's title says (dream_group)
    return ev, candidates, found
