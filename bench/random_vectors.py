#!/usr/bin/env python3
"""Give a vault the default local model's vectors fast, for measuring search cost only.

    python bench/random_vectors.py VAULT        # then: python bench/bench_cold.py VAULT

Runs `mem reindex` in this process with the local model's forward pass replaced by
hash-seeded random unit vectors of its shape (all-MiniLM-L6-v2: 384 dimensions, its space
id): the files, the word store, the definitions and the noise record are those of a real
run, minus the meaning. A search's cost does not depend on the values (the query itself is
embedded by the real model), and the real refinement of the 2,000-note vault takes 33
minutes here (docs/evaluation.md). The noise floor is then set to -1 so that every search
fuses both branches, the costlier case. Never use such a vault to measure quality.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def fake(self, texts: list[str]):
    import numpy as np

    out = np.empty((len(texts), self.dims), dtype=np.float32)
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(t.encode("utf-8")).digest()[:8], "little")
        out[i] = np.random.default_rng(seed).standard_normal(self.dims)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    from memcli.jobs import reindex
    from memcli.providers.embedding import local
    from memcli.vault.workspace import open_workspace

    os.environ.pop("MEM_EMBEDDING_BACKEND", None)
    local.LocalEmbedder._embed = fake
    ws = open_workspace(Path(argv[0]).resolve(), dict(os.environ))
    rep = reindex.run(ws)
    for path in (ws.metadata / "embedding_store").glob("noise_*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        record["floor"] = -1.0
        path.write_text(json.dumps(record), encoding="utf-8")
    print(json.dumps(rep.to_json(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
