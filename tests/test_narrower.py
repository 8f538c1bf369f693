"""Narrower words: a question naming a thing by its kind finds the note naming the thing
(memcli.retrieval.narrower, WordNet's broader words in memcli/index/data/broader.tsv.zst).

The real CLI in a subprocess on a keyword-only workspace (no embedding model): what is found
here comes from the table, not from vectors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DAY = "memory/2026-05-04"
NOTES = {
    "neighbour": "Our neighbour Tom Hale is a beekeeper and sells honey at the market.",
    "practical": "The year 11 class does a titration practical with NaOH on Thursday.",
    "garden": "The garden fence was painted green on Saturday.",
}
DOGS = {
    "biscuit": "Biscuit the poodle sleeps on the sofa.",
    "rex": "Rex the terrier chases the postman.",
    "otto": "Otto the dachshund hates the rain.",
}


@pytest.fixture
def ws(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def vault(root: Path, notes: dict[str, str], **search) -> None:
    lines = ["embedding_model_config:", "  backend: none", "search:"]
    lines += [f"  {k}: {json.dumps(v)}" for k, v in search.items()] or ["  limit: 5"]
    (root / "mem.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    day = root / DAY
    day.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (day / f"{name}.md").write_text(f"# {name}\n\n{text}\n", encoding="utf-8")


def search(run_mem, root: Path, query: str) -> dict:
    code, out, err = run_mem("-w", root, "search", query, "--json", "--no-links")
    assert code == 0, err
    return json.loads(out)


def stems(doc: dict) -> list[str]:
    return [Path(r["path"]).stem for r in doc["results"]]


def term(word: str) -> str:
    from memcli.index.keyword.tokenizer import query_terms

    return query_terms(word)[0]


def test_a_synonym_finds_the_note(ws, run_mem):
    vault(ws, NOTES)
    doc = search(run_mem, ws, "Who is the apiarist living nearby?")
    assert term("beekeeper") in doc["expansion"], doc["expansion"]
    assert stems(doc)[:1] == ["neighbour"], doc


def test_a_two_word_kind_finds_the_thing(ws, run_mem):
    """WordNet files titration under "volumetric analysis": the two query words as one name."""
    vault(ws, NOTES)
    doc = search(run_mem, ws, "Which volumetric analysis do the students carry out?")
    assert stems(doc)[:1] == ["practical"], doc


def test_off_finds_nothing(ws, run_mem):
    """With narrower_terms 0 nothing in the vault holds a word of the question: no result
    (what the table adds in the tests above)."""
    vault(ws, NOTES, narrower_terms=0)
    doc = search(run_mem, ws, "Who is the apiarist living nearby?")
    assert doc["results"] == [] and term("beekeeper") not in doc.get("expansion", []), doc


def test_a_question_holding_its_words_is_not_expanded(ws, run_mem):
    vault(ws, NOTES)
    doc = search(run_mem, ws, "Tom Hale apiarist")
    assert term("beekeeper") not in doc.get("expansion", []), doc
    assert stems(doc)[:1] == ["neighbour"], doc


def test_a_kind_reaching_more_words_than_allowed_adds_none(ws, run_mem):
    """ "dog" is broader than poodle, terrier and dachshund: all three under a cap of 4, none
    under the default cap of 2 (a class that wide says little about which note is asked for)."""
    vault(ws, DOGS, narrower_terms=4)
    doc = search(run_mem, ws, "Where does the dog nap?")
    assert {term(w) for w in ("poodle", "terrier", "dachshund")} <= set(doc["expansion"]), doc
    assert set(stems(doc)) == set(DOGS), doc
    vault(ws, DOGS)
    doc = search(run_mem, ws, "Where does the dog nap?")
    assert not {term(w) for w in ("poodle", "terrier", "dachshund")} & set(doc.get("expansion", [])), doc
    assert doc["results"] == [], doc
