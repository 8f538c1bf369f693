"""A build from nothing whose parse workers write the segments themselves.

Otherwise every parsed file goes back to the parent (its texts, store lines and postings:
73 MB pickled for a 2,000-note vault of 16.7 MB), which writes the segments one after
another: the parent then holds a segment's material and its postings sort (the build's
peak), and the last segment is written on one core while the other waits. Here each worker
parses a run of consecutive files (path order) and writes them as one segment
(memcli.index.commit.write_segment); the parent gets back the segment's name, its sidecars'
frame tables and what the report needs of each file, and adopts the segments in path order,
so the index is the one the parent would have written. A run holds about SEGMENT_DOCS
chunks, estimated from the files' sizes, and a small vault is cut into at least two runs
per worker, so that both work to the end and each holds less.

A worker that fails removes what it wrote and fails the build (the parent's abort removes
the other runs' segments). Only for a keyword index built from nothing: with vectors to
carry (memcli.index.vectors.carry) the files go through the parent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memcli.index.commit import SEGMENT_DOCS, Commit, write_segment
from memcli.index.keyword import assemble
from memcli.index.notes import parse
from memcli.vault import atomic

BYTES_PER_CHUNK = 1_200  # Markdown per chunk at the default 400-token target (2,000 notes: 16.7 MB, 14,067 chunks)


def runs(todo: list, sizes: list[int], workers: int) -> list[list]:
    """`todo` (in path order) cut into consecutive runs of about SEGMENT_DOCS chunks each,
    at least two per worker; `sizes`: the files' sizes in bytes."""
    est = [size // BYTES_PER_CHUNK + 1 for size in sizes]
    n = max(2 * workers, -(-sum(est) // SEGMENT_DOCS))
    share = sum(est) / n
    out, run, held = [], [], 0
    for item, chunks in zip(todo, est):
        run.append(item)
        held += chunks
        if held >= share and len(out) < n - 1:
            out.append(run)
            run, held = [], 0
    return out + [run] if run else out


def build(
    job: Commit,
    workers: parse.Workers,
    root,
    todo: list,
    current: dict,
    target: int,
    overlap: int,
    take: Callable,
    progress=None,
) -> None:
    """Parse and write the files of `todo` as segments in `workers`, adopted by `job` in path
    order; `take(result)` reports each file (its chunks are in the segments already)."""
    locate = parse._locator(root)
    cut = runs(todo, [current[rel][1] for rel, _ in todo], workers.workers)
    assert workers.pool is not None  # sync builds here only with worker processes
    futures = [
        workers.pool.submit(_segment, (locate, run, [current[rel] for rel, _ in run], target, overlap, job.folder))
        for run in cut
    ]
    done = taken = 0
    try:
        for f in futures:
            name, own, light, written = f.result()
            job.written += written
            if name is not None:
                job.parts.append(job.adopt(name, own))
            for res in light:
                take(res)
            done += len(light)
            taken += 1
            if progress:
                progress("chunk", done, len(todo))
    except BaseException:
        for f in futures[taken + 1 :]:  # runs already going finish; what they wrote goes with the commit's abort
            if not f.cancel():
                try:
                    job.written += f.result()[3]
                except BaseException:  # noqa: BLE001 - that run cleaned up after itself
                    pass
        raise


def _assembled(results: list[parse.FileResult], stats: list) -> tuple[assemble.Assembly, list[parse.FileResult]]:
    """The readable files of `results` in one assembly, and each file's result without its chunks."""
    asm = assemble.Assembly()
    light = []
    for res, st in zip(results, stats):
        if not res.error:  # (an unreadable file is left out, as the parent leaves it out)
            assemble.add_fresh(asm, res.rel, res, st)
        light.append(parse.FileResult(res.rel, res.sha, error=res.error, problem=res.problem, skipped=res.skipped))
    return asm, light


def _segment(args: tuple) -> tuple:
    """In a worker: one run parsed and written as a segment; (its name or None when no file
    of it could be read, its frame tables, each file's result without its chunks, the paths written)."""
    locate, items, stats, target, overlap, folder = args
    # the parsed chunks live only in _assembled's frame: once in the assembly they are let go
    asm, light = _assembled(parse._batch((locate, items, target, overlap)), stats)
    written: list[Path] = []
    if not asm.files:
        return None, {}, light, written
    try:
        name, own = write_segment(folder, asm, written)
    except BaseException:
        for p in written:
            atomic.remove(p)
        raise
    return name, own, light, written
