"""Filling a segment's vector file from the request cache, and its chunk store lines from
the file (the parts of an embedding run, memcli.index.embed, that work on one segment)."""

from __future__ import annotations

from memcli.errors import CorruptStore
from memcli.index.vectors import passages, vecseg, vectors


class Keys:
    """Request-cache keys of each chunk's passages, split once per run: a checkpoint every few
    seconds must not re-split the whole vault. Keyed by (segment, chunk): segments never
    change, so a sync meanwhile only adds keys."""

    def __init__(self, target: int):
        self.target, self.by_chunk = target, {}

    def split(self, seg, j: int) -> tuple[list[str], list[str]]:
        texts = passages.split(seg.snap.text(j), seg.snap.meta(j)[3], self.target)
        keys = [vectors.text_key(t) for t in texts]
        self.by_chunk[(seg.name, j)] = keys
        return keys, texts

    def of(self, seg, j: int) -> list[str]:
        keys = self.by_chunk.get((seg.name, j))
        return keys if keys is not None else self.split(seg, j)[0]


def gains(seg, vs, only: set, cache: dict, keys: Keys) -> bool:
    """Whether the request cache holds a vector for a passage of the chunks `only` of the
    segment that have none (only those segments' files are written again)."""
    return any(k in cache for j in only if vs is None or not vs.mask[j] for k in keys.of(seg, j))


def fill(seg, vs, cache: dict, keys: Keys, dims: int, only: set):
    """(mask, offsets, rows, chunk rows, changed) of one segment: its file's rows (when there is
    one) plus every vector the request cache knows for its chunks `only` without vectors."""
    import numpy as np

    if vs is not None:
        mask, offsets = np.array(vs.mask), vs.offsets.astype(np.int64)
        rows, means = np.array(vs.rows), np.array(vs.chunk_rows)
        vs.release()
    else:
        counts = [len(keys.of(seg, j)) if j not in seg.dead_doc_set else 0 for j in range(seg.snap.n_docs)]
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        rows = np.zeros((int(offsets[-1]), dims), dtype=vecseg.ROW_DTYPE)
        mask = np.zeros(seg.snap.n_docs, dtype=np.uint8)
        means = np.zeros((seg.snap.n_docs, dims), dtype=vecseg.ROW_DTYPE)
    changed = vs is None
    for j in sorted(only):
        if mask[j] or j in seg.dead_doc_set:
            continue
        a, b = int(offsets[j]), int(offsets[j + 1])
        doc_keys = keys.of(seg, j)
        if len(doc_keys) != b - a:
            continue  # cannot happen for an aligned file; never pair a row with another text
        missing = False
        for i, key in enumerate(doc_keys):
            vec = cache.get(key)
            if vec is not None:
                changed = changed or not np.array_equal(rows[a + i], vec)
                rows[a + i] = vec
            elif not rows[a + i].any():  # rows carried over by a sync count too
                missing = True
        if not missing:
            mask[j], changed = 1, True
            means[j] = passages.mean_vectors(rows[a:b], [0, b - a])[0]
    return mask, offsets, rows, means, changed


def store_vectors(metadata, view, vecs, complete_only: bool = False) -> bool:
    """Put the chunk vectors of segments whose files are not `stored` into their chunk store
    lines (dropping those of another space), then mark the files stored; `complete_only`:
    only segments all of whose live chunks have vectors (a long run does this as it goes, so
    its end does not rewrite every segment's lines at once). False when the stores lost
    track of a segment (the next sync rebuilds them)."""
    from memcli.index.stores import mirror

    todo = {}
    for seg, vs in vecs.parts:
        if vs is None or vs.stored:
            continue
        live = vecs.live(seg)
        if complete_only and not vs.mask[live].all():
            continue
        todo[seg.name] = {j: vectors.f16_b64(vs.chunk_rows[j]) for j in live.tolist() if vs.mask[j]}
    if not todo:
        return True
    try:
        mirror.revector(metadata, view, todo)
    except CorruptStore:
        return False
    for seg, vs in vecs.parts:
        if vs is not None and seg.name in todo:
            vecseg.mark_stored(vs.path)
    return True
