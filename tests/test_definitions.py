"""The reverse dictionary: `mem reindex` embeds the WordNet definitions of
the vault's words (memcli.index.vectors.glosses), `mem search` adds the words whose definition is
nearest the query to its keyword terms (memcli.retrieval.expand.defined).

End to end against a real OpenAI-compatible server on 127.0.0.1 that embeds by *concepts*
(as tests/test_expansion.py's): the words of one concept share a dimension, any other word
adds a little to a hashed one. "journey", "travel" and "bicycle" are one concept, so the
query "How do I travel to work?" is near WordNet's definition of a commute ("a regular
journey … to and from your place of work"), which the note about a commute by bicycle holds
as a word only. The real local model on the reference examples is in test_fresh_vectors.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_expansion import DAY, cli, concept_vector, configure, root, write  # noqa: F401 - fixtures, helpers
from test_vectors import BowServer

DIMS = 64
CONCEPTS = {"journey": 0, "travel": 0, "travels": 0, "bicycle": 0}
QUERY = "How do I travel to work?"
NOTES = {
    "commute": "My commute is a bicycle.",
    "osaka": "She travels to Osaka for a conference.",  # the query's own word, and its concept
}


@pytest.fixture
def server():
    srv = BowServer(vector=lambda text: concept_vector(text, CONCEPTS, DIMS), dims=DIMS)
    yield srv
    srv.stop()


def indexed(root, server, cli, **search) -> None:
    configure(root, server.state.url, dims=DIMS, **{"expand_terms": 0, "define_terms": 3, **search})
    for name, text in NOTES.items():
        write(root, name, text)
    code, _, err = cli("reindex")
    assert code == 0, err


def search(cli, query: str = QUERY) -> dict:
    code, out, err = cli("search", query, "--json", "--no-links")
    assert code == 0 and err == "", err
    return json.loads(out)


def first(doc: dict) -> str:
    return Path(doc["results"][0]["path"]).stem


def term(word: str) -> str:
    from memcli.index.keyword.tokenizer import query_terms

    return query_terms(word)[0]


def definitions_sent(server, since: int = 0) -> list[str]:
    return [t for t in server.texts(since) if re.match(r"[a-z]+: ", t)]


def test_a_definition_finds_the_note_that_holds_the_word(root, server, cli):
    indexed(root, server, cli)
    doc = search(cli)
    assert term("commute") in doc["expansion"], doc["expansion"]
    assert first(doc) == "commute", doc
    by_name = {Path(r["path"]).stem: r for r in doc["results"]}
    assert by_name["commute"]["keyword"] is not None, "keyword credit through the defined word"


def test_without_definitions_the_shared_word_wins(root, server, cli):
    """The same vault with the reverse dictionary off: the note holding the query's own word
    comes first (what the definitions change in the test above)."""
    indexed(root, server, cli, define_terms=0)
    doc = search(cli)
    assert term("commute") not in doc["expansion"] and first(doc) == "osaka", doc
    assert definitions_sent(server) == [], "no definition is embedded when they are off"
    assert not list((root / "mem_metadata/embedding_store").glob("glosses_*"))


def test_definitions_are_embedded_once_per_word(root, server, cli):
    from memcli.index.vectors import glosses

    indexed(root, server, cli)
    sent = definitions_sent(server)
    assert glosses.definition("commute") in sent and glosses.definition("bicycle") in sent
    assert not any(t.startswith(("my:", "she:")) for t in sent), "stopwords have no definition"
    before = server.mark()
    assert cli("reindex")[0] == 0
    assert definitions_sent(server, before) == [], "an unchanged vault embeds nothing"
    write(root, "orchard", "The orchard needs water.")
    before = server.mark()
    assert cli("reindex")[0] == 0
    assert sorted(definitions_sent(server, before)) == sorted(
        glosses.definition(w) for w in ("orchard", "needs", "water")
    ), "only the new words' definitions"
    (root / DAY / "osaka.md").unlink()
    assert cli("reindex")[0] == 0
    from memcli.index import sync
    from memcli.index.vectors import terms, vectors
    from memcli.vault.workspace import open_workspace

    ws = open_workspace(root.resolve(), {})
    space = vectors.active_space(ws.metadata)
    snap = sync.open_snapshot(ws)
    words, stored = terms.vocabulary(snap, ws.settings.search.expand_vocabulary), glosses.load(ws.metadata, space)[0]
    snap.close()
    assert "osaka" not in words and stored == [w for w in words if glosses.definition(w)], (
        "kept up to date word by word, the store equals one made from nothing"
    )
    assert "bicycle" not in server.texts() and terms.load(ws.metadata, space) is None, (
        "expand_terms: 0 sends no bare word: the definitions need only the word list"
    )


def test_with_word_vectors_too(root, server, cli):
    """The default: word vectors and definitions, the definitions taken from the word store
    (only the new words' definitions after an edit: the dictionary is not consulted again)."""
    from memcli.index.vectors import glosses

    indexed(root, server, cli, expand_terms=5)
    assert "bicycle" in server.texts() and glosses.definition("bicycle") in definitions_sent(server)
    doc = search(cli)
    assert term("commute") in doc["expansion"] and first(doc) == "commute", doc
    before = server.mark()
    write(root, "orchard", "The orchard needs water.")
    assert cli("reindex")[0] == 0
    assert sorted(definitions_sent(server, before)) == sorted(
        glosses.definition(w) for w in ("orchard", "needs", "water")
    )


def test_a_damaged_definition_store_only_turns_definitions_off(root, server, cli):
    indexed(root, server, cli)
    (path,) = (root / "mem_metadata/embedding_store").glob("glosses_*.f32m")
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])  # torn: the vectors are cut short
    doc = search(cli)
    assert doc["results"] and term("commute") not in doc["expansion"]
    assert cli("reindex")[0] == 0
    assert term("commute") in search(cli)["expansion"], "rebuilt from the Markdown"


