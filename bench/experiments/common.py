"""Helpers the prototypes share: mapping the chunks of one index onto another's."""

from __future__ import annotations


def path_of(snap, fidx: int) -> str:
    return snap.paths[fidx]


def overlaps(snap, sub):
    """(chunk of snap, chunk of sub) for every pair of one file whose line ranges overlap,
    chunk-major (snap's chunks in order, then sub's in order)."""
    by_path: dict[str, list[tuple[int, int, int]]] = {}
    for d in range(sub.n_docs):
        f, a, b, _ = sub.meta(d)
        by_path.setdefault(path_of(sub, f), []).append((a, b, d))
    for d in range(snap.n_docs):
        f, a, b, _ = snap.meta(d)
        for sa, sb, sd in by_path.get(path_of(snap, f), []):
            if sa <= b and sb >= a:
                yield d, sd
