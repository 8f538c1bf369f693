"""Embedding run: give every passage of every chunk a vector in one vector space.

Runs outside the index lock so searches and ingests go on meanwhile; only the
short checkpoints take it. Vectors are computed per text and kept in a request
cache keyed by the text's hash; each checkpoint rebuilds the matrix of the
*current* snapshot from the previous matrix plus that cache, so a concurrent sync
or an interruption loses nothing: the next run starts from the cache and embeds
only what is still missing. The last checkpoint also writes one vector per chunk
(the normalised mean of its passages') into the chunk store as
`_embedding_f16_b64` (ReMe's format). Then the space's noise floor is measured
(memcli.index.noise).

A run may stop at a deadline (`step`) and go on later from where it stopped, and it
looks again for chunks a sync added meanwhile before it ends. The space becomes the
active one (the one searches use) at the first checkpoint, or, with
`activate="complete"`, only once every chunk has its vectors: a model being replaced
keeps answering until its successor has embedded the whole vault
(memcli.jobs.embedding). Until then its checkpoints save only the request cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from memcli.index import noise as noisemod
from memcli.index import passages, store, sync, vectors
from memcli.vault.workspace import Workspace

CHECKPOINT_SECONDS = 5.0  # a SIGKILL loses at most this much embedding work
PENDING_CHECKPOINT_SECONDS = 60.0  # a space not searched yet: only its request cache is saved
MAX_ROUNDS = 5  # times a run looks again for chunks added while it embedded
# kept here for callers from before memcli.index.noise
PROBE_SEED, PROBE_COUNT = noisemod.PROBE_SEED, noisemod.PROBE_COUNT
noise_probes, measure_noise = noisemod.noise_probes, noisemod.measure_noise


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
    pending: int = 0  # passages left when the run stopped at its deadline
    active: bool = False  # the space is the one searches use

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.with_vectors == self.total


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


def _fill(ws: Workspace, space: dict, snap, cache: dict, keys: _Keys):
    """(offsets, rows, mask) of the snapshot: the previous matrix of this space (when it is
    active and aligned) plus every vector the request cache knows."""
    import numpy as np

    dims, n = int(space["dims"]), snap.n_docs
    gen = snap.header.get("generation", "")
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
    return offsets, rows, mask


def _activate(ws: Workspace, space: dict) -> None:
    """Make `space` the one searches use; the previous space's matrix, floor and words go."""
    old = vectors.active_space(ws.metadata)
    vectors.set_active_space(ws.metadata, space)
    if old and old["id"] != space["id"]:
        from memcli.index import terms

        for path in (vectors.matrix_path(ws.metadata, old["id"]), vectors.noise_path(ws.metadata, old["id"]),
                     terms.store_path(ws.metadata, old["id"])):
            vectors.atomic.remove(path)


def _write_store_vectors(ws: Workspace, snap, means, mask) -> bool:
    """Put each chunk's vector (`means`: its passages' mean) into its chunk store line, or drop
    a vector of another space. False when the store could not be matched to the snapshot."""
    from memcli.index import mirror

    store_file = ws.metadata / store.CHUNK_STORE
    if not mirror.current(snap.header):
        try:  # a large index's stores trail it (rewritten in batches): make them its mirror first
            mirror.write(ws.metadata, snap)
        except store.CorruptStore:
            return False  # their frames are unknown (another tool rewrote them): the next sync rebuilds
    lines = store.read_raw_lines(store_file)
    if len(lines) != snap.n_docs:
        return False  # store and snapshot disagree: the next sync rebuilds both
    changed = False
    for d, line in enumerate(lines):
        lines[d] = store.with_vector(line, vectors.f16_b64(means[d]) if mask[d] else None)
        changed = changed or lines[d] is not line
    if changed:
        from memcli.index import commit

        commit.rewrite_chunk_store(ws.metadata, sync.snapshot_path(ws), snap, lines)
    return True


