"""Turn changed Markdown files into index material, in parallel for big batches.

Reading, chunking and tokenizing a 2,000-note vault is most of a full build, so
large batches are split across worker processes. Workers return compact data
(term hashes and counts as typed arrays, store lines as bytes), so handing the
results back costs little, and a one-file update never imports numpy.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from memcli.index.keyword import tokenizer
from memcli.index.notes import source
from memcli.index.notes.reader import read_note
from memcli.index.stores import store
from memcli.vault import frontmatter

PARALLEL_MIN_FILES = 300
MAX_READ = 64 * 1024 * 1024


@dataclass
class FileResult:
    rel: str
    sha: str = ""
    unchanged: bool = False  # same hash as the indexed version
    error: str | None = None  # unreadable
    front_matter: dict = field(default_factory=dict)
    links: list = field(default_factory=list)
    problem: str | None = None
    skipped: bool = False
    spans: list = field(default_factory=list)  # (start_line, end_line, crumb_lines)
    texts: list = field(default_factory=list)  # utf-8 bytes per chunk
    ids: list = field(default_factory=list)  # 32-byte digests
    lines: list = field(default_factory=list)  # chunk store lines
    doc_len: list = field(default_factory=list)
    post_hash: Any = None  # array("Q"), per posting
    post_chunk: Any = None  # array("I"), chunk number within the file
    post_tf: Any = None  # array("I")


def _locator(root):
    """Indexed path -> file path. `root` is the workspace's resolver (Workspace.resolver(): extra
    paths outside the workspace are named `extra/<name>/...`, not by where they are), or a plain
    root folder as a string (no extra paths)."""
    if callable(root):
        return root
    from memcli.vault.extras import Resolver

    return Resolver(root)


def _process(locate, rel: str, known_sha: str | None, target: int, overlap: int) -> FileResult:
    res = FileResult(rel)
    try:
        with open(locate(rel), "rb") as fh:
            data = fh.read(MAX_READ)
    except OSError as exc:
        res.error = f"unreadable: {exc.strerror}"
        return res
    res.sha = hashlib.sha256(data).hexdigest()
    if known_sha == res.sha:
        res.unchanged = True
        return res
    note = read_note(rel, data, target, overlap, res.sha)
    if not note.skipped:
        note.chunks += source.chunks(locate, rel, data, note.front_matter, target, overlap)
    res.front_matter, res.links, res.problem, res.skipped = note.front_matter, note.links, note.problem, note.skipped
    res.post_hash, res.post_chunk, res.post_tf = array("Q"), array("I"), array("I")
    for i, ch in enumerate(note.chunks):
        cid = store.chunk_id(rel, ch.start_line, ch.end_line, ch.text)
        counts = tokenizer.hashed_counts(ch.text)  # term hash (as array bytes) -> count
        res.post_hash.frombytes(b"".join(counts))
        res.post_tf.extend(counts.values())
        res.post_chunk.extend(repeat(i, len(counts)))  # ascending: chunk by chunk
        res.spans.append((ch.start_line, ch.end_line, ch.crumb_lines))
        res.texts.append(ch.text.encode("utf-8"))
        res.ids.append(bytes.fromhex(cid))
        res.lines.append(store.chunk_line(cid, ch.text, rel, ch.start_line, ch.end_line))
        res.doc_len.append(sum(counts.values()))
    return res


def _batch(args: tuple) -> list[FileResult]:
    locate, items, target, overlap = args
    return [_process(locate, rel, sha, target, overlap) for rel, sha in items]


def _watch_parent(parent: int) -> None:
    """Worker start-up: exit when the parent is gone. A SIGKILLed parent never tells its
    workers to stop, and they would wait for work forever (holding memory and, before
    the lock module dropped inherited lock files, the index locks)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _warm() -> None:
    """What every worker needs first, done once before the fork instead of in each worker:
    PyYAML's import (31 ms) and the tokenizer's regexes (17 ms). (numpy, which a worker
    needs to write its segment, is not: its import starts OpenBLAS threads, and a process
    with threads should not fork.)"""
    frontmatter.parse("warm: 1")
    tokenizer.hashed_counts("warm-up aB a_b café 中文 メモリ 한")


class Workers:
    """Worker processes for several batches of one build, started once: forked while the
    parent is still small (a fork per batch would copy what the build holds by then into
    every worker's memory)."""

    def __init__(self, items_hint: int):
        self.pool = None
        self.workers = min(os.cpu_count() or 1, 4)
        if items_hint >= PARALLEL_MIN_FILES and self.workers >= 2:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            if ctx is not None:
                _warm()
            self.pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=ctx, initializer=_watch_parent, initargs=(os.getpid(),)
            )

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def stream(self, root, batches, target: int, overlap: int):
        """The results of each batch in turn, the next batch already being read while the
        caller handles one (so the caller's work overlaps the workers')."""
        if self.pool is None:
            for items in batches:
                yield process(root, items, target, overlap)
            return
        locate = _locator(root)
        ahead = None
        for items in batches:
            job = (
                items,
                [self.pool.submit(_batch, (locate, part, target, overlap)) for part in _split(items, self.workers * 2)],
            )
            if ahead is not None:
                yield _gather(*ahead)
            ahead = job
        if ahead is not None:
            yield _gather(*ahead)


def _split(items: list, n: int) -> list[list]:
    return [items[i::n] for i in range(n) if items[i::n]]


def _gather(items: list, futures: list) -> list[FileResult]:
    results = {r.rel: r for f in futures for r in f.result()}
    return [results[rel] for rel, _ in items]


def process(
    root, items: list[tuple[str, str | None]], target: int, overlap: int, progress=None, pool: Workers | None = None
) -> list[FileResult]:
    """Process (path, known hash) pairs; results come back in input order. `root`: the
    workspace's resolver, or its root as a string (see _locator)."""
    locate = _locator(root)  # resolved here: workers get the (picklable) resolver itself
    workers = min(os.cpu_count() or 1, 4)
    if len(items) < PARALLEL_MIN_FILES or workers < 2:
        out = []
        for i, (rel, sha) in enumerate(items):
            out.append(_process(locate, rel, sha, target, overlap))
            if progress and (i % 50 == 0 or i == len(items) - 1):
                progress("chunk", i + 1, len(items))
        return out
    if pool is None or pool.pool is None:
        with Workers(len(items)) as own:
            return process(root, items, target, overlap, progress, pool=own)
    n_batches = workers * 4
    batches = [items[i::n_batches] for i in range(n_batches)]
    results: dict[str, FileResult] = {}
    done = 0
    for batch in pool.pool.map(_batch, [(locate, b, target, overlap) for b in batches]):
        for r in batch:
            results[r.rel] = r
        done += len(batch)
        if progress:
            progress("chunk", done, len(items))
    return [results[rel] for rel, _ in items]
