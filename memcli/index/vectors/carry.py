"""Carry the active space's passage vectors over an index update (called by the commit).

Kept chunks keep their rows: their segments, and so their vector files
(memcli.index.vectors.vecseg), do not change. A fresh segment gets a file of its own, each
passage vector taken from an equal passage text seen before, so re-chunking after an
edit does not call the embedding provider for what did not change:
  * the old vectors, looking only at the old chunks of the same files (an edit moves
    text within a file; scanning every chunk would make a one-file update cost as
    much as the whole vault),
  * on a full rebuild, every passage of the previous index's vector files, else the
    old chunk store (its one vector per chunk is a passage's vector only for a
    one-passage chunk),
  * the request cache.
A chunk counts as embedded (mask 1) only when all its passages were found; the rows
found are kept even then, so the embedding run asks only for the rest. A merge writes
the merged segment's files (every space that has some) from its members' (merged()).
"""

from __future__ import annotations

from pathlib import Path

from memcli.errors import CorruptStore
from memcli.index.keyword import segments
from memcli.index.stores import store
from memcli.index.vectors import passages, vecseg, vectors


class Carrier:
    """The vector files of an update's fresh segments: fresh() gathers a segment's chunks,
    write() writes them once the segment has its name."""

    def __init__(self, metadata: Path, manifest: Path, old, passage_tokens: int):
        self.metadata, self.manifest, self.old, self.passage_tokens = metadata, manifest, old, passage_tokens
        self.folder = manifest.parent / segments.FOLDER
        self.space = vectors.active_space(metadata)
        self.vecs = None
        self._batch: tuple | None = None  # (mask, offsets, rows, means) of fresh(), for write()
        self._lookup: dict | None = None
        self._cache: dict | None = None
        if self.space is not None and old is not None:
            self.vecs = vectors.ViewVectors(old, self.space, passage_tokens)
            if old.n_docs and not self.vecs.usable:
                # no old vectors fit (other passage size, older format, damaged): write nothing,
                # so the vector branch keeps pausing with its `mem reindex` warning instead of
                # searching a few fresh chunks; the embedding run writes every file
                self.space = None

    def fresh(self, docs: list[tuple[str, str, int]], lines: list[bytes]) -> None:
        """Vectors for one fresh segment's chunks, (path, text, breadcrumb lines) each, from
        equal passages seen before; `lines` (their chunk store lines) of chunks whose
        passages were all found get their mean vector."""
        self._batch = None
        if self.space is None or not docs:
            return
        import numpy as np

        dims = int(self.space["dims"])
        lookup = (
            _old_passages(self.old, self.vecs, docs, self.passage_tokens)
            if self.vecs is not None
            else self._full_lookup(self.space)
        )
        if self._cache is None:
            self._cache = vectors.load_cache(vectors.cache_path(self.metadata, self.space["id"]), dims)
        blocks, mask, counts = [], np.zeros(len(docs), dtype=np.uint8), []
        for i, (_, text, crumb) in enumerate(docs):
            texts = passages.split(text, crumb, self.passage_tokens)
            block = np.zeros((len(texts), dims), dtype=np.float32)
            found = 0
            for j, p in enumerate(texts):
                key = vectors.text_key(p)
                vec = lookup.get(key)
                if vec is None:
                    vec = self._cache.get(key)
                if vec is not None:
                    block[j] = vec
                    found += 1
            blocks.append(block)
            counts.append(len(texts))
            if found == len(texts):
                mask[i] = 1
        rows = np.concatenate(blocks)
        offsets = np.concatenate(([0], np.cumsum(counts)))
        means = passages.mean_vectors(rows, offsets)
        for i in np.flatnonzero(mask).tolist():
            lines[i] = store.with_vector(lines[i], vectors.f16_b64(means[i]))
        self._batch = (mask, offsets, rows, means)

    def write(self, segment: str) -> None:
        """Write the vectors fresh() gathered as `segment`'s file."""
        if self._batch is None or self.space is None:  # (fresh() gathers nothing without a space)
            return
        mask, offsets, rows, means = self._batch
        self._batch = None
        vecseg.write(
            vecseg.file_path(self.folder, segment, self.space["id"]),
            _header(self.space, self.passage_tokens),
            mask,
            offsets,
            rows,
            means,
        )

    def _full_lookup(self, space: dict) -> dict:
        """text key -> vector for a full rebuild: the previous index's files, else the chunk store."""
        if self._lookup is None:
            self._lookup = previous_passages(self.manifest, space, self.passage_tokens)
            if not self._lookup:
                self._lookup = vectors.store_vectors(self.metadata, space, self.passage_tokens)
        return self._lookup

    def merged(self, members: list, segment: str) -> None:
        """The vector files of a merged segment, one per space its members have files of
        (memcli.index.merge): members' live chunks in order; a member without a file gives
        chunks without vectors."""
        names = {m.name for m in members}
        spaces = sorted({s for n in names for s in vecseg.spaces_of(self.folder, n)})
        for space_id in spaces:
            _merge_space(self.folder, members, segment, space_id)


