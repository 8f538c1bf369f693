"""Static embeddings: one vector per word piece, averaged (WordLlama's l2_supercat, 256-d).

As wordllama's own inference runs it (tokenize without special tokens, look up each piece's
row, mean over the pieces, L2-normalise), but without importing wordllama (pydantic,
requests): the safetensors file is memory-mapped and read here, so loading costs ~0.1 s
(mostly the tokenizer) and embedding ~4,000 passages/s on one core.
"""

from __future__ import annotations

import json
import mmap
import struct
import threading
from typing import TYPE_CHECKING

from memcli.errors import ProviderError
from memcli.providers.embedding import local_models
from memcli.providers.embedding.base import BaseEmbedder, normalize

if TYPE_CHECKING:
    import numpy as np

TENSOR = "embedding.weight"
BATCH = 256


def read_safetensors(path, key: str):
    """One tensor of a .safetensors file as a read-only numpy view over an mmap."""
    import numpy as np

    dtypes = {"F16": "<f2", "F32": "<f4", "BF16": None}
    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    (n,) = struct.unpack_from("<Q", mm, 0)
    head = json.loads(mm[8 : 8 + n])
    meta = head[key]
    dtype = dtypes.get(meta["dtype"])
    if dtype is None:
        raise ProviderError(f"{path.name}: tensor {key} has dtype {meta['dtype']}, which mem cannot read")
    a, b = meta["data_offsets"]
    count = (b - a) // np.dtype(dtype).itemsize
    return np.frombuffer(mm, dtype=dtype, count=count, offset=8 + n + a).reshape(meta["shape"])


class StaticEmbedder(BaseEmbedder):
    backend = "local"

    def __init__(self, cfg: dict | None = None, *, model: local_models.LocalModel | None = None):
        cfg = cfg or {}
        self.spec = model or local_models.MODELS[local_models.FIRST_PASS]
        super().__init__(
            model=self.spec.name,
            dims=self.spec.dims,
            endpoint=self.spec.dist,
            max_input_length=int(cfg.get("max_input_length") or 0),
            max_batch_size=max(BATCH, int(cfg.get("max_batch_size") or 0)),
        )
        self._table = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._table is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ProviderError(
                        f"local embeddings need tokenizers ({exc})", local_models.INSTALL_HINT
                    ) from None
                weights, tok = local_models.files(self.spec)
                try:
                    tokenizer = Tokenizer.from_file(str(tok))
                    tokenizer.no_truncation()
                    tokenizer.no_padding()
                    table = read_safetensors(weights, TENSOR)
                except Exception as exc:  # noqa: BLE001 - tokenizers raises its own types
                    raise ProviderError(
                        f"cannot load {self.spec.name}: {type(exc).__name__}: {exc}", f"reinstall {self.spec.dist}"
                    ) from None
                if table.shape[1] != self.dims:
                    raise ProviderError(f"{self.spec.name}: {table.shape[1]} dims, expected {self.dims}")
                self._tokenizer, self._table = tokenizer, table
            return self._tokenizer, self._table

    def _embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        tokenizer, table = self._load()
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, enc in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = np.asarray(enc.ids, dtype=np.intp)
            if ids.size:
                ids = np.clip(ids, 0, table.shape[0] - 1)
                out[i] = table[ids].astype(np.float32).mean(axis=0)
        return normalize(out)

    def close(self) -> None:
        pass  # the table is an mmap: nothing worth releasing between calls
