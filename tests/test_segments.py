"""The segmented keyword index: updates that cost the change, merges, deletions,
batched ReMe stores and the cheap freshness check, each against a full rebuild."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
import zstandard

from memcli.errors import CorruptStore
from memcli.index import merge, quick, sync, verify
from memcli.index.keyword import bm25, segments
from memcli.index.stores import mirror, store
from memcli.vault.workspace import open_workspace

WORDS = (
    "heron lantern quarry violet harbor ledger cinder meadow orbit pylon saffron tundra "
    "walnut zephyr basalt cobalt delta ember fjord glacier"
).split()


def note_text(rng: random.Random, i: int) -> str:
    lines = [f"# Note {i}", ""]
    for p in range(rng.randint(1, 6)):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + f" n{i}p{p}.")
        lines.append("")
    if i % 3 == 0:
        lines.append(f"See [[memory/2026-05-0{1 + (i * 7) % 5}/n{(i * 7) % 40}]] for more.")
    return "\n".join(lines)


def vault(root, n: int = 40, seed: int = 3):
    rng = random.Random(seed)
    for i in range(n):
        p = root / "memory" / f"2026-05-0{1 + i % 5}" / f"n{i}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(note_text(rng, i), encoding="utf-8")
    return rng


def ws_of(root):
    return open_workspace(root, dict(os.environ))


def lines_of(path) -> list[bytes]:
    with zstandard.ZstdDecompressor().stream_reader(path.read_bytes(), read_across_frames=True) as r:
        data = r.read()  # as ReMe reads it: one stream across the frames
    return data.split(b"\n")[:-1]


def state(ws) -> dict:
    """What a rebuild must reproduce: each query's ranking with scores, the stores' records."""
    view = sync.open_snapshot(ws)
    try:
        ranks = {}
        for q in ("heron lantern", "violet", "n7p0", "cobalt zephyr glacier", "orbit"):
            ranks[q] = [
                (view.paths[view.meta(d)[0]], view.meta(d)[1], round(s, 9)) for d, s in bm25.search(view, q, 10)
            ]
        links = {p: view.record(view.file_index(p), inlinks=True)["in"] for p in view.paths}
        ids = sorted(view.chunk_ids())
    finally:
        view.close()
    meta = ws.metadata
    return {
        "ranks": ranks,
        "links": links,
        "ids": ids,
        "chunks": sorted(json.loads(x)["id"] for x in lines_of(meta / store.CHUNK_STORE)),
        "graph": sorted(lines_of(meta / store.GRAPH_STORE)),
        "catalog": sorted(lines_of(meta / mirror.STORE_FILES["catalog"])),
    }


def rebuilt(w, tmp) -> dict:
    """The state of a fresh build of a copy of the same Markdown."""
    copy = tmp / f"rebuild{len(list(tmp.glob('rebuild*')))}"
    shutil.copytree(w.root, copy, ignore=shutil.ignore_patterns("mem_metadata"))
    other = ws_of(copy)
    sync.sync(other)
    return state(other)


@pytest.mark.parametrize("scoring", ["python", "numpy"])
def test_updates_deletions_and_merges_give_what_a_rebuild_gives(ws, tmp_path, monkeypatch, scoring):
    monkeypatch.setattr(merge, "MAX_SMALL", 2)  # merge often
    limit = 10**9 if scoring == "python" else -1  # the postings of dead chunks skipped either way
    monkeypatch.setattr(bm25, "NUMPY_POSTINGS", limit)
    monkeypatch.setattr(bm25, "LOADED_POSTINGS", limit)
    rng = vault(ws)
    w = ws_of(ws)
    assert sync.sync(w).full
    for step in range(12):
        files = sorted((ws / "memory").rglob("*.md"))
        victim = files[rng.randrange(len(files))]
        if step % 4 == 3:
            victim.unlink()
        else:
            victim.write_text(note_text(rng, 100 + step), encoding="utf-8")
        if step % 3 == 0:
            new = ws / "memory" / "2026-05-06" / f"x{step}.md"
            new.parent.mkdir(exist_ok=True)
            new.write_text(note_text(rng, 200 + step), encoding="utf-8")
        rep = sync.sync(w)
        assert rep.wrote and not rep.full, rep.reason
        man = json.loads(sync.snapshot_path(w).read_text())
        assert len(man["segments"]) <= 1 + merge.MAX_SMALL  # merges keep the count bounded
        assert state(w) == rebuilt(w, tmp_path), f"step {step}"
    assert any(s["dead_files"] for s in man["segments"])  # deletions were kept, not rewritten


def test_an_update_writes_one_small_segment_and_keeps_the_rest(ws):
    vault(ws)
    w = ws_of(ws)
    sync.sync(w)
    folder = sync.snapshot_path(w).parent / segments.FOLDER
    before = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.seg")}
    (ws / "memory" / "2026-05-01" / "n0.md").write_text("# changed\n\nheron only now\n", encoding="utf-8")
    sync.sync(w)
    after = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.seg")}
    assert {k: v for k, v in after.items() if k in before} == before  # nothing rewritten
    fresh = [p for p in after if p not in before]
    assert len(fresh) == 1 and (folder / fresh[0]).stat().st_size < min((folder / p).stat().st_size for p in before)
    man = json.loads(sync.snapshot_path(w).read_text())
    assert man["segments"][0]["dead_files"] == [0] and man["n_files"] == 40


def test_large_stores_are_rewritten_in_batches_and_stay_a_consistent_mirror(ws, tmp_path, monkeypatch):
    monkeypatch.setattr(mirror, "EAGER_BYTES", 0)
    monkeypatch.setattr(mirror, "BATCH_MIN_FILES", 3)
    monkeypatch.setattr(mirror, "BATCH_SHARE", 0.0)
    vault(ws)
    w = ws_of(ws)
    sync.sync(w)
    first = state(w)
    stamp = mirror.stamps(w.metadata)
    for i in range(2):
        (ws / "memory" / "2026-05-02" / f"n{1 + 5 * i}.md").write_text(
            f"# edit {i}\n\nsaffron only {i}\n", encoding="utf-8"
        )
        sync.sync(w)
        assert mirror.stamps(w.metadata) == stamp  # not due: the stores stay as they were
        now = state(w)
        assert now["chunks"] == first["chunks"] and now["graph"] == first["graph"]  # the old mirror, whole
        view = sync.open_snapshot(w)
        assert any("saffron only" in view.text(d) for d in range(view.n_docs))  # searches see the edit
        health = verify.verify(w.metadata, view, w.settings.chunking.passage_tokens)
        assert not health.problems and health.figures["store_files_pending"] == i + 1, health
        view.close()
        assert list((sync.snapshot_path(w).parent / segments.FOLDER).glob("*.chunks.zst"))
    (ws / "memory" / "2026-05-02" / "n11.md").write_text("# edit 2\n\nsaffron only 2\n", encoding="utf-8")
    sync.sync(w)  # the third change makes the batch
    now = state(w)
    assert now["chunks"] == now["ids"] and mirror.current(json.loads(sync.snapshot_path(w).read_text()))
    assert not list((sync.snapshot_path(w).parent / segments.FOLDER).glob("*.zst"))  # sidecars taken in
    assert now == rebuilt(w, tmp_path)


def test_a_reader_whose_segment_was_merged_away_reads_the_new_manifest(ws, monkeypatch):
    vault(ws, n=10)
    w = ws_of(ws)
    sync.sync(w)
    path = sync.snapshot_path(w)
    stale = json.loads(path.read_text())
    stale["segments"][0]["name"] = "gone.seg"  # what an older manifest named
    calls = []
    real = segments.read_manifest

    def racing(p):
        calls.append(p)
        return stale if len(calls) == 1 else real(p)

    monkeypatch.setattr(segments, "read_manifest", racing)
    view = segments.open_view(path)
    assert view is not None and view.n_docs > 0 and len(calls) == 2
    view.close()


def test_a_damaged_manifest_or_segment_means_a_rebuild_not_an_error(ws):
    vault(ws, n=10)
    w = ws_of(ws)
    sync.sync(w)
    good = state(w)
    sync.snapshot_path(w).write_text("{not json", encoding="utf-8")
    rep = sync.sync(w)
    assert rep.full and "damaged" in rep.reason and state(w) == good
    seg = next((sync.snapshot_path(w).parent / segments.FOLDER).glob("*.seg"))
    seg.write_bytes(seg.read_bytes()[:100])
    rep = sync.sync(w)
    assert rep.full and state(w) == good


def test_the_quick_freshness_check_sees_adds_deletes_and_recent_edits(ws, monkeypatch):
    monkeypatch.setattr(quick, "QUICK_MIN_FILES", 0)
    monkeypatch.setattr(quick, "HOT_FILES", 5)
    vault(ws, n=20)
    w = ws_of(ws)
    old = 1_600_000_000_000_000_000
    for p in (ws / "memory").rglob("*"):
        os.utime(p, ns=(old, old))  # nothing racy
    sync.sync(w)

    def fresh() -> bool:
        view = sync.open_snapshot(w)
        try:
            return quick.unchanged(view)
        finally:
            view.close()

    assert fresh()
    recorded = json.loads(sync.snapshot_path(w).read_text())["quick"]["files"]
    hot = next(Path(p) for p, was in recorded.items() if was is not None)
    hot.write_text(hot.read_text() + "more\n", encoding="utf-8")  # in place, same folder mtime
    assert not fresh()
    sync.sync(w)
    assert fresh()
    extra = ws / "memory" / "2026-05-03" / "new.md"
    extra.write_text("# new\n", encoding="utf-8")
    assert not fresh()
    extra.unlink()
    sync.sync(w)
    assert fresh()


def test_store_vectors_of_one_segment_wait_for_the_stores_batch(ws, monkeypatch):
    """The embedding run puts a segment's chunk vectors into its store lines as that segment's
    sidecar (mirror.revector): stores trailing a large index are not rewritten for it, later
    updates read those lines from the sidecar (deleting chunks of it too), and the next
    rewrite of the stores carries them."""
    monkeypatch.setattr(mirror, "EAGER_BYTES", 0)
    vault(ws, n=10)
    w = ws_of(ws)
    sync.sync(w)
    (ws / "memory" / "2026-05-01" / "n0.md").write_text("# edit\n\nsaffron only\n", encoding="utf-8")
    sync.sync(w)
    view = sync.open_snapshot(w)
    first = view.segments[0]
    assert first.dead_docs and not mirror.current(view.header)
    stamps = mirror.stamps(w.metadata)
    vecs = {j: f"v{j}" for j in range(first.snap.n_docs) if not first.doc_dead(j)}
    mirror.revector(w.metadata, view, {first.name: vecs})
    view.close()
    assert mirror.stamps(w.metadata) == stamps, "the stores wait for their batch"
    (ws / "memory" / "2026-05-01" / "n1.md").write_text("# edit\n\ncumin only\n", encoding="utf-8")
    sync.sync(w)
    view = sync.open_snapshot(w)
    man = mirror.write(w.metadata, view)
    view.close()
    view = sync.open_snapshot(w)
    recs = [json.loads(x) for x in lines_of(w.metadata / store.CHUNK_STORE)]
    assert [r["id"] for r in recs] == view.chunk_ids() and mirror.current(man)
    seg = view.segments[0]
    own = recs[: seg.n_live]
    assert own and all(r.get("_embedding_f16_b64", "").startswith("v") for r in own)
    assert not any("_embedding_f16_b64" in r for r in recs[seg.n_live :])
    view.close()


def test_word_counts_follow_updates_deletions_and_merges(ws):
    """The live word counts query expansion ranks its vocabulary by (terms.live_counts), kept
    across updates, equal a count over every live chunk after each of them."""
    from collections import Counter

    from memcli.index.vectors import terms

    vault(ws, n=20)
    w = ws_of(ws)
    sync.sync(w)
    for step in range(14):
        note = next((ws / "memory").glob(f"*/n{step}.md"))
        if step % 5 == 4:
            note.unlink()
        else:
            note.write_text(f"# edit {step}\n\nsaffron lanterns{step} harbour\n", encoding="utf-8")
            (note.parent / f"x{step}.md").write_text(f"# extra\n\nbrand new words{step} here\n", encoding="utf-8")
        sync.sync(w)
        view = sync.open_snapshot(w)
        want = Counter()
        for d in range(view.n_docs):
            want.update(set(terms.words_of(view.text(d))))
        assert terms.live_counts(view) == want, step
        view.close()


def test_small_segments_are_assembled_in_python_exactly_as_numpy_does(monkeypatch):
    """memcli.index.keyword.assemble: a one-file update sorts its postings without importing numpy;
    both ways give the same arrays, with docs in order or not."""
    import random
    import types
    from array import array

    import numpy as np

    from memcli.index.keyword import assemble

    def assembly(ascending: bool) -> assemble.Assembly:
        r = random.Random(7)
        asm = assemble.Assembly()
        for part in range(3):
            n = r.randint(50, 400)
            docs = sorted(r.randrange(40) for _ in range(n))
            asm.post_hash.append(array("Q", [r.choice([5, 9, 2**63 + 1, r.getrandbits(64)]) for _ in range(n)]))
            asm.post_doc.append((array("I", docs if ascending else docs[::-1]), 40 * part))
            asm.post_tf.append(array("I", [r.randint(1, 4) for _ in range(n)]))
        return asm

    for ascending in (True, False):
        with_numpy = assemble.postings(assembly(ascending))  # (it lets the assembly's parts go)
        monkeypatch.setattr(assemble, "sys", types.SimpleNamespace(modules={}))
        asm = assembly(ascending)
        assert assemble._small(asm)
        in_python = assemble.postings(asm)
        monkeypatch.undo()
        for a, b in zip(in_python, with_numpy):
            assert np.array_equal(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))


def test_the_postings_order_is_numpys_stable_argsort():
    """assemble._stable_order sorts values (top 32 bits and positions) and then re-sorts the
    runs whose top bits tie: the same order as a stable argsort, ties or not."""
    import numpy as np

    from memcli.index.keyword import assemble

    rng = np.random.default_rng(18)
    for trial in range(300):
        terms = rng.integers(0, 2**64 - 1, int(rng.integers(1, 300)), dtype=np.uint64)
        if trial % 2:  # many hashes sharing their top 32 bits
            terms = (terms >> np.uint64(61) << np.uint64(32)) | (terms & np.uint64(0xFFFF_FFFF))
        h = terms[rng.integers(0, len(terms), int(rng.integers(0, 2000)))]
        order, sorted_h = assemble._stable_order(h)
        want = np.argsort(h, kind="stable")
        assert np.array_equal(order, want) and np.array_equal(sorted_h, h[want]), trial


def test_a_segment_counts_its_files_without_decoding_paths_and_checks_them_when_read(tmp_path):
    """A search opens every segment but reads few paths: the file count comes from the file
    table's offsets, and a paths section that disagrees is caught when it is decoded."""
    from array import array

    import pytest

    from memcli.index.keyword import snapshot as snapmod

    files = [
        {
            "path": f"memory/2026-05-01/n{i}.md",
            "sha": "",
            "fm": {},
            "links": [],
            "problem": None,
            "first": 0,
            "count": 0,
            "mtime_ns": 1,
            "size": 2,
            "mtime": 0.0,
        }
        for i in range(3)
    ]
    empty = {
        name: array("Q") if fmt == "Q" else array("I") if fmt == "I" else b"" for name, fmt in snapmod.SECTIONS.items()
    }
    sections = dict(empty, text_off=array("Q", [0]), **snapmod.file_sections(files))
    path = tmp_path / "a.seg"
    snapmod.write(path, {"n_docs": 0, "avgdl": 0.0}, sections)
    snap = snapmod.Snapshot(path)
    assert snap.n_files == 3 and len(snap.paths) == 3
    snap.close()
    sections["paths"] = "\0".join(f["path"] for f in files[:2]).encode()
    snapmod.write(path, {"n_docs": 0, "avgdl": 0.0}, sections)
    snap = snapmod.Snapshot(path)
    assert snap.n_files == 3
    with pytest.raises(CorruptStore):
        _ = snap.paths
    snap.close()