def _up_to_date(ws: Workspace, snap, space: dict, keys: _Keys, rep: EmbedReport) -> bool:
    """Every chunk of the snapshot has its vectors, in the matrix and in the chunk store: a
    run has nothing to do, and need not read the request cache nor rewrite three files."""
    m = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", ""), keys.target)
    if m is None or m.n_docs != snap.n_docs or not m.header.get("stored") or not m.mask.all():
        return False
    rep.with_vectors, rep.total, rep.passages, rep.active = m.n_docs, m.n_docs, m.n_rows, True
    return True


class EmbedRun:
    """One space's embedding, in steps: prepare(), step(deadline) until it returns True, finish().

    `run()` below does all of it at once. The caller holds whatever lock keeps two runs of
    the same workspace apart (memcli.jobs.embedding); `lock_factory` gives the index lock
    each checkpoint takes."""

    def __init__(self, ws: Workspace, space: dict, embed_batch: Callable[[list[str]], object], batch_size: int,
                 lock_factory, *, max_cache: int = 10000, progress=None, activate: str = "now"):
        self.ws, self.space, self.embed_batch = ws, space, embed_batch
        self.batch_size, self.lock_factory = max(1, batch_size), lock_factory
        self.max_cache, self.progress, self.activate = max_cache, progress, activate
        self.rep = EmbedReport(space=space["id"])
        self.keys = _Keys(ws.settings.chunking.passage_tokens)
        self.cache: dict | None = None
        self.todo: list[tuple[str, str]] = []
        self.done = 0
        self.rounds = 0
        self.last = time.monotonic()
        self.t0 = time.perf_counter()

    def prepare(self) -> bool:
        """False when there is nothing to do (the space is complete, active and stored)."""
        ws, space, rep = self.ws, self.space, self.rep
        rep.switched = vectors.active_space(ws.metadata) != space
        snap = sync.open_snapshot(ws)
        if snap is None:
            return False
        try:
            if not rep.switched and _up_to_date(ws, snap, space, self.keys, rep):
                if vectors.load_noise(ws.metadata, space) is None:  # a space from before floors
                    noisemod.measure_noise(ws, space, self.embed_batch, self.batch_size)
                return False
            if self.cache is None:
                self.cache = vectors.load_cache(vectors.cache_path(ws.metadata, space["id"]), int(space["dims"]))
            self.todo = list(self._known(snap).items())
            self.done = 0
            rep.total = snap.n_docs
        finally:
            snap.close()
        return True

    def _known(self, snap) -> dict[str, str]:
        """Passages still to embed (key -> text) of the chunks without vectors. A known vector
        (previous matrix rows, or for one-passage chunks the chunk store) goes into the cache,
        every passage found there moves to its end (the final trim keeps this run's)."""
        import numpy as np

        ws, space, rep, cache, keys = self.ws, self.space, self.rep, self.cache, self.keys
        prev = vectors.open_matrix(ws.metadata, space, snap.header.get("generation", ""), keys.target) \
            if not rep.switched else None
        from_store = None
        todo: dict[str, str] = {}
        # newest first: a sync appends the chunks of the files it re-read, so a write's own
        # chunks are embedded before an older backlog when a time budget cuts the run short
        for d in reversed(range(snap.n_docs)):
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

    def step(self, deadline: float | None = None) -> bool:
        """Embed until the deadline (time.monotonic) or the end; True when nothing is left."""
        rep, cache = self.rep, self.cache
        every = PENDING_CHECKPOINT_SECONDS if self.activate == "complete" and rep.switched else CHECKPOINT_SECONDS
        try:
            while self.done < len(self.todo):
                if deadline is not None and time.monotonic() >= deadline:
                    self.checkpoint(final=False)
                    rep.pending = len(self.todo) - self.done
                    return False
                batch = self.todo[self.done:self.done + self.batch_size]
                vecs = self.embed_batch([t for _, t in batch])
                for (key, _), vec in zip(batch, vecs):
                    cache[key] = vec.astype("<f2")
                self.done += len(batch)
                rep.embedded += len(batch)
                if self.progress:
                    self.progress("embed", self.done, len(self.todo))
                if time.monotonic() - self.last > every:
                    self.checkpoint(final=False)
                    self.last = time.monotonic()
        except (Exception, KeyboardInterrupt):
            # a failing provider or Ctrl-C: keep what was embedded so the next run resumes
            if rep.embedded:
                self.checkpoint(final=False)
            raise
        rep.pending = 0
        return True

    def checkpoint(self, final: bool) -> None:
        """Write the matrix (and, at the end, the store) for the current snapshot; a space
        waiting for completion writes only its request cache until then."""
        ws, space, rep = self.ws, self.space, self.rep
        dims = int(space["dims"])
        with self.lock_factory():
            snap = sync.open_snapshot(ws)
            if snap is None:
                return
            try:
                gen = snap.header.get("generation", "")
                offsets, rows, mask = _fill(ws, space, snap, self.cache, self.keys)
                complete = bool(mask.all()) and snap.n_docs > 0
                # the cache is the resume point until the run ends; only then is it trimmed, and
                # never below this vault's passages (the run moved those to its end)
                vectors.save_cache(vectors.cache_path(ws.metadata, space["id"]), self.cache, dims,
                                   max(self.max_cache, len(rows)) if final else len(self.cache))
                activate = self.activate == "now" or (self.activate == "complete" and final and complete)
                is_active = vectors.active_space(ws.metadata) == space
                rep.with_vectors, rep.total, rep.passages = int(mask.sum()), snap.n_docs, len(rows)
                if not (activate or is_active):
                    return  # not searched yet: the cache is all a resume needs
                means = passages.mean_vectors(rows, offsets)  # the matrix's chunk rows and the store's vectors
                # the store first: a matrix saying "stored" must never precede the store it vouches for
                stored = final and _write_store_vectors(ws, snap, means, mask)
                vectors.write_matrix(vectors.matrix_path(ws.metadata, space["id"]),
                                     {"generation": gen, "space": space["id"], "identity": space["identity"],
                                      "dims": dims, "passage_tokens": self.keys.target, "stored": stored},
                                     mask, offsets, rows, means)
                if activate and not is_active:
                    _activate(ws, space)
                rep.active = True
            finally:
                snap.close()

    def finish(self) -> EmbedReport:
        """The last checkpoint, then the noise floor (when the space is searched)."""
        self.checkpoint(final=True)
        if self.rep.active:
            noisemod.measure_noise(self.ws, self.space, self.embed_batch, self.batch_size)
        self.rep.seconds = time.perf_counter() - self.t0
        return self.rep

    def more(self) -> bool:
        """After finish(): chunks a sync added meanwhile still lack vectors (and rounds are left)."""
        self.rounds += 1
        return self.rounds < MAX_ROUNDS and 0 < self.rep.total and self.rep.with_vectors < self.rep.total


def run(ws: Workspace, space: dict, embed_batch: Callable[[list[str]], object], batch_size: int,
        lock_factory, *, max_cache: int = 10000, progress=None, deadline: float | None = None,
        activate: str = "now") -> EmbedReport:
    """Embed what is missing. `space` = {id, identity, dims}; `embed_batch` returns an (n, dims)
    array. With a `deadline` (time.monotonic) the run may stop early: report.pending says how
    many passages are left for the next run."""
    job = EmbedRun(ws, space, embed_batch, batch_size, lock_factory, max_cache=max_cache, progress=progress,
                   activate=activate)
    while job.prepare():
        if not job.step(deadline):
            job.rep.seconds = time.perf_counter() - job.t0
            return job.rep
        job.finish()
        if not job.more():
            break
    job.rep.seconds = time.perf_counter() - job.t0
    return job.rep
