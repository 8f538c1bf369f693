"""BM25 scores equal an independent reference (rank_bm25 with the idf of docs/architecture.md, Search)."""

from __future__ import annotations

import json
import math
import random

import pytest
from rank_bm25 import BM25Okapi

from memcli.index import sync
from memcli.index.keyword import bm25
from memcli.index.keyword.tokenizer import query_terms, tokenize
from memcli.index.stores import store

QUERIES = [
    "fusion",
    "reciprocal rank fusion",
    "ECONNREFUSED",
    "handleWebSocketReconnect",
    "socket reconnect",
    "INV-20931-QX",
    "向量数据库",
    "메모리",
    "memory memory memory agent",  # repeated terms count once
    "memory agent",  # in most chunks: idf small but positive ("the" is a stopword now)
    "qzxv nothing matches this",
    "PostgreSQL database choice",
]

VOCAB = (
    "memory agent search index chunk vector keyword fusion digest dream session resource "
    "workspace token budget overlap heading table fence the a of to and database choice "
    "reciprocal rank socket reconnect deploy release review postgres"
).split()


def build_corpus(root, rng: random.Random) -> None:
    def write(rel, text):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    write(
        "MEMORY.md",
        "# Long-term memory\n\nWe chose PostgreSQL as the main database.\nThe user prefers reciprocal rank fusion.\n",
    )
    for day in range(1, 6):
        date = f"2026-05-{day:02d}"
        for n in range(4):
            body = []
            for s in range(rng.randint(1, 3)):
                body.append(f"## Part {s}\n")
                for _ in range(rng.randint(1, 8)):
                    body.append(" ".join(rng.choice(VOCAB) for _ in range(rng.randint(3, 60))) + "\n")
            if rng.random() < 0.3:
                body.append("The client hit ECONNREFUSED in handleWebSocketReconnect.\n")
            if rng.random() < 0.2:
                body.append("Invoice INV-20931-QX was paid twice.\n")
            write(
                f"memory/{date}/note-{n}.md",
                f"---\nname: note-{n}\ndescription: note {n} of {date}\n---\n# Note {n}\n\n" + "\n".join(body),
            )
    long_lines = [" ".join(rng.choice(VOCAB) for _ in range(15)) for _ in range(300)]
    write("memory/2026-05-06/long.md", "# Long log\n\n" + "\n".join(long_lines) + "\n")
    write("memory/2026-05-06/zh.md", "# 部署\n\n我们决定使用向量数据库来存储长期记忆。\n部署流程需要两步。\n")
    write("memory/2026-05-06/ko.md", "에이전트는 메모리를 파일로 저장한다.\n메모리 검색은 빠르다.\n")
    write(
        "digest/wiki/rrf.md",
        "---\nname: rrf\ndescription: Reciprocal rank fusion.\n---\n"
        "Reciprocal rank fusion merges ranked lists from keyword and vector search.\n",
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    from memcli.vault.workspace import open_workspace

    root = tmp_path_factory.mktemp("bm25") / "ws"
    root.mkdir()
    build_corpus(root, random.Random(20260518))
    env = {"HOME": str(root.parent), "MEM_EMBEDDING_BACKEND": "none"}
    ws = open_workspace(root, env)
    sync.sync(ws, full=True)
    records = store.read_records(ws.metadata / store.CHUNK_STORE)
    snap = sync.open_snapshot(ws)
    yield root, ws, snap, records, env
    snap.close()


def reference_scores(records: list[dict], query: str) -> dict[str, float]:
    corpus = [tokenize(r["text"]) for r in records]
    ref = BM25Okapi(corpus, k1=1.5, b=0.75)
    n = len(corpus)
    df: dict[str, int] = {}
    for doc in corpus:
        for t in set(doc):
            df[t] = df.get(t, 0) + 1
    ref.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    scores = ref.get_scores(query_terms(query))
    return {r["id"]: float(s) for r, s in zip(records, scores) if s > 0}


def test_corpus_is_big_enough(indexed):
    _, _, snap, records, _ = indexed
    assert snap.n_docs == len(records) >= 40
    assert len({r["path"] for r in records}) >= 20
    assert sum(1 for r in records if r["path"] == "memory/2026-05-06/long.md") > 3


@pytest.mark.parametrize("vectorized", [False, True], ids=["python", "numpy"])
@pytest.mark.parametrize("query", QUERIES)
def test_scores_match_reference(indexed, query, vectorized, monkeypatch):
    _, _, snap, records, _ = indexed
    # both scoring paths (pure Python for few postings, numpy for many) must agree with the oracle
    for limit in ("NUMPY_POSTINGS", "LOADED_POSTINGS"):  # numpy imported or not
        monkeypatch.setattr(bm25, limit, 0 if vectorized else 10**12)
    ours = {snap.chunk_id(d): s for d, s in bm25.score(snap, query).items()}
    ref = reference_scores(records, query)
    assert set(ours) == set(ref), (query, len(ours), len(ref))
    for cid, s in ref.items():
        assert ours[cid] == pytest.approx(s, abs=1e-6, rel=0), (query, cid)
    if query.startswith("qzxv"):
        assert ours == {}
    else:
        assert ours, query


def test_only_positive_scores_and_top_order(indexed):
    _, _, snap, _, _ = indexed
    scores = bm25.score(snap, "memory agent fusion")
    assert scores and all(s > 0 for s in scores.values())
    top = bm25.top(scores, 7)
    assert len(top) == 7
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    assert top[0][1] == max(scores.values())


def test_snapshot_doc_lengths_are_token_counts(indexed):
    _, _, snap, records, _ = indexed
    by_id = {r["id"]: r for r in records}
    for d in range(snap.n_docs):
        rec = by_id[snap.chunk_id(d)]
        assert snap.doc_length(d) == len(tokenize(rec["text"]))
        assert snap.text(d) == rec["text"]
    assert snap.avgdl == pytest.approx(sum(len(tokenize(r["text"])) for r in records) / len(records))


def test_cli_reports_the_same_best_score(indexed, run_mem):
    root, _, snap, records, _ = indexed
    code, out, err = run_mem(
        "-w", root, "search", "handleWebSocketReconnect", "--json", "--limit", "1", "--no-links", "--no-sync"
    )
    assert code == 0, err
    res = json.loads(out)["results"]
    ref = reference_scores(records, "handleWebSocketReconnect")
    best = max(ref, key=ref.get)
    assert len(res) == 1
    assert res[0]["score"] == pytest.approx(ref[best], abs=1e-6)
    assert res[0]["keyword"] == pytest.approx(ref[best], abs=1e-6)
    assert res[0]["path"] == next(r["path"] for r in records if r["id"] == best)


@pytest.mark.parametrize("vectorized", [False, True], ids=["python", "numpy"])
@pytest.mark.parametrize("query", QUERIES)
def test_top_k_search_equals_the_best_of_all_scores(indexed, query, vectorized, monkeypatch):
    _, _, snap, _, _ = indexed
    for limit in ("NUMPY_POSTINGS", "LOADED_POSTINGS"):  # numpy imported or not
        monkeypatch.setattr(bm25, limit, 0 if vectorized else 10**12)
    for k in (1, 3, 15):
        assert bm25.search(snap, query, k) == bm25.top(bm25.score(snap, query), k)
    odd = lambda d: d % 2 == 1  # noqa: E731 - a filter the numpy path must apply before top-k
    assert bm25.search(snap, query, 5, odd) == bm25.top(bm25.score(snap, query, odd), 5)


def test_ties_at_the_cut_are_broken_by_chunk_in_both_paths(tmp_path, monkeypatch):
    """Notes that tie at the cut: the best 30 are the higher ones, then the lowest tied chunks,
    whether the postings are scored in Python or numpy (argpartition picked any tied ones)."""
    from memcli.vault.workspace import open_workspace

    root = tmp_path / "ws"
    (root / "memory/2026-05-01").mkdir(parents=True)
    for i in range(400):
        text = "The heron counted lanterns by the lake." if i % 37 else "Heron and heron lanterns, lanterns."
        (root / f"memory/2026-05-01/n{i:03d}.md").write_text(text + "\n")
    ws = open_workspace(root, {"HOME": str(tmp_path), "MEM_EMBEDDING_BACKEND": "none"})
    sync.sync(ws, full=True)
    snap = sync.open_snapshot(ws)
    try:
        tops = []
        for limit in (10**12, 0):
            for name in ("NUMPY_POSTINGS", "LOADED_POSTINGS"):
                monkeypatch.setattr(bm25, name, limit)
            tops.append(bm25.search(snap, "heron lanterns", 30))
        assert tops[0] == tops[1] == bm25.top(bm25.score(snap, "heron lanterns"), 30)
    finally:
        snap.close()
