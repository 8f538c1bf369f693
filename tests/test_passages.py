"""Passage vectors: a chunk's vector side scores as its best ~100-token passage.

Unit tests for the split (memcli.index.vectors.passages) and the per-chunk maximum
(memcli.retrieval.vector.top), then `mem` end to end in subprocesses against the
bag-of-words embedding server of test_vectors.py, counting the texts it was sent.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random

import numpy as np
import pytest
from test_vectors import (  # noqa: F401
    DAY,
    NOTES,
    bow,
    chunk_store,
    cli,
    cosine,
    index_figures,
    indexed,
    one_warning,
    root,
    search_json,
    server,
    space_id,
    unit,
    write_config,
    write_notes,
)

from memcli.index.notes.chunker import estimate_tokens
from memcli.index.vectors.passages import mean_vectors, split
from memcli.retrieval.vector import top

# ---------------------------------------------------------------- the split


def body_of(passage: str, crumb: int) -> list[str]:
    return passage.split("\n")[crumb:]


def random_chunk(r: random.Random, crumb: int, n_lines: int) -> str:
    head = [f"{'#' * (i + 1)} Heading {i}" for i in range(crumb)]
    body = [
        f"L{i} " + " ".join("w" * r.randint(1, 12) for _ in range(r.choice([0, 1, 3, 8, 20, 60])))
        for i in range(n_lines)
    ]
    return "\n".join(head + body)


@pytest.mark.parametrize("seed", range(40))
def test_windows_cover_every_body_line_in_order_within_the_budget(seed):
    r = random.Random(seed)
    crumb, target = r.choice([0, 1, 2]), r.choice([20, 50, 100])
    text = random_chunk(r, crumb, r.randint(1, 40))
    lines = text.split("\n")
    body = lines[crumb:]
    out = split(text, crumb, target)
    assert out and all(p.split("\n")[:crumb] == lines[:crumb] for p in out), "breadcrumb kept"
    windows = [body_of(p, crumb) for p in out]
    if sum(map(estimate_tokens, body)) <= target:
        assert out == [text]
        return
    starts = [body.index(w[0]) for w in windows]  # body lines are unique (numbered)
    for w, s in zip(windows, starts):
        assert body[s : s + len(w)] == w, "a window is a run of consecutive body lines"
        assert len(w) == 1 or sum(map(estimate_tokens, w)) <= target, "within the budget unless one line"
    assert starts[0] == 0 and starts[-1] + len(windows[-1]) == len(body), "first and last line covered"
    for (s0, w0), s1 in zip(zip(starts, windows), starts[1:]):
        assert s0 < s1 <= s0 + len(w0), "always advances, never leaves a gap"
        overlap = body[s1 : s0 + len(w0)]
        assert sum(map(estimate_tokens, overlap)) <= target // 5, "overlap within a fifth of the budget"


def test_long_lines_stand_alone_and_the_split_advances():
    body = [f"line{i} " + "x" * 2000 for i in range(5)]  # each ~500 tokens, over a 100 budget
    out = split("# T\n" + "\n".join(body), 1, 100)
    assert out == [f"# T\n{line}" for line in body]


def test_small_chunk_or_zero_target_is_one_passage_equal_to_the_chunk():
    small = "# Title\n## Section\nshort body line\nanother"
    assert split(small, 2, 100) == [small]
    big = "# T\n" + "\n".join(f"line {i} " + "word " * 30 for i in range(20))
    assert split(big, 1, 0) == [big]
    assert len(split(big, 1, 100)) > 1
    # a long breadcrumb does not count against the budget: only the body is measured
    crumb = "\n".join(f"# {'h' * 300}" for _ in range(3))
    assert split(crumb + "\nbody", 3, 100) == [crumb + "\nbody"]


def test_mean_vectors_are_normalised_means_and_single_rows_stay_exact():
    rows = np.array([[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    out = mean_vectors(rows, [0, 2, 3, 4])
    np.testing.assert_allclose(out[0], [2**-0.5, 2**-0.5, 0], atol=1e-6)
    assert out[1].tobytes() == rows[2].tobytes() and out[2].tobytes() == rows[3].tobytes()


def test_top_scores_a_doc_as_its_best_row():
    rows = np.array([[1, 0], [0, 1], [0.6, 0.8], [0.8, 0.6], [1, 0]], dtype=np.float32)
    offsets = np.array([0, 2, 3, 4, 5], dtype=np.uint32)  # doc 0: rows 0-1, docs 1-3: one row each
    mask = np.array([1, 1, 1, 0], dtype=np.uint8)  # doc 3 has no complete vectors
    got = top(rows, mask, [0, 1], 10, offsets=offsets)
    assert [d for d, _ in got] == [0, 1, 2]
    assert got[0][1] == pytest.approx(1.0) and got[1][1] == pytest.approx(0.8)
    assert [d for d, _ in top(rows, mask, [0, 1], 10, allowed=lambda d: d != 0, offsets=offsets)] == [1, 2]


def brute_force(rows, offsets, mask, q):
    scores = rows @ (q / np.linalg.norm(q))
    best = np.maximum.reduceat(scores, offsets[:-1])
    return {d: float(best[d]) for d in range(len(mask)) if mask[d]}


@pytest.mark.parametrize("seed", range(6))
def test_above_the_shortlist_scores_are_exact_and_the_best_passage_is_found(seed):
    from memcli.retrieval import vector

    rng = np.random.default_rng(seed)
    n_docs = vector.SHORTLIST * 3
    counts = rng.integers(1, 7, n_docs)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    rows = rng.standard_normal((int(offsets[-1]), 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    mask = np.ones(n_docs, dtype=np.uint8)
    mask[rng.choice(n_docs, 50, replace=False)] = 0
    target = int(rng.choice(np.flatnonzero((mask == 1) & (counts >= 4))))
    q = rows[offsets[target] + 2] + 0.01 * rng.standard_normal(16).astype(np.float32)  # one passage of it
    exact = brute_force(rows, offsets, mask, q)
    hits = top(rows, mask, q, 20, offsets=offsets, chunk_rows=mean_vectors(rows, offsets))
    assert hits[0][0] == target  # found although its other passages pull its mean down
    assert all(mask[d] for d, _ in hits)
    for d, s in hits:
        assert s == pytest.approx(exact[d], abs=1e-5)  # a returned chunk's score is its exact best passage
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    odd = top(rows, mask, q, 20, allowed=lambda d: d % 2 == 1, offsets=offsets, chunk_rows=mean_vectors(rows, offsets))
    assert odd and all(d % 2 == 1 for d, _ in odd)


# ---------------------------------------------------------------- mem end to end


def chunk_passages(root) -> dict[str, list[str]]:
    """Stored chunk text -> its passages at the default chunking.passage_tokens (100)."""
    out = {}
    for r in chunk_store(root):
        crumb = len(r["text"].split("\n")) - (r["end_line"] - r["start_line"] + 1)
        out[r["text"]] = split(r["text"], crumb, 100)
    return out


def long_note(topic: str, lines: int = 24) -> str:
    return "\n".join(f"{topic} line {i}: " + " ".join(f"{topic}{i}w{j}" for j in range(10)) for i in range(lines))


def set_passage_tokens(root, value: int) -> None:
    cfg = root / "mem.yaml"
    text = cfg.read_text(encoding="utf-8").split("chunking:")[0]
    cfg.write_text(text + f"chunking:\n  passage_tokens: {value}\n", encoding="utf-8")


def matrix_files(root, server):
    """The active space's vector files, one per index segment."""
    space = space_id("openai", "test-emb", 8, server.base_url)
    return sorted(root.glob(f"mem_metadata/keyword_index/segments/*.vec-{space}"))


