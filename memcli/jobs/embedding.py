"""Vectors for what was written, and the model that refines a vault in the background.

Three entry points, all holding the `embed` lock while they embed so two runs never
write one space's files at once (a busy lock means another mem process is embedding:
the caller carries on, keyword search never waits for this):

* `after_write`: the chunks a write just added (remember, ingest, resource scan, a
  watch batch, the sync before a search, the MCP tools) get their vectors within a time
  budget (`embedding_model_config.embed_budget_seconds`), in the space searches use now;
  what is left stays without a vector (found by keyword) until the next command,
  `mem watch`, `mem mcp` or `mem reindex` embeds it. A failing provider costs a warning,
  never the note.
* `update`: what `mem reindex` does. A vault with no usable vectors first gets the
  static first pass (memcli.providers.embedding.space.first_pass: a 2,000-note vault in
  about half a minute), then the configured model embeds everything; its space becomes
  the searched one only once complete, so searches go on by meaning meanwhile.
* `Refiner`: the same refinement in slices of a few seconds, for `mem watch` and
  `mem mcp` while they are idle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from memcli.errors import Busy, ProviderError
from memcli.index import embed, sync
from memcli.index.freshness import index_lock
from memcli.index.keyword import segments
from memcli.index.vectors import vectors
from memcli.providers.embedding import space as spaces
from memcli.vault import lock
from memcli.vault.lock import Lock
from memcli.vault.workspace import Workspace

SLICE_SECONDS = 3.0  # one Refiner slice: the embed lock is released between slices
RETRY_SECONDS = 60.0  # a Refiner whose provider failed waits this long
# chunks above which `update` starts with the first pass (~600 passages: about a minute of
# all-MiniLM-L6-v2 on two cores; below that the configured model is as quick to wait for)
FIRST_PASS_MIN_CHUNKS = 200


@dataclass
class Update:
    """What `update` did: the first pass and the configured model's run (None: not run)."""

    first_pass: embed.EmbedReport | None = None
    target: embed.EmbedReport | None = None
    terms: tuple[int, ...] | None = None  # (words embedded now, words with a vector[, the same of
    # their definitions]), searched space
    note: str = ""  # why nothing was embedded
    warnings: list[str] = field(default_factory=list)


def embed_lock(ws: Workspace, job: str, wait: float) -> Lock:
    return Lock(ws.lock_path(lock.EMBED), job, wait=wait, busy_message="an embedding run is in progress")


def _run(
    ws: Workspace, backend: spaces.Backend, *, progress=None, deadline=None, activate: str = "now", stage: str = "embed"
) -> embed.EmbedReport:
    cfg = ws.settings.embedding

    def report(_stage, done, total):
        if progress:
            progress(stage, done, total)

    return embed.run(
        ws,
        backend.space,
        backend.embedder.embed_batch,
        cfg.max_batch_size,
        lambda: index_lock(ws, "embed-checkpoint", wait=lock.WAIT),
        max_cache=cfg.max_cache_size,
        progress=report if progress else None,
        deadline=deadline,
        activate=activate,
    )


def terms_for(ws: Workspace, backend: spaces.Backend, progress=None) -> tuple[int, ...] | None:
    """Word vectors for query expansion (memcli.index.vectors.terms) in the backend's space, then the
    vectors of those words' definitions (memcli.index.vectors.glosses): (words embedded now, words
    stored[, definitions embedded now, definitions stored])."""
    from memcli.index.vectors import glosses, terms

    cfg = ws.settings.search
    if cfg.expand_terms <= 0 and cfg.define_terms <= 0:
        return None
    snap = sync.open_snapshot(ws)
    if snap is None:
        return None
    batch, embed, limit = ws.settings.embedding.max_batch_size, backend.embedder.embed_batch, cfg.expand_vocabulary
    was = terms.load(ws.metadata, backend.space) if cfg.define_terms > 0 else None  # (before its update)
    try:  # (word vectors are embedded only for expansion: `expand_terms: 0` sends no word)
        got: tuple[int, ...] = (
            terms.update(ws.metadata, backend.space, snap, embed, batch, limit, progress=progress)
            if cfg.expand_terms > 0
            else (0, 0)
        )
        if cfg.define_terms > 0:
            got += glosses.update(ws.metadata, backend.space, snap, limit, embed, batch, progress, was)
    finally:
        snap.close()
    from memcli.index.currency import (
        update as currency,  # new word vectors may tell which kind a thing is (index/currency/kinds.py)
    )

    try:
        currency.revisit(ws)
    except OSError:
        pass  # derived state: the next sync writes it
    return got


def _searched(ws: Workspace, target: spaces.Backend | None) -> spaces.Backend | None:
    """The backend of the space searches use now, when something can still embed into it."""
    return spaces.for_space(ws, vectors.active_space(ws.metadata), target=target)


