"""The embedding backends as the jobs see them: an embedder and its vector space.

Three may matter at once: the configured one (`configured`), the fast first pass that
makes a vault searchable by meaning while the configured model embeds it (`first_pass`),
and whichever of these, or an installed local model, produced the vectors a search uses
now (`for_space`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memcli.vault.workspace import Workspace


@dataclass
class Backend:
    embedder: Any  # memcli.providers.embedding.base.Embedder
    space: dict  # {id, identity, dims}


def _backend(emb) -> Backend:
    from memcli.providers.embedding.base import vector_space_id

    return Backend(
        emb,
        {
            "id": vector_space_id(emb.backend, emb.model, emb.dims, emb.endpoint),
            "identity": emb.identity,
            "dims": int(emb.dims),
        },
    )


def configured(ws: Workspace, *, timeout: float | None = None) -> Backend | None:
    """The embedding backend from config, or None when vectors are off or not configured."""
    from memcli.providers.embedding import registry

    emb = registry.get_embedder(ws.settings.embedding, timeout=timeout)
    return None if emb is None else _backend(emb)


def first_pass(ws: Workspace, *, timeout: float | None = None) -> Backend | None:
    """The static model that embeds a whole vault in seconds before the configured one
    refines it, or None: first_pass "none", a remote backend with first_pass "auto", a
    configured model that is itself static, or the local extra missing."""
    from memcli.providers.embedding import local_models, registry

    cfg = ws.settings.embedding
    choice = str(cfg.first_pass or "").strip()
    backend = str(cfg.backend or "").strip().lower()
    if choice.lower() in ("", "none", "off"):
        return None
    if choice == "auto":
        if backend not in ("", "local") or registry.why_disabled(cfg) is not None:
            return None
        choice = local_models.FIRST_PASS
    model = local_models.MODELS.get(choice)
    if model is None or model.kind != "static" or not local_models.available(model):
        return None
    if backend in ("", "local") and local_models.resolve(cfg.model_name, explicit=False).kind == "static":
        return None  # the configured model is already the fast one
    from memcli.providers.embedding.static import StaticEmbedder

    return _backend(StaticEmbedder({"max_input_length": cfg.max_input_length}, model=model))


def local_for(space: dict) -> Backend | None:
    """An installed local model whose vectors live in `space` (a vault embedded before a
    model switch keeps answering with them until the new model has embedded everything)."""
    from memcli.providers.embedding import local_models

    for model in local_models.MODELS.values():
        identity = f"local:{model.name}:{model.dims}:{model.dist}"
        if identity == space.get("identity") and local_models.available(model):
            if model.kind == "static":
                from memcli.providers.embedding.static import StaticEmbedder

                return _backend(StaticEmbedder(model=model))
            from memcli.providers.embedding.local import LocalEmbedder

            return _backend(LocalEmbedder(model=model))
    return None


def for_space(
    ws: Workspace, space: dict | None, *, timeout: float | None = None, target: Backend | None = None
) -> Backend | None:
    """The backend whose embedder fits `space` (the one a search must embed its query with):
    the configured one (or `target`, when the caller has it), the first pass, or an installed
    local model; None when nothing can embed into that space any more."""
    if space is None:
        return None
    target = target or configured(ws, timeout=timeout)
    if target is not None and target.space["id"] == space["id"]:
        return target
    fast = first_pass(ws, timeout=timeout)
    if fast is not None and fast.space["id"] == space["id"]:
        return fast
    return local_for(space)


def why_off(ws: Workspace) -> str | None:
    from memcli.providers.embedding import registry

    return registry.why_disabled(ws.settings.embedding)
