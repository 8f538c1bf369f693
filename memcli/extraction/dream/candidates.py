"""Which digest nodes a dream run compares the new facts with, and what it embeds to compare them."""

from __future__ import annotations

from memcli.extraction.dream.evidence import Evidence, mostly_cjk, plain
from memcli.extraction.dream.node import Node, statements
from memcli.extraction.dream.schema import Fact

MAX_CANDIDATES = 400  # digest nodes compared with every fact; beyond, those sharing words with one


def candidates(facts: list[Fact], nodes: list[Node], ev: Evidence) -> list[Node]:
    """The nodes facts are compared with: all of them, or in a large digest those sharing a word."""
    if len(nodes) <= MAX_CANDIDATES:
        return nodes
    ours = set().union(*(ev.bag(f.line()) for f in facts)) if facts else set()
    scored = []
    for i, n in enumerate(nodes):
        theirs = set().union(ev.bag(n.description), *(ev.bag(s) for s in statements(n.body)))
        scored.append((len(ours & theirs), -i, n))
    scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [n for k, _, n in scored[:MAX_CANDIDATES] if k]


def texts_to_embed(facts: list[Fact], nodes: list[Node], ev: Evidence) -> list[str]:
    """Everything the grouping compares by meaning, as it is embedded (speaker prefixes left out;
    CJK statements have no vector: Evidence.vector), each also without its names (Evidence.meaning)."""
    said = [f.line() for f in facts] + [s for n in nodes for s in statements(n.body)]
    out = [form for t in said if not mostly_cjk(t) for form in (plain(t), ev.nameless(t))]
    return list(dict.fromkeys(t for t in out if t))
