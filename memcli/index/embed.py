"""Embedding run: give every passage of every chunk a vector in one vector space.

Runs outside the index lock so searches and ingests go on meanwhile; only the
short checkpoints take it. Vectors are computed per text and kept in a request
cache keyed by the text's hash; each checkpoint rebuilds the matrix of the
*current* snapshot from the previous matrix plus that cache, so a concurrent sync
or an interruption loses nothing: the next run starts from the cache and embeds
only what is still missing. The last checkpoint also writes one vector per chunk
(the normalised mean of its passages') into the chunk store as
`_embedding_f16_b64` (ReMe's format). Then the space's noise floor is measured
(memcli.index.vectors.noise).

A run may stop at a deadline (`step`) and go on later from where it stopped, and it
looks again for chunks a sync added meanwhile before it ends. The space becomes the
active one (the one searches use) at the first checkpoint, or, with
`activate="complete"`, only once every chunk has its vectors: a model being replaced
keeps answering until its successor has embedded the whole vault
(memcli.jobs.embedding). Until then its checkpoints save only the request cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memcli.index import sync
from memcli.index.keyword import segments
from memcli.index.vectors import noise as noisemod
from memcli.index.vectors import passages, vecseg, vectors
from memcli.index.vectors.fill import Keys, fill, gains, store_vectors
from memcli.vault.workspace import Workspace

CHECKPOINT_SECONDS = 5.0  # a SIGKILL loses at most this much embedding work
PENDING_CHECKPOINT_SECONDS = 60.0  # a space not searched yet: only its request cache is saved
MAX_ROUNDS = 5  # times a run looks again for chunks added while it embedded
PULL_PASSAGES = 4096  # passages taken into memory at a time (memcli.index.embed.EmbedRun._pull)


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


def _activate(ws: Workspace, space: dict) -> None:
    """Make `space` the one searches use; the previous space's vectors, floor and words go."""
    old = vectors.active_space(ws.metadata)
    vectors.set_active_space(ws.metadata, space)
    if old and old["id"] != space["id"]:
        from memcli.index.vectors import glosses, terms

        for path in (
            vectors.matrix_path(ws.metadata, old["id"]),
            noisemod.noise_path(ws.metadata, old["id"]),
            terms.store_path(ws.metadata, old["id"]),
            glosses.store_path(ws.metadata, old["id"]),
        ):
            vectors.atomic.remove(path)
        folder = sync.snapshot_path(ws).parent / segments.FOLDER
        for path in folder.glob(f"*.vec-{old['id']}"):
            vectors.atomic.remove(path)


def _measure_noise(ws: Workspace, space: dict, embed_batch, batch_size: int = 0) -> dict | None:
    """The noise floors of `space` measured against the index as it is now (memcli.index.vectors.noise)."""
    view = sync.open_snapshot(ws)
    if view is None:
        return None
    try:
        return noisemod.measure_noise(ws, space, embed_batch, batch_size, view)
    finally:
        view.close()


def _up_to_date(vecs, rep: EmbedReport) -> bool:
    """Every chunk of the view has its vectors, in the files and in the chunk store: a run has
    nothing to do, and need not read the request cache nor rewrite anything."""
    if any(vs is None or not vs.stored for _, vs in vecs.parts) or vecs.problems:
        return False
    if vecs.with_vectors() != vecs.n_docs:
        return False
    rep.with_vectors = rep.total = vecs.n_docs
    rep.passages, rep.active = vecs.n_rows_embedded(), True
    return True


