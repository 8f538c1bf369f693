"""Query expansion with word vectors, end to end: `mem reindex` embeds the vault's words,
`mem search` adds the nearest ones to the keyword query (memcli.index.vectors.terms,
memcli.retrieval.expand), against a real OpenAI-compatible server on 127.0.0.1.

The server embeds by *concepts*: each word of a small synonym table adds 1 to its
concept's dimension, any other word 0.25 to a hashed dimension. So `injured` and
`accident` are the same direction, a test knows exactly which words are neighbours, and
a note's concept dominates its vector (a chunk found only through a neighbour word still
has a cosine above the noise floor).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_vectors import SECRET, BowServer

DIMS = 16
CONCEPTS = {"injured": 0, "accident": 0, "hurt": 0, "picture": 1, "photo": 1, "snapshot": 1}
UNPIN = {"MEM_EMBEDDING_BACKEND": None}
DAY = "memory/2026-05-01"
NOTES = {
    "soccer": "My son had a soccer accident last spring.",
    "garden": "The garden needs water twice a week.",
    "camera": "Here is a photo of the lake at dawn.",
    "storm": "Nobody was injured in the storm, luckily.",
}


def concept_vector(text: str, concepts: dict = CONCEPTS, dims: int = DIMS) -> list[float]:
    """1 in its concept's dimension per word of `concepts`, 0.25 in a hashed one past them
    per other word."""
    v = [0.0] * dims
    first = max(concepts.values()) + 1
    for word in re.findall(r"\w\w+", text.lower()):
        if word in concepts:
            v[concepts[word]] += 1.0
        else:
            v[first + hashlib.sha256(word.encode()).digest()[0] % (dims - first)] += 0.25
    return v


@pytest.fixture
def server():
    srv = BowServer(vector=concept_vector, dims=DIMS)
    yield srv
    srv.stop()


def configure(root: Path, url: str, dims: int = DIMS, **search) -> None:
    """The workspace's mem.yaml; definitions (tests/test_definitions.py) off unless asked for."""
    lines = [
        "embedding_model_config:",
        "  backend: openai",
        f"  base_url: {url}/v1",
        "  model_name: test-emb",
        f"  api_key: {SECRET}",
        f"  dimensions: {dims}",
        "  max_retries: 0",
        "search:",
        "  vector_weight: 0.3",
    ]
    lines += [f"  {k}: {json.dumps(v)}" for k, v in {"define_terms": 0, **search}.items()]
    (root / "mem.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write(root: Path, name: str, text: str) -> None:
    p = root / DAY / f"{name}.md"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"# {name}\n\n{text}\n", encoding="utf-8")


