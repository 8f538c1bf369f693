"""The local models behind a cache keyed by sha256 of the text.

One .npz per vector space in bench/out/embeddings, shared by all runs, so only the
first vector run pays for a model. embedder() also makes memcli's reindex and search
use it (memcli.providers.embedding.space.configured and .first_pass, looked up on the
module): the workspace's embedding_model_config.model_name picks the model
(`--set embedding_model_config.model_name=…`, default: memcli's default local model).
Besides memcli's local models, `all-MiniLM-L6-v2-fp32` (bench only, bench/harness/models.py)
runs today's model unquantised.
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


def make_inner(model: str):
    """The real embedder of a model name (memcli's local models, or a bench-only one)."""
    from memcli.providers.embedding import local, local_models, static

    if model in local_models.MODELS:
        spec = local_models.MODELS[model]
        cfg = {"max_input_length": 8192, "max_batch_size": 10}
        return static.StaticEmbedder(cfg, model=spec) if spec.kind == "static" else local.LocalEmbedder(cfg, model=spec)
    from bench.harness import models

    return models.bench_model(model)


class CachedEmbedder:
    """A model behind a text-hash cache; same identity and space as the real one."""

    def __init__(self, model: str):
        from memcli.providers.embedding.base import vector_space_id

        self.inner = make_inner(model)
        for a in ("backend", "model", "dims", "endpoint", "identity"):
            setattr(self, a, getattr(self.inner, a))
        self.space = {
            "id": vector_space_id(self.backend, self.model, self.dims, self.endpoint),
            "identity": self.identity,
            "dims": int(self.dims),
        }
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


_EMBEDDERS: dict[str, CachedEmbedder] = {}
_CURRENT = {"model": ""}


def model_of(ws) -> str:
    from memcli.providers.embedding import local_models

    return ws.settings.embedding.model_name or local_models.DEFAULT


def embedder(model: str | None = None) -> CachedEmbedder:
    """The process's cached embedder of `model` (default: the one last used); memcli's
    configured local backend from then on."""
    from memcli.providers.embedding import local_models
    from memcli.providers.embedding import space as embedding

    model = model or _CURRENT["model"] or local_models.DEFAULT
    _CURRENT["model"] = model
    if model not in _EMBEDDERS:
        _EMBEDDERS[model] = CachedEmbedder(model)
    if not getattr(embedding, "_bench_patched", False):

        def configured(ws, *, timeout=None):
            if ws.settings.embedding.backend not in ("", "local"):
                return None
            emb = embedder(model_of(ws))
            return embedding.Backend(emb, emb.space)

        def first_pass(ws, *, timeout=None):
            return None  # the bench measures each model fully embedded (the first pass is its own model)

        embedding.configured = configured  # reindex and search look them up on the module
        embedding.first_pass = first_pass
        embedding._bench_patched = True
    return _EMBEDDERS[model]


def record(result: dict) -> None:
    """Save the embedding caches and record what the models had to embed in this run."""
    if not _EMBEDDERS:
        return
    texts = seconds = 0.0
    for emb in _EMBEDDERS.values():
        emb.cache.save()
        texts += emb.model_texts
        seconds += emb.model_seconds
    result["embedding"] = {"model": _CURRENT["model"], "model_texts": int(texts), "model_seconds": round(seconds, 1)}
    if texts:
        log(
            f"embedded {int(texts)} new texts with the local model in {seconds:.0f}s ({texts / max(seconds, 1e-9):.1f}/s)"
        )