def test_dictionary_and_inflections():
    from memcli.index.vectors import glosses

    assert len(glosses.dictionary()) > 70_000 and glosses.lookup("commute").startswith("a regular journey")
    assert glosses.definition("commute").startswith(
        "commute: a regular journey of some distance to and from your place of work"
    )
    travel = glosses.lookup("travel")
    assert glosses.definition("travels") == f"travels: {travel}"
    assert glosses.definition("bicycles") == f"bicycles: {glosses.lookup('bicycle')}"
    assert glosses.lookup("commut") is None and glosses.lookup("zzzzzz") is None and glosses.lookup("qqqq") is None
    assert glosses.definition("qwzxvbn") is None
    data = glosses.DICTIONARY.parent  # (memcli/index/data/, shipped as package data)
    assert "Princeton University" in (data / "WORDNET-LICENSE").read_text(encoding="utf-8")


def test_the_package_ships_the_dictionary():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"index/data/*"' in text


def test_defined_takes_the_nearest_definitions_above_the_threshold():
    from memcli.retrieval import expand

    words = ["commute", "travel", "trip", "bicycle"]
    vecs = np.asarray([[1, 0, 0], [0.9, 0.1, 0], [0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    glossary = (words, vecs, "g/1")
    got = dict(expand.defined("How do I travel to work?", [1, 0, 0], glossary, 3, 0.5, 2.0))
    assert set(got) == {term("commute"), term("trip")}, "travel is the query's own; bicycle too far"
    assert got[term("commute")] == pytest.approx(2.0) and got[term("trip")] == pytest.approx(1.2)
    assert list(dict(expand.defined("travel to work", [1, 0, 0], glossary, 1, 0.5, 2.0))) == [term("commute")]
    assert expand.defined("travel", [1, 0, 0], glossary, 0, 0.5, 2.0) == []
    assert expand.defined("travel", [1, 0, 0], None, 3, 0.5, 2.0) == []
    assert expand.joined([("a", 0.3)], [("a", 1.2), ("b", 0.5)]) == [("a", 1.2), ("b", 0.5)]


FELINE = {"feline": 0, "cat": 0, "cats": 0}


@pytest.mark.parametrize("ways", ["both", "neighbours", "definitions"])
def test_a_word_both_ways_reach_counts_as_the_querys_own(root, cli, ways):
    """ "feline" is near "cat" (a neighbour of a query word), and WordNet's definition of a cat
    ("feline mammal usually having thick soft fur…") is near the question: when both ways name
    the word, the note holding it is shown though it holds no word of the question and its
    cosine is far under the noise floor. Either way alone reaches some vault word for any query,
    so alone, with a cosine that low, it is no match (tests/test_expansion.py; a cosine within
    noise.AGREE of the floor agrees with it: tests/test_relevance.py). WordNet's narrower words are off here:
    they name "cat" under "feline" by themselves (tests/test_narrower.py)."""
    srv = BowServer(vector=lambda text: concept_vector(text, FELINE, DIMS), dims=DIMS)
    try:
        filler = " ".join(f"filler{i}" for i in range(800))  # the note's cosine far under the floor
        notes = {"pet": f"Our cat Bruno is nine and ginger, {filler}.", "lab": "The lab samples came back clean."}
        counts = {"both": (5, 3), "neighbours": (5, 0), "definitions": (0, 3)}[ways]
        configure(root, srv.state.url, dims=DIMS, expand_terms=counts[0], define_terms=counts[1], narrower_terms=0)
        for name, text in notes.items():
            write(root, name, text)
        assert cli("reindex")[0] == 0
        doc = search(cli, "What colour is the feline's fur?")
        assert term("cat") in doc["expansion"], doc["expansion"]
        shown = [Path(r["path"]).stem for r in doc["results"]]
        assert shown == (["pet"] if ways == "both" else []), doc
    finally:
        srv.stop()
