"""The local model (all-MiniLM-L6-v2) behind a cache keyed by sha256 of the text.

One .npz per vector space in bench/out/embeddings, shared by all runs, so only the
first vector run pays for the model. embedder() also makes memcli's reindex and search
use it (memcli.providers.embedding.space.configured, looked up on the module).
"""

from __future__ import annotations

import hashlib
import os
import time

from bench.harness.paths import EMB_CACHE_DIR, log


class EmbeddingCache:
    """sha256(text) -> float16 vector, one .npz per vector space, shared by all runs."""

    def __init__(self, space_id: str, dims: int):
        import numpy as np

        self.path = EMB_CACHE_DIR / f"{space_id}.npz"
        self.dims = dims
        self.vecs: dict[str, object] = {}
        self.new = 0
        if self.path.exists():
            with np.load(self.path, allow_pickle=False) as z:
                self.vecs = dict(zip(z["keys"].tolist(), z["embeddings"]))

    def save(self) -> None:
        import numpy as np

        if not self.new:
            return
        EMB_CACHE_DIR.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.vecs), dtype="<U64")
        emb = np.array(list(self.vecs.values()), dtype="<f2").reshape(len(keys), self.dims)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, embeddings=emb)
        os.replace(tmp, self.path)
        self.new = 0


class CachedEmbedder:
    """The local model behind a text-hash cache; same identity and space as the real one."""

    def __init__(self):
        from memcli.providers.embedding.base import vector_space_id
        from memcli.providers.embedding.local import LocalEmbedder

        self.inner = LocalEmbedder({"max_input_length": 8192, "max_batch_size": 10})
        for a in ("backend", "model", "dims", "endpoint", "identity"):
            setattr(self, a, getattr(self.inner, a))
        self.space = {"id": vector_space_id(self.backend, self.model, self.dims, self.endpoint),
                      "identity": self.identity, "dims": int(self.dims)}
        self.cache = EmbeddingCache(self.space["id"], int(self.dims))
        self.model_texts = 0
        self.model_seconds = 0.0
        self.last_save = time.monotonic()

    def embed_batch(self, texts: list[str]):
        import numpy as np

        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        miss = [i for i, k in enumerate(keys) if k not in self.cache.vecs]
        if miss:
            t0 = time.perf_counter()
            vecs = self.inner.embed_batch([texts[i] for i in miss])
            self.model_seconds += time.perf_counter() - t0
            self.model_texts += len(miss)
            for i, v in zip(miss, vecs):
                self.cache.vecs[keys[i]] = np.asarray(v, dtype="<f2")
            self.cache.new += len(miss)
            if time.monotonic() - self.last_save > 60:
                self.cache.save()
                self.last_save = time.monotonic()
        return np.stack([np.asarray(self.cache.vecs[k], dtype=np.float32) for k in keys])

    def close(self) -> None:
        pass  # keep the model loaded across searches (the CLI loads it once per process)


_EMBEDDER: CachedEmbedder | None = None


def embedder() -> CachedEmbedder:
    """The process's cached embedder; memcli's configured local backend from then on."""
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = CachedEmbedder()
        from memcli.providers.embedding import space as embedding

        def configured(ws, *, timeout=None):
            backend = ws.settings.embedding.backend
            if backend not in ("", "local"):
                return None
            return embedding.Backend(_EMBEDDER, _EMBEDDER.space)

        embedding.configured = configured  # reindex and search look it up on the module
    return _EMBEDDER


def record(result: dict) -> None:
    """Save the embedding cache and record what the model had to embed in this run."""
    if _EMBEDDER is None:
        return
    _EMBEDDER.cache.save()
    result["embedding"] = {"model_texts": _EMBEDDER.model_texts, "model_seconds": round(_EMBEDDER.model_seconds, 1)}
    if _EMBEDDER.model_texts:
        log(f"embedded {_EMBEDDER.model_texts} new texts with the local model in "
            f"{_EMBEDDER.model_seconds:.0f}s ({_EMBEDDER.model_texts / _EMBEDDER.model_seconds:.1f}/s)")
