"""A vault's workspace per configuration, and its index (and vectors) made current.

Each chunking x index-changing variant gets its own `mem_metadata/<tag>/` folder, so
variants never rebuild each other's indexes.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.harness.embeddings import embedder


def parse_sets(items: list[str]) -> dict:
    """--set KEY=VALUE items as a dict of config overrides."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set wants key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def index_tag(spec: dict) -> str:
    """What of a variant changes the index: the tokenizer ('stopq' only changes queries), k1, b, bi."""
    parts = [p for p in spec.get("tok", "base").split("+") if p not in ("stopq", "base", "")]
    tag = "+".join(sorted(parts)) or "base"
    for key in ("k1", "b", "bi"):
        if key in spec:
            tag += f"-{key}{spec[key]}"
    return tag


def workspace(root: Path, sets: dict, spec: dict):
    """The vault's workspace with `sets` as config overrides and a metadata folder per
    chunking x index tokenizer x embedding model, so variants never rebuild each other's indexes."""
    from memcli.vault.workspace import open_workspace

    probe = open_workspace(root, {}, sets)
    c = probe.settings.chunking
    from memcli.providers.embedding import local_models

    model = probe.settings.embedding.model_name or local_models.DEFAULT
    tag = f"t{c.target_tokens}o{c.overlap_tokens}-{index_tag(spec)}-{model}"
    return open_workspace(root, {}, dict(sets, metadata_dir=f"mem_metadata/{tag}"))


def ensure_index(ws, vectors: bool) -> dict:
    """Keyword index current; with `vectors`, every chunk has one (from the cache if known)."""
    from memcli.jobs import reindex

    t0 = time.perf_counter()
    rep = reindex.run(ws, scope="bm25")
    info = {"chunks": rep.sync.chunks, "rebuilt": rep.sync.wrote, "seconds": 0.0, "embedded": 0}
    if vectors:
        from bench.harness.embeddings import model_of

        emb = embedder(model_of(ws))
        if not _vectors_complete(ws):
            before = emb.model_texts
            reindex.run(ws, scope="embedding")
            info["embedded"] = emb.model_texts - before
            emb.cache.save()
    info["seconds"] = time.perf_counter() - t0
    return info


def _vectors_complete(ws) -> bool:
    """Every chunk of the current snapshot has its vector (and its words, with expansion on)."""
    from memcli.index import sync
    from memcli.index.vectors import vectors as vecmod

    snap = sync.open_snapshot(ws)
    try:
        m = vecmod.open_vectors(snap, vecmod.active_space(ws.metadata), ws.settings.chunking.passage_tokens)
        complete = m is not None and m.with_vectors() == snap.n_docs
        if m is not None:
            m.close()
    finally:
        snap.close()
    space = vecmod.active_space(ws.metadata)
    if complete and ws.settings.search.expand_terms > 0:  # word vectors too
        from memcli.index.vectors import terms

        complete = terms.store_path(ws.metadata, space["id"]).exists()
    if complete and ws.settings.search.define_terms > 0:  # and their definitions
        from memcli.index.vectors import glosses

        complete = glosses.store_path(ws.metadata, space["id"]).exists()
    return complete
