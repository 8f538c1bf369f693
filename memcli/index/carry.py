"""Carry the active space's passage vectors over an index update (called by sync).

Kept chunks keep their rows. A fresh chunk (edited or added file) gets each
passage vector from an equal passage text seen before, so re-chunking after an
edit does not call the embedding provider for what did not change:
  * the old matrix, looking only at the old chunks of the same files (an edit
    moves text within a file; scanning every chunk would make a one-file update
    cost as much as the whole vault),
  * on a full rebuild, the old chunk store (its one vector per chunk is a
    passage's vector only for a one-passage chunk),
  * the request cache.
A chunk counts as embedded (mask 1) only when all its passages were found; the
rows found are kept even then, so the embedding run asks only for the rest.
"""

from __future__ import annotations

from pathlib import Path

from memcli.index import passages, store, vectors


class Carrier:
    """The new matrix of an update, built as fresh chunks arrive (fresh(), batch by batch,
    in the order they are numbered), written once deletions are known (write())."""

    def __init__(self, metadata: Path, old, passage_tokens: int):
        self.metadata, self.old, self.passage_tokens = metadata, old, passage_tokens
        self.space = vectors.active_space(metadata)
        self.m = None
        self.rows: list = []  # fresh passage rows (float16 bytes) and chunk rows (float32 bytes)
        self.chunks: list = []
        self.mask: list = []
        self.counts: list = []
        self._lookup = self._cache = None
        if self.space is not None and old is not None:
            self.m = vectors.open_matrix(metadata, self.space, old.header.get("generation", ""), passage_tokens)
            if self.m is None or self.m.n_docs != old.n_docs:
                # the old vectors do not fit (other passage size, older format, damaged): write
                # nothing, so the vector branch keeps pausing with its `mem reindex` warning
                # instead of searching a few fresh chunks; the embedding run rebuilds the matrix
                self.space = None

    def fresh(self, docs: list[tuple[str, str, int]], lines: list[bytes]) -> None:
        """Vectors for fresh chunks, (path, text, breadcrumb lines) each, from equal passages
        seen before; `lines` (their chunk store lines) of chunks whose passages were all
        found get their mean vector."""
        if self.space is None or not docs:
            return
        import numpy as np

        dims = int(self.space["dims"])
        lookup = _old_passages(self.old, self.m, docs, self.passage_tokens) if self.m is not None else \
            self._store_lookup()
        if self._cache is None:
            self._cache = vectors.load_cache(vectors.cache_path(self.metadata, self.space["id"]), dims)
        for i, (_, text, crumb) in enumerate(docs):
            texts = passages.split(text, crumb, self.passage_tokens)
            block = np.zeros((len(texts), dims), dtype=vectors.MATRIX_DTYPE)
            found = 0
            for j, p in enumerate(texts):
                key = vectors.text_key(p)
                vec = lookup.get(key)
                if vec is None:
                    vec = self._cache.get(key)
                if vec is not None:
                    block[j] = vec
                    found += 1
            complete = found == len(texts)
            mean = passages.mean_vectors(block, [0, len(block)])
            self.rows.append(block.astype(vectors.PASSAGE_DTYPE).reshape(-1).view(np.uint8))
            self.chunks.append(np.ascontiguousarray(mean, dtype=vectors.MATRIX_DTYPE).reshape(-1).view(np.uint8))
            self.mask.append(np.array([complete], dtype=np.uint8))
            self.counts.append(np.array([len(texts)]))
            if complete:
                lines[i] = store.with_vector(lines[i], vectors.f16_b64(mean[0]))

    def _store_lookup(self) -> dict:
        if self._lookup is None:  # a full rebuild: the old chunk store's vectors
            self._lookup = vectors.store_vectors(self.metadata, self.space, self.passage_tokens)
        return self._lookup

    def write(self, dropped: list[tuple[int, int]], n_old: int, generation: str) -> None:
        """Write the matrix for the new numbering: the old chunks but the `dropped` runs (old
        order), then the fresh ones."""
        if self.space is None:
            return
        import numpy as np

        keep_mask = np.ones(n_old, dtype=bool)
        for first, count in dropped:
            keep_mask[first:first + count] = False
        dims, m = int(self.space["dims"]), self.m
        row_parts, chunk_parts, parts_mask, parts_counts = [], [], [], []
        if m is not None and keep_mask is not None:
            _kept_parts(m, keep_mask, dims, row_parts, chunk_parts)
            parts_mask.append(m.mask[keep_mask])
            parts_counts.append(np.diff(m.offsets.astype(np.int64))[keep_mask])
        row_parts += self.rows
        chunk_parts += self.chunks
        mask = np.concatenate(parts_mask + self.mask) if parts_mask or self.mask else np.zeros(0, dtype=np.uint8)
        counts = np.concatenate(parts_counts + self.counts) if parts_counts or self.counts \
            else np.zeros(0, dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        vectors.write_matrix_parts(vectors.matrix_path(self.metadata, self.space["id"]),
                                   {"generation": generation, "space": self.space["id"],
                                    "identity": self.space.get("identity", ""), "dims": dims,
                                    "passage_tokens": self.passage_tokens,
                                    # fresh chunks got their store vectors in fresh(), so the
                                    # store stays as complete as it was
                                    "stored": bool(m is not None and m.header.get("stored"))},
                                   mask, offsets, int(offsets[-1]), row_parts, chunk_parts)


def _kept_parts(m, keep_mask, dims: int, row_parts: list, chunk_parts: list) -> None:
    """Byte ranges of the old file holding the kept docs' passage rows and chunk rows: one
    slice per run of consecutive kept docs, so a one-file update copies the rest of the
    matrix from file to file without building it in memory."""
    import numpy as np

    keep = np.asarray(keep_mask, dtype=bool)
    if not keep.any():
        return
    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.view(np.int8), [0]))))
    offsets = m.offsets
    prow, crow = 2 * dims, 4 * dims  # bytes per passage row (float16) and chunk row (float32)
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):  # docs a..b-1 are kept
        r0, r1 = int(offsets[a]), int(offsets[b])
        row_parts.append(m.raw(m.rows_offset + r0 * prow, m.rows_offset + r1 * prow))
        chunk_parts.append(m.raw(m.chunk_rows_offset + a * crow, m.chunk_rows_offset + b * crow))


def _old_passages(old, m, fresh_docs, passage_tokens: int) -> dict:
    """text key -> row for every passage with a vector of the old chunks of the fresh docs' files."""
    out: dict = {}
    for path in dict.fromkeys(p for p, _, _ in fresh_docs):
        fi = old.file_index(path)
        if fi is None:
            continue
        rec = old.record(fi)
        for d in range(rec["first"], rec["first"] + rec["count"]):
            rows = m.doc_rows(d)
            texts = passages.split(old.text(d), old.meta(d)[3], passage_tokens)
            if len(texts) != len(rows):
                continue  # cannot happen for an aligned matrix; never pair a row with another text
            for p, row in zip(texts, rows):
                if row.any():  # a zero row is a passage that had no vector yet
                    out[vectors.text_key(p)] = row
    return out
