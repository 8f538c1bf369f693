"""The configured embedding backend as the jobs see it: an embedder and its vector space."""

from __future__ import annotations

from dataclasses import dataclass

from memcli.vault.workspace import Workspace


@dataclass
class Backend:
    embedder: object  # memcli.providers.embedding.base.Embedder
    space: dict  # {id, identity, dims}


def configured(ws: Workspace, *, timeout: float | None = None) -> Backend | None:
    """The embedding backend from config, or None when vectors are off or not configured."""
    from memcli.providers.embedding import registry
    from memcli.providers.embedding.base import vector_space_id

    emb = registry.get_embedder(ws.settings.embedding, timeout=timeout)
    if emb is None:
        return None
    space = {"id": vector_space_id(emb.backend, emb.model, emb.dims, emb.endpoint),
             "identity": emb.identity, "dims": int(emb.dims)}
    return Backend(emb, space)


def why_off(ws: Workspace) -> str | None:
    from memcli.providers.embedding import registry

    return registry.why_disabled(ws.settings.embedding)