def _header(space: dict, passage_tokens: int, stored: bool = True) -> dict:
    # a fresh segment's chunk store lines got the vectors of its masked chunks in fresh()
    return {
        "space": space["id"],
        "identity": space.get("identity", ""),
        "dims": int(space["dims"]),
        "passage_tokens": passage_tokens,
        "stored": stored,
    }


def _merge_space(folder: Path, members: list, segment: str, space_id: str) -> None:
    opened, parts, header = [], [], None
    try:
        for m in members:
            path = vecseg.file_path(folder, m.name, space_id)
            vs = None
            if path.exists():
                try:
                    vs = vecseg.VecSeg(path)
                    opened.append(vs)
                except CorruptStore:
                    vs = None
            if vs is not None and header is None:
                header = dict(vs.header)
            parts.append((m, vs))
        if header is None:
            return
        ptok, dims = header.get("passage_tokens"), int(header["dims"])
        inputs, stored = [], True
        for m, vs in parts:
            live = [j for j in range(m.snap.n_docs) if j not in m.dead_docs]
            if vs is not None and (vs.passage_tokens != ptok or vs.dims != dims or vs.n_docs != m.snap.n_docs):
                vs = None
            counts = (
                None
                if vs is not None
                else [len(passages.split(m.snap.text(j), m.snap.meta(j)[3], ptok or 0)) for j in live]
            )
            stored = stored and (vs is None or vs.stored)
            inputs.append((vs, live, counts))
        mask, offsets, rows, chunk_rows = vecseg.merged(inputs, dims)
        header.update(stored=stored)
        for key in ("n_docs", "n_rows"):
            header.pop(key, None)
        vecseg.write(vecseg.file_path(folder, segment, space_id), header, mask, offsets, rows, chunk_rows)
    finally:
        for vs in opened:
            vs.close()


def _old_passages(old, vecs, fresh_docs, passage_tokens: int) -> dict:
    """text key -> row for every passage with a vector of the old chunks of the fresh docs' files."""
    out: dict = {}
    for path in dict.fromkeys(p for p, _, _ in fresh_docs):
        fi = old.file_index(path)
        if fi is None:
            continue
        rec = old.record(fi)
        for d in range(rec["first"], rec["first"] + rec["count"]):
            vs, local = vecs._at(d)
            if vs is None:
                continue
            rows = vs.doc_rows(local)
            texts = passages.split(old.text(d), old.meta(d)[3], passage_tokens)
            if len(texts) != len(rows):
                continue  # cannot happen for an aligned file; never pair a row with another text
            for p, row in zip(texts, rows):
                if row.any():  # a zero row is a passage that had no vector yet
                    out[vectors.text_key(p)] = row
    return out


def previous_passages(manifest: Path, space: dict, passage_tokens: int) -> dict:
    """text key -> row of every embedded passage of the index `manifest` describes now (the
    one a full rebuild replaces), or {} when it has none that fit."""
    try:
        view = segments.open_view(manifest)
    except (CorruptStore, OSError):
        return {}
    if view is None:
        return {}
    out: dict = {}
    try:
        vecs = vectors.ViewVectors(view, space, passage_tokens)
        for seg, vs in vecs.parts:
            if vs is None:
                continue
            for j in vecs.live(seg).tolist():
                if not vs.mask[j]:
                    continue
                texts = passages.split(seg.snap.text(j), seg.snap.meta(j)[3], passage_tokens)
                rows = vs.doc_rows(j)
                if len(texts) == len(rows):
                    for p, row in zip(texts, rows):
                        out[vectors.text_key(p)] = row.copy()
        vecs.close()
    finally:
        view.close()
    return out
