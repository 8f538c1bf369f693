#!/usr/bin/env python3
"""What the adaptive fusion sees for a query of the semantic set: coverage, margin, weight, and
the top hits with their cosine and BM25 (why a clear paraphrase wins or loses).

    python bench/experiments/fusion_probe.py "How does the user usually travel to work?"
    python bench/experiments/fusion_probe.py --cosines "travel to work" "commute" \
        -- "My preferred commute is a lightweight bicycle" "The user travels to Osaka in March for a conference."

Runs memcli.jobs.search.run in auto mode on bench/semantic_set's vault (built and embedded by
the bench harness, as bench/semantic_eval.py does) and prints, per query, the inputs of
memcli.retrieval.fusion.weak_keyword_weight and the first three hits (path, fused score,
cosine, BM25). With --cosines: the raw cosine of each text before `--` with each after it, by
the default local model (the bench's embedding cache). Text on stdout.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # its tokenizers.py is not the library
sys.path.insert(0, str(ROOT))

from bench.experiments import parse_variant, patched
from bench.harness.indexes import ensure_index, workspace
from bench.harness.paths import OUT


def main(queries: list[str]) -> int:
    from memcli.jobs import search
    from memcli.retrieval import fusion

    real = fusion.weak_keyword_weight

    def shown(base: float, coverage: float, margin: float) -> float:
        weight = real(base, coverage, margin)
        print(f"   coverage={coverage:.3f} margin={margin:.3f} -> vector weight {weight:.3f}")
        return weight

    fusion.weak_keyword_weight = shown
    with patched(parse_variant("")):
        ws = workspace(OUT / "semantic" / "set", {}, parse_variant(""))
        ensure_index(ws, vectors=True)
        for query in queries:
            print(query)
            for h in search.run(ws, query, limit=10, mode="auto", auto_sync=False, links=False).hits[:3]:
                print(
                    f"   {h.path.rsplit('/', 1)[-1]:20} {h.score:.3f} cos={h.vector and round(h.vector, 3)} "
                    f"bm25={h.keyword and round(h.keyword, 3)}"
                )
    return 0


def cosines(queries: list[str], notes: list[str]) -> int:
    import numpy as np

    from bench.harness.embeddings import embedder

    vecs = np.asarray(embedder().embed_batch(notes + queries), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i, query in enumerate(queries):
        row = vecs[len(notes) + i] @ vecs[: len(notes)].T
        print(f"{query!r:45} " + " ".join(f"{x:.3f}" for x in row))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--cosines"] and "--" in args:
        cut = args.index("--")
        sys.exit(cosines(args[1:cut], args[cut + 1 :]))
    sys.exit(main(args or ["How does the user usually travel to work?"]))
