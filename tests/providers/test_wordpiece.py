"""memcli.providers.embedding.wordpiece against the `tokenizers` library it stands in for
(skipped unless the `local` extra is installed): the same ids for every ASCII text tried."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.providers.embedding import local, local_models, wordpiece

if not local.available():
    pytest.skip("the local embedding extra is not installed (pip install -e '.[local]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
L6 = local_models.MODELS["all-MiniLM-L6-v2-int8"]


@pytest.fixture(scope="module")
def both():
    from tokenizers import Tokenizer

    _, path = local_models.files(L6)
    lib = Tokenizer.from_file(str(path))
    lib.no_truncation()
    lib.no_padding()
    return lib, wordpiece.WordPiece(path)


def texts() -> list[str]:
    """The repository's Markdown and Python, line by line and whole, LoCoMo-like questions, and
    seeded random ASCII with the special tokens, runs of punctuation and over-long words."""
    out = [
        "",
        "   ",
        "How does the user usually travel to work?",
        "handleWebSocketReconnect ECONNREFUSED",
        "[CLS] a [SEP]b[MASK][UNK]c [PAD]",
        "x" * 101,
        "unaffable " * 3,
        "tab\there\nnew\rline\x0bvt\x0cff\x00nul",
        "don't stop: e-mail me @ 9:30, ok?!",
        "C++ / C# & F#",
        "foo_bar.baz(qux)",
        "###" + "a" * 99,
    ]
    for path in [*sorted(ROOT.glob("docs/*.md")), ROOT / "README.md", *sorted(ROOT.glob("memcli/retrieval/*.py"))]:
        text = path.read_text(encoding="utf-8")
        out += [line for line in text.splitlines() if line.isascii()]
        out.append("".join(c for c in text if c.isascii()))
    rng = random.Random(16)
    alphabet = [chr(i) for i in range(128)] + ["[CLS]", "[SEP]", "[MASK]", "##", "ing", "x" * 120, " "] * 3
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    return out


def test_the_same_ids_as_the_library(both):
    lib, quick = both
    cases = texts()
    differ = [t for t in cases if lib.encode(t, add_special_tokens=False).ids != quick.encode(t)]
    assert not differ, differ[:3]
    assert len(cases) > 4000
    assert quick.token_to_id("[CLS]") == lib.token_to_id("[CLS]") and quick.token_to_id("nope##") is None


def test_only_ascii_and_only_this_configuration(both, tmp_path):
    _, quick = both
    with pytest.raises(ValueError):
        quick.encode("部署流程")
    _, path = local_models.files(L6)
    spec = json.loads(path.read_text(encoding="utf-8"))
    spec["normalizer"]["lowercase"] = False  # a cased model: not what this module reproduces
    other = tmp_path / "cased.json"
    other.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(wordpiece.NotSupported):
        wordpiece.WordPiece(other)


def test_a_query_is_embedded_without_the_library_and_alike():
    """The cold-search path imports neither onnxruntime nor tokenizers (a subprocess, so nothing
    imported by other tests counts), and its vectors are those of the library's ids; non-ASCII
    or long text still goes through the library."""
    code = (
        "import sys, numpy as np; from memcli.providers.embedding import local; e = local.LocalEmbedder(); "
        "q = ['How does the user usually travel to work?', 'travel', 'work']; v = e.embed_batch(q); "
        "print('tokenizers' in sys.modules, 'onnxruntime' in sys.modules); "
        "e._quick = False; w = e.embed_batch(q); print(bool(np.allclose(v, w, atol=1e-6))); "
        "e2 = local.LocalEmbedder(); e2.embed_batch(['部署流程']); print('tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "False", "True", "True"], out