class EmbedRun:
    """One space's embedding, in steps: prepare(), step(deadline) until it returns True, finish().

    `run()` below does all of it at once. The caller holds whatever lock keeps two runs of
    the same workspace apart (memcli.jobs.embedding); `lock_factory` gives the index lock
    each checkpoint takes."""

    def __init__(
        self,
        ws: Workspace,
        space: dict,
        embed_batch: Callable[[list[str]], Any],
        batch_size: int,
        lock_factory,
        *,
        max_cache: int = 10000,
        progress=None,
        activate: str = "now",
    ):
        self.ws, self.space, self.embed_batch = ws, space, embed_batch
        self.batch_size, self.lock_factory = max(1, batch_size), lock_factory
        self.max_cache, self.progress, self.activate = max_cache, progress, activate
        self.rep = EmbedReport(space=space["id"])
        self.keys = Keys(ws.settings.chunking.passage_tokens)
        self.cache: dict = {}  # the request cache, passage key -> vector (read by the first prepare())
        self._cache_read = False
        self.todo: list[tuple[str, str]] = []
        self.done = 0
        self.rounds = 0
        self.fresh = False  # vectors embedded since the request cache was last saved
        self.queue: list[tuple[str, int]] = []  # (segment, chunks without vectors), newest first
        self.total = self.chunks_done = self.group = 0  # chunks: of the run, done, in the group under way
        self.pulled: dict[str, set] = {}  # segment -> chunks pulled since the last checkpoint
        self.in_group: set[str] = set()  # segments of the group under way
        self.from_store: dict | None = None  # the chunk store's vectors, read when first needed
        self.legacy: int | None = None  # the passage size the store's vectors have (read once per run)
        self.last = time.monotonic()
        self.t0 = time.perf_counter()

    def prepare(self) -> bool:
        """False when there is nothing to do (the space is complete, active and stored)."""
        ws, space, rep = self.ws, self.space, self.rep
        rep.switched = vectors.active_space(ws.metadata) != space
        view = sync.open_snapshot(ws)
        if view is None:
            return False
        vecs = vectors.ViewVectors(view, space, self.keys.target)
        try:
            if not rep.switched and _up_to_date(vecs, rep):
                if noisemod.outdated(noisemod.load_noise(ws.metadata, space)):  # from before floors, or scripts
                    _measure_noise(ws, space, self.embed_batch, self.batch_size)
                return False
            if not self._cache_read:
                self._cache_read, self.cache = (
                    True,
                    vectors.load_cache(vectors.cache_path(ws.metadata, space["id"]), int(space["dims"])),
                )
            # newest first: a sync appends the segment of the files it re-read, so a write's own
            # chunks are embedded before an older backlog when a time budget cuts the run short
            self.queue = [
                (seg.name, len(vecs.live(seg)) if vs is None else int((vs.mask[vecs.live(seg)] == 0).sum()))
                for seg, vs in reversed(vecs.parts)
            ]
            self.queue = [q for q in self.queue if q[1]]
            self.total, self.chunks_done = sum(n for _, n in self.queue), 0
            self.todo, self.done, self.group = [], 0, 0
            rep.total = view.n_docs
        finally:
            vecs.close()
            view.close()
        return True

    def _pull(self) -> bool:
        """The next group of passages to embed (self.todo): chunks without vectors of the next
        segments in the queue, at least PULL_PASSAGES of them, so memory follows a group, not
        the vault. A segment merged away meanwhile is skipped (`more()` finds its chunks in
        the merged one). False when the queue is empty."""
        self.chunks_done += self.group
        self.todo, self.done, self.group, self.in_group = [], 0, 0, set()
        view = None
        try:
            while self.queue and len(self.todo) < PULL_PASSAGES:
                name, count = self.queue.pop(0)
                if view is None:
                    view = sync.open_snapshot(self.ws)
                    if view is None:
                        return False
                    vecs = vectors.ViewVectors(view, self.space, self.keys.target)
                part = next(((seg, vs) for seg, vs in vecs.parts if seg.name == name), None)
                self.group += count
                if part is not None:
                    self.todo += list(self._known(*part, vecs).items())
        finally:
            if view is not None:
                vecs.close()
                view.close()
        return bool(self.todo) or bool(self.queue)

    def _known(self, seg, vs, vecs) -> dict[str, str]:
        """Passages still to embed (key -> text) of the segment's chunks without vectors. A
        known vector (rows of the segment's file, or for one-passage chunks the chunk store)
        goes into the cache, every passage found there moves to its end (the final trim
        keeps this run's)."""
        import numpy as np

        ws, space, rep, cache, keys = self.ws, self.space, self.rep, self.cache, self.keys
        todo: dict[str, str] = {}
        live = vecs.live(seg)
        if vs is not None:
            live = live[vs.mask[live] == 0]
        if self.legacy is None:
            self.legacy = self._legacy()
        written = vecs.sizes.get(seg.name, self.legacy)
        self.pulled.setdefault(seg.name, set()).update(live.tolist())
        self.in_group.add(seg.name)
        for j in reversed(live.tolist()):
            doc_keys, texts = keys.split(seg, j)
            prev_rows = vs.doc_rows(j) if vs is not None else None
            for i, (key, text) in enumerate(zip(doc_keys, texts)):
                vec = cache.pop(key, None)
                if vec is None and prev_rows is not None and len(prev_rows) == len(texts) and prev_rows[i].any():
                    vec = prev_rows[i]  # carried over by a sync from an equal passage
                if (
                    vec is None
                    and vs is None
                    and not rep.switched
                    and len(texts) == 1
                    and written is not None
                    and passages.surely_single(text, written)
                ):
                    # no file fits (an older version's index, another passage size): the chunk
                    # store's vector of a chunk that was and is one passage is that passage's
                    if self.from_store is None:
                        self.from_store = vectors.store_vectors(ws.metadata, space, keys.target)
                    vec = self.from_store.get(key)
                if vec is None:
                    todo.setdefault(key, text)
                else:
                    cache[key] = np.asarray(vec, dtype="<f2")
                    rep.reused += 1
        return todo

    def _legacy(self):
        """The passage size the chunk store's vectors were written with when no file says it:
        an earlier version's matrix's, else the configured one."""
        value = vectors.legacy_passage_tokens(self.ws.metadata, self.space)
        return self.keys.target if value is None else value

    def step(self, deadline: float | None = None) -> bool:
        """Embed until the deadline (time.monotonic) or the end; True when nothing is left."""
        rep, cache = self.rep, self.cache
        every = PENDING_CHECKPOINT_SECONDS if self.activate == "complete" and rep.switched else CHECKPOINT_SECONDS
        try:
            while self.done < len(self.todo) or self._pull():
                if self.done >= len(self.todo):
                    continue  # (a group whose segment was merged away)
                if deadline is not None and time.monotonic() >= deadline:
                    self.checkpoint(final=False)
                    rep.pending = self.left()
                    return False
                batch = self.todo[self.done : self.done + self.batch_size]
                if self.progress and not rep.embedded:  # (before the first batch, which may load the model)
                    self.progress("embed", self.chunks_done, self.total)
                vecs = self.embed_batch([t for _, t in batch])
                for (key, _), vec in zip(batch, vecs):
                    cache[key] = vec.astype("<f2")
                self.fresh = True
                self.done += len(batch)
                rep.embedded += len(batch)
                if self.progress:  # the group's chunks counted in proportion to its passages embedded
                    self.progress(
                        "embed",
                        self.chunks_done + self.group * min(self.done, len(self.todo)) // len(self.todo),
                        self.total,
                    )
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

    def left(self) -> int:
        """Chunks still without vectors in this run (the group under way counts whole)."""
        return self.total - self.chunks_done

    def checkpoint(self, final: bool) -> None:
        """Write the segment files that gained vectors, and the store lines of segments done; the
        space becomes the searched one as `activate` says."""
        ws, space, rep = self.ws, self.space, self.rep
        dims = int(space["dims"])
        with self.lock_factory():
            view = sync.open_snapshot(ws)
            if view is None:
                return
            vecs = vectors.ViewVectors(view, space, self.keys.target)
            try:
                header = {
                    "space": space["id"],
                    "identity": space["identity"],
                    "dims": dims,
                    "passage_tokens": self.keys.target,
                    "stored": False,
                }
                for seg, vs in vecs.parts:
                    only = self.pulled.get(seg.name)
                    if not only or not gains(seg, vs, only, self.cache, self.keys):
                        continue
                    mask, offsets, rows, means, changed = fill(seg, vs, self.cache, self.keys, dims, only)
                    if changed:
                        vecseg.write(
                            vecseg.file_path(sync.snapshot_path(ws).parent / segments.FOLDER, seg.name, space["id"]),
                            header,
                            mask,
                            offsets,
                            rows,
                            means,
                        )
                if final:
                    vectors.atomic.remove(vectors.matrix_path(ws.metadata, space["id"]))  # an earlier version's
                if self.fresh or final:
                    vectors.save_cache(vectors.cache_path(ws.metadata, space["id"]), self.cache, dims, self.max_cache)
                    self.fresh = False
                vecs.close()
                vecs = vectors.ViewVectors(view, space, self.keys.target)
                complete = vecs.with_vectors() == view.n_docs and view.n_docs > 0
                rep.with_vectors, rep.total, rep.passages = vecs.with_vectors(), view.n_docs, vecs.n_rows_embedded()
                activate = self.activate == "now" or (self.activate == "complete" and final and complete)
                is_active = vectors.active_space(ws.metadata) == space
                if not (activate or is_active):
                    return  # not searched yet: its files are all a resume needs
                # segments done meanwhile get their store lines now, the rest at the end
                store_vectors(ws.metadata, view, vecs, complete_only=not final)
                if activate and not is_active:
                    _activate(ws, space)
                rep.active = True
            finally:
                vecs.close()
                view.close()
        self._trim()

    def _trim(self) -> None:
        """Keep the newest max_cache vectors in memory: the rest are in the segment files; and
        forget the passage keys of segments the group under way is not in."""
        under_way = self.in_group if self.done < len(self.todo) else set()
        self.pulled = {name: js for name, js in self.pulled.items() if name in under_way}
        self.keys.by_chunk = {k: v for k, v in self.keys.by_chunk.items() if k[0] in under_way}
        extra = len(self.cache) - self.max_cache
        if extra > 0:
            for key in list(self.cache)[:extra]:
                del self.cache[key]

    def finish(self) -> EmbedReport:
        """The last checkpoint, then the noise floor (when the space is searched)."""
        self.checkpoint(final=True)
        if self.rep.active:
            _measure_noise(self.ws, self.space, self.embed_batch, self.batch_size)
        self.rep.seconds = time.perf_counter() - self.t0
        return self.rep

    def more(self) -> bool:
        """After finish(): chunks a sync added meanwhile still lack vectors (and rounds are left)."""
        self.rounds += 1
        return self.rounds < MAX_ROUNDS and self.rep.total > 0 and self.rep.with_vectors < self.rep.total


def run(
    ws: Workspace,
    space: dict,
    embed_batch: Callable[[list[str]], object],
    batch_size: int,
    lock_factory,
    *,
    max_cache: int = 10000,
    progress=None,
    deadline: float | None = None,
    activate: str = "now",
) -> EmbedReport:
    """Embed what is missing. `space` = {id, identity, dims}; `embed_batch` returns an (n, dims)
    array. With a `deadline` (time.monotonic) the run may stop early: report.pending says how
    many passages are left for the next run."""
    job = EmbedRun(
        ws, space, embed_batch, batch_size, lock_factory, max_cache=max_cache, progress=progress, activate=activate
    )
    while job.prepare():
        if not job.step(deadline):
            job.rep.seconds = time.perf_counter() - job.t0
            return job.rep
        job.finish()
        if not job.more():
            break
    job.rep.seconds = time.perf_counter() - job.t0
    return job.rep
