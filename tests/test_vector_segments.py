"""Vectors kept per index segment (memcli.index.vectors.vecseg): an update writes the vectors of its
own segment, a merge those of the merged one, and after any of them every chunk's rows are
still its own passages' vectors and searches rank as a vault embedded from scratch does.

`mem` runs in subprocesses against the bag-of-words embedding server of test_vectors.py.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from test_passages import assert_matrix_matches_the_texts, long_note
from test_vectors import DAY, UNPIN, chunk_store, cli, root, search_json, server, write_config, write_notes  # noqa: F401


@pytest.fixture
def vault(root, server, cli):
    write_config(root, server.base_url)
    write_notes(root, {f"n{i:02d}": long_note(f"topic{i}", 6 + i % 5) for i in range(12)})
    assert cli("reindex")[0] == 0
    return root


def vector_files(root) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in root.glob("mem_metadata/keyword_index/segments/*.vec-*")}


def segment_names(root) -> list[str]:
    man = next(root.glob("mem_metadata/keyword_index/*.segments.json"))
    return [s["name"] for s in json.loads(man.read_text())["segments"]]


def test_an_update_writes_only_its_own_segments_vectors(vault, server, cli):
    before = vector_files(vault)
    assert len(before) == len(segment_names(vault)) == 1
    (vault / DAY / "n03.md").write_text(long_note("changed", 7), encoding="utf-8")
    mark = server.mark()
    assert cli("reindex")[0] == 0
    after = vector_files(vault)
    assert {k: v for k, v in after.items() if k in before} == before, "the old segment's file is untouched"
    assert len(after) == 2 and len(segment_names(vault)) == 2
    sent = server.texts(mark)
    assert sent and all("changed" in t for t in sent), "only the edited note's passages are embedded"
    assert assert_matrix_matches_the_texts(vault, server) == len(chunk_store(vault))


def test_updates_and_merges_keep_every_row_on_its_text_and_rank_as_a_fresh_build(vault, server, cli, run_mem, tmp_path):
    seen_merge = False
    for step in range(12):  # past eight small segments the smallest ones merge
        old = vault / DAY / f"n{(step * 5) % 12:02d}.md"
        if step % 4 == 3 and old.exists():
            old.unlink()
        else:
            write_notes(vault, {f"new{step:02d}": long_note(f"fresh{step}", 3 + step % 4)})
            if old.exists():
                old.write_text(long_note(f"edit{step}", 5), encoding="utf-8")
        assert cli("search", "fresh1w2", "--mode", "keyword")[0] == 0  # the sync a search runs
        assert cli("reindex")[0] == 0
        names = segment_names(vault)
        seen_merge = seen_merge or len(names) < step + 2
        assert {n.split(".vec-")[0] for n in vector_files(vault)} == set(names), "one file per live segment"
        assert assert_matrix_matches_the_texts(vault, server) == len(chunk_store(vault))
    assert seen_merge
    fresh = tmp_path / "fresh"
    shutil.copytree(vault, fresh, ignore=shutil.ignore_patterns("mem_metadata"))
    assert run_mem("-w", fresh, "reindex", env=UNPIN)[0] == 0
    for query in ("fresh5w1 topic2", "edit6 line", "topic7w3", "something else entirely"):
        a = search_json(cli, query, "--mode", "vector")["results"]
        code, out, err = run_mem("-w", fresh, "search", query, "--json", "--mode", "vector", env=UNPIN)
        assert code == 0, err
        b = json.loads(out)["results"]
        assert [(h["path"], h["start_line"]) for h in a] == [(h["path"], h["start_line"]) for h in b], query
        assert [h["vector"] for h in a] == pytest.approx([h["vector"] for h in b], abs=1e-4), query


def test_the_store_lines_of_a_fresh_segment_get_their_vectors(vault, server, cli):
    write_notes(vault, {"late": "The heron counted seventeen lanterns by the pier."})
    assert cli("reindex")[0] == 0
    recs = [r for r in chunk_store(vault) if r["path"].endswith("late.md")]
    assert recs and all("_embedding_f16_b64" in r for r in recs)
    figures = json.loads(cli("health", "--json")[1])
    vec = next(c for c in figures["checks"] if c["name"] == "vectors")
    assert vec["status"] == "ok", vec


def test_hamming_shortlist_finds_what_the_exact_ranking_finds(vault):
    """Above RESCORE chunks the sign bits pick the chunks whose rows are scored: on random
    clustered vectors its top 10 equal the exact top 10 nearly always."""
    from memcli.index.vectors import vecseg
    from memcli.retrieval import vector

    rng = np.random.default_rng(5)
    centres = rng.standard_normal((50, 64)).astype(np.float32)
    n = vector.RESCORE * 3
    rows = centres[rng.integers(0, 50, n)] + 0.6 * rng.standard_normal((n, 64)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    path = vault / "probe.vec"
    vecseg.write(path, {"dims": 64, "passage_tokens": 100}, np.ones(n), np.arange(n + 1), rows, rows)
    vs = vecseg.VecSeg(path)

    class Seg:
        name, doc_base, dead_docs = "s", 0, []
        snap = type("Snap", (), {"n_docs": n})()

    class Vecs:
        dims, parts = 64, [(Seg(), vs)]
        live = staticmethod(lambda seg: np.arange(n))

    agree = []
    for _ in range(20):
        q = rows[rng.integers(0, n)] + 0.3 * rng.standard_normal(64).astype(np.float32)
        got = [d for d, _ in vector.search(Vecs(), q, 10)]
        exact = np.argsort(-(rows.astype(np.float16).astype(np.float32) @ (q / np.linalg.norm(q))))[:10]
        agree.append(len(set(got) & set(exact.tolist())) / 10)
    assert np.mean(agree) >= 0.95, agree
    vs.close()