def unembedded(ws: Workspace, space: dict | None) -> int | None:
    """Chunks of the index without vectors in `space`, or None when none of its segment files
    fits (missing, damaged, another passage size or format: `mem reindex` rebuilds them; a
    write or a search does not start that on its own)."""
    if space is None:
        return None
    view = sync.open_snapshot(ws)
    if view is None:
        return None
    vecs = vectors.ViewVectors(view, space, ws.settings.chunking.passage_tokens)
    try:
        if view.n_docs and not vecs.usable:
            return None
        return int(view.n_docs - vecs.with_vectors())
    finally:
        vecs.close()
        view.close()


def after_write(
    ws: Workspace, warnings: list[str], *, budget: float | None = None, backend: spaces.Backend | None = None
) -> embed.EmbedReport | None:
    """Embed the chunks without vectors, in the searched space, for at most `budget` seconds
    (default: embed_budget_seconds). A vault never embedded starts with the first pass (or
    the configured model without one). Never raises for the provider or a busy lock."""
    budget = ws.settings.embedding.embed_budget_seconds if budget is None else budget
    if budget <= 0:
        return None
    deadline = time.monotonic() + budget
    target = None
    try:
        target = backend if backend is not None else spaces.configured(ws)
        if target is None:
            return None
        active = vectors.active_space(ws.metadata)
        if active is not None and not unembedded(ws, active):
            return None  # all there, or a matrix only `mem reindex` rebuilds (health and search say so)
        use = _first(ws, target) if active is None else _searched(ws, target)
        if use is None:
            return None  # vectors of another model that nothing here can extend: health and search say so
        with embed_lock(ws, "embed-new", wait=min(budget, lock.WAIT)):
            rep = _run(ws, use, deadline=deadline)
    except Busy:
        return None  # another mem process is embedding, and picks these chunks up before it ends
    except ProviderError as exc:
        warnings.append(
            f"embedding the new chunks failed ({exc.line()}); they are found by keyword until "
            "`mem reindex` or `mem watch` embeds them"
        )
        return None
    finally:
        if backend is None and target is not None:
            target.embedder.close()
    if rep.pending:
        warnings.append(
            f"{rep.pending} chunk(s) not embedded within {budget:g}s; the next command, "
            "`mem watch` or `mem reindex` embeds them (keyword search finds them meanwhile)"
        )
    return rep


def update(ws: Workspace, *, progress=None, refine: bool = True, full: bool = False, wait: float = lock.WAIT) -> Update:
    """Everything embedded in the configured space (what `mem reindex` does after the sync).
    `full`: every chunk's vectors recomputed, from the request cache where it knows the text
    (the same text in the same space gives the same vector, and paid providers bill per
    request; delete embedding_store/ by hand to force new requests)."""
    out = Update()
    target = spaces.configured(ws)
    if target is None:
        out.note = spaces.why_off(ws) or "no embedding backend configured"
        return out
    fast = None
    try:
        with embed_lock(ws, "reindex", wait=wait):
            if full:
                _drop_vectors(ws)
            active = vectors.active_space(ws.metadata)
            keep = "now"
            if active is None or active["id"] != target.space["id"]:
                searched = _searched(ws, target) if active is not None else None
                fast = spaces.first_pass(ws) if _large(ws) else None
                if fast is not None and (searched is None or searched.space["id"] == fast.space["id"]):
                    # the first pass: the whole vault searchable by meaning in seconds
                    out.first_pass = _run(ws, fast, progress=progress, stage="first-pass")
                    out.terms = terms_for(ws, fast, progress)
                    keep = "complete"
                elif searched is not None:
                    keep = "complete"  # the previous model answers until the new one is done
            if refine:
                out.target, terms = _refine(ws, target, progress, keep)
                out.terms = terms if out.target.active else out.terms
                if out.target.active:
                    _forget_first_pass(ws)
    finally:
        target.embedder.close()
        if fast is not None:
            fast.embedder.close()
    return out


def _drop_vectors(ws: Workspace) -> None:
    """Forget the active space's vectors for `mem reindex --full`, their passages kept in the
    request cache first: the same text in the same space gives the same vector, so the run
    that follows asks the provider only for what it never embedded."""
    from memcli.index.vectors import carry

    space = vectors.active_space(ws.metadata)
    if space is not None:
        known = carry.previous_passages(sync.snapshot_path(ws), space, ws.settings.chunking.passage_tokens)
        if known:
            path = vectors.cache_path(ws.metadata, space["id"])
            cache = vectors.load_cache(path, int(space["dims"]))
            cache.update(known)
            vectors.save_cache(path, cache, int(space["dims"]), len(cache))
    vectors.drop_vectors(ws.metadata, sync.snapshot_path(ws).parent / segments.FOLDER)


def _first(
    ws: Workspace, target: spaces.Backend, fast: spaces.Backend | Literal[False] | None = False
) -> spaces.Backend:
    """What a vault with no vectors starts with: the first pass when it is large, else the model."""
    fast = spaces.first_pass(ws) if fast is False else fast
    return fast if fast is not None and _large(ws) else target


