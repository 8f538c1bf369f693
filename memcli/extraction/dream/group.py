"""Offline dream grouping: which facts belong together, and which existing node each group updates.

Facts are placed oldest first. A fact (or the numbered steps of one list, which move as
one) joins the cluster it links to best: an existing digest node, whose statements are its
members, or a group formed earlier in this run. A link to a member is evidence.py's (meaning
and shared words, or one heading of one note), the same exclusive slot ("I prefer X"), or an
explicit change of what the member states ("replaced the Brompton"). With vectors the fact
must also be close to the cluster as a whole (the mean of its members), so one incidental
link does not pull it in; a fact very close to the mean of a cluster joins it without a pair
link. A fact that links to two clusters about equally stays in its daily note, as does one
with too few words to say what it is about: when in doubt, no node. Then a second look: each
fact placed before the facts that tie it elsewhere moves there, and a group of this run that
links to another cluster as a whole joins it. Each cluster that received facts is a unit: an
update of its node, or a new node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcli.extraction.dream.change import CHANGE, changes, changes_measure, holds, old_value, raw_words
from memcli.extraction.dream.evidence import MARGIN, MEANING, WORD_BONUS, Evidence, Link, mostly_cjk, speaker
from memcli.extraction.dream.match import jaccard, slot
from memcli.extraction.dream.naming import bucket, name, title
from memcli.extraction.dream.node import BUCKETS, Node, cited, slugify, statements
from memcli.extraction.dream.schema import Fact, Unit
from memcli.extraction.dream.subject import subject_title

MIN_SUBSTANCE = 1.0  # word weight a fact needs to found a node of its own (one content word)


@dataclass
class Cluster:
    node: Node | None  # the existing node, None for a group formed in this run
    said: list[str] = field(default_factory=list)  # the node's statements
    facts: list[Fact] = field(default_factory=list)  # facts placed here in this run
    linked: set[int] = field(default_factory=set)  # other clusters the facts also linked to
    seed: bool = False  # a lone statement of an earlier night, waiting for a second: it holds as a node would

    def members(self) -> list[str | Fact]:
        return [*self.said, *self.facts]


@dataclass
class Placed:
    unit: Unit
    target: Node | None  # the node to update; None: a new node
    related: list[str]  # existing nodes the facts also linked to (worth a link, not a merge)
    order: int  # the position of its first fact: units are integrated oldest first


@dataclass
class Placement:
    placed: list[Placed]
    kept: list[tuple[Fact, str]]  # facts left in their daily note, and why


# a statement that starts with a pronoun leans on the one before it ("They eat layers mash" after
# "The user keeps 10 hens"): what it is about is said there
_LEANS = re.compile(r"^(?:she|he|they|it|her|his|their|its)\b(?!['’]s (?:been )?(?:raining|sunny|cold|hot))", re.I)


def items(facts: list[Fact]) -> list[list[Fact]]:
    """Facts in placement order; the numbered steps of one list in one note section as one item,
    and a statement leaning on the one before it (a pronoun for its subject) with that one."""
    out: list[list[Fact]] = []
    lists: dict[tuple[str, str], list[Fact]] = {}
    before: Fact | None = None
    for f in facts:
        if f.numbered:
            key = (f.path, f.section)
            if key not in lists:
                lists[key] = []
                out.append(lists[key])
            lists[key].append(f)
        elif (
            before is not None
            and not before.numbered
            and (before.path, before.section, before.speaker) == (f.path, f.section, f.speaker)
            and _LEANS.match(f.text)
        ):
            out[-1].append(f)
        else:
            out.append([f])
        before = f
    return out


def _centroid(ev: Evidence, item: list[Fact], c: Cluster) -> tuple[float, int] | None:
    """(cosine of the item's mean with the cluster's mean, members with a vector); None without
    vectors, or for an item in Chinese, Japanese or Korean (which has none, Evidence.vector: the
    default model would join any CJK statement to a cluster of others)."""
    if not ev.semantic or all(mostly_cjk(f.line()) for f in item):
        return None
    texts = [m if isinstance(m, str) else m.line() for m in c.members()]
    # a name shared but not the subject ("from Utawala", "for Utawala Queens") pulls the means together
    apart = any(ev.shares_name(f.line(), t) for f in item for t in texts)
    vector = ev.nameless_vector if apart else ev.vector
    vecs = [v for v in (vector(t) for t in texts) if v is not None]
    mine = [v for v in (vector(f.line()) for f in item) if v is not None]
    if not vecs or not mine:
        return 0.0, 0
    import numpy as np

    a = np.mean(np.asarray(vecs, dtype="float32"), axis=0)
    b = np.mean(np.asarray(mine, dtype="float32"), axis=0)
    norm = float(np.linalg.norm(a)) * float(np.linalg.norm(b))
    return (float(a @ b) / norm if norm else 0.0), len(vecs)


def same_context(a: Fact, b: str | Fact, contexts: dict[str, str]) -> str | None:
    """The kind of note ("note", "session") when both facts are under one heading of it."""
    if isinstance(b, Fact) and a.path == b.path and a.section == b.section:
        return contexts.get(a.path)
    return None


def link(ev: Evidence, f: Fact, member: str | Fact, contexts: dict[str, str] | None = None) -> Link | None:
    """The evidence's link, or the same exclusive slot ("I prefer X", "the deadline is Y") with
    another value or more about the same one, when the two also share a word; or an explicit change
    ("moved from X to", "replaced X") of what the other states, when they share a name or the
    other holds the value the change replaces."""
    text = member.line() if isinstance(member, Fact) else member
    found = ev.link(f.line(), text, same_context(f, member, contexts or {}))
    if found is not None:
        return found
    weight = ev.shared(f.line(), text)
    if weight >= 0.5 and slot(f, text):  # the same exclusive slot: another value, or more about it
        cos = ev.cosine(f.line(), text)
        return Link((cos or 0.0) + 1.0, cos, weight)
    if weight >= 1.0 and changes(f.text):
        weight = ev.shared(CHANGE.sub(" ", f.line()), text)  # "cut" of "cut ... from 30" is no shared word
        was = old_value(f.text)
        held = holds(was, text)
        cos = ev.cosine(f.line(), text)
        # a weak word alone links nothing, even the value a change gives up ("the Sunday class
        # folded" is not about "a Sunday beer league")
        if weight >= 1.5 or (weight >= 1.0 and (held or changes_measure(f.text, text))):
            score = (
                (cos or 0.0)
                + 0.5
                + WORD_BONUS * weight
                + (0.5 if held else 0.0)
                + 0.2 * jaccard(raw_words(f.line()), raw_words(text))
            )
            return Link(score, cos, weight, explicit=held)
    return None


def _affinity(
    ev: Evidence, item: list[Fact], c: Cluster, contexts: dict[str, str], by_mean: bool = True
) -> Link | None:
    """The item's link to the cluster: its best link to a member, if the cluster as a whole agrees
    (a link made by the note context needs no more), or (`by_mean`) a close match with the
    cluster's mean."""
    if not _speakers_agree(item, c):
        return None  # one node per person: "Caroline: ..." and "Melanie: ..." are about two people
    best: Link | None = None
    linking = 0  # facts of the item with a link of their own
    for f in item:
        mine: Link | None = None
        for m in c.members():
            found = link(ev, f, m, contexts)
            if found is not None and (mine is None or found.score > mine.score):
                mine = found
        linking += mine is not None
        if mine is not None and (best is None or mine.score > best.score):
            best = mine
    if best is not None and (best.context or best.explicit):
        return best  # a fact's own note heading is the context it was written in; a change names its value
    if len(item) >= 3 and 2 * linking < len(item) and not _titled_after(ev, item, c):
        best = None  # a list goes where most of its steps belong: one step sharing "lab" is no subject
    mean = _centroid(ev, item, c)
    if mean is None:
        return best
    cos, size = mean
    if best is not None and cos >= MEANING["centroid"]:
        return best
    if by_mean and size >= 2 and cos >= MEANING["join"]:
        return Link(cos, cos, 0.0)
    return None


