"""ksub=<tokens>:<beta>: a best-passage term on the keyword side (passage tuning).

A chunk's score is (1 - beta) x its BM25 / the best chunk's + beta x the best BM25 of
the small (`tokens`, 20% overlap) chunks of its file overlapping its lines / the best
small chunk's, so query terms close together (in one turn) count for more. The small
chunks are their own index of the same vault. LoCoMo, session nDCG@10 / turn R@5 against
BM25's 0.807 / 0.824: 100:0.3 0.808 / 0.821, 100:0.5 0.807 / 0.817, 50:0.3 0.807 / 0.815;
no gain (pydoc 100:0.3: section R@5 0.833 vs 0.825, module nDCG@10 0.901 vs 0.902).
Not shipped.
"""

from __future__ import annotations

from pathlib import Path

from bench.experiments.common import overlaps
from bench.harness.context import Ctx
from bench.harness.indexes import ensure_index, workspace

_KSUB_CACHE: dict = {}


def _small_chunks(snap, target: int, spec: dict):
    """(small-chunk snapshot, small chunk -> the chunks of snap it overlaps)."""
    from memcli.index import sync

    key = (Ctx.root, snap.header.get("generation"), target)
    entry = _KSUB_CACHE.get(key)
    if entry is None:
        sub_ws = workspace(
            Path(Ctx.root),
            {"chunking.target_tokens": target, "chunking.overlap_tokens": target // 5},
            {k: v for k, v in spec.items() if k in ("tok", "k1", "b")},
        )
        ensure_index(sub_ws, vectors=False)
        sub = sync.open_snapshot(sub_ws)
        owners: dict[int, list[int]] = {}
        for d, sd in overlaps(snap, sub):
            owners.setdefault(sd, []).append(d)
        entry = _KSUB_CACHE[key] = (sub, owners)
    return entry


def make_sub_keyword(spec: dict, score):
    """A replacement for memcli.index.keyword.bm25.search (keyword mode: no expansion to pass on)."""
    target, beta = spec["ksub"].split(":")
    target, beta = int(target), float(beta)

    def search(snap, query, k, allowed=None, extra=()):
        sub, owners = _small_chunks(snap, target, spec)
        base = score(snap, query, allowed)
        if not base:
            return []
        subs = score(sub, query)
        best: dict[int, float] = {}
        for sd, s in subs.items():
            for d in owners.get(sd, ()):
                if s > best.get(d, 0.0):
                    best[d] = s
        mb = max(base.values())
        ms = max(best.values()) if best else 1.0
        out = {
            d: (1 - beta) * base.get(d, 0.0) / mb + beta * best.get(d, 0.0) / ms
            for d in set(base) | {d for d in best if allowed is None or allowed(d)}
        }
        return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))[:k]

    return search


def install(spec: dict, patch) -> None:
    from memcli.index.keyword import bm25

    patch.set(bm25, "search", make_sub_keyword(spec, bm25.score))
