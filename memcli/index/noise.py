"""The noise floor of a vector space: what nonsense reaches against this vault's passages.

A seeded set of nonsense probes is embedded once per space (their vectors are kept in the
record, memcli.index.vectors.noise_record), so a later run re-measures the floor against
the current passages without a request. A vector hit must score above the floor.
"""

from __future__ import annotations

from memcli.errors import ProviderError
from memcli.index import vectors
from memcli.vault.workspace import Workspace

# Nonsense the floor is measured with (noise_probes): seeded, so every vault and every
# run sends the same texts; a new seed or count needs a new vectors.NOISE_VERSION.
PROBE_SEED, PROBE_COUNT = 14, 48
_SYLLABLES = ("ka lo mi tren vor sha qu bel dor nix pra zu ek oth gri mav sel tup wen fa rok "
              "bli und cha ix pol dre sku yo gam").split()


def noise_probes() -> list[str]:
    """PROBE_COUNT texts that mean nothing: half random letter strings (`xcvoj vmmydi`),
    half words of shuffled syllables (`tupcha grimav`), one to four words each."""
    import random

    rnd = random.Random(PROBE_SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for i in range(PROBE_COUNT):
        if i % 2:
            words = ("".join(rnd.choice(_SYLLABLES) for _ in range(rnd.randint(2, 4)))
                     for _ in range(rnd.randint(1, 4)))
        else:
            words = ("".join(rnd.choice(letters) for _ in range(rnd.randint(3, 8))) for _ in range(rnd.randint(1, 4)))
        out.append(" ".join(words))
    return out


def measure_noise(ws: Workspace, space: dict, embed_batch, batch_size: int = 0) -> dict | None:
    """Measure and keep the noise floor of `space` against its current matrix; the probes
    are embedded once per space. Rewritten only when the floor changed. None when the
    space has no vectors or the provider failed (the next run or search measures it)."""
    from memcli.index import sync

    view = sync.open_snapshot(ws)
    if view is None:
        return None
    try:
        return _measure(ws, space, embed_batch, batch_size, view)
    finally:
        view.close()


def _measure(ws: Workspace, space: dict, embed_batch, batch_size: int, view) -> dict | None:
    import numpy as np

    matrix = vectors.open_vectors(view, space, ws.settings.chunking.passage_tokens)
    if matrix is None or not matrix.usable:
        return None
    old = vectors.load_noise(ws.metadata, space)
    probe_vecs = vectors.noise_vectors(old, int(space["dims"])) if old else None
    if probe_vecs is None:
        texts = noise_probes()
        size = batch_size if batch_size > 0 else len(texts)
        try:
            probe_vecs = np.vstack([embed_batch(texts[i:i + size]) for i in range(0, len(texts), size)])
        except ProviderError:
            return None
    record = vectors.noise_record(space, probe_vecs, matrix, old)
    if old is None or any(old.get(key) != record[key] for key in ("floor", "measured", "passages", "segments")):
        vectors.save_noise(ws.metadata, record)
    return record