def _titled_after(ev: Evidence, item: list[Fact], c: Cluster) -> bool:
    """The title of the list's note names what the cluster states ("Grant submission checklist"
    and "the grant deadline was pushed"): the list is about the cluster even if few steps say so."""
    title = ev.titles.get(item[0].path, "")
    return bool(title) and any(ev.shared(title, m if isinstance(m, str) else m.line()) >= 1.0 for m in c.members())


def _speakers_agree(item: list[Fact], c: Cluster) -> bool:
    ours = {f.speaker for f in item} - {"", "Assistant"}
    if not ours:
        return True
    theirs = {speaker(m) if isinstance(m, str) else m.speaker for m in c.members()} - {"", "Assistant"}
    return not theirs or theirs == ours


def _choose(
    ev: Evidence, item: list[Fact], clusters: list[Cluster], contexts: dict[str, str], by_mean: bool = True
) -> tuple[int | None, list[int], list[int] | None]:
    """(the cluster the item joins or None, the clusters it linked to, the clusters it links to about
    as well as to the one it joins; None when that is a doubt)."""
    scored = sorted(
        (
            (found.score, -i)
            for i, c in enumerate(clusters)
            if (found := _affinity(ev, item, c, contexts, by_mean)) is not None
        ),
        reverse=True,
    )
    linked = [-i for _, i in scored]
    if not scored:
        return None, [], []
    home = [i for i in linked if _holds(ev, item, clusters[i])]
    if home:  # a fact a node already states with this very source stays there (re-runs change nothing)
        return home[0], linked, []
    best = scored[0][0]
    rivals = [-i for s, i in scored[1:] if s >= best - (MARGIN if ev.semantic else 0.0)]
    if rivals and not _same_node_family(clusters, [linked[0], *rivals]):
        return None, linked, None
    return linked[0], linked, rivals


