"""The vectors offline dream groups facts with: the configured embedding model, one batch a run.

Every text (the new facts and the statements of the candidate nodes) is embedded once:
vectors are kept in `mem_metadata/dream/vectors_<space>.npz` (float16, keyed by the text's
sha256, the request-cache format of memcli.index.vectors.vectors), so a run embeds only the texts it
has not seen, in one call. No backend (`embedding_model_config.backend: none`, the local
extra missing, a remote one unconfigured) or a failing one: dream groups by words alone,
with the stricter word threshold, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from memcli.errors import ConfigError, ProviderError
from memcli.vault.workspace import Workspace

MAX_CACHE = 50_000  # vectors kept; the oldest go first


@dataclass
class Meaning:
    vectors: dict | None  # text -> float32 row, or None: words only
    grouping: str  # "meaning+words" | "words"
    model: str = ""  # the backend's identity when vectors are used
    embedded: int = 0  # texts sent to the model in this run
    why: str = ""  # why there are no vectors


def cache_file(ws: Workspace, space_id: str):
    return ws.metadata / "dream" / f"vectors_{space_id}.npz"


def vectors_for(ws: Workspace, texts: list[str], warnings: list[str], *, save: bool = True) -> Meaning:
    from memcli.providers.embedding import space

    try:
        backend = space.configured(ws)
    except (ConfigError, ProviderError) as exc:
        warnings.append(f"dream grouped facts by words only: {exc}")
        return Meaning(None, "words", why=str(exc))
    if backend is None:
        return Meaning(None, "words", why=space.why_off(ws) or "no embedding backend")
    import numpy as np

    from memcli.index.vectors import vectors as index_vectors

    dims = int(backend.space["dims"])
    path = cache_file(ws, backend.space["id"])
    cache = index_vectors.load_cache(path, dims)
    keys = {t: index_vectors.text_key(t) for t in texts}
    missing = list(dict.fromkeys(t for t in texts if keys[t] not in cache))
    try:
        if missing:
            rows = np.asarray(backend.embedder.embed_batch(missing), dtype=np.float32)
            if rows.shape != (len(missing), dims):
                raise ProviderError(f"the embedding backend returned {rows.shape}, expected {(len(missing), dims)}")
            for t, row in zip(missing, rows):
                cache[keys[t]] = row.astype(np.float16)
            if save:
                path.parent.mkdir(parents=True, exist_ok=True)
                index_vectors.save_cache(path, cache, dims, MAX_CACHE)
    except ProviderError as exc:
        warnings.append(f"dream grouped facts by words only: embedding failed ({exc})")
        return Meaning(None, "words", why=str(exc))
    finally:
        backend.embedder.close()
    out = {}
    for t in texts:
        v = np.asarray(cache[keys[t]], dtype=np.float32)
        n = float(np.linalg.norm(v))
        out[t] = v / n if n else v
    emb = backend.embedder
    return Meaning(out, "meaning+words", f"{emb.backend}:{emb.model}", len(missing))
