"""A build from nothing written by the parse workers (memcli.index.build): the index and
stores the parent's own path writes, its runs in path order, and a worker's failure leaving
the last committed index and no stray segment."""

from __future__ import annotations

import json
import os
import random

import pytest
from test_segments import note_text, state, vault, ws_of

from memcli.index import build, sync
from memcli.index.keyword import segments
from memcli.index.notes import parse


@pytest.fixture
def parallel(monkeypatch):
    """Workers for a vault of a few dozen files (the real rule wants 300), forked from here."""
    monkeypatch.setattr(parse, "PARALLEL_MIN_FILES", 10)


def _stamp(path, i: int) -> None:
    os.utime(path, ns=(1_700_000_000_000_000_000 + i, 1_700_000_000_000_000_000 + i))  # (the stores keep mtimes)


def test_the_workers_write_the_index_the_parent_would(ws, tmp_path, parallel):
    vault(ws, n=60)
    for i in range(60):
        _stamp(ws / "memory" / f"2026-05-0{1 + i % 5}" / f"n{i}.md", i)
    w = ws_of(ws)
    rep = sync.sync(w)
    man = json.loads(sync.snapshot_path(w).read_text())
    assert rep.full and len(rep.added) == 60 and len(man["segments"]) >= 4  # two runs per worker at least
    by_workers = state(w)
    # the same Markdown through the parent: one file first, then the rest as an update
    other = tmp_path / "through-parent"
    rng = random.Random(3)
    texts = {i: note_text(rng, i) for i in range(60)}
    for i in (0, *range(1, 60)):
        p = other / "memory" / f"2026-05-0{1 + i % 5}" / f"n{i}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(texts[i], encoding="utf-8")
        _stamp(p, i)
        if i == 0:
            assert sync.sync(ws_of(other)).full
    assert not sync.sync(ws_of(other)).full
    assert state(ws_of(other)) == by_workers


def test_runs_are_consecutive_and_cover_every_file():
    todo = [(f"memory/n{i:03d}.md", None) for i in range(100)]
    sizes = [500 + 90_000 * (i % 7 == 0) for i in range(100)]
    cut = build.runs(todo, sizes, workers=2)
    assert [item for run in cut for item in run] == todo and all(cut)
    assert len(cut) >= 4


def test_a_failing_worker_leaves_the_last_index_and_no_stray_segment(ws, parallel, monkeypatch):
    vault(ws, n=40)
    w = ws_of(ws)
    sync.sync(w)
    folder = sync.snapshot_path(w).parent / segments.FOLDER
    before = sorted(p.name for p in folder.iterdir())
    manifest = sync.snapshot_path(w).read_bytes()
    calls = []
    real = build.write_segment

    def fails_second(folder, asm, written):  # runs in the forked workers: each fails its second run
        calls.append(1)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real(folder, asm, written)

    monkeypatch.setattr(build, "write_segment", fails_second)
    with pytest.raises(OSError):
        sync.sync(w, full=True)
    assert sync.snapshot_path(w).read_bytes() == manifest
    assert sorted(p.name for p in folder.iterdir()) == before
    monkeypatch.setattr(build, "write_segment", real)
    assert not sync.sync(w).wrote  # the last index still answers for the Markdown