def _holds(ev: Evidence, item: list[Fact], c: Cluster) -> bool:
    """Whether the cluster's node states every fact of the item and cites its note."""
    if c.node is None:
        return False
    cites = cited(c.node.body)
    return all(f.path in cites and any(ev.same(f.line(), s) for s in c.said) for f in item)


def _same_node_family(clusters: list[Cluster], ids: list[int]) -> bool:
    """Rivals that are all groups of this run already linked to each other are not a doubt, nor
    are lone statements waiting for a second (seeds): a statement that links to two of them
    about equally is the second for both ("Wambui comes home on the school van now" after
    "Wambui is in Grade 1" and "Brian picks her up from school"), and they found one node."""
    if all(clusters[i].seed for i in ids):
        return True
    return all(clusters[i].node is None for i in ids) and all(
        j in clusters[ids[0]].linked or ids[0] in clusters[j].linked for j in ids[1:]
    )


def place(
    facts: list[Fact],
    nodes: list[Node],
    ev: Evidence,
    contexts: dict[str, str] | None = None,
    seeds: frozenset[int] = frozenset(),
) -> Placement:
    """`contexts`: path -> "note" | "session" (rules.contexts): facts under one heading of one
    note count as context for each other. `seeds`: ids of facts that found no node on an earlier
    night because they were alone (jobs/dream/offline.py): each is a cluster of its own, as the
    node it would have founded, which later facts may join and which joins nothing."""
    contexts = contexts or {}
    clusters = [Cluster(n, statements(n.body)) for n in nodes]
    kept: list[tuple[Fact, str]] = []
    order: dict[int, int] = {}
    where: list[tuple[list[Fact], int]] = []
    rank = {id(f): i for i, f in enumerate(facts)}
    for pos, item in enumerate(items(facts)):
        if all(id(f) in seeds for f in item):
            clusters.append(Cluster(None, facts=list(item), seed=True))
            order[len(clusters) - 1] = pos
            continue
        chosen, linked, ties = _choose(ev, item, clusters, contexts)
        if ties is None:
            names = ", ".join(_label(clusters[i]) for i in linked[:3])
            kept += [(f, f"links about equally to {names}") for f in item]
            continue
        if chosen is None:
            if sum(ev.substance(f.line()) for f in item) < MIN_SUBSTANCE:
                kept += [(f, "too few words to say what it is about") for f in item]
                continue
            if not any(_names_something(f.line()) for f in item):
                kept += [(f, "names nothing a node could be about (no noun phrase)") for f in item]
                continue
            if all(f.errand for f in item):
                kept += [(f, "said while asking the assistant for a task: joins a node, founds none") for f in item]
                continue
            clusters.append(Cluster(None))
            chosen = len(clusters) - 1
        if clusters[chosen].seed:  # the seeds it links to as well found one node with it
            for j in [j for j in ties if clusters[j].seed]:
                clusters[chosen].facts = sorted(clusters[chosen].facts + clusters[j].facts, key=lambda f: rank[id(f)])
                clusters[j].facts = []
                order.pop(j, None)
        clusters[chosen].facts += item
        clusters[chosen].linked |= {i for i in linked if i != chosen}
        order.setdefault(chosen, pos)
        where.append((item, chosen))
    _replace(ev, clusters, contexts, where, rank)
    order = {i: pos for i, pos in order.items() if clusters[i].facts}
    _merge_groups(ev, clusters, contexts, order, rank)
    placed = []
    for i, pos in sorted(order.items(), key=lambda kv: kv[1]):
        c = clusters[i]
        related = [
            node.path for j in sorted(c.linked) if (node := clusters[j].node) is not None and node is not c.node
        ][:3]
        placed.append(Placed(_unit(c, ev), c.node, related, pos))
    return Placement(placed, kept)