@pytest.fixture
def root(tmp_path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


@pytest.fixture
def cli(run_mem, root):
    def run(*args):
        return run_mem("-w", root, *args, env=UNPIN)

    return run


@pytest.fixture
def indexed(root, server, cli):
    configure(root, server.state.url)
    for name, text in NOTES.items():
        write(root, name, text)
    code, out, err = cli("reindex", "--json")
    assert code == 0, err
    return json.loads(out)


def terms_file(root: Path) -> Path:
    found = list((root / "mem_metadata/embedding_store").glob("terms_*.f32m"))
    assert len(found) <= 1, found
    return found[0] if found else root / "missing.f32m"


def stored(root: Path):
    """(words, vectors) of the word store, read as its documented layout."""
    import struct

    raw = terms_file(root).read_bytes()
    assert raw[:8] == b"MEMTERM1"
    (hlen,) = struct.unpack_from("<I", raw, 8)
    head = json.loads(raw[12 : 12 + hlen])
    start = 12 + hlen
    words = raw[start : start + head["blob"]].decode("utf-8").split("\n")
    off = start + head["blob"] + ((-(start + head["blob"])) & 7)
    vecs = np.frombuffer(raw, dtype="<f4", count=head["words"] * head["dims"], offset=off)
    assert len(words) == head["words"] and len(raw) == off + 4 * head["words"] * head["dims"]
    return words, vecs.reshape(head["words"], head["dims"])


def search(cli, query: str, *args) -> dict:
    code, out, err = cli("search", query, "--json", "--no-links", *args)
    assert code == 0, err
    assert err == "", err
    return json.loads(out)


def paths(doc: dict) -> list[str]:
    return [Path(r["path"]).stem for r in doc["results"]]


def test_reindex_embeds_each_vault_word_once(indexed, root, server, cli):
    words, vecs = stored(root)
    words = set(words)
    assert {"soccer", "accident", "photo", "injured", "garden", "storm"} <= words
    assert not words & {"the", "was", "in", "my"}, "stopwords are not embedded"
    assert not any(len(w) < 3 for w in words)
    assert vecs.dtype == np.float32 and vecs.shape == (len(words), DIMS)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    for w, v in zip(*stored(root)):
        assert np.allclose(v, np.asarray(concept_vector(w)) / np.linalg.norm(concept_vector(w)), atol=1e-6), w
    assert set(server.texts()) >= words
    assert indexed["embedding"]["words"] == len(words) == indexed["embedding"]["words_embedded"]

    before = len(server.texts())
    code, out, _ = cli("reindex", "--json")
    assert code == 0 and json.loads(out)["embedding"]["words_embedded"] == 0
    assert len(server.texts()) == before, "an unchanged vault embeds nothing"

    (root / DAY / "garden.md").unlink()  # drops `garden`
    write(root, "orchard", "The orchard needs water twice a week.")  # adds `orchard`
    code, out, _ = cli("reindex", "--json")
    assert code == 0, out
    new = server.texts()[before:]
    assert "orchard" in new and "water" not in new, new
    now = set(stored(root)[0])
    assert "orchard" in now and "garden" not in now


def term(word: str) -> str:
    """The index form of a word (stemmed like the index: `injured` -> `injur`)."""
    from memcli.index.keyword.tokenizer import query_terms

    return query_terms(word)[0]


def test_a_paraphrase_is_found_by_the_keyword_branch(indexed, cli):
    doc = search(cli, "who was hurt")
    assert sorted(doc["expansion"]) == sorted([term("accident"), term("injured")]), doc["expansion"]
    by_name = {Path(r["path"]).stem: r for r in doc["results"]}
    assert by_name["soccer"]["keyword"] is not None, doc  # keyword credit without the word
    assert by_name["storm"]["keyword"] is not None, doc
    assert by_name.get("camera", {}).get("keyword") is None, doc


def test_forced_keyword_mode_does_not_expand(indexed, cli):
    doc = search(cli, "who was hurt", "--mode", "keyword")
    assert doc["expansion"] == []
    assert doc["results"] == [], "no note has the word `hurt` (nor `who`, `was`: stopwords)"


def test_an_exact_word_outranks_its_synonym(indexed, cli):
    doc = search(cli, "injured", "--mode", "hybrid")
    assert paths(doc)[0] == "storm", doc  # holds `injured` itself; `soccer` only its neighbour
    kw = {Path(r["path"]).stem: r["keyword"] for r in doc["results"]}
    assert kw["storm"] > kw["soccer"] > 0, kw


def test_expansion_off_embeds_no_words(root, server, cli):
    configure(root, server.state.url, expand_terms=0)
    for name, text in NOTES.items():
        write(root, name, text)
    assert cli("reindex")[0] == 0
    assert not terms_file(root).exists()
    assert "accident" not in server.texts(), "only chunk texts were sent"
    assert search(cli, "who was hurt")["expansion"] == []


def test_a_damaged_word_store_only_turns_expansion_off(indexed, root, cli):
    raw = terms_file(root).read_bytes()
    terms_file(root).write_bytes(raw[: len(raw) // 2])  # torn: the vectors are cut short
    doc = search(cli, "who was hurt")
    assert doc["expansion"] == []
    code, out, err = cli("reindex", "--json")
    assert code == 0, err
    assert json.loads(out)["embedding"]["words_embedded"] > 0, "rebuilt from the Markdown"
    assert term("accident") in search(cli, "who was hurt")["expansion"]


def test_an_expansion_term_alone_is_no_match(indexed, root, cli):
    """Nonsense words have neighbours too (here: vault words hashed to the same dimension),
    but a chunk that only an expansion term reaches is shown only with a cosine above the
    noise floor; nonsense has none, so it finds nothing in any mode."""
    for mode in ("auto", "hybrid", "vector", "keyword"):
        doc = search(cli, "zzqxj florp vrmbl", "--mode", mode)
        assert doc["results"] == [], (mode, doc)
        assert mode in ("vector", "keyword") or doc["expansion"], "the nonsense was expanded"
    filler = " ".join(f"filler{i}" for i in range(40))
    write(root, "album", f"An old snapshot among {filler}.")  # concept `picture`, but diluted
    assert cli("reindex")[0] == 0
    doc = search(cli, "picture")
    assert {term("photo"), term("snapshot")} <= set(doc["expansion"])
    assert paths(doc) == ["camera"], doc  # album: a neighbour word, and a cosine below the floor
