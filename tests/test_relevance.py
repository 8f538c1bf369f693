"""Honest hybrid scores, in-process: what the keyword branch knows beyond its top
k (bm25.scored), the cosine of any chunk (vector.cosines), fusions that do not depend on how
deep the branch lists go, and the noise floor (probes, quantile, cap). End to end with a
real embedding server: tests/test_vectors.py and tests/test_expansion.py."""

from __future__ import annotations

import random
from typing import ClassVar

import numpy as np
import pytest
from test_bm25 import QUERIES, build_corpus

from memcli.index.keyword import bm25
from memcli.index.vectors import noise
from memcli.retrieval import fusion
from memcli.retrieval.vector import cosines, top


@pytest.fixture(scope="module")
def snap(tmp_path_factory):
    from memcli.index import sync
    from memcli.vault.workspace import open_workspace

    root = tmp_path_factory.mktemp("relevance") / "ws"
    root.mkdir()
    build_corpus(root, random.Random(20260518))
    ws = open_workspace(root, {"HOME": str(root.parent), "MEM_EMBEDDING_BACKEND": "none"})
    sync.sync(ws, full=True)
    s = sync.open_snapshot(ws)
    yield s
    s.close()


@pytest.mark.parametrize("vectorized", [False, True], ids=["python", "numpy"])
@pytest.mark.parametrize("query", QUERIES)
def test_scored_knows_every_chunks_score_and_its_own_term_matches(snap, query, vectorized, monkeypatch):
    for limit in ("NUMPY_POSTINGS", "LOADED_POSTINGS"):
        monkeypatch.setattr(bm25, limit, 0 if vectorized else 10**12)
    extra = [("deploy", 0.3), ("review", 0.2)]  # as query expansion would add them
    res = bm25.scored(snap, query, 5, extra=extra)
    assert res.top == bm25.search(snap, query, 5, extra=extra)
    full = bm25.score(snap, query, terms=bm25._terms(snap, query, extra))
    own = bm25.score(snap, query)  # the query's own terms only
    for d in range(snap.n_docs):
        assert res.score(d) == pytest.approx(full.get(d, 0.0), abs=1e-9)
        assert res.matched(d) == (d in own), d
    assert res.any_matched == bool(own)


def test_an_expansion_term_alone_is_no_match(snap):
    res = bm25.scored(snap, "qzxv florp", 5, extra=[("deploy", 0.3)])
    assert res.top and all(s > 0 for _, s in res.top)  # expansion-only candidates are scored...
    assert not res.any_matched and not any(res.matched(d) for d, _ in res.top)  # ...but match nothing
    assert bm25.scored(snap, "qzxv florp", 5) is bm25.NOTHING


