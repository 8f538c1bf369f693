"""merge=: how hits of one file are folded (keyword tuning). Applied by the `hits` stage.

on: memcli's rule; off: no merging; drop: a hit touching a better-ranked one is dropped
(its slot freed, nothing grows); cap<x>: merged while the merged text stays within x x
chunking target tokens, a hit that would grow it further dropped; capkeep<x>: kept on its
own instead; perfile<n>: no merging, at most n hits of one file ahead of every other file's.
LoCoMo with stem+stop, session nDCG@10 / turn R@5: the unbounded merge memcli had then 0.819 / 0.457,
off 0.810 / 0.827, drop 0.818 / 0.790, cap1.5 0.818 / 0.798, perfile1 0.820 / 0.787,
perfile2 0.810 / 0.826, capkeep1.5 0.812 / 0.832 (pydoc section nDCG@10 0.201 -> 0.709).
Shipped: capkeep1.5 (search.merge_max_factor, memcli.retrieval.fusion.merge).
"""

from __future__ import annotations

from bench.harness.context import Ctx


def _touches(a, b) -> bool:
    return a.path == b.path and a.start_line <= b.end_line + 1 and a.end_line >= b.start_line - 1


def _merged(snap, a, b):
    """The hit a with b's chunks folded in (text rebuilt), and its estimated tokens."""
    from memcli.index.notes.chunker import estimate_tokens
    from memcli.retrieval import fusion
    from memcli.retrieval.hits import Hit

    trial = Hit(a.path, a.start_line, a.end_line, a.text, a.score, docs=a.docs + b.docs)
    fusion.rebuild_text(snap, trial)
    return trial, sum(estimate_tokens(x) for x in trial.text.split("\n"))


def per_file(hits, n: int):
    """Unmerged, but at most n hits of one file before all others."""
    count: dict[str, int] = {}
    first, rest = [], []
    for h in hits:
        count[h.path] = count.get(h.path, 0) + 1
        (first if count[h.path] <= n else rest).append(h)
    return first + rest


def merge_variant(snap, hits, how: str):
    """drop, cap<x>, capkeep<x> or perfile<n> (see the module docstring)."""
    if how.startswith("perfile"):
        return per_file(hits, int(how[7:]))
    keep = how.startswith("capkeep")
    cap = float(how[7 if keep else 3 :]) * Ctx.target if how.startswith("cap") else None
    if how != "drop" and cap is None:
        raise SystemExit(f"unknown merge variant {how!r}")
    kept = []
    for h in hits:
        target = next((k for k in kept if _touches(h, k)), None)
        if target is None:
            kept.append(h)
        elif cap is not None:
            trial, tokens = _merged(snap, target, h)
            if keep and tokens > cap:
                kept.append(h)  # too big to merge: shown on its own
                continue
            if tokens <= cap:
                target.docs, target.start_line, target.end_line, target.text = (
                    trial.docs,
                    trial.start_line,
                    trial.end_line,
                    trial.text,
                )
                for attr in ("vector", "keyword"):
                    mine, theirs = getattr(target, attr), getattr(h, attr)
                    if theirs is not None and (mine is None or theirs > mine):
                        setattr(target, attr, theirs)
    return kept