def _replace(
    ev: Evidence,
    clusters: list[Cluster],
    contexts: dict[str, str],
    where: list[tuple[list[Fact], int]],
    rank: dict[int, int],
) -> None:
    """Second look at each fact, now that all of this run's facts are placed: one placed before the
    facts that tie it to another cluster moves there (a fact that founded its group stays)."""
    for item, k in where:
        home = clusters[k]
        if home.node is None and home.facts[: len(item)] == item:
            continue
        home.facts = [f for f in home.facts if all(f is not g for g in item)]
        chosen, _linked, ties = _choose(ev, item, clusters, contexts)
        target = clusters[chosen] if chosen is not None and ties is not None else home
        target.facts = sorted(target.facts + item, key=lambda f: rank[id(f)])


def _merge_groups(
    ev: Evidence, clusters: list[Cluster], contexts: dict[str, str], order: dict[int, int], rank: dict[int, int]
) -> None:
    """Second pass: a group formed in this run joins the cluster its facts, taken together, link to
    (facts placed earlier could not see the ones placed after them)."""
    changed = True
    while changed:
        changed = False
        for i in sorted(order, key=order.__getitem__):
            c = clusters[i]
            if c.node is not None or c.seed or not c.facts:
                continue
            others = [
                Cluster(x.node, x.said, x.facts, x.linked, x.seed) if j != i else Cluster(None)
                for j, x in enumerate(clusters)
            ]
            # two groups' means are alike whenever their subjects are related: only a pair link merges
            chosen, _linked, ties = _choose(ev, c.facts, others, contexts, by_mean=False)
            if chosen is None or ties is None or chosen == i:
                continue
            target = clusters[chosen]
            target.facts = sorted(target.facts + c.facts, key=lambda f: rank[id(f)])
            target.linked |= c.linked - {chosen}
            order[chosen] = min(order.get(chosen, order[i]), order[i])
            c.facts = []
            del order[i]
            changed = True
            break


def _names_something(text: str) -> bool:
    """Whether a statement has a noun phrase to found a node on ("The user will plan it for next
    week" has none); text in other scripts is not judged by English phrases."""
    latin = len(re.findall(r"[A-Za-z]", text))
    return latin < 0.5 * len(re.sub(r"\W", "", text)) or bool(subject_title([text]))


def _label(c: Cluster) -> str:
    return c.node.path if c.node else f"a new group ({_first_words(c.facts[0].line())})"


def _first_words(text: str, n: int = 8) -> str:
    w = text.split()
    return " ".join(w[:n]) + ("…" if len(w) > n else "")


def _unit(c: Cluster, ev: Evidence) -> Unit:
    facts = c.facts
    if c.node is not None:
        parts = c.node.path.split("/")
        node_bucket = parts[-2] if len(parts) >= 2 and parts[-2] in BUCKETS else bucket(facts)
        unit_name, unit_bucket = c.node.name, node_bucket
    else:
        unit_name, unit_bucket = name(facts, ev), bucket(facts)
    summary = " ".join(f.line().rstrip(".") + "." for f in facts)[:1200]
    named = title(facts, ev.titles) if c.node is None else ""
    return Unit(
        unit_name,
        unit_bucket,
        summary,
        list(dict.fromkeys(f.path for f in facts)),
        list(facts),
        named if named and slugify(named) == unit_name else "",
    )