def cache_file(root, server):
    return root / f"mem_metadata/embedding_store/default_v1_{space_id('openai', 'test-emb', 8, server.base_url)}.npz"


@pytest.fixture
def mixed(root, server, cli):
    """NOTES plus two notes long enough for several passages, indexed with vectors."""
    write_config(root, server.base_url)
    write_notes(root, {**NOTES, "garden": long_note("garden"), "boat": long_note("boat")})
    code, out, err = cli("reindex")
    assert code == 0, err
    return root


def test_an_embedding_run_embeds_exactly_the_passages(mixed, server, cli):
    by_chunk = chunk_passages(mixed)
    every = sorted({p for ps in by_chunk.values() for p in ps})
    assert sorted(server.texts()) == every
    assert sum(len(ps) > 1 for ps in by_chunk.values()) >= 2, "the long notes must be cut for this to mean anything"
    figures = index_figures(cli)
    assert figures["chunks_with_embedding"] == figures["chunks"] == len(by_chunk)
    assert figures["passages"] == sum(map(len, by_chunk.values()))


def test_store_vector_is_the_normalised_mean_of_the_passages(mixed, server, cli):
    for rec in chunk_store(mixed):
        got = np.frombuffer(base64.b64decode(rec["_embedding_f16_b64"]), dtype="<f2").astype(np.float32)
        rows = [unit(bow(p, 8)).astype("<f2").astype(np.float32) for p in chunk_passages(mixed)[rec["text"]]]
        want = np.mean(rows, axis=0)
        want = rows[0] if len(rows) == 1 else want / np.linalg.norm(want)
        np.testing.assert_allclose(got, want, atol=2e-3, err_msg=rec["path"])


