"""Embedding run: give every passage of every chunk a vector in the configured space.

Runs outside the index lock so searches and ingests go on meanwhile; only the
short checkpoints take it. Vectors are computed per text and kept in a request
cache keyed by the text's hash; each checkpoint (every few seconds) rebuilds the
matrix of the *current* snapshot from the previous matrix plus that cache, so a
concurrent sync or an interruption loses nothing: the next run starts from the
cache and embeds only what is still missing. The last checkpoint also writes one
vector per chunk (the normalised mean of its passages') into the chunk store as
`_embedding_f16_b64` (ReMe's format). Then the space's noise floor is measured
against the vault's passages (noise_probes; memcli.index.vectors.noise_record).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from memcli.errors import ProviderError
from memcli.index import snapshot as snapmod
from memcli.index import passages, store, sync, vectors
from memcli.vault.workspace import Workspace

CHECKPOINT_SECONDS = 5.0  # a SIGKILL loses at most this much embedding work
# Nonsense the floor is measured with (noise_probes): seeded, so every vault and every
# run sends the same texts; a new seed or count needs a new vectors.NOISE_VERSION.
PROBE_SEED, PROBE_COUNT = 14, 48
_SYLLABLES = ("ka lo mi tren vor sha qu bel dor nix pra zu ek oth gri mav sel tup wen fa rok "
              "bli und cha ix pol dre sku yo gam").split()


@dataclass
class EmbedReport:
    space: str = ""
    switched: bool = False
    embedded: int = 0  # passage texts sent to the provider
    reused: int = 0  # passages whose vector was known (request cache, matrix, chunk store)
    total: int = 0  # chunks
    with_vectors: int = 0  # chunks all of whose passages have a vector
    passages: int = 0
    seconds: float = 0.0


class _Keys:
    """Request-cache keys of each chunk's passages in one snapshot generation, split once
    per run: a checkpoint every few seconds must not re-split the whole vault."""

    def __init__(self, target: int):
        self.target, self.generation, self.by_doc = target, None, {}

    def split(self, snap, d: int) -> tuple[list[str], list[str]]:
        texts = passages.split(snap.text(d), snap.meta(d)[3], self.target)
        keys = [vectors.text_key(t) for t in texts]
        self._at(snap)[d] = keys
        return keys, texts

    def of(self, snap, d: int) -> list[str]:
        keys = self._at(snap).get(d)
        return keys if keys is not None else self.split(snap, d)[0]

    def _at(self, snap) -> dict:
        gen = snap.header.get("generation", "")
        if gen != self.generation:  # a sync re-chunked meanwhile: document numbers changed
            self.generation, self.by_doc = gen, {}
        return self.by_doc


def _checkpoint(ws: Workspace, space: dict, cache: dict, lock_factory, keys: _Keys, *, final: bool,
                max_cache: int) -> tuple[int, int, int]:
    """Write matrix (and at the end the store) for the current snapshot;
    returns (chunks with vectors, chunks, passages)."""
    import numpy as np

    dims = int(space["dims"])
    with lock_factory():
        snap = sync.open_snapshot(ws)
        if snap is None:
            return 0, 0, 0
        try:
            gen = snap.header.get("generation", "")
            n = snap.n_docs
            prev = vectors.open_matrix(ws.metadata, space, gen, keys.target) \
                if vectors.active_space(ws.metadata) == space else None
            if prev is not None:
                offsets = np.array(prev.offsets, dtype=np.int64)
                rows, mask = np.array(prev.rows), np.array(prev.mask)
            else:
                offsets = np.zeros(n + 1, dtype=np.int64)
                offsets[1:] = np.cumsum([len(keys.of(snap, d)) for d in range(n)])
                rows = np.zeros((int(offsets[-1]), dims), dtype=vectors.MATRIX_DTYPE)
                mask = np.zeros(n, dtype=np.uint8)
            for d in np.flatnonzero(mask == 0).tolist():
                a, b = int(offsets[d]), int(offsets[d + 1])
                doc_keys = keys.of(snap, d)
                if len(doc_keys) != b - a:
                    continue  # cannot happen for an aligned matrix; never pair a row with another text
                missing = False
                for j, key in enumerate(doc_keys):
                    vec = cache.get(key)
                    if vec is not None:
                        rows[a + j] = vec
                    elif not rows[a + j].any():  # rows carried over by a sync count too
                        missing = True
                mask[d] = not missing
            # the cache is the resume point until the run ends; only then is it trimmed, and
            # never below this vault's passages (the run moved those to its end)
            vectors.save_cache(vectors.cache_path(ws.metadata, space["id"]), cache, dims,
                               max(max_cache, len(rows)) if final else len(cache))
            means = passages.mean_vectors(rows, offsets)  # the matrix's chunk rows and the store's vectors
            # the store first: a matrix saying "stored" must never precede the store it vouches for
            stored = final and _write_store_vectors(ws, snap, means, mask)
            vectors.write_matrix(vectors.matrix_path(ws.metadata, space["id"]),
                                 {"generation": gen, "space": space["id"], "identity": space["identity"],
                                  "dims": dims, "passage_tokens": keys.target, "stored": stored},
                                 mask, offsets, rows, means)
            old_space = vectors.active_space(ws.metadata)
            vectors.set_active_space(ws.metadata, space)
            if old_space and old_space["id"] != space["id"]:
                vectors.atomic.remove(vectors.matrix_path(ws.metadata, old_space["id"]))
                vectors.atomic.remove(vectors.noise_path(ws.metadata, old_space["id"]))
            return int(mask.sum()), n, len(rows)
        finally:
            snap.close()


def _write_store_vectors(ws: Workspace, snap, means, mask) -> bool:
    """Put each chunk's vector (`means`: its passages' mean) into its chunk store line, or drop
    a vector of another space. False when the store could not be matched to the snapshot."""
    import hashlib

    store_file = ws.metadata / store.CHUNK_STORE
    lines = store.read_raw_lines(store_file)
    if len(lines) != snap.n_docs:
        return False  # store and snapshot disagree: the next sync rebuilds both
    changed = False
    for d, line in enumerate(lines):
        lines[d] = store.with_vector(line, vectors.f16_b64(means[d]) if mask[d] else None)
        changed = changed or lines[d] is not line
    if changed:
        raw = store.write_lines(store_file, lines)
        snapmod.rewrite_header(sync.snapshot_path(ws), {"store_sha": hashlib.sha256(raw).hexdigest(),
                                                        "store_stamp": sync.store_stamp(store_file)})
    return True


def _known(ws: Workspace, snap, space: dict, cache: dict, keys: _Keys, rep: EmbedReport) -> dict[str, str]:
    """Passages still to embed (key -> text) of the chunks without vectors. A known vector
    (previous matrix rows, or for one-passage chunks the chunk store) goes into the cache,
    every passage found there moves to its end (the final trim keeps this run's)."""
    import numpy as np

    prev = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", ""), keys.target) \
        if not rep.switched else None
    from_store = None
    todo: dict[str, str] = {}
    for d in range(snap.n_docs):
        if prev is not None and prev.mask[d]:
            continue
        doc_keys, texts = keys.split(snap, d)
        prev_rows = prev.doc_rows(d) if prev is not None else None
        for j, (key, text) in enumerate(zip(doc_keys, texts)):
            vec = cache.pop(key, None)
            if vec is None and prev_rows is not None and len(prev_rows) == len(texts) and prev_rows[j].any():
                vec = prev_rows[j]  # carried over by a sync from an equal passage
            if vec is None and prev is None and not rep.switched and len(texts) == 1:
                # no matrix fits (older format, other passage size): the chunk store's vector
                # of a one-passage chunk is that passage's, in the same space
                if from_store is None:
                    from_store = vectors.store_vectors(ws.metadata, space, keys.target)
                vec = from_store.get(key)
            if vec is None:
                todo.setdefault(key, text)
            else:
                cache[key] = np.asarray(vec, dtype="<f2")
                rep.reused += 1
    return todo


def _up_to_date(ws: Workspace, snap, space: dict, keys: _Keys, rep: EmbedReport) -> bool:
    """Every chunk of the snapshot has its vectors, in the matrix and in the chunk store: a
    run has nothing to do, and need not read the request cache nor rewrite three files."""
    m = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", ""), keys.target)
    if m is None or m.n_docs != snap.n_docs or not m.header.get("stored") or not m.mask.all():
        return False
    rep.with_vectors, rep.total, rep.passages = m.n_docs, m.n_docs, m.n_rows
    return True


def noise_probes() -> list[str]:
    """PROBE_COUNT texts that mean nothing: half random letter strings (`xcvoj vmmydi`),
    half words of shuffled syllables (`tupcha grimav`), one to four words each."""
    import random

    rnd = random.Random(PROBE_SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for i in range(PROBE_COUNT):
        if i % 2:
            words = ("".join(rnd.choice(_SYLLABLES) for _ in range(rnd.randint(2, 4)))
                     for _ in range(rnd.randint(1, 4)))
        else:
            words = ("".join(rnd.choice(letters) for _ in range(rnd.randint(3, 8))) for _ in range(rnd.randint(1, 4)))
        out.append(" ".join(words))
    return out


def measure_noise(ws: Workspace, space: dict, embed_batch, batch_size: int = 0) -> dict | None:
    """Measure and keep the noise floor of `space` against the current matrix; the probes
    are embedded once per space (their vectors are kept in the record). Rewritten only
    when the floor changed. None when the space has no matrix or the provider failed (the
    vectors are in; the next run or search measures the floor)."""
    import numpy as np

    matrix = vectors.load_matrix(ws.metadata, space)
    if matrix is None:
        return None
    old = vectors.load_noise(ws.metadata, space)
    probe_vecs = vectors.noise_vectors(old, int(space["dims"])) if old else None
    if probe_vecs is None:
        texts = noise_probes()
        size = batch_size if batch_size > 0 else len(texts)
        try:
            probe_vecs = np.vstack([embed_batch(texts[i:i + size]) for i in range(0, len(texts), size)])
        except ProviderError:
            return None
    record = vectors.noise_record(space, probe_vecs, matrix)
    if old is None or any(old.get(key) != record[key] for key in ("floor", "measured", "passages")):
        vectors.save_noise(ws.metadata, record)
    return record


def run(ws: Workspace, space: dict, embed_batch: Callable[[list[str]], object], batch_size: int,
        lock_factory, *, max_cache: int = 10000, progress=None) -> EmbedReport:
    """Embed what is missing. `space` = {id, identity, dims}; `embed_batch` returns an (n, dims) array."""
    t0 = time.perf_counter()
    rep = EmbedReport(space=space["id"])
    dims = int(space["dims"])
    rep.switched = vectors.active_space(ws.metadata) != space
    keys = _Keys(ws.settings.chunking.passage_tokens)
    snap = sync.open_snapshot(ws)
    if snap is None:
        return rep
    try:
        if not rep.switched and _up_to_date(ws, snap, space, keys, rep):
            if vectors.load_noise(ws.metadata, space) is None:  # a space from before floors
                measure_noise(ws, space, embed_batch, batch_size)
            rep.seconds = time.perf_counter() - t0
            return rep
        cache = vectors.load_cache(vectors.cache_path(ws.metadata, space["id"]), dims)
        todo = _known(ws, snap, space, cache, keys, rep)
        rep.total = snap.n_docs
    finally:
        snap.close()
    pending = list(todo.items())
    last = time.monotonic()
    batch_size = max(1, batch_size)

    def checkpoint(final: bool):
        return _checkpoint(ws, space, cache, lock_factory, keys, final=final, max_cache=max_cache)

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
                checkpoint(False)
                last = time.monotonic()
    except (Exception, KeyboardInterrupt):
        # a failing provider or Ctrl-C: keep what was embedded so the next run resumes
        if rep.embedded:
            checkpoint(False)
        raise
    rep.with_vectors, rep.total, rep.passages = checkpoint(True)
    measure_noise(ws, space, embed_batch, batch_size)
    rep.seconds = time.perf_counter() - t0
    return rep