def test_cosines_are_the_scores_top_gives():
    rng = np.random.default_rng(14)
    counts = rng.integers(1, 5, 40)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.uint32)
    rows = rng.normal(size=(int(offsets[-1]), 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    mask = np.ones(40, dtype=np.uint8)
    mask[7] = 0
    q = rng.normal(size=16)
    ranked = dict(top(rows, mask, q, 40, offsets=offsets))
    got = cosines(rows, mask, q, list(range(40)), offsets)
    assert got.keys() == ranked.keys() and 7 not in got
    for d, s in ranked.items():
        assert got[d] == pytest.approx(s, abs=1e-6)


class FakeSnap:
    """What the fusions read of a snapshot: a path, lines and a text per chunk."""

    paths: ClassVar = ["a.md"]

    def meta(self, d):
        return 0, 10 * d + 1, 10 * d + 5, 0

    def text(self, d):
        return f"chunk {d}"


def lists(rng, n=80):
    cos = {d: float(c) for d, c in enumerate(rng.uniform(0.1, 0.8, n))}
    bm = {d: float(s) for d, s in enumerate(rng.uniform(0.0, 9.0, n)) if s > 3.0}
    vector = sorted(cos.items(), key=lambda t: -t[1])
    keyword = sorted(bm.items(), key=lambda t: -t[1])
    return vector, keyword, cos, bm


@pytest.mark.parametrize("seed", range(4))
def test_minmax_scores_do_not_depend_on_how_deep_the_lists_go(seed):
    vector, keyword, cos, bm = lists(np.random.default_rng(seed))
    floor = 0.3

    def fused(depth):
        hits = fusion.fuse_minmax(FakeSnap(), vector[:depth], keyword[:depth], 0.3, scores=(cos, bm), floor=floor)
        return {h.docs[0]: h.score for h in hits}

    deep, shallow = fused(80), fused(5)
    for d, s in shallow.items():
        assert s == deep[d]
        v = min(1.0, max(0.0, (cos[d] - floor) / (vector[0][1] - floor)))
        assert s == pytest.approx(0.3 * v + 0.7 * bm.get(d, 0.0) / keyword[0][1])
    assert max(deep.values()) <= 1.0 and min(deep.values()) >= 0.0


def test_rrf_counts_ranks_up_to_the_pool_only():
    vector, keyword, cos, bm = lists(np.random.default_rng(7), n=3 * fusion.POOL)
    deep = {h.docs[0]: h.score for h in fusion.fuse_rrf(FakeSnap(), vector, keyword, 0.7, 60, scores=(cos, bm))}
    pool = {
        h.docs[0]: h.score
        for h in fusion.fuse_rrf(FakeSnap(), vector[: fusion.POOL], keyword[: fusion.POOL], 0.7, 60, scores=(cos, bm))
    }
    assert all(deep[d] == s for d, s in pool.items())
    beyond = {d for d, _ in vector[fusion.POOL :]} - {d for d, _ in keyword[: fusion.POOL]}
    assert beyond and all(deep[d] == 0.0 for d in beyond)


def test_probes_are_fixed_nonsense():
    probes = noise.noise_probes()
    assert probes == noise.noise_probes() and len(set(probes)) == noise.PROBE_COUNT == len(probes)
    assert all(1 <= len(p.split()) <= 4 and p.replace(" ", "").isalpha() and p.islower() for p in probes)


class FakeMatrix:
    """One segment's vectors, as memcli.index.vectors.vectors.ViewVectors shows them to noise_record."""

    def __init__(self, rows, mask, offsets):
        keep = np.repeat(np.asarray(mask, dtype=bool), np.diff(offsets))
        self.rows = rows[keep]

    def n_rows_embedded(self):
        return len(self.rows)

    def names(self):
        return ["seg"]

    def embedded_blocks(self, skip=()):
        return [] if "seg" in skip else [("seg", self.rows)]


def test_the_floor_is_the_quantile_of_the_probes_best_cosines_below_the_cap():
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(30, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    probes = rng.normal(size=(48, 8)).astype(np.float32)
    space = {"id": "abc123abc123", "identity": "t", "dims": 8}
    # chunk 1 (rows 10-19) has no vectors yet: its rows do not count
    record = noise.noise_record(space, probes, FakeMatrix(rows, [1, 0, 1], [0, 10, 20, 30]))
    unit = probes / np.linalg.norm(probes, axis=1, keepdims=True)
    kept = np.concatenate((rows[:10], rows[20:]))
    best = (kept @ unit.T).max(axis=0)
    assert record["measured"] == pytest.approx(np.quantile(best, noise.FLOOR_QUANTILE), abs=1e-4)
    assert record["floor"] == min(record["measured"], noise.FLOOR_CAP)
    assert record["passages"] == 20 and record["probes"] == 48
    np.testing.assert_allclose(noise.noise_vectors(record, 8), probes, atol=2e-3)
    eye = np.eye(8, dtype=np.float32)
    low = noise.noise_record(
        space, eye[1:2].repeat(48, axis=0) * 0.3 + eye[2:3] * 0.9539, FakeMatrix(eye[:2], [1], [0, 2])
    )
    assert low["floor"] == low["measured"] == 0.3  # under the cap: the measurement itself
    high = noise.noise_record(space, eye[:1].repeat(48, axis=0), FakeMatrix(eye[:2], [1], [0, 2]))
    assert (high["measured"], high["floor"]) == (1.0, noise.FLOOR_CAP)  # nonsense as close as it gets


@pytest.mark.parametrize(("cosine", "shown"), [(0.35, True), (0.30, False)])
def test_an_expansion_term_and_a_cosine_near_the_floor_agree_on_a_match(snap, cosine, shown):
    from memcli.retrieval import rank

    scored = bm25.scored(snap, "qzxv florp", 5, extra=[("deploy", 0.3)])  # reached by the expansion only
    near = noise.near_floor(0.4, "qzxv florp")
    branch = rank.VectorBranch(
        [], lambda d: True, [], cosines=lambda docs: dict.fromkeys(docs, cosine), floor=0.4, near=near
    )
    ranking = rank.fused(snap, None, branch, scored, "qzxv florp", 5)
    assert bool(ranking.hits) is shown  # 0.35 is within AGREE (0.08) of the floor, 0.30 is not
    assert [h.docs[0] for h in ranking.hits] == ([d for d, _ in scored.top] if shown else [])
    nothing = rank.fused(snap, None, branch, bm25.scored(snap, "qzxv florp", 5), "qzxv florp", 5)
    assert nothing.hits == []  # a cosine near the floor alone is no match
    assert noise.near_floor(0.7, "富士山の天気") is None  # nonsense reaches a CJK floor: no agreeing there
    assert noise.near_floor(None, "qzxv florp") is None
