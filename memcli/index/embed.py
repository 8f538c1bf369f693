"""Embedding run: give every chunk of the snapshot a vector in the configured space.

Runs outside the index lock so searches and ingests go on meanwhile; only the
short checkpoints take it. Vectors are computed per text and kept in a request
cache keyed by the text's hash; each checkpoint (every few seconds) rebuilds the
matrix of the *current* snapshot from the previous matrix plus that cache, so a
concurrent sync or an interruption loses nothing: the next run starts from the
cache and embeds only what is still missing. The last checkpoint also writes the
vectors into the chunk store as `_embedding_f16_b64` (ReMe's format).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from memcli.index import snapshot as snapmod
from memcli.index import store, sync, vectors
from memcli.vault.workspace import Workspace

CHECKPOINT_SECONDS = 5.0  # a SIGKILL loses at most this much embedding work


@dataclass
class EmbedReport:
    space: str = ""
    switched: bool = False
    embedded: int = 0
    reused: int = 0
    total: int = 0
    with_vectors: int = 0
    seconds: float = 0.0


def _checkpoint(ws: Workspace, space: dict, cache: dict, lock_factory, *, final: bool,
                max_cache: int) -> tuple[int, int]:
    """Write matrix (and at the end the store) for the current snapshot; returns (with vectors, total)."""
    import numpy as np

    dims = int(space["dims"])
    with lock_factory():
        snap = sync.open_snapshot(ws)
        if snap is None:
            return 0, 0
        try:
            gen = snap.header.get("generation", "")
            n = snap.n_docs
            prev = vectors.open_matrix(ws.metadata, space, gen) if vectors.active_space(ws.metadata) == space else None
            rows = np.array(prev.rows) if prev is not None else np.zeros((n, dims), dtype=vectors.MATRIX_DTYPE)
            mask = np.array(prev.mask) if prev is not None else np.zeros(n, dtype=np.uint8)
            for d in np.flatnonzero(mask == 0).tolist():
                vec = cache.get(vectors.text_key(snap.text(d)))
                if vec is not None:
                    rows[d], mask[d] = vec, 1
            # the cache is the resume point until the run ends; only then is it trimmed
            vectors.save_cache(vectors.cache_path(ws.metadata, space["id"]), cache, dims,
                               max_cache if final else len(cache))
            vectors.write_matrix(vectors.matrix_path(ws.metadata, space["id"]),
                                 {"generation": gen, "space": space["id"], "identity": space["identity"],
                                  "dims": dims, "n_docs": n}, mask, rows)
            old_space = vectors.active_space(ws.metadata)
            vectors.set_active_space(ws.metadata, space)
            if old_space and old_space["id"] != space["id"]:
                vectors.atomic.remove(vectors.matrix_path(ws.metadata, old_space["id"]))
            if final:
                _write_store_vectors(ws, snap, rows, mask)
            return int(mask.sum()), n
        finally:
            snap.close()


def _write_store_vectors(ws: Workspace, snap, rows, mask) -> None:
    """Put each chunk's vector into its chunk store line (or drop a vector of another space)."""
    import hashlib

    store_file = ws.metadata / store.CHUNK_STORE
    lines = store.read_raw_lines(store_file)
    if len(lines) != snap.n_docs:
        return  # store and snapshot disagree: the next sync rebuilds both
    changed = False
    for d, line in enumerate(lines):
        lines[d] = store.with_vector(line, vectors.f16_b64(rows[d]) if mask[d] else None)
        changed = changed or lines[d] is not line
    if changed:
        raw = store.write_lines(store_file, lines)
        snapmod.rewrite_header(sync.snapshot_path(ws), {"store_sha": hashlib.sha256(raw).hexdigest(),
                                                        "store_stamp": sync.store_stamp(store_file)})


def run(ws: Workspace, space: dict, embed_batch: Callable[[list[str]], object], batch_size: int,
        lock_factory, *, max_cache: int = 10000, progress=None) -> EmbedReport:
    """Embed what is missing. `space` = {id, identity, dims}; `embed_batch` returns an (n, dims) array."""
    t0 = time.perf_counter()
    rep = EmbedReport(space=space["id"])
    dims = int(space["dims"])
    rep.switched = vectors.active_space(ws.metadata) != space
    cache = vectors.load_cache(vectors.cache_path(ws.metadata, space["id"]), dims)
    snap = sync.open_snapshot(ws)
    if snap is None:
        return rep
    try:
        prev = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", "")) \
            if not rep.switched else None
        todo: dict[str, str] = {}
        for d in range(snap.n_docs):
            if prev is not None and prev.mask[d]:
                continue
            text = snap.text(d)
            key = vectors.text_key(text)
            if key in cache:
                rep.reused += 1
            else:
                todo.setdefault(key, text)
        rep.total = snap.n_docs
    finally:
        snap.close()
    pending = list(todo.items())
    last = time.monotonic()
    batch_size = max(1, batch_size)
    try:
        for i in range(0, len(pending), batch_size):
            batch = pending[i:i + batch_size]
            vecs = embed_batch([t for _, t in batch])
            for (key, _), vec in zip(batch, vecs):
                cache[key] = vec.astype("<f2")
            rep.embedded += len(batch)
            if progress:
                progress("embed", rep.embedded, len(pending))
            if time.monotonic() - last > CHECKPOINT_SECONDS:
                _checkpoint(ws, space, cache, lock_factory, final=False, max_cache=max_cache)
                last = time.monotonic()
    except (Exception, KeyboardInterrupt):
        # a failing provider or Ctrl-C: keep what was embedded so the next run resumes
        if rep.embedded:
            _checkpoint(ws, space, cache, lock_factory, final=False, max_cache=max_cache)
        raise
    rep.with_vectors, rep.total = _checkpoint(ws, space, cache, lock_factory, final=True, max_cache=max_cache)
    rep.seconds = time.perf_counter() - t0
    return rep