def pebbles(dim: int, sign: int):
    """Words whose bag-of-words vector (test_vectors.bow, 8 dims) is +-1 on one dimension."""
    for i in itertools.count():
        h = hashlib.sha256(f"pebble{i}".encode()).digest()
        if h[0] % 8 == dim and (1 if h[1] & 1 else -1) == sign:
            yield f"pebble{i}"


def test_the_best_passage_outranks_a_chunk_closer_on_average(root, server, cli):
    query = "violin cello harp"  # dims 0+, 3+, 7- of the bag-of-words vectors
    free = [1, 2, 4, 5, 6]
    signal = {d: pebbles(d, 1) for d in free}
    pos, neg = pebbles(1, 1), pebbles(1, -1)

    def filler(i):  # one word on a free dimension, eight that cancel out
        return " ".join([next(signal[free[i % 5]])] + [w for _ in range(4) for w in (next(pos), next(neg))])

    orchestra = "\n".join([filler(i) for i in range(6)] + [f"{query} {query}"] + [filler(i) for i in range(6, 12)])
    quartet = f"{query} " + " ".join(next(signal[d]) for d in (1, 2, 4))
    write_config(root, server.base_url)
    write_notes(root, {"orchestra": orchestra, "quartet": quartet})
    assert cli("reindex")[0] == 0
    whole = {r["path"].rsplit("/", 1)[1]: r["text"] for r in chunk_store(root)}
    assert len(whole) == 2, "each note is one chunk"
    best = max(cosine(p, query) for p in chunk_passages(root)[whole["orchestra.md"]])
    # what the test is about: the quartet is closer than the whole orchestra chunk, but one
    # passage of the orchestra is closer still
    assert cosine(whole["orchestra.md"], query) < cosine(whole["quartet.md"], query) < best - 0.1

    hits = search_json(cli, query, "--mode", "vector")["results"]
    assert [h["path"].rsplit("/", 1)[1] for h in hits] == ["orchestra.md", "quartet.md"]
    assert hits[0]["vector"] == pytest.approx(best, abs=1e-4)
    assert hits[0]["text"] == whole["orchestra.md"], "the hit is still the whole chunk"

    # control: one vector per chunk (passage_tokens 0) ranks them the other way round
    set_passage_tokens(root, 0)
    assert cli("reindex", "--scope", "embedding")[0] == 0
    hits = search_json(cli, query, "--mode", "vector")["results"]
    assert [h["path"].rsplit("/", 1)[1] for h in hits] == ["quartet.md", "orchestra.md"]
    assert hits[1]["vector"] == pytest.approx(cosine(whole["orchestra.md"], query), abs=1e-4)