def _large(ws: Workspace) -> bool:
    """Whether the vault is worth a first pass: more chunks than the configured model embeds
    in about a minute (a small vault goes straight to it)."""
    snap = sync.open_snapshot(ws)
    if snap is None:
        return False
    try:
        return snap.n_docs > FIRST_PASS_MIN_CHUNKS
    finally:
        snap.close()


def _forget_first_pass(ws: Workspace) -> None:
    """The first pass's request cache once the configured model answers (its matrix and
    words went with the activation)."""
    fast = spaces.first_pass(ws)
    if fast is not None and vectors.active_space(ws.metadata) != fast.space:
        vectors.atomic.remove(vectors.cache_path(ws.metadata, fast.space["id"]))


def _job(ws: Workspace, target: spaces.Backend, progress, keep: str) -> embed.EmbedRun:
    cfg = ws.settings.embedding

    def report(_stage, done, total):
        progress("embed", done, total)

    return embed.EmbedRun(
        ws,
        target.space,
        target.embedder.embed_batch,
        cfg.max_batch_size,
        lambda: index_lock(ws, "embed-checkpoint", wait=lock.WAIT),
        max_cache=cfg.max_cache_size,
        progress=report if progress else None,
        activate=keep,
    )


def _refine(ws: Workspace, target: spaces.Backend, progress, keep: str):
    """(report, words) of the configured model over the whole vault. Its words are embedded
    before its space is activated, so expansion never meets a space without words."""
    from memcli.index.commit import give_back_memory

    job = _job(ws, target, progress, keep)
    terms = None
    while job.prepare():
        job.step()
        terms = terms_for(ws, target, progress)
        give_back_memory()  # (the store lines are rewritten next)
        job.finish()
        if not job.more():
            break
    if terms is None and job.rep.active:
        terms = terms_for(ws, target, progress)  # nothing to embed, but the words may be missing
    job.rep.seconds = time.perf_counter() - job.t0
    return job.rep, terms


class Refiner:
    """`update` in slices, for a long-lived process (`mem watch`, `mem mcp`) while it is idle:
    first the searched space's chunks without vectors, then the configured model's
    refinement, remembered between slices. `backend` = the caller's configured backend
    (kept loaded); each slice holds the embed lock for at most about `seconds`."""

    def __init__(self, ws: Workspace, backend: spaces.Backend | None = None):
        self.ws = ws
        self._target = backend
        self._fast: spaces.Backend | bool | None = False
        self.job: embed.EmbedRun | None = None
        self.idle = False  # the last slice found nothing to do
        self.not_before = 0.0  # after a provider failure, slices wait (no log line every second)

    def _backends(self):
        if self._target is None:
            self._target = spaces.configured(self.ws)
        if self._fast is False:
            self._fast = spaces.first_pass(self.ws)
        return self._target, self._fast

    def slice(self, seconds: float = SLICE_SECONDS) -> str | None:
        """Embed for about `seconds`; a line to log when something was embedded, or None."""
        ws = self.ws
        if time.monotonic() < self.not_before:
            return None
        deadline = time.monotonic() + seconds
        try:
            target, fast = self._backends()
            if target is None or (
                self.idle and vectors.active_space(ws.metadata) == target.space and not unembedded(ws, target.space)
            ):
                return None  # vectors off, or nothing to do: not even the lock file is touched
            with embed_lock(ws, "refine", wait=0):
                active = vectors.active_space(ws.metadata)
                use = _first(ws, target, fast) if active is None else spaces.for_space(ws, active, target=target)
                if use is not None:
                    rep = _run(ws, use, deadline=deadline)
                    if rep.embedded or rep.pending:
                        return f"embedded {rep.embedded} new passage(s) with {use.embedder.model}" + (
                            f", {rep.pending} left" if rep.pending else ""
                        )
                if vectors.active_space(ws.metadata) == target.space:
                    self.idle, self.job = True, None
                    return None
                self.idle = False
                return self._refine_slice(target, deadline)
        except Busy:
            return None
        except ProviderError as exc:
            self.job, self.not_before = None, time.monotonic() + RETRY_SECONDS
            return f"embedding failed: {exc.line()}; trying again in {RETRY_SECONDS:g}s"

    def _refine_slice(self, target: spaces.Backend, deadline: float) -> str | None:
        if self.job is None:
            self.job = _job(self.ws, target, None, "complete")
            if not self.job.prepare():
                self.job = None
                return None
        job, model = self.job, target.embedder.model
        self.idle = False
        if not job.step(deadline):
            return f"refining with {model}: {job.chunks_done}/{job.total} chunk(s)"
        terms_for(self.ws, target)
        job.finish()
        if job.rep.active:
            _forget_first_pass(self.ws)
        self.job = job if job.more() and job.prepare() else None
        done = "now answers searches" if job.rep.active else f"{job.rep.with_vectors}/{job.rep.total} chunks"
        return f"refined with {model}: {done}"
