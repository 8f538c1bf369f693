"""Passages: the small windows of a chunk that the vector branch scores.

A 400-token chunk mixes several topics, so one vector for all of it blurs the
one sentence a query is about. Each chunk is embedded as ~`passage_tokens`
windows instead and scores as its best passage (LoCoMo turn Recall@5 0.832 ->
0.841, pydoc 0.846 -> 0.863; docs/evaluation.md). What is shown and fused is
still the whole chunk.

A chunk whose body fits one passage (or passage_tokens 0 = off) is a single
passage equal to the chunk text, so its request-cache key and vector are the
chunk's own: most notes need no new embedding when this is switched on.
"""

from __future__ import annotations

from memcli.index.notes.chunker import estimate_tokens


def split(text: str, crumb_lines: int, target: int) -> list[str]:
    """The chunk text as passages: each the breadcrumb plus a window of whole body lines.

    Windows hold at most `target` estimated tokens (a longer line stands alone) and
    start up to target // 5 tokens before the previous one ended, so a sentence on a
    window edge is whole in one of them; every window starts after the previous
    one's start, so a run of long lines still advances.
    """
    lines = text.split("\n")
    head, body = lines[:crumb_lines], lines[crumb_lines:]
    tok = [estimate_tokens(x) for x in body]
    if target <= 0 or sum(tok) <= target:
        return [text]
    out, i, n = [], 0, len(body)
    while i < n:
        j, used = i, 0
        while j < n and (j == i or used + tok[j] <= target):
            used += tok[j]
            j += 1
        out.append("\n".join(head + body[i:j]))
        if j >= n:
            break
        k, back = j, 0
        while k - 1 > i and back + tok[k - 1] <= target // 5:
            k -= 1
            back += tok[k]
        i = k
    return out


def surely_single(text: str, target: int) -> bool:
    """True when `text` is one passage whatever its breadcrumb (all of it fits `target`).

    The chunk store holds one vector per chunk, the mean of its passages: only for
    such a chunk is it also the vector of a passage (the chunk text itself). The
    store does not record breadcrumb lengths, hence the whole-text test.
    """
    return target <= 0 or sum(estimate_tokens(x) for x in text.split("\n")) <= target


def mean_vectors(rows, offsets):
    """The chunk store's vector of each chunk: its passages' mean, L2-normalised; a
    one-passage chunk's vector as it is, so it equals that passage's vector exactly.
    Chunk d's passages are rows offsets[d]..offsets[d+1] (at least one each)."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    starts = np.asarray(offsets[:-1], dtype=np.intp)
    if len(starts) == 0:
        return np.zeros((0, rows.shape[1]), dtype=np.float32)
    counts = np.diff(np.asarray(offsets, dtype=np.intp))
    out = np.add.reduceat(rows, starts, axis=0)
    multi = counts > 1
    if multi.any():
        norms = np.linalg.norm(out[multi], axis=1, keepdims=True)
        out[multi] /= np.where(norms > 0, norms, 1.0)
    return out