def test_changing_passage_tokens_pauses_vectors_until_reindex_embedding(mixed, server, cli):
    multi = [t for t, ps in chunk_passages(mixed).items() if len(ps) > 1]
    set_passage_tokens(mixed, 0)
    code, out, err = cli("search", "garden3w4 boat", "--json")
    assert code == 0
    one_warning(err, "chunk vectors do not match the index", "mem reindex")
    assert json.loads(out)["counts"]["vector"] == 0
    code, out, err = cli("health", "--json")
    assert code == 0, (out, err)  # paused, not broken
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["vectors"]["status"] == "warn" and "mem reindex --scope embedding" in checks["vectors"]["message"]
    assert checks["index"]["status"] == "ok"

    mark = server.mark()  # (health pings the provider)
    # a sync meanwhile (a new note) must not end the pause with a half-filled matrix
    write_notes(mixed, {"owl": "An owl nests in the old barn."})
    code, out, err = cli("search", "owl barn", "--json")
    assert code == 0 and json.loads(out)["counts"]["vector"] == 0
    one_warning(err, "mem reindex")
    assert server.texts(mark) == []  # a paused branch does not even embed the query

    code, out, err = cli("reindex", "--scope", "embedding")
    assert code == 0, err
    # small chunks were one passage already: only the long chunks (now whole) and the owl are new
    owl = next(r["text"] for r in chunk_store(mixed) if r["path"].endswith("owl.md"))
    assert sorted(server.texts(mark)) == sorted(multi + [owl])
    code, out, err = cli("search", "garden3w4 boat", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["counts"]["vector"] > 0
    assert index_figures(cli)["passages"] == len(chunk_store(mixed))


def test_an_edit_synced_by_a_search_reuses_the_matrix_rows_without_the_cache(mixed, server, cli):
    """The request cache deleted: the unchanged passages of an edited chunk come from the old
    matrix (carried by the search's sync), so the next run sends only the changed passage."""
    note = mixed / DAY / "garden.md"
    before = {p for ps in chunk_passages(mixed).values() for p in ps}
    cache_file(mixed, server).unlink()
    note.write_text(note.read_text(encoding="utf-8").replace("garden20w3", "edited20w3"), encoding="utf-8")
    code, out, err = cli("search", "edited20w3", "--mode", "keyword")
    assert (code, err) == (0, ""), err
    figures = index_figures(cli)
    assert figures["chunks_with_embedding"] == figures["chunks"] - 1  # the edited chunk waits for its passage

    cache_file(mixed, server).unlink(missing_ok=True)
    mark = server.mark()
    assert cli("reindex")[0] == 0
    new = {p for ps in chunk_passages(mixed).values() for p in ps} - before
    assert len(new) == 1 and sorted(server.texts(mark)) == sorted(new)
    figures = index_figures(cli)
    assert figures["chunks_with_embedding"] == figures["chunks"]


def assert_matrix_matches_the_texts(root, server) -> int:
    """Every chunk's rows are the server's vectors of its passages, in order, and its chunk
    row their normalised mean: nothing was shifted onto another chunk's text."""
    from memcli.index import sync
    from memcli.index.vectors import vectors as vecmod
    from memcli.vault.workspace import open_workspace

    ws = open_workspace(root, {"MEM_WORKSPACE": str(root)})
    snap = sync.open_snapshot(ws)
    m = vecmod.open_vectors(snap, vecmod.active_space(ws.metadata), 100)
    assert m is not None and m.usable and m.n_docs == snap.n_docs
    checked = 0
    for d in range(snap.n_docs):
        texts = split(snap.text(d), snap.meta(d)[3], 100)
        rows = np.asarray(m.doc_rows(d), dtype=np.float32)
        assert len(rows) == len(texts), d
        if not m.mask[d]:
            continue
        want = np.stack([unit(bow(t, 8)) for t in texts])
        assert np.allclose(rows, want, atol=2e-3), (d, texts[0][:40])
        assert np.allclose(
            np.asarray(m.chunk_row(d), dtype=np.float32), mean_vectors(want, [0, len(want)])[0], atol=2e-3
        ), d
        checked += 1
    m.close()
    snap.close()
    return checked


def test_syncs_keep_every_row_on_its_own_text(mixed, server, cli):
    """Edits in the middle, a deleted note and an added one, each synced by a search: the
    kept rows are copied from the old file in runs, and must still belong to their chunks."""
    assert assert_matrix_matches_the_texts(mixed, server) == len(chunk_store(mixed))
    (mixed / DAY / "cat.md").write_text("# cat\n\nThe cat now sleeps in the garden shed.\n", encoding="utf-8")
    (mixed / DAY / "tax.md").unlink()
    write_notes(mixed, {"kite": "Kites fly best on the windy hill in March."})
    assert cli("search", "garden", "--mode", "keyword")[0] == 0
    assert assert_matrix_matches_the_texts(mixed, server) >= len(chunk_store(mixed)) - 2  # new text: no vector yet
    assert cli("reindex")[0] == 0
    assert assert_matrix_matches_the_texts(mixed, server) == len(chunk_store(mixed))


def test_unusable_vector_files_are_rebuilt_from_the_chunk_store_vectors(mixed, server, cli):
    """Vector files of another format are not used; `mem reindex` rebuilds them, and without a
    request cache the chunk store's vectors still serve every one-passage chunk."""
    paths = matrix_files(mixed, server)
    assert paths
    for path in paths:
        path.write_bytes(b"MEMVEC02" + path.read_bytes()[8:])
    code, out, err = cli("search", "garden3w4", "--json")
    assert code == 0
    one_warning(err, "chunk vectors do not match the index")
    cache_file(mixed, server).unlink()
    mark = server.mark()
    assert cli("reindex")[0] == 0
    multi = {p for ps in chunk_passages(mixed).values() if len(ps) > 1 for p in ps}
    assert sorted(server.texts(mark)) == sorted(multi)
    code, out, err = cli("search", "garden3w4", "--json")
    assert (code, err) == (0, "") and json.loads(out)["counts"]["vector"] > 0


@pytest.mark.parametrize("value", ["-1", "-100"])
def test_negative_passage_tokens_is_a_config_error(root, cli, clean_failure, value):
    (root / "mem.yaml").write_text(f"chunking:\n  passage_tokens: {value}\n", encoding="utf-8")
    err = clean_failure(cli("search", "cat"), 3)
    assert "chunking.passage_tokens" in err
